"""The fixed-timestep clock of a game loop: Integrator.run_frame and Integrator.interpolate.

Whole steps of a fixed ``h`` from random frame times: the count is
``floor(total / h)`` exactly and the states are those of ``Integrator.step``
bit for bit; the blend for drawing lies between the last two states and does
not cross a bounce; a slow frame drops whole steps and says how much time.
The bouncing ball (``y'' = -g`` from ``h0``, restitution ``e``) lands first at
``sqrt(2 h0 / g)``.
"""

import math
import pathlib
import re
import runpy

import numpy as np
import pytest

from odekit import Event, IntegrationError, Integrator, ODEProblem, SecondOrderProblem

from conftest import nan_after

G, H0 = 9.81, 10.0
T1 = math.sqrt(2 * H0 / G)


def fall(t, y):
    return np.array([y[1], -G])


def floor(t, y):
    return y[0]


def bounce(t, y):
    return np.array([y[0], -0.9 * y[1]])


def ball(**event):
    return ODEProblem(fall, (0.0, 10.0), np.array([H0, 0.0])), Event(floor, direction=-1, affect=bounce, **event)


def climb(t, y):
    return np.array([-y[0], 1.0])


def push(t, x, v):
    return np.ones_like(x)


MONOTONE = {   # every component strictly monotone in t
    "first order": lambda: ODEProblem(climb, (0.0, 20.0), np.array([1.0, 0.0])),
    "second order": lambda: SecondOrderProblem(push, (0.0, 20.0), np.array([0.0, 1.0]), np.array([1.0, 0.0]),
                                               velocity_dependent=False),
}


def frames(seed, seconds=10.0, longest=0.05):
    """Random frame times adding up to just over ``seconds``, and their running sums (as run_frame adds them)."""
    rng = np.random.default_rng(seed)
    total = 0.0
    while total < seconds:
        dt = float(rng.uniform(0.0, longest))
        total += dt
        yield dt, total


@pytest.mark.parametrize("kind", MONOTONE)
def test_a_frame_takes_floor_of_the_time_over_h_steps_and_the_blend_lies_between_the_last_two(kind):
    h = 1 / 60
    it = Integrator(MONOTONE[kind](), "rk4", h=h, backend="python")
    ref = Integrator(MONOTONE[kind](), "rk4", h=h, backend="python")        # one step() at a time
    prev = cur = None
    for dt, total in frames(seed=1):
        alpha = it.run_frame(dt)
        k = math.floor(total / h)
        assert it.t == 0.0 + k * h                        # on the grid, no step shortened
        assert alpha == total / h - k and 0.0 <= alpha < 1.0
        assert it.accumulator == alpha * h and it.dropped == 0.0
        if k > ref.stats.naccepted:                       # this frame stepped: its last step is the blend's
            if k > ref.stats.naccepted + 1:
                ref.step(k - ref.stats.naccepted - 1)
            prev = ref.y.copy()
            ref.step()
            cur = ref.y.copy()
        np.testing.assert_array_equal(it.y, cur if cur is not None else it.y)    # step()'s states, bit for bit
        if prev is None:
            continue
        drawn = it.interpolate(alpha)
        assert drawn.shape == it.y.shape
        lo, hi = np.minimum(prev, cur), np.maximum(prev, cur)
        assert np.all(lo < hi)
        for a in (alpha, 0.25, 0.5, 0.999):
            drawn = it.interpolate(a)
            assert np.all((lo <= drawn) & (drawn <= hi))
        np.testing.assert_array_equal(it.interpolate(0.0), prev)
        np.testing.assert_array_equal(it.interpolate(1.0), cur)
        np.testing.assert_allclose(it.interpolate(np.nextafter(1.0, 0.0)), cur, rtol=4e-16, atol=0)
    assert it.stats.naccepted == math.floor(total / h) > 500


def test_a_backward_run_steps_down_its_grid():
    h = 0.1
    it = Integrator(ODEProblem(climb, (1.0, 0.0), np.array([1.0, 0.0])), "rk4", h=h, backend="python")
    for dt, total in frames(seed=2, seconds=0.9):
        it.run_frame(dt)
        assert it.t == 1.0 + math.floor(total / h) * -h


def test_a_long_frame_drops_the_whole_steps_beyond_max_substeps_and_reports_the_time():
    h = 0.01
    it = Integrator(MONOTONE["first order"](), "rk4", h=h, backend="python")
    assert it.run_frame(0.005) == 0.005 / h and it.t == 0.0      # half a step: none taken
    total = 0.005 + 1.0
    alpha = it.run_frame(1.0)                                    # 100 steps due, 8 taken
    due = math.floor(total / h)
    assert due == 100 and it.t == 8 * h and it.stats.naccepted == 8
    assert it.dropped == (due - 8) * h == it.total_dropped
    assert alpha == total / h - due                              # the rest below a step is kept
    assert it.dropped + 8 * h + it.accumulator == pytest.approx(total, rel=1e-15)
    # the next frame does not try to catch up: it takes its own steps, drops none
    total += 0.03
    it.run_frame(0.03)
    assert it.t == 0.0 + (8 + math.floor(total / h) - due) * h
    assert it.dropped == 0.0 and it.total_dropped == (due - 8) * h
    it.run_frame(0.5, max_substeps=1)
    assert it.stats.naccepted == 8 + math.floor(total / h) - due + 1
    assert it.dropped == (math.floor((total + 0.5) / h) - math.floor(total / h) - 1) * h
    assert it.total_dropped == (due - 8 + math.floor((total + 0.5) / h) - math.floor(total / h) - 1) * h


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_bounces_inside_frames_fire_as_in_one_advance_to_run_and_each_cut_step_counts_once(backend):
    h = 0.01
    prob, event = ball()
    it = Integrator(prob, "rk4", h=h, events=event, backend=backend)
    crossed = []
    for dt, total in frames(seed=3):
        it.run_frame(dt)
        crossed += it.last_events
        assert it.t == 0.0 + math.floor(total / h) * h          # the grid, bounces or not
    ref = Integrator(prob, "rk4", h=h, events=event, backend=backend)
    ref.advance_to(it.t)
    times = [r.t for r in it.event_log]
    assert len(times) == 4 and it.backend == backend
    assert times == [r.t for r in ref.event_log] == [r.t for r in crossed]
    np.testing.assert_array_equal(it.y, ref.y)
    # each bounce cuts one grid step in two kernel steps
    assert it.stats.naccepted == math.floor(total / h) + len(times)


def test_the_blend_does_not_cross_a_bounce():
    h = 0.1
    prob, event = ball()
    it = Integrator(prob, "rk4", h=h, events=event, backend="python")
    it.run_frame(1.45, max_substeps=100)                # 14 steps, to 1.4
    t_prev, prev = it.t, it.y.copy()
    alpha = it.run_frame(0.1)                           # the step to 1.5, which bounces at T1
    assert it.t == 15 * h and alpha == pytest.approx(0.5)
    (hit,) = it.last_events
    assert t_prev < hit.t < it.t and hit.t == pytest.approx(T1, rel=1e-6)
    s = (hit.t - t_prev) / (it.t - t_prev)              # the bounce's place in the step
    np.testing.assert_array_equal(it.interpolate(0.0), prev)
    np.testing.assert_array_equal(it.interpolate(s), hit.after)           # from the bounce on: after it
    np.testing.assert_allclose(it.interpolate(np.nextafter(s, 0.0)), hit.before, rtol=0, atol=1e-13)
    for a in np.linspace(0.0, 1.0, 101):
        height, speed = it.interpolate(a)
        assert height >= 0.0                            # never below the floor
        assert (speed < 0) == (a < s)                   # falling before the bounce, rising after
    # drawn, the ball touches the floor: the blend passes through the state at the bounce
    assert min(it.interpolate(a)[0] for a in np.linspace(0.0, 1.0, 1001)) < 0.01 * min(prev[0], it.y[0])


def test_a_terminal_event_ends_the_frame_there():
    h = 0.01
    prob, event = ball(terminal=True)
    it = Integrator(prob, "rk4", h=h, events=event, backend="python")
    while not it.terminated:
        alpha = it.run_frame(0.05)
    assert alpha == 0.0 and it.accumulator == 0.0 and it.dropped == 0.0
    (hit,) = it.last_events
    ref = Integrator(prob, "rk4", h=h, events=event, backend="python")
    ref.advance_to(2.0)
    assert it.t == hit.t == ref.event_log[0].t == ref.t
    np.testing.assert_array_equal(it.y, hit.after)
    np.testing.assert_array_equal(it.interpolate(0.7), hit.after)     # nothing to blend: the state at the end
    with pytest.raises(IntegrationError, match="terminal event"):
        it.run_frame(0.1)


def test_the_blend_is_the_current_state_when_the_last_step_is_not_run_frames():
    prob = MONOTONE["second order"]()
    it = Integrator(prob, "velocity_verlet", h=0.1, backend="python")
    np.testing.assert_array_equal(it.interpolate(0.5), it.y)           # no step yet
    it.run_frame(0.35)
    assert not np.array_equal(it.interpolate(0.5), it.y)
    it.v = [3.0, 4.0]                                                   # a write: a jump from outside
    np.testing.assert_array_equal(it.interpolate(0.5), it.y)
    it.run_frame(0.1)
    assert not np.array_equal(it.interpolate(0.5), it.y)
    it.step()
    np.testing.assert_array_equal(it.interpolate(0.5), it.y)


def test_steps_that_failed_stay_due():
    """f turns nan from t = 0.55: the frame stops at 0.5; restarted at t = 0, the next frame takes the five owed."""
    h = 0.1
    it = Integrator(ODEProblem(nan_after, (0.0, 2.0), np.array([1.0])), "rk4", h=h, backend="python")
    with pytest.raises(IntegrationError):
        it.run_frame(1.0, max_substeps=100)
    assert it.t == 5 * h and it.dropped == 0.0
    it.t = 0.0
    it.run_frame(0.0)
    assert it.t == 5 * h


def test_run_frame_refuses_an_adaptive_integrator():
    it = Integrator(MONOTONE["first order"](), "dp54", backend="python")
    expected = (r"run_frame takes whole steps of a fixed h, and this Integrator adapts its steps \(PIController\); "
                r"accepted: .*Integrator\(problem, 'dp54', h=...\)")
    with pytest.raises(ValueError, match=expected):
        it.run_frame(0.016)


@pytest.mark.parametrize("name, value, message", [
    ("frame_dt", -0.1, r"frame_dt must be a finite time >= 0 \(the time since the last frame\), got -0.1"),
    ("frame_dt", math.nan, "frame_dt must be a finite time >= 0 .*, got nan"),
    ("frame_dt", math.inf, "frame_dt must be a finite time >= 0 .*, got inf"),
    ("frame_dt", "0.016", r"frame_dt must be a finite time >= 0 .*, got '0.016' \(str\)"),
    ("frame_dt", True, r"frame_dt must be a finite time >= 0 .*, got True \(bool\)"),
    ("max_substeps", 0, "max_substeps must be a positive integer, got 0"),
    ("max_substeps", 2.0, "max_substeps must be a positive integer, got 2.0"),
    ("max_substeps", True, r"max_substeps must be a positive integer, got True \(bool\)"),
    ("alpha", 1.5, r"alpha must be a number in \[0, 1\] \(what run_frame returned\), got 1.5"),
    ("alpha", -0.0001, r"alpha must be a number in \[0, 1\] .*, got -0.0001"),
    ("alpha", math.nan, r"alpha must be a number in \[0, 1\] .*, got nan"),
])
def test_bad_input_is_refused_naming_the_argument_and_leaves_the_clock_as_it_was(name, value, message):
    it = Integrator(MONOTONE["first order"](), "rk4", h=0.01, backend="python")
    it.run_frame(0.025)
    options = {"frame_dt": 0.016, name: value}
    with pytest.raises(ValueError, match=message):
        if name == "alpha":
            it.interpolate(value)
        else:
            it.run_frame(**options)
    assert it.t == 2 * 0.01 and it.accumulator == pytest.approx(0.005)


def test_the_game_loop_example_bounces_as_the_closed_form_and_drops_its_hitch(monkeypatch, capsys):
    """examples/game_loop.py: a ball from 2 m, restitution 0.8, h = 1/120, a hitch of 0.3 s after 1 s of frames."""
    monkeypatch.setattr("sys.argv", ["game_loop.py", "--seconds", "3"])
    runpy.run_path(str(pathlib.Path(__file__).parents[1] / "examples" / "game_loop.py"), run_name="__main__")
    out = capsys.readouterr().out
    t1, v1 = math.sqrt(2 * 2.0 / G), math.sqrt(2 * 2.0 * G)
    landings = t1 + np.concatenate([[0.0], np.cumsum(2 * v1 * 0.8 ** np.arange(1, 3) / G)])
    printed = [float(t) for t in re.findall(r"bounce at t=([\d.]+)", out)]
    np.testing.assert_allclose(printed, landings, rtol=0, atol=5e-5)   # Verlet is exact on a parabola
    (drop,) = re.findall(r"dropped (\d+) ms", out)
    assert int(drop) == round((math.floor(0.3 * 120) - 8) / 120 * 1e3)
    steps, t, dropped = re.search(r"\n(\d+) steps of .* t = ([\d.]+); frame time dropped: ([\d.]+) s", out).groups()
    assert float(t) == pytest.approx(int(steps) / 120, abs=5e-5) and float(dropped) == pytest.approx(int(drop) / 1e3,
                                                                                                     abs=5e-4)
