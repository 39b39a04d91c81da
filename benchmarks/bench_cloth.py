"""Cloth benchmark: odekit's implicit cloth against SciPy's stiff solvers on the same sheet.

``odekit.problems.cloth(n)``: an ``n x n`` mass--spring sheet (``6 n^2``
unknowns) pinned at two corners falls and swings for ``T`` seconds.  Rows:

* odekit ``linearized_euler`` at ``h = 1/60`` s with conjugate gradients --
  Baraff & Witkin's one linear solve per frame, of the velocity system
  ``I - h A_v - h^2 A_x`` -- and with sparse LU;
* with ``--adaptive``, odekit ``bdf`` and ``radau5`` at rtol 1e-3, atol
  1e-6, sparse LU (the sheet's undamped spring modes keep adaptive
  high-order steps short: minutes at ``n = 64``);
* SciPy ``solve_ivp`` ``BDF`` and ``Radau`` at the same tolerances, with the
  same Numba-compiled force and the same analytic sparse Jacobian, in the
  first-order form SciPy needs (``[[0, I], [A_x, A_v]]``).  ``LSODA`` takes
  dense or banded Jacobians only: ``(6 n^2)^2`` doubles (4.8 GB at
  ``n = 64``), so it is not run.

SciPy gets a wall-clock budget (``--budget``, default 300 s per solve): a
solve that exceeds it is stopped, and its row reports the time as a lower
bound and the ratio as "at least".  Error: the largest position difference
(metres) at ``T`` from ``linearized_euler`` at ``h = 1/600`` s with sparse
LU (a tight adaptive reference costs too long at this size; the first-order
method's error at ``h = 1/60`` is about 10/9 of its difference from the
run at a tenth of the step).  One run per row (each takes seconds), after a
short warm-up run that compiles the force.

Run ``python benchmarks/bench_cloth.py [--n 64] [--T 0.25] [--budget 300] [--adaptive] [--quick]
[--json PATH]`` (``--quick``: ``--n 4 --T 0.05 --budget 10``).  A measurement, not a test: nothing is asserted.
"""

import time

import numpy as np
from scipy import sparse

import common
import odekit
from odekit import problems
from odekit.sparse import LinearSolver

RTOL, ATOL = 1e-3, 1e-6
QUICK = {"n": 4, "T": 0.05, "budget": 10.0}


class _OverBudget(Exception):
    pass


def first_order(problem, budget):
    """SciPy's view of the cloth: ``u = [x, v]``, ``f``, the sparse Jacobian, and a deadline."""
    import numba

    accel = numba.njit(problem.accel)
    N = problem.x0.size
    deadline = [np.inf]

    def f(t, u):
        if time.perf_counter() > deadline[0]:
            raise _OverBudget
        a = accel(t, u[:N].reshape(-1, 3), u[N:].reshape(-1, 3), *problem.args)
        return np.concatenate([u[N:], a.ravel()])

    def jac(t, u):
        A_x, A_v = problem.jac(t, u[:N].reshape(-1, 3), u[N:].reshape(-1, 3), *problem.args)
        return sparse.bmat([[None, sparse.identity(N)], [A_x, A_v]], format="csr")

    u0 = np.concatenate([problem.x0.ravel(), problem.v0.ravel()])
    f(0.0, u0)                                   # compile the force
    deadline[0] = -np.inf
    return f, jac, u0, deadline


def odekit_row(label, problem, method, solver, reference, **options):
    start = time.perf_counter()
    sol = odekit.solve(problem, method, linear_solver=solver, **options)
    seconds = time.perf_counter() - start
    s = sol.stats
    return {"solver": label, "seconds": seconds, "steps": s.naccepted, "nfev": s.nfev, "njev": s.njev,
            "nlu": s.nlu, "success": sol.success, "error": _error(sol.y[-1][0], reference)}


def scipy_row(name, problem, budget, reference):
    from scipy.integrate import solve_ivp

    f, jac, u0, deadline = first_order(problem, budget)
    start = time.perf_counter()
    deadline[0] = start + budget
    try:
        sol = solve_ivp(f, problem.t_span, u0, method=name, rtol=RTOL, atol=ATOL, jac=jac)
    except _OverBudget:
        return {"solver": f"SciPy {name}", "seconds": time.perf_counter() - start, "over_budget": True}
    seconds = time.perf_counter() - start
    x = sol.y[:problem.x0.size, -1].reshape(-1, 3)
    return {"solver": f"SciPy {name}", "seconds": seconds, "steps": len(sol.t) - 1, "nfev": sol.nfev,
            "njev": sol.njev, "nlu": sol.nlu, "success": bool(sol.success), "error": _error(x, reference)}


def _error(x, reference):
    return float(np.abs(x - reference).max())


def main(argv=None):
    parser = common.parser(__doc__)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--T", type=float, default=0.25, help="simulated seconds")
    parser.add_argument("--budget", type=float, default=300.0, help="wall seconds allowed each SciPy solve")
    parser.add_argument("--adaptive", action="store_true", help="add odekit's adaptive bdf and radau5")
    opts = parser.parse_args(argv)
    if opts.quick:
        vars(opts).update(QUICK)
    problem = problems.cloth(n=opts.n).with_span((0.0, opts.T))
    report = {"machine": common.machine(), "quick": opts.quick, "n": opts.n, "T": opts.T}
    common.print_header(f"odekit cloth benchmark: cloth(n={opts.n}), {6 * opts.n ** 2} unknowns, {opts.T:g} s "
                        "simulated", report["machine"], opts.quick)
    odekit.solve(problem.with_span((0.0, 2 / 60)), "linearized_euler", h=1 / 60)      # compile the force
    start = time.perf_counter()
    ref = odekit.solve(problem, "linearized_euler", h=1 / 600, linear_solver="splu")
    reference = ref.y[-1][0]
    print(f"  reference: odekit linearized_euler, h = 1/600 s, sparse LU ({time.perf_counter() - start:.0f} s)")
    print("  err = max |x - x_ref| at T, metres; adaptive rows at rtol 1e-3, atol 1e-6\n")
    rows = [
        odekit_row("odekit linearized_euler h=1/60, CG (ILU)", problem, "linearized_euler",
                   LinearSolver("cg", rtol=1e-6), reference, h=1 / 60),
        odekit_row("odekit linearized_euler h=1/60, CG (Jacobi)", problem, "linearized_euler",
                   LinearSolver("cg", rtol=1e-6, preconditioner="jacobi"), reference, h=1 / 60),
        odekit_row("odekit linearized_euler h=1/60, splu", problem, "linearized_euler", "splu", reference,
                   h=1 / 60),
    ]
    if opts.adaptive:
        rows += [odekit_row(f"odekit {name}, splu", problem, name, "splu", reference, rtol=RTOL, atol=ATOL)
                 for name in ("bdf", "radau5")]
    rows += [scipy_row(name, problem, opts.budget, reference) for name in ("BDF", "Radau")]
    table = []
    for r in rows:
        if r.get("over_budget"):
            table.append((r["solver"], f">{r['seconds']:.0f}", "", "", "", "", "", "stopped: over the budget"))
            continue
        table.append((r["solver"], f"{r['seconds']:.2f}", r["steps"], r["nfev"], r["njev"], r["nlu"],
                      f"{r['error']:.1e}", "" if r["success"] else "(did not succeed)"))
    common.print_table(("solver", "time s", "steps", "nfev", "njev", "nlu", "err m", ""), table, "lrrrrrrl")
    print("  SciPy LSODA: not run (dense or banded Jacobians only: "
          f"{(6 * opts.n ** 2) ** 2 * 8 / 1e9:.1f} GB)")
    scipy_rows = [r for r in rows if r["solver"].startswith("SciPy")]
    fastest = min(scipy_rows, key=lambda r: r["seconds"])
    bound = ", stopped: at least" if fastest.get("over_budget") else ""
    report.update(rows=rows, ratios={r["solver"]: fastest["seconds"] / r["seconds"] for r in rows
                                     if not r["solver"].startswith("SciPy")})
    common.print_ratios(f"fastest SciPy ({fastest['solver'][6:]}{bound}) time / odekit time", report["ratios"])
    common.write_json(opts.json, report)


if __name__ == "__main__":
    main()
