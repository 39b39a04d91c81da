"""The zoo's events: the bouncing ball, Kepler's pericentre passages, the pendulum against a wall.

Each is checked against a closed form derived here, not read from the zoo:

* the ball dropped from ``h0`` lands at ``t1 = sqrt(2 h0 / g)`` with speed
  ``v1 = g t1``; bounce ``k`` sends it up at ``e^k v1`` for a flight of
  ``2 e^k v1 / g``, to the apex ``e^(2k) h0``; the flights sum to the rest
  time ``t1 (1 + 2 e / (1 - e))``;
* a Kepler orbit of semi-major axis ``a = 1`` has the period ``2 pi a^(3/2)
  / sqrt(mu)``;
* the pendulum released at ``theta0`` reaches ``theta`` after
  ``int_theta^theta0 dphi / sqrt(2 (g/L) (cos phi - cos theta0))``, by
  quadrature (the period integral, cut at the wall).

Tight runs (rtol 1e-12) locate each event to 1e-10 or better; most run on
the Python backend (the same kernels), one of each kind compiled.
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad

import odekit
from odekit import Status, problems

TIGHT = dict(rtol=1e-12, atol=1e-14)


# --- the bouncing ball ---------------------------------------------------------------------

def landings(count, e, g, h0):
    """The closed form, summed flight by flight: the k-th landing, k = 1..count."""
    t1 = math.sqrt(2 * h0 / g)
    flights = [2 * e ** k * (g * t1) / g for k in range(1, count)]
    return t1 + np.concatenate([[0.0], np.cumsum(flights)])


@pytest.mark.parametrize("e, g, h0", [(0.9, 9.81, 10.0), (0.5, 1.62, 2.0), (1.0, 9.81, 1.0)])
def test_ball_bounces_are_the_closed_form(e, g, h0):
    b = problems.ball_bounces(12, e, g, h0)
    np.testing.assert_allclose(b.t, landings(12, e, g, h0), rtol=1e-14)
    k = np.arange(1, 13)
    np.testing.assert_allclose(b.apex, e ** (2 * k) * h0, rtol=1e-14)
    np.testing.assert_allclose(b.apex_t, b.t + e ** k * math.sqrt(2 * h0 / g), rtol=1e-14)
    # and exact(t) agrees: at a landing the state after the bounce, at an apex the apex at rest
    prob = problems.bouncing_ball(e, g, h0)
    for t, apex_t, apex, up in zip(b.t, b.apex_t, b.apex, e ** k * math.sqrt(2 * g * h0)):
        x, v = prob.exact(t)
        assert abs(float(x)) < 1e-12 * h0 and float(v) == pytest.approx(up, rel=1e-12)
        x, v = prob.exact(apex_t)
        assert float(x) == pytest.approx(apex, rel=1e-12) and abs(float(v)) < 1e-12 * up


def test_ball_rest_time_is_the_sum_of_all_flights():
    e, g, h0 = 0.7, 9.81, 3.0
    t1 = math.sqrt(2 * h0 / g)
    assert problems.ball_rest_time(e, g, h0) == pytest.approx(t1 * (1 + 2 * e / (1 - e)), rel=1e-15)
    assert problems.ball_rest_time(e, g, h0) == pytest.approx(landings(200, e, g, h0)[-1], rel=1e-14)
    assert problems.ball_rest_time(1.0) == math.inf
    assert [float(s) for s in problems.bouncing_ball(e, g, h0).exact(3.1 * t1 * 10)] == [0.0, 0.0]   # at rest


@pytest.mark.parametrize("method", ["dp54", "bs32"])
def test_ball_bounce_times_and_apex_heights_match_the_closed_form(method):
    prob = problems.bouncing_ball()                  # e = 0.9, g = 9.81, h0 = 10
    sol = odekit.solve(prob, method, dense_output=True, backend="python", **TIGHT)
    assert sol.status == Status.SUCCESS
    times = np.array([r.t for r in sol.events])
    np.testing.assert_allclose(times, landings(10, 0.9, 9.81, 10.0), rtol=1e-10, atol=0)
    b = problems.ball_bounces(10)
    np.testing.assert_allclose([sol(t)[0] for t in b.apex_t[:-1]], b.apex[:-1], rtol=1e-10)
    # every bounce keeps e^2 of the energy
    energy = [[0.5 * s[1] ** 2 + 9.81 * s[0] for s in (r.before, r.after)] for r in sol.events]
    np.testing.assert_allclose([after / before for before, after in energy], 0.81, rtol=1e-12)


def test_ball_default_span_ends_at_the_tenth_apex_long_before_rest():
    prob = problems.bouncing_ball()
    t_end = prob.t_span[1]
    assert t_end == problems.ball_bounces(10).apex_t[-1] < problems.ball_rest_time() / 1.5
    np.testing.assert_allclose(prob.exact(t_end), [0.9 ** 20 * 10.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("method, options, rtol", [
    ("velocity_verlet", dict(h=1e-3), 1e-12),      # exact for a constant force: rounding alone
    ("rk4", dict(h=0.01), 1e-12),                  # so is any method of order >= 2
    ("radau5", dict(rtol=1e-10, atol=1e-12), 1e-10),
    ("bdf", dict(rtol=1e-10, atol=1e-12), 1e-8),   # starts at order 1, which is not exact
])
def test_every_family_bounces_the_ball(method, options, rtol):
    sol = odekit.solve(problems.bouncing_ball(), method, backend="python", **options)
    assert sol.success
    np.testing.assert_allclose([r.t for r in sol.events], landings(10, 0.9, 9.81, 10.0), rtol=rtol)


def test_ball_past_its_rest_time_stops_with_the_accumulation_status():
    e = 0.5
    sol = odekit.solve(problems.bouncing_ball(e, t_end=10.0), "dp54", backend="python", rtol=1e-10, atol=1e-12)
    assert sol.status == Status.EVENTS_ACCUMULATE
    assert sol.t[-1] == pytest.approx(problems.ball_rest_time(e), rel=1e-9)


def test_ball_compiled_bounces_as_the_python_backend_does():
    prob = problems.bouncing_ball()
    runs = [odekit.solve(prob, "dp54", backend=b, **TIGHT) for b in ("python", "numba")]
    assert runs[1].backend == "numba"
    assert len(runs[1].events) == 10
    np.testing.assert_allclose([r.t for r in runs[1].events], [r.t for r in runs[0].events], rtol=1e-14)


def test_the_error_against_the_closed_form_takes_the_row_of_each_bounce_that_it_gives():
    # RK4 follows a parabola exactly, so only the bounces can make an error; at h = 0.01 the
    # closed form at the first bounce's time gives the state before it, at the others the state
    # after (the event's time falls on either side of the exact root, within rounding)
    from odekit.analysis import convergence

    prob = problems.bouncing_ball()
    sol = odekit.solve(prob, "rk4", backend="python", h=0.01)
    jumps = np.flatnonzero(np.diff(sol.t) == 0)
    assert len(jumps) == 10
    gives = [np.abs(sol.y[[i, i + 1]] - np.stack(prob.exact(sol.t[i]))).reshape(2, -1).max(axis=1).argmin()
             for i in jumps]
    assert 0 in gives and 1 in gives                  # both sides occur: neither row may be dropped always
    assert sol.error() < 1e-11                        # a jump compared with the wrong side: about 20
    assert max(row.error for row in convergence(prob, "rk4", [0.01, 0.02], backend="python").rows) < 1e-11
    panel = sol.plot().axes[1]
    assert max(line.get_ydata().max() for line in panel.lines) < 1e-11


# --- Kepler's pericentre passages -----------------------------------------------------------

@pytest.mark.parametrize("e, mu", [(0.5, 1.0), (0.9, 2.5)])
def test_pericentre_passages_measure_the_period(e, mu):
    period = 2 * math.pi * 1.0 ** 1.5 / math.sqrt(mu)          # a = 1
    prob = problems.kepler(e=e, mu=mu, orbits=3.5)
    sol = odekit.solve(prob, "dp54", events=problems.pericentre_event(), backend="python", **TIGHT)
    passages = sol.t_events[0]
    assert len(passages) == 3                                   # not at the start, nor at the apocentres
    np.testing.assert_allclose(np.diff(np.concatenate([[0.0], passages])), period, rtol=1e-10)
    # at a pericentre the satellite is at its closest, 1 - e
    np.testing.assert_allclose([np.hypot(*r.before[0]) for r in sol.events], 1 - e, rtol=1e-10)


def test_a_terminal_pericentre_event_stops_after_whole_orbits():
    prob = problems.kepler(e=0.6, orbits=10)
    sol = odekit.solve(prob, "dp54", events=problems.pericentre_event(terminal=2), backend="python", **TIGHT)
    assert sol.status == Status.EVENT
    assert sol.t[-1] == pytest.approx(4 * math.pi, rel=1e-10)
    assert problems.pericentre_event(terminal=2) is problems.pericentre_event(2)     # one object, compiled once


# --- the pendulum against a wall ------------------------------------------------------------

def time_to(theta, theta0, g=9.8, L=1.0):
    """The time the pendulum released at rest at ``theta0`` takes to reach ``theta``, by quadrature.

    With ``phi = theta0 - s^2`` the integrand's inverse square root at ``theta0`` becomes smooth.
    """
    def integrand(s):
        phi = theta0 - s * s
        return 2 * s / math.sqrt(2 * (g / L) * (math.cos(phi) - math.cos(theta0)))
    value, _ = quad(integrand, 0.0, math.sqrt(theta0 - theta), epsabs=0, epsrel=1e-13, limit=200)
    return value


@pytest.mark.parametrize("wall", [-1.0, 0.5, 1.9])
def test_pendulum_stops_at_the_wall_at_the_time_of_the_period_integral(wall):
    prob = problems.pendulum(theta0=2.0, wall=wall)
    sol = odekit.solve(prob, "dp54", backend="python", **TIGHT)
    assert sol.status == Status.EVENT and sol.success
    hit = time_to(wall, 2.0)
    assert sol.t[-1] == pytest.approx(hit, rel=1e-10)
    (record,) = sol.events
    assert record.t == sol.t[-1] and float(record.before[0]) == pytest.approx(wall, abs=1e-12)
    np.testing.assert_array_equal(sol.y[-1], record.before)
    # the run ends with the speed of impact, which the energy gives, and on the exact solution
    impact = -math.sqrt(2 * 9.8 * (math.cos(wall) - math.cos(2.0)))
    assert float(sol.y[-1][1]) == pytest.approx(impact, rel=1e-10)
    assert sol.error() < 1e-9


def test_pendulum_bounces_from_a_wall_keeping_restitution_squared_of_its_energy():
    e = 0.8
    prob = problems.pendulum(theta0=2.0, wall=-1.0, restitution=e, t_end=10.0)
    assert prob.exact is None
    sol = odekit.solve(prob, "dp54", backend="python", **TIGHT)
    assert sol.status == Status.SUCCESS and len(sol.events) >= 3
    assert sol.events[0].t == pytest.approx(time_to(-1.0, 2.0), rel=1e-10)
    energy = prob.invariants["energy"]
    for r in sol.events:
        assert float(r.before[0]) == pytest.approx(-1.0, abs=1e-12)
        kinetic = [energy(r.t, *s) - energy(r.t, s[0], 0.0) for s in (r.before, r.after)]
        assert kinetic[1] == pytest.approx(e * e * kinetic[0], rel=1e-12)
    # between bounces the energy is kept: it swings back to the wall with the speed it left with
    speeds = [(abs(float(r.after[1])), abs(float(r.before[1]))) for r in sol.events]
    for (left, _), (_, returned) in zip(speeds, speeds[1:]):
        assert returned == pytest.approx(left, rel=1e-9)


def test_pendulum_over_the_top_meets_the_wall_a_turn_on():
    """Spinning from theta0 = 0.3, the bob passes angles 0.3 .. 0.3 + 2 pi: a wall at -1 is met at 2 pi - 1."""
    prob = problems.pendulum(theta0=0.3, omega0=7.0, wall=-1.0, t_end=5.0)
    sol = odekit.solve(prob, "dp54", backend="python", **TIGHT)
    assert sol.status == Status.EVENT
    assert float(sol.events[0].before[0]) == pytest.approx(2 * math.pi - 1.0, abs=1e-12)


def test_pendulum_wall_compiled_stops_as_the_python_backend_does():
    prob = problems.pendulum(theta0=2.0, wall=-1.0)
    runs = [odekit.solve(prob, "dp54", backend=b, **TIGHT) for b in ("python", "numba")]
    assert runs[1].backend == "numba" and runs[1].status == Status.EVENT
    assert runs[1].t[-1] == pytest.approx(runs[0].t[-1], rel=1e-14)


def test_pendulum_wall_parameters_are_checked():
    with pytest.raises(ValueError, match=r"theta0=2.0 is at the wall \(wall=2.0"):
        problems.pendulum(theta0=2.0, wall=2.0)
    with pytest.raises(ValueError, match=r"theta0=2.0 is at the wall \(wall=-4.28"):
        problems.pendulum(theta0=2.0, wall=2.0 - 2 * math.pi)
    with pytest.raises(ValueError, match=r"restitution must be a number with 0 <= restitution <= 1, got 1.5"):
        problems.pendulum(wall=-1.0, restitution=1.5)
    with pytest.raises(ValueError, match=r"wall must be a finite angle in rad, or None for no wall, got nan"):
        problems.pendulum(wall=math.nan)
    assert not problems.pendulum().events and problems.pendulum(wall=-1.0).events
