"""Core benchmark: odekit's compiled speed against references, in one run.

odekit's claim (DESIGN.md, "One source, two speeds") is that its kernels,
written once and compiled by Numba, run small systems at close to the speed
of C and far faster than SciPy or a NumPy loop.  Speeds depend on the
machine, so every reference is measured here, in the same process and run,
and only ratios are compared.  The problem is the planar Kepler orbit
``x'' = -x/|x|^3`` with eccentricity 0.5 (start at pericentre, period 2 pi),
whose exact solution lets each row show that it computed the same thing.

1. Fixed step, classic RK4 with h = 0.01, in ns/step:

   * odekit compiled, on the zoo problem (``odekit.problems.kepler``, whose
     acceleration returns a new array) and on an in-place first-order form;
     each timed after a warm-up solve, whose time (compilation included) is
     reported on its own;
   * a C loop with the same generic tableau loop and the same formula,
     compiled here with the system compiler;
   * a hand-written Python loop of NumPy vector operations (fewer steps).

2. Adaptive: odekit ``dp54`` against ``scipy.integrate.solve_ivp`` (RK45 and
   DOP853) at two tolerances: time per solve (timeit-style, so odekit's
   sub-millisecond solves are not charged for a garbage collection), steps,
   f-evaluations, and the position error at the final time.  The speed-up
   SciPy / odekit is given at the same tolerance and *at equal or better
   error*: odekit at the loosest tolerance (rtol, rtol/sqrt(2), ...) whose
   error is at most SciPy's -- for the same right-hand side as SciPy's
   (returning an array) and for the in-place form.

Run ``python benchmarks/bench_core.py [--json PATH]`` (or ``make bench``).
This is a measurement, not a test: nothing is asserted.
"""

import argparse
import datetime
import gc
import importlib.metadata
import json
import math
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import time

import numpy as np

import odekit

E = 0.5                   # eccentricity
MU = 1.0
H = 0.01                  # fixed step of RK4
FIXED_ORBITS = 4000       # ~2.5 million steps: each compiled run lasts ~0.5 s or more
NUMPY_ORBITS = 20         # the NumPy loop is ~100x slower: fewer steps
WARMUP_ORBITS = 1         # the first solve, which compiles, on a short span
ADAPTIVE_ORBITS = 20
RTOLS = (1e-6, 1e-9)      # atol = rtol * 1e-3
REPEATS = 5               # timings are the best of this many runs
SETUP_ORBITS = 1e-3       # a span so short that a solve costs only its set-up
BUILD = pathlib.Path(__file__).resolve().parent / "_build"


# --- the problem in each form --------------------------------------------------------

def kepler_inplace(t, y, dydt, mu):
    """``y = [x1, x2, v1, v2]``; writes ``y'`` into ``dydt`` (odekit's in-place form)."""
    r2 = y[0] * y[0] + y[1] * y[1]
    k = -mu / (r2 * math.sqrt(r2))
    dydt[0] = y[2]
    dydt[1] = y[3]
    dydt[2] = k * y[0]
    dydt[3] = k * y[1]


def kepler_rhs(t, y, mu=MU):
    """``y' = f(t, y)`` returning a new array (SciPy's form and the NumPy loop's)."""
    r2 = y[0] * y[0] + y[1] * y[1]
    k = -mu / (r2 * math.sqrt(r2))
    return np.array([y[2], y[3], k * y[0], k * y[1]])


def zoo_problem(orbits):
    return odekit.problems.kepler(e=E, orbits=orbits, mu=MU)


def inplace_problem(orbits):
    zoo = zoo_problem(orbits)
    return odekit.ODEProblem(kepler_inplace, zoo.t_span, initial_state(), args=(MU,), inplace=True,
                             name="kepler_inplace")


def initial_state():
    zoo = zoo_problem(1)
    return np.concatenate([zoo.x0, zoo.v0])


def t_end(orbits):
    return zoo_problem(orbits).t_span[1]


def final_position(sol):
    """The last position of either form: ``x`` of the zoo problem, ``y[:2]`` of the in-place one."""
    return sol.x[-1] if sol.problem.second_order else sol.y[-1, :2]


def position_error(x, t):
    """Largest component of ``|x - x_exact(t)|``."""
    x_exact, _ = zoo_problem(1).exact(t)
    return float(np.max(np.abs(np.asarray(x) - x_exact)))


# --- timing ----------------------------------------------------------------------------

def best_of(fn, repeats=REPEATS):
    """``(best wall time in s, result of the last call)`` over ``repeats`` calls, GC off."""
    best, result = math.inf, None
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            result = fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best, result


def per_call(fn, repeats=REPEATS, batch_seconds=0.2):
    """``(best time per call in s, result)``, timeit-style: ``repeats`` batches of back-to-back calls.

    Short calls (a fraction of a millisecond) are timed in batches lasting
    about ``batch_seconds``, with garbage collection off, as ``timeit`` does:
    timing one call right after a collection would charge it for the caches
    the collector emptied.
    """
    result = fn()
    start = time.perf_counter()
    fn()
    number = max(1, int(batch_seconds / max(time.perf_counter() - start, 1e-9)))
    best = math.inf
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best = min(best, (time.perf_counter() - start) / number)
    finally:
        gc.enable()
    return best, result


# --- 1. fixed-step RK4 -------------------------------------------------------------------

def odekit_rk4(label, make_problem, final_position):
    """Warm-up solve (compiles) on a short span, then the timed solves on the long one."""
    start = time.perf_counter()
    warm = odekit.solve(make_problem(WARMUP_ORBITS), "rk4", h=H)
    warmup_s = time.perf_counter() - start
    row = {"name": label, "first_solve_incl_compilation_s": warmup_s, "backend": warm.backend}
    if warm.backend != "numba":
        row["skipped"] = f"backend is {warm.backend!r}, not 'numba': {warm.backend_reason}"
        return row
    prob = make_problem(FIXED_ORBITS)
    seconds, sol = best_of(lambda: odekit.solve(prob, "rk4", h=H))
    steps = sol.stats.naccepted
    row.update(orbits=FIXED_ORBITS, steps=steps, nfev=sol.stats.nfev, seconds=seconds,
               ns_per_step=seconds / steps * 1e9,
               position=final_position(sol).tolist(),
               position_error=position_error(final_position(sol), sol.t[-1]))
    return row


C_SOURCE = r"""
/* Classic RK4 as a generic explicit tableau loop (A, b, c, stage loop) on the
 * planar Kepler problem, mirroring odekit's kernel and its fixed-step grid.
 * Written and compiled by benchmarks/bench_core.py.
 * usage: kepler_rk4 x1 x2 v1 v2 t_end h repeats
 * prints: best ns/step, steps, final state */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4
#define S 4

typedef void (*rhs_t)(double t, const double *y, double *dydt, double mu);

static const double A[S][S] = {{0, 0, 0, 0}, {0.5, 0, 0, 0}, {0, 0.5, 0, 0}, {0, 0, 1, 0}};
static const double B[S] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
static const double C[S] = {0, 0.5, 0.5, 1};

static void kepler(double t, const double *y, double *dydt, double mu)
{
    double r2 = y[0] * y[0] + y[1] * y[1];
    double k = -mu / (r2 * sqrt(r2));
    dydt[0] = y[2];
    dydt[1] = y[3];
    dydt[2] = k * y[0];
    dydt[3] = k * y[1];
}

/* out = y + h * sum_{j<m} coef[j] K[j], skipping zero coefficients */
static void lincomb(double *out, const double *y, double h, const double *coef,
                    double K[S][N], int m)
{
    for (int i = 0; i < N; i++) {
        double acc = 0.0;
        for (int j = 0; j < m; j++)
            if (coef[j] != 0.0)
                acc += coef[j] * K[j][i];
        out[i] = y[i] + h * acc;
    }
}

/* t_k = t0 + k h, the last step shortened to land on t_end; returns the steps taken */
static long integrate(rhs_t rhs, const double a[S][S], const double *b, const double *c,
                      double t0, double t_end, double h, double *y, double mu)
{
    double K[S][N], tmp[N];
    double t = t0;
    long k = 0;
    while (t_end - t > 0.0) {
        double t_new = t0 + (k + 1) * h;
        if (t_new - t_end >= -1e-9 * h)
            t_new = t_end;
        double dt = t_new - t;
        rhs(t, y, K[0], mu);
        for (int i = 1; i < S; i++) {
            lincomb(tmp, y, dt, a[i], K, i);
            rhs(t + c[i] * dt, tmp, K[i], mu);
        }
        lincomb(tmp, y, dt, b, K, S);
        memcpy(y, tmp, sizeof tmp);
        t = t_new;
        k++;
    }
    return k;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: %s x1 x2 v1 v2 t_end h repeats\n", argv[0]);
        return 2;
    }
    double y0[N], y[N];
    for (int i = 0; i < N; i++)
        y0[i] = strtod(argv[1 + i], NULL);
    double t_end = strtod(argv[5], NULL), h = strtod(argv[6], NULL);
    int repeats = atoi(argv[7]);
    double best = INFINITY;
    long steps = 0;
    for (int r = 0; r < repeats; r++) {
        struct timespec start, stop;
        memcpy(y, y0, sizeof y);
        clock_gettime(CLOCK_MONOTONIC, &start);
        steps = integrate(kepler, A, B, C, 0.0, t_end, h, y, 1.0);
        clock_gettime(CLOCK_MONOTONIC, &stop);
        double ns = (stop.tv_sec - start.tv_sec) * 1e9 + (stop.tv_nsec - start.tv_nsec);
        if (ns < best)
            best = ns;
    }
    printf("%.6f %ld %.17g %.17g %.17g %.17g\n", best / steps, steps, y[0], y[1], y[2], y[3]);
    return 0;
}
"""


def compile_c():
    """Build the C loop; ``(executable, command used)`` or ``(None, why not)``."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        return None, f"no C compiler ({cc!r} not found)"
    BUILD.mkdir(exist_ok=True)
    source, exe = BUILD / "kepler_rk4.c", BUILD / "kepler_rk4"
    source.write_text(C_SOURCE)
    failure = ""
    for flags in (["-O3", "-march=native"], ["-O3"]):
        command = [cc, *flags, "-o", str(exe), str(source), "-lm"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode == 0:
            return exe, " ".join([cc, *flags])
        failure = done.stderr.strip().splitlines()[-1:] or ["(no message)"]
    return None, f"{cc} failed: {failure[0]}"


def c_rk4():
    exe, how = compile_c()
    row = {"name": "C loop", "compiler": how}
    if exe is None:
        row["skipped"] = how
        return row
    args = [repr(float(v)) for v in initial_state()] + [repr(t_end(FIXED_ORBITS)), repr(H), str(REPEATS)]
    fields = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True).stdout.split()
    ns, steps, y = float(fields[0]), int(fields[1]), np.array([float(v) for v in fields[2:]])
    row.update(orbits=FIXED_ORBITS, steps=steps, seconds=ns * steps * 1e-9, ns_per_step=ns,
               position=y[:2].tolist(), position_error=position_error(y[:2], t_end(FIXED_ORBITS)))
    return row


RK4_B = (1 / 6, 1 / 3, 1 / 3, 1 / 6)   # RK4 weights, summed in odekit's order


def numpy_rk4(y0, t_final, h):
    """Classic RK4 in plain Python with NumPy vector operations, on odekit's step grid."""
    y, t, k = y0.copy(), 0.0, 0
    while t_final - t > 0.0:
        t_new = (k + 1) * h
        if t_new - t_final >= -1e-9 * h:
            t_new = t_final
        dt = t_new - t
        k1 = kepler_rhs(t, y)
        k2 = kepler_rhs(t + 0.5 * dt, y + dt * (0.5 * k1))
        k3 = kepler_rhs(t + 0.5 * dt, y + dt * (0.5 * k2))
        k4 = kepler_rhs(t + dt, y + dt * k3)
        y = y + dt * (RK4_B[0] * k1 + RK4_B[1] * k2 + RK4_B[2] * k3 + RK4_B[3] * k4)
        t, k = t_new, k + 1
    return y, k


def numpy_loop_rk4():
    y0, t_final = initial_state(), t_end(NUMPY_ORBITS)
    seconds, (y, steps) = best_of(lambda: numpy_rk4(y0, t_final, H), repeats=3)
    return {"name": "NumPy loop", "orbits": NUMPY_ORBITS, "steps": steps, "seconds": seconds,
            "ns_per_step": seconds / steps * 1e9, "position": y[:2].tolist(),
            "position_error": position_error(y[:2], t_final)}


def fixed_step():
    zoo = odekit_rk4("odekit zoo", zoo_problem, final_position)
    inplace = odekit_rk4("odekit in-place", inplace_problem, final_position)
    c, numpy_loop = c_rk4(), numpy_loop_rk4()
    # The agreement of the final positions shows that every row computes the same thing:
    # C against odekit over the same span, the NumPy loop against odekit over its shorter one.
    if "skipped" not in inplace:
        for row in (zoo, c):
            if "skipped" not in row:
                row["diff_vs_odekit_inplace"] = _distance(row["position"], inplace["position"])
        short = odekit.solve(inplace_problem(NUMPY_ORBITS), "rk4", h=H)
        numpy_loop["diff_vs_odekit_inplace"] = _distance(numpy_loop["position"], short.y[-1, :2])
    rows = [zoo, inplace, c, numpy_loop]
    ratios = {}
    for odekit_row in (zoo, inplace):
        if "skipped" in odekit_row:
            continue
        if "skipped" not in c:
            ratios[f"{odekit_row['name']} / C"] = odekit_row["ns_per_step"] / c["ns_per_step"]
        ratios[f"NumPy loop / {odekit_row['name']}"] = numpy_loop["ns_per_step"] / odekit_row["ns_per_step"]
    return {"method": "rk4", "h": H, "rows": rows, "ratios": ratios}


def _distance(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


# --- 2. adaptive: dp54 against SciPy -------------------------------------------------------

MATCH_STEPS = 12          # tighter odekit tolerances tried, each by a factor sqrt(2), to match an error


def adaptive():
    try:
        from scipy.integrate import solve_ivp
    except ImportError:
        return {"orbits": ADAPTIVE_ORBITS, "skipped": "SciPy is not installed"}
    forms = {"odekit dp54": zoo_problem(ADAPTIVE_ORBITS), "odekit dp54 in-place": inplace_problem(ADAPTIVE_ORBITS)}
    t0, t1 = forms["odekit dp54"].t_span
    y0 = initial_state()
    results = []
    for rtol in RTOLS:
        rows = []
        for name, prob in forms.items():
            rows.append(_odekit_row(name, prob, rtol))
        for method in ("RK45", "DOP853"):
            options = dict(rtol=rtol, atol=rtol * 1e-3)
            seconds, ref = per_call(lambda: solve_ivp(kepler_rhs, (t0, t1), y0, method=method, **options))
            error = position_error(ref.y[:2, -1], ref.t[-1])
            row = {"solver": f"SciPy {method}", "rtol": rtol, "seconds": seconds, "steps": len(ref.t) - 1,
                   "nfev": int(ref.nfev), "success": bool(ref.success), "position_error": error,
                   "speedup_same_tolerance": {r["solver"]: seconds / r["seconds"] for r in rows[:2]},
                   "at_equal_or_better_error": {}}
            for name, prob in forms.items():
                match = _matching(name, prob, rtol, error)
                if match is not None:
                    match["speedup"] = seconds / match["seconds"]
                row["at_equal_or_better_error"][name] = match
            rows.append(row)
        results.append({"rtol": rtol, "atol": rtol * 1e-3, "rows": rows})
    setup = {name: per_call(lambda: odekit.solve(prob.with_span((t0, t0 + SETUP_ORBITS * (t1 - t0) / ADAPTIVE_ORBITS)),
                                                 "dp54"))[0] for name, prob in forms.items()}
    return {"orbits": ADAPTIVE_ORBITS, "runs": results, "setup_seconds": setup}


def _odekit_row(name, prob, rtol):
    seconds, sol = per_call(lambda: odekit.solve(prob, "dp54", rtol=rtol, atol=rtol * 1e-3))
    return {"solver": name, "rtol": rtol, "seconds": seconds, "steps": sol.stats.naccepted,
            "rejected": sol.stats.nrejected, "nfev": sol.stats.nfev, "backend": sol.backend,
            "success": sol.success, "position_error": position_error(final_position(sol), sol.t[-1])}


def _matching(name, prob, rtol, error):
    """odekit at the loosest tolerance (rtol, rtol/sqrt(2), ...) whose error is at most ``error``."""
    for k in range(MATCH_STEPS + 1):
        tight = rtol * 2.0 ** (-k / 2)
        sol = odekit.solve(prob, "dp54", rtol=tight, atol=tight * 1e-3)
        if position_error(final_position(sol), sol.t[-1]) <= error:
            return _odekit_row(name, prob, tight)
    return None


# --- report ----------------------------------------------------------------------------------

def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for package in ("numpy", "scipy", "numba", "odekit"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {"cpu": cpu, "cores": os.cpu_count(),
            "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "platform": platform.platform(), "python": platform.python_version(), **versions,
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}


def print_header(m):
    print("odekit core benchmark: Kepler orbit, e = 0.5, x'' = -x/|x|^3")
    print(f"  CPU      {m['cpu']}  ({m['cores']} cores, {m['usable_cores']} usable)")
    print(f"  system   {m['platform']}")
    print(f"  versions Python {m['python']}, NumPy {m['numpy']}, SciPy {m['scipy']}, "
          f"Numba {m['numba']}, odekit {m['odekit']}")
    print(f"  date     {m['date']}")


def print_fixed(fixed):
    print(f"\n1. Fixed step: classic RK4, h = {fixed['h']}  (best of {REPEATS}; NumPy loop best of 3)")
    print(f"  {'':16} {'orbits':>6} {'steps':>9} {'ns/step':>9} {'|x - exact| end':>16} "
          f"{'|x - odekit in-place|':>22}")
    for row in fixed["rows"]:
        if "skipped" in row:
            print(f"  {row['name']:16} skipped: {row['skipped']}")
            continue
        diff = row.get("diff_vs_odekit_inplace")
        diff = "(reference)" if row["name"] == "odekit in-place" else "-" if diff is None else f"{diff:.2e}"
        print(f"  {row['name']:16} {row['orbits']:>6} {row['steps']:>9} {row['ns_per_step']:>9.1f} "
              f"{row['position_error']:>16.3e} {diff:>22}")
    for row in fixed["rows"]:
        if "compiler" in row and "skipped" not in row:
            print(f"  C loop built with: {row['compiler']}")
    print(f"  first solve incl. compilation ({WARMUP_ORBITS} orbit; the first in the process also "
          "initialises Numba and loads odekit's cached kernels):")
    for row in fixed["rows"]:
        if "first_solve_incl_compilation_s" in row:
            print(f"    {row['name']:30} {row['first_solve_incl_compilation_s']:8.2f} s")
    print("  ratios of ns/step:")
    for name, ratio in fixed["ratios"].items():
        print(f"    {name:30} {ratio:8.1f}")


def print_adaptive(result):
    print(f"\n2. Adaptive, {result['orbits']} orbits, atol = rtol * 1e-3 "
          f"(time per solve: best of {REPEATS} timeit-style batches)")
    if "skipped" in result:
        print(f"  skipped: {result['skipped']}")
        return
    print(f"  {'rtol':>7}  {'solver':22} {'time ms':>9} {'steps':>6} {'nfev':>6} {'|x - exact| end':>16}")
    for run in result["runs"]:
        for row in run["rows"]:
            flag = "" if row["success"] else "  (did not succeed)"
            if row.get("backend", "numba") != "numba":
                flag += f"  ({row['backend']} backend)"
            print(f"  {run['rtol']:>7.0e}  {row['solver']:22} {row['seconds'] * 1e3:>9.3f} {row['steps']:>6} "
                  f"{row['nfev']:>6} {row['position_error']:>16.3e}{flag}")
    print("  speed-up of odekit over SciPy (SciPy time / odekit time):")
    print(f"  {'rtol':>7}  {'SciPy':8} {'odekit':22} {'same rtol':>10} {'equal or better error':>22} "
          f"{'at odekit rtol':>15} {'error':>10}")
    for run in result["runs"]:
        for row in run["rows"]:
            if "speedup_same_tolerance" not in row:
                continue
            for name, same in row["speedup_same_tolerance"].items():
                match = row["at_equal_or_better_error"][name]
                matched = ("not reached", "", "") if match is None else (
                    f"{match['speedup']:.1f}x", f"{match['rtol']:.2e}", f"{match['position_error']:.2e}")
                print(f"  {run['rtol']:>7.0e}  {row['solver'][6:]:8} {name:22} {same:>9.1f}x {matched[0]:>22} "
                      f"{matched[1]:>15} {matched[2]:>10}")
    for name, seconds in result["setup_seconds"].items():
        print(f"  fixed cost of a solve ({name}, a {SETUP_ORBITS:g}-orbit span): {seconds * 1e6:.0f} us")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    options = parser.parse_args(argv)
    report = {"machine": machine()}
    print_header(report["machine"])
    sys.stdout.flush()
    report["fixed_step"] = fixed_step()
    print_fixed(report["fixed_step"])
    sys.stdout.flush()
    report["adaptive"] = adaptive()
    print_adaptive(report["adaptive"])
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {options.json}")


if __name__ == "__main__":
    main()
