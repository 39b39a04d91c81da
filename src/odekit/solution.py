"""What a run returns: the trajectory, the work it cost, and how it ended."""

from dataclasses import dataclass, fields
import enum

import numpy as np

from . import checks
from .kernels import layout
from .events import compared_rows
from .kernels.dense import interpolate


class Status(enum.IntEnum):
    """How a run ended.  Zero is success; every failure keeps what was computed."""

    SUCCESS = layout.SUCCESS
    MAX_STEPS = layout.MAX_STEPS
    STEP_UNDERFLOW = layout.STEP_UNDERFLOW
    NONFINITE = layout.NONFINITE
    BAD_SHAPE = layout.BAD_SHAPE
    NEWTON_FAILED = layout.NEWTON_FAILED
    FUNCTION_ERROR = layout.FUNCTION_ERROR
    MEMORY_LIMIT = layout.MEMORY_LIMIT
    INTERRUPTED = layout.INTERRUPTED
    EVENT = layout.EVENT
    EVENTS_ACCUMULATE = layout.EVENTS_ACCUMULATE
    MAX_EVENTS = layout.MAX_EVENTS

    def __str__(self):
        # IntEnum prints as its number; a person reading ``print(sol.status)`` wants the name
        return f"Status.{self.name}"


@dataclass(frozen=True)
class Stats:
    """Work done by a run.

    Attributes
    ----------
    nfev : int
        Evaluations of the right-hand side (for splitting methods: of the
        force), including finite-difference Jacobian columns.
    njev : int
        Jacobian evaluations (user-supplied or by finite differences).
    nlu : int
        LU factorisations.
    nsteps : int
        Step attempts, accepted and rejected (step doubling counts one
        attempt per doubled step).
    naccepted, nrejected : int
    """

    nfev: int
    njev: int
    nlu: int
    nsteps: int
    naccepted: int
    nrejected: int

    @classmethod
    def from_state(cls, ist):
        return cls.of(int(ist[layout.NFEV]), int(ist[layout.NJEV]), int(ist[layout.NLU]), int(ist[layout.NACCEPT]),
                      int(ist[layout.NREJECT]))

    @classmethod
    def of(cls, nfev, njev, nlu, naccepted, nrejected):
        """The counts of a run, its steps those accepted and rejected.

        Built without the frozen dataclass's ``__init__``, which sets each
        field through ``object.__setattr__``: 0.9 us, a tenth of a repeated
        small solve, against 0.3 (0.36 with ``__dict__.update``).
        """
        stats = object.__new__(cls)
        entries = stats.__dict__
        entries["nfev"], entries["njev"], entries["nlu"] = nfev, njev, nlu
        entries["nsteps"], entries["naccepted"], entries["nrejected"] = naccepted + nrejected, naccepted, nrejected
        return stats

    def as_dict(self):
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __str__(self):
        return ", ".join(f"{k}={v}" for k, v in self.as_dict().items())


@dataclass
class DenseOutput:
    """Per-step data for interpolation between accepted steps."""

    t: np.ndarray          # step end points, t[0] = t0
    y: np.ndarray          # flat states at t
    f: np.ndarray          # derivatives at t (cubic Hermite only)
    k: np.ndarray          # stages of each step (own interpolant; BDF: its differences) or empty
    P: np.ndarray          # the method's dense matrix, or 0 x 0 for Hermite
    h: np.ndarray = None   # the step each interpolant spans: t[i + 1] - t[i], unless an event cut the step
                           # (then longer; y[i + 1], f[i + 1] are at its full end) or jumped (0: a break)

    def __call__(self, t):
        t = checks.times("t", t)
        if t.ndim > 1:
            raise ValueError(f"t must be a real number or a one-dimensional array of them, got shape {t.shape}")
        lo, hi = min(self.t[0], self.t[-1]), max(self.t[0], self.t[-1])
        if np.any((t < lo) | (t > hi)):
            raise ValueError(f"t must lie within the solved span [{lo}, {hi}], got {t}")
        forward = self.t[-1] >= self.t[0]
        key = self.t if forward else -self.t
        flat = np.atleast_1d(t)
        idx = np.clip(np.searchsorted(key, flat if forward else -flat, side="right") - 1,
                      0, len(self.t) - 2)
        out = np.empty((flat.size, self.y.shape[1]), dtype=self.y.dtype)
        no_stages = np.zeros((0, self.y.shape[1]), dtype=self.y.dtype)
        for row, (ti, i) in enumerate(zip(flat, idx)):
            h = self.t[i + 1] - self.t[i] if self.h is None else self.h[i + 1]
            if h == 0.0:             # t is the time of a jump, the run's last: the state after it
                out[row] = self.y[i + 1]
                continue
            # the kernel's interpolant reads rows: y0, y1, f0, f1, then the stages
            stages = self.k[i] if self.P.shape[0] else no_stages
            W = np.vstack([self.y[i:i + 2], self.f[i:i + 2], stages])
            interpolate(self.P, (ti - self.t[i]) / h, h, W, 0, 1, 2, 3, 4, out, row)
        return out, t.ndim == 0


class Solution:
    """The result of :func:`odekit.solve`.

    Attributes
    ----------
    t : ndarray, shape (m,)
        Output times: every accepted step, or ``t_eval``.
    y : ndarray, shape (m, *y0.shape) or (m, 2, *x0.shape)
        The state at ``t`` (time-major).  For a second-order problem row ``i``
        stacks ``x`` and ``v``; see :attr:`x` and :attr:`v`.
    stats : Stats
        f-evaluations, Jacobians, LU factorisations, steps.
    status : Status
        ``Status.EVENT`` when a terminal event stopped the run.
    success : bool
        ``status`` is ``Status.SUCCESS`` or ``Status.EVENT``.
    message : str
        What happened, in words; on failure, where and why.
    method : Method
    backend : str
        ``"numba"`` or ``"python"``: which one ran.
    backend_reason : str
        Why the Python backend ran when the compiled one was asked for.
    problem : ODEProblem or SecondOrderProblem
    events : list of EventRecord
        The events that happened, in time order: time, index in the run's
        list of :class:`~odekit.Event`, component, state before and after.
        Where an affect changed the state, :attr:`t` holds the event's time
        twice, :attr:`y` the state before and then after.
    t_events, y_events : list of ndarray
        Per event of the run's list, as SciPy gives them: the times, and the
        states before the affect (shaped ``(k, *y0.shape)``).

    Calling ``sol(t)`` interpolates (with ``dense_output=True``): the
    method's own continuous extension where it has one, else cubic Hermite.
    At the time of an event that changed the state it gives the state after.
    """

    def __init__(self, problem, method, t, y, stats, status, message, backend,
                 backend_reason="", dense=None, exception=None, events=(), event_list=()):
        self.problem = problem
        self.method = method
        self.t = t
        self.y = y
        self.stats = stats
        self.status = status if status.__class__ is Status else Status(status)
        self.message = message
        self.backend = backend
        self.backend_reason = backend_reason
        self.exception = exception
        self._dense = dense
        self.events = list(events)
        self.event_list = tuple(event_list)

    @property
    def success(self):
        return self.status in (Status.SUCCESS, Status.EVENT)

    @property
    def t_events(self):
        return [np.array([r.t for r in self.events if r.index == k]) for k in range(len(self.event_list))]

    @property
    def y_events(self):
        shape = self.y.shape[1:]
        return [np.array([r.before for r in self.events if r.index == k]).reshape((-1,) + shape)
                for k in range(len(self.event_list))]

    @property
    def x(self):
        """Positions along the trajectory (second-order problems)."""
        self._require_second_order("x")
        return self.y[:, 0]

    @property
    def v(self):
        """Velocities along the trajectory (second-order problems)."""
        self._require_second_order("v")
        return self.y[:, 1]

    def _require_second_order(self, what):
        if not self.problem.second_order:
            raise AttributeError(f"sol.{what} exists for SecondOrderProblem solutions; this one solved "
                                 "a first-order problem, whose state is sol.y")

    def __call__(self, t):
        """The interpolated state at ``t`` (scalar or array), shaped like ``y`` rows."""
        if self._dense is None:
            raise ValueError("this solution has no dense output: pass dense_output=True to solve()")
        out, scalar = self._dense(t)
        shaped = self.problem.unflatten(out)
        return shaped[0] if scalar else shaped

    def sol(self, t):
        """``self(t)``, as SciPy spells it (``solve_ivp(...).sol(t)``)."""
        return self(t)

    def invariants(self, names=None):
        """Each invariant evaluated along the trajectory: ``{name: array (m,)}``.

        Evaluated on the whole trajectory at once when the invariant's function
        accepts arrays (see :func:`invariant_values`).
        """
        available = self.problem.invariants
        names = list(available) if names is None else [names] if isinstance(names, str) else list(names)
        unknown = [n for n in names if n not in available]
        if unknown:
            raise KeyError(f"unknown invariant(s) {unknown}; the problem has {sorted(available)}")
        return {name: invariant_values(self, name) for name in names}

    def error(self):
        """Largest absolute error against ``problem.exact`` over the output times."""
        exact = self.problem.exact
        if exact is None:
            raise ValueError(f"problem {self.problem.name!r} has no exact solution")
        err = np.array([np.max(np.abs(yi - np.asarray(exact(ti)).reshape(yi.shape)), initial=0.0)
                        for ti, yi in zip(self.t, self.y)])
        return float(np.max(err[compared_rows(self.t, err)], initial=0.0))

    def plot(self, path=None):
        """Trajectory (with the exact one), error and invariant drift against time: a Figure."""
        from . import plot

        return plot.solution(self, path)

    def __repr__(self):
        return (f"Solution({self.problem.name!r}, method={self.method.name!r}, status={self.status.name}, "
                f"{len(self.t)} points, t=[{self.t[0]:.6g}, {self.t[-1]:.6g}], {self.stats}, "
                f"backend={self.backend!r})")


# --- invariants along a trajectory ----------------------------------------------------

def invariant_values(solution, name):
    """An invariant evaluated at every output time of a solution: array of shape ``(m,)``.

    Like ``solution.invariants()[name]``, but vectorised when the invariant
    function accepts whole trajectories: it is first called once with time
    on the *last* axis -- ``g(t, y)`` with ``y`` of shape ``(*y0.shape,
    m)`` (``g(t, x, v)`` for mechanics), the convention of SciPy's
    ``vectorized=True`` -- so that ``y[0]``, ``x[1]`` ... are component
    histories.  The result is used only if it has shape ``(m,)`` and agrees
    with the one-point-at-a-time evaluation at five sample times; otherwise
    (or if the call raises) every point is evaluated in a Python loop.  The
    vectorised call is one pass of NumPy over the trajectory, where the loop
    pays a Python call per point: on a long trajectory, orders of magnitude
    more.

    Raises
    ------
    ValueError
        If ``name`` is not an invariant of the solution's problem.
    """
    if not isinstance(solution, Solution):
        raise TypeError(f"solution must be an odekit Solution (from odekit.solve), got {type(solution).__name__}")
    problem = solution.problem
    if name not in problem.invariants:
        have = ", ".join(sorted(problem.invariants)) or "none"
        raise ValueError(f"{name!r} is not an invariant of problem {problem.name!r}; it has: {have}")
    fn = problem.invariants[name]
    t, y = solution.t, solution.y
    count = len(t)

    def at(indices):
        return np.array([problem.evaluate_invariant(fn, t[i], y[i]) for i in indices])

    if count >= 8:
        values = _vectorised(problem, fn, t, y)
        if values is not None:
            sample = np.unique(np.linspace(0, count - 1, 5).astype(int))
            direct = at(sample)
            scale = float(np.max(np.abs(direct))) if direct.size else 0.0
            if np.allclose(values[sample], direct, rtol=1e-12, atol=1e-12 * scale + 1e-300):
                return values.astype(complex if values.dtype.kind == "c" else float)
    return at(range(count))


def _vectorised(problem, fn, t, y):
    """``fn`` called once on the whole trajectory (time on the last axis), or None if that fails."""
    trajectory = np.moveaxis(y, 0, -1).copy()
    try:
        with np.errstate(all="ignore"):
            if problem.second_order:
                values = np.asarray(fn(t.copy(), trajectory[0], trajectory[1]))
            else:
                values = np.asarray(fn(t.copy(), trajectory))
    except Exception:  # noqa: BLE001 - a function that cannot take arrays is evaluated point by point
        return None
    if values.shape != (t.size,) or values.dtype.kind not in "biufc":
        return None
    return values
