"""What a run keeps: output buffers that the compiled loop fills and that grow as the run goes.

A recorder hands the loop its :class:`~odekit.kernels.interface.Output`
bundle -- the times and states to write, the dense-output rows -- and, when
the loop stops with ``BUFFER_FULL``, doubles what is full while memory lasts.
:class:`NoRecording` is the bundle of a run that keeps nothing (a step of a
game loop), :class:`Recorder` that of :func:`odekit.solve` (every step,
every ``save_every``-th, or ``t_eval``), :class:`StepRecorder` that of
:meth:`odekit.Integrator.record_steps`.
"""

import math

import numpy as np

from . import checks
from .checks import NO_LIMIT
from .controllers import FixedStep
from .kernels import layout as L
from .kernels.interface import Output, no_output
from .memory import available_memory
from .solution import DenseOutput

EPS = np.finfo(float).eps
# Output buffers of an adaptive run start with START_ROWS rows and double when full;
# any buffer beyond SMALL_BYTES is allocated only while it leaves half the memory free.
START_ROWS = 1025
SMALL_BYTES = 2 ** 26


class NoRecording:
    """The recorder of a run that keeps nothing: its bundle has empty buffers of the state's dtype."""

    mode = L.RECORD_NONE
    every = 1

    def __init__(self, dtype):
        self._output = no_output(dtype)

    def output(self):
        return self._output

    @staticmethod
    def grow(ist):
        """Nothing to grow (the loop stopped for the event log, which the run grows)."""
        return True


class Recorder:
    """Output buffers that the kernel fills and that grow when full.

    ``rows`` and ``dense_rows`` are the most rows the run can fill (its
    ``max_steps``, and for a fixed step the grid to ``t_end``, bound them).
    A buffer of a fixed-step run is that size from the start when it is
    small enough (:func:`_fits`), and then ends exactly full; the others
    start at ``START_ROWS`` and double, up to that size, while memory lasts.
    """

    def __init__(self, integ, t_eval, dense_output, save_every=1):
        t0, t1 = integ.problem.t_span
        steps = steps_allowed(integ, NO_LIMIT)
        exact = isinstance(integ.controller, FixedStep) and not integ._events
        if integ._events:                  # an event cuts a step in two and may add a row: no bound
            steps = NO_LIMIT - 1
        self.every = save_every
        if t_eval is None:
            self.mode = L.RECORD_STEPS
            self.t_eval = np.zeros(0)
            self.rows = 1 + steps // save_every        # the initial state, then every save_every-th step
        else:
            self.mode = L.RECORD_TEVAL
            self.t_eval = check_t_eval(t_eval, t0, t1, integ._direction)
            self.rows = max(1, self.t_eval.size)     # written without a check of the size: exact
        own = integ._P.shape[0] > 0 and integ.controller.kind != L.DOUBLING
        self.stages = integ._P.shape[0] if own else 0
        self.dense_rows = 1 + steps if dense_output else 0
        self._allocate(integ, self.rows if exact or t_eval is not None else min(self.rows, START_ROWS),
                       self.dense_rows if exact else min(self.dense_rows, START_ROWS))
        if self.mode == L.RECORD_STEPS or (self.t_eval.size and self.t_eval[0] == t0):
            self.out_t[0] = t0
            self.out_y[0] = integ._y
            integ._ist[L.NOUT] = 1
            integ._ist[L.TEVAL_NEXT] = 1 if self.mode == L.RECORD_TEVAL else 0
        integ._ist[L.SINCE_SAVE] = 0
        if dense_output:
            self.dense_t[0], self.dense_y[0], self.dense_f[0] = t0, integ._y, integ._f
            self.dense_h[0] = 0.0
            integ._ist[L.NDENSE] = 1

    def _allocate(self, integ, cap, dcap):
        """Empty buffers of ``cap`` output and ``dcap`` dense rows; smaller ones if those would not fit."""
        self._integ = integ
        if not _fits(self._bytes(cap, dcap)):         # start small; those that can will grow
            dcap = min(dcap, START_ROWS)
            cap = min(cap, START_ROWS) if self.mode == L.RECORD_STEPS else cap
        n, dtype = integ._y.size, integ._y.dtype
        self.out_t = np.empty(cap)
        self.out_y = np.empty((cap, n), dtype=dtype)
        self.dense_t = np.empty(dcap)
        self.dense_h = np.empty(dcap)
        self.dense_y = np.empty((dcap, n), dtype=dtype)
        self.dense_f = np.empty((dcap, n), dtype=dtype)
        # the stages of step d (from 1) are rows (d - 1) * stages + i
        self.dense_k = np.empty((dcap * self.stages, n), dtype=dtype)

    def _bytes(self, cap, dcap):
        """Bytes of buffers of ``cap`` output and ``dcap`` dense rows."""
        y = self._integ._y
        row = y.size * y.itemsize
        return cap * (8 + row) + dcap * (16 + (2 + self.stages) * row)

    def output(self):
        """The buffers as the loop's :class:`~odekit.kernels.interface.Output` bundle."""
        return Output(self.t_eval, self.out_t, self.out_y, self.dense_t, self.dense_h, self.dense_y, self.dense_f,
                      self.dense_k)

    def grow(self, ist):
        """Double whichever buffer is full, keeping its contents; False when memory would not allow it."""
        cap, dcap = self.out_t.shape[0], self.dense_t.shape[0]
        # the loop keeps a row spare in a run with events, for the state after one
        spare = 1 if self._integ._events else 0
        out = self.mode == L.RECORD_STEPS and ist[L.NOUT] + spare >= cap
        dense = dcap and ist[L.NDENSE] + spare >= dcap
        cap = _larger(cap, self.rows) if out else cap
        dcap = _larger(dcap, self.dense_rows) if dense else dcap
        if not _fits(self._bytes(cap, dcap)):
            return False
        try:
            if out:
                self.out_t, self.out_y = _resized_rows(self.out_t, cap), _resized_rows(self.out_y, cap)
            if dense:
                self.dense_t, self.dense_y = _resized_rows(self.dense_t, dcap), _resized_rows(self.dense_y, dcap)
                self.dense_h = _resized_rows(self.dense_h, dcap)
                self.dense_f = _resized_rows(self.dense_f, dcap)
                self.dense_k = _resized_rows(self.dense_k, dcap * self.stages)
        except MemoryError:
            return False
        return True

    ADVICE = "keep every k-th step with save_every=k, or only the states at chosen times with t_eval"

    def memory_message(self, t, t_end):
        """Why the run stopped when its buffers could not grow."""
        size = self._bytes(self.out_t.shape[0], self.dense_t.shape[0]) / 2 ** 20
        dense = "; dense_output keeps every step, whatever save_every says" if self.dense_t.shape[0] else ""
        return (f"the output outgrew the memory at t={t:.6g} before t_end={t_end:.6g}: its buffers hold "
                f"{size:,.0f} MiB ({int(self._integ._ist[L.NOUT]):,} states), and doubling them would leave "
                f"less than half the memory free; {self.ADVICE}{dense}")

    def result(self):
        """``(t, y, dense)``: the recorded rows, and the last state when the run ended between two saved ones."""
        integ = self._integ
        ist = integ._ist
        last = (integ.t, integ._y) if self.mode == L.RECORD_STEPS and ist[L.SINCE_SAVE] else None
        m = int(ist[L.NOUT])
        t = _trimmed(self.out_t, m, None if last is None else last[0])
        y = _trimmed(self.out_y, m, None if last is None else last[1])
        dense = None
        if self.dense_t.shape[0]:
            d = int(ist[L.NDENSE])
            n = self.dense_y.shape[1]
            k = self.dense_k[:max(d - 1, 0) * self.stages].reshape(max(d - 1, 0), self.stages, n)
            dense = DenseOutput(self.dense_t[:d], self.dense_y[:d], self.dense_f[:d], k,
                                integ._P if self.stages else np.zeros((0, 0)), self.dense_h[:d])
        return t, y, dense


class StepRecorder(Recorder):
    """Every step of a run of ``n`` steps from the current state (no dense output)."""

    ADVICE = "record fewer steps per call"

    def __init__(self, integ, n):
        self.mode = L.RECORD_STEPS
        self.every = 1
        self.t_eval = np.zeros(0)
        self.rows = 1 + steps_allowed(integ, n)
        self.stages = self.dense_rows = 0
        self._allocate(integ, self.rows, 0)
        self.out_t[0], self.out_y[0] = integ.t, integ._y
        integ._ist[L.NOUT] = 1
        integ._ist[L.SINCE_SAVE] = 0


def steps_allowed(integ, n):
    """The most steps a run of at most ``n`` can take: ``max_steps``, and a fixed step's grid to ``t_end``.

    The grid counts for a run to ``t_end`` (``n`` is ``NO_LIMIT``) only.
    """
    steps = min(n, int(integ._ist[L.MAX_ACCEPT] - integ._ist[L.NACCEPT]))
    if n == NO_LIMIT and isinstance(integ.controller, FixedStep):
        steps = min(steps, expected_steps(integ))
    return steps


def _fits(nbytes):
    """Whether output buffers of ``nbytes`` may be allocated: small ones always, others within half the free memory."""
    return nbytes <= SMALL_BYTES or nbytes <= available_memory() // 2


def _larger(cap, rows):
    """The next size of a buffer of ``cap`` rows that the run fills to at most ``rows``."""
    return max(cap + 1, min(2 * cap, rows))


def _resized_rows(a, rows):
    """``a`` with ``rows`` rows, the first ones copied."""
    bigger = np.empty((rows,) + a.shape[1:], dtype=a.dtype)
    bigger[:a.shape[0]] = a
    return bigger


def _trimmed(buffer, m, last=None):
    """The first ``m`` rows, then ``last`` if given: a view of the buffer while it has room.

    A view, not a copy: a long run's result comes at once (Ctrl-C answers
    fast), and the buffer's unwritten rows cost no memory -- a large array's
    pages are only mapped when first written to.
    """
    if last is None:
        return buffer[:m]
    if m == buffer.shape[0]:
        buffer = _resized_rows(buffer, m + 1)
    buffer[m] = last
    return buffer[:m + 1]


def expected_steps(integ):
    """Steps of a fixed-step run from ``t0`` to ``t_end``: the kernel's grid, exactly.

    Needs a step that the grid resolves across the span (``h`` above
    :func:`step_floor`, as :func:`odekit.solve` checks): below it
    ``t0 + k h`` stops changing with ``k`` and the search would not end.
    """
    t0, t1 = integ.problem.t_span
    # the kernel's grid: step k ends at t0 + k h, and the step within 1e-9 h of t1 ends there
    h = integ._direction * integ.controller.h

    def lands(k):
        return integ._direction * ((t0 + k * h) - t1) >= -1e-9 * abs(h)

    k = max(1, int(math.ceil(abs(t1 - t0) / abs(h) * (1 - 1e-9))))
    while not lands(k):
        k += 1
    while k > 1 and lands(k - 1):
        k -= 1
    return k


def step_floor(t_span):
    """The fixed steps a grid across ``t_span`` cannot resolve: those up to this size.

    The kernels stop with ``STEP_UNDERFLOW`` at a step no longer than
    ``10 eps |t|``: near the far end of the span such a step no longer
    tells ``t + h`` from ``t``.
    """
    return 10 * EPS * max(abs(t_span[0]), abs(t_span[1]))


def check_t_eval(t_eval, t0, t1, direction):
    t_eval = checks.times("t_eval", t_eval)
    if t_eval.ndim != 1:
        raise ValueError(f"t_eval must be one-dimensional, got shape {t_eval.shape}")
    lo, hi = min(t0, t1), max(t0, t1)
    outside = t_eval[(t_eval < lo) | (t_eval > hi)]
    if outside.size:
        raise ValueError(f"t_eval must lie within t_span [{lo}, {hi}]; {float(outside[0])!r} does not")
    if t_eval.size > 1 and np.any(direction * np.diff(t_eval) < 0):
        order = "increasing" if direction > 0 else "decreasing"
        raise ValueError(f"t_eval must be sorted in the direction of integration ({order})")
    return t_eval

