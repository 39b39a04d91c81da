"""A progress bar on stderr for work that takes longer than a second.

Why not tqdm: the wait our users meet is a first run, in which Numba
compiles for 5-20 s while nothing can report; tqdm redraws only when told
of progress, so its bar would sit frozen (or not appear at all, with a
delay) exactly then, where this one's heartbeat shows it is alive.  It also
costs no dependency, and a notebook draws its carriage returns in place.
Anything that takes ``progress(done, total, label)`` takes a tqdm bar as
well::

    from tqdm.auto import tqdm
    bar = tqdm()
    def progress(done, total, label):
        bar.total, bar.n = total, done
        bar.set_description(label, refresh=True)
    odekit.solve(problem, "dp54", progress=progress)
"""

import sys
import threading
import time


class Progress:
    """Call it as ``progress(done, total, label)``; it draws only after ``delay`` seconds.

    Short jobs print nothing; a long one shows ``[#####.....] 3/8 rk4`` and
    ends the line when done.  ``done`` and ``total`` may be fractional (the
    simulated time of a solve, or runs with one under way): they are then
    shown to three digits, ``[##........] 1.25e+04/2e+05 t``.  ``quiet=True``
    silences it.

    Used as a context manager (``with Progress("solve") as bar: ...``), it
    also redraws its last state every ``beat`` seconds from a background
    thread, so that a long step that cannot report -- compiling the kernels
    on a first run -- still shows the bar after ``delay``; leaving the block
    stops the thread and ends the line.

    Parameters
    ----------
    title : str
        Shown before the bar.
    quiet : bool
        Draw nothing.
    delay : float
        Seconds of work after which the bar appears.
    stream : file, optional
        Where to draw; default ``sys.stderr``.
    width : int
        Characters of the bar.
    beat : float
        Seconds between redraws of the last state inside a ``with`` block.
    starting : str, optional
        What the heartbeat shows before the first report, e.g. ``"setting
        up"``.
    """

    def __init__(self, title, *, quiet=False, delay=1.0, stream=None, width=24, beat=0.25, starting=None):
        self.title = title
        self.quiet = quiet
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.beat = beat
        self.start = time.perf_counter()
        self.drawn = False
        self._state = None if starting is None else (0, 0, starting)   # the last (done, total, label)
        self._shown = None              # the state last drawn: the heartbeat does not repeat it
        self._lock = threading.Lock()
        self._stop = None

    def __call__(self, done, total, label=""):
        if self.quiet:
            return
        with self._lock:
            self._state = (done, total, label)
            self._draw()

    def _draw(self, repeat=True):
        if self._state is None or time.perf_counter() - self.start < self.delay:
            return
        if not repeat and self._state == self._shown:
            return
        self._shown = done, total, label = self._state
        self.drawn = True               # before the write: a Ctrl-C just after it still ends the line
        if total == 0:                  # nothing reported yet: the starting label alone
            self.stream.write(f"\r{self.title} [{'.' * self.width}] {label:<20}")
            self.stream.flush()
            return
        filled = max(0, min(self.width, int(self.width * done / total)))
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.title} [{bar}] {_amount(done)}/{_amount(total)} {label:<20}")
        if done >= total:
            self._end_line()
        self.stream.flush()

    def close(self):
        """End the bar's line (if one was drawn), e.g. after work that stopped early."""
        with self._lock:
            self._end_line()

    def _end_line(self):
        self._state = None
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False

    def __enter__(self):
        if not self.quiet:
            self._stop = threading.Event()
            threading.Thread(target=self._heartbeat, args=(self._stop,), daemon=True).start()
        return self

    def __exit__(self, *exc_info):
        if self._stop is not None:
            self._stop.set()
        self.close()
        return False

    def _heartbeat(self, stop):
        while not stop.wait(self.beat):
            with self._lock:
                if not stop.is_set():
                    self._draw(repeat=False)


def _amount(value):
    return str(value) if isinstance(value, int) else f"{value:.3g}"
