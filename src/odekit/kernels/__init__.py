"""Integration kernels: one source that runs as plain Python or compiled.

Everything in this package is written in the subset of Python that Numba
compiles in ``nopython`` mode.  Nothing here imports Numba: plain Python is
the default, and :mod:`odekit.kernels.jit` compiles the same functions when
the compiled backend is first used.

Two decorators mark how a function takes part in compilation:

``@jitable``
    The function is called from other kernel functions; Numba compiles it
    from this very source, inlined into its callers in Numba's IR (a
    stepper into its family's loop).  ``inline=False`` compiles it once and
    calls it instead, for a function that does enough work per call (an LU
    factorisation, a Newton solve) that the call costs nothing in comparison.
``@compiled_as(loop_version)``
    A small linear-algebra primitive whose plain version is vectorised NumPy
    (fast in Python) while Numba uses ``loop_version``, an explicit loop
    (fast compiled, no temporaries).  Both compute the same numbers.  The
    loop is compiled once and called (LLVM inlines the small ones);
    ``inline=True`` inlines it in Numba's IR, which LLVM then optimises
    with the caller -- worth it only where it shows in a benchmark, since
    every inlined call site costs compilation time.

Inlining everything made each family's loop take up to a minute to compile;
as marked, a loop compiles in a few seconds (once, then it is cached on disk).
"""

JITABLE = []
COMPILED_AS = []


def jitable(fn=None, *, inline=True):
    """Mark ``fn`` as callable from compiled kernels; return it unchanged."""
    if fn is None:
        return lambda f: jitable(f, inline=inline)
    JITABLE.append((fn, inline))
    return fn


def compiled_as(loop_version, *, inline=False):
    """Mark a NumPy primitive whose compiled form is ``loop_version``."""

    def mark(fn):
        COMPILED_AS.append((fn, loop_version, inline))
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
