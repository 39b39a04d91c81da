"""What the benchmarks share: the options, the machine header, the timers, the stiff problems, the tables.

Each benchmark is a script, ``python benchmarks/bench_x.py``; Python puts the
script's folder on ``sys.path``, so ``import common`` finds this module and
``import odekit`` finds the installed package (or ``PYTHONPATH=src``).

Every script takes ``--quick``: tiny sizes and single timings, a few seconds
in all, that still compute every ratio and print every table.
``tests/test_benchmarks.py`` runs each that way, so a benchmark that rots
fails the tests.  Its figures mean nothing; only the full runs are measured.
"""

import argparse
import dataclasses
import datetime
import functools
import gc
import importlib.metadata
import json
import math
import os
import pathlib
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

RATIOS = "ratios:"          # heads every ratio table; tests/test_benchmarks.py looks for it


# --- options and the header ---------------------------------------------------------------

def parser(doc):
    """The script's argument parser, with ``--quick`` and ``--json PATH``."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes, a few seconds: checks that the script runs; its figures mean nothing")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    return p


def write_json(path, report):
    if path:
        pathlib.Path(path).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {path}")


def machine():
    """The CPU, core counts, system, versions and date, for the header and the JSON."""
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


def print_header(title, m, quick=False):
    print(title + ("  [--quick: tiny sizes, figures meaningless]" if quick else ""))
    print(f"  CPU      {m['cpu']}  ({m['cores']} cores, {m['usable_cores']} usable)")
    print(f"  system   {m['platform']}")
    print(f"  versions Python {m['python']}, NumPy {m['numpy']}, SciPy {m['scipy']}, "
          f"Numba {m['numba']}, odekit {m['odekit']}")
    print(f"  date     {m['date']}", flush=True)



def rebound(m):
    """REBOUND's module, its version noted in ``m`` and printed under the header; None (with a note) if absent."""
    try:
        import rebound
    except ImportError:
        print("  REBOUND  not installed: its runs are skipped")
        return None
    m["rebound"] = rebound.__version__
    print(f"  REBOUND  {rebound.__version__}")
    return rebound

# --- timers -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Timing:
    """How hard the timers try: the best of ``repeats``, short calls in batches of ``batch_seconds``.

    ``clock`` is wall time; ``time.process_time`` (this process's CPU time)
    is steadier on a machine shared with other work.
    """

    repeats: int = 5
    batch_seconds: float = 0.2
    clock: object = time.perf_counter


QUICK_TIMING = Timing(repeats=1, batch_seconds=0.0)


def best_of(fn, timing=Timing()):
    """``(best wall time in s, result of the last call)`` over ``timing.repeats`` calls, GC off."""
    best, result = math.inf, None
    for _ in range(timing.repeats):
        gc.collect()
        gc.disable()
        try:
            start = timing.clock()
            result = fn()
            best = min(best, timing.clock() - start)
        finally:
            gc.enable()
    return best, result


def per_call(fn, timing=Timing()):
    """``(best time per call in s, result)``, timeit-style: ``timing.repeats`` batches of back-to-back calls.

    Short calls (a fraction of a millisecond) are timed in batches lasting
    about ``timing.batch_seconds``, with garbage collection off, as
    ``timeit`` does: timing one call right after a collection would charge
    it for the caches the collector emptied.
    """
    best, results = per_call_each({None: fn}, timing)
    return best[None], results[None]


def per_call_each(calls, timing=Timing()):
    """``({name: best time per call in s}, {name: result})`` of the ``calls`` (functions by name), as
    :func:`per_call` times one, in ``timing.repeats`` rounds of a batch of each.

    Timed one after the other, a call's batches fall within a second, and a
    few seconds of other work on a shared machine spoil all of them: on
    2026-11-30 a prepared solve measured 3.2 us wall and 2.5 CPU in a table
    run, against 2.3 and 2.2 in the next minute, and other rows had the same
    in other runs.  In rounds such a stretch costs each call a batch or two,
    and calls compared with each other are timed at the same moments.
    """
    results, numbers = {}, {}
    for name, fn in calls.items():
        results[name] = fn()
        start = timing.clock()
        fn()
        numbers[name] = max(1, int(timing.batch_seconds / max(timing.clock() - start, 1e-9)))
    best = dict.fromkeys(calls, math.inf)
    gc.disable()
    try:
        for _ in range(timing.repeats):
            gc.collect()
            for name, fn in calls.items():
                number = numbers[name]
                start = timing.clock()
                for _ in range(number):
                    fn()
                best[name] = min(best[name], (timing.clock() - start) / number)
    finally:
        gc.enable()
    return best, results


# --- work against precision: a solver over a ladder of tolerances ---------------------------

def measure(run, rtols, timing, error, slow=False):
    """``[(rtol, error, seconds)]`` of ``run(rtol)`` over ``rtols``; a solver slower than 0.5 s a run stops there.

    ``run(rtol)`` returns the final state and ``error(state)`` its error.
    The first call, at ``rtols[0]``, is a warm-up that compiles; ``slow``
    solvers are timed once at each tolerance.
    """
    run(rtols[0])
    points = []
    for rtol in rtols:
        seconds, y = per_call(lambda: run(rtol), dataclasses.replace(timing, repeats=1) if slow else timing)
        points.append((rtol, error(y), seconds))
        if seconds > 0.5:
            break
    return points


def at_target(points, target):
    """``(seconds, error, rtol)`` of the loosest tolerance in ``points`` whose error meets ``target``, or None."""
    for rtol, error, seconds in points:
        if error <= target:
            return seconds, error, rtol
    return None


SEARCH_STEPS = 3            # tolerances tried between two rungs of a ladder: eighths of a decade between halves


def searched(run, points, target, timing, error, slow=False):
    """:func:`at_target`, the tolerance then searched between the rungs: ``(seconds, error, rtol)`` or None.

    From the ladder's loosest rung meeting ``target`` towards the rung above
    it (which missed), :data:`SEARCH_STEPS` tolerances evenly spaced in
    log; the loosest of them meeting ``target``, else the rung.  A ladder of
    half decades hands a solver up to ``10^(1/2)`` of tolerance it did not
    need -- at order ``p``, up to ``10^(1/(2p))`` in work, 15 % at order 4 --
    and hands it to whichever solver its rungs happen to leave farthest
    below the target.  Chosen by the error alone, as the rung is, and for
    every solver alike; ``run``, ``timing``, ``error`` and ``slow`` as for
    :func:`measure`, ``points`` what it returned.
    """
    hit = at_target(points, target)
    if hit is None:
        return None
    rung = [p[0] for p in points].index(hit[2])
    if rung == 0:
        return hit
    above, below = points[rung - 1][0], hit[2]
    timing = dataclasses.replace(timing, repeats=1) if slow else timing
    for k in range(1, SEARCH_STEPS + 1):
        rtol = above * (below / above) ** (k / (SEARCH_STEPS + 1))
        seconds, y = per_call(lambda: run(rtol), timing)
        err = error(y)
        if err <= target:
            return seconds, err, rtol
    return hit


CANDIDATES = 2              # odekit's fastest solvers of a group timed again with the peer at each target


def retimed(hits, runs, timing, peer, groups):
    """``hits`` (``{label: (seconds, error, rtol) or None}``) with the times of ``peer`` and of the
    :data:`CANDIDATES` fastest of each group (a list of labels) in ``groups`` measured again, all together in
    rounds (:func:`per_call_each`), ``runs[label](rtol)`` at each one's tolerance.

    The ladder and the search time each solve on its own, a second at a
    time; a few seconds of other work on a shared machine then made one
    rung 50 % slower (rodas4 on Robertson: 28.3 us in one run, 18.6 in the
    one before, lsoda 30.7 and 32.0), which one ratio took.  Timed again
    in rounds, the solves a ratio compares are timed at the same moments.
    """
    labels = [label for label in [peer] if hits.get(label)]
    for group in groups:
        labels += sorted((label for label in group if hits.get(label)), key=lambda label: hits[label][0])[:CANDIDATES]
    best = per_call_each({label: functools.partial(runs[label], hits[label][2]) for label in labels}, timing)[0]
    return {label: (best[label],) + hit[1:] if label in best else hit for label, hit in hits.items()}


def ladder_json(by_solver):
    """``{solver: [(rtol, error, seconds)]}`` as JSON: each point a dict."""
    return {label: [dict(zip(("rtol", "error", "seconds"), p)) for p in points] for label, points in by_solver.items()}


def print_peer_ratios(ratios, results, title, ours):
    """Print ``ratios`` against a peer under ``title``; without them (the peer is not installed), the spread
    of ``ours`` (odekit's methods) in ``results``, ``{case: {solver: points}}``: slowest over fastest time
    at the loosest rtol, so that a run without the peer still prints ratios."""
    if ratios:
        print_ratios(title, ratios)
        return
    spread = {case: max(pts[0][2] for pts in by.values()) / min(pts[0][2] for pts in by.values())
              for case, by in results.items()}
    print_ratios(f"odekit's slowest {ours} / its fastest at the loosest rtol (numbalsoda missing)", spread)


# --- the small stiff problems of bench_stiff and bench_floor ---------------------------------

def stiff_problems(rtol=1e-6, quick=False):
    """``(label, problem, atol, published reference or None)``: Robertson, Van der Pol, HIRES.

    Each atol is the one for rtol 1e-6, scaled by ``rtol / 1e-6``.  ``quick``:
    Robertson alone, to t = 100.
    """
    from odekit import problems

    scale = rtol / 1e-6
    if quick:
        return [("Robertson, t to 100", problems.robertson().with_span((0.0, 100.0)), 1e-10 * scale, None)]
    return [
        ("Robertson, t to 1e11", problems.robertson().with_span((0.0, 1e11)), 1e-10 * scale, None),
        ("Van der Pol mu=1000, t to 3000", problems.van_der_pol(mu=1000.0, t_end=3000.0), 1e-6 * scale, None),
        ("HIRES, t to 321.8122", problems.hires(), 1e-10 * scale, np.array(problems.HIRES_REFERENCE)),
    ]


# --- tables -------------------------------------------------------------------------------

def print_table(header, rows, align=None, indent="  "):
    """Print ``rows`` of cells under ``header`` in aligned columns.

    ``align`` has one letter per column, ``l`` or ``r`` (default: the first
    column left, the others right).  A row that is a plain string (a note,
    such as ``"odekit bdf  skipped: ..."``) is printed as it is.
    """
    align = align or "l" + "r" * (len(header) - 1)
    table = [tuple(str(cell) for cell in row) for row in rows if not isinstance(row, str)]
    widths = [max(len(row[i]) for row in [tuple(header), *table]) for i in range(len(header))]
    for row in [header, *rows]:
        if isinstance(row, str):
            print(indent + row)
            continue
        cells = (str(c).ljust(w) if a == "l" else str(c).rjust(w) for c, w, a in zip(row, widths, align))
        print((indent + "  ".join(cells)).rstrip())


def print_ratios(title, ratios):
    """The table a benchmark exists for: ``name  value x`` for each ratio in ``ratios``, a dict."""
    print(f"\n{RATIOS} {title}")
    print_table(("", "ratio"), [(name, f"{value:.3g}x") for name, value in ratios.items()])
    sys.stdout.flush()
