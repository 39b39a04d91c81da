"""Measured order of convergence, and work against precision."""

from collections.abc import Iterable, Mapping
import math
import time

import numpy as np

from .. import checks
from ..backend import BACKENDS
from ..registry import Method, method as _lookup
from ..problem import ODEProblem, SecondOrderProblem
from ..events import compared_rows
from ..solve import PROGRESS, solve
from ..theory.fitting import OrderFit, _positive_array, fit_order
from .drift import invariant_values
from .reference import REFERENCE, Reference  # noqa: F401  (REFERENCE: the default run, documented here)
from .tables import (
    ConvergenceResult, ConvergenceRow, OrderRow, OrderTable, WorkPrecisionResult, WorkPrecisionRow,
)

# =====================================================================================
# Argument handling shared by convergence and work_precision
# =====================================================================================

def _methods(methods):
    if isinstance(methods, (str, Method)):
        methods = [methods]
    if not isinstance(methods, Iterable):
        raise TypeError(f"methods must be a method name, a Method or a list of them, got {type(methods).__name__}")
    found = [_lookup(m) for m in methods]
    if not found:
        raise ValueError("methods is empty; give at least one method name (odekit.methods() lists them)")
    names = [m.name for m in found]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"methods lists {dup} more than once")
    return found


def _per_method(name, values, methods, minimum):
    """``values`` (one sequence for all, or a mapping method -> sequence) -> {method name: tuple}."""
    if isinstance(values, Mapping):
        by_name = {}
        for key, seq in values.items():
            by_name[_lookup(key).name] = seq
        given = [m.name for m in methods]
        extra = sorted(set(by_name) - set(given))
        if extra:
            raise ValueError(f"{name} has entries for {extra}, which are not among the methods {given}")
        out = {}
        for m in methods:
            if m.name not in by_name:
                if minimum == 0:
                    continue
                raise ValueError(f"{name} is a mapping but has no entry for method {m.name!r}; "
                                 f"give one sequence of values per method in {given}")
            out[m.name] = _value_list(f"{name}[{m.name!r}]", by_name[m.name], minimum)
        return out
    seq = _value_list(name, values, minimum)
    return {m.name: seq for m in methods}


def _value_list(name, values, minimum):
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        if isinstance(values, (int, float)) and not isinstance(values, bool):
            values = [values]
        else:
            raise TypeError(f"{name} must be a sequence of positive numbers (or a mapping method -> "
                            f"sequence), got {type(values).__name__}")
    values = list(values)
    a = _positive_array(name, values) if values else np.zeros(0)
    if a.size < max(minimum, 1):
        raise ValueError(f"{name} must hold at least {max(minimum, 1)} value(s), got {a.size}")
    if minimum >= 2 and np.unique(a).size < 2:
        raise ValueError(f"{name} must hold at least two different step sizes to fit an order, got {values}")
    return tuple(float(v) for v in a)


def _check_problem(problem):
    if not isinstance(problem, (ODEProblem, SecondOrderProblem)):
        raise TypeError(f"problem must be an ODEProblem or SecondOrderProblem (e.g. odekit.problems.kepler()), "
                        f"got {type(problem).__name__}")


def _check_backend(backend):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def _check_invariant(problem, invariant):
    if invariant is None:
        return None
    if not isinstance(invariant, str) or invariant not in problem.invariants:
        have = ", ".join(sorted(problem.invariants)) or "none"
        raise ValueError(f"invariant={invariant!r} is not an invariant of problem {problem.name!r}; "
                         f"it has: {have}")
    return invariant


def _errors(sol, ref):
    """(error, error_x, error_v) of a run: largest absolute deviations over the output times."""
    if not sol.success:
        second = sol.problem.second_order
        return math.inf, (math.inf if second else None), (math.inf if second else None)
    diff = np.abs(sol.y - ref.states(sol.t, sol.y.shape[1:]))
    diff = diff[compared_rows(sol.t, diff.reshape(len(sol.t), -1).max(axis=1, initial=0.0))]
    total = float(diff.max()) if diff.size else 0.0
    if sol.problem.second_order:
        return total, float(diff[:, 0].max()), float(diff[:, 1].max())
    return total, None, None


def _fit_or_nan(hs, errors):
    pairs = [(h, e) for h, e in zip(hs, errors) if e is not None and math.isfinite(e) and e > 0]
    if len(pairs) < 2 or len({h for h, _ in pairs}) < 2:
        return OrderFit(math.nan, math.nan, math.nan, len(pairs))
    h, e = zip(*pairs)
    return fit_order(h, e)


# =====================================================================================
# convergence
# =====================================================================================

def convergence(problem, methods, hs, *, reference=None, invariant=None, backend="auto",
                rtol=1e-13, atol=1e-13, progress=None):
    """Convergence study: global error against fixed step size, and the measured order.

    For each method and each step ``h`` the problem is solved with fixed
    steps over its whole span; the *global error* is the largest absolute
    deviation from the true solution over all output times and components,

        err(h) = max_n max_i |y_n,i - y_i(t_n)|,

    and the measured order is the least-squares slope of ``log err`` against
    ``log h`` (:func:`fit_order`).  For a second-order problem the errors of
    positions and velocities are also fitted separately (``order_x``,
    ``order_v``): a splitting method may carry them at different accuracy
    (e.g. the staggered velocity of leapfrog).  With ``invariant`` naming one
    of ``problem.invariants``, the invariant error ``max_n |I(y_n) - I(y_0)|``
    is fitted too: for a method of order ``p`` it is ``O(h^p)``, and for a
    symplectic method it stays so for exponentially long times (Hairer,
    Lubich & Wanner, *Geometric Numerical Integration*, IX.8).

    Parameters
    ----------
    problem : ODEProblem or SecondOrderProblem
    methods : str, Method or sequence of them
    hs : sequence of float, or mapping method -> sequence of float
        Fixed step sizes (each ``0 < h <= |t_end - t0|``; the last step is
        shortened to land on ``t_end``).  Methods of different order are in
        their asymptotic range at different steps -- Euler needs small steps
        to leave the pre-asymptotic range, an order-5 method reaches
        round-off at moderate ones -- so ``hs`` may map each method (name or
        alias) to its own steps; a mapping must cover every method.
        Halvings over a factor of 8-16 give a clean fit; the errors should
        stay above ~100 times the reference's error (about ``1e-11`` for the
        default reference on one Kepler orbit) and above round-off.
    reference : None, "exact", mapping or callable
        What the error is measured against.  ``None``: ``problem.exact`` if
        the problem has one, otherwise a reference run of
        ``solve(problem, "dp54", rtol=1e-13, atol=1e-13, t_eval=...)`` at
        every output time of every run (:data:`REFERENCE`).  A mapping
        updates those ``solve`` options (e.g. ``{"method": "trapezoid",
        "h": 1e-5}`` for a stiff problem); a callable ``ref(t)`` returns the
        state at ``t`` (``(x, v)`` for mechanics; a dense :class:`Solution`
        works).
    invariant : str, optional
        Name of an invariant of ``problem`` whose error order is measured.
    backend : {"auto", "numba", "python"}
        Passed to :func:`odekit.solve`.  ``"python"`` starts faster for short
        runs; ``"auto"`` first compiles the kernels for the problem's
        right-hand side, which pays off only on longer runs.
    rtol, atol : float
        Newton tolerances of implicit methods (with fixed steps they do not
        control the step).  Tight by default so that the truncation error,
        not Newton's, is measured.
    progress : callable, optional
        ``progress(done, total, label)`` after each run, e.g. an
        :class:`odekit.progress.Progress` bar.

    Returns
    -------
    ConvergenceResult
        ``rows`` (:class:`ConvergenceRow`, one per method and ``h``),
        ``fits`` (:class:`OrderTable`, one :class:`OrderRow` per method),
        ``order(method)``, ``as_dicts()``, ``to_csv(path)``; prints as tables.

    Raises
    ------
    ValueError, TypeError
        For an unknown method, a step list with fewer than two different
        steps, a mapping ``hs`` without an entry for a method, an unknown
        invariant or backend, or a method the problem does not fit (a
        splitting method on a first-order problem).
    IntegrationError
        If the reference run fails (a ``RuntimeError``).

    Examples
    --------
    >>> prob = odekit.problems.kepler(e=0.5, t_end=2.0)            # doctest: +SKIP
    >>> res = convergence(prob, ["rk4", "velocity_verlet"], [0.02, 0.01, 0.005],
    ...                   invariant="energy", backend="python")    # doctest: +SKIP
    >>> res.order("rk4"), res.fits["velocity_verlet"].invariant_order  # doctest: +SKIP
    (4.0..., 2.0...)
    """
    _check_problem(problem)
    _check_backend(backend)
    checks.callable_or_none("progress", progress, PROGRESS)
    ms = _methods(methods)
    steps = _per_method("hs", hs, ms, minimum=2)
    invariant = _check_invariant(problem, invariant)
    ref = Reference(problem, reference, backend)

    runs = []
    total = sum(len(steps[m.name]) for m in ms)
    for m in ms:
        for h in steps[m.name]:
            runs.append((m, h, solve(problem, m, h=h, rtol=rtol, atol=atol, backend=backend)))
            if progress is not None:
                progress(len(runs), total, f"{m.name} h={h:.3g}")
    ref.prepare([sol for _, _, sol in runs])

    rows = []
    inv0 = {}
    for m, h, sol in runs:
        err, ex, ev = _errors(sol, ref)
        inv_err = None
        if invariant is not None:
            values = invariant_values(sol, invariant)
            inv_err = float(np.max(np.abs(values - values[0]))) if sol.success else math.inf
            inv0[m.name] = abs(float(np.real(values[0])))
        rows.append(ConvergenceRow(method=m.name, h=h, steps=sol.stats.naccepted, nfev=sol.stats.nfev,
                                   error=err, error_x=ex, error_v=ev, invariant_error=inv_err,
                                   success=bool(sol.success)))

    fits = []
    for m in ms:
        mine = [r for r in rows if r.method == m.name]
        hs_m = [r.h for r in mine]
        fit = _fit_or_nan(hs_m, [r.error for r in mine])
        fx = fv = fi = None
        if problem.second_order:
            fx = _fit_or_nan(hs_m, [r.error_x for r in mine]).order
            fv = _fit_or_nan(hs_m, [r.error_v for r in mine]).order
        if invariant is not None:
            floor = 1e-12 * max(1.0, inv0.get(m.name, 0.0))
            errs = [r.invariant_error for r in mine]
            if all(e <= floor for e in errs):
                fi = math.nan
            else:
                fi = _fit_or_nan(hs_m, errs).order
        fits.append(OrderRow(method=m.name, declared=m.order, order=fit.order, stderr=fit.stderr,
                             order_x=fx, order_v=fv, invariant_order=fi, points=fit.points))
    return ConvergenceResult(rows=tuple(rows), fits=OrderTable(tuple(fits)), problem=problem.name,
                             reference=ref.label, invariant=invariant)


# =====================================================================================
# work-precision
# =====================================================================================

def _by_kind(values, ms, hs, tolerances):
    """Positional values of :func:`work_precision` -> (hs, tolerances), each method by its kind."""
    if hs is not None or tolerances is not None:
        raise ValueError("give the steps or tolerances once: as the third argument (read by each method's kind) "
                         "or as hs=... / tolerances=..., not both")
    embedded = [m.name for m in ms if m.adaptive]
    fixed = [m.name for m in ms if not m.adaptive]
    if not isinstance(values, Mapping) and embedded and fixed:
        raise ValueError(f"the third argument, {values!r}, would be tolerances for {embedded} (embedded error "
                         f"estimate) but step sizes for {fixed}; for methods of both kinds give a mapping "
                         "method -> values, or hs=[...] and/or tolerances=[...] by keyword")
    per_method = _per_method("steps_or_tolerances", values, ms, minimum=0)
    steps = {name: v for name, v in per_method.items() if name in fixed}
    rtols = {name: v for name, v in per_method.items() if name in embedded}
    return steps or None, rtols or None


def work_precision(problem, methods, steps_or_tolerances=None, *, hs=None, tolerances=None, atol=None,
                   reference=None, backend="auto", repeat=3):
    """Work against precision: error, f-evaluations and wall time per run.

    Each method is run at each fixed step in ``hs`` and/or each tolerance in
    ``tolerances``; the error is the largest absolute error over the output
    times (as in :func:`convergence`), measured against the exact solution
    or a tight reference run.  Plotting ``error`` against ``nfev`` (or
    ``time``) for every method gives the work-precision diagram of Hairer &
    Wanner (*Solving ODEs I*, II.10): the lower curve is the cheaper method
    for that accuracy.

    Timing: every configuration is solved once first -- this *warm-up* run
    compiles the Numba kernels (``backend="auto"``) and provides the error
    and ``nfev`` (runs are deterministic) -- and then ``repeat`` more
    times; ``time`` is the best (smallest) wall time of those, measured
    with :func:`time.perf_counter` around the whole :func:`odekit.solve`
    call (set-up and output recording included).  Compilation is therefore
    never timed, and the minimum filters out interference from other
    processes.

    Parameters
    ----------
    problem : ODEProblem or SecondOrderProblem
    methods : str, Method or sequence of them
    steps_or_tolerances : sequence of float or mapping method -> sequence, optional
        Given positionally, each method reads the values as it is usually
        run: a method with an embedded error estimate (``dp54``, ``bs32``,
        ... -- the kind SciPy's ``solve_ivp`` runs) as tolerances ``rtol``,
        any other (``rk4``, ``velocity_verlet``, ...) as fixed steps ``h``.
        ``work_precision(prob, ["dp54", "bs32"], [1e-4, 1e-6, 1e-8])`` and
        ``work_precision(prob, ["rk4"], [0.01, 0.005])`` therefore do what
        they say.  One list for methods of both kinds would mean steps to
        some and tolerances to others, so it is refused: give a mapping
        ``{"rk4": [0.01, 0.005], "dp54": [1e-6, 1e-8]}`` (each method's
        values read by its kind) or the keywords.
    hs : sequence of float or mapping method -> sequence, optional
        Fixed steps, for any method.  A mapping gives each method its own
        (methods it leaves out are not run with fixed steps).
    tolerances : sequence of float or mapping method -> sequence, optional
        Relative tolerances ``rtol`` of adaptive runs.  Methods with an
        embedded pair use it with PI control (``control="embedded"``); the
        others use step doubling (``control="doubling"``).
    atol : float, optional
        Absolute tolerance of adaptive runs; by default equal to ``rtol``.
    reference : None, "exact", mapping or callable
        As in :func:`convergence`.
    backend : {"auto", "numba", "python"}
    repeat : int
        Timed runs after the warm-up (at least 1).

    Returns
    -------
    WorkPrecisionResult
        ``rows`` of :class:`WorkPrecisionRow` (``method``, ``control``,
        ``h``, ``rtol``, ``steps``, ``nfev``, ``error``, ``time``,
        ``success``), ``as_dicts()``, ``to_csv(path)``, ``column(name,
        method)``.

    Raises
    ------
    ValueError, TypeError
        If no steps or tolerances are given, or positional ones together
        with ``hs`` or ``tolerances``, one positional list for methods of
        both kinds, a method gets no run, or an argument is malformed.
    """
    _check_problem(problem)
    _check_backend(backend)
    if steps_or_tolerances is not None:
        hs, tolerances = _by_kind(steps_or_tolerances, _methods(methods), hs, tolerances)
    repeat = checks.count("repeat", repeat, accepted="a positive integer (timed runs after the warm-up)")
    if hs is None and tolerances is None:
        raise ValueError("give steps or tolerances: as the third argument (read by each method's kind), or "
                         "hs=[...] (fixed steps) and/or tolerances=[...] (adaptive runs); got none")
    if atol is not None:
        atol = checks.positive("atol", atol, "a positive number or None (= rtol)")
    ms = _methods(methods)
    fixed = _per_method("hs", hs, ms, minimum=0) if hs is not None else {}
    adaptive = _per_method("tolerances", tolerances, ms, minimum=0) if tolerances is not None else {}
    idle = [m.name for m in ms if m.name not in fixed and m.name not in adaptive]
    if idle:
        raise ValueError(f"methods {idle} get neither a step in hs nor a tolerance in tolerances")
    ref = Reference(problem, reference, backend)

    configs = []
    for m in ms:
        for h in fixed.get(m.name, ()):
            configs.append((m, "fixed", h, None, {"h": h}))
        for tol in adaptive.get(m.name, ()):
            control = "embedded" if m.adaptive else "doubling"
            configs.append((m, control, None, tol, {"rtol": tol, "atol": tol if atol is None else atol,
                                                    "adaptive": True if m.adaptive else "doubling"}))
    runs = []
    for m, control, h, tol, options in configs:
        sol = solve(problem, m, backend=backend, **options)        # warm-up: compiles, gives error and nfev
        best = math.inf
        for _ in range(repeat):
            start = time.perf_counter()
            solve(problem, m, backend=backend, **options)
            best = min(best, time.perf_counter() - start)
        runs.append((m, control, h, tol, sol, best))
    ref.prepare([r[4] for r in runs])
    rows = []
    for m, control, h, tol, sol, best in runs:
        err = _errors(sol, ref)[0]
        rows.append(WorkPrecisionRow(method=m.name, control=control, h=h, rtol=tol, steps=sol.stats.naccepted,
                                     nfev=sol.stats.nfev, error=err, time=best, success=bool(sol.success)))
    return WorkPrecisionResult(rows=tuple(rows), problem=problem.name, reference=ref.label,
                               backend=backend, repeat=repeat)
