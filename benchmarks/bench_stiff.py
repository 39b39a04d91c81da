"""Stiff benchmark: odekit's implicit methods against SciPy's stiff solvers, in one run.

Issue 4 asks odekit to be a stiff solver a user would choose over
``scipy.integrate.solve_ivp(method="Radau"/"BDF"/"LSODA")``.  This script
measures that on the classic small stiff problems, every reference in the
same process and run, and prints ratios:

* Robertson's kinetics (``odekit.problems.robertson``) to t = 1e11,
  atol 1e-10;
* Van der Pol with mu = 1000 (``van_der_pol(mu=1000)``) to t = 3000,
  atol 1e-6;
* HIRES (``odekit.problems.hires``) to t = 321.8122, atol 1e-10;

all at rtol 1e-6 (``--rtol R`` for another, each atol scaled by R / 1e-6).
odekit's ``radau5``, ``kencarp4``, ``rodas4``, ``trbdf2`` and ``bdf`` (each
skipped if the registry lacks it) run compiled; SciPy's ``Radau``, ``BDF``
and ``LSODA`` run on the same right-hand side, the zoo's Python function.
Both get the zoo's analytic Jacobian (odekit from the problem, SciPy
through ``jac=``).

For each solve: wall time per solve (timeit-style batches with garbage
collection off, after a warm-up solve that compiles), accepted and rejected
steps, f-evaluations, Jacobian evaluations, LU factorisations, and the
error at the final time against a tight reference -- SciPy's Radau at rtol
1e-12 and atol 1e-6 times the problem's, or for HIRES the Test Set's
published solution.  The error is ``max_i |y_i - ref_i| / max(|ref_i|,
atol)``: relative, with components below atol measured against atol.
Ratios: fastest SciPy time / odekit time for every odekit method, and
SciPy Radau / odekit radau5 and SciPy BDF / odekit bdf (the same methods).

Run ``python benchmarks/bench_stiff.py [--rtol R] [--quick] [--json PATH]``;
``--quick`` solves Robertson to t = 100 with ``bdf`` alone.
This is a measurement, not a test: nothing is asserted.
"""

import time

import numpy as np

import common
import odekit

REF_RTOL = 1e-12          # SciPy Radau reference; its atol is the problem's times REF_ATOL_FACTOR
REF_ATOL_FACTOR = 1e-6
ODEKIT_METHODS = ("radau5", "kencarp4", "rodas4", "trbdf2", "bdf")
# --quick compiles one loop: each method compiled here is compiled for this script's problem only,
# and the quick run is what tests/test_benchmarks runs on a cold CI machine (40 s with all five)
QUICK_METHODS = ("bdf",)
SCIPY_METHODS = ("Radau", "BDF", "LSODA")
SAME_METHOD = {"Radau": "radau5", "BDF": "bdf"}     # a SciPy method: odekit's version of the same method


def error(y, ref, atol):
    """``max_i |y_i - ref_i| / max(|ref_i|, atol)``."""
    y, ref = np.ravel(y), np.ravel(ref)
    return float(np.max(np.abs(y - ref) / np.maximum(np.abs(ref), atol)))


def scipy_reference(prob, atol):
    from scipy.integrate import solve_ivp

    start = time.perf_counter()
    sol = solve_ivp(prob.fun, prob.t_span, prob.y0, method="Radau", rtol=REF_RTOL, atol=atol * REF_ATOL_FACTOR,
                    jac=prob.jac, args=prob.args)
    return sol.y[:, -1], time.perf_counter() - start, bool(sol.success)


def odekit_row(name, prob, rtol, atol, ref, timing):
    try:
        odekit.method(name)
    except ValueError as exc:
        return {"solver": f"odekit {name}", "skipped": str(exc).split(";")[0]}
    # warm-up on a short span: compiles the kernels (or loads them from Numba's cache)
    start = time.perf_counter()
    odekit.solve(prob.with_span((prob.t_span[0], prob.t_span[0] + 1e-3 * (prob.t_span[1] - prob.t_span[0]))),
                 name, rtol=rtol, atol=atol)
    first = time.perf_counter() - start
    seconds, sol = common.per_call(lambda: odekit.solve(prob, name, rtol=rtol, atol=atol), timing)
    s = sol.stats
    return {"solver": f"odekit {name}", "method": name, "seconds": seconds, "steps": s.naccepted,
            "rejected": s.nrejected, "nfev": s.nfev, "njev": s.njev, "nlu": s.nlu,
            "success": bool(sol.success), "backend": sol.backend, "error": error(sol.y[-1], ref, atol),
            "jacobian": "analytic" if callable(prob.jac) else "finite differences",
            "first_solve_incl_compilation_s": first}


def scipy_row(name, prob, rtol, atol, ref, timing):
    from scipy.integrate import solve_ivp

    seconds, sol = common.per_call(lambda: solve_ivp(prob.fun, prob.t_span, prob.y0, method=name, rtol=rtol,
                                                     atol=atol, jac=prob.jac, args=prob.args), timing)
    return {"solver": f"SciPy {name}", "method": name, "seconds": seconds, "steps": len(sol.t) - 1,
            "rejected": None, "nfev": int(sol.nfev), "njev": int(sol.njev), "nlu": int(sol.nlu),
            "success": bool(sol.success), "error": error(sol.y[:, -1], ref, atol),
            "jacobian": "analytic" if callable(prob.jac) else "finite differences"}


def run_case(label, prob, rtol, atol, published, timing, methods=ODEKIT_METHODS):
    case = {"problem": label, "name": prob.name, "n": int(prob.y0.size), "t_span": list(prob.t_span),
            "rtol": rtol, "atol": atol}
    tight, ref_seconds, ok = scipy_reference(prob, atol)
    if published is not None:
        ref = published
        case["reference"] = "published (Test Set for IVP Solvers)"
        case["scipy_radau_tight_vs_published"] = error(tight, published, atol)
    else:
        ref = tight
        case["reference"] = f"SciPy Radau, rtol {REF_RTOL:g}, atol {atol * REF_ATOL_FACTOR:g}"
    case["reference_seconds"], case["reference_success"] = ref_seconds, ok
    case["reference_y"] = np.ravel(ref).tolist()
    rows = [odekit_row(m, prob, rtol, atol, ref, timing) for m in methods]
    rows += [scipy_row(m, prob, rtol, atol, ref, timing) for m in SCIPY_METHODS]
    # a second check of the reference (after the rows, so as not to warm them up): odekit's first
    # method (radau5 unless --quick) at the reference's tolerances
    check = odekit.solve(prob, methods[0], rtol=REF_RTOL, atol=atol * REF_ATOL_FACTOR)
    case["odekit_check"] = {"method": methods[0], "error": error(check.y[-1], ref, atol)}
    case["rows"] = rows
    scipy_rows = [r for r in rows if r["solver"].startswith("SciPy") and r["success"]]
    fastest = min(scipy_rows, key=lambda r: r["seconds"]) if scipy_rows else None
    ratios = {"fastest_scipy": fastest["solver"] if fastest else None, "fastest_scipy_over_odekit": {},
              "same_method": {}}
    for r in rows:
        if r["solver"].startswith("odekit") and "skipped" not in r and fastest:
            ratios["fastest_scipy_over_odekit"][r["method"]] = fastest["seconds"] / r["seconds"]
    for theirs, ours in SAME_METHOD.items():
        a = next((r for r in scipy_rows if r["method"] == theirs), None)
        b = next((r for r in rows if r.get("method") == ours and "skipped" not in r), None)
        if a and b:
            ratios["same_method"][f"{theirs} / {ours}"] = {"time": a["seconds"] / b["seconds"],
                                                          "steps_odekit_over_scipy": b["steps"] / a["steps"]}
    case["ratios"] = ratios
    return case


# --- report ----------------------------------------------------------------------------------

def _count(value):
    return "-" if value is None else str(value)


def print_case(i, case):
    print(f"\n{i}. {case['problem']}  (n = {case['n']}, rtol {case['rtol']:g}, atol {case['atol']:g}; "
          f"analytic Jacobian to every solver)")
    print(f"  reference: {case['reference']} ({case['reference_seconds']:.2f} s)")
    if "scipy_radau_tight_vs_published" in case:
        print(f"    SciPy Radau at rtol {REF_RTOL:g} vs published: err {case['scipy_radau_tight_vs_published']:.1e}")
    check = case["odekit_check"]
    print(f"    odekit {check['method']} at rtol {REF_RTOL:g} vs reference: err {check['error']:.1e}")
    rows = []
    for row in case["rows"]:
        if "skipped" in row:
            rows.append(f"{row['solver']}  skipped: {row['skipped']}")
            continue
        flag = "" if row["success"] else "(did not succeed)"
        if row.get("backend", "numba") != "numba":
            flag += f"({row['backend']} backend)"
        if row["method"] == "LSODA":
            flag += "(SciPy reports nlu = njev)"
        rows.append((row["solver"], f"{row['seconds'] * 1e3:.3f}", row["steps"], _count(row["rejected"]),
                     row["nfev"], row["njev"], row["nlu"], f"{row['error']:.1e}", flag))
    common.print_table(("solver", "time ms", "steps", "rej", "nfev", "njev", "nlu", "err", ""), rows, "lrrrrrrrl")
    firsts = [f"{row['method']} {row['first_solve_incl_compilation_s']:.2f} s" for row in case["rows"]
              if "first_solve_incl_compilation_s" in row]
    print(f"  first odekit solve (short span; incl. compiling or loading Numba's cache, and for the first\n"
          f"    method the problem's right-hand side and Jacobian): {', '.join(firsts)}")
    r = case["ratios"]
    ratios = {}
    if r["fastest_scipy"]:
        fastest = r["fastest_scipy"][6:]
        ratios = {f"{fastest} (fastest SciPy) / {m}": v for m, v in r["fastest_scipy_over_odekit"].items()}
    for pair, same in r["same_method"].items():
        print(f"  steps of odekit / SciPy, the same method ({pair}): {same['steps_odekit_over_scipy']:.2f}")
        ratios[pair] = same["time"]
    common.print_ratios(f"SciPy time / odekit time ({i}. {case['problem']})", ratios)


def print_summary(cases_):
    methods = [m for m in ODEKIT_METHODS if any(m in c["ratios"]["fastest_scipy_over_odekit"] for c in cases_)]
    pairs = [f"{theirs} / {ours}" for theirs, ours in SAME_METHOD.items()]
    print("\nSummary: fastest SciPy time / odekit time, and SciPy / odekit on the same method "
          "(same rtol, atol; errors above)")
    rows = []
    for c in cases_:
        r = c["ratios"]
        cells = [f"{r['fastest_scipy_over_odekit'][m]:.1f}x" if m in r["fastest_scipy_over_odekit"] else "-"
                 for m in methods]
        same = [f"{r['same_method'][p]['time']:.0f}x" if p in r["same_method"] else "-" for p in pairs]
        rows.append((c["problem"], (r["fastest_scipy"] or "SciPy -")[6:], *cells, *same))
    common.print_table(("problem", "fastest SciPy", *methods, *pairs), rows)


def main(argv=None):
    parser = common.parser(__doc__)
    parser.add_argument("--rtol", type=float, default=1e-6, help="relative tolerance of every solve "
                        "(default %(default)g; each problem's atol is scaled with it)")
    options = parser.parse_args(argv)
    if not 1e-11 <= options.rtol < 1:
        parser.error(f"--rtol must be in [1e-11, 1), the reference being at rtol {REF_RTOL:g}; got {options.rtol:g}")
    timing = common.QUICK_TIMING if options.quick else common.Timing()
    report = {"machine": common.machine(), "rtol": options.rtol, "quick": options.quick, "cases": []}
    common.print_header(f"odekit stiff benchmark: implicit methods against scipy.integrate.solve_ivp, "
                        f"rtol {options.rtol:g}", report["machine"], options.quick)
    print(f"  time per solve: best of {timing.repeats} timeit-style batches, GC off; "
          "err = max |y - ref| / max(|ref|, atol) at t_end")
    try:
        import scipy.integrate  # noqa: F401
    except ImportError:
        print("\nskipped: SciPy is not installed")
        report["skipped"] = "SciPy is not installed"
    else:
        for i, (label, prob, atol, published) in enumerate(common.stiff_problems(options.rtol, options.quick), 1):
            case = run_case(label, prob, options.rtol, atol, published, timing,
                            QUICK_METHODS if options.quick else ODEKIT_METHODS)
            report["cases"].append(case)
            print_case(i, case)
        print_summary(report["cases"])
    common.write_json(options.json, report)


if __name__ == "__main__":
    main()
