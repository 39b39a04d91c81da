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

import atexit
import concurrent.futures
import contextlib
from dataclasses import dataclass
import functools
import os
import sys
import threading
import warnings

import numpy as np
import scipy.sparse

from . import events as _events
from .kernels import borrowed, packing
from .kernels.boris import add_lorentz, load_field
from .kernels.evaluation import store, store_matrix
from .kernels.interface import Functions
from .kernels.layout import SUCCESS
from .kernels.splitting import (
    copy_velocity, load_damping, load_uniform_damping, subtract_damping, subtract_uniform_damping,
)
from .kernels.velocity import store_velocity_block
from .twins import in_place_matrix_twin, in_place_twin

BACKENDS = ("auto", "numba", "python")


SPARSE_REASON = "sparse linear algebra runs on the Python backend"


class BackendFallbackWarning(UserWarning):
    """The compiled backend was asked for (``auto``) but could not be used."""


class CompilationNotice(UserWarning):
    """Numba starts compiling one of odekit's loops: tens of seconds, once per machine.

    A warning, not a print, so that a program can silence it
    (``warnings.simplefilter("ignore", odekit.CompilationNotice)``) and a
    test can count it; Python shows it once per line of the caller.
    ``odekit warmup`` compiles the common loops ahead of time.
    """


# A first solve whose family's loop is neither compiled nor in the disk cache starts on
# the Python backend (see prepare): a short run is done before Numba would have compiled
# the loop.  After this many seconds of Python the loop is compiled and the run goes on
# compiled; the next solve compiles at once.  0 compiles at once, always.
FIRST_RUN_SECONDS = float(os.environ.get("ODEKIT_FIRST_RUN_SECONDS", 1.0))
FIRST_RUN_REASON = ("the compiled loop is not in the cache yet, and a short run ends on Python before Numba "
                    "would have compiled it (`odekit warmup` compiles it ahead of time)")


# --- adapters: user conventions -> rhs(t, W, src, dst, args) -> bool ----------------
# Each reads the state in row ``src`` of the work matrix and writes into row
# ``dst``.  Views of the rows are made here, in the adapter, where they cost
# nothing compiled: the kernels' own loops never make one (see kernels.layout).

def _value_adapter(fun, shape, inplace):
    """``fun(t, y, *args)`` (or in place) -> kernel convention."""
    if inplace:
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


def _twin_adapter(twin, second_order):
    """An in-place twin (see :mod:`odekit.twins`) -> kernel convention.

    The twin writes the function's array into ``W[dst]`` itself -- a force
    into its second half -- and returns False when it does not fit there.
    It reads the state flat, a row's slice, whatever the state's shape (only
    a twin declared by hand is used for a state of more than one dimension).
    The work matrix and the args are borrowed (see
    :func:`odekit.kernels.borrowed`; the kernel keeps them alive, and a twin
    returns nothing of them): compiled, each slice of ``W`` otherwise counted
    a reference in and out, about 10 ns of a velocity_verlet step of the
    outer solar system.
    """
    if second_order:
        def force(t, W, src, dst, args):
            n = W.shape[1] // 2
            W = borrowed(W)
            return twin(W, dst, n, t, W[src, :n], W[src, n:], *borrowed(args))
        return force

    def rhs(t, W, src, dst, args):
        W = borrowed(W)
        return twin(W, dst, 0, t, W[src], *borrowed(args))
    return rhs


def _force_adapter(accel, shape, inplace):
    """``accel(t, x, v, *args)`` -> ``force(t, W, src, dst, args)``: ``a`` into the second half of ``W[dst]``.

    Reshapes are skipped for one-dimensional states, where they change nothing:
    compiled, each still builds a new array view on every evaluation, a cost
    that shows beside a small right-hand side.
    """
    if inplace:
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


def _field_adapter(magnetic, shape):
    """``magnetic(t, x, *args)`` -> ``field(t, W, src, args)``: ``b`` at the positions of row ``src``."""
    if len(shape) == 1:
        def field(t, W, src, args):
            return magnetic(t, W[src, :W.shape[1] // 2], *args)
    else:
        def field(t, W, src, args):
            return magnetic(t, W[src, :W.shape[1] // 2].reshape(shape), *args)
    return field


def _magnetic_force_adapter(force, field, takes_force):
    """The force of a problem with a magnetic field: ``a + v x b`` for the first-order form, or for a
    splitting kernel ``a``, with ``b`` into the work matrix's row for it (its kicks rotate ``v``, see
    :mod:`odekit.kernels.boris`).  False when either result does not fit."""
    if takes_force:
        def force_in_field(t, W, src, dst, args):
            return force(t, W, src, dst, args) and load_field(W, field(t, W, src, args))
        return force_in_field

    def lorentz_force(t, W, src, dst, args):
        return force(t, W, src, dst, args) and add_lorentz(W, dst, src, field(t, W, src, args))
    return lorentz_force


def python_force(problem):
    """The force ``accel`` of a second-order ``problem`` alone, in the kernel convention, as Python."""
    return _force_adapter(problem.accel, problem.shape, problem.inplace)


def _reduced_adapter(force, damping=None, uniform=True):
    """``u' = [v, a(t, x, v) - c v]``: the first-order view of a second-order problem.

    ``damping(*args)`` gives ``c`` (see :func:`_damping_function`), one
    number when ``uniform``, else an array shaped like the positions; None
    for an undamped problem.
    """
    if damping is None:
        def rhs(t, W, src, dst, args):
            copy_velocity(W, dst, 0, src)
            return force(t, W, src, dst, args)
        return rhs
    subtract = subtract_uniform_damping if uniform else subtract_damping

    def damped_rhs(t, W, src, dst, args):
        copy_velocity(W, dst, 0, src)
        ok = force(t, W, src, dst, args)
        subtract(W, dst, src, damping(*args))
        return ok
    return damped_rhs


def _damped_force_adapter(force, damping, uniform):
    """The force of a damped problem for a splitting kernel: ``a``, and ``c`` into the work matrix's row for it.

    The kernel solves the damping's flow itself (see :mod:`odekit.kernels.splitting`).
    """
    load = load_uniform_damping if uniform else load_damping

    def damped_force(t, W, src, dst, args):
        ok = force(t, W, src, dst, args)
        load(W, damping(*args))
        return ok
    return damped_force


def _damping_function(source, uniform):
    """``damping(*args) -> c`` from a :func:`_damping_key`'s ``source``: the problem's function, or its constant."""
    if callable(source):
        return source
    value = source[0] if uniform else np.array(source[1]).reshape(source[0])

    def constant(*args):
        return value
    return constant


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


def _jac_twin_adapter(twin):
    """A Jacobian's in-place matrix twin (see :func:`odekit.twins.in_place_matrix_twin`) -> kernel convention.

    The twin writes ``J`` itself.  ``W``, ``J`` and the args are borrowed, as
    for :func:`_twin_adapter`: the kernel keeps them alive.
    """
    def jac_call(t, W, src, J, args):
        W = borrowed(W)
        return twin(borrowed(J), t, W[src], *borrowed(args))
    return jac_call


def _velocity_jac_adapter(jac, shape):
    """A second-order ``jac(t, x, v, *args) -> (A_x, A_v)`` -> ``jac(t, W, src, J, args)``: ``A_v`` alone.

    For a splitting method's kicks implicit in v, whose Newton matrix holds
    ``da/dv`` in its lower right block (see :mod:`odekit.kernels.velocity`).
    """
    if shape == ():
        def jac_call(t, W, src, J, args):
            return store_velocity_block(J, jac(t, W[src, 0], W[src, 1], *args)[1])
    elif len(shape) == 1:
        def jac_call(t, W, src, J, args):
            n = W.shape[1] // 2
            return store_velocity_block(J, jac(t, W[src, :n], W[src, n:], *args)[1])
    else:
        def jac_call(t, W, src, J, args):
            n = W.shape[1] // 2
            return store_velocity_block(J, jac(t, W[src, :n].reshape(shape), W[src, n:].reshape(shape), *args)[1])
    return jac_call


def _sparse_jac_adapter(jac, shape, second_order, damping=None):
    """The user's Jacobian into a Jacobian object of :mod:`odekit.sparse` (Python backend only).

    A second-order problem's ``damping(*args)`` (see :func:`_reduced_adapter`) is added to ``A_v``.
    """
    if not callable(jac):
        return lambda t, W, src, J, args: J.set(jac)
    if second_order:
        def jac_call(t, W, src, J, args):
            n = W.shape[1] // 2
            pair = jac(t, W[src, :n].reshape(shape), W[src, n:].reshape(shape), *args)
            ok = J.set(tuple(pair) if isinstance(pair, (tuple, list)) else pair)
            if ok and damping is not None:
                c = np.broadcast_to(damping(*args), shape).ravel().astype(J.A_v.dtype)
                J.A_v = J.A_v - scipy.sparse.diags(c, format="csr")
            return ok
        return jac_call
    return lambda t, W, src, J, args: J.set(jac(t, W[src].reshape(shape), *args))


def _no_jacobian(t, W, src, J, args):
    return False


@functools.lru_cache(maxsize=None)
def _no_jacobian_compiled(signature, packed):
    """:func:`_no_jacobian` compiled for ``signature`` (of packed args, with ``packed``): one for every problem
    of a kind, not one per problem (0.15 s of the 0.5 a new problem's first solve took)."""
    return _compiler(True, "" if packed else None)(_no_jacobian, signature)


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
    g: object             # the events' conditions and affects, see odekit.events.adapters
    affect: object
    later: object = None  # the Deferred compilation of a first run started on Python, or None
    packed: bool = False  # the compiled functions take the args packed (see odekit.kernels.packing)

    @property
    def runs_python(self):
        """Whether Python runs inside the loop: the Python backend, or events called as Python (see ``reason``)."""
        return self.backend == "python" or bool(self.reason)

    def args(self, args):
        """``args`` as the kernels take them: packed (see :mod:`odekit.kernels.packing`), or as they are.

        The functions ``rhs``, ``jac``, ``g`` and ``affect`` take either when
        called from Python; the compiled ``drive`` and ``deriv`` need these.
        """
        return packing.pack(args) if self.packed else args

    def functions(self, args):
        """The :class:`~odekit.kernels.interface.Functions` bundle of a run with ``args``."""
        return Functions(self.rhs, self.jac, self.args(args), self.g, self.affect)


def prepare(problem, family, backend, kernel_data, start, events=(), sizes=(), lazy=False):
    """Kernels for ``problem`` run by ``family`` (a :class:`~odekit.families.Family`), and the first derivative.

    ``kernel_data`` is ``(data, scratch)``, the run's
    :class:`~odekit.kernels.interface.MethodData` and work arrays: their
    types select the compiled kernels; a sparse Jacobian
    among them (see :mod:`odekit.sparse`) runs the kernels as Python, with
    the problem's function compiled when Numba can.  ``start(kernels)``
    makes the run's first evaluation and returns its status code, handed
    back with the kernels.  With ``backend="auto"``, functions that Numba
    cannot compile -- whatever Numba raises -- or whose compiled first call
    raises fall back to Python with a :class:`BackendFallbackWarning` naming
    the function and saying why; ``backend="numba"`` raises instead.  Either
    way the Python version is tried first: a defect it shares (it raises, or
    returns something wrong) is reported as that, with no word of Numba.
    ``events`` (:class:`odekit.Event`, whose ``g`` have ``sizes`` components)
    are compiled with the problem's functions, and fall back with them; when
    only they cannot be compiled, ``backend="auto"`` keeps the problem's
    functions and the loop compiled, and the loop calls the events' as Python
    (through Numba's object mode), with a :class:`BackendFallbackWarning`.

    ``lazy`` (a solve's first run): with ``backend="auto"``, when the
    family's loop would have to be compiled -- it is neither compiled in
    this process nor in the disk cache -- the first such run starts on the
    Python backend, nothing compiled, and its kernels carry a
    :class:`Deferred` that compiles them once the run has spent
    ``FIRST_RUN_SECONDS`` on Python (see :meth:`odekit.Integrator._run`).
    Only the first: a program that solves again (an optimizer, a study
    that times its runs) wants the loop compiled from then on.

    ``lazy="background"`` (an :class:`odekit.Integrator` stepped frame by
    frame, as ``odekit serve`` does): the same start on Python, for every
    run made while the loop is not compiled, and the loop compiles at once
    in a thread of its own; the run goes on compiled at its first pause
    after that is done, and never waits for it.
    """
    events, sizes = tuple(events), tuple(sizes)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    sparse = not isinstance(kernel_data[1][1], np.ndarray)
    if sparse and backend == "numba":
        raise ValueError("backend='numba' cannot run sparse linear algebra; use backend='auto' "
                         "or 'python' (a sparse solve outweighs the Python of a step)")
    failure = later = None
    if lazy and backend == "auto" and not sparse and FIRST_RUN_SECONDS > 0:
        later = _deferred(problem, family, kernel_data, events, sizes, lazy == "background")
    if backend != "python" and later is None:
        try:
            kernels = _compiled(problem, family, kernel_data, sparse, events, sizes, backend)
            if kernels.reason and kernels.backend == "numba":    # the events' functions run as Python
                warnings.warn(f"odekit: {kernels.reason}", BackendFallbackWarning, stacklevel=caller_stacklevel())
            return kernels, _first_call(kernels, start, problem, family)
        except NotCompiled as exc:
            failure = exc
    reasons = ([SPARSE_REASON] if sparse else []) + ([failure.reason] if failure else []) + \
        ([FIRST_RUN_REASON] if later else [])
    rhs, jac = _adapters(*_adapter_key(problem, family.second_order, _uses_jac(problem, family)), "python", None,
                         sparse)
    g, affect = _event_adapters(events, sizes, problem.second_order, problem.shape, "python", None)
    kernels = Kernels("python", "; ".join(reasons), family.drive(events), family.deriv, rhs, jac, g, affect,
                      later)
    code = start(kernels)
    if failure is not None and code == SUCCESS:
        if backend == "numba":
            raise failure.error()
        warnings.warn(failure.warning(), BackendFallbackWarning, stacklevel=caller_stacklevel())
    return kernels, code


@dataclass
class Deferred:
    """The compilation a lazy first run put off (see :func:`prepare`): ``compile()`` makes the kernels."""

    key: tuple            # the family's loop, as _KERNELS knows it
    compile: object

    def spend(self, seconds):
        """Count ``seconds`` of Python run; True once the run is to go on compiled: after
        ``FIRST_RUN_SECONDS``, or, while the loop compiles in the background, once that is done."""
        running = _BACKGROUND.get(self.key)
        if running is not None:
            return running.done()
        _SPENT[self.key] = _SPENT.get(self.key, 0.0) + seconds
        return _SPENT[self.key] >= FIRST_RUN_SECONDS

    def in_background(self):
        """Compile in a thread of its own, once per loop: the :class:`~concurrent.futures.Future` of it.

        The thread holds the GIL for Numba's typing, not for LLVM's work, so
        the runs on Python go on meanwhile, slower; its
        :class:`CompilationNotice` goes where warnings go (a server's console).
        """
        with _BACKGROUND_LOCK:
            running = _BACKGROUND.get(self.key)
            if running is None:
                running = _BACKGROUND[self.key] = in_background(self.compile)
        return running


def in_background(work, name="odekit-compile"):
    """Run ``work()``, which compiles, in a daemon thread of its own: the
    :class:`~concurrent.futures.Future` of its result.

    Such work runs one at a time, as Numba compiles anyway (its compiler
    lock), so that a process that exits meanwhile waits for one compilation
    at most: the one under way finishes, the others are dropped (see
    :func:`_finish_background`).
    """
    future = concurrent.futures.Future()
    _UNDER_WAY.add(future)
    threading.Thread(target=_settle, args=(future, work), name=name, daemon=True).start()
    return future


def _settle(future, work):
    try:
        with _ONE_AT_A_TIME:
            if _EXITING.is_set():
                raise RuntimeError("not compiled: the process exited first")
            result = work()
        future.set_result(result)
    except BaseException as exc:    # noqa: BLE001 - the run that switches compiles again, and reports it
        future.set_exception(exc)
    finally:
        _UNDER_WAY.discard(future)


def _finish_background():
    """At exit: let the compilation under way in the background finish, saying so, and drop the others.

    A daemon thread inside LLVM while the interpreter exits crashes the
    process (LLVM's assertions, or a segmentation fault, as the C++ statics
    are destroyed under it: six of six cold test runs of the served page did,
    its warm-up compiling).  The one finished is cached for next time; those
    not begun would have made a Ctrl-C of ``odekit serve`` during its warm-up
    wait minutes.
    """
    _EXITING.set()
    running = list(_UNDER_WAY)
    if running:
        print("odekit: finishing the compilation under way in the background before exiting (stopped "
              "half-way, Numba would crash the process; it is cached for next time)", file=sys.stderr, flush=True)
        concurrent.futures.wait(running)


_SPENT = {}      # seconds of Python run per deferred loop: the first run's, the only one deferred
_BACKGROUND = {}      # deferred loop -> the Future of its compilation in a background thread
_BACKGROUND_LOCK = threading.Lock()
_UNDER_WAY = set()    # the Futures of in_background's work not done yet, waited for at exit
_ONE_AT_A_TIME = threading.Lock()
_EXITING = threading.Event()
atexit.register(_finish_background)


def _deferred(problem, family, kernel_data, events, sizes, background=False):
    """A :class:`Deferred` when ``family``'s loop for this run would be compiled now, else None.

    Nothing is compiled to find out: the loop's signature is typed from the
    signatures its functions will have (:class:`~odekit.kernels.jit.Signature`).
    Where even that fails (``args`` Numba cannot type), None: the compiled
    path reports it as it always has.  With ``background``, the loop starts
    compiling in a thread (:meth:`Deferred.in_background`); a run made while
    it does is deferred too.
    """
    from .kernels import jit

    dtype = kernel_data[1][0].dtype
    if _prepared_key(problem, family, dtype, events, sizes) in _PREPARED:
        return None
    try:
        args = packing.packed(problem.args)
        args_type = jit.typeof(args)
        rhs_sig, jac_sig = jit.rhs_signature(args_type, dtype)
        g = affect = None
        if events:
            g, affect = map(jit.Signature, jit.event_signatures(args_type, dtype))
        fns = Functions(jit.Signature(rhs_sig), jit.Signature(jac_sig), args, g, affect)
        deriv_sig, drive_sig = jit.kernel_signatures(fns, *kernel_data, dtype)
    except Exception:       # noqa: BLE001 - Numba's own errors come again, and are reported, when it compiles
        return None
    key = (family, args_type, dtype, bool(events))
    if key in _KERNELS:
        return None
    later = Deferred(key, functools.partial(_compiled, problem, family, kernel_data, False, events, sizes, "auto"))
    if key in _BACKGROUND:
        return None if _BACKGROUND[key].done() else later
    if (key in _SPENT and not background
            or family.builtin and jit.on_disk(family.drive(events), drive_sig) and jit.on_disk(family.deriv,
                                                                                                deriv_sig)):
        return None
    if background:
        later.in_background()
    return later


def go_compiled(kernels, probe):
    """The compiled kernels that ``kernels.later`` put off, or ``kernels`` on Python when Numba cannot run
    the problem's functions (with the :class:`BackendFallbackWarning` of ``backend="auto"``).

    ``probe(compiled)`` calls the compiled functions once, outside the run,
    as :func:`prepare` makes the first evaluation with them.
    """
    try:
        compiled = kernels.later.compile()
        try:
            probe(compiled)
        except Exception as exc:
            raise NotCompiled("the problem's functions, compiled by Numba, failed at their first evaluation",
                              exc) from exc
    except NotCompiled as exc:
        warnings.warn(exc.warning(), BackendFallbackWarning, stacklevel=caller_stacklevel())
        kernels.later = None
        kernels.reason = exc.reason
        return kernels
    if compiled.reason:                 # the events' functions run as Python
        warnings.warn(f"odekit: {compiled.reason}", BackendFallbackWarning, stacklevel=caller_stacklevel())
    return compiled


class NotCompiled(Exception):
    """Numba could not compile one of the problem's functions, or its compiled first call raised.

    ``summary`` names the function and what failed, ``cause`` is what was
    raised: a :class:`numba.core.errors.NumbaError` or any other exception,
    since Numba's internals let others through (an ``AssertionError`` for
    ``np.array`` of nested lists that mix integers and floats).
    """

    def __init__(self, summary, cause):
        super().__init__(summary)
        self.summary, self.cause = summary, cause

    @property
    def reason(self):
        return f"{self.summary}: {_first_line(self.cause)}"

    def warning(self):
        """The :class:`BackendFallbackWarning` text for ``backend="auto"``."""
        return f"odekit: {self.reason}; the Python backend runs the problem's functions instead"

    def error(self):
        """The exception for ``backend="numba"``: Numba's own, which names the culprit, or a clear one."""
        if _is_compile_error(self.cause):
            self.cause.add_note(f"odekit: {self.summary}; backend='auto' runs it as Python")
            error = self.cause
        else:
            error = RuntimeError(f"{self.reason}; backend='numba' cannot run it: use backend='auto' "
                                 "(which runs it as Python) or 'python'")
            error.__cause__ = self.cause
        error.__suppress_context__ = True
        return error


def _first_call(kernels, start, problem, family):
    """``start(kernels)`` on compiled kernels; NotCompiled if it raises (the Python version is tried next)."""
    try:
        return start(kernels)
    except Exception as exc:
        names = [_described(problem.accel if problem.second_order else problem.fun,
                            "accel" if problem.second_order else "fun")]
        if callable(problem.jac) and _uses_jac(problem, family):
            names.append(_described(problem.jac, "jac"))
        raise NotCompiled(f"{' or '.join(names)}, compiled by Numba, failed at the first evaluation",
                          exc) from exc


def _described(fn, role):
    """``fun 'f'``: the role of a user's function and its name, for messages."""
    name = getattr(fn, "__name__", None)
    if isinstance(fn, _Constant):
        return f"the constant {role}"
    return role if name in (None, role) else f"{role} {name!r}"


def _compiled(problem, family, kernel_data, sparse, events, sizes, backend):
    dtype = kernel_data[1][0].dtype       # of the work matrix
    if sparse:
        # the kernels run as Python, but the problem's function -- a loop over 100,000
        # springs, say -- is still worth compiling
        key = _adapter_key(problem, family.second_order, _uses_jac(problem, family))
        rhs, jac = compiled_adapters(problem, key, dtype, sparse=True)
        g, affect = _event_adapters(events, sizes, problem.second_order, problem.shape, "python", None)
        return Kernels("python", f"{SPARSE_REASON}; the problem's function is compiled",
                       family.drive(events), family.deriv, rhs, jac, g, affect)
    key = _prepared_key(problem, family, dtype, events, sizes)
    kernels = _PREPARED.get(key)
    if kernels is None or (kernels.reason and backend == "numba"):   # strict: raise what "auto" put up with
        kernels = _compile(problem, family, kernel_data, dtype, events, sizes, backend)
        if key is not None:
            if len(_PREPARED) >= 256:
                del _PREPARED[next(iter(_PREPARED))]
            _PREPARED[key] = kernels
    return kernels


_PREPARED = {}   # compiled Kernels by problem, family and kind of args: a repeated solve starts at once


def _prepared_key(problem, family, dtype, events, sizes):
    """The key of a run's compiled kernels in ``_PREPARED``, or None where the kind of args is not simple."""
    fingerprint = _fingerprint(problem.args)
    adapters = _adapter_key(problem, family.second_order, _uses_jac(problem, family))
    return None if fingerprint is None else (adapters, family, fingerprint, dtype, events, sizes)


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


def _compile(problem, family, kernel_data, dtype, events, sizes, backend):
    from .kernels import jit

    kinds = packing.layout(problem.args)       # one loop for every args of at most packing.SLOTS floats and ints
    rhs, jac = compiled_adapters(problem, _adapter_key(problem, family.second_order, _uses_jac(problem, family)),
                                 dtype, kinds=kinds)          # (which says when Numba cannot type the args)
    args = problem.args if kinds is None else packing.pack(problem.args)
    args_type = jit.typeof(args)
    signatures = jit.event_signatures(args_type, dtype)
    reason = ""
    try:
        g, affect = _event_adapters(events, sizes, problem.second_order, problem.shape, "numba", signatures, kinds)
    except NotCompiled as exc:
        if backend == "numba":
            raise
        # the problem's functions stay compiled; the loop calls the events' as Python
        g, affect = _event_adapters(events, sizes, problem.second_order, problem.shape, "python", None)
        g, affect = jit.events_as_python(g, affect, signatures, _compiler(True, kinds))
        reason = (f"{exc.reason}; the compiled loop calls them as Python (about 1.5 us a call, "
                  "and each step calls g a few times)")
    try:
        drive, deriv = _compiled_kernels(family, args_type, dtype, Functions(rhs, jac, args, g, affect),
                                         kernel_data, bool(events))
    except Exception as exc:
        raise NotCompiled(f"Numba could not compile odekit's {family.name} loop for args of type {args_type}",
                          exc) from exc
    return Kernels("numba", reason, drive, deriv, rhs, jac, g, affect, packed=kinds is not None)


def compiled_adapters(problem, key, dtype, sparse=False, kinds=None):
    """The ``(rhs, jac)`` adapters of ``key`` (see :func:`_adapter_key`) compiled by Numba for ``dtype``: for
    the problem's args as they are, or with ``kinds`` (see :func:`odekit.kernels.packing.layout`) for them
    packed.

    Raises
    ------
    NotCompiled
        Naming the function Numba failed on (or the ``args`` it cannot type), whatever it raised.
    """
    from .kernels import jit

    try:
        args_type = jit.typeof(problem.args) if kinds is None else jit.PACKED_ARGS
    except Exception as exc:       # ValueError: cannot determine Numba type of <class ...>
        raise NotCompiled("Numba cannot type the problem's args", exc) from exc
    return _adapters(*key, "numba", jit.rhs_signature(args_type, dtype), sparse, kinds)


_KERNELS = {}


def _compiled_kernels(family, args_type, dtype, fns, kernel_data, events):
    """The driver and derivative for one family, argument types and dtype, with or without ``events``.

    The method data and work arrays of a family always have the same types
    for a given dtype, so they need typing only the first time.
    """
    from .kernels import jit

    key = (family, args_type, dtype, events)
    if key not in _KERNELS:
        data, scratch = kernel_data
        deriv_sig, drive_sig = jit.kernel_signatures(fns, data, scratch, dtype)
        _KERNELS[key] = (_loop(family, args_type, dtype, drive_sig, events),
                         jit.kernel(family.deriv, deriv_sig, family.builtin))
    return _KERNELS[key]


def _loop(family, args_type, dtype, drive_sig, events, plain=False):
    """``family``'s loop (with ``events``, or its plain one) compiled for ``drive_sig``, or loaded from the disk
    cache; announced when compiled."""
    from .kernels import jit

    drive = family.drive(events, plain)
    if not (family.builtin and jit.on_disk(drive, drive_sig)):
        warnings.warn(_compiling_notice(family, args_type, dtype, events, plain), CompilationNotice,
                      stacklevel=caller_stacklevel())
    return jit.kernel(drive, drive_sig, family.builtin)


def plain_drive(family, fns, kernel_data, dtype):
    """``family``'s plain loop (see :func:`odekit.kernels.driver.make_drive`) for runs whose functions are
    ``fns``, which a repeated solve's call runs (see :mod:`odekit.rerun`): compiled, or loaded from the disk
    cache, once per kind of args and dtype, and announced as the family's loop is."""
    from .kernels import jit

    args_type = jit.typeof(fns.args)            # (packed args are typed as packed: jit.PACKED_ARGS)
    key = (family, args_type, dtype, "plain")
    if key not in _KERNELS:
        _, drive_sig = jit.kernel_signatures(fns, *kernel_data, dtype)
        _KERNELS[key] = _loop(family, args_type, dtype, drive_sig, False, plain=True)
    return _KERNELS[key]


def quick_call(kernels, bundles, family):
    """``call()``: ``family``'s compiled loop on a run's ``bundles`` in one argument (see
    :func:`odekit.kernels.jit.bundled`), for :meth:`odekit.Integrator.step`; announced when compiled."""
    from .kernels import jit

    def announce():
        warnings.warn(f"odekit: compiling the one-argument call of the {family.title} loop ({family.name}) that "
                      "Integrator.step() makes with Numba: a second or two, once per machine", CompilationNotice,
                      stacklevel=caller_stacklevel())
    return jit.bundled(kernels.drive, bundles, family.builtin, announce)


def _compiling_notice(family, args_type, dtype, events, plain=False):
    """The :class:`CompilationNotice` of ``family``'s loop (its plain one, see :func:`plain_drive`): what is
    compiled, for what, and how often."""
    from .kernels import jit

    kind = (f"args of at most {packing.SLOTS} floats and ints" if args_type == jit.PACKED_ARGS
            else f"args {args_type}")
    variant = ", with events" if events else ", plain: for repeated solves" if plain else ""
    what = (f"odekit: compiling the {family.title} loop ({family.name}{variant}) for {kind} and {dtype} states "
            "with Numba: ")
    if not family.builtin:
        return what + "tens of seconds, in every process (a family outside odekit is not kept in the cache)"
    return what + ("tens of seconds, once per machine (kept in Numba's cache; "
                   "`odekit warmup` compiles the common loops ahead of time)")


def _uses_jac(problem, family):
    """Whether runs of ``family`` on ``problem`` may call its ``jac``: implicit ones, and splitting
    methods on velocity-dependent forces (Newton's method for their kicks implicit in v)."""
    return family.implicit or (family.implicit_kicks and problem.second_order and problem.velocity_dependent)


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
    return (user, jac, takes_force, problem.second_order, problem.shape, problem.inplace, _damping_key(problem),
            getattr(problem, "magnetic", None))


def _damping_key(problem):
    """``(source, uniform)`` of a damped problem (hashable), or None.

    ``source`` is its function of the args, or its constant -- ``(c,)``, or
    ``(shape, values)`` for one per position -- which the compiled adapter
    holds (a function of the args compiles once for every value).
    ``uniform``: one number for every component.
    """
    c = getattr(problem, "damping", None)
    if c is None:
        return None
    uniform = np.ndim(c(*problem.args) if callable(c) else c) == 0
    if callable(c):
        return c, uniform
    return ((float(c),) if uniform else (c.shape, tuple(c.ravel().tolist()))), uniform


class _Constant:
    """A constant Jacobian matrix, hashable by identity for the adapter cache."""

    def __init__(self, value):
        self.value = value


@functools.lru_cache(maxsize=256)
def _adapters(user, jac, takes_force, second_order, shape, inplace, damping, magnetic, backend, signatures,
              sparse=False, kinds=None):
    """The ``(rhs, jac)`` adapters of one user function, compiled for ``signatures`` (of packed args, of the
    layout ``kinds``, when it is given; see :func:`_compiler`).

    ``sparse`` (the kernels run as Python) fills the Jacobian objects of
    :mod:`odekit.sparse` instead of a dense matrix, with the user's ``jac``
    called as Python.  ``damping``: see :func:`_damping_key`; ``magnetic``: the
    problem's field function, or None.
    """
    compiled = backend == "numba"
    compile_function = _compiler(compiled, kinds)
    rhs_sig, jac_sig = signatures if compiled else (None, None)
    names = _described(user, "accel" if second_order else "fun")
    if magnetic is not None:
        names += " or " + _described(magnetic, "magnetic")
    with _compiling(names, compiled):
        if second_order:
            c_of = None if damping is None else compile_function(_damping_function(*damping))
            uniform = damping is None or damping[1]
            field = None if magnetic is None else compile_function(_field_adapter(compile_function(magnetic), shape))

            def adapt(force):
                if field is not None:
                    force = _magnetic_force_adapter(compile_function(force), field, takes_force)
                if takes_force:
                    return compile_function(force if c_of is None else
                                            _damped_force_adapter(compile_function(force), c_of, uniform), rhs_sig)
                return compile_function(_reduced_adapter(compile_function(force), c_of, uniform), rhs_sig)
        else:
            def adapt(rhs):
                return compile_function(rhs, rhs_sig)
        twin = in_place_twin(user, second_order, len(shape) == 1) if compiled and not inplace else None
        rhs = _twin_first(adapt, twin, lambda inner: _twin_adapter(inner, second_order), compile_function)
        if rhs is None:
            user_function = compile_function(user)
            rhs = adapt(_force_adapter(user_function, shape, inplace) if second_order else
                        _value_adapter(user_function, shape, inplace))
    if jac is None or (second_order and not sparse and not takes_force):
        return rhs, _no_jacobian_compiled(jac_sig, kinds is not None) if compiled else _no_jacobian
    if sparse:
        return rhs, _sparse_jac_adapter(jac.value if isinstance(jac, _Constant) else jac, shape, second_order,
                                        None if damping is None else _damping_function(*damping))
    with _compiling(_described(jac, "jac"), compiled):
        if second_order:            # a splitting method's: da/dv for its kicks implicit in v
            return rhs, compile_function(_velocity_jac_adapter(compile_function(jac), shape), jac_sig)
        twin = in_place_matrix_twin(jac) if compiled and callable(jac) and len(shape) == 1 else None
        found = _twin_first(lambda fn: compile_function(fn, jac_sig), twin, _jac_twin_adapter, compile_function)
        if found is not None:
            return rhs, found
        source = jac.value if isinstance(jac, _Constant) else compile_function(jac)
        return rhs, compile_function(_jac_adapter(source, shape), jac_sig)


def _twin_first(adapt, twin, adapter, compile_function):
    """``adapt(adapter(twin))``, the user's in-place ``twin`` compiled, when it compiles, marked
    ``writes_in_place``; else None.

    Numba refuses to compile a twin whose elements ``store`` would refuse
    (complex ones for a real state, arrays), or whose vector expression
    took an array among the args for a number: the user's function then
    takes the ordinary path, which reports what is wrong as before.
    """
    if twin is None:
        return None
    try:
        found = adapt(adapter(compile_function(twin, inline=True)))
    except Exception:
        return None
    found.writes_in_place = True
    return found


@functools.lru_cache(maxsize=256)
def _event_adapters(events, sizes, second_order, shape, backend, signatures, kinds=None):
    """The ``(g, affect)`` of ``events`` in the kernel convention, compiled for ``signatures`` on Numba (of
    packed args of the layout ``kinds``, when it is given)."""
    if not events:
        return None, None                # see odekit.kernels.interface.RunState
    compiled = backend == "numba"
    compile_function = _compiler(compiled, kinds)
    with _compiling(_event_names(events), compiled):
        g, affect = _events.adapters(events, sizes, second_order, shape, compile_function)
        if not compiled:
            return g, affect
        g_sig, affect_sig = signatures
        return compile_function(g, g_sig), compile_function(affect, affect_sig)


def _compiler(compiled, kinds=None):
    """How the adapters prepare a function: Numba's (see :func:`odekit.kernels.jit.compile_function`) or as it is.

    With ``kinds``, a function compiled for a signature -- an adapter the loop calls -- is compiled as a
    function of packed args of that layout (:func:`odekit.kernels.jit.unpacking_function`), and only so:
    compiled first for the args as they are, then again inside the unpacking call, a new problem's first
    solve with a cached loop took 0.70-0.75 s against 0.49-0.59 (1.52-1.64 s against 1.21-1.24 with an
    event).
    """
    if not compiled:
        return _as_python
    from .kernels.jit import compile_function, unpacking_function
    if kinds is None:
        return compile_function

    def compile_packed(fn, signature=None, **options):
        return compile_function(fn, **options) if signature is None else unpacking_function(fn, signature, kinds)
    return compile_packed


def _as_python(fn, signature=None, inline=False):
    return fn


def _event_names(events):
    """``g or affect of event 'hit_floor'``: the event functions, for messages."""
    return "g or affect of event " + ", ".join(repr(e.name) for e in events)


@contextlib.contextmanager
def _compiling(name, compiled):
    """Turn whatever Numba raises while compiling the user's function ``name`` into NotCompiled."""
    try:
        yield
    except Exception as exc:
        if not compiled:
            raise
        # Numba's own errors say what it could not compile; anything else is its internals failing
        failed = "could not compile" if _is_compile_error(exc) else "failed while compiling"
        raise NotCompiled(f"Numba {failed} {name}", exc) from exc


def _is_compile_error(exc):
    try:
        from numba.core.errors import NumbaError
    except ImportError:  # pragma: no cover - numba is a dependency
        return True
    return isinstance(exc, NumbaError)


def _first_line(exc):
    """The line of Numba's message that says what went wrong (not which pass failed).

    Other exceptions are named by their class too: Numba's internals raise
    bare ones, an ``AssertionError`` without a message among them.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    causes = [line for line in lines if not line.startswith(("Failed in ", "During:", "File ", "- "))]
    line = (causes or lines or [""])[0][:200]
    if _is_compile_error(exc):
        return line or type(exc).__name__
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


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
