"""Ensembles: each trajectory is the run solve() makes of it alone, bit for bit, however the work is split."""

import math
import threading

import numpy as np
import pytest

import odekit
from odekit import Status
from odekit.ensemble import ensemble
from odekit.problems import bouncing_ball, decay, kepler, lorenz, robertson


def assert_same_as_solve(ens, method, indices, **options):
    """Trajectories ``indices`` of ``ens`` equal solve() of each alone: states, times, counts, status."""
    for i in indices:
        alone = odekit.solve(ens.problem(i), method, **options)
        mine = ens[i]
        assert mine.status == alone.status, i
        assert mine.stats == alone.stats, i
        if ens.save == "final":
            np.testing.assert_array_equal(mine.y[-1], alone.y[-1])
            assert mine.t[-1] == alone.t[-1]
        else:
            np.testing.assert_array_equal(mine.t, alone.t)
            np.testing.assert_array_equal(mine.y, alone.y)
        assert [(e.t, e.index) for e in mine.events] == [(e.t, e.index) for e in alone.events]


def lorenz_starts(count, seed=1):
    rng = np.random.default_rng(seed)
    return np.array([-8.0, 8.0, 27.0]) + rng.normal(scale=3.0, size=(count, 3))


# --- bit for bit, compiled, on one and two threads ---------------------------------------

@pytest.mark.parametrize("method,problem,options", [
    ("dp54", lorenz(t_end=2.0), dict(rtol=1e-7)),
    ("rodas4", robertson(t_end=10.0), dict(rtol=1e-6, atol=1e-10)),
    ("bdf", robertson(t_end=10.0), dict(rtol=1e-6, atol=1e-10)),
])
def test_every_trajectory_is_solve_alone_on_one_and_two_threads(method, problem, options):
    if problem.name == "lorenz":
        y0 = lorenz_starts(40)
    else:
        y0 = np.array([[1.0 - a, a, 0.0] for a in np.linspace(0.0, 0.3, 40)])
    one = ensemble(problem, method, y0=y0, workers=1, **options)
    two = ensemble(problem, method, y0=y0, workers=2, chunk=3, **options)
    assert one.backend == "numba"
    np.testing.assert_array_equal(one.y, two.y)
    np.testing.assert_array_equal(one.stats.nfev, two.stats.nfev)
    assert_same_as_solve(two, method, [0, 1, 17, 39], **options)
    assert two.status.tolist() == [Status.SUCCESS] * 40


def test_fixed_step_mechanics_with_per_trajectory_args_and_states():
    # Kepler orbits of different mu and eccentricities, by velocity Verlet at a fixed step
    base = kepler(e=0.3, orbits=2)
    es = np.linspace(0.0, 0.6, 12)
    y0 = np.array([[[1 - e, 0.0], [0.0, math.sqrt((1 + e) / (1 - e))]] for e in es])
    ens = ensemble(base, "velocity_verlet", y0=y0, args=[(1.0 + 0.1 * k,) for k in range(12)], h=0.01,
                   save="steps")
    assert ens.y_final.shape == (12, 2, 2)
    assert_same_as_solve(ens, "velocity_verlet", [0, 5, 11], h=0.01)
    np.testing.assert_array_equal(ens[5].y[-1], ens.y_final[5])


# --- what is kept ------------------------------------------------------------------------

def test_t_eval_rows_are_solves_rows():
    times = np.linspace(0.0, 2.0, 9)
    ens = ensemble(lorenz(t_end=2.0), "dp54", y0=lorenz_starts(10), t_eval=times, rtol=1e-8)
    assert ens.save == "t_eval" and ens.y.shape == (10, 9, 3)
    for i in (0, 9):
        alone = odekit.solve(ens.problem(i), "dp54", t_eval=times, rtol=1e-8)
        np.testing.assert_array_equal(ens.y[i], alone.y)


def test_steps_that_outgrow_the_first_trajectorys_room_are_run_again_to_the_same_numbers():
    # the first trajectory decays slowly (few steps); the others fast (many more): they need more rows
    rates = np.concatenate([[-0.1], np.linspace(-20.0, -60.0, 7)])
    ens = ensemble(decay(t_end=3.0), "bs32", args={"lam": rates}, save="steps", rtol=1e-6, atol=1e-10,
                   backend="python")
    lengths = [len(s.t) for s in ens]
    assert lengths[0] * 2 + 8 < max(lengths)            # the room the first one left was not enough
    assert len(ens._result.passes) > 2                    # and those were run again
    assert_same_as_solve(ens, "bs32", range(8), rtol=1e-6, atol=1e-10, backend="python")
    for rate, sol in zip(rates, ens):                     # each one is its own problem's solution
        np.testing.assert_allclose(sol.y[-1], np.exp(rate * 3.0), rtol=2e-6, atol=1e-10)


def test_events_inside_an_ensemble_are_each_trajectorys_own():
    # the first ball falls from high up and bounces once; the others, from low, 6 to 15 times: their
    # logs outgrow the room the first one's left (6 entries) and are run again
    heights = np.array([100.0, 1.0, 1.2, 1.5, 2.0])
    restitution = np.array([0.9, 0.88, 0.9, 0.92, 0.9])       # none comes to rest before t = 6
    ens = ensemble(bouncing_ball(t_end=6.0), "dp54", y0=np.stack([heights, np.zeros(5)], axis=1),
                   args={"e": restitution}, rtol=1e-10, atol=1e-12)
    counts = [len(events) for events in ens.events]
    assert counts[0] == 1 and min(counts[1:]) > 5
    assert len(ens._result.passes) > 2
    assert_same_as_solve(ens, "dp54", range(5), rtol=1e-10, atol=1e-12)
    for h0, e, sol in zip(heights, restitution, ens):
        # the first impact is at sqrt(2 h0 / g), the second 2 e sqrt(2 h0 / g) after it
        t1 = math.sqrt(2 * h0 / 9.81)
        assert sol.events[0].t == pytest.approx(t1, rel=1e-8)
        if len(sol.events) > 1:
            assert sol.events[1].t - sol.events[0].t == pytest.approx(2 * e * t1, rel=1e-7)


def test_a_terminal_event_ends_its_own_trajectory_only():
    floor = odekit.Event(lambda t, x, v, g, e: x, terminal=True, direction=-1, name="floor")
    base = odekit.SecondOrderProblem(lambda t, x, v, g, e: -g + 0.0 * x, (0.0, 3.0), 10.0, 0.0, args=(9.81, 0.0),
                                     velocity_dependent=False)
    heights = np.array([1.0, 5.0, 100.0])
    y0 = np.stack([heights, np.zeros(3)], axis=1)
    ens = ensemble(base, "rk4", y0=y0, h=0.01, events=floor, backend="python")
    assert ens.status.tolist() == [Status.EVENT, Status.EVENT, Status.SUCCESS]
    np.testing.assert_allclose(ens.t_final[:2], np.sqrt(2 * heights[:2] / 9.81), rtol=1e-9)
    assert ens.t_final[2] == 3.0


def test_each_trajectory_counts_its_own_occurrences_of_an_event():
    # x'' = -x from phase phi crosses zero at t = pi/2 - phi, then every pi: the second crossing ends it
    second = odekit.Event(lambda t, x, v: x, terminal=2, name="second zero")
    base = odekit.SecondOrderProblem(lambda t, x, v: -x, (0.0, 10.0), 1.0, 0.0, velocity_dependent=False)
    phases = np.linspace(0.0, 1.2, 5)
    y0 = np.stack([np.cos(phases), -np.sin(phases)], axis=1)
    ens = ensemble(base, "dp54", y0=y0, events=second, rtol=1e-10, atol=1e-12, backend="python")
    assert ens.status.tolist() == [Status.EVENT] * 5
    np.testing.assert_allclose(ens.t_final, 1.5 * np.pi - phases, rtol=1e-8)


# --- per-trajectory args against a closed form --------------------------------------------

def _damped_pendulum(t, theta, omega, g, L, B):
    return -(g / L) * math.sin(theta) - B * omega


def test_a_sweep_over_damping_decays_as_the_linearised_pendulum():
    # theta'' = -w0^2 theta - B theta' for small swings: theta = a e^{-B t / 2} (cos wd t + B/(2 wd) sin wd t)
    g, L, a, T = 9.8, 1.0, 1e-4, 3.0
    base = odekit.SecondOrderProblem(_damped_pendulum, (0.0, T), a, 0.0, args=(g, L, 0.0))
    B = np.linspace(0.0, 2.0, 9)
    ens = ensemble(base, "dp54", args={"B": B}, rtol=1e-11, atol=1e-16)
    w0 = math.sqrt(g / L)
    wd = np.sqrt(w0 ** 2 - B ** 2 / 4)
    expected = a * np.exp(-B * T / 2) * (np.cos(wd * T) + B / (2 * wd) * np.sin(wd * T))
    # the nonlinearity changes the angle by about a^3 / 16 relative: 1e-9 of a
    np.testing.assert_allclose(ens.y[:, 0], expected, rtol=0, atol=5e-9 * a)
    assert not np.allclose(ens.y[:, 0], ens.y[0, 0])      # the args did reach each trajectory


# --- failures stay with their trajectory ---------------------------------------------------

def _blow_up(t, y):
    return y * y


def test_a_trajectory_that_fails_leaves_the_others_intact():
    # y' = y^2 blows up at t = 1/y0: the one started at 1 fails within the span, the others do not
    base = odekit.ODEProblem(_blow_up, (0.0, 2.0), [0.1])
    y0 = np.array([[0.1], [0.2], [1.0], [0.3]])
    ens = ensemble(base, "dp54", y0=y0, rtol=1e-8, workers=2, chunk=1)
    assert ens.failed.tolist() == [2]
    assert ens.status[2] in (Status.STEP_UNDERFLOW, Status.NONFINITE)
    assert ens.t_final[2] == pytest.approx(1.0, rel=1e-3)           # where the solution blows up
    ok = [0, 1, 3]
    np.testing.assert_allclose(ens.y[ok, 0], y0[ok, 0] / (1 - 2 * y0[ok, 0]), rtol=1e-6)
    assert_same_as_solve(ens, "dp54", [0, 2, 3], rtol=1e-8)
    assert "1 " + Status(ens.status[2]).name in ens.message and "3 SUCCESS" in ens.message


def _raises_for_negative(t, y, k):
    if k < 0:
        raise ValueError("k must not be negative")
    return -k * y


def test_a_function_that_raises_for_one_trajectory_fails_that_one():
    base = odekit.ODEProblem(_raises_for_negative, (0.0, 1.0), [1.0], args=(1.0,))
    ens = ensemble(base, "rk4", args={"k": np.array([1.0, -1.0, 2.0])}, h=0.01, backend="python")
    assert ens.status.tolist() == [Status.SUCCESS, Status.FUNCTION_ERROR, Status.SUCCESS]
    assert isinstance(ens.exceptions[1], ValueError) and "must not be negative" in ens[1].message
    np.testing.assert_allclose(ens.y[[0, 2], 0], np.exp([-1.0, -2.0]), rtol=1e-5)


# --- progress ------------------------------------------------------------------------------

def test_progress_counts_trajectories_up_to_all():
    seen = []
    ensemble(decay(), "rk4", args={"lam": -np.linspace(0.1, 2.0, 300)}, h=0.001, workers=1,
             progress=lambda done, total, label: seen.append((done, total, label)))
    assert seen[-1] == (300, 300, "trajectories")
    assert all(b[0] >= a[0] for a, b in zip(seen, seen[1:]))


# --- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,error,words", [
    (dict(y0=np.zeros((3, 2))), ValueError, "y0 must have shape (3, 3)"),
    (dict(y0=np.zeros((3, 3)), n=4), ValueError, "must agree: n 4, y0 3"),
    (dict(), ValueError, "give the trajectories"),
    (dict(n=2, save="everything"), ValueError, "save"),
    (dict(n=2, save="t_eval"), ValueError, "save='t_eval' keeps the states at t_eval"),
    (dict(n=2, dense_output=True), TypeError, "dense_output (the interpolant of every step) is kept by solve()"),
    (dict(args={"gamma": [1.0, 2.0]}), ValueError, "args has no entry 'gamma'"),
    (dict(args=[(1.0, 2.0, 3.0), (1.0, 2.0)]), ValueError, "all of one length"),
    (dict(n=2, workers="many"), TypeError, "workers must be None"),
    (dict(n=2, workers=0), ValueError, "workers"),
])
def test_bad_input_is_named(kwargs, error, words):
    with pytest.raises(error, match=None) as info:
        ensemble(lorenz(), "dp54", backend="python", **kwargs)
    assert words in str(info.value)


# --- the plot ------------------------------------------------------------------------------

def test_the_plot_draws_each_final_state_and_marks_the_failed(tmp_path):
    base = odekit.ODEProblem(_blow_up, (0.0, 2.0), [0.1])
    ens = ensemble(base, "dp54", y0=np.array([[0.1], [0.2], [1.0], [0.3]]), backend="python")
    fig = ens.plot(tmp_path / "final.png")
    ax = fig.axes[0]
    dots, crosses = ax.collections
    assert len(dots.get_offsets()) == 3 and len(crosses.get_offsets()) == 1
    assert (tmp_path / "final.png").stat().st_size > 0


def test_the_plot_of_kept_states_draws_their_spread():
    times = np.linspace(0.0, 1.0, 11)
    ens = ensemble(lorenz(t_end=1.0), "dp54", y0=lorenz_starts(30), t_eval=times, backend="python")
    fig = ens.plot()
    assert len(fig.axes) == 3
    median = [line for line in fig.axes[0].lines if line.get_label() == "median"][0]
    np.testing.assert_allclose(median.get_ydata(), np.median(ens.y[:, :, 0], axis=0))


# --- on a cluster: Dask's LocalCluster of two worker processes, and any Executor ---------------

@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        yield client


def test_a_dask_cluster_gives_the_same_numbers_and_compiles_once_per_worker(client):
    y0 = lorenz_starts(40)
    here = ensemble(lorenz(t_end=2.0), "dp54", y0=y0, rtol=1e-7, workers=1)
    there = ensemble(lorenz(t_end=2.0), "dp54", y0=y0, rtol=1e-7, workers=client, chunk=4)
    np.testing.assert_array_equal(here.y, there.y)
    np.testing.assert_array_equal(here.stats.nfev, there.stats.nfev)
    # each trajectory keeps only the run state a solution reads (kernels.ensemble.COUNTED): all of it
    assert [(s.t[-1], s.stats, s.status, s.message) for s in there] == \
        [(s.t[-1], s.stats, s.status, s.message) for s in here]
    assert [c["trajectories"] for c in sorted(there.chunks, key=lambda c: c["trajectories"])] == \
        [(lo, lo + 4) for lo in range(0, 40, 4)]
    by_worker = {}
    for c in there.chunks:
        by_worker.setdefault(c["pid"], []).append(c)
    for chunks in by_worker.values():                    # each worker process set the problem up once
        made = [c for c in chunks if c["set_up"]]
        assert len(made) == 1 and made[0]["compilations"] > 0       # and that compiled the problem's code
    later = [c for chunks in by_worker.values() for c in chunks if not c["set_up"]]
    assert later and all(c["compilations"] == 0 for c in later)      # the chunks after it compiled nothing


def test_the_lanes_threads_are_kept_from_one_ensemble_to_the_next():
    # the pool makes a thread when a lane finds none idle, up to one per lane, and keeps it: three
    # ensembles on two lanes meet at most two threads, alive after each (the same Thread objects)
    y0 = lorenz_starts(200)
    seen, runs = set(), []
    for _ in range(3):
        runs.append(ensemble(lorenz(t_end=0.5), "dp54", y0=y0, workers=2, chunk=1).y)
        seen |= {t for t in threading.enumerate() if t.name.startswith("odekit-2-lanes")}
    assert 1 <= len(seen) <= 2 and all(t.is_alive() for t in seen)
    np.testing.assert_array_equal(runs[0], runs[2])


def _ensemble_in_a_child(queue):
    queue.put(ensemble(lorenz(t_end=0.5), "dp54", y0=lorenz_starts(8), workers=2, chunk=1).y)


def test_a_forked_process_runs_its_lanes_in_threads_of_its_own():
    # a child inherits the parent's kept pool, but not its threads: handing it lanes would wait for ever
    import multiprocessing

    parent = ensemble(lorenz(t_end=0.5), "dp54", y0=lorenz_starts(8), workers=2, chunk=1).y
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_ensemble_in_a_child, args=(queue,))
    child.start()
    try:
        np.testing.assert_array_equal(queue.get(timeout=60), parent)
    finally:
        child.join(5)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0


CHUNK_IN_A_NEW_PROCESS = """
import json
import numpy as np
from numba.core import event
import odekit
from odekit.problems import lorenz

recorder = event.RecordingListener()
event.register("numba:compile", recorder)
ens = odekit.ensemble(lorenz(t_end=1.0), "dp54", y0=[[1.0, 1.0, 1.0], [2.0, 1.0, 20.0]], rtol=1e-8, workers=1)
chunk = sum(1 for _, e in recorder.buffer
            if e.is_start and e.data["dispatcher"].py_func.__qualname__ == "make_chunk.<locals>.chunk")
print(json.dumps({"chunk_compiles": chunk, "backend": ens.backend, "y": ens.y.tolist()}))
"""


def test_a_new_process_loads_the_chunk_loop_from_the_disk_cache():
    # what a Dask worker, or the next run of a user's script, does first: the chunk loop closes over
    # its family's compiled loop, and Numba's own cache key (a dispatcher pickles with a random
    # UUID) never found it again
    import json
    import subprocess
    import sys

    runs = [json.loads(subprocess.run([sys.executable, "-c", CHUNK_IN_A_NEW_PROCESS], capture_output=True,
                                      text=True, check=True).stdout.splitlines()[-1]) for _ in range(2)]
    assert runs[1]["backend"] == "numba" and runs[1]["chunk_compiles"] == 0
    assert runs[1]["y"] == runs[0]["y"]


def test_trajectories_that_fail_on_a_worker_come_back_with_their_status(client):
    base = odekit.ODEProblem(_blow_up, (0.0, 2.0), [0.1])
    y0 = np.array([[0.1], [1.0], [0.2], [0.3]])
    ens = ensemble(base, "dp54", y0=y0, rtol=1e-8, workers=client, chunk=1)
    assert ens.failed.tolist() == [1]
    local = ensemble(base, "dp54", y0=y0, rtol=1e-8, workers=1)
    np.testing.assert_array_equal(ens.status, local.status)
    np.testing.assert_array_equal(ens.y_final, local.y_final)


def test_a_lambda_is_sent_by_value_and_any_executor_runs_the_chunks(client):
    # Dask's cloudpickle sends a lambda (and anything of __main__) by value
    base = odekit.ODEProblem(lambda t, y, k: -k * y, (0.0, 1.0), [1.0], args=(1.0,))
    rates = np.linspace(0.5, 2.0, 6)
    ens = ensemble(base, "dp54", args={0: rates}, rtol=1e-10, atol=1e-12, workers=client.get_executor())
    np.testing.assert_allclose(ens.y[:, 0], np.exp(-rates), rtol=1e-8)
    np.testing.assert_array_equal(ens.y, ensemble(base, "dp54", args={0: rates}, rtol=1e-10, atol=1e-12).y)


def test_a_function_that_cannot_be_sent_to_the_workers_is_named(client):
    lock = threading.Lock()

    def guarded(t, y):
        with lock:
            return -y

    with pytest.raises(TypeError, match="the ensemble's fun 'guarded' cannot be sent to the workers"):
        ensemble(odekit.ODEProblem(guarded, (0.0, 1.0), [1.0]), "dp54", n=4, workers=client)


# --- Ctrl-C --------------------------------------------------------------------------------

CTRL_C = """
import sys, numpy as np, odekit
from odekit.problems import lorenz
y0 = np.array([-8.0, 8.0, 27.0]) + np.random.default_rng(1).normal(size=({n}, 3))
print("started", flush=True)
try:
    odekit.ensemble(lorenz(t_end={t_end}), "dp54", y0=y0, backend="{backend}", workers={workers},
                    progress=lambda done, total, label: done > 0 and print("running", flush=True))
except odekit.Interrupted as exc:
    ens = exc.solution
    print("kept", int((ens.status == 0).sum()), int((ens.status == odekit.Status.INTERRUPTED).sum()), len(ens))
"""


@pytest.mark.parametrize("backend,workers,n,t_end", [("python", 1, 20_000, 2.0), ("numba", 2, 200_000, 30.0)])
def test_ctrl_c_keeps_the_trajectories_done(backend, workers, n, t_end):
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", CTRL_C.format(backend=backend, workers=workers, n=n, t_end=t_end)],
                            stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if line.startswith("running"):
            break
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    kept = [line for line in out.splitlines() if line.startswith("kept")]
    assert kept, out
    done, interrupted, total = map(int, kept[0].split()[1:])
    assert done > 0 and interrupted > 0 and done + interrupted == total == n


def test_the_chunk_kernel_is_found_again_only_for_arguments_of_the_same_types():
    # jit._structure stands for Numba's types when the chunk loop is looked up: equal structures
    # must mean equal types (else a kernel compiled for other types would run), and other types
    # another structure
    from collections import namedtuple

    from numba import typeof

    from odekit.kernels.jit import _structure

    Pair = namedtuple("Pair", "a b")
    base = np.zeros((4, 3))
    readonly = base.copy()
    readonly.flags.writeable = False
    values = [base, base[:, :2], base.T, base[::2], readonly, base.astype(np.float32), base.astype(complex),
              np.zeros(3), np.zeros((1, 3)), np.zeros((0, 3)), np.zeros(3, dtype=np.int64),
              (base, np.zeros(3)), (np.zeros(3), base), Pair(base, np.zeros(3)), (base,), (), None, 1, 1.0,
              (1, 2.0), (1.0, 2.0), Pair(1.0, 2.0)]
    for u in values:
        for v in values:
            assert (_structure(u) == _structure(v)) == (typeof(u) == typeof(v)), (u, v)
