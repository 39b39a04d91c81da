"""Backends: the same kernels, run as plain Python or compiled by Numba.

The user's functions reach the kernels through *adapters* with the kernel
calling convention ``rhs(t, y, out, args) -> bool`` (see
:mod:`odekit.kernels.evaluation`).  The adapters are written once, as
closures; the compiled backend compiles the user's function and the same
closure with Numba.  Adapters are memoised per function and shape, because
Numba compiles a kernel once per distinct function it is handed: reusing the
adapter is what makes a second solve of the same problem start instantly.
"""

from dataclasses import dataclass
import functools
import os
import sys
import warnings

import numpy as np

from .kernels.driver import drive
from .kernels.evaluation import first_order_derivative, store
from .kernels.explicit_rk import explicit_rk_step
from .kernels.implicit_rk import implicit_rk_step
from .kernels.primitives import copy_into
from .kernels.rosenbrock import rosenbrock_step
from .kernels.splitting import second_order_derivative, splitting_step

BACKENDS = ("auto", "numba", "python")

STEPS = {
    "explicit_rk": explicit_rk_step,
    "implicit_rk": implicit_rk_step,
    "rosenbrock": rosenbrock_step,
    "splitting": splitting_step,
}
DERIVATIVES = {family: first_order_derivative for family in STEPS} | {"splitting": second_order_derivative}


class BackendFallbackWarning(UserWarning):
    """The compiled backend was asked for (``auto``) but could not be used."""


# --- adapters: user conventions -> rhs(t, y, out, args) -> bool --------------------

def _value_adapter(fun, shape, inplace):
    """``fun(t, y, *args)`` (or in place) -> kernel convention."""
    if inplace:
        if shape == ():
            raise ValueError("inplace=True needs an array state; a scalar y0 cannot be written in place")
        if len(shape) == 1:
            def rhs(t, y, out, args):
                fun(t, y, out, *args)
                return True
        else:
            def rhs(t, y, out, args):
                fun(t, y.reshape(shape), out.reshape(shape), *args)
                return True
    elif shape == ():
        def rhs(t, y, out, args):
            return store(out, fun(t, y[0], *args))
    elif len(shape) == 1:
        def rhs(t, y, out, args):
            return store(out, fun(t, y, *args))
    else:
        def rhs(t, y, out, args):
            return store(out, fun(t, y.reshape(shape), *args))
    return rhs


def _force_adapter(accel, shape, inplace):
    """``accel(t, x, v, *args)`` -> ``force(t, u, out, args)`` with ``u = [x, v]``.

    Reshapes are skipped for one-dimensional states: each costs ~20 ns compiled.
    """
    if inplace:
        if shape == ():
            raise ValueError("inplace=True needs an array state; a scalar x0 cannot be written in place")
        if len(shape) == 1:
            def force(t, u, out, args):
                n = out.shape[0]
                accel(t, u[:n], u[n:], out, *args)
                return True
        else:
            def force(t, u, out, args):
                n = out.shape[0]
                accel(t, u[:n].reshape(shape), u[n:].reshape(shape), out.reshape(shape), *args)
                return True
    elif shape == ():
        def force(t, u, out, args):
            return store(out, accel(t, u[0], u[1], *args))
    elif len(shape) == 1:
        def force(t, u, out, args):
            n = out.shape[0]
            return store(out, accel(t, u[:n], u[n:], *args))
    else:
        def force(t, u, out, args):
            n = out.shape[0]
            return store(out, accel(t, u[:n].reshape(shape), u[n:].reshape(shape), *args))
    return force


def _reduced_adapter(force):
    """``u' = [v, a(t, x, v)]``: the first-order view of a second-order problem."""
    def rhs(t, u, out, args):
        n = out.shape[0] // 2
        copy_into(out[:n], u[n:])
        return force(t, u, out[n:], args)
    return rhs


def _jac_adapter(jac, shape):
    """``jac(t, y, *args)`` (or a constant matrix) -> ``jac(t, y, J, args) -> bool``."""
    if not callable(jac):
        constant = np.ascontiguousarray(jac)

        def jac_fixed(t, y, J, args):
            return store(J.reshape(J.size), constant)
        return jac_fixed
    if shape == ():
        def jac_call(t, y, J, args):
            return store(J.reshape(1), jac(t, y[0], *args))
    else:
        def jac_call(t, y, J, args):
            return store(J.reshape(J.size), jac(t, y.reshape(shape), *args))
    return jac_call


def _no_jacobian(t, y, J, args):
    return False


# --- one prepared problem ------------------------------------------------------------

@dataclass
class Kernels:
    """What the driver runs for one problem and method family."""

    backend: str          # "numba" or "python"
    reason: str           # why the Python backend runs, or ""
    drive: object
    step: object
    deriv: object
    rhs: object
    jac: object


def prepare(problem, family, backend, kernel_data, start):
    """Kernels for ``problem`` run by ``family``, and the first derivative.

    ``kernel_data`` is ``(m, P, scratch)``, the method data, dense matrix and
    work arrays: their types select the compiled kernels.  ``start(kernels)``
    makes the run's first evaluation and returns its result, handed back with
    the kernels.  With ``backend="auto"``, functions that Numba cannot
    compile fall back to Python with a :class:`BackendFallbackWarning`
    saying why; ``backend="numba"`` raises instead.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    reason = ""
    if backend != "python":
        try:
            kernels = _compiled(problem, family, kernel_data)
            return kernels, start(kernels)
        except _UserCodeNotCompiled as exc:
            if backend == "numba":
                raise exc.__cause__ from None   # Numba's own error, which names the culprit
            reason = _first_line(exc.__cause__)
            warnings.warn("odekit: Numba could not compile the problem's functions, so the Python "
                          f"backend runs them ({reason})", BackendFallbackWarning,
                          stacklevel=caller_stacklevel())
    rhs, jac = _adapters(*_adapter_key(problem, family), "python", None)
    kernels = Kernels("python", reason, drive, STEPS[family], DERIVATIVES[family], rhs, jac)
    return kernels, start(kernels)


class _UserCodeNotCompiled(Exception):
    """Numba could not compile the problem's functions (the cause says why)."""


def _compiled(problem, family, kernel_data):
    from .kernels import jit

    dtype = kernel_data[2][0].dtype
    try:
        args_type = jit.typeof(problem.args)
        rhs, jac = _adapters(*_adapter_key(problem, family), "numba", jit.rhs_signature(args_type, dtype))
    except Exception as exc:
        if _is_compile_error(exc) or isinstance(exc, ValueError) and "Numba type" in str(exc):
            raise _UserCodeNotCompiled() from exc
        raise
    drive_, step, deriv = _compiled_kernels(family, args_type, dtype, kernel_data)
    return Kernels("numba", "", drive_, step, deriv, rhs, jac)


_KERNELS = {}


def _compiled_kernels(family, args_type, dtype, kernel_data):
    """The driver, stepper and derivative for one family, argument types and dtype.

    The method data and work arrays of a family always have the same types
    for a given dtype, so they need typing only the first time.
    """
    from .kernels import jit

    key = (family, args_type, dtype)
    if key not in _KERNELS:
        m, P, scratch = kernel_data
        deriv_sig, step_sig, drive_sig = jit.kernel_signatures(
            args_type, dtype, jit.typeof(m), jit.typeof(P), jit.typeof(scratch))
        _KERNELS[key] = (jit.kernel(drive, drive_sig), jit.first_class(STEPS[family], step_sig),
                         jit.first_class(DERIVATIVES[family], deriv_sig))
    return _KERNELS[key]


def _adapter_key(problem, family):
    user, jac = (problem.accel, None) if problem.second_order else (problem.fun, problem.jac)
    if jac is not None and not callable(jac):
        # one hashable stand-in per problem, so repeated solves reuse the compiled adapter
        jac = problem.__dict__.setdefault("_constant_jacobian", _Constant(jac))
    return user, jac, family == "splitting", problem.second_order, problem.shape, problem.inplace


class _Constant:
    """A constant Jacobian matrix, hashable by identity for the adapter cache."""

    def __init__(self, value):
        self.value = value


@functools.lru_cache(maxsize=256)
def _adapters(user, jac, splitting, second_order, shape, inplace, backend, signatures):
    """The ``(rhs, jac)`` adapters of one user function, compiled for ``signatures``."""
    if backend == "numba":
        from .kernels.jit import compile_function
        rhs_sig, jac_sig = signatures
    else:
        def compile_function(fn, signature=None):
            return fn
        rhs_sig = jac_sig = None
    if second_order:
        force = _force_adapter(compile_function(user), shape, inplace)
        if splitting:
            rhs = compile_function(force, rhs_sig)
        else:
            rhs = compile_function(_reduced_adapter(compile_function(force)), rhs_sig)
        return rhs, compile_function(_no_jacobian, jac_sig)
    rhs = compile_function(_value_adapter(compile_function(user), shape, inplace), rhs_sig)
    if jac is None:
        return rhs, compile_function(_no_jacobian, jac_sig)
    source = jac.value if isinstance(jac, _Constant) else compile_function(jac)
    return rhs, compile_function(_jac_adapter(source, shape), jac_sig)


def _is_compile_error(exc):
    try:
        from numba.core.errors import NumbaError
    except ImportError:  # pragma: no cover - numba is a dependency
        return True
    return isinstance(exc, NumbaError)


def _first_line(exc):
    """The line of Numba's message that says what went wrong (not which pass failed)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    causes = [line for line in lines if not line.startswith(("Failed in ", "During:", "File ", "- "))]
    return ((causes or lines or [type(exc).__name__])[0])[:200]


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_stacklevel():
    """The ``stacklevel`` that points a warning at the first frame outside odekit.

    Warnings are issued deep in the package, reached through ``solve``,
    ``Integrator`` or the analysis tools at different depths; counting the
    frames is the only way the warning names the user's line every time.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
