"""Adaptive steps that stay symplectic: explicit, time-reversible step-size control.

An error estimate plugged into a symplectic method destroys its long-time
behaviour: the step then depends on the past of the run, the map is neither
symplectic nor reversible, and the energy error of an eccentric orbit drifts
as a non-symplectic method's does.  Fixed steps keep the energy error bounded
but spend at apocentre the tiny steps the pericentre needs.

Hairer & Söderlind's control (*Explicit, time reversible, adaptive step size
control*, SIAM J. Sci. Comput. 26 (2005) 1838-1851) keeps both: the step is
``h = eps / rho``, and the control variable ``rho`` is integrated alongside
the motion by a symmetric (leapfrog) update::

    rho_{n+1/2} = rho_n - eps/2 g(y_n)
    y_{n+1}     = Phi_{eps / rho_{n+1/2}}(y_n)       (any symmetric splitting step)
    rho_{n+1}   = rho_{n+1/2} - eps/2 g(y_{n+1})

where ``g = d/dt ln sigma`` is the rate at which the wanted step density
``sigma`` grows along the motion (``rho`` then follows ``1 / sigma`` up to a
constant, so ``h`` follows ``eps sigma``).  With ``Phi`` symmetric and ``g``
odd under ``v -> -v``, the map ``(y_n, rho_n) -> (y_{n+1}, rho_{n+1})`` is
time reversible: run backwards with the velocities reversed it returns to the
start, and like a reversible fixed-step method it keeps the energy error of
integrable problems bounded, without secular drift.  The step is explicit
and costs no evaluation beyond the method's own when ``g`` is a formula of
the state (:func:`distance_control`).

Why this and not a Sundman time transformation ``dt/dtau = sigma(x)``: the
transformed Hamiltonian ``sigma (H - E)`` is no longer separable, so the
explicit kick--drift methods do not apply to it (an implicit symmetric method
or a problem-specific splitting -- the logarithmic Hamiltonian of Mikkola &
Tanikawa and Preto & Tremaine, for potentials only -- is needed).  Hairer &
Söderlind's control runs every symmetric splitting of the registry unchanged,
with the step size as its only input.

The loop is :mod:`odekit.kernels.reversible`, compiled with the problem's
functions, or run as Python, with the same numbers.
"""

from dataclasses import dataclass
import functools
import math
import warnings

import numpy as np

from . import backend as _backend, checks, runsetup
from .kernels import layout as L, reversible as K
from .recording import _fits, _resized_rows
from .registry import method as lookup_method
from .solution import Solution, Stats, Status
from .splitting import SplittingScheme

SLICE = {"numba": 100_000, "python": 2_000}   # steps between returns to Python, where Ctrl-C is seen
FIRST_ROWS = 1024                              # output rows to start with; doubled when full


def distance_control(alpha=1.5):
    """The control of steps proportional to ``|x|^alpha``: ``g = alpha (x . v) / |x|^2``.

    ``alpha = 3/2`` follows Kepler's third law (the time scale of an orbit at
    distance ``r`` from the centre is ``r^(3/2)``), the choice of Hairer &
    Söderlind for Kepler's problem; ``alpha = 1`` makes the steps uniform in
    the eccentric anomaly (Sundman's).  It costs no force evaluation, and
    Numba compiles it.
    """
    alpha = checks.real("alpha", alpha, "a finite real number", math.isfinite)

    def growth(t, x, v, *args):
        xf, vf = x.ravel(), v.ravel()
        xv = 0.0
        xx = 0.0
        for i in range(xf.size):             # a loop, not np.dot: the same sums compiled and as Python
            xv += xf[i] * vf[i]
            xx += xf[i] * xf[i]
        return alpha * xv / xx
    growth.__name__ = f"distance_control({alpha!r})"
    return growth


@dataclass(frozen=True)
class ReversibleSteps:
    """Time-reversible adaptive steps for a symmetric splitting method (Hairer & Söderlind 2005).

    Pass it as ``solve(problem, "velocity_verlet", h=eps, step_control=ReversibleSteps(...))``:
    the step is ``eps / rho``, the control variable ``rho`` starts at
    ``rho0`` and follows ``1 / sigma`` (see :mod:`odekit.reversible`), so the
    first step is about ``eps / rho0`` and the others scale as the density
    ``sigma`` does.  Neither the method nor the driver knows about it.

    Parameters
    ----------
    control : callable, optional
        ``control(t, x, v, *args) -> float``: ``d/dt ln sigma``, the relative
        rate at which the step should grow along the motion, for steps
        proportional to ``sigma(x, v)``; it must change sign with ``v`` for
        the run to be reversible (a time derivative does).  Compiled with
        the problem's functions when Numba can.  Default: steps proportional
        to ``|a|^(-1/2)``, the time in which the acceleration carries a body
        over a unit distance, whose rate ``-(a . a') / (2 |a|^2)`` takes
        ``a' = (a(x + d v) - a(x - d v)) / (2 d)``: two more force
        evaluations per step.  :func:`distance_control` costs none.
    rho0 : float
        The control variable at the start (positive).  A run backwards from
        where another ended continues its ``rho`` (``sol.rho[-1]``).
    """

    control: object = None
    rho0: float = 1.0

    def __post_init__(self):
        checks.callable_or_none("control", self.control, "a function control(t, x, v, *args) -> float")
        checks.positive("rho0", self.rho0, "a positive finite number")

    def solve(self, problem, method, h, max_steps=None, save_every=1, backend="auto"):
        """Integrate ``problem`` over its span with ``method``'s steps of ``h / rho``; see :func:`odekit.solve`.

        The last step is shortened to land on the end of the span.  The
        solution's ``rho`` holds the control variable at each output time.
        """
        m = lookup_method(method)
        _refusal(m, problem)
        eps = checks.positive("h", h, "a positive finite number, the step where rho = 1")
        save_every = checks.count("save_every", save_every)
        limit = checks.NO_LIMIT if max_steps is None else checks.steps("max_steps", max_steps)
        checks.choice("backend", backend, _backend.BACKENDS, f"one of {', '.join(_backend.BACKENDS)}")
        run = _Run(problem, m, self, eps, limit, save_every)
        name, reason, drive, fns = _kernels(problem, self.control, run, backend)
        status = run.go(drive, fns, SLICE[name])
        t, y, rho = run.output()
        sol = Solution(problem, m, t, problem.unflatten(y), Stats.from_state(run.ist), status,
                       _message(status, run, max_steps), name, reason)
        sol.rho = rho
        return sol


def _refusal(m, problem):
    """Refuse, with advice, what reversible steps cannot run."""
    if not isinstance(m.coefficients, SplittingScheme):     # the loop steps a kick-drift scheme's data
        raise ValueError(f"step_control=ReversibleSteps runs kick-drift splitting methods; method {m.name!r} is "
                         f"{m.family.title}: choose a symmetric splitting method such as 'velocity_verlet', "
                         "'forest_ruth' or 'pefrl'")
    if not m.coefficients.symmetric:
        raise ValueError(f"method {m.name!r} is not symmetric, so its steps cannot be time reversible; "
                         "accepted: a symmetric splitting method such as 'velocity_verlet', 'forest_ruth' "
                         "or 'pefrl'")
    refused = m.refusal(problem)
    if refused:
        raise ValueError(refused)
    if problem.damping is not None:
        raise ValueError("a damped problem (damping=...) is not time reversible, so reversible steps cannot "
                         "serve it; accepted: an undamped problem, or fixed steps h")
    if problem.magnetic is not None:
        raise ValueError("reversible steps do not run a magnetic field (magnetic=...), whose v x b their step "
                         "control does not see; accepted: fixed steps h with 'boris'")
    if problem.events:
        raise ValueError("reversible steps do not search events; accepted: a problem without events "
                         "(see problem.events), or a method with fixed or error-controlled steps")
    if problem.velocity_dependent:
        raise ValueError("reversible steps need forces that do not depend on velocity, but the problem says "
                         "velocity_dependent=True; accepted: velocity_dependent=False if accel ignores v, or "
                         "fixed steps h, whose kicks are then implicit in v")


class _Run:
    """One run's arrays: the work matrix, ``fs`` and ``ist``, the method's data and the output buffers."""

    exception = None

    def __init__(self, problem, m, options, eps, max_steps, save_every):
        y = problem.initial_state().astype(float)
        self.scratch = runsetup.work_arrays(m, y, problem, None)
        drifts, kicks, flags = m.kernel_data(False)
        flags = flags.copy()
        flags[1] = 0          # leapfrog's staggered velocity is its synchronised scheme, velocity Verlet
        self.m = (drifts, kicks, flags)
        self.args = problem.args
        self.fs = np.zeros(L.FS_SIZE)
        self.ist = np.zeros(L.IST_SIZE, dtype=np.int64)
        fs, ist = self.fs, self.ist
        fs[L.T], fs[L.T_END] = problem.t_span
        fs[K.RHO], fs[K.EPS] = options.rho0, eps
        ist[K.CONTROL] = K.FROM_FORCE if options.control is None else K.USER
        ist[L.MAX_ACCEPT] = max_steps
        ist[L.SAVE_EVERY] = save_every
        self.out = (np.zeros(FIRST_ROWS), np.zeros((FIRST_ROWS, y.size)), np.zeros(FIRST_ROWS))
        K.record(fs, ist, self.scratch[0], *self.out)

    def go(self, drive, fns, slice_steps):
        """Call the loop until the run ends; its status."""
        rhs, jac, control = fns
        while True:
            self.ist[L.PAUSE_AFTER] = slice_steps
            try:
                with np.errstate(all="ignore"):
                    code = drive(rhs, jac, control, self.args, self.m, self.scratch, self.fs, self.ist, *self.out)
            except Exception as exc:     # the user's function raised: keep what was computed
                self.exception = exc
                code = L.FUNCTION_ERROR
            if code == L.BUFFER_FULL:
                if not self._grow():
                    return Status.MEMORY_LIMIT
            elif code != L.PAUSED:
                break
        # the last state reached, not yet recorded
        if code != L.SUCCESS and self.ist[L.SINCE_SAVE] and (self.ist[L.NOUT] < len(self.out[0]) or self._grow()):
            K.record(self.fs, self.ist, self.scratch[0], *self.out)
        return Status(code)

    def _grow(self):
        """Double the output buffers; False when that would take more than half the free memory."""
        rows = 2 * len(self.out[0])
        if not _fits(sum(a[:1].nbytes for a in self.out) * rows):
            return False
        self.out = tuple(_resized_rows(a, rows) for a in self.out)
        return True

    def output(self):
        k = int(self.ist[L.NOUT])
        return tuple(a[:k].copy() for a in self.out)


def _message(status, run, max_steps):
    """What happened, in words."""
    fs = run.fs
    t = fs[L.T]
    if status == Status.SUCCESS:
        return f"The solver reached t_end={t:.6g}."
    if status == Status.MAX_STEPS:
        return f"max_steps={max_steps} reached at t={t:.6g}."
    if status == Status.STEP_UNDERFLOW:
        half = fs[K.RHO] - 0.5 * fs[K.EPS] * fs[K.GROWTH]
        if half > 0.0:
            return (f"the control variable rho grew to {half:.3g} at t={t:.6g}: the step h / rho = "
                    f"{fs[K.EPS] / half:.3g} no longer advances t (a collision?)")
        return (f"the control variable rho would fall to {half:.3g} at t={t:.6g}: the step would be infinite "
                "or negative; take a smaller h")
    if status == Status.MEMORY_LIMIT:
        return (f"the output would take more than half the free memory at t={t:.6g}: "
                "record fewer steps with save_every")
    if status == Status.NONFINITE:
        return f"the force or the control is not finite at t={fs[L.T_FAIL]:.6g} (the last good state: t={t:.6g})"
    return f"the problem's function raised at t={t:.6g}: {run.exception!r}"


# --- the kernels: compiled with the problem's functions, or as Python ---------------------

def _no_control(t, W, row, args):
    """The control function of a run whose control comes from the force (see :mod:`odekit.kernels.reversible`)."""
    return 0.0


def _control_adapter(control, shape):
    """``control(t, x, v, *args)`` -> ``g(t, W, row, args)``, the kernel convention."""
    if len(shape) == 1:
        def g(t, W, row, args):
            n = W.shape[1] // 2
            return float(control(t, W[row, :n], W[row, n:], *args))
    else:
        def g(t, W, row, args):
            n = W.shape[1] // 2
            return float(control(t, W[row, :n].reshape(shape), W[row, n:].reshape(shape), *args))
    return g


def _kernels(problem, control, run, backend):
    """``(backend, why Python, drive, (rhs, jac, control))``: compiled where Numba can, unless ``backend="python"``."""
    reason = ""
    if backend != "python":
        try:
            return ("numba", "") + _compiled(problem, control, run)
        except Exception as exc:
            if backend == "numba":
                raise
            reason = f"Numba could not compile the force or the control: {str(exc).splitlines()[0]}"
            warnings.warn(f"odekit: {reason}; the Python backend runs them instead",
                          _backend.BackendFallbackWarning, stacklevel=_backend.caller_stacklevel())
    g = _no_control if control is None else _control_adapter(control, problem.shape)
    return "python", reason, K.reversible_drive, (_backend.python_force(problem), None, g)


def _compiled(problem, control, run):
    from numba import types

    from .kernels import jit

    dtype = run.scratch[0].dtype
    rhs, jac = _backend.compiled_adapters(problem, _backend._adapter_key(problem, True, False), dtype)
    g = _compiled_control(control, problem.shape, dtype, jit.typeof(problem.args))
    arguments = (rhs, jac, g, problem.args, run.m, run.scratch, run.fs, run.ist) + run.out
    drive = jit.kernel(K.reversible_drive, types.int64(*map(jit.typeof, arguments)))
    return drive, (rhs, jac, g)


@functools.lru_cache(maxsize=64)
def _compiled_control(control, shape, dtype, args_type):
    """The control's adapter compiled for one kind of run; kept, so that a second solve starts at once."""
    from numba import types

    from .kernels import jit

    signature = types.float64(types.float64, jit.matrix(dtype), types.intp, args_type)
    source = _no_control if control is None else _control_adapter(jit.compile_function(control), shape)
    return jit.compile_function(source, signature)
