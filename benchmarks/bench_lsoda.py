"""Small stiff systems: odekit's implicit methods against numbalsoda's LSODA, errors matched.

Issue 17 asks odekit to be ahead of numbalsoda's ``lsoda`` (Hindmarsh and
Petzold's LSODA in Fortran, called through a compiled right-hand side) at
equal error on the small stiff problems.  Four cases, each right-hand side
written once, in place, and given to every solver in its own convention:

* Robertson's kinetics to ``t = 1e5``, ``atol = rtol``;
* Robertson's kinetics to ``t = 1e11``, ``atol = rtol * 1e-4``;
* Van der Pol, ``mu = 1000``, to ``t = 3000``, ``atol = rtol``;
* HIRES to ``t = 321.8122``, ``atol = rtol * 1e-4``.

odekit's ``bdf``, ``rodas4``, ``rodas5p``, ``radau5`` and ``kencarp4`` run compiled, each
with the analytic Jacobian and without one (finite differences, as
numbalsoda's LSODA has: the like-for-like rows).  The reference is odekit's
``radau5`` at ``rtol`` 1e-12 (``atol`` scaled likewise), checked against
``bdf`` there; for HIRES the Test Set's published solution.  The error is
``max_i |y_i - ref_i| / max(|ref_i|, floor)``, the floor being the case's
``atol`` at ``rtol`` 1e-6 (as ``bench_stiff.error``).

For ``rtol`` from 1e-3 to 1e-11 in half decades: the time of a solve (best
of 5 timeit-style batches, after a warm-up that compiles) and its error.
The ratios compare, at three target errors per case, numbalsoda's ``lsoda``
with the fastest odekit method (with and without the Jacobian), each at the
loosest ``rtol`` whose error meets the target -- found on the ladder, then
searched between its rungs (:func:`common.searched`; the ratios on the
ladder alone are printed after them): above 1 means odekit is faster.
Last, the issue's two rows at their exact tolerances.  An error ``nan``: the
run reported success with a state of NaN (``lsoda`` at the loosest
tolerances on Robertson); ``failed``: it reported failure.  LSODA's
warnings go to stderr.  numbalsoda (the ``peers`` extra) is skipped with a
note when missing.  Run ``python benchmarks/bench_lsoda.py [--quick]
[--json PATH]``.  A measurement: nothing asserted.
"""

import dataclasses
import functools
import math

import numpy as np

import common
import odekit
from odekit import problems

METHODS = ("bdf", "rodas4", "rodas5p", "radau5", "kencarp4")
LSODA = "numbalsoda lsoda"
REF_RTOL = 1e-12
K1, K2, K3 = 0.04, 3e7, 1e4          # Robertson's rates
MU = 1000.0                          # Van der Pol's


# --- the right-hand sides, in place, and their Jacobians ---------------------------------------

def robertson(t, u, du):
    fast = K3 * u[1] * u[2]
    slow = K2 * u[1] * u[1]
    du[0] = -K1 * u[0] + fast
    du[1] = K1 * u[0] - fast - slow
    du[2] = slow


def robertson_jac(t, u):
    return np.array([[-K1, K3 * u[2], K3 * u[1]],
                     [K1, -K3 * u[2] - 2.0 * K2 * u[1], -K3 * u[1]],
                     [0.0, 2.0 * K2 * u[1], 0.0]])


def van_der_pol(t, u, du):
    du[0] = u[1]
    du[1] = MU * (1.0 - u[0] * u[0]) * u[1] - u[0]


def van_der_pol_jac(t, u):
    return np.array([[0.0, 1.0],
                     [-2.0 * MU * u[0] * u[1] - 1.0, MU * (1.0 - u[0] * u[0])]])


def hires(t, u, du):
    fast = 280.0 * u[5] * u[7]
    slow = 1.81 * u[6]
    du[0] = -1.71 * u[0] + 0.43 * u[1] + 8.32 * u[2] + 0.0007
    du[1] = 1.71 * u[0] - 8.75 * u[1]
    du[2] = -10.03 * u[2] + 0.43 * u[3] + 0.035 * u[4]
    du[3] = 8.32 * u[1] + 1.71 * u[2] - 1.12 * u[3]
    du[4] = -1.745 * u[4] + 0.43 * u[5] + 0.43 * u[6]
    du[5] = -fast + 0.69 * u[3] + 1.71 * u[4] - 0.43 * u[5] + 0.69 * u[6]
    du[6] = fast - slow
    du[7] = slow - fast


hires_jac = problems.hires().jac          # the zoo's, jac(t, y) -> (8, 8) array, as ODEProblem takes it


@dataclasses.dataclass(frozen=True)
class Case:
    """A problem at the tolerances of a ladder, ``atol = rtol * atol_factor``, and its target errors."""

    label: str
    fun: object
    jac: object
    y0: tuple
    t_end: float
    atol_factor: float
    targets: tuple                   # errors every solver reaches on the ladder
    published: tuple = None

    @property
    def floor(self):
        """The error's floor: the case's atol at rtol 1e-6."""
        return 1e-6 * self.atol_factor

    def error(self, y, ref):
        """``max_i |y_i - ref_i| / max(|ref_i|, floor)`` (inf for a failed run)."""
        if y is None:
            return math.inf
        return float(np.max(np.abs(y - ref) / np.maximum(np.abs(ref), self.floor)))


ROBERTSON_1E5 = Case("Robertson, t to 1e5", robertson, robertson_jac, (1.0, 0.0, 0.0), 1e5, 1.0,
                     (1e-3, 1e-5, 1e-7))
ROBERTSON_1E11 = Case("Robertson, t to 1e11", robertson, robertson_jac, (1.0, 0.0, 0.0), 1e11, 1e-4,
                      (1e-3, 1e-4, 1e-5))
CASES = (ROBERTSON_1E5, ROBERTSON_1E11,
         Case("Van der Pol mu=1000, t to 3000", van_der_pol, van_der_pol_jac, (2.0, 0.0), 3000.0, 1.0,
              (1e-3, 1e-5, 1e-7)),
         Case("HIRES, t to 321.8122", hires, hires_jac, problems.HIRES_Y0, problems.HIRES_T_END, 1e-4,
              (1e-4, 1e-6, 1e-8), problems.HIRES_REFERENCE))
# the issue's two rows: (case, rtol)
ISSUE_ROWS = ((ROBERTSON_1E5, 1e-8), (ROBERTSON_1E11, 1e-6))


@dataclasses.dataclass(frozen=True)
class Sizes:
    cases: tuple = CASES
    rtols: tuple = tuple(10.0 ** (-k / 2) for k in range(6, 23))
    timing: common.Timing = common.Timing(repeats=5, batch_seconds=0.1)
    methods: tuple = METHODS
    judges: tuple = ("radau5", "bdf")         # reference()'s


# (bdf alone: each other method compiled its loop for this script's problems only, 10 s of a cold CI run each)
QUICK = Sizes(cases=(dataclasses.replace(ROBERTSON_1E5, label="Robertson, t to 100", t_end=100.0, targets=(1.0,)),),
              rtols=(1e-3, 1e-5), timing=common.QUICK_TIMING, methods=("bdf",), judges=("bdf", "bdf"))


# --- the solvers: each solver(case) -> run(rtol) -> final state, or None if it failed -----------

def odekit_solver(method, analytic):
    def make(case):
        prob = odekit.ODEProblem(case.fun, (0.0, case.t_end), np.array(case.y0), jac=case.jac if analytic else None,
                                 inplace=True, autonomous=True)

        def run(rtol):
            sol = odekit.solve(prob, method, rtol=rtol, atol=rtol * case.atol_factor, t_eval=[case.t_end],
                               max_steps=10 ** 7, backend="numba")
            assert sol.backend == "numba", sol.message
            return sol.y[-1] if sol.success else None
        return run
    return make


def lsoda_solver():
    """numbalsoda's ``lsoda`` called from Python as its README shows, or None when it is missing."""
    try:
        import numbalsoda
    except ImportError:
        return None
    import numba

    def make(case):
        inner = numba.njit(case.fun)

        @numba.cfunc(numbalsoda.lsoda_sig)
        def rhs(t, u, du, p):
            inner(t, u, du)

        address, y0, t_eval = rhs.address, np.array(case.y0), np.array([0.0, case.t_end])

        def run(rtol):
            usol, success = numbalsoda.lsoda(address, y0, t_eval, rtol=rtol, atol=rtol * case.atol_factor,
                                             mxstep=10 ** 7)
            return usol[-1] if success else None
        return run
    return make


def solvers(methods):
    """``{label: make}``: odekit's ``methods`` with (``J``) and without (``fd``) the Jacobian, then lsoda."""
    out = {}
    for method in methods:
        out[f"{method} J"] = odekit_solver(method, analytic=True)
        out[f"{method} fd"] = odekit_solver(method, analytic=False)
    made = lsoda_solver()
    if made is None:
        print(f"  {LSODA}  skipped: numbalsoda is not installed (the peers extra)")
    else:
        out[LSODA] = made
    return out


@functools.cache
def reference(case, judge="radau5", check="bdf"):
    """The final state to measure against: published, or odekit's ``judge`` at rtol 1e-12 (checked by ``check``)."""
    tight = {m: odekit_solver(m, analytic=True)(case)(REF_RTOL) for m in (judge, check)}
    assert tight[judge] is not None and tight[check] is not None, f"{case.label}: a reference solve failed"
    if case.published is not None:
        ref = np.array(case.published)
        print(f"  {case.label} reference: published; {judge} / {check} at rtol {REF_RTOL:g} differ from it by "
              f"{case.error(tight[judge], ref):.1e} / {case.error(tight[check], ref):.1e}")
        return ref
    print(f"  {case.label} reference: {judge} at rtol {REF_RTOL:g}, atol {REF_RTOL * case.atol_factor:g}; "
          f"{check} there differs by {case.error(tight[check], tight[judge]):.1e}")
    return tight[judge]


# --- the tables -------------------------------------------------------------------------------

def _cell(point):
    rtol, error, seconds = point
    return f"{seconds * 1e6:.0f} " + ("failed" if error == math.inf else f"{error:.0e}")


def print_case(case, by_solver):
    print(f"\n{case.label}  (atol = rtol * {case.atol_factor:g}; error floor {case.floor:g}): "
          "µs per solve and error; J = analytic Jacobian, fd = finite differences")
    rtols = sorted({p[0] for points in by_solver.values() for p in points}, reverse=True)
    cells = {label: {p[0]: _cell(p) for p in points} for label, points in by_solver.items()}
    rows = [(f"{rtol:.1e}", *(cells[label].get(rtol, "-") for label in by_solver)) for rtol in rtols]
    common.print_table(("rtol", *by_solver), rows)


def at_targets(case, by_solver, search, retime):
    """Print lsoda and the fastest odekit method at each target error; ``{name: lsoda time / odekit time}``, with
    each solver's tolerance searched between the ladder's rungs and on the ladder alone.

    Each solver at the loosest rtol meeting the target (``search(label,
    points, target)``: see :func:`common.searched`), odekit's fastest with
    the analytic Jacobian and with finite differences apart; lsoda and the
    fastest of each kind then timed again together (``retime(hits, groups)``:
    see :func:`common.retimed`).
    """
    ratios, ladder, rows = {}, {}, []
    kinds = {kind: [label for label in by_solver if label.endswith(" " + kind)] for kind in ("J", "fd")}
    for target in case.targets:
        searched = {label: search(label, points, target) for label, points in by_solver.items()}
        for table, hits in ((ratios, retime(searched, kinds.values())),
                            (ladder, {label: common.at_target(points, target) for label, points in by_solver.items()})):
            peer = hits.pop(LSODA, None)
            best = [peer and (LSODA, peer)]
            for labels in kinds.values():
                ours = [(hits[label], label) for label in labels if hits[label]]
                hit, label = min(ours) if ours else (None, None)
                best.append(hit and (label, hit))
                if peer and hit:
                    table[f"{case.label}, error {target:.0e}: lsoda / {label}"] = peer[0] / hit[0]
            if table is ratios:
                rows += [(f"{target:.0e}", label, f"{rtol:.1e}", f"{error:.1e}", f"{seconds * 1e6:.1f}")
                         for label, (seconds, error, rtol) in filter(None, best)]
    print("  at each target error: lsoda and odekit's fastest, each at the loosest rtol meeting it (searched between "
          "the ladder's rungs)")
    common.print_table(("error <=", "solver", "rtol", "error", "µs"), rows, "rlrrr", indent="    ")
    return ratios, ladder


def issue_rows(makers, sizes):
    """The issue's rows at their exact tolerances: time and error of lsoda, bdf and rodas4."""
    print("\nissue 17's rows, at their tolerances")
    rows, report, timing = [], [], sizes.timing
    for case, rtol in ISSUE_ROWS:
        ref = reference(case, *sizes.judges)
        for label, make in makers.items():
            if label != LSODA and label.split()[0] not in ("bdf", "rodas4"):
                continue
            run = make(case)
            run(rtol)                                                        # compiles
            seconds, y = common.per_call(lambda: run(rtol), timing)
            error = case.error(y, ref)
            rows.append((case.label, f"{rtol:g}", f"{rtol * case.atol_factor:g}", label, f"{seconds * 1e6:.1f}",
                         f"{error:.1e}"))
            report.append({"case": case.label, "rtol": rtol, "solver": label, "seconds": seconds, "error": error})
    common.print_table(("case", "rtol", "atol", "solver", "µs", "error"), rows)
    return report


def main():
    args = common.parser(__doc__).parse_args()
    sizes = QUICK if args.quick else Sizes()
    m = common.machine()
    common.print_header("odekit's implicit methods against numbalsoda's LSODA on small stiff systems, "
                        "errors matched", m, args.quick)
    print(f"  time per solve: best of {sizes.timing.repeats} timeit-style batches, GC off (at each target, lsoda and "
          "odekit's fastest timed again together, in rounds); error = max |y - ref| / max(|ref|, floor) at t_end")
    makers, results, ratios, ladder = solvers(sizes.methods), {}, {}, {}
    for case in sizes.cases:
        ref = reference(case, *sizes.judges)
        runs = {label: make(case) for label, make in makers.items()}

        def error(y, case=case, ref=ref):
            return case.error(y, ref)

        def search(label, points, target, runs=runs, error=error):
            return common.searched(runs[label], points, target, sizes.timing, error)

        def retime(hits, groups, runs=runs):
            return common.retimed(hits, runs, sizes.timing, LSODA, groups)

        results[case.label] = {label: common.measure(run, sizes.rtols, sizes.timing, error)
                               for label, run in runs.items()}
        print_case(case, results[case.label])
        searched, on_ladder = at_targets(case, results[case.label], search, retime)
        ratios.update(searched)
        ladder.update(on_ladder)
    report = {"machine": m, "quick": args.quick, "issue_rows": issue_rows(makers, sizes),
              "cases": {case: common.ladder_json(by_solver) for case, by_solver in results.items()}}
    common.print_peer_ratios(ratios, results, "time of numbalsoda's lsoda / time of odekit's fastest method at "
                             "the same error (above 1: odekit faster)", "method")
    if ratios:
        common.print_ratios("the same, each solver at the loosest rung of the ladder meeting the target (before the "
                            "search between rungs)", ladder)
    report["ratios"], report["ratios_on_the_ladder"] = ratios, ladder
    common.write_json(args.json, report)


if __name__ == "__main__":
    main()
