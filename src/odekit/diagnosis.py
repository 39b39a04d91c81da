"""What went wrong, in words: checks of the problem's functions at ``t0``, and the message of a failed run.

The kernels report a status code and the time of a failure; this module
turns that into a sentence that names the culprit -- the problem's
function, ``jac`` or odekit itself -- what it returned and what was
expected, calling the function once more where the code alone cannot tell.
At the start of a run it checks, without counting or changing anything,
what compiled code would otherwise take silently: an in-place function that
writes nothing, complex values for a real state, a Jacobian of the wrong
shape, a force declared velocity-independent that is not.
"""

import contextlib
import copy
import inspect
import math
import warnings

import numpy as np

from . import backend as _backend
from .kernels import layout as L
from .kernels.evaluation import matrix_finite, store_matrix
from .kernels.velocity import store_velocity_block


# --- at t0: what the problem's functions give --------------------------------------------


def first_evaluation(run, kernels):
    """f at the initial state (counted), and checks of what the problem's functions give there.

    The checks count no evaluation and leave the run's numbers as they
    are: an in-place function's output starts as a marker it must
    overwrite, and may not receive complex values for a real state; the
    Jacobian, where the method uses it, must fit and be finite; a force
    declared velocity-independent is evaluated once more, uncounted, at
    another velocity (:meth:`_check_velocity_independent`).
    """
    p, t0 = run.problem, run._fs[L.T]
    W, J = run._scratch[0], run._scratch[1]
    run._ist[L.NFEV] = 0        # a second try, on the Python backend, counts afresh
    if p.inplace:
        W[L.F].view(np.uint64)[:] = _UNWRITTEN
    with _refusing_complex_writes(p, W, t0):
        code = kernels.deriv(kernels.rhs, kernels.args(p.args), t0, W, L.Y, L.F, run._ist, run._fs)
    if code == L.NONFINITE and p.inplace and np.any(W[L.F].view(np.uint64) == _UNWRITTEN):
        raise ValueError(_unwritten_error(p, W[L.F], t0))
    if code != L.SUCCESS:
        return code
    if p.jac is not None and run.method.solves_newton(p):
        if not kernels.jac(t0, W, L.Y, J, p.args):
            raise ValueError(_jac_shape_error(p, _jac_value(p, t0, W[L.Y]), f"t={t0}"))
        if not matrix_finite(J):
            raise ValueError(f"jac returned non-finite values (inf or nan) at t0={t0} for the initial state")
    if p.second_order and not p.velocity_dependent:
        _check_velocity_independent(run, kernels, t0)
    return code


def _check_velocity_independent(run, kernels, t0):
    """Refuse a force declared velocity-independent that changes with ``v``.

    Splitting methods take such a force at its word and silently drop to
    first order (``a = -x - 2v`` by velocity Verlet at ``h = 0.01``: an
    error of 1.2e-3).  A force that ignores ``v`` returns the very same
    numbers at another velocity; ``2 v0 + pi/3`` differs from ``v0`` in
    every component (and from ``-v0`` unless ``v0 = -pi/9``).  One
    evaluation on a copy of the state: not counted, nothing of the run
    touched.  A damped problem's ``f`` holds ``a - c v``, which differs at
    another ``v`` whatever ``a`` does: ``accel`` alone is called then, as
    Python, at both velocities -- and so it is with a magnetic field, whose
    ``v x b`` is in ``f`` too.
    """
    W = run._scratch[0]
    n = W.shape[1] // 2
    p = run.problem
    plain = p.damping is None and p.magnetic is None       # f's second half is accel's alone
    force = kernels.rhs if plain else _backend.python_force(p)
    probe = W[[L.Y, L.F, L.Y, L.F]]
    probe[2, n:] = 2.0 * probe[2, n:] + math.pi / 3
    try:
        fits = plain or force(t0, probe, 0, 1, p.args)
        fits = fits and force(t0, probe, 2, 3, p.args)
    except Exception as exc:
        exc.add_note("odekit: raised by accel at another velocity, called to check velocity_dependent=False")
        raise
    a0, a1 = (W[L.F, n:] if plain else probe[1, n:]), probe[3, n:]
    if fits and np.array_equal(a0, a1):
        return
    i = int(np.flatnonzero(a0 != a1)[0]) if fits else 0
    raise ValueError(
        "accel depends on the velocity v, but the problem says velocity_dependent=False: at t0 and x0 it "
        f"gave a[{i}] = {a0[i].item()!r} for v0 and {a1[i].item()!r} for another v (or it is not a "
        "deterministic function of t and x). Declare velocity_dependent=True -- splitting methods that "
        "need velocity-independent forces would lose their order silently")


# --- after a failure: the message ----------------------------------------------------


def message(run, status, t_target, exc=None, recorder=None):
    t, fs, ist = run.t, run._fs, run._ist
    where = f"t={fs[L.T_FAIL]:.6g}"
    what = "the force accel" if run.problem.second_order else "fun"
    if status == L.SUCCESS:
        return f"reached t={t:.6g}"
    if status in (L.EVENT, L.EVENTS_ACCUMULATE, L.MAX_EVENTS):
        return _event_message(run, status, t)
    if status == L.MAX_STEPS:
        return (f"max_steps={int(ist[L.MAX_ACCEPT])} reached at t={t:.6g} before t_end={t_target:.6g}; "
                "raise max_steps, loosen the tolerances or use a larger h")
    if status == L.NONFINITE:
        if math.isnan(fs[L.T_FAIL]):
            return (f"the state overflowed to inf or nan in the step from t={t:.6g} with h={run.h:.3g}, "
                    "although every evaluation was finite; the solution may be growing without bound")
        source = _nonfinite_source(run, what)
        advice = "check it there" if source == "jac" else "a smaller h or an adaptive method may get through"
        return (f"{source} returned non-finite values (inf or nan) at {where}, in the step from t={t:.6g} "
                f"with h={run.h:.3g}; {advice}")
    if status == L.BAD_SHAPE:
        return _bad_return_message(run, what, where)
    if status == L.NEWTON_FAILED and run.method.velocity_implicit and run.problem.velocity_dependent:
        return (f"the implicit velocity kick of {run.method.name!r} (fixed-point iteration, then Newton's "
                f"method) did not converge at {where}, in the step from t={t:.6g} with h={run.h:.3g}: the "
                "force changes too fast with v for this step; use a smaller h")
    if status == L.NEWTON_FAILED:
        return (f"Newton's method did not converge at {where} (step from t={t:.6g} with "
                f"h={run.h:.3g}); use a smaller h, adaptive stepping, or supply the exact Jacobian")
    if status == L.FUNCTION_ERROR:
        return f"{_raiser(run, exc, what)} raised {type(exc).__name__}: {exc} (in the step from t={t:.6g})"
    if status == L.INTERRUPTED:
        return f"interrupted by Ctrl-C at t={t:.6g} after {int(ist[L.NACCEPT]):,} steps"
    if status == L.MEMORY_LIMIT:
        return recorder.memory_message(t, t_target)
    if status == L.STEP_UNDERFLOW:
        why = {L.NONFINITE: f"; {_nonfinite_source(run, what)} returned non-finite values at {where}",
               L.NEWTON_FAILED: f"; Newton's method failed to converge at {where}"}.get(int(ist[L.LAST_FAIL]), "")
        floor = (f"h_min={run._ctrl[L.C_HMIN]:g}" if run._ctrl[L.C_HMIN] > 0
                 else "the resolution of floating point")
        return (f"step size underflow at t={t:.6g}: the step needed fell below {floor}{why}. "
                "The solution may be singular there, or the problem stiff (try an implicit method)")
    return f"stopped with status {status}"


def _event_message(run, status, t):
    """Why events ended the run: a terminal one, too many, or ever closer together (Zeno)."""
    ev, logged = run._state.ev, int(run._ist[L.NEVENT])
    if status == L.EVENT:
        event = run._events[int(ev.log_i[logged - 1, 0])]
        nth = f" (occurrence {event.terminal})" if event.terminal > 1 else ""
        return f"the terminal event {event.name!r}{nth} stopped the run at t={t:.17g}"
    if status == L.MAX_EVENTS:
        return (f"max_events={int(ev.conf[1])} reached at t={t:.6g}: the run logged that many events; "
                "raise max_events to go on")
    return (f"events accumulate at t={t:.17g}: an event whose affect changes the state came within rounding "
            f"of the last one, after {logged:,} events (Zeno behaviour, such as a bouncing ball coming to "
            "rest). End the run there with a terminal event, or have the affect settle the state "
            "(e.g. a ball at rest stays on the floor)")


def _nonfinite_source(run, what):
    """Who returned inf or nan: ``jac`` when the Jacobian holds some, else ``what``.

    The kernels check the user's Jacobian as soon as it is taken, so one
    left in ``J`` with inf or nan is what failed.
    """
    jac_used = run.problem.jac is not None and run.method.solves_newton(run.problem)
    return "jac" if jac_used and not matrix_finite(run._scratch[1]) else what


def _bad_return_message(run, what, where):
    """The message of BAD_SHAPE: which function returned what, found by calling it once more.

    The kernels only know that a value did not fit.  The problem's
    function is called at the failure's time and the last good state,
    then (if that looks right) ``jac``, which the kernels take at a
    step's start; a call that fails or looks right tells nothing.
    """
    p, t = run.problem, run._fs[L.T_FAIL]
    found = None if p.inplace else _call_again(run, p.accel if p.second_order else p.fun, t)
    if found is None and callable(p.jac) and run.method.solves_newton(p):
        value = _call_again(run, p.jac, t, raw=True)
        if value is not _FAILED and not _jac_takes(run, value):
            return _jac_shape_error(p, value, where)
    expected = f"expected an array of shape {p.shape}"
    if found is None:
        return f"{what} returned the wrong number of values at {where}; {expected}"
    kind, phrase, advice = found
    if kind == "shape":
        return f"{what} returned the wrong number of values ({phrase}) at {where}; {expected}"
    return f"{what} returned {phrase} at {where}; {advice}"


def _jac_takes(run, value):
    """Whether the kernels take ``value`` as the Jacobian: tried on a copy of the run's own."""
    J = run._scratch[1]
    if isinstance(J, np.ndarray) and run.problem.second_order:    # a splitting run's, for its kicks' da/dv
        return isinstance(value, (tuple, list)) and len(value) == 2 and store_velocity_block(np.zeros_like(J), value[1])
    if isinstance(J, np.ndarray):
        return store_matrix(np.empty_like(J), value)
    return copy.copy(J).set(tuple(value) if isinstance(value, list) else value)


def _call_again(run, fn, t, raw=False):
    """What is wrong with what ``fn`` -- the problem's function or jac -- returns at ``t`` and the current state.

    See :func:`_returned`; None when the call fails or the value is right.
    ``raw``: the value itself, or ``_FAILED``.
    """
    try:
        value = run.problem.call(fn, t, run._y)
    except Exception:
        return _FAILED if raw else None
    return value if raw else _returned(value, run.problem)


def _raiser(run, exc, what):
    """Who raised ``exc`` in a run -- the problem's function, ``jac``, an event's or odekit -- from its traceback.

    Compiled functions leave no frame: then it is ``what``, or "``what``
    or jac" when the method calls a jac function too.
    """
    p = run.problem
    jac = p.jac if callable(p.jac) and run.method.solves_newton(p) else None
    roles = {_code_of(p.accel if p.second_order else p.fun): what}
    if jac is not None:
        roles[_code_of(jac)] = "jac"
    for e in run._events:
        roles[_code_of(e.g)] = f"g of event {e.name!r}"
        if e.affect is not None:
            roles[_code_of(e.affect)] = f"affect of event {e.name!r}"
    frames = list(_frames(exc.__traceback__))
    for frame in frames:
        if frame.f_code in roles:
            return roles[frame.f_code]
    compiled = not (inspect.isfunction(run._kernels.rhs) and inspect.isfunction(run._kernels.jac))
    if compiled or None in roles:
        return f"{what} or jac" if jac is not None else what
    own = [f.f_code for f in frames if f.f_code.co_filename.startswith(_backend._PACKAGE)]
    return f"odekit ({own[-1].co_qualname}), not {what}," if own else what


# --- helpers -------------------------------------------------------------------------


def first_evaluation_error(problem, code, t0):
    name = "accel" if problem.second_order else "fun"
    if code == L.BAD_SHAPE:
        value = problem.call(problem.accel if problem.second_order else problem.fun, t0, problem.initial_state())
        _, phrase, advice = _returned(value, problem) or (
            None, "the wrong number of values", f"expected the shape of the state, {problem.shape}")
        return f"{name} returned {phrase} at t0={t0}; {advice}"
    return f"{name} returned non-finite values (inf or nan) at t0={t0} for the initial state"


_FAILED = object()


def _returned(value, problem):
    """What is wrong with a value the problem's function returned: ``(kind, phrase, advice)``, or None.

    The kernels refuse (see :func:`odekit.kernels.evaluation.store`) None,
    the wrong number of values, and complex values for a real state.
    """
    expected = f"expected an array of shape {problem.shape}"
    if value is None:
        return "none", "None", f"{expected} -- is a return statement missing?"
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return "sequence", f"a {type(value).__name__} that makes no array of numbers", expected
    if array.dtype.kind == "c" and _real_state(problem):
        return "complex", "complex values", _complex_advice(problem)
    if array.dtype.kind not in "biufc":
        return "dtype", f"values of dtype {array.dtype}", f"{expected} of numbers"
    if array.size != math.prod(problem.shape):
        return "shape", f"an array of shape {array.shape}", f"expected the shape of the state, {problem.shape}"
    return None


def _real_state(problem):
    return (problem.x0 if problem.second_order else problem.y0).dtype.kind != "c"


def _complex_advice(problem):
    start = "x0 and v0" if problem.second_order else "y0"
    return (f"a real state ({start} real) would lose their imaginary part: give a complex {start} to "
            "integrate in complex numbers, or keep only the real part")


def _is_complex(value):
    """Whether ``value`` (an array, a sparse matrix or a sequence of them) holds complex numbers."""
    if isinstance(value, (tuple, list)) and any(hasattr(a, "dtype") for a in value):
        return any(_is_complex(a) for a in value)
    try:
        return (value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype).kind == "c"
    except (TypeError, ValueError):
        return False


def _jac_value(problem, t, u):
    """The problem's Jacobian at ``t`` and the flat state ``u``: called, or the constant itself."""
    return problem.call(problem.jac, t, u) if callable(problem.jac) else problem.jac


def _jac_shape_error(problem, value, where):
    """What is wrong with the Jacobian ``value`` the problem gave at ``where`` (``t=...``)."""
    if value is not None and _is_complex(value) and _real_state(problem):
        return f"jac returned complex values at {where}; {_complex_advice(problem)}"
    if problem.second_order:
        n = problem.x0.size
        expected = f"a pair (A_x, A_v) of ({n}, {n}) matrices, the force Jacobians da/dx and da/dv"
        got = [np.shape(a) for a in value] if isinstance(value, (tuple, list)) else np.shape(value)
    else:
        n = problem.y0.size
        expected = f"a ({n}, {n}) matrix"
        got = f"{np.size(value)} values (shape {np.shape(value)})"
    if value is None:
        got = "None (is a return statement missing?)"
    return f"jac returned {got} at {where}; expected {expected}"


# An in-place function's output starts as this quiet NaN, whose payload no arithmetic makes:
# what still holds it was never written (or was read before it was).
_UNWRITTEN = np.uint64(0x7FF8_0DD0_0BAD_F00D)


def _unwritten_error(problem, row, t0):
    """The message for an in-place function that left entries of its output (``row``) unwritten."""
    name = "accel" if problem.second_order else "fun"
    words = row.view(np.uint64).reshape(row.size, -1)         # two words per complex entry
    unwritten = (words == _UNWRITTEN).any(axis=1)[row.size // 2 if problem.second_order else 0:]
    if unwritten.all():
        what = "wrote nothing into its output argument"
    else:
        what = (f"left {int(unwritten.sum())} of {unwritten.size} entries of its output argument unwritten "
                f"(the first at flat index {int(np.flatnonzero(unwritten)[0])})")
    return (f"{name} (inplace=True) {what} at t0={t0}; it must fill every entry in place (out[:] = ...): "
            "a returned result or a rebound name is not stored, and the output's old values are not to be read")


@contextlib.contextmanager


def _refusing_complex_writes(problem, W, t0):
    """An in-place function that writes complex values into a real state: an error, not a lost imaginary part.

    NumPy drops the imaginary part with only a ComplexWarning (compiled, the
    write does not type, and the Python backend runs it).
    """
    if not problem.inplace or W.dtype.kind == "c":
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            yield
        except np.exceptions.ComplexWarning as exc:
            name = "accel" if problem.second_order else "fun"
            raise ValueError(f"{name} (inplace=True) wrote complex values into its output at t0={t0}; "
                             f"{_complex_advice(problem)}") from exc


def _code_of(fn):
    """The code object that a call of ``fn`` runs as Python, or None (compiled, or not found)."""
    if hasattr(fn, "py_func"):        # a Numba dispatcher: no Python frame
        return None
    fn = getattr(fn, "func", fn)      # functools.partial
    code = getattr(fn, "__code__", None)
    return code if code is not None else getattr(getattr(type(fn), "__call__", None), "__code__", None)


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next
