"""Step control at equal error: PI with and without Gustafsson's prediction, and Gustafsson's own.

odekit's explicit, Runge-Kutta-Nystrom, Rosenbrock and diagonally implicit
pairs run PI control whose growth is bounded by Gustafsson's prediction
(``PIController``'s default for them, see its docstring).  This script is
the measurement behind that choice: for each method, the evaluations that
each of three controllers spends to reach the same error,

* ``PI``: PI gains (Hairer's DOPRI5's, scaled to the method's order), no bound;
* ``PI + prediction``: the same gains, the growth bounded by the prediction;
* ``Gustafsson``: his integral gains ``beta1 = 1/k, beta2 = 0`` with the bound
  (RADAU5's controller),

in three suites: the explicit pairs on nine non-stiff problems and the
Nystrom pairs on four second-order ones (``atol = rtol * 1e-3``, against
vern9 at rtol 2.5e-14, checked by dop853), and the Rosenbrock and diagonally
implicit pairs on the stiff problems of ``bench_lsoda`` (with their
``atol``, against radau5 at rtol 1e-12, checked by bdf).  Each method runs
at ``rtol`` from 1e-2 in eighths of a decade.  The error is ``max_i |y_i -
ref_i| / amp_i`` at the end, ``amp_i`` the largest ``|y_i|`` over the
reference's steps (so an end component near zero does not rule it); targets
stay 30 times above the two references' difference.  At each half-decade
target error that every controller brackets on its grid, the evaluations are
read off a straight line fitted to ``log nfev`` against ``log error`` over
the runs within half a decade of it (the fewest evaluations meeting the
target, as the other benchmarks take them, jump with the end-point error's
dips on periodic orbits).  Printed: the ratios of evaluations per method and
problem (geometric means over the targets), per method, per problem,
overall, and the share of rejected attempts.  Counts, not times: the same on
every machine.  Run ``python benchmarks/bench_controllers.py [--quick]
[--json PATH]``.  A measurement: nothing asserted.
"""

import collections
import dataclasses
import math

import numpy as np

import common
import odekit
from odekit.controllers import PIController


@dataclasses.dataclass(frozen=True)
class Suite:
    """Methods on problems: ``{label: (zoo name, parameters, atol / rtol)}``, the reference and its check."""

    title: str
    problems: dict
    methods: tuple
    judges: tuple
    tightest: float         # the references' rtol
    decades: int            # the methods' rtols: 1e-2 down to 1e-(2 + decades)


NON_STIFF = Suite("explicit pairs, non-stiff problems",
                  {"arenstorf": ("arenstorf", {}, 1e-3), "kepler e=0.9": ("kepler", dict(e=0.9, orbits=3), 1e-3),
                   "lorenz": ("lorenz", {}, 1e-3), "henon_heiles": ("henon_heiles", {}, 1e-3),
                   "brusselator": ("brusselator", {}, 1e-3), "van_der_pol mu=1": ("van_der_pol", dict(mu=1.0), 1e-3),
                   "pendulum": ("pendulum", {}, 1e-3), "outer_solar_system": ("outer_solar_system", {}, 1e-3),
                   "charged_particle": ("charged_particle", {}, 1e-3)},
                  ("bs32", "cash_karp", "dp54", "tsit5", "dop853", "vern7", "vern8", "vern9"), ("vern9", "dop853"),
                  2.5e-14, 10)
NYSTROM = Suite("Runge-Kutta-Nystrom pairs, second-order problems",
                {"kepler e=0.5": ("kepler", dict(e=0.5, orbits=3), 1e-3),
                 "kepler e=0.9": ("kepler", dict(e=0.9, orbits=3), 1e-3),
                 "henon_heiles": ("henon_heiles", {}, 1e-3), "outer_solar_system": ("outer_solar_system", {}, 1e-3)},
                ("dprkn6", "dprkn8", "dprkn12"), ("vern9", "dop853"), 2.5e-14, 10)
STIFF = Suite("Rosenbrock and diagonally implicit methods, stiff problems",
              {"Robertson to 1e5": ("robertson", dict(t_end=1e5), 1.0),
               "Robertson to 1e11": ("robertson", dict(t_end=1e11), 1e-4),
               "Van der Pol mu=1000": ("van_der_pol", dict(mu=1000.0, t_end=3000.0), 1.0),
               "HIRES": ("hires", {}, 1e-4)},
              ("rodas4", "rodas5p", "kencarp4", "trbdf2"), ("radau5", "bdf"), 1e-12, 8)
QUICK = (dataclasses.replace(NON_STIFF, problems={"arenstorf": NON_STIFF.problems["arenstorf"]}, methods=("dp54",),
                             decades=4),
         dataclasses.replace(STIFF, problems={"Robertson to 100": ("robertson", dict(t_end=100.0), 1.0)},
                             methods=("rodas4",), decades=4))
BOUNDED = "PI + prediction"
CONTROLLERS = {"PI": lambda k: PIController(predictive=False), BOUNDED: lambda k: PIController(predictive=True),
               "Gustafsson": lambda k: PIController(predictive=True, beta1=1 / k, beta2=0.0)}
FLOOR = 30              # targets at least this many times the references' difference


def end_state(prob, method, rtol, atol_factor, controller=None):
    """``(y at t_end flattened, stats)``, or ``(None, stats)`` when the run failed."""
    sol = odekit.solve(prob, method, rtol=rtol, atol=rtol * atol_factor, t_eval=[prob.t_span[1]],
                       controller=controller, backend="numba")
    return (np.ravel(sol.y[-1]) if sol.success else None), sol.stats


def reference(prob, suite, atol_factor):
    """``(end state, amplitudes, floor)``: the suite's judge at its tightest rtol, the largest |y_i| over its
    steps, the targets' floor (from the difference of its check there)."""
    judge, check = (odekit.solve(prob, m, rtol=suite.tightest, atol=suite.tightest * atol_factor, backend="numba")
                    for m in suite.judges)
    ref = np.ravel(judge.y[-1])
    amp = np.maximum(np.abs(np.reshape(judge.y, (len(judge.t), -1))).max(axis=0), 1e-300)
    return ref, amp, FLOOR * float(np.max(np.abs(np.ravel(check.y[-1]) - ref) / amp))


def fitted(points, target):
    """Evaluations at ``target`` on the line through the runs within half a decade of it (None if too few)."""
    near = [(math.log10(e), math.log10(n)) for e, n in points if abs(math.log10(e / target)) <= 0.5]
    if len(near) < 3 or min(x for x, _ in near) > math.log10(target) or max(x for x, _ in near) < math.log10(target):
        return None
    x, y = np.array(near).T
    slope, intercept = np.polyfit(x, y, 1) if np.ptp(x) > 0 else (0.0, y.mean())
    return 10 ** (intercept + slope * math.log10(target))


def compare(prob, method, rtols, atol_factor, ref, amp, floor):
    """``({controller: [ratio of its evaluations to BOUNDED's, per target]}, {controller: (rejected, attempts)})``."""
    k = PIController().exponent(odekit.method(method))
    curves, rejected = {}, collections.Counter()
    for name, make in CONTROLLERS.items():
        controller, curves[name] = make(k), []
        for rtol in rtols:
            y, stats = end_state(prob, method, rtol, atol_factor, controller)
            rejected[name, 0] += stats.nrejected
            rejected[name, 1] += stats.nsteps
            if y is not None:
                curves[name].append((max(float(np.max(np.abs(y - ref) / amp)), 1e-300), stats.nfev))
                if len(curves[name]) > 1 and max(e for e, _ in curves[name][-2:]) < floor / 10:
                    break               # below what the reference can tell
    ratios = collections.defaultdict(list)
    for a in range(2, 27):
        target = 10 ** (-a / 2)
        if target < floor or any(not c or min(e for e, _ in c) > target for c in curves.values()):
            continue
        spent = {name: fitted(c, target) for name, c in curves.items()}
        if all(spent.values()):
            for name in CONTROLLERS:
                ratios[name].append(spent[name] / spent[BOUNDED])
    return ratios, {name: (rejected[name, 0], rejected[name, 1]) for name in CONTROLLERS}


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def main():
    args = common.parser(__doc__).parse_args()
    suites = QUICK if args.quick else (NON_STIFF, NYSTROM, STIFF)
    m = common.machine()
    common.print_header("odekit's step controllers: evaluations at equal error", m, args.quick)
    report = {"machine": m, "quick": args.quick}
    for suite in suites:
        report[suite.title] = run_suite(suite, 4 if args.quick else 8)
    common.write_json(args.json, report)


def run_suite(suite, steps):
    """Print the suite's tables, ``rtol`` in ``1/steps`` of a decade; its ratios as JSON."""
    rtols = [10 ** (-2 - j / steps) for j in range(suite.decades * steps + 1)]
    cells, rejections, groups = {}, {}, collections.defaultdict(list)
    for label, (name, params, atol_factor) in suite.problems.items():
        prob = odekit.problems.problem(name, **params)
        ref, amp, floor = reference(prob, suite, atol_factor)
        for method in suite.methods:
            ratios, rejected = compare(prob, method, rtols, atol_factor, ref, amp, floor)
            if ratios:
                cells[label, method] = cell = {c: geomean(r) for c, r in ratios.items()}
                rejections[label, method] = rejected
                for group in (f"method {method}", f"problem {label}", "all"):
                    groups[group].append(cell)
    others = [c for c in CONTROLLERS if c != BOUNDED]
    rows = [(f"{label} {method}", *(f"{cell[c]:.3f}" for c in others),
             *(f"{rejections[label, method][c][0] / max(rejections[label, method][c][1], 1):.3f}" for c in CONTROLLERS))
            for (label, method), cell in cells.items()]
    print(f"\n{suite.title}: evaluations of each controller / those of {BOUNDED!r} at equal error (geometric mean "
          "over the targets), and the share of attempts rejected")
    common.print_table(("problem, method", *others, *(f"rejected {c}" for c in CONTROLLERS)), rows)
    report = {"cells": {f"{label} {method}": cell for (label, method), cell in cells.items()}}
    for c in others:
        report[c] = {name: geomean([cell[c] for cell in group]) for name, group in sorted(groups.items())}
        common.print_ratios(f"{suite.title}: evaluations of {c!r} / those of {BOUNDED!r} at equal error (above 1: "
                            "the bound with the PI gains spends less)", report[c])
    return report


if __name__ == "__main__":
    main()
