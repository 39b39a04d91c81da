"""Runs that must not hang, outgrow memory or ignore Ctrl-C (issue #13, items 10-12).

A test of a hang runs the suspect code in a subprocess with a time limit,
so that the suite itself never hangs.
"""

import dataclasses
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc

import numpy as np
import pytest

import odekit
from conftest import decay
from odekit import integrator, recording
from odekit.recording import step_floor

KEPLER = odekit.problems.kepler(e=0.5, orbits=2)
SRC = str(pathlib.Path(odekit.__file__).resolve().parents[1])     # this checkout's odekit, for subprocesses
LIMIT = 60                                                          # seconds a subprocess may take


def python(code, timeout=LIMIT):
    """Run ``code`` in a fresh interpreter; its completed process (failing the test if it did not finish)."""
    return command(["-c", textwrap.dedent(code)], timeout)


def command(args, timeout=LIMIT):
    try:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONPATH": SRC})
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {timeout} s: {args}")


# --- 10. steps too small for floating point: an error before anything runs -----------------

def test_a_fixed_step_too_small_to_advance_t_is_refused_naming_h():
    done = python("""
        import odekit
        try:
            odekit.solve(odekit.problems.kepler(), "rk4", h=1e-17, max_steps=10, backend="python")
        except ValueError as exc:
            print(exc)
    """)
    assert done.returncode == 0, done.stderr
    floor = step_floor(odekit.problems.kepler().t_span)
    assert done.stdout.startswith("h=1e-17 is too small to advance t in floating point across t_span=(0.0, 6.28")
    assert f"accepted: h > {floor:.3g}" in done.stdout


def test_a_fixed_step_at_the_floor_is_refused_and_one_above_it_advances_t():
    prob = odekit.ODEProblem(decay, (1e6, 1e6 + 1.0), [1.0])
    floor = step_floor(prob.t_span)
    assert floor == 10 * np.finfo(float).eps * (1e6 + 1.0)
    with pytest.raises(ValueError, match=rf"controller\.h={float(floor)!r} is too small to advance t in floating "
                                         r"point across t_span=\(1000000\.0, 1000001\.0\)"):
        odekit.solve(prob, "rk4", controller=odekit.FixedStep(floor), backend="python")
    sol = odekit.solve(prob, "rk4", h=1.5 * floor, max_steps=3, backend="python")    # above it, a step advances t
    assert sol.status == odekit.Status.MAX_STEPS and np.all(np.diff(sol.t) > 0)


def test_a_step_just_above_the_floor_runs_its_max_steps_at_once_with_small_buffers():
    # 4e14 steps to t_end: counting them for the buffers must neither loop nor allocate them
    done = python("""
        import tracemalloc, odekit
        from odekit.recording import step_floor
        prob = odekit.problems.kepler()
        tracemalloc.start()
        sol = odekit.solve(prob, "rk4", h=3 * step_floor(prob.t_span), max_steps=10, backend="python")
        print(sol.status.name, len(sol.t), tracemalloc.get_traced_memory()[1])
    """)
    assert done.returncode == 0, done.stderr
    status, rows, peak = done.stdout.split()
    assert status == "MAX_STEPS" and int(rows) == 11 and int(peak) < 2 ** 20


@pytest.mark.parametrize("argv, named", [
    (["solve", "kepler", "--h", "1e-300"], "h=1e-300 is too small to advance t"),
    (["shootout", "kepler", "--budget", "1e300"], "budget=1e+300 gives euler a step h=1e-300 too small"),
])
def test_the_cli_refuses_steps_too_small_at_once(argv, named):
    done = command(["-m", "odekit.cli", *argv, "--quiet"])
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"odekit: error: {named}") and "Traceback" not in done.stderr


def test_the_shootout_names_the_largest_budget_accepted():
    prob = odekit.problems.kepler()
    floor = step_floor(prob.t_span)
    with pytest.raises(ValueError, match=re.escape(f"accepted: budget < {2 / floor:g}")):
        odekit.shootout(prob, ["heun"], budget=2 / floor * 1.01, backend="python")


# --- 11. output that grows as the run goes -------------------------------------------------

def peak_memory(run):
    """``(run(), the most bytes it held at once)``, as tracemalloc counts NumPy's arrays."""
    tracemalloc.start()
    try:
        return run(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_tiny_step_with_max_steps_allocates_only_what_it_records():
    # h = 1e-9 over [0, 10] is 1e10 steps: buffers for them all would be 224 GiB
    prob = odekit.ODEProblem(decay, (0.0, 10.0), np.ones(2))
    sol, peak = peak_memory(lambda: odekit.solve(prob, "rk4", h=1e-9, max_steps=1000, backend="python"))
    assert sol.status == odekit.Status.MAX_STEPS and len(sol.t) == 1001
    assert peak < 2 ** 20


def test_an_adaptive_run_grows_its_buffers_from_small(monkeypatch):
    sizes = []
    grow = recording.Recorder.grow

    def spy(self, ist):
        sizes.append(self.out_t.shape[0])
        return grow(self, ist)

    monkeypatch.setattr(recording.Recorder, "grow", spy)
    sol = odekit.solve(odekit.problems.kepler(e=0.5, orbits=20), "dp54", rtol=1e-10, backend="python")
    assert sol.success and 2 * recording.START_ROWS < len(sol.t) < 1_000_000
    assert sizes[:2] == [recording.START_ROWS, 2 * recording.START_ROWS]


FREE = 2 ** 17           # bytes of memory free, as little_memory pretends: output may take half


@pytest.fixture
def little_memory(monkeypatch):
    """Pretend only FREE bytes of memory are free, and check even small buffers against it."""
    monkeypatch.setattr(recording, "SMALL_BYTES", 0)
    monkeypatch.setattr(recording, "available_memory", lambda: FREE)


def harmonic(t, y):
    return np.array([y[1], -y[0]])


@pytest.mark.parametrize("method, options", [("rk4", {"h": 1e-3}), ("dp54", {"rtol": 1e-12, "atol": 1e-12})])
def test_a_run_that_would_outgrow_memory_stops_keeping_its_steps(request, method, options):
    prob = odekit.ODEProblem(harmonic, (0.0, 100.0), [1.0, 0.0])
    full = odekit.solve(prob, method, backend="python", max_steps=5000, **options)
    request.getfixturevalue("little_memory")
    sol = odekit.solve(prob, method, backend="python", max_steps=5000, **options)
    assert sol.status == odekit.Status.MEMORY_LIMIT and not sol.success
    assert sol.message.startswith(f"the output outgrew the memory at t={sol.t[-1]:.6g} before t_end=100: ")
    assert "keep every k-th step with save_every=k, or only the states at chosen times with t_eval" in sol.message
    row = 8 + 2 * 8
    assert FREE / 4 < len(sol.t) * row <= FREE / 2         # it doubled while it could
    assert sol.stats.naccepted == len(sol.t) - 1
    # the steps kept are those of the full run
    assert np.array_equal(full.t[:len(sol.t)], sol.t) and np.array_equal(full.y[:len(sol.t)], sol.y)


def test_dense_output_out_of_memory_says_it_keeps_every_step(little_memory):
    prob = odekit.ODEProblem(decay, (0.0, 10.0), np.ones(2))
    sol = odekit.solve(prob, "rk4", h=1e-4, save_every=1000, dense_output=True, backend="python")
    assert sol.status == odekit.Status.MEMORY_LIMIT
    assert sol.message.endswith("; dense_output keeps every step, whatever save_every says")


def test_record_steps_out_of_memory_raises_with_the_steps(little_memory):
    it = odekit.Integrator(odekit.ODEProblem(decay, (0.0, 10.0), np.ones(2)), "rk4", h=1e-4, backend="python")
    with pytest.raises(odekit.IntegrationError, match="record fewer steps per call") as caught:
        it.record_steps(50_000)
    error = caught.value
    assert error.status == odekit.Status.MEMORY_LIMIT
    assert 1 < len(error.t) < 50_000 and error.t[-1] == it.t and np.array_equal(error.y[-1], it.y)


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("method, options", [
    ("rk4", {"h": 0.01}),
    ("dp54", {"rtol": 1e-8}),
    ("velocity_verlet", {"h": 0.01, "max_steps": 1000}),    # stops between two saved steps
])
@pytest.mark.parametrize("k", [1, 7, 16])
def test_save_every_keeps_every_kth_step_and_the_last_as_the_full_run(backend, method, options, k):
    full = odekit.solve(KEPLER, method, backend=backend, **options)
    thin = odekit.solve(KEPLER, method, backend=backend, save_every=k, **options)
    n = full.stats.naccepted
    rows = list(range(0, n + 1, k)) + ([n] if n % k else [])
    assert np.array_equal(thin.t, full.t[rows]) and np.array_equal(thin.y, full.y[rows])
    assert thin.stats == full.stats and thin.status == full.status and thin.message == full.message


def test_save_every_is_checked():
    with pytest.raises(ValueError, match="save_every must be a positive integer, got 0"):
        odekit.solve(KEPLER, "rk4", h=0.01, save_every=0)
    with pytest.raises(ValueError, match="save_every=3 thins the stored steps, and t_eval"):
        odekit.solve(KEPLER, "rk4", h=0.01, save_every=3, t_eval=[0.0, 1.0])


def test_save_every_keeps_memory_flat():
    prob = odekit.ODEProblem(decay, (0.0, 1.0), np.ones(300))
    sol, peak = peak_memory(lambda: odekit.solve(prob, "rk4", h=1e-3, save_every=10, backend="python"))
    assert len(sol.t) == 101 and sol.t[-1] == 1.0
    assert peak < 2 ** 20       # 0.3 MB: not the 2.4 MB of every step


# --- 12. Ctrl-C -----------------------------------------------------------------------------

@pytest.mark.parametrize("method, options", [
    ("velocity_verlet", {"h": 0.01}),
    ("dp54", {"rtol": 1e-6, "dense_output": True}),
    ("rk4", {"rtol": 1e-6, "adaptive": "doubling"}),
    ("bdf", {"rtol": 1e-6}),
    ("radau5", {"rtol": 1e-6, "t_eval": np.linspace(0.0, 12.0, 37)}),
])
def test_a_run_cut_into_slices_of_one_step_is_the_same_bit_for_bit(monkeypatch, method, options):
    plain = odekit.solve(KEPLER, method, backend="python", **options)
    monkeypatch.setattr(integrator, "FIRST_SLICE", 1)
    monkeypatch.setattr(integrator, "SLICE_SECONDS", 0.0)
    calls, prepare = [], odekit.backend.prepare

    def counting(*args):            # the kernels of the run, with their loop's calls counted
        kernels, code = prepare(*args)

        def drive(*arrays):
            calls.append(arrays)
            return kernels.drive(*arrays)
        return dataclasses.replace(kernels, drive=drive), code

    monkeypatch.setattr(odekit.backend, "prepare", counting)
    sliced = odekit.solve(KEPLER, method, backend="python", **options)
    assert len(calls) >= plain.stats.naccepted              # a call per step
    assert np.array_equal(plain.t, sliced.t) and np.array_equal(plain.y, sliced.y)
    assert plain.stats == sliced.stats and plain.message == sliced.message
    if options.get("dense_output"):
        t = np.linspace(0.0, KEPLER.t_span[1], 101)
        assert np.array_equal(plain(t), sliced(t))


INTERRUPTED_RUN = """
    import json, sys, time
    import odekit
    backend, how = sys.argv[1], sys.argv[2]
    odekit.solve(odekit.problems.kepler(orbits=0.1), "rk4", h=0.01, backend=backend)   # compiles
    prob = odekit.problems.kepler(e=0.5, orbits=10 ** 7)
    print("ready", flush=True)
    try:
        if how == "solve":
            odekit.solve(prob, "rk4", h=0.001, backend=backend)
        else:
            it = odekit.Integrator(prob, "rk4", h=0.001, backend=backend)
            it.advance_to(prob.t_span[1])
    except odekit.Interrupted as exc:
        stopped = time.perf_counter()
        if how == "solve":
            sol = exc.solution
            t, steps, status = sol.t, sol.stats.naccepted, sol.status.name
            exact = bool(abs(t[-1] - steps * 0.001) < 1e-6 * t[-1] and len(t) == steps + 1)
        else:
            steps, status = it.stats.naccepted, "INTERRUPTED"
            exact = bool(abs(it.t - steps * 0.001) < 1e-6 * it.t and it.advance_to(it.t + 0.01) > 0)
        print(json.dumps({"stopped": stopped, "steps": steps, "status": status, "exact": exact,
                          "message": str(exc)}), flush=True)
"""


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_fixed_step_run_ends_on_a_target_a_rounding_past_its_grid_point(backend):
    # past t = 8192 an ulp of t (1.8e-12) is more than 1e-9 h for h = 0.001: the grid point t0 + 6 h lies
    # an ulp short of t + 0.003 (t = t0 + 3 h), and the loop stepped there, then failed a sliver
    # of 1.8e-12 with "step size underflow" -- what the Ctrl-C test below met, one run in ten,
    # continuing by 0.01 from where Ctrl-C stopped a run at t = 8232
    prob = odekit.ODEProblem(lambda t, y: -y, (8192.0, 1e6), [1.0])
    it = odekit.Integrator(prob, "rk4", h=0.001, backend=backend)
    for _ in range(3):
        it.step()
    target = it.t + 0.003
    assert 8192.0 + 6 * 0.001 < target                  # the case: the grid point short of the target
    assert it.advance_to(target) == target and it.stats.naccepted == 6
    assert it.y[0] == pytest.approx(np.exp(-(target - 8192.0)), rel=1e-12)     # rk4 at h = 1e-3: 1e-15


@pytest.mark.parametrize("backend, how", [("numba", "solve"), ("numba", "advance_to"), ("python", "solve")])
def test_ctrl_c_stops_a_run_at_once_keeping_its_steps(backend, how):
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(INTERRUPTED_RUN), backend, how],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        out, err = proc.communicate(timeout=LIMIT)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["stopped"] - sent < 1.0         # the loop answered within a slice (~0.05 s) on a busy machine
    assert report["status"] == "INTERRUPTED" and report["exact"]
    assert report["steps"] > 1000
    assert report["message"].startswith("interrupted by Ctrl-C at t=")


REPORTED_RUN = """
    import json, time
    import odekit

    def slow(t, y):          # a costly Python function: a report every 0.1 s covers fewer steps than a slice
        time.sleep(1e-4)
        return -y

    print("ready", flush=True)
    try:
        odekit.solve(odekit.ODEProblem(slow, (0.0, 1e6), [1.0]), "rk4", h=1e-3, backend="python",
                     progress=lambda done, total, label: None)
    except odekit.Interrupted as exc:
        sol = exc.solution
        print(json.dumps({"steps": sol.stats.naccepted, "rows": len(sol.t), "status": sol.status.name}))
"""


def test_ctrl_c_keeps_the_steps_of_a_python_run_that_reports_progress():
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(REPORTED_RUN)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": SRC})
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()
        time.sleep(1.5)                         # past the first report
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=LIMIT)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["status"] == "INTERRUPTED" and report["rows"] == report["steps"] + 1 > 256
