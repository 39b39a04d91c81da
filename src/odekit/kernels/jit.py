"""Compile the kernels with Numba: the only module that imports it.

Importing this module registers every ``@jitable`` helper with Numba,
swaps each ``@compiled_as`` primitive for its loop version inside compiled
code, and gives :func:`~odekit.kernels.borrowed` and :func:`~odekit.kernels.on_stack`
their compiled meanings.

The user's functions reach the kernels as *first-class functions*
(``numba.types.FunctionType``): the family's loop receives the right-hand
side and the Jacobian as typed function pointers, and inlines its own
stepper.  So each loop is compiled once per *signature* (the types of
``args``, the state's dtype, the method family) -- not once per user
function -- and is kept in Numba's on-disk cache between processes.  A new
right-hand side costs only the compilation of itself and its small adapter.

The cache is stamped with a hash of every source compiled into a kernel
(this package): Numba alone checks only the
file that defines a cached function, not the helpers compiled into it, and
would serve stale code after an edit to a helper.  It is kept in a folder
per user named by odekit's version and that stamp (:func:`cache_folder`),
not next to the package: a reinstall of the same sources finds it again.

All code is compiled with ``error_model="numpy"``: a division by zero gives
``inf`` or ``nan`` (which the kernels detect and report with the time it
happened) instead of raising from a compiled loop -- and it is faster.
"""

import contextlib
import functools
import hashlib
import os
import pathlib
import secrets
import shutil
import sys
import warnings

try:
    import fcntl
except ImportError:       # pragma: no cover - Windows: each process compiles for itself
    fcntl = None

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import caching, cgutils, serialize
from numba.core.bytecode import FunctionIdentity
from numba.core.errors import NumbaIRAssumptionWarning
from numba.core.imputils import impl_ret_borrowed
from numba.core.registry import CPUDispatcher
from numba.core.types.function_type import CompileResultWAP
from numba.core.typing.typeof import typeof_impl
from numba.experimental import function_type, structref
from numba.extending import intrinsic, overload, register_jitable
from numba.misc.appdirs import AppDirs
from numba.np.arrayobj import populate_array

from . import COMPILED_AS, JITABLE, borrowed, held, on_stack, packing
from .. import families  # noqa: F401  (imports every family's stepper, so their decorators have run)
from .. import kernels as kernels_package

OPTIONS = {"error_model": "numpy"}

# How each helper is compiled: see the package's docstring.
def _inline(inline):
    return "always" if inline else "never"


def _options(inline, cold):
    """Numba's options for a helper: one compiled on its own is inlined by LLVM unless cold."""
    return OPTIONS if inline or cold else dict(OPTIONS, forceinline=True)


def _register(fn, inline, cold):
    register_jitable(inline=_inline(inline), **_options(inline, cold))(fn)


for _fn, _in, _cold in JITABLE:
    _register(_fn, _in, _cold)
kernels_package._registered = _register     # helpers marked from now on (a user's family) too


def _overload_with(loop_version):
    def typer(*args):
        return loop_version
    return typer


for _fn, _loop, _in, _cold in COMPILED_AS:
    overload(_fn, jit_options=_options(_in, _cold), strict=False, inline=_inline(_in))(_overload_with(_loop))


def _each_array(context, builder, typ, value, edit):
    """``value`` with ``edit(array)`` (Numba's structure of an array, edited in place) done to each of its arrays,
    in tuples too."""
    if isinstance(typ, types.Array):
        array = context.make_array(typ)(context, builder, value=value)
        edit(array)
        return array._getvalue()
    if isinstance(typ, types.BaseTuple):
        items = [_each_array(context, builder, t, builder.extract_value(value, i), edit) for i, t in enumerate(typ)]
        return context.make_tuple(builder, typ, items)
    return value


def _without_count(context, builder, typ, value):
    """``value`` with the reference counts of its arrays cut off (null meminfo and parent)."""
    def cut(array):
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
    return _each_array(context, builder, typ, value, cut)


@intrinsic
def _borrowed(typingctx, value):
    def codegen(context, builder, signature, args):
        return _without_count(context, builder, signature.args[0], args[0])
    return value(value), codegen


@overload(borrowed, inline="always")
def _overload_borrowed(value):
    return lambda value: _borrowed(value)


def _opaque(builder, value):
    """``value`` through an empty inline assembly: the same bits, where LLVM no longer sees where they came from."""
    return builder.asm(ir.FunctionType(value.type, [value.type]), "", "=r,0", [value], False)


def _held_value(context, builder, typ, value):
    """``value`` with its arrays' data pointers, shapes and strides each through :func:`_opaque`."""
    def hide(array):
        array.data = _opaque(builder, array.data)
        for field in ("shape", "strides"):
            items = getattr(array, field)
            for i in range(items.type.count):
                items = builder.insert_value(items, _opaque(builder, builder.extract_value(items, i)), i)
            setattr(array, field, items)
    return _each_array(context, builder, typ, value, hide)


@intrinsic
def _held(typingctx, value):
    def codegen(context, builder, signature, args):
        # a new reference, as a function returning its argument gives (none to take for a borrowed array)
        return impl_ret_borrowed(context, builder, signature.return_type,
                                 _held_value(context, builder, signature.args[0], args[0]))
    return value(value), codegen


@overload(held, inline="always")
def _overload_held(value):
    return lambda value: _held(value)


@intrinsic
def _on_stack(typingctx, size, like):
    if not isinstance(size, types.IntegerLiteral):
        return None
    dtype = like.dtype if isinstance(like, types.Array) else types.float64

    def codegen(context, builder, signature, args):
        # alloca_once puts the space in the function's entry block: one frame slot, however often it runs
        item = context.get_value_type(dtype)
        data = cgutils.alloca_once(builder, item, size=size.literal_value)
        array = context.make_array(signature.return_type)(context, builder)
        intp = context.get_value_type(types.intp)
        width = intp(context.get_abi_sizeof(item))
        populate_array(array, data=data, shape=[intp(size.literal_value)], strides=[width], itemsize=width,
                       meminfo=None)
        return array._getvalue()
    return types.Array(dtype, 1, "C")(size, like), codegen


@overload(on_stack, inline="always")       # in the caller's IR: the space must be in the caller's frame
def _overload_on_stack(size, like=None):
    if not isinstance(size, types.IntegerLiteral):
        return None                         # Numba tries again with the literal
    n = size.literal_value
    return lambda size, like=None: _on_stack(n, like)


# --- the on-disk cache, stamped with every source file of odekit ------------------------

PACKAGE = pathlib.Path(__file__).resolve().parent.parent
COMPILED_SOURCES = sorted(pathlib.Path(__file__).resolve().parent.glob("*.py"))


@functools.lru_cache(maxsize=1)
def source_stamp():
    """A hash of the sources compiled into kernels (and Numba's version)."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in COMPILED_SOURCES:
        digest.update(path.relative_to(PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


KEPT = 8          # cache folders kept, the most recently used: one per version and edit of the kernels


@functools.lru_cache(maxsize=1)
def cache_folder():
    """Where the kernels are cached: ``odekit-VERSION-STAMP`` in ``NUMBA_CACHE_DIR`` when it is set, else
    in the user's cache folder (``~/.cache/odekit`` on Linux).

    Marked as used now; the folders of other versions and sources beyond
    the :data:`KEPT` most recently used are removed (a process still using
    one compiles again what it misses, Numba re-creates the folder).
    """
    root = pathlib.Path(numba.config.CACHE_DIR or AppDirs(appname="odekit", appauthor=False).user_cache_dir)
    version = getattr(sys.modules.get("odekit"), "__version__", "0")
    folder = root / f"odekit-{version}-{source_stamp()[:16]}"
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        others = sorted((f for f in root.glob("odekit-*") if f != folder), key=lambda f: f.stat().st_mtime)
        for old in others[:max(0, len(others) - (KEPT - 1))]:
            shutil.rmtree(old, ignore_errors=True)
    return folder


class _UserCacheLocator(caching.InTreeCacheLocator):
    """Numba's cache of a kernel source in :func:`cache_folder`, at its path inside the package."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = str(cache_folder() / pathlib.Path(py_file).resolve().parent.relative_to(PACKAGE))


def _stamped(locator):
    class Stamped(locator):
        @classmethod
        def from_function(cls, py_func, py_file):
            if not pathlib.Path(py_file).resolve().is_relative_to(PACKAGE):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return source_stamp()

    Stamped.__name__ = f"Odekit{locator.__name__}"
    return Stamped


try:
    # the package's own __pycache__ when the user's cache folder cannot be written
    _LOCATORS = [_stamped(_UserCacheLocator), _stamped(caching.InTreeCacheLocator)]
    caching.CacheImpl._locator_classes[:0] = _LOCATORS
    CACHE = True
except AttributeError:  # pragma: no cover - a Numba without these internals: compile every run
    CACHE = False


class _RandomIds:
    """Numba's ids of the functions it compiles (``FunctionIdentity._unique_ids``), drawn at random.

    A compiled function's symbol is its name, its argument types and this id
    -- Numba's count of the functions compiled so far in the process.  Two
    processes that compile the same steps in the same order count alike, so
    two closures of one source (the loop of every family is one) compiled in
    two of them got one symbol for two bodies; a process that loaded both
    from the cache resolved the symbol to the one loaded last, and a repeated
    dp54 solve, which calls its loop by address, ran backward Euler's
    (its Jacobians counted; Numba issue 10486).  64 random bits make the
    symbols of two compilations differ.
    """

    def __iter__(self):
        return self

    def __next__(self):
        return secrets.randbits(64)


FunctionIdentity._unique_ids = _RandomIds()


# --- first-class functions that cost nothing to pass ---------------------------------------
# Passing a dispatcher from Python as a first-class function makes Numba look up
# its compile result and two machine addresses on every call, for every function
# passed: far more than the steps of a frame cost, too much for an Integrator
# stepped once per frame.  odekit's own functions each have a single signature,
# so their addresses are computed once, in a FirstClass object, and a table answers
# Numba's two questions (the call-convention and the C-wrapper address).
# Anything not in the table goes to Numba's own lookup unchanged.

_OWN = {}


class FirstClass(CompileResultWAP):
    """A function compiled for one signature, passed as a first-class function.

    Calls from compiled code go straight to its Numba entry point (the same
    fast path a dispatcher gets); calls from Python run its compiled wrapper.
    """

    def __init__(self, dispatcher):
        (signature,) = dispatcher.signatures
        cres = dispatcher.overloads[signature]
        super().__init__(cres)
        self.dispatcher = dispatcher
        self.jit_address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
        self.numba_type = types.FunctionType(cres.signature)
        _OWN[id(self)] = self          # kept alive, so the id is never reused
        # read by the unboxing below, as plain attributes of the object (Python ints)
        self.odekit_wrapper_address, self.odekit_jit_address = self.address, self.jit_address

    def __call__(self, *args):
        return self.dispatcher(*args)


@typeof_impl.register(FirstClass)
def _typeof_first_class(value, context):
    return value.numba_type          # built once, not on every call


_numba_jit_address = function_type._get_jit_address
_numba_wrapper_address = function_type._get_wrapper_address


def _jit_address(func, sig):
    own = _OWN.get(id(func))
    return own.jit_address if own is not None else _numba_jit_address(func, sig)


def _wrapper_address(func, sig):
    own = _OWN.get(id(func))
    return own.address if own is not None else _numba_wrapper_address(func, sig)


function_type._get_jit_address = _jit_address
function_type._get_wrapper_address = _wrapper_address


# The table above answers from Python; Numba asks it from the unboxing code of every
# compiled function that takes a first-class function, on every call, after importing
# its module and unpickling the signature, once per address: 1.9 us a function passed,
# 3.8 of the 5.3 us an Integrator.step() call spent crossing into its loop (rhs and
# jac).  Code compiled after this module is imported reads the two addresses as
# attributes of the object instead (tens of ns), and asks Numba's way, as before, for
# any object without them: a user's own dispatchers and cfuncs are unaffected.
_numba_lower_get_address = function_type._lower_get_address
_ADDRESS_ATTRIBUTE = {"_get_wrapper_address": "odekit_wrapper_address", "_get_jit_address": "odekit_jit_address"}


def _lower_get_address(context, builder, func, sig, failure_mode, *, function_name):
    pyapi = context.get_python_api(builder)
    found = pyapi.object_getattr_string(func, _ADDRESS_ATTRIBUTE[function_name])
    address = cgutils.alloca_once(builder, pyapi.pyobj)
    with builder.if_else(cgutils.is_not_null(builder, found), likely=True) as (own, other):
        with own:
            builder.store(found, address)
        with other:
            pyapi.err_clear()
            builder.store(_numba_lower_get_address(context, builder, func, sig, failure_mode,
                                                   function_name=function_name), address)
    return builder.load(address)


function_type.lower_get_wrapper_address = functools.partial(_lower_get_address, function_name="_get_wrapper_address")
function_type.lower_get_jit_address = functools.partial(_lower_get_address, function_name="_get_jit_address")


# --- compilation --------------------------------------------------------------------

@contextlib.contextmanager
def _quiet():
    """Silence Numba's pedantic SSA notes, which inlined loops trigger harmlessly."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaIRAssumptionWarning)
        yield


def compile_function(fn, signature=None, inline=False):
    """A user's function or an adapter, compiled lazily -- or now for ``signature``,
    and then returned as a :class:`FirstClass` function for the kernels.

    ``inline``: LLVM inlines it into the function that calls it (an in-place
    twin into its adapter: a call that passed some thirty words on the stack).
    """
    options = dict(OPTIONS, forceinline=True) if inline else OPTIONS
    dispatcher = fn if isinstance(fn, CPUDispatcher) else numba.njit(**options)(fn)
    if signature is None:
        return dispatcher
    with _quiet():
        dispatcher.compile(signature)
    return FirstClass(_only(dispatcher, signature))


class Unpacking(FirstClass):
    """A :class:`FirstClass` function of packed args (see :mod:`.packing`); from Python, also of the args as
    they are (packing is idempotent)."""

    def __call__(self, *args):
        return self.dispatcher(*args[:-1], packing.pack(args[-1]))


def unpacking_function(fn, signature, kinds):
    """``fn`` (a Python function or a dispatcher, ``args`` its last argument) as an :class:`Unpacking`
    function of ``signature``'s packed args, taking their first entries, of the layout ``kinds`` (see
    :func:`.packing.layout`).

    ``fn`` is compiled to be inlined: called, its arrays passed as some thirty words, a second-order
    Kepler orbit's RK4 step took 180-275 ns against 114-184 (one call layer more than ``fn`` alone).
    Inlined by LLVM, not in Numba's IR (``inline="always"``): that compiled a new problem's first solve in
    0.23 s rather than 0.36, but the same RK4 step took 108-110 ns against 90-92.
    """
    inner = compile_function(getattr(fn, "py_func", fn), inline=True)
    dispatcher = numba.njit(**OPTIONS)(packing.unpacking(inner, len(signature.args), kinds))
    with _quiet():
        dispatcher.compile(signature)
    dispatcher.disable_compile()          # a call with other types is a caller's mistake: say so
    return Unpacking(dispatcher)


def events_as_python(g, affect, signatures, compiler=compile_function):
    """The events' ``g`` and ``affect`` (Python functions in the kernel convention, which Numba could not
    compile), as functions for ``signatures`` that compiled code calls through Numba's object mode, compiled
    by ``compiler(fn, signature)``."""
    def g_as_python(t, W, row, G, grow, args):
        with numba.objmode(ok="boolean"):
            ok = g(t, W, row, G, grow, args)
        return ok

    def affect_as_python(k, c, t, W, row, args):
        with numba.objmode(ok="boolean"):
            ok = affect(k, c, t, W, row, args)
        return ok
    return tuple(compiler(fn, sig) for fn, sig in zip((g_as_python, affect_as_python), signatures))


def _only(dispatcher, signature):
    """``dispatcher`` itself when ``signature`` is its only one, else a copy compiled for it alone."""
    if len(dispatcher.signatures) == 1:
        return dispatcher
    alone = numba.njit(**OPTIONS)(dispatcher.py_func)
    with _quiet():
        alone.compile(signature)
    return alone


@functools.lru_cache(maxsize=None)
def kernel(fn, signature, cache=True, nogil=False):
    """``fn`` compiled for exactly one signature, from the disk cache when it is there.

    Returned as a :class:`Kernel`, which calls the compiled code without
    Numba's dispatch: the arguments' types are known, and typing them on
    every call cost more than a short run.  ``cache=False`` for kernels
    built from code outside odekit (a family of the user's), whose edits the
    cache's stamp would not see; a cached kernel is compiled by one process
    at a time (:meth:`_KeyedCacheFile.alone`).  ``nogil``: the call releases
    the GIL, so that threads run it at once (an ensemble's lanes).
    """
    dispatcher = numba.njit(cache=CACHE and cache, nogil=nogil, **OPTIONS)(fn)
    alone = contextlib.nullcontext()
    if CACHE and cache:
        dispatcher._cache = _KernelCache(fn)
        alone = dispatcher._cache.alone(signature, dispatcher.targetctx.codegen())
    with alone, _quiet():
        dispatcher.compile(signature)
    dispatcher.disable_compile()
    return Kernel(dispatcher)


def _described(value):
    """What a kernel's closure holds, as the key of Numba's cache sees it: a dispatcher by what it compiles, a
    closure (a helper a factory made, such as :func:`.ensemble.make_trajectory`'s) by its code and what it
    holds -- pickled whole, it named its file, and a reinstall in another folder compiled it again."""
    if isinstance(value, CPUDispatcher):
        return "dispatcher", value.py_func, tuple(map(str, value.signatures)), str(sorted(value.targetoptions.items()))
    if isinstance(value, type(_described)) and value.__closure__:
        return ("closure", value.__qualname__, hashlib.sha256(value.__code__.co_code).hexdigest(),
                tuple(_described(cell.cell_contents) for cell in value.__closure__))
    return value


class _KeyedCacheFile(caching.IndexDataCacheFile):
    """Numba's index and data files, each data file named by its key rather than by a count.

    Numba names a new entry's data file by the first number its index does
    not use yet, as the process read the index.  Two processes compiling at
    once (pytest's workers, Dask's) read the same index, took the same
    number, and the index one of them kept could name the code the other
    wrote: a loop of odekit's is one source compiled for every family, so
    its kernels share one index, and a step() of dp54 ran the implicit
    Runge-Kutta loop (the same states, its Jacobians counted).  Named by the
    key, a file holds that key's code or none; an entry the other process's
    index overwrote is only compiled again.
    """

    def _named(self, key, suffix):
        return f"{self._index_name[:-len('.nbi')]}.{hashlib.sha256(repr(key).encode()).hexdigest()[:24]}{suffix}"

    def save(self, key, data):
        name = self._named(key, ".nbc")
        self._save_data(name, data)             # before the index names it
        overloads = self._load_index()
        overloads[key] = name
        self._save_index(overloads)

    @contextlib.contextmanager
    def alone(self, key):
        """Held by one process at a time for ``key``: the one that compiles it; the others wait, then load it.

        Processes that start together need the same kernels at once (the
        workers of a Dask cluster handed one ensemble): each compiled them,
        5-25 s of CPU a family loop, on cores the others needed.  The lock is
        a file beside the index, taken with ``flock``: the system releases it
        if its holder dies, and a wait is interrupted by Ctrl-C.  Without
        ``fcntl`` (Windows) each process compiles for itself.
        """
        if fcntl is None:
            yield
            return
        try:
            os.makedirs(self._cache_path, exist_ok=True)
            lock = open(os.path.join(self._cache_path, self._named(key, ".lock")), "a")    # noqa: SIM115
        except OSError:
            yield
            return
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


class _KernelCache(caching.FunctionCache):
    """Numba's cache of a kernel, keyed by the dispatchers its closure holds as they compile, not as they pickle.

    Numba keys a cached closure by the pickled values it closes over; a
    dispatcher pickles with a random UUID, and its signatures' types pickle
    differently in another process.  An ensemble's chunk loop, when it closed
    over its family's compiled loop, was never found again: 2.3 s to compile
    in each process, and in each Dask worker (odekit's kernels now take such
    loops as first-class functions; a user's may still close over them).
    Its files are :class:`_KeyedCacheFile`: safe when processes compile at
    once.
    """

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _KeyedCacheFile(self._cache_path, self._impl.filename_base,
                                           self._impl.locator.get_source_stamp())

    def _index_key(self, sig, codegen):
        closure = self._py_func.__closure__ or ()
        held = serialize.dumps(tuple(_described(cell.cell_contents) for cell in closure)) if closure else b""
        return (sig, codegen.magic_tuple(), (hashlib.sha256(self._py_func.__code__.co_code).hexdigest(),
                                             hashlib.sha256(held).hexdigest()))

    def alone(self, sig, codegen):
        """See :meth:`_KeyedCacheFile.alone`."""
        return self._cache_file.alone(self._index_key(sig, codegen))


def on_disk(fn, signature):
    """Whether :func:`kernel` would load ``fn`` for ``signature`` from the disk cache rather than compile it.

    Asks the index of Numba's cache, which names each compiled signature,
    without loading what it indexes; False when Numba's internals are not
    the ones this was written for (a start that then compiles is no error).
    """
    if not CACHE:
        return False
    try:
        dispatcher = numba.njit(cache=True, **OPTIONS)(fn)
        cache = dispatcher._cache = _KernelCache(fn)
        key = cache._index_key(signature, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:         # noqa: BLE001 - any failure only means "not known to be cached"
        return False


class Signature:
    """Stands for a first-class function of ``signature`` where only its type is needed.

    A kernel's signature names its functions' types (see
    :func:`kernel_signatures`): these let it be known, and looked up in the
    cache, before anything is compiled.
    """

    def __init__(self, signature):
        self.numba_type = types.FunctionType(signature)


@typeof_impl.register(Signature)
def _typeof_signature(value, context):
    return value.numba_type


class Kernel:
    """A kernel's compiled entry point for its one signature.

    Arguments must have exactly the signature's types (the kernels' callers
    build them so); ``dispatcher`` is the Numba dispatcher, for inspection.
    """

    def __init__(self, dispatcher):
        (self.signature,) = dispatcher.signatures
        self.dispatcher = dispatcher
        self._entry = dispatcher.overloads[self.signature].entry_point

    def __call__(self, *args):
        return self._entry(*args)

    @functools.cached_property
    def first_class(self):
        """This kernel as a :class:`FirstClass` function: passed to compiled code, called through its address."""
        return FirstClass(self.dispatcher)


def chunk_kernel(fn, sample, cache, announce=None):
    """An ensemble's chunk loop ``fn`` (see :mod:`.ensemble`), compiled without the GIL for the types of the
    arguments ``sample``; kept on disk with ``cache`` (a loop of odekit's families); ``announce()``, if
    given, called before it is compiled rather than loaded.

    Found again by the arguments' structure (:func:`_structure`): typing them
    took 0.8 ms an ensemble, 2% of 10,000 Lorenz trajectories on two threads.
    """
    key = (fn, cache, _structure(sample))
    found = _CHUNKS.get(key)
    if found is None:
        signature = types.int64(*(typeof(a) for a in sample))
        if announce is not None and not (cache and on_disk(fn, signature)):
            announce()
        found = _CHUNKS[key] = kernel(fn, signature, cache=cache, nogil=True)
    return found


_CHUNKS = {}


# --- one argument for a call from Python: a kernel's arguments in a StructRef ---------------

@structref.register
class BundleType(types.StructRef):
    """The Numba type of a :class:`Bundle`: a StructRef holding a kernel's arguments as one tuple."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Bundle(structref.StructRefProxy):
    """A kernel's arguments -- a family loop's five bundles, say -- as one object.

    Numba unboxes a StructRef as one pointer, where the bundles' tuples are
    unboxed array by array on every call: 2.0 us for the twenty arrays of an
    RK4 step, 0.75 us bundled (a step of Kepler's orbit itself is 0.05 us).
    The arrays are the run's own, not copies.
    """


structref.define_proxy(Bundle, BundleType, ["args"])


def _bundling(*args):
    return Bundle(args)


_bundle = numba.njit(cache=CACHE, **OPTIONS)(_bundling)     # one per structure of arguments, on disk as kernels are
if CACHE:
    _bundle._cache = _KernelCache(_bundling)


def _unbundling(bundle):
    """The call of a bundle's kernel (its last argument) on the others."""
    arguments = bundle.args
    return arguments[-1](*arguments[:-1])


def bundled(loop, arguments, cache, announce, wrap=_unbundling, extra=()):
    """``call(*extra)``: the compiled kernel ``loop`` (a :class:`Kernel`, or None) on ``arguments``, passed as one
    :class:`Bundle`; ``announce()`` called before anything is compiled rather than loaded from the disk
    cache (with ``cache``).

    For calls from Python so short that Numba unboxing each array of the
    arguments was most of their cost: :meth:`odekit.Integrator.step` in a
    game loop, a repeated :func:`odekit.solve`.  ``wrap(bundle, *extra)`` is
    the function compiled (once per structure of arguments): by default one
    that returns what ``loop`` does.  The bundle's last argument is then
    ``loop`` itself, as a first-class function: the wrapper calls it
    through its address rather than linking its code, which Numba would
    generate again for the wrapper (2.7 s to compile a family loop's
    wrapper, against 1.5).  (Last: a tuple that starts with a function is
    typed by Numba's experimental unification of functions, which warns.)
    With ``loop`` None, ``wrap`` is the whole of what runs, on ``arguments``.
    """
    arguments = tuple(arguments) + (() if loop is None else (loop.first_class,))
    key = (wrap, _structure(arguments), _structure(extra))
    run = _BUNDLED.get(key)
    one = _bundle(*arguments)
    if run is None:
        signature = (typeof(one),) + tuple(typeof(x) for x in extra)
        if not (cache and on_disk(wrap, signature)):
            announce()
        run = _BUNDLED[key] = kernel(wrap, signature, cache=cache)
    return functools.partial(run._entry, one)


_BUNDLED = {}


def _structure(value):
    """What Numba's type of ``value`` depends on, cheaply: for arrays their dtype, dimensions, layout,
    writeability and alignment; for tuples their class and items; Numba's own type for anything else."""
    if isinstance(value, np.ndarray):
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"     # as Numba decides
        return value.dtype, value.ndim, layout, flags.writeable, flags.aligned
    if isinstance(value, tuple):
        return (type(value),) + tuple(_structure(item) for item in value)
    if isinstance(value, FirstClass):
        return value.numba_type
    return typeof(value)


@contextlib.contextmanager
def compilations():
    """Count what Numba compiles inside the block: yields a function that returns the count so far."""
    from numba.core import event

    with event.install_recorder("numba:compile") as recorder:
        yield lambda: sum(1 for _, e in recorder.buffer if e.is_start)


# --- signatures -----------------------------------------------------------------------

def vector(dtype):
    return types.Array(numba.from_dtype(dtype), 1, "C")


def matrix(dtype):
    return types.Array(numba.from_dtype(dtype), 2, "C")


def rhs_signature(args_type, dtype):
    """``rhs(t, W, src, dst, args) -> bool`` and the Jacobian's ``jac(t, W, src, J, args) -> bool``."""
    mat, row = matrix(dtype), types.intp
    return (types.boolean(types.float64, mat, row, row, args_type),
            types.boolean(types.float64, mat, row, mat, args_type))


def event_signatures(args_type, dtype):
    """The events' ``g(t, W, row, G, grow, args) -> bool`` and ``affect(k, c, t, W, row, args) -> bool``."""
    mat, row = matrix(dtype), types.intp
    return (types.boolean(types.float64, mat, row, matrix(np.float64), row, args_type),
            types.boolean(types.int64, types.int64, types.float64, mat, row, args_type))


def kernel_signatures(fns, data, scratch, dtype):
    """Signatures of the derivative and the driver for one kind of run.

    Typed from the run's own bundles (see :mod:`.interface`), so that a
    field added to a bundle needs no edit here.
    """
    from .interface import RunState, empty_events, no_output

    mat, row = matrix(dtype), types.intp
    fvec, ivec = types.float64[::1], types.int64[::1]
    fns_t = numba.typeof(fns)
    rhs_t, args_t = fns_t[0], fns_t[2]
    deriv_sig = types.int64(rhs_t, args_t, types.float64, mat, row, row, ivec, fvec)
    ev = None if fns.g is None else empty_events(np.dtype(dtype))        # see RunState
    run_t = numba.typeof(RunState(np.zeros(1), np.zeros(1, dtype=np.int64), ev))
    drive_sig = types.int64(fns_t, numba.typeof(data), run_t, numba.typeof(scratch),
                            numba.typeof(no_output(dtype)))
    return deriv_sig, drive_sig


typeof = numba.typeof
PACKED_ARGS = typeof(packing.pack(()))          # the type of every packed args (see .packing)
