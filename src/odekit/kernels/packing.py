"""A run's ``args`` as a compiled loop sees them: up to :data:`SLOTS` numbers, in one kind of tuple.

Numba compiles a family's loop once for each type of the ``args`` its
functions take, and the type of a tuple is its length and the types of its
entries: ``()``, ``(mu,)`` and Lorenz's ``(sigma, rho, beta)`` were each a
loop of their own, 15-25 s of compiling apiece, though the loop only hands
the args on.  Measured on a cold run of the test suite: 46 family loops, 21
of them the same family and events again for another number of floats;
with four floats packed, 27, of which five were loops again for an int or
five floats (47 s of CPU).

So args of at most :data:`SLOTS` floats and ints reach the compiled loop
:func:`pack`-ed: as floats, padded with zeros to :data:`SLOTS`.  Each of the
problem's compiled functions in the kernel convention (``rhs``, ``jac``,
the events' ``g`` and ``affect``, whose last argument is ``args``) is
compiled inside a call made by :func:`unpacking`, which takes its own
entries back -- an int as the int it was: ints of at most 2**53 in
magnitude, which a float holds exactly, are packed.  Other args (arrays,
bools, more entries) reach the loop as they are.

The floats stay four: with six, RK4 on Kepler in place took 119-128 ns a
step against 85 (three processes of each, the zoo's second-order form
unchanged at 113-117) -- the packed args are passed to every evaluation.
"""

SLOTS = 4
EXACT = 2 ** 53          # the ints a float holds exactly


def layout(args):
    """What :func:`pack` packs, as a string of ``"f"`` (a float) and ``"i"`` (an int) per entry of
    ``args``; or None when they are not packed (see the module's docstring)."""
    if len(args) > SLOTS:
        return None
    kinds = ["f" if isinstance(a, float) else "i" if type(a) is int and abs(a) <= EXACT else None for a in args]
    return None if None in kinds else "".join(kinds)


def pack(args):
    """``args`` as :data:`SLOTS` floats, padded with zeros; packed args are left as they are."""
    return tuple(map(float, args)) + (0.0,) * (SLOTS - len(args))


def packed(args):
    """``args`` as the compiled loop takes them: :func:`pack`-ed when :func:`layout` says so, else as they are."""
    return args if layout(args) is None else pack(args)


def unpacking(fn, arity, kinds):
    """``fn`` (``arity`` arguments, ``args`` the last) as a function of packed args whose first entries it
    takes, of the :func:`layout` ``kinds``.

    Made as source, as :func:`odekit.kernels.ensemble.picker` is: Numba
    indexes a tuple only with constants.
    """
    params = ", ".join(f"a{j}" for j in range(arity - 1))
    taken = "".join(f"args[{j}], " if kind == "f" else f"int(args[{j}]), " for j, kind in enumerate(kinds))
    namespace = {"fn": fn}
    exec(f"def unpacked({params}, args):\n    return fn({params}, ({taken}))\n", namespace)  # noqa: S102
    return namespace["unpacked"]
