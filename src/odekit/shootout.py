"""The shootout: integrators compared on the same budget of derivative evaluations.

"Apples to apples": every method gets the same number of evaluations of the
right-hand side (or force) per unit of simulated time.  With a budget of
``B`` evaluations per unit time, a method that spends ``k`` evaluations per
step takes steps of ``h = k / B`` -- explicit Euler ``1/B``, RK4 ``4/B``,
velocity Verlet ``1/B``, Forest--Ruth ``3/B``.  (Kicks implicit in v, those
of a velocity-dependent force, spend more than they declare: their steps are
sized by what they spend, see :func:`_run`.)  Each method's run is then
measured: its error against the exact (or a tight reference) solution, the
drift of the problem's invariants, whether the energy error is bounded or
secular, and quantities that matter for the problem at hand (for an orbit:
radii, period, eccentricity).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
import csv
import inspect
import io
import math

import numpy as np

from . import analysis, checks, problems
from .analysis.reference import Reference
from .formatting import text_table
from .integrator import IntegrationError
from .recording import step_floor
from .problem import ODEProblem, SecondOrderProblem
from .registry import Method, method as lookup_method
from .problems import problem as zoo_problem
from .registry import CLASSIC as DEFAULT_METHODS
from .solve import PROGRESS, solve

SAMPLES = 2000          # output points at which the error is measured
CONSERVED = 1e-6        # a true energy that changes by less (relative) is conserved: its drift measures a method
ON_BUDGET = 0.02        # a run whose evaluations vary is on its budget within 2 %
RETAKES = 5             # ... or after this many runs again at the step its spending asks
PERIODS = 10            # default span of a shootout on a periodic zoo problem, in periods of its motion

# The period of each periodic zoo problem, from its constructor's arguments (defaults filled in).
# A shootout needs several of them: the period of an orbit is measured between pericentre
# passages, and bounded and secular drift are told apart over several oscillations.
PERIOD = {
    "kepler": lambda a: 2 * math.pi / math.sqrt(a["mu"]),           # a = 1 for every e
    "arenstorf": lambda a: problems.ARENSTORF_PERIOD,
    "pendulum": lambda a: problems.pendulum_period(a["g"], a["L"], a["theta0"], a["omega0"]),
    "harmonic_oscillator": lambda a: 2 * math.pi / a["omega"],
    "rotation": lambda a: 2 * math.pi,
    "mass_spring_chain": lambda a: 2 * math.pi / problems.chain_modes(a["n"], a["k"], a["mass"])[0][0],
}


@dataclass
class ShootoutResult:
    """One row per method; prints as a table.

    Attributes
    ----------
    problem : ODEProblem or SecondOrderProblem
    budget : float
        Derivative evaluations per unit of simulated time, for every method.
    rows : list of dict
        ``method``, ``h``, ``steps``, ``nfev``, ``error`` (largest deviation
        of the positions -- or the state -- from the exact or reference
        solution), ``energy_drift`` and ``angular_momentum_drift`` (largest
        relative drift over the run, nan when the problem has no such
        invariant), ``energy_change`` (signed relative change at the end),
        ``energy_trend`` ("bounded", "secular", or "too short" for a run of
        fewer than about four oscillations: :func:`odekit.analysis.invariant_drift`),
        and the problem's own quantities.  A problem whose true energy is
        not conserved (damping, impacts) has ``energy_error`` instead of the
        three energy columns: the largest deviation of the run's energy
        from the true one, relative to the initial energy.
    solutions : dict
        Method name -> :class:`Solution`, for plots.
    energy_errors : dict
        For a problem whose true energy is not conserved: method name ->
        ``(t, error)``, its energy's deviation from the true one, relative
        to the initial energy, at a sample of its output times (what
        ``energy_error`` is the largest of).
    """

    problem: object
    budget: float
    rows: list
    solutions: dict = field(repr=False)
    energy_errors: dict = field(default_factory=dict, repr=False)

    @property
    def columns(self):
        names = []
        for row in self.rows:
            names += [k for k in row if k not in names]
        return names

    def as_dicts(self):
        """The rows as a list of plain dicts."""
        return [dict(row) for row in self.rows]

    def to_csv(self, path=None):
        """The rows as CSV text; also written to ``path`` when given."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=self.columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        text = out.getvalue()
        if path is not None:
            with open(path, "w", newline="") as fh:
                fh.write(text)
        return text

    def __str__(self):
        cols = self.columns
        table = text_table([[format_cell(row.get(c)) for c in cols] for row in self.rows], cols)
        t0, t1 = self.problem.t_span
        head = (f"shootout: {self.problem.name}, t = {t0:g} .. {t1:g}, "
                f"{self.budget:g} derivative evaluations per unit time for every method")
        return head + "\n" + table

    def plot(self, path=None):
        """Trajectories, energy error against time and the errors at a glance."""
        from . import plot

        return plot.shootout(self, path)


def shootout(problem="kepler", methods=None, budget=1000, t_end=None, *, backend="auto", progress=None):
    """Run ``methods`` on ``problem`` at an equal budget of derivative evaluations.

    Parameters
    ----------
    problem : str or ODEProblem or SecondOrderProblem
        A problem, or the name of one in :mod:`odekit.problems`.
    methods : sequence of str, optional
        Default: the eight of the classic comparison -- ``euler``, ``heun``,
        ``midpoint``, ``rk4``, ``symplectic_euler``, ``velocity_verlet``,
        ``position_verlet``, ``forest_ruth`` (those that apply to the problem).
    budget : float
        Derivative evaluations per unit of simulated time.  Kicks implicit
        in v, which iterate, get the steps at which they spend it (within
        2 %, their runs taken again: see :func:`_run`).
    t_end : float, optional
        End of the run.  Default: for a problem given by name, the span of
        :func:`shootout_problem` (ten periods of a periodic problem); for a
        problem object, its own span.
    backend : {"auto", "numba", "python"}
        For every run, and the reference run when the problem has no exact
        solution.
    progress : callable, optional
        ``progress(done, total, label)`` as the work goes on: ``total``
        counts the runs (the reference run of a problem without an exact
        solution is one of them, labelled ``"reference"``), ``done`` is
        fractional while a run is under way and the number of runs finished
        after each.

    Returns
    -------
    ShootoutResult

    Raises
    ------
    IntegrationError
        If the reference run of a problem without an exact solution fails.
    """
    if isinstance(problem, str):
        prob = shootout_problem(problem) if t_end is None else zoo_problem(problem)
    elif isinstance(problem, (ODEProblem, SecondOrderProblem)):
        prob = problem
    else:
        raise TypeError("problem must be the name of a problem in odekit.problems, or an ODEProblem or "
                        f"SecondOrderProblem, got {type(problem).__name__}")
    if t_end is not None:
        prob = prob.with_span((prob.t_span[0], checks.real("t_end", t_end, "a finite number (the end of the run)")))
    budget = _budget(budget)
    checks.callable_or_none("progress", progress, PROGRESS)
    chosen = _methods(prob, methods)
    span = abs(prob.t_span[1] - prob.t_span[0])
    floor = step_floor(prob.t_span)
    for m in chosen:                     # all steps checked before the first (long) run
        if m.evaluations_per_step / budget > span:
            raise ValueError(f"budget={budget:g} gives {m.name} a step h={m.evaluations_per_step / budget:g} "
                             f"longer than the span {span:g}; "
                             f"accepted: budget >= {m.evaluations_per_step / span:g}")
        if m.evaluations_per_step / budget <= floor:
            raise ValueError(f"budget={budget:g} gives {m.name} a step h={m.evaluations_per_step / budget:g} "
                             f"too small to advance t in floating point across the span (h <= {floor:.3g}); "
                             f"accepted: budget < {m.evaluations_per_step / floor:g}")
    runs = len(chosen) + (prob.exact is None)
    report = progress if progress is not None else (lambda done, total, label: None)
    reference = _reference(prob, backend, _within(report, 0, runs, "reference"))
    if prob.exact is None:
        report(1, runs, "reference")
    rows, solutions, energy_errors = [], {}, {}
    for i, m in enumerate(chosen):
        done = runs - len(chosen) + i
        h, sol = _run(prob, m, budget, backend, _progress(report, done, runs, m.name))
        solutions[m.name] = sol
        row, lost = _measure(sol, m, h, reference)
        rows.append(row)
        if lost is not None:
            energy_errors[m.name] = lost
        report(done + 1, runs, m.name)
    return ShootoutResult(prob, budget, rows, solutions, energy_errors)


def _run(prob, m, budget, backend, progress):
    """``(h, solution)``: the run of ``m`` that spends ``budget`` evaluations per unit time.

    Its step is ``h = k / budget`` for the ``k`` evaluations a step of ``m``
    declares.  Kicks implicit in v (:meth:`~odekit.registry.Method.kicks_implicitly`)
    iterate to convergence and spend several times that (velocity Verlet six
    evaluations a step on the velocity-dependent pendulum), fewer a step at
    larger steps: such a run is taken again with ``h`` scaled by what it
    spent over the budget until it is within :data:`ON_BUDGET` of it (two
    retakes, measured), at most :data:`RETAKES` times.  ``progress(k, passes)``
    is the progress callback of pass ``k``.
    """
    h = m.evaluations_per_step / budget
    span = abs(prob.t_span[1] - prob.t_span[0])
    passes = 1 if not m.kicks_implicitly(prob) else RETAKES + 1
    for k in range(passes):
        sol = solve(prob, m, h=h, backend=backend, progress=progress(k, passes))
        spent = sol.stats.nfev / (budget * span)
        if k == passes - 1 or not sol.success or abs(spent - 1) <= ON_BUDGET or h == span:
            return h, sol
        h = min(h * spent, span)


def _progress(report, done, total, label):
    """``progress(k, passes)``: the ``progress`` of pass ``k`` of run ``done + 1``, over half what is left of it.

    A single pass has the whole run; passes that may be retaken report
    from ``done`` to ``done + 1/2``, then to ``done + 3/4``, ... : never back.
    """
    def of_pass(k, passes):
        if passes == 1:
            return _within(report, done, total, label)
        share = 0.5 ** (k + 1)
        return _within(report, done + 1 - 2 * share, total, label, share)
    return of_pass


def _within(report, done, total, label, share=1.0):
    """A solve's ``progress`` that reports its ``share`` of run ``int(done) + 1`` of ``total``, from ``done``."""
    def progress(t, span, _):
        if t < span:                    # the end of a run is reported once, as a whole number
            report(done + share * t / span, total, label)
    return progress


def shootout_problem(name, **params):
    """A zoo problem over the span its shootout needs, unless ``params`` set the span.

    The zoo's spans suit tests of accuracy -- one Kepler orbit, one period
    of the oscillator -- but a comparison needs several periods: the orbit's
    period is measured between pericentre passages, and bounded and secular
    drift are told apart over several oscillations
    (:func:`odekit.analysis.invariant_drift` calls fewer than about three
    "too short").  A periodic problem (kepler, arenstorf, pendulum,
    harmonic_oscillator, rotation, mass_spring_chain) therefore runs for
    :data:`PERIODS` (ten) periods of its motion, computed from its
    parameters; the others keep the zoo's span (henon_heiles: 100 time
    units, outer_solar_system: 200,000 days).

    Parameters
    ----------
    name : str
        A problem of :mod:`odekit.problems`.
    **params
        Its parameters; with ``t_end`` (or ``orbits``) among them the span is
        theirs.

    Returns
    -------
    ODEProblem or SecondOrderProblem

    Examples
    --------
    >>> shootout_problem("kepler").t_span            # doctest: +SKIP
    (0.0, 62.83185307179586)
    """
    prob = zoo_problem(name, **params)          # checks the name and the parameters
    if name not in PERIOD or "t_end" in params or "orbits" in params:
        return prob
    arguments = inspect.signature(problems.PROBLEMS[name]).bind(**params)
    arguments.apply_defaults()
    period = PERIOD[name](arguments.arguments)
    if not (math.isfinite(period) and period > 0):  # a pendulum on its separatrix never comes back
        return prob
    return prob.with_span((prob.t_span[0], prob.t_span[0] + PERIODS * period))


def _budget(budget):
    if not checks.is_real(budget):
        raise checks.fail("budget", "a number (of evaluations per unit time)", budget)
    return checks.positive("budget", budget, "a positive number of evaluations per unit time")


def _methods(prob, methods):
    if methods is None:
        return [m for m in map(lookup_method, DEFAULT_METHODS) if m.applies_to(prob)]
    if isinstance(methods, (str, Method)):
        methods = [methods]
    if not isinstance(methods, Iterable):
        raise TypeError(f"methods must be a method name, a Method or a list of them, got {type(methods).__name__}")
    chosen = [lookup_method(m) for m in methods]
    if not chosen:
        raise ValueError("methods is empty; give at least one method name")
    for m in chosen:
        if m.evaluations_per_step is None:
            raise ValueError(f"method {m.name!r} spends a varying number of evaluations per step "
                             "(Newton iterations), so it has no place in an equal-budget shootout")
        refused = m.refusal(prob)
        if refused:
            raise ValueError(f"method {m.name!r} does not apply to problem {prob.name!r}: {refused}")
    return chosen


def _reference(prob, backend, progress):
    """The exact solution, or else a dense dp54 run at rtol 1e-12, atol 1e-14, made before the runs."""
    if prob.exact is not None:
        return Reference(prob, "exact")
    dense = solve(prob, "dp54", rtol=1e-12, atol=1e-14, dense_output=True, backend=backend, progress=progress)
    if not dense.success:
        raise IntegrationError(dense.status, f"the reference solution of {prob.name!r} failed: {dense.message}")
    return Reference(prob, dense)


def _measure(sol, m, h, reference):
    prob = sol.problem
    picks = np.unique(np.linspace(0, len(sol.t) - 1, SAMPLES).astype(int))
    truth = reference.states(sol.t[picks], sol.y.shape[1:])
    error = math.nan
    if sol.success:
        deviation = sol.y[picks] - truth
        error = float(np.max(np.abs(deviation[:, 0] if prob.second_order else deviation)))
    row = {"method": m.name, "h": h, "steps": sol.stats.naccepted, "nfev": sol.stats.nfev, "error": error}
    lost = _energy_error(sol, picks, truth)
    row.update(_drifts(sol) if lost is None else {"energy_error": float(lost.max()) if sol.success else math.nan})
    for name, quantity in QUANTITIES.get(prob.name, {}).items():
        row[name] = quantity(sol)
    if not sol.success:
        row["status"] = sol.status.name
    return row, None if lost is None else (sol.t[picks], lost)


def _energy_error(sol, picks, truth):
    """A problem whose energy is not conserved (damping, impacts): the deviation of the run's energy from
    the true one, relative to the initial energy, at the states ``sol.y[picks]`` and ``truth``.

    None when the problem has no energy, or when the true energy stays within
    :data:`CONSERVED` of its start: the drift from the start then measures
    the method (:func:`_drifts`), where on a damped pendulum it measured the
    damping -- 1 and "too short" for every method.
    """
    prob = sol.problem
    if "energy" not in prob.invariants:
        return None
    g, t = prob.invariants["energy"], sol.t[picks]
    true = np.array([prob.evaluate_invariant(g, ti, yi) for ti, yi in zip(t, truth)])
    scale = abs(true[0]) or 1.0
    if np.max(np.abs(true - true[0])) <= CONSERVED * scale:
        return None
    mine = np.array([prob.evaluate_invariant(g, ti, yi) for ti, yi in zip(t, sol.y[picks])])
    return np.abs(mine - true) / scale


def _drifts(sol):
    names = sol.problem.invariants
    out = {"energy_drift": math.nan, "angular_momentum_drift": math.nan}
    if "energy" in names:
        drift = analysis.invariant_drift(sol, "energy")
        out.update(energy_drift=drift.max, energy_change=drift.signed_final, energy_trend=drift.trend)
    if "angular_momentum" in names:
        out["angular_momentum_drift"] = analysis.invariant_drift(sol, "angular_momentum").max
    return out


# --- what matters for particular problems --------------------------------------------

def _radius(sol):
    return np.linalg.norm(sol.x, axis=1)


def _period(sol):
    """Mean time between successive pericentre passages (minima of the radius), or nan."""
    r, t = _radius(sol), sol.t
    i = np.flatnonzero((r[1:-1] < r[:-2]) & (r[1:-1] <= r[2:])) + 1
    if len(i) < 2:
        return math.nan
    # refine each minimum by the vertex of the parabola through its neighbours
    den = r[i - 1] - 2 * r[i] + r[i + 1]
    shift = np.where(den > 0, 0.5 * (r[i - 1] - r[i + 1]) / np.where(den > 0, den, 1.0), 0.0)
    passages = t[i] + shift * (t[i + 1] - t[i])
    return float(np.mean(np.diff(passages)))


def _eccentricity(sol):
    """(r_max - r_min) / (r_max + r_min) over the last orbit-long stretch of the run."""
    period = _period(sol)
    r = _radius(sol)
    if math.isfinite(period):
        r = r[sol.t >= sol.t[-1] - period]
    return float((r.max() - r.min()) / (r.max() + r.min()))


QUANTITIES = {
    "kepler": {
        "min_radius": lambda sol: float(_radius(sol).min()),
        "max_radius": lambda sol: float(_radius(sol).max()),
        "period": _period,
        "eccentricity": _eccentricity,
    },
}


def format_cell(value):
    """A table cell: floats to four significant digits, nan as a dash."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.3e}" if value != 0 and (abs(value) < 1e-2 or abs(value) >= 1e4) else f"{value:.4g}"
    return str(value)
