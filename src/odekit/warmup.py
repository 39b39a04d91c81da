"""Compile the common loops ahead of time: ``odekit warmup``.

Numba compiles each family's loop the first time a run needs it, once per
kind of ``args`` and state dtype, and keeps it in its disk cache: tens of
seconds, once per machine.  :func:`warmup` does it before a user waits for
it -- after an install, in ``make demo`` -- for every built-in family, float
states and the ``args`` most runs have: none (most users' own functions) or
a few floats or ints (the zoo's problems, the demo's Kepler orbit among
them), which share one loop (see :mod:`odekit.kernels.packing`).  Other
kinds -- arrays, more than four numbers -- compile on their first run,
which says so (:class:`odekit.CompilationNotice`).
"""

import functools
import time
import warnings

import numpy as np

from .backend import CompilationNotice
from .families import FAMILIES
from .problem import ODEProblem, SecondOrderProblem
from .registry import methods

ARGS = ((),)       # none: the same loops as any few floats and ints (packed, see odekit.kernels.packing)
FIRST = ("explicit_rk", "splitting")     # the commonest families first: a user can stop after them


def _decay(t, y, *k):
    return -y


def _spring(t, x, v, *k):
    return -x


def warmup(families=None, report=print):
    """Compile the loops of ``families`` (names; default every built-in family) for :data:`ARGS`.

    Each family runs its first registered method that can over a short span
    of ``y' = -y`` (or ``x'' = -x``) with the compiled backend, once per kind
    of args; what is already in the cache is loaded, not compiled.  A family
    none of whose methods runs those (``kepler_splitting``, for N bodies) is
    skipped: it compiles on its first run.  ``report(line)`` is called as
    each family starts and ends.  Returns ``{family: seconds}`` of those
    warmed.
    """
    names = families if families is not None else sorted(
        (name for name, family in FAMILIES.items() if family.builtin),
        key=lambda name: (FIRST.index(name) if name in FIRST else len(FIRST), name))
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise ValueError(f"families must be among {', '.join(FAMILIES)}; got {', '.join(map(repr, unknown))}")
    taken = {}
    for name in names:
        family = FAMILIES[name]
        runs = [_run(family, args) for args in ARGS]
        if None in runs:
            report(f"warmup: {name}: skipped, none of its methods runs a plain first- or second-order problem "
                   "(it compiles on its first run)")
            continue
        report(f"warmup: {name} ({family.title}) ...")
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as notices:
            warnings.simplefilter("always", CompilationNotice)
            for run in runs:
                run()
        taken[name] = time.perf_counter() - start
        compiled = sum(issubclass(n.category, CompilationNotice) for n in notices)
        report(f"warmup: {name}: {'compiled' if compiled else 'in the cache'}, {taken[name]:.1f} s")
    return taken


def _run(family, args):
    """A short compiled solve and step by ``family``'s first method that fits, with ``args``, to be called;
    or None."""
    spring = SecondOrderProblem(_spring, (0.0, 0.1), np.ones(1), np.zeros(1), args=args)
    problem = spring if family.second_order else ODEProblem(_decay, (0.0, 0.1), np.ones(1), args=args)
    method = next((m for m in methods() if m.family is family and m.applies_to(problem)), None)
    if method is None:
        return None
    # a first-order family solving a second-order problem often: its one call writes the states in their
    # shape, another structure to compile (see odekit.rerun)
    shaped = (spring,) if problem is not spring and method.applies_to(spring) else ()
    return functools.partial(_solve_and_step, problem, method, {} if method.adaptive else {"h": 0.01}, shaped)


def _solve_and_step(problem, method, options, shaped=()):
    """What a first solve compiles, what a problem solved often adds (the one call that runs a solve
    again, see :mod:`odekit.rerun`, for ``problem`` and each of ``shaped``), and what a first
    :meth:`Integrator.step` adds (its one-argument call)."""
    from .integrator import RERUN_AFTER, Integrator
    from .solve import solve

    for _ in range(RERUN_AFTER + 2):
        for each in (problem,) + shaped:
            solve(each, method, backend="numba", **options)
    Integrator(problem, method, backend="numba", **options).step()
