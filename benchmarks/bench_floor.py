"""How fast could any solver be on the small stiff problems?  A floor, measured.

Issue 4's target is 50x the fastest SciPy solver, ``LSODA``, on Robertson,
Van der Pol (mu = 1000) and HIRES.  LSODA's stepping is compiled Fortran;
its time is almost all calls of the Python right-hand side and Jacobian.
This script asks what 50x would take.  It times, compiled with Numba and
each alone in a loop, the parts every step of an implicit solver is made of:

* the zoo's right-hand side as written (it returns a new array), and the
  allocation of that array alone -- what an in-place function
  (``inplace=True``) would save;
* a solve with the LU factors of the ``n x n`` Newton matrix, odekit's
  ``lu_solve``, and a weighted RMS norm of the correction, ``error_norm``;
* the zoo's Jacobian, and forming and factoring the Newton matrix.

Then it prices the work LSODA itself did -- its own counts of evaluations
and Jacobians, each evaluation with one Newton solve and one norm -- at
those compiled costs, with no fixed cost and nothing else per step: less
than any implementation of LSODA's algorithm could take.  LSODA needs the
fewest evaluations of the eight solvers in ``bench_stiff.py`` on Robertson
and Van der Pol; on HIRES odekit's ``bdf`` needs fewer, so its counts are
priced too, beside its measured time.  Where a floor is above LSODA's time
/ 50, no speed-up of the code reaches the target with that algorithm.

Run ``python benchmarks/bench_floor.py [--quick] [--json PATH]``.  A measurement: nothing asserted.
"""

import time

import numba
import numpy as np

import common
import odekit
import odekit.kernels.jit  # noqa: F401  (lets Numba compile odekit's kernel helpers below)
from odekit.kernels.primitives import copy_row, error_norm, lu_factor, lu_solve, shifted_identity

TARGET = 50.0
REPEAT = 20_000             # loop iterations timed per part; --quick: 200


@numba.njit
def _calls(f, t, y, args, k):
    s = 0.0
    for _ in range(k):
        s += f(t, y, *args)[0]          # used, so that the call is not optimised away
    return s


@numba.njit
def _allocations(n, k):
    s = 0.0
    for _ in range(k):
        a = np.empty(n)                 # what returning a new array costs, alone
        a[0] = s
        s += 0.5 * a[0]
    return s


@numba.njit
def _newton_parts(LU, piv, W, tol, k):
    """``k`` times: a correction into row 0 from row 1, solved with the factors, and its norm."""
    s = 0.0
    for _ in range(k):
        copy_row(W, 0, W, 1)
        lu_solve(LU, piv, W, 0)
        s += error_norm(W, 0, 2, 2, tol)
    return s


@numba.njit
def _factorisations(jac, t, y, args, M, piv, k):
    ok = 0
    for _ in range(k):
        J = jac(t, y, *args)
        shifted_identity(M, J, 1e-3)
        ok += lu_factor(M, piv)
    return ok


def _per_call(run, k):
    """Seconds per iteration of ``run(k)``: the best of five, after a compiling call.

    Not common's ``per_call``, which averages batches of 0.2 s: a floor
    wants the least a part costs, the best of short runs of the compiled
    loop, which the rest of the machine disturbs least.
    """
    run(10)
    best = np.inf
    for _ in range(5):
        start = time.perf_counter()
        run(k)
        best = min(best, time.perf_counter() - start)
    return best / k


def parts(prob, repeat):
    """Compiled seconds per right-hand side (and its allocation), Newton solve + norm, Jacobian + LU.

    Each part is timed over ``repeat`` iterations (Jacobian + LU a tenth of them).
    """
    f, jac = numba.njit(prob.fun), numba.njit(prob.jac)
    t, y, args = prob.t_span[0], prob.y0.copy(), tuple(prob.args)
    n = y.size
    W = np.zeros((3, n))
    W[1], W[2] = 1e-3, y
    tol = np.vstack([np.full(n, 1e-6), np.full(n, 1e-10)])
    LU, piv = np.zeros((n, n)), np.zeros(n, dtype=np.int64)
    shifted_identity(LU, np.asarray(jac(t, y, *args)), 1e-3)
    lu_factor(LU, piv)
    M = np.zeros((n, n))
    return {"rhs": _per_call(lambda k: _calls(f, t, y, args, k), repeat),
            "allocation": _per_call(lambda k: _allocations(n, k), repeat),
            "solve_norm": _per_call(lambda k: _newton_parts(LU, piv, W, tol, k), repeat),
            "jac_lu": _per_call(lambda k: _factorisations(jac, t, y, args, M, piv, k), repeat // 10)}


def lsoda(prob, atol, timing):
    from scipy.integrate import solve_ivp

    seconds, sol = common.per_call(lambda: solve_ivp(prob.fun, prob.t_span, prob.y0, method="LSODA", rtol=1e-6,
                                                     atol=atol, jac=prob.jac, args=prob.args), timing)
    return seconds, int(sol.nfev), int(sol.njev)


def main(argv=None):
    options = common.parser(__doc__).parse_args(argv)
    timing, repeat = (common.QUICK_TIMING, 200) if options.quick else (common.Timing(), REPEAT)
    report = {"machine": common.machine(), "quick": options.quick, "cases": []}
    common.print_header(f"odekit floor benchmark: LSODA's own work priced at compiled costs, target {TARGET:g}x "
                        "LSODA", report["machine"], options.quick)
    for label, prob, atol, _ in common.stiff_problems(quick=options.quick):
        seconds, nfev, njev = lsoda(prob, atol, timing)
        ours, sol = common.per_call(lambda: odekit.solve(prob, "bdf", rtol=1e-6, atol=atol), timing)
        c = parts(prob, repeat)
        print(f"\n{label} (n = {prob.y0.size})")
        print(f"  LSODA {seconds * 1e3:.3f} ms with nfev {nfev}, njev {njev}: "
              f"{seconds / (nfev + njev) * 1e6:.2f} us per call of the Python functions")
        print(f"  compiled parts, ns: rhs {c['rhs'] * 1e9:.1f} (of which allocating the result "
              f"{c['allocation'] * 1e9:.1f}), LU solve + norm {c['solve_norm'] * 1e9:.1f}, "
              f"Jacobian + LU {c['jac_lu'] * 1e9:.1f}")
        print(f"  target, LSODA / {TARGET:g}: {seconds / TARGET * 1e6:.1f} us")
        ratios = {}
        for who, counts in (("LSODA's", (nfev, njev)), ("odekit bdf's", (sol.stats.nfev, sol.stats.njev))):
            floor = counts[0] * (c["rhs"] + c["solve_norm"]) + counts[1] * c["jac_lu"]
            inplace = floor - counts[0] * min(c["allocation"], c["rhs"])
            print(f"  floor at {who} counts {counts}: {floor * 1e6:.1f} us; "
                  f"with an in-place rhs {inplace * 1e6:.1f} us")
            ratios[f"LSODA / floor at {who} counts"] = seconds / floor
            ratios[f"LSODA / floor at {who} counts, in-place rhs"] = seconds / inplace
        print(f"  odekit bdf measured: {ours * 1e6:.1f} us")
        ratios["LSODA / odekit bdf measured"] = seconds / ours
        common.print_ratios(f"LSODA's time / the floor: at best this many times LSODA ({label})", ratios)
        report["cases"].append({"problem": label, "lsoda_s": seconds, "lsoda_nfev": nfev, "lsoda_njev": njev,
                                "bdf_s": ours, "parts_s": c, "ratios": ratios})
    common.write_json(options.json, report)


if __name__ == "__main__":
    main()
