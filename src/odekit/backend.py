"""Backends: the same kernels, run as plain Python or compiled by Numba.

The user's functions reach the kernels through *adapters* with the kernel
calling convention ``rhs(t, W, src, dst, args) -> bool`` (see
:mod:`odekit.kernels.evaluation`).  The adapters are written once, as
closures; the compiled backend compiles the user's function and the same
closure with Numba, and hands them to the family's compiled loop as
first-class functions, so the loop itself is compiled once per family and
kind of ``args`` (and kept on disk).  Adapters are memoised per function
and shape: reusing one is what makes a second solve of the same problem
start instantly.
"""

from dataclasses import dataclass
import functools
import os
import sys
import warnings

import numpy as np

from .kernels.evaluation import store, store_matrix
from .kernels.interface import Functions
from .kernels.splitting import copy_velocity

BACKENDS = ("auto", "numba", "python")


SPARSE_REASON = "sparse linear algebra runs on the Python backend"


class BackendFallbackWarning(UserWarning):
    """The compiled backend was asked for (``auto``) but could not be used."""


# --- adapters: user conventions -> rhs(t, W, src, dst, args) -> bool ----------------
# Each reads the state in row ``src`` of the work matrix and writes into row
# ``dst``.  Views of the rows are made here, in the adapter, where they cost
# nothing compiled: the kernels' own loops never make one (see kernels.layout).

def _value_adapter(fun, shape, inplace):
    """``fun(t, y, *args)`` (or in place) -> kernel convention."""
    if inplace:
        if shape == ():
            raise ValueError("inplace=True needs an array state; a scalar y0 cannot be written in place")
        if len(shape) == 1:
            def rhs(t, W, src, dst, args):
                fun(t, W[src], W[dst], *args)
                return True
        else:
            def rhs(t, W, src, dst, args):
                fun(t, W[src].reshape(shape), W[dst].reshape(shape), *args)
                return True
    elif shape == ():
        def rhs(t, W, src, dst, args):
            return store(W, dst, 0, fun(t, W[src, 0], *args))
    elif len(shape) == 1:
        def rhs(t, W, src, dst, args):
            return store(W, dst, 0, fun(t, W[src], *args))
    else:
        def rhs(t, W, src, dst, args):
            return store(W, dst, 0, fun(t, W[src].reshape(shape), *args))
    return rhs


def _force_adapter(accel, shape, inplace):
    """``accel(t, x, v, *args)`` -> ``force(t, W, src, dst, args)``: ``a`` into the second half of ``W[dst]``.

    Reshapes are skipped for one-dimensional states, where they change nothing:
    compiled, each still builds a new array view on every evaluation, a cost
    that shows beside a small right-hand side.
    """
    if inplace:
        if shape == ():
            raise ValueError("inplace=True needs an array state; a scalar x0 cannot be written in place")
        if len(shape) == 1:
            def force(t, W, src, dst, args):
                n = W.shape[1] // 2
                accel(t, W[src, :n], W[src, n:], W[dst, n:], *args)
                return True
        else:
            def force(t, W, src, dst, args):
                n = W.shape[1] // 2
                accel(t, W[src, :n].reshape(shape), W[src, n:].reshape(shape), W[dst, n:].reshape(shape), *args)
                return True
    elif shape == ():
        def force(t, W, src, dst, args):
            return store(W, dst, 1, accel(t, W[src, 0], W[src, 1], *args))
    elif len(shape) == 1:
        def force(t, W, src, dst, args):
            n = W.shape[1] // 2
            return store(W, dst, n, accel(t, W[src, :n], W[src, n:], *args))
    else:
        def force(t, W, src, dst, args):
            n = W.shape[1] // 2
            return store(W, dst, n, accel(t, W[src, :n].reshape(shape), W[src, n:].reshape(shape), *args))
    return force


def _reduced_adapter(force):
    """``u' = [v, a(t, x, v)]``: the first-order view of a second-order problem."""
    def rhs(t, W, src, dst, args):
        copy_velocity(W, dst, 0, src)
        return force(t, W, src, dst, args)
    return rhs


def _jac_adapter(jac, shape):
    """``jac(t, y, *args)`` (or a constant matrix) -> ``jac(t, W, src, J, args) -> bool``."""
    if not callable(jac):
        constant = np.ascontiguousarray(jac)

        def jac_fixed(t, W, src, J, args):
            return store_matrix(J, constant)
        return jac_fixed
    if shape == ():
        def jac_call(t, W, src, J, args):
            return store_matrix(J, jac(t, W[src, 0], *args))
    else:
        def jac_call(t, W, src, J, args):
            return store_matrix(J, jac(t, W[src].reshape(shape), *args))
    return jac_call


def _sparse_jac_adapter(jac, shape, second_order):
    """The user's Jacobian into a Jacobian object of :mod:`odekit.sparse` (Python backend only)."""
    if not callable(jac):
        return lambda t, W, src, J, args: J.set(jac)
    if second_order:
        def jac_call(t, W, src, J, args):
            n = W.shape[1] // 2
            pair = jac(t, W[src, :n].reshape(shape), W[src, n:].reshape(shape), *args)
            return J.set(tuple(pair) if isinstance(pair, (tuple, list)) else pair)
        return jac_call
    return lambda t, W, src, J, args: J.set(jac(t, W[src].reshape(shape), *args))


def _no_jacobian(t, W, src, J, args):
    return False


# --- one prepared problem ------------------------------------------------------------

@dataclass
class Kernels:
    """What the driver runs for one problem and method family."""

    backend: str          # "numba" or "python"
    reason: str           # why the Python backend runs, or ""
    drive: object         # the family's integration loop
    deriv: object         # f at one row, checked and counted: deriv(rhs, args, t, W, src, dst, ist, fs)
    rhs: object
    jac: object

    def functions(self, args):
        """The :class:`~odekit.kernels.interface.Functions` bundle of a run with ``args``."""
        return Functions(self.rhs, self.jac, args)


def prepare(problem, family, backend, kernel_data, start):
    """Kernels for ``problem`` run by ``family`` (a :class:`~odekit.families.Family`), and the first derivative.

    ``kernel_data`` is ``(data, scratch)``, the run's
    :class:`~odekit.kernels.interface.MethodData` and work arrays: their
    types select the compiled kernels; a sparse Jacobian
    among them (see :mod:`odekit.sparse`) runs the kernels as Python, with
    the problem's function compiled when Numba can.  ``start(kernels)``
    makes the run's first evaluation and returns its result, handed back with
    the kernels.  With ``backend="auto"``, functions that Numba cannot
    compile fall back to Python with a :class:`BackendFallbackWarning`
    saying why; ``backend="numba"`` raises instead.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    reason = ""
    sparse = not isinstance(kernel_data[1][1], np.ndarray)
    if sparse:
        if backend == "numba":
            raise ValueError("backend='numba' cannot run sparse linear algebra; use backend='auto' "
                             "or 'python' (a sparse solve outweighs the Python of a step)")
        reason = SPARSE_REASON
        if backend == "auto":
            # the kernels run as Python, but the problem's function -- a loop over 100,000
            # springs, say -- is still worth compiling
            try:
                key = _adapter_key(problem, family.second_order, family.implicit)
                rhs, jac = _adapters(*key, "lazy", None, True)
                kernels = Kernels("python", f"{reason}; the problem's function is compiled",
                                  family.drive, family.deriv, rhs, jac)
                return kernels, start(kernels)
            except Exception as exc:
                if not _is_compile_error(exc):
                    raise
                reason = f"{reason}; {_first_line(exc)}"
                warnings.warn("odekit: Numba could not compile the problem's functions, so they run as "
                              f"Python ({_first_line(exc)})", BackendFallbackWarning,
                              stacklevel=caller_stacklevel())
    elif backend != "python":
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
    rhs, jac = _adapters(*_adapter_key(problem, family.second_order, family.implicit), "python", None, sparse)
    kernels = Kernels("python", reason, family.drive, family.deriv, rhs, jac)
    return kernels, start(kernels)


class _UserCodeNotCompiled(Exception):
    """Numba could not compile the problem's functions (the cause says why)."""


def _compiled(problem, family, kernel_data):
    dtype = kernel_data[1][0].dtype       # of the work matrix
    fingerprint = _fingerprint(problem.args)
    adapters = _adapter_key(problem, family.second_order, family.implicit)
    key = None if fingerprint is None else (adapters, family, fingerprint, dtype)
    kernels = _PREPARED.get(key)
    if kernels is None:
        kernels = _compile(problem, family, kernel_data, dtype)
        if key is not None:
            if len(_PREPARED) >= 256:
                del _PREPARED[next(iter(_PREPARED))]
            _PREPARED[key] = kernels
    return kernels


_PREPARED = {}   # compiled Kernels by problem, family and kind of args: a repeated solve starts at once


def _fingerprint(args):
    """What Numba's type of ``args`` depends on, cheaply, or None where that is not simple."""
    parts = []
    for a in args:
        if type(a) in (float, bool, complex) or (type(a) is int and a.bit_length() < 63):
            parts.append(type(a))
        elif type(a) is np.ndarray:
            flags = a.flags
            parts.append((a.dtype.str, a.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable,
                          flags.aligned))
        else:
            return None
    return tuple(parts)


def _compile(problem, family, kernel_data, dtype):
    from .kernels import jit

    try:
        args_type = jit.typeof(problem.args)
        rhs, jac = _adapters(*_adapter_key(problem, family.second_order, family.implicit), "numba",
                             jit.rhs_signature(args_type, dtype))
    except Exception as exc:
        if _is_compile_error(exc) or isinstance(exc, ValueError) and "Numba type" in str(exc):
            raise _UserCodeNotCompiled() from exc
        raise
    drive, deriv = _compiled_kernels(family, args_type, dtype, Functions(rhs, jac, problem.args), kernel_data)
    return Kernels("numba", "", drive, deriv, rhs, jac)


_KERNELS = {}


def _compiled_kernels(family, args_type, dtype, fns, kernel_data):
    """The driver and derivative for one family, argument types and dtype.

    The method data and work arrays of a family always have the same types
    for a given dtype, so they need typing only the first time.
    """
    from .kernels import jit

    key = (family, args_type, dtype)
    if key not in _KERNELS:
        data, scratch = kernel_data
        deriv_sig, drive_sig = jit.kernel_signatures(fns, data, scratch, dtype)
        _KERNELS[key] = (jit.kernel(family.drive, drive_sig, family.builtin),
                         jit.kernel(family.deriv, deriv_sig, family.builtin))
    return _KERNELS[key]


def _adapter_key(problem, takes_force, needs_jac=True):
    """What the adapters depend on.

    ``takes_force``: the family integrates the force itself (splitting);
    ``needs_jac``: it uses the Jacobian (implicit), so the user's ``jac`` is
    compiled -- and only then, since an explicit run never calls it.
    """
    user, jac = (problem.accel if problem.second_order else problem.fun), (problem.jac if needs_jac else None)
    if jac is not None and not callable(jac):
        # one hashable stand-in per problem, so repeated solves reuse the compiled adapter
        jac = problem.__dict__.setdefault("_constant_jacobian", _Constant(jac))
    return user, jac, takes_force, problem.second_order, problem.shape, problem.inplace


class _Constant:
    """A constant Jacobian matrix, hashable by identity for the adapter cache."""

    def __init__(self, value):
        self.value = value


@functools.lru_cache(maxsize=256)
def _adapters(user, jac, takes_force, second_order, shape, inplace, backend, signatures, sparse=False):
    """The ``(rhs, jac)`` adapters of one user function, compiled for ``signatures``.

    ``sparse`` (the kernels run as Python) fills the Jacobian objects of
    :mod:`odekit.sparse` instead of a dense matrix, with the user's ``jac``
    called as Python.
    """
    if backend in ("numba", "lazy"):       # lazy: compiled at the first call, for calls from Python
        from .kernels.jit import compile_function
        rhs_sig, jac_sig = signatures or (None, None)
    else:
        def compile_function(fn, signature=None):
            return fn
        rhs_sig = jac_sig = None
    if second_order:
        force = _force_adapter(compile_function(user), shape, inplace)
        if takes_force:
            rhs = compile_function(force, rhs_sig)
        else:
            rhs = compile_function(_reduced_adapter(compile_function(force)), rhs_sig)
    else:
        rhs = compile_function(_value_adapter(compile_function(user), shape, inplace), rhs_sig)
    if jac is None or (second_order and not sparse):
        return rhs, compile_function(_no_jacobian, jac_sig)
    if sparse:
        return rhs, _sparse_jac_adapter(jac.value if isinstance(jac, _Constant) else jac, shape, second_order)
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
