"""Start-up benchmark: how long a user waits before odekit computes, with an empty cache and a warm one.

Numba compiles each method family's loop the first time it runs on a
machine and keeps it in a disk cache; later processes load it.  This script
measures both, each in a fresh Python process:

* the first solve of each method family (explicit_rk, implicit_rk, radau,
  rosenbrock, bdf, splitting) on a small problem: with ``backend="auto"``
  on a fresh install (*first*: a run that starts on Python while the loop
  is not in the cache, and here ends there), then with ``backend="numba"``
  compiling (cold) or loading (warm) the family's loop, and compiling the
  problem's functions;
* the first ``odekit shootout kepler --report DIR``, the README's first
  command (``make demo``), as a whole process;
* the fixed cost of a repeated small solve -- adaptive ``dp54`` and
  fixed-step ``rk4`` over a span of about one step -- and of
  ``Integrator.step()``, warm.

Cold means a fresh copy of the odekit package (bytecode compiled, no
compiled kernels) and an empty ``NUMBA_CACHE_DIR``, both in a temporary
folder: odekit keeps its kernels there when it is set (else in the user's
cache folder, see ``odekit.kernels.jit.cache_folder``), so a copy starts
with an empty cache without touching the user's.  Warm means the same copy
run again, with what its cold run cached.  Each family and the shootout get their own copy, so no run
inherits another's kernels.

Run ``python benchmarks/bench_startup.py [--quick] [--fixed] [--json PATH]``:
5-20 minutes, mostly Numba compiling; keep the machine otherwise idle.
``--fixed`` measures the fixed costs alone (a minute).
``--quick`` runs the first family and a tiny shootout on the Python backend
(nothing compiled): it checks the script, not the figures.
"""

import compileall
import importlib.util
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

# Nothing here imports odekit, NumPy or common at the top: a child process times its own `import odekit`.

FAMILIES = {            # family: (method, problem, options) -- the first solve measured
    "explicit_rk": ("dp54", "kepler", {}),
    "implicit_rk": ("kencarp4", "robertson", {"rtol": 1e-6, "atol": 1e-10}),
    "radau": ("radau5", "robertson", {"rtol": 1e-6, "atol": 1e-10}),
    "rosenbrock": ("rodas4", "robertson", {"rtol": 1e-6, "atol": 1e-10}),
    "bdf": ("bdf", "robertson", {"rtol": 1e-6, "atol": 1e-10}),
    "splitting": ("velocity_verlet", "kepler", {"h": 0.01}),
}
SHOOTOUT = ["shootout", "kepler", "--quiet"]      # and --report DIR; --quick: QUICK_SHOOTOUT instead
QUICK_SHOOTOUT = ["--backend", "python", "--methods", "euler,rk4", "--budget", "10", "--t-end", "1"]
LEAD = 1.25               # issue 17's lead over the fastest peer
H = 0.01                  # rk4's step in the fixed costs; their span is one step
TIMEOUT = 900             # seconds allowed each child process
CHILD = "--child"         # argv of a child: --child TASK BACKEND [--quick]
PHASES = {"first": "auto", "cold": None, "warm": None}    # a family's runs, and the backend each forces


def _problem(odekit, name):
    return odekit.problems.kepler(e=0.5, orbits=1) if name == "kepler" else odekit.problems.robertson()


# --- in the child process --------------------------------------------------------------------

def _now():
    """Wall time and this process's CPU time: on a shared machine the second is the steadier."""
    return time.perf_counter(), time.process_time()


def _elapsed(name, start, stop):
    return {f"{name}_s": stop[0] - start[0], f"{name}_cpu_s": stop[1] - start[1]}


def child(task, backend, quick):
    """Print, as JSON, the times of ``task`` (a family, or ``"fixed"``) in this fresh process."""
    start = _now()
    import odekit
    imported = _now()
    result = {"odekit": odekit.__file__, **_elapsed("import", start, imported)}
    if task == "fixed":
        result.update(fixed_costs(odekit, backend, quick))
    else:
        method, problem, options = FAMILIES[task]
        sol = odekit.solve(_problem(odekit, problem), method, backend=backend, **options)
        result.update(_elapsed("first_solve", imported, _now()), backend=sol.backend, success=sol.success)
    print(json.dumps(result))


def fixed_costs(odekit, backend, quick):
    """Seconds per call, warm, in wall and CPU time: dp54 and rk4 solves over one step's span, and
    ``Integrator.step()``."""
    import dataclasses

    import common        # imported here: it loads NumPy, which the families' timings leave to odekit
    import numpy as np

    wall = common.QUICK_TIMING if quick else common.Timing()
    short = _problem(odekit, "kepler").with_span((0.0, H))
    integ = odekit.Integrator(_problem(odekit, "kepler").with_span((0.0, 1e12)), "rk4", h=H, backend=backend)
    prepared = odekit.prepare(short, "dp54", backend=backend)
    y0 = np.stack([short.x0, short.v0])
    # a problem of its own: args given are assigned to it, which sets the other solves of `short` up anew
    with_args = odekit.prepare(_problem(odekit, "kepler").with_span((0.0, H)), "dp54", backend=backend)
    calls = {"dp54_solve": lambda: odekit.solve(short, "dp54", backend=backend),
             # a controller made anew at each call, as a user writes it: known by its options
             "dp54_controller_solve": lambda: odekit.solve(short, "dp54", controller=odekit.PIController(safety=0.8),
                                                           backend=backend),
             "rk4_solve": lambda: odekit.solve(short, "rk4", h=H, backend=backend),
             # the same solve made once, each call returning (t, y); from a state given, with args given
             "dp54_prepared_solve": prepared,
             "dp54_prepared_y0_solve": lambda: prepared(y0),
             "dp54_prepared_args_solve": lambda: with_args(y0, short.args),
             "integrator_step": integ.step}
    calls.update(_numbalsoda_calls(short))
    result = {"backend": integ.backend, "repeats": wall.repeats}
    # in rounds: a stretch of other work on the machine does not spoil one call's every batch
    for suffix, timing in (("_s", wall), ("_cpu_s", dataclasses.replace(wall, clock=time.process_time))):
        result.update({name + suffix: seconds for name, seconds in common.per_call_each(calls, timing)[0].items()})
    if integ.backend == "numba":
        result["pieces"] = _pieces(odekit, short, wall)
    result["spans"] = _by_span(odekit, backend, wall)
    return result


SPANS = (1e-6, 0.01, 0.1)     # one step, three, six: what a step adds to the fixed cost


def _by_span(odekit, backend, wall):
    """``[(span, steps, odekit s, numbalsoda s or None)]``: dp54 and numbalsoda's dop853 over spans of a few
    steps of Kepler's orbit, whose slope is the cost of a step and whose intercept the fixed cost."""
    import common

    rows = []
    for span in SPANS:
        problem = _problem(odekit, "kepler").with_span((0.0, span))
        steps = odekit.solve(problem, "dp54", backend=backend).stats.naccepted
        peer = _numbalsoda_calls(problem).get("numbalsoda_dop853")
        rows.append((span, steps, common.per_call(lambda: odekit.solve(problem, "dp54", backend=backend), wall)[0],
                     common.per_call(peer, wall)[0] if peer else None))
    return rows


def _numbalsoda_calls(problem):
    """numbalsoda's ``dop853`` and ``lsoda`` over ``problem``'s span (Kepler as four first-order equations
    in a ``cfunc``, as numbalsoda's README writes one; odekit's tolerances; its output the states at both
    ends), as calls; none when numbalsoda is missing."""
    try:
        import numbalsoda
    except ImportError:
        return {}
    import math

    import numba
    import numpy as np

    mu = float(problem.args[0]) if problem.args else 1.0

    @numba.cfunc(numbalsoda.lsoda_sig)
    def rhs(t, u, du, p):
        r2 = u[0] * u[0] + u[1] * u[1]
        k = -mu / (r2 * math.sqrt(r2))
        du[0], du[1], du[2], du[3] = u[2], u[3], k * u[0], k * u[1]

    y0, t_eval = problem.initial_state(), np.array(problem.t_span)
    return {f"numbalsoda_{name}": (lambda solver=getattr(numbalsoda, name): solver(rhs.address, y0, t_eval,
                                                                                     rtol=1e-6, atol=1e-9))
            for name in ("dop853", "lsoda")}


def _pieces(odekit, problem, wall):
    """Where a repeated ``dp54`` solve of ``problem`` spends its time, in s: ``solve``'s arguments taken and
    the run kept for them found, the output arrays made, the compiled call, the ``Solution`` made, the states
    shaped; the rest is the difference (the run kept is read from :mod:`odekit.rerun`).  Also the call told
    not to run (``idle``: it writes the last run's output, and does nothing else): what crossing into
    compiled code and back costs, whatever the run."""
    import numpy as np

    kept = next(r for k, r in odekit.rerun._RERUNS.items() if k[0] == id(problem) and k[1] == "dp54")
    size, dtype = kept.size, kept.dtype
    t, y = np.empty(size[0]), np.empty(size, dtype=dtype)
    call, stats = kept._lane[0], kept.last[1]

    def best(fn):
        return __import__("common").per_call(fn, wall)[0]

    table, success = {(id(problem), "dp54", 1e-6, 1e-9): kept}, odekit.Status.SUCCESS

    def bare(problem, method, rtol=1e-6, atol=1e-9):
        """solve() stripped to the pieces it cannot do without, running nothing: a call with keywords, its
        run found by its arguments, two output arrays, the compiled call, a Solution."""
        table.get((id(problem), method, rtol, atol))
        t, y = np.empty(size[0]), np.empty(size, dtype=dtype)
        call(t, y, False)
        return odekit.Solution(problem, method, t, y, stats, success, "", "numba")

    whole, found = best(lambda: odekit.solve(problem, "dp54")), best(lambda: kept.solve(problem))
    return {"whole": whole, "arguments": whole - found,
            "arrays": best(lambda: (np.empty(size[0]), np.empty(size, dtype=dtype))),
            "call": best(lambda: call(t, y, True)), "idle": best(lambda: call(t, y, False)),
            "bare": best(lambda: bare(problem, "dp54", rtol=1e-6, atol=1e-9)),
            "solution": best(lambda: odekit.Solution(problem, kept.method, t, y, stats, odekit.Status.SUCCESS, "",
                                                     "numba")),
            "shape": best(lambda: y.reshape(kept.shape)) if kept.shape else 0.0, "found": found}


# --- in the parent (which imports common in its functions) ----------------------------------

def fresh_copy(folder):
    """A copy of the importable odekit in ``folder``: its bytecode compiled, its kernel cache empty."""
    package = pathlib.Path(importlib.util.find_spec("odekit").origin).parent
    copy = folder / "src" / "odekit"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(copy, quiet=1)
    (folder / "numba_cache").mkdir()
    return copy


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(folder, argv):
    """Run ``python argv`` on the copy in ``folder``: its wall and CPU seconds, and its stdout."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / "numba_cache"),
               PYTHONPATH=os.pathsep.join([str(folder / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    env.pop("ODEKIT_FIRST_RUN_SECONDS", None)        # odekit's default, whatever the tests set
    start = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, *argv], env=env, cwd=folder, capture_output=True, text=True,
                          timeout=TIMEOUT)
    times = _elapsed("process", start, (time.perf_counter(), _children_cpu()))
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} failed:\n{done.stderr[-2000:]}")
    return times, done.stdout


def run_child(folder, task, backend, quick):
    times, out = run(folder, [__file__, CHILD, task, backend] + ["--quick"] * quick)
    result = json.loads(out.splitlines()[-1])
    if not pathlib.Path(result["odekit"]).is_relative_to(folder):
        raise RuntimeError(f"the child imported {result['odekit']}, not the copy in {folder}")
    return dict(result, **times)


def cold_and_warm(task, backend, quick, tmp):
    """``{"first": ..., "cold": ..., "warm": ...}``: ``task`` run on its own fresh copy.

    A family's *first* solve, with ``backend="auto"``, compiles no loop:
    the copy is still cold for the next.  (The shootout's first process is
    its cold one: it runs with ``auto``.)
    """
    folder = pathlib.Path(tempfile.mkdtemp(prefix=f"{task}-", dir=tmp))
    fresh_copy(folder)
    if task == "shootout":
        argv = ["-m", "odekit.cli", *SHOOTOUT, *(QUICK_SHOOTOUT if quick else ["--report", str(folder / "report")])]
        return {phase: run(folder, argv)[0] for phase in ("cold", "warm")}
    return {phase: run_child(folder, task, backend if quick or forced is None else forced, quick)
            for phase, forced in PHASES.items()}


def tasks(quick):
    """The families measured (--quick: the first alone) and the shootout."""
    return [*list(FAMILIES)[:1 if quick else None], "shootout"]


def measure(backend, quick, tmp, fixed_only=False):
    report = {}
    for task in [] if fixed_only else tasks(quick):
        report[task] = cold_and_warm(task, backend, quick, tmp)
        print(f"  {task} done", flush=True)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="fixed-", dir=tmp))
    fresh_copy(folder)
    report["fixed"] = run_child(folder, "fixed", backend, quick)
    return report


def print_report(report, quick):
    import common

    def seconds(r, name):
        return [f"{r[key]:.2f}" if key in r else "-" for key in (f"{name}_s", f"{name}_cpu_s")]

    rows, ratios = [], {}
    for task in tasks(quick):
        what = f"{FAMILIES[task][0]} on {FAMILIES[task][1]}" if task in FAMILIES else " ".join(SHOOTOUT[:2])
        for i, phase in enumerate(p for p in PHASES if p in report[task]):
            r = report[task][phase]
            wall, cpu = zip(seconds(r, "import"), seconds(r, "first_solve"), seconds(r, "process"))
            rows.append((task if i == 0 else "", what if i == 0 else "", phase, *wall, *cpu))
        key = "first_solve_cpu_s" if task in FAMILIES else "process_cpu_s"
        ratios[f"{task}, {'first solve' if task in FAMILIES else 'process'}"] = (report[task]["cold"][key]
                                                                                / report[task]["warm"][key])
    print("\nSeconds, each run a fresh process: `import odekit`, the first solve, the whole process "
          "(first: backend='auto' on a fresh install; cold: 'numba', compiling; warm: 'numba', cached)")
    common.print_table(("", "first solve of", "", "wall: import", "solve", "process", "CPU: import", "solve",
                        "process"), rows, "lll" + "r" * 6)
    print_fixed(report)
    common.print_ratios("cold / warm CPU time: the first time on a machine against every later time", ratios)


def print_fixed(report):
    import common

    fixed = report["fixed"]
    print(f"\nFixed costs, warm (best of {fixed['repeats']} rounds of a timeit-style batch of each call; "
          f"{fixed['backend']} backend)")
    common.print_table(("", "wall us", "CPU us"), [
        (label, f"{fixed[name + '_s'] * 1e6:.1f}", f"{fixed[name + '_cpu_s'] * 1e6:.1f}") for label, name in (
            ("odekit.solve(kepler over one step, 'dp54')", "dp54_solve"),
            ("the same, controller=PIController(safety=0.8)", "dp54_controller_solve"),
            (f"odekit.solve(kepler over one step, 'rk4', h={H})", "rk4_solve"),
            ("odekit.prepare(kepler over one step, 'dp54'), called", "dp54_prepared_solve"),
            ("the same, called with y0", "dp54_prepared_y0_solve"),
            ("the same, called with y0 and args", "dp54_prepared_args_solve"),
            (f"Integrator(kepler, 'rk4', h={H}).step()", "integrator_step"),
            ("numbalsoda dop853, the same span and tolerances", "numbalsoda_dop853"),
            ("numbalsoda lsoda, the same span and tolerances", "numbalsoda_lsoda")) if name + "_s" in fixed])
    pieces = fixed.get("pieces")
    if pieces:
        rest = pieces["found"] - sum(pieces[k] for k in ("arrays", "call", "solution", "shape"))
        print("  where dp54's solve goes, us: " + " + ".join(
            f"{what} {pieces[key] * 1e6:.2f}" for what, key in (
                ("arguments and finding the run kept", "arguments"), ("output arrays", "arrays"),
                ("compiled call", "call"), ("Solution", "solution"), ("shaping the states", "shape")))
            + f" + rest {rest * 1e6:.2f} = {pieces['whole'] * 1e6:.2f}")
    if pieces and "numbalsoda_dop853_s" in fixed:
        # what odekit.solve pays whatever the run, against what a lead of LEAD over numbalsoda leaves
        floor = pieces["arguments"] + pieces["arrays"] + pieces["idle"] + pieces["solution"]
        print(f"  a {LEAD}x lead over numbalsoda's dop853 needs the whole solve in "
              f"{fixed['numbalsoda_dop853_s'] / LEAD * 1e6:.2f} us; without its run it takes {floor * 1e6:.2f} "
              f"(arguments, output arrays, the call told not to run {pieces['idle'] * 1e6:.2f}, Solution), "
              f"and the run in the call {(pieces['call'] - pieces['idle']) * 1e6:.2f} more; solve() stripped to "
              f"what it cannot do without (keywords, a lookup, the arrays, the call, a Solution) "
              f"{pieces['bare'] * 1e6:.2f}")
    for span, steps, ours, peer in fixed.get("spans", []):
        print(f"  dp54 over {span:g} ({steps} steps): {ours * 1e6:.2f} us" +
              (f"; numbalsoda dop853 {peer * 1e6:.2f} us" if peer else ""))
    if "numbalsoda_dop853_s" in fixed:
        common.print_ratios("time of numbalsoda's call / time of odekit.solve over one step of Kepler", {
            f"numbalsoda {peer} / odekit {ours}": fixed[f"numbalsoda_{peer}_s"] / fixed[f"{ours}_solve_s"]
            for peer in ("dop853", "lsoda") for ours in ("dp54", "rk4", "dp54_prepared")})
    else:
        print("  numbalsoda skipped: it is not installed (the peers extra)")


def unmeasured_families():
    """Registered families that FAMILIES lacks (a new family should be added to it)."""
    import odekit

    return sorted({getattr(m.family, "name", m.family) for m in odekit.methods()} - set(FAMILIES))


def main(argv=None):
    import common

    parser = common.parser(__doc__)
    parser.add_argument("--fixed", action="store_true", help="only the fixed costs of a call, warm (a minute)")
    options = parser.parse_args(argv)
    backend = "python" if options.quick else "numba"
    report = {"machine": common.machine(), "quick": options.quick, "backend": backend}
    common.print_header("odekit start-up benchmark: first solves with an empty Numba cache and a warm one",
                        report["machine"], options.quick)
    with tempfile.TemporaryDirectory(prefix="odekit-startup-") as tmp:
        report.update(measure(backend, options.quick, pathlib.Path(tmp), options.fixed))
    if options.fixed:
        print_fixed(report)
    else:
        print_report(report, options.quick)
    missing = unmeasured_families()
    if missing:
        print(f"\nnote: families not measured (add them to FAMILIES): {', '.join(missing)}")
    common.write_json(options.json, report)


if __name__ == "__main__":
    if sys.argv[1:2] == [CHILD]:         # run by run_child: nothing imported before its timings
        child(*sys.argv[2:4], quick="--quick" in sys.argv)
    else:
        main()
