"""The fixed-timestep clock of a real-time loop: whole steps of ``h`` from a variable frame time.

Games and interactive tools step their physics at a fixed ``h`` whatever
the frame rate (Glenn Fiedler, "Fix your timestep!", 2004; Box2D; Unity's
``FixedUpdate``): each frame adds its duration to an accumulator, the
physics takes the whole steps that fit, and the remainder, as a fraction
``alpha`` of a step, blends the last two states for drawing.
:class:`FrameClock` keeps that account for
:meth:`odekit.Integrator.run_frame`, and the last step for
:meth:`odekit.Integrator.interpolate`.
"""

import math

import numpy as np


class FrameClock:
    """Frame time accumulated, the whole steps it paid for, and the last step, for drawing.

    The account keeps the *sum* of the frame times and the count of steps
    taken or dropped, not a remainder decremented by ``h`` at every step
    (which gains a rounding at each): after any number of frames exactly
    ``floor(total / h)`` steps are due, and ``alpha`` is the fraction of
    ``total / h``.

    Parameters
    ----------
    h : float
        The fixed step (positive).
    state : ndarray
        The run's flat state, whose shape and dtype the kept state takes.
    """

    def __init__(self, h, state):
        self.h = h
        self.total = 0.0                # frame time added so far
        self.paid = 0                   # whole steps of it taken or dropped
        self.alpha = 0.0                # what is left, in steps: in [0, 1)
        self.dropped = 0.0              # time dropped by the last frame
        self.dropped_steps = 0          # ... and by all of them, in steps
        self.prev = np.empty_like(state)     # the state at the start of the last step
        self.jumps = []                 # (place in the last step, state before, after) of its jumps
        self.mark = None                # the run as the last step left it; None: nothing to blend

    def add(self, frame_dt, max_substeps):
        """Add a frame of ``frame_dt``; return the steps to take now (due ones beyond ``max_substeps`` are dropped)."""
        self.total += frame_dt
        x = self.total / self.h
        whole = math.floor(x)
        due = whole - self.paid
        take = min(due, max_substeps)
        self.dropped = (due - take) * self.h
        self.dropped_steps += due - take
        self.paid = whole
        self.alpha = x - whole          # exact: a float minus its floor
        return take

    def refund(self, steps):
        """``steps`` of those paid for were not taken (a step failed): they are due again."""
        self.paid -= steps

    def stop(self):
        """The run ended inside the frame (a terminal event): nothing left to step, nor to blend."""
        self.alpha = 0.0
        self.mark = None

    def start_step(self, y):
        """Keep ``y``, the state at the start of the step about to be taken."""
        self.mark = None
        np.copyto(self.prev, y)

    def end_step(self, t_prev, t, events, mark):
        """The step from ``t_prev`` ended at ``t``; ``events`` are the (time, state before, after) it logged.

        Those whose affect changed the state are kept, with their place in
        the step, as breaks of the blend.
        """
        self.jumps = [((te - t_prev) / (t - t_prev), before.copy(), after.copy())
                      for te, before, after in events if not np.array_equal(before, after)] if events else ()
        self.mark = mark

    def blend(self, alpha, y):
        """The state at ``alpha`` of the last step, whose end is ``y``: linear between the states on each side.

        ``(1 - alpha) prev + alpha y`` without jumps; with them, the same
        between the nearest computed states on either side of ``alpha``:
        the state before a jump on its left, after it from its place on.
        """
        a, ya, b, yb = 0.0, self.prev, 1.0, y
        for s, before, after in self.jumps:
            if s > alpha:
                b, yb = s, before
                break
            a, ya = s, after
        w = (alpha - a) / (b - a)       # alpha itself without jumps
        return (1.0 - w) * ya + w * yb
