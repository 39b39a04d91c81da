"""A progress bar on stderr for work that takes longer than a second."""

import sys
import time


class Progress:
    """Call it as ``progress(done, total, label)``; it draws only after ``delay`` seconds.

    Short jobs print nothing; a long one shows ``[#####.....] 3/8 rk4`` and
    ends the line when done.  ``quiet=True`` silences it.
    """

    def __init__(self, title, *, quiet=False, delay=1.0, stream=None, width=24):
        self.title = title
        self.quiet = quiet
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.start = time.perf_counter()
        self.drawn = False

    def __call__(self, done, total, label=""):
        if self.quiet or time.perf_counter() - self.start < self.delay:
            return
        filled = int(self.width * done / max(total, 1))
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.title} [{bar}] {done}/{total} {label:<20}")
        self.drawn = True
        if done >= total:
            self.close()
        self.stream.flush()

    def close(self):
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
