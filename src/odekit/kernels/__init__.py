"""Integration kernels: one source that runs as plain Python or compiled.

Everything in this package is written in the subset of Python that Numba
compiles in ``nopython`` mode.  Nothing here imports Numba: plain Python is
the default, and :mod:`odekit.kernels.jit` compiles the same functions when
the compiled backend is first used.

Two decorators mark how a function takes part in compilation:

``@jitable``
    The function is called from other kernel functions; Numba compiles it
    from this very source, inlined into its callers.
``@compiled_as(loop_version)``
    A small linear-algebra primitive whose plain version is vectorised NumPy
    (fast in Python) while Numba uses ``loop_version``, an explicit loop
    (fast compiled, no temporaries).  Both compute the same numbers.
"""

JITABLE = []
COMPILED_AS = []


def jitable(fn):
    """Mark ``fn`` as callable from compiled kernels; return it unchanged."""
    JITABLE.append(fn)
    return fn


def compiled_as(loop_version):
    """Mark a NumPy primitive whose compiled form is ``loop_version``."""

    def mark(fn):
        COMPILED_AS.append((fn, loop_version))
        return fn

    return mark
