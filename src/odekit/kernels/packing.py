"""A run's ``args`` as a compiled loop sees them: up to :data:`SLOTS` floats, in one kind of tuple.

Numba compiles a family's loop once for each type of the ``args`` its
functions take, and the type of a tuple is its length and the types of its
entries: ``()``, ``(mu,)`` and Lorenz's ``(sigma, rho, beta)`` were each a
loop of their own, 15-25 s of compiling apiece, though the loop only hands
the args on.  Measured on a cold run of the test suite: 46 family loops, 21
of them the same family and events again for another number of floats.

So args of at most :data:`SLOTS` floats reach the compiled loop
:func:`pack`-ed, padded with zeros to :data:`SLOTS` floats; each of the
problem's compiled functions in the kernel convention (``rhs``, ``jac``,
the events' ``g`` and ``affect``, whose last argument is ``args``) is
wrapped by :func:`unpacking`, which takes its own floats back before
calling it.  The functions themselves are compiled for the args as they
are.  Other args (ints, arrays, more floats) reach the loop as they are.
"""

SLOTS = 4


def count(args):
    """How many floats ``args`` packs, or None when it is not packed (see the module's docstring)."""
    if len(args) <= SLOTS and all(isinstance(a, float) for a in args):
        return len(args)
    return None


def pack(args):
    """``args`` padded with zeros to :data:`SLOTS` floats; packed args are left as they are."""
    return tuple(args) + (0.0,) * (SLOTS - len(args))


def packed(args):
    """``args`` as the compiled loop takes them: :func:`pack`-ed when :func:`count` says so, else as they are."""
    return args if count(args) is None else pack(args)


def unpacking(fn, arity, k):
    """``fn`` (``arity`` arguments, ``args`` the last) as a function of packed args whose first ``k`` it takes.

    Made as source, as :func:`odekit.kernels.ensemble.picker` is: Numba
    indexes a tuple only with constants.
    """
    params = ", ".join(f"a{j}" for j in range(arity - 1))
    taken = "()" if k == 0 else "(" + "".join(f"args[{j}], " for j in range(k)) + ")"
    namespace = {"fn": fn}
    exec(f"def unpacked({params}, args):\n    return fn({params}, {taken})\n", namespace)  # noqa: S102
    return namespace["unpacked"]
