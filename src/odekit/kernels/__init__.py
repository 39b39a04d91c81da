"""Integration kernels: one source that runs as plain Python or compiled.

Everything in this package is written in the subset of Python that Numba
compiles in ``nopython`` mode.  Nothing here imports Numba: plain Python is
the default, and :mod:`odekit.kernels.jit` compiles the same functions when
the compiled backend is first used.

Two decorators mark how a function takes part in compilation:

``@jitable``
    The function is called from other kernel functions (a stepper from its
    family's loop).  Numba compiles it once, from this very source, as a
    function of its own, which LLVM then inlines into each caller
    (``alwaysinline``).  ``cold=True`` keeps it a function that is called,
    for what runs rarely -- a new Jacobian, output at requested times, an
    event's search -- and would only lengthen the compilation of its
    callers.  ``inline=True`` inlines it in Numba's IR instead (see below).
``@compiled_as(loop_version)``
    A small linear-algebra primitive whose plain version is vectorised NumPy
    (fast in Python) while Numba uses ``loop_version``, an explicit loop
    (fast compiled, no temporaries).  Both compute the same numbers.  The
    loop is compiled once and inlined by LLVM into each caller (or called,
    with ``cold=True``); ``inline=True`` inlines it in Numba's IR instead,
    which lets Numba optimise it with the caller -- worth it only where it
    shows in a benchmark, since every such call site costs compilation time.

Why LLVM inlines the helpers: a call of a compiled helper passes each array
as nine machine words and costs a call to the reference-count functions for
each array argument on entry and exit (which return at once for borrowed
arrays, but are calls all the same).  On a small system that overhead was
a large share of a stiff solver's time per step (benchmarks/README.md gives
the step times before and after); inlined, it is gone, for a somewhat longer
compilation of the loop.

Why LLVM and not Numba's IR: Numba types a function inlined in its IR again
at every call site, and again each time type inference revisits the call
-- dp54's stepper was typed six times, ``evaluate`` 141 times -- so a
family's first compile took up to twice as long (CPU seconds with an empty
cache, IR against LLVM: dp54 11.8 and 7.1, rodas4 19.9 and 11.0, radau5
27.3 and 16.3), and the steps LLVM inlined ran as fast or up to 8% faster.
A loop compiles once and is then cached on disk (``bench_startup.py``
measures each family's first compile).
"""

import numpy as np

JITABLE = []
COMPILED_AS = []
_registered = None   # once :mod:`.jit` is imported: registers a helper marked later (a user's family)


def jitable(fn=None, *, inline=False, cold=False):
    """Mark ``fn`` as callable from compiled kernels; return it unchanged."""
    if fn is None:
        return lambda f: jitable(f, inline=inline, cold=cold)
    JITABLE.append((fn, inline, cold))
    if _registered is not None:
        _registered(fn, inline, cold)
    return fn


def compiled_as(loop_version, *, inline=False, cold=False):
    """Mark a NumPy primitive whose compiled form is ``loop_version``."""

    def mark(fn):
        COMPILED_AS.append((fn, loop_version, inline, cold))
        return fn

    return mark


def borrowed(value):
    """``value`` -- an array or a tuple of arrays -- for use inside one kernel call.

    In plain Python it is ``value`` itself.  Compiled, each array comes back
    without its reference count, so passing it on costs nothing: Numba
    otherwise counts a reference, atomically, each time an array enters an
    inlined helper, and cannot remove the pairs across a call of the user's
    function -- on a small system that counting took twice as long as the
    arithmetic.  Only arrays that the caller keeps alive for the whole call
    may be borrowed, and nothing borrowed may be returned or stored.
    """
    return value


def held(value):
    """``value`` -- an array or a tuple of arrays -- kept by the compiled function that calls this.

    In plain Python it is ``value`` itself.  Compiled, the array's data
    pointer, shape and strides pass through an empty piece of assembly, so
    that LLVM keeps them in registers or in the caller's own stack frame
    instead of reading them again, at each use, from where the caller's
    caller passed them.  A family loop reads its work arrays' fields for
    every call of the user's function, which takes them as arguments on the
    stack; read from the loop's incoming arguments, they lay (in one build
    of ``bdf``'s loop) 4,096 + 16 bytes above the stack slots the call was
    filling, and each such read waited on the write before it (a 4 KiB
    alias).  Held, they are copied once into the loop's own frame, smaller
    than 4 KiB in every family's loop (2.4-3.3 KiB measured), and read from
    there.
    """
    return value


def on_stack(size, like=None):
    """An uninitialised array of ``size`` elements of ``like``'s dtype (float without), scratch for one
    kernel call.

    ``size`` must be an integer constant where it is called.  In plain
    Python it is ``np.empty`` of the size.  Compiled, the array lies in the stack
    frame of the compiled function that calls ``on_stack`` -- no allocation
    and no reference count, which for a few dozen numbers would cost as much
    as the work done with them -- so, like a borrowed array, it must not be
    returned or stored.
    """
    return np.empty(size, dtype=np.float64 if like is None else like.dtype)
