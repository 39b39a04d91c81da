"""Work--precision of the explicit pairs: every odekit pair against numbalsoda and SciPy, errors matched.

Two non-stiff problems, each solver given the same right-hand side written
in place in its own convention:

* Arenstorf's orbit over one period (``y(T) = y(0)``: the error is exact),
  the classic test of step-size control;
* the Lorenz equations (sigma 10, rho 28, beta 8/3) from ``(1, 1, 1)`` to
  ``t = 20``: chaotic, so that an error made early grows about ``e^18``
  times by the end -- a longer span leaves no digit to compare (at ``t =
  100`` every solver at every tolerance ends O(1) away); the reference is
  odekit ``vern9`` at ``rtol = 2.5e-14`` (the least double precision allows),
  checked against ``dop853`` there.

For each solver and ``rtol`` from 1e-3 down to 1e-13 (in half decades,
``atol = rtol * 1e-3``): the final error (max-norm, relative to the largest
component of the exact state) and the time of a solve (best of a few, after
a warm-up that compiles).  The figure, error against time, goes to
``--plot PATH`` (``benchmarks/figures/work_precision.png`` in the README).
The ratios compare, at each target error, the fastest odekit pair with
numbalsoda's ``dop853`` (Hairer's Fortran, its fastest non-stiff solver),
each at the loosest tolerance whose error meets the target -- found on the
ladder, then searched between its rungs (:func:`common.searched`; the
ratios on the ladder alone are printed after them): a ratio above 1 means
odekit is faster.  The tightest target stays ten times above the
problem's rounding floor (:func:`rounding_floor`, printed): below it a
solver meets a target by chance.  For Arenstorf one more ratio is issue
#17's own row: numbalsoda's ``dop853`` at ``rtol`` 1e-10 against odekit's
fastest pair at the error numbalsoda reached there.  numbalsoda (the ``peers`` extra) is skipped with a
note when missing.  Run ``python benchmarks/bench_pairs.py [--quick] [--json
PATH] [--plot PATH]``.  A measurement: nothing asserted.
"""

import dataclasses
import math

import numpy as np

import common
import odekit
from odekit import problems

SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
MU = problems.ARENSTORF_MU
PAIRS = ("bs32", "rkf45", "cash_karp", "dp54", "tsit5", "dop853", "vern7", "vern8", "vern9")


@dataclasses.dataclass(frozen=True)
class Sizes:
    rtols: tuple = tuple(10.0 ** (-k / 2) for k in range(6, 27))
    lorenz_end: float = 20.0
    # the tightest targets stay ten times above each problem's rounding floor (rounding_floor)
    targets: dict = dataclasses.field(default_factory=lambda: {"arenstorf": (1e-4, 1e-7, 1e-8),
                                                               "lorenz": (1e-3, 1e-5, 1e-7)})
    # issue #17's own row: numbalsoda's dop853 at this rtol, odekit's fastest pair at its error
    issue_rtol: dict = dataclasses.field(default_factory=lambda: {"arenstorf": 1e-10})
    scipy: bool = True
    timing: common.Timing = common.Timing(repeats=5, batch_seconds=0.1)


QUICK = Sizes(rtols=(1e-3, 1e-5), lorenz_end=1.0, targets={"arenstorf": (1.0,), "lorenz": (1.0,)},
              issue_rtol={"arenstorf": 1e-3}, scipy=False, timing=common.QUICK_TIMING)


def lorenz(t, u, du):
    du[0] = SIGMA * (u[1] - u[0])
    du[1] = u[0] * (RHO - u[2]) - u[1]
    du[2] = u[0] * u[1] - BETA * u[2]


def arenstorf(t, u, du):
    x, y, vx, vy = u[0], u[1], u[2], u[3]
    r1 = (x + MU) * (x + MU) + y * y
    r2 = (x - 1.0 + MU) * (x - 1.0 + MU) + y * y
    d1, d2 = r1 * math.sqrt(r1), r2 * math.sqrt(r2)
    du[0] = vx
    du[1] = vy
    du[2] = x + 2.0 * vy - (1.0 - MU) * (x + MU) / d1 - MU * (x - 1.0 + MU) / d2
    du[3] = y - 2.0 * vx - (1.0 - MU) * y / d1 - MU * y / d2


def cases(sizes):
    """``{name: (fun, y0, t_end)}``, the in-place functions in odekit's and SciPy's convention."""
    return {"arenstorf": (arenstorf, np.array([0.994, 0.0, 0.0, problems.ARENSTORF_V0]), problems.ARENSTORF_PERIOD),
            "lorenz": (lorenz, np.array([1.0, 1.0, 1.0]), sizes.lorenz_end)}


def reference(name, fun, y0, t_end):
    if name == "arenstorf":
        return y0                                            # periodic: back where it started
    ref, check = _end(fun, y0, t_end, "vern9"), _end(fun, y0, t_end, "dop853")
    print(f"  {name} reference: vern9 and dop853 at rtol 2.5e-14 differ by {_error(check, ref):.1e}")
    return ref


def _end(fun, y0, t_end, method):
    """The state at ``t_end`` from ``y0`` by ``method`` at ``rtol = 2.5e-14``, the least double precision allows."""
    prob = odekit.ODEProblem(fun, (0.0, t_end), y0, inplace=True, autonomous=True)
    return odekit.solve(prob, method, rtol=2.5e-14, atol=1e-16, t_eval=[t_end]).y[-1]


def rounding_floor(fun, y0, t_end):
    """The most the end state moves, relative to its largest component, when one component of ``y0`` moves
    by one unit in the last place (of the state's largest component where it is 0), both solved by
    ``vern9`` at ``rtol = 2.5e-14``.

    Double precision rounds every step by about that much, so an error
    below this says nothing about the method: whether a solver ends below a
    target there is chance (on Arenstorf a change of ``rtol`` by 0.3 % moved
    ``vern8``'s error from 8e-11 to 1.1e-9).
    """
    base, moved = _end(fun, y0, t_end, "vern9"), 0.0
    for k in range(len(y0)):
        y = y0.copy()
        y[k] += np.spacing(abs(y0[k]) if y0[k] != 0.0 else np.max(np.abs(y0)))
        moved = max(moved, _error(_end(fun, y, t_end, "vern9"), base))
    return moved


def _error(y, ref):
    return float(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))


# --- the solvers: each solver(fun, y0, t_end) -> run(rtol) -> final state -------------------

def odekit_solver(method):
    def make(fun, y0, t_end):
        prob = odekit.ODEProblem(fun, (0.0, t_end), y0, inplace=True, autonomous=True)

        def run(rtol):
            sol = odekit.solve(prob, method, rtol=rtol, atol=rtol * 1e-3, t_eval=[t_end], max_steps=10 ** 7,
                               backend="numba")        # compiled from the first call: no first run on Python
            assert sol.success and sol.backend == "numba", sol.message
            return sol.y[-1]
        return run
    return make


def numbalsoda_solver(name):
    """numbalsoda's ``name`` called from Python as its README shows, or None when it is missing."""
    try:
        import numbalsoda
    except ImportError:
        return None
    import numba

    solve = getattr(numbalsoda, name)

    def make(fun, y0, t_end):
        inner = numba.njit(fun)

        @numba.cfunc(numbalsoda.lsoda_sig)
        def rhs(t, u, du, p):
            inner(t, u, du)

        address, t_eval = rhs.address, np.array([0.0, t_end])

        def run(rtol):
            usol, success = solve(address, y0, t_eval, rtol=rtol, atol=rtol * 1e-3, mxstep=10 ** 7)
            assert success
            return usol[-1]
        return run
    return make


def scipy_solver(method):
    def make(fun, y0, t_end):
        from scipy.integrate import solve_ivp

        def f(t, u):
            du = np.empty_like(u)
            fun(t, u, du)
            return du

        def run(rtol):
            return solve_ivp(f, (0.0, t_end), y0, method, rtol=rtol, atol=rtol * 1e-3).y[:, -1]
        return run
    return make


def solvers(sizes):
    out = {f"odekit {m}": odekit_solver(m) for m in PAIRS}
    for name in ("dop853", "lsoda"):
        made = numbalsoda_solver(name)
        if made is None:
            print(f"  numbalsoda {name}  skipped: numbalsoda is not installed (the peers extra)")
        else:
            out[f"numbalsoda {name}"] = made
    if sizes.scipy:
        out["scipy DOP853"] = scipy_solver("DOP853")
    return out


def _fastest_ours(hits):
    """``(seconds, pair)`` of odekit's fastest pair in ``hits`` (``{label: (seconds, error, rtol) or None}``)."""
    return min(((hit[0], label.split()[1]) for label, hit in hits.items() if hit and label.startswith("odekit")),
               default=None)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 5))
    for ax, (case, by_solver) in zip(np.atleast_1d(axes), results.items()):
        for label, points in by_solver.items():
            err = [max(p[1], 1e-17) for p in points]
            style = "-o" if label.startswith("odekit") else "--s"
            ax.loglog([p[2] * 1e6 for p in points], err, style, ms=3, label=label)
        ax.set_xlabel("time of one solve (µs)")
        ax.set_ylabel("final error (relative, max norm)")
        ax.set_title(case)
        ax.grid(True, which="both", alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nwrote {path}")


def main():
    p = common.parser(__doc__)
    p.add_argument("--plot", metavar="PATH", help="draw error against time for every solver to PATH")
    args = p.parse_args()
    sizes = QUICK if args.quick else Sizes()
    m = common.machine()
    common.print_header("odekit explicit pairs: work against precision, errors matched", m, args.quick)
    results, ratios, ladder, report = {}, {}, {}, {"machine": m, "quick": args.quick, "cases": {}}
    for case, (fun, y0, t_end) in cases(sizes).items():
        ref = reference(case, fun, y0, t_end)
        floor = rounding_floor(fun, y0, t_end)
        print(f"  {case} rounding floor: one ulp in y0 moves the end by {floor:.1e}; the tightest target "
              f"{min(sizes.targets[case]):.0e} is {min(sizes.targets[case]) / floor:.0f} times that")
        runs = {label: make(fun, y0, t_end) for label, make in solvers(sizes).items()}

        def error(y, ref=ref):
            return _error(y, ref)
        results[case] = {label: common.measure(run, sizes.rtols, sizes.timing, error, slow=label.startswith("scipy"))
                         for label, run in runs.items()}

        def hits(target, labels, search=True):
            """Each solver of ``labels`` at ``target``: its tolerance searched between rungs, or the rung alone."""
            return {label: common.searched(runs[label], results[case][label], target, sizes.timing, error,
                                           slow=label.startswith("scipy")) if search
                    else common.at_target(results[case][label], target) for label in labels}

        odekit_pairs, peer_label = [label for label in runs if label.startswith("odekit")], "numbalsoda dop853"

        def retimed(hits, runs=runs):
            """The peer and odekit's fastest pairs in ``hits`` timed again together (see common.retimed)."""
            return common.retimed(hits, runs, sizes.timing, peer_label, [odekit_pairs])

        rows = []
        for target in sizes.targets[case]:
            best = retimed(hits(target, runs))
            for label, hit in best.items():
                rows.append((case, f"{target:.0e}", label) + ((f"{hit[2]:.1e}", f"{hit[1]:.1e}",
                                                                f"{hit[0] * 1e6:.1f}") if hit else ("-", "-", "-")))
            for table, found in ((ratios, best), (ladder, hits(target, runs, search=False))):
                ours, peer = _fastest_ours(found), found.get(peer_label)
                if ours and peer:
                    table[f"{case}, error {target:.0e}: numbalsoda dop853 / {ours[1]}"] = peer[0] / ours[0]
        issue = sizes.issue_rtol.get(case)
        peer = issue and min(results[case].get(peer_label, []), default=None,
                             key=lambda p: abs(math.log(p[0] / issue)))
        if peer:
            for table, search in ((ratios, True), (ladder, False)):
                found = dict(hits(peer[1], odekit_pairs, search), **{peer_label: (peer[2], peer[1], peer[0])})
                found = retimed(found) if search else found
                ours = _fastest_ours(found)
                if ours:
                    table[f"{case}, numbalsoda dop853 at rtol {issue:.0e} (error {peer[1]:.1e}) / {ours[1]}"] = (
                        found[peer_label][0] / ours[0])
        print()
        common.print_table(("problem", "error <=", "solver", "rtol", "error", "µs"), rows)
        report["cases"][case] = common.ladder_json(results[case])
    common.print_peer_ratios(ratios, results, "time of numbalsoda's dop853 / time of odekit's fastest pair at "
                             "the same error (above 1: odekit faster)", "pair")
    if ratios:
        common.print_ratios("the same, each solver at the loosest rung of the ladder meeting the target (before the "
                            "search between rungs)", ladder)
    report["ratios"], report["ratios_on_the_ladder"] = ratios, ladder
    if args.plot:
        plot(results, args.plot)
    common.write_json(args.json, report)


if __name__ == "__main__":
    main()
