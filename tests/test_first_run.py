"""A first run on a new machine: no silent wait for Numba, and a short one no wait at all.

Each test runs fresh Python processes on a fresh copy of odekit with an
empty kernel cache, as ``benchmarks/bench_startup.py`` does, on one family
(``explicit_rk``) to keep them short: a copy's cold compile is its first.
"Kernel compiles" are Numba's compile events of the families' loops: what
the disk cache keeps (a problem's own functions are compiled in every
process, and are not counted).
"""

import json
import pathlib
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_startup  # noqa: E402  (fresh_copy and run: the benchmark's own cold start)

import odekit  # noqa: E402
from odekit.backend import FIRST_RUN_REASON  # noqa: E402

pytestmark = pytest.mark.slow

PRELUDE = """
import json, warnings
from numba.core import event
import odekit
from odekit import backend
from odekit.families import FAMILIES

loops = {f.deriv for f in FAMILIES.values()} | {f.drive(e) for f in FAMILIES.values() for e in (False, True)}
recorder = event.RecordingListener()
event.register("numba:compile", recorder)
catching = warnings.catch_warnings(record=True)
caught = catching.__enter__()
warnings.simplefilter("always")

def counts():
    return {"kernel_compiles": sum(1 for _, e in recorder.buffer
                                   if e.is_start and e.data["dispatcher"].py_func in loops),
            "notices": [str(w.message) for w in caught if issubclass(w.category, odekit.CompilationNotice)]}

def same(a, b):
    return bool((a.t == b.t).all() and (a.y == b.y).all() and a.stats == b.stats)
"""


def child(folder, script):
    """Run ``PRELUDE + script`` in a fresh process on the copy in ``folder``; the JSON it prints last."""
    out = bench_startup.run(folder, ["-c", PRELUDE + script])[1]
    return json.loads(out.splitlines()[-1])


@pytest.fixture
def fresh(tmp_path):
    folder = pathlib.Path(tempfile.mkdtemp(dir=tmp_path))
    bench_startup.fresh_copy(folder)
    return folder


def test_a_cold_first_solve_runs_on_python_and_the_next_compiles_once_with_one_notice(fresh):
    cold = child(fresh, """
backend.FIRST_RUN_SECONDS = 1e9                  # the first run: all on Python, however long
short = odekit.problems.lorenz().with_span((0.0, 1.0))
quick = odekit.solve(short, "dp54")
before = counts()
again = odekit.solve(short, "dp54")              # the next compiles
third = odekit.solve(short, "dp54", backend="numba")
print(json.dumps({"quick": [quick.backend, quick.backend_reason], "before": before,
                  "again": [again.backend, again.backend_reason], "same": same(quick, again), "after": counts()}))
""")
    assert cold["quick"] == ["python", FIRST_RUN_REASON]
    assert cold["before"] == {"kernel_compiles": 0, "notices": []}          # nothing compiled for the first run
    assert cold["again"] == ["numba", ""] and cold["same"]
    assert cold["after"]["kernel_compiles"] > 0
    (notice,) = cold["after"]["notices"]                 # once, though the compiled loop ran twice
    # Lorenz's three floats are packed (odekit.kernels.packing): the loop is any few floats' loop
    assert "explicit_rk" in notice and "once per machine" in notice and "args of at most 4 floats and ints" in notice

    warm = child(fresh, """
backend.FIRST_RUN_SECONDS = 1.0                  # the default (the tests' environment sets 0)
sol = odekit.solve(odekit.problems.lorenz().with_span((0.0, 1.0)), "dp54")
print(json.dumps({"backend": [sol.backend, sol.backend_reason], **counts()}))
""")
    assert warm == {"backend": ["numba", ""], "kernel_compiles": 0, "notices": []}


def test_warmup_leaves_a_fresh_process_nothing_to_compile_even_after_a_reinstall(fresh, tmp_path):
    argv = ["-m", "odekit.cli", "warmup", "--families", "explicit_rk"]
    first = bench_startup.run(fresh, argv)[1].splitlines()
    assert first[0] == "warmup: explicit_rk (explicit Runge-Kutta) ..."
    assert first[1].startswith("warmup: explicit_rk: compiled, ") and len(first) == 2
    again = bench_startup.run(fresh, argv)[1].splitlines()
    assert again[1].startswith("warmup: explicit_rk: in the cache, ")

    # a reinstall: the same sources in another folder (no __pycache__), the same user's cache
    reinstalled = pathlib.Path(tempfile.mkdtemp(dir=tmp_path))
    bench_startup.fresh_copy(reinstalled)
    (reinstalled / "numba_cache").rmdir()
    (reinstalled / "numba_cache").symlink_to(fresh / "numba_cache")
    after = child(reinstalled, """
backend.FIRST_RUN_SECONDS = 1.0                  # the default: a loop not in the cache would start on Python
kepler, decay = odekit.problems.kepler(orbits=1), odekit.ODEProblem(lambda t, y: -y, (0.0, 1.0), [1.0])
runs = [odekit.solve(kepler, "dp54") for _ in range(odekit.integrator.RERUN_AFTER + 3)]   # (float,); in one call
runs.append(odekit.solve(decay, "rk4", h=0.01))                              # args ()
print(json.dumps({"backends": sorted({(s.backend, s.backend_reason) for s in runs}), **counts()}))
""")
    # nothing compiled, nothing announced: neither the loops nor the one call of a solve run again
    assert after == {"backends": [["numba", ""]], "kernel_compiles": 0, "notices": []}


def test_a_first_run_that_outlasts_its_python_time_goes_on_compiled_bit_for_bit(monkeypatch):
    """In this process: the loop made to look uncompiled and not on disk, so that the run starts on Python."""
    from odekit import backend
    from odekit.kernels import jit

    lorenz = odekit.problems.lorenz().with_span((0.0, 40.0))
    compiled = odekit.solve(lorenz, "dp54", backend="numba")
    for name in ("_KERNELS", "_PREPARED", "_SPENT"):
        monkeypatch.setattr(backend, name, {})
    monkeypatch.setattr(backend, "FIRST_RUN_SECONDS", 1e-9)           # the first slice, then compiled
    monkeypatch.setattr(jit, "on_disk", lambda fn, signature: False)
    with pytest.warns(odekit.CompilationNotice):
        switched = odekit.solve(lorenz, "dp54")
    assert sum(backend._SPENT.values()) > 0                           # it did start on Python
    assert switched.backend == "numba" and switched.backend_reason == ""
    assert switched.stats.naccepted > 1024 and switched.stats == compiled.stats   # more than one slice
    assert (switched.t == compiled.t).all() and (switched.y == compiled.y).all()


def test_warmup_skips_a_family_that_runs_no_plain_problem_and_names_unknown_ones():
    from odekit.warmup import warmup

    lines = []
    assert warmup(["kepler_splitting"], report=lines.append) == {}          # nothing compiled
    assert lines == ["warmup: kepler_splitting: skipped, none of its methods runs a plain first- or "
                     "second-order problem (it compiles on its first run)"]
    with pytest.raises(ValueError, match=r"families must be among .*explicit_rk.*; got 'rk4'"):
        warmup(["rk4"])


def _held(lock_file):
    """Whether a process holds ``lock_file`` (see ``odekit.kernels.jit._KeyedCacheFile.alone``)."""
    import fcntl

    with open(lock_file, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl: each process compiles for itself")
def test_a_second_process_that_needs_a_loop_being_compiled_waits_and_loads_it(fresh):
    """A Dask cluster's workers handed one ensemble start together and need the same loops:
    each compiled them.  The second process here starts while the first is compiling its loop, and must
    compile no loop of its own: it waits for the first, then loads what it saved."""
    import os
    import subprocess
    import time

    script = PRELUDE + """
sol = odekit.solve(odekit.ODEProblem(lambda t, y: -y, (0.0, 1.0), [1.0]), "rk4", h=0.01, backend="numba")
print(json.dumps({"y": sol.y[:, -1].tolist(), **counts()}))
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(fresh / "numba_cache"),
               PYTHONPATH=os.pathsep.join([str(fresh / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]))

    def start():
        return subprocess.Popen([sys.executable, "-c", script], env=env, cwd=fresh, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    first = start()
    deadline = time.monotonic() + 120
    while not any(_held(f) for f in (fresh / "numba_cache").rglob("driver*.lock")):
        assert first.poll() is None and time.monotonic() < deadline, "the first never held its loop's lock"
        time.sleep(0.05)
    second = start()
    runs = []
    for process in (first, second):
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
        runs.append(json.loads(out.splitlines()[-1]))
    assert runs[0]["kernel_compiles"] >= 1
    assert runs[1]["kernel_compiles"] == 0          # (its notice of a compile stands: it waits as long)
    assert runs[1]["y"] == runs[0]["y"]


def test_two_processes_saving_kernels_of_one_source_at_once_never_cross_their_code(tmp_path):
    """Every family's loop is one source, so their kernels share one index in the cache.  Numba named a
    new data file by the first number free in the index as the process had read it: two processes that
    read it before either wrote took the same name, and the index one kept could name the code the other
    wrote (a step() of dp54 ran the implicit Runge-Kutta loop).  Interleaved here as two such processes
    can be: both read an empty index, the first writes its index and the second its own, then the data
    files in the other order."""
    from odekit.kernels import jit

    files = [jit._KeyedCacheFile(str(tmp_path), "loop", "stamp") for _ in range(2)]
    writes = []
    for f in files:
        f._load_index = lambda: {}                                          # both read it before either wrote
        f._save_data = lambda name, data, f=f: writes.append((f, name, data))   # held back, written below
    files[0].save(("explicit",), "code of the explicit loop")
    files[1].save(("implicit",), "code of the implicit loop")
    for f, name, data in reversed(writes):
        type(f)._save_data(f, name, data)
    reader = jit._KeyedCacheFile(str(tmp_path), "loop", "stamp")
    assert reader.load(("explicit",)) in (None, "code of the explicit loop")       # lost at worst, never crossed
    assert reader.load(("implicit",)) == "code of the implicit loop"


SYMBOL = """
import sys
import numba
import odekit.kernels.jit    # noqa: F401  (odekit's compiler settings)

def make(k):
    def scaled(x):
        return k * x
    return scaled

scaled = numba.njit(make(int(sys.argv[1])))
scaled.compile("int64(int64)")
print(scaled.overloads[scaled.signatures[0]].fndesc.llvm_func_name)
"""


def test_two_processes_compiling_two_closures_of_one_source_give_them_two_symbols():
    """A compiled function's symbol was its name, its argument types and Numba's count of the functions the
    process had compiled: two processes doing the same steps gave two closures of one source (the loop of
    every family is one) one symbol, and a process that loaded both from the cache called one for the
    other (a repeated dp54 solve ran backward Euler's loop)."""
    names = [subprocess.run([sys.executable, "-c", SYMBOL, str(k)], capture_output=True, text=True,
                            check=True).stdout.strip() for k in (2, 3)]
    assert all("scaled" in name for name in names) and names[0] != names[1]


BACKGROUND_AT_EXIT = """
import pathlib, sys, time
from odekit import backend

folder = pathlib.Path(sys.argv[1])

def compile_(name):
    (folder / (name + ".begun")).write_text("")
    time.sleep(1.0)
    (folder / name).write_text("compiled")

for name in ("first", "second"):
    backend.in_background(lambda name=name: compile_(name))
while not (folder / "first.begun").exists():
    time.sleep(0.01)
"""


def test_a_process_that_exits_while_loops_compile_in_the_background_finishes_the_one_under_way(tmp_path):
    """A compiling daemon thread stopped by the interpreter's exit crashed the process (LLVM's assertions, or a
    segmentation fault: six of six cold runs of the served page's tests); the exit now waits for the compilation
    under way and says why, and drops those not begun (a Ctrl-C of `odekit serve` during its warm-up would wait
    for all).  The compilations are stand-ins that take a second and leave a file."""
    out = subprocess.run([sys.executable, "-c", BACKGROUND_AT_EXIT, str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "first").read_text() == "compiled"
    assert not (tmp_path / "second.begun").exists()
    assert "odekit: finishing the compilation under way in the background before exiting" in out.stderr
