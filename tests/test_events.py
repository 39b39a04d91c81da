"""Events: zeros of g found on every accepted step, located to rounding, and the state reset there.

The bouncing ball ``y'' = -g`` from height ``h0`` at rest has a closed form:
it lands at ``t1 = sqrt(2 h0 / g)`` with speed ``v1 = g t1``; after bounce
``k`` (restitution ``e``) it leaves at ``e^k v1``, flies ``2 e^k v1 / g``
and rises to ``e^(2k) h0``.  Its bounces accumulate at ``t1 (1 + 2e / (1 - e))``.
Most runs use the Python backend (the same kernels; compiled runs are
checked against them at the end).
"""

import math
import warnings

import numpy as np
import pytest

import odekit
from odekit import Event, Status

G, H0 = 9.81, 10.0
T1 = math.sqrt(2 * H0 / G)
V1 = G * T1


def fall(t, y):
    return np.array([y[1], -G])


def floor(t, y):
    return y[0]


def restitution(e):
    def bounce(t, y):
        return np.array([y[0], -e * y[1]])
    return bounce


def ball(e=0.9, t_end=10.0, **event):
    prob = odekit.ODEProblem(fall, (0.0, t_end), np.array([H0, 0.0]))
    return prob, Event(floor, direction=-1, affect=restitution(e), **event)


def bounce_times(e, count):
    """The closed form: the k-th landing, k = 1..count."""
    return T1 + np.concatenate([[0.0], np.cumsum(2 * V1 * e ** np.arange(1, count) / G)])


def energy(y):
    return 0.5 * y[..., 1] ** 2 + G * y[..., 0]


# --- the bouncing ball against its closed form -------------------------------------------

@pytest.mark.parametrize("method", ["dp54", "bs32"])
def test_bounce_times_and_apex_heights_match_the_closed_form(method):
    e = 0.8
    prob, event = ball(e, t_end=8.0)
    sol = odekit.solve(prob, method, rtol=1e-12, atol=1e-12, events=event, backend="python")
    assert sol.success and sol.status == Status.SUCCESS
    times = np.array([r.t for r in sol.events])
    expected = bounce_times(e, len(times))
    assert len(times) == np.sum(expected <= 8.0) >= 4
    np.testing.assert_allclose(times, expected, rtol=1e-10, atol=0)
    # the apex between bounces k and k + 1 is e^(2k) h0: the largest height recorded there, densely
    dense = odekit.solve(prob, method, rtol=1e-12, atol=1e-12, events=event, backend="python", dense_output=True)
    for k in range(1, len(times) - 1):
        apex = times[k - 1] + e ** k * V1 / G
        assert dense(apex)[0] == pytest.approx(e ** (2 * k) * H0, rel=1e-10)


def test_each_bounce_keeps_e_squared_of_the_energy_and_the_trajectory_holds_both_states():
    e = 0.7
    prob, event = ball(e, t_end=5.0)
    sol = odekit.solve(prob, "dp54", rtol=1e-10, atol=1e-12, events=event, backend="python")
    for record in sol.events:
        assert record.index == 0 and record.component == 0
        assert abs(record.before[0]) < 1e-9 and record.before[1] < 0 < record.after[1]
        assert energy(record.after) == pytest.approx(e ** 2 * energy(record.before), rel=1e-12)
        # the trajectory holds the event's time twice: the state before, then after
        i = np.flatnonzero(sol.t == record.t)
        assert len(i) == 2 and i[1] == i[0] + 1
        np.testing.assert_array_equal(sol.y[i[0]], record.before)
        np.testing.assert_array_equal(sol.y[i[1]], record.after)
    np.testing.assert_array_equal(sol.t_events[0], [r.t for r in sol.events])
    np.testing.assert_array_equal(sol.y_events[0], [r.before for r in sol.events])


def test_the_derivative_carried_from_a_step_end_is_dropped_after_an_affect():
    """dp54 reuses f at a step's end as the next step's first stage (FSAL). After the bounce that f
    holds the old, downward velocity; a step built on it lands the second bounce visibly late."""
    e = 0.9
    prob, event = ball(e, t_end=5.0)
    sol = odekit.solve(prob, "dp54", rtol=1e-12, atol=1e-12, events=event, backend="python")
    second = sol.events[1].t
    assert second == pytest.approx(bounce_times(e, 2)[1], rel=1e-12)


@pytest.mark.parametrize("n", [1, 3])
def test_terminal_n_stops_at_exactly_the_nth_bounce(n):
    prob, event = ball(0.9, t_end=30.0, terminal=n if n > 1 else True)
    sol = odekit.solve(prob, "dp54", rtol=1e-10, atol=1e-12, events=event, backend="python")
    assert sol.status == Status.EVENT and sol.success
    assert len(sol.events) == n
    assert sol.t[-1] == sol.events[-1].t == pytest.approx(bounce_times(0.9, n)[-1], rel=1e-10)
    np.testing.assert_array_equal(sol.y[-1], sol.events[-1].after)
    assert "terminal event 'floor'" in sol.message and f"t={sol.t[-1]:.17g}" in sol.message


def test_dense_output_gives_each_side_of_a_jump_its_own_branch():
    e = 0.9
    prob, event = ball(e, t_end=3.0)
    sol = odekit.solve(prob, "dp54", rtol=1e-12, atol=1e-12, events=event, dense_output=True, backend="python")
    tb = sol.events[0].t
    for dt in (1e-3, 1e-6):
        before, after = sol(tb - dt), sol(tb + dt)
        assert before[1] == pytest.approx(-G * (tb - dt), rel=1e-9)
        assert after[1] == pytest.approx(e * V1 - G * dt, rel=1e-9)
    np.testing.assert_array_equal(sol(tb), sol.events[0].after)      # at the jump itself: the state after
    after_rows = np.append(np.diff(sol.t) != 0, True)         # not the state before a jump
    np.testing.assert_allclose(sol(sol.t[after_rows]), sol.y[after_rows], rtol=0, atol=1e-12)


def test_a_ball_coming_to_rest_stops_with_the_accumulation_status():
    e = 0.5
    prob, event = ball(e, t_end=100.0)
    sol = odekit.solve(prob, "dp54", rtol=1e-10, atol=1e-12, events=event, backend="python")
    assert sol.status == Status.EVENTS_ACCUMULATE and not sol.success
    t_rest = T1 * (1 + 2 * e / (1 - e))
    assert sol.t[-1] == pytest.approx(t_rest, rel=1e-9)
    assert 20 < len(sol.events) < 200
    assert "events accumulate" in sol.message and "Zeno" in sol.message


def test_max_events_stops_the_run_with_its_status():
    prob, event = ball(0.9, t_end=30.0)
    sol = odekit.solve(prob, "dp54", rtol=1e-8, events=event, max_events=4, backend="python")
    assert sol.status == Status.MAX_EVENTS and len(sol.events) == 4
    assert sol.t[-1] == sol.events[-1].t
    assert "max_events=4" in sol.message


# --- detection: nothing missed, nothing twice ----------------------------------------------

def sine_problem(t_end, omega=1.0):
    return odekit.ODEProblem(lambda t, y: np.array([np.cos(omega * t) * omega]), (0.0, t_end), np.array([0.0]))


@pytest.mark.parametrize("options", [dict(method="rk4", h=2.0), dict(method="dp54", rtol=1e-3, atol=1e-6)],
                         ids=["fixed", "adaptive"])
def test_every_root_of_a_fast_sine_is_found_within_long_steps(options):
    """g = sin(3 t) with steps of 2 (adaptive ones grow that long: y is sin(t) itself): about 2 roots per step."""
    prob = sine_problem(20.0)
    event = Event(lambda t, y: math.sin(3 * t))
    method = options.pop("method")
    sol = odekit.solve(prob, method, events=event, event_samples=8, backend="python", **options)
    times = np.array([r.t for r in sol.events])
    expected = np.arange(1, int(20.0 * 3 / math.pi) + 1) * math.pi / 3
    assert len(times) == len(expected)
    np.testing.assert_allclose(times, expected, rtol=1e-13)
    assert np.diff(sol.t).max() > 1.0          # the steps were long


def test_a_root_at_a_step_end_fires_once():
    prob = sine_problem(2.0)
    event = Event(lambda t, y: t - 1.0)                  # zero at the end of the fourth step
    sol = odekit.solve(prob, "rk4", h=0.25, events=event, backend="python")
    assert [r.t for r in sol.events] == [1.0]


def test_a_reset_onto_the_zero_does_not_fire_again():
    """The affect puts the ball exactly on the floor: g = 0 at the next step's start, and no second event."""
    def bounce_onto_floor(t, y):
        return np.array([0.0, -0.9 * y[1]])
    prob = odekit.ODEProblem(fall, (0.0, 4.0), np.array([H0, 0.0]))
    event = Event(floor, affect=bounce_onto_floor)            # both directions
    sol = odekit.solve(prob, "dp54", rtol=1e-12, atol=1e-12, events=event, backend="python")
    times = [r.t for r in sol.events]
    np.testing.assert_allclose(times, bounce_times(0.9, len(times)), rtol=1e-10)
    assert len(times) == 2


def test_two_events_in_one_step_fire_in_time_order_whatever_their_order_in_the_list():
    prob = sine_problem(1.0)
    late, early = Event(lambda t, y: t - 0.7, name="late"), Event(lambda t, y: t - 0.3, name="early")
    sol = odekit.solve(prob, "rk4", h=1.0, events=[late, early], backend="python")
    assert [(r.index, r.t) for r in sol.events] == [(1, pytest.approx(0.3, abs=1e-15)),
                                                    (0, pytest.approx(0.7, abs=1e-15))]


def test_simultaneous_events_fire_together_in_list_order():
    """Two walls at the same place: both log the same time, and their affects compose in list order."""
    prob = odekit.ODEProblem(lambda t, y: np.array([1.0, 0.0]), (0.0, 2.0), np.array([0.0, 0.0]))
    first = Event(lambda t, y: y[0] - 1.0, affect=lambda t, y: np.array([y[0], y[1] * 2 + 1]))
    second = Event(lambda t, y: 1.0 - y[0], affect=lambda t, y: np.array([y[0], y[1] * 10]))
    sol = odekit.solve(prob, "rk4", h=0.3, events=[first, second], backend="python")
    assert [r.index for r in sol.events] == [0, 1]
    assert sol.events[0].t == sol.events[1].t == pytest.approx(1.0, abs=1e-15)
    assert sol.y[-1][1] == 10.0                      # (0 * 2 + 1) * 10, not 0 * 10 * 2 + 1


@pytest.mark.parametrize("direction, expected", [(0, [1, 2, 3]), (1, [2]), (-1, [1, 3])])
def test_direction_filters_the_crossings(direction, expected):
    prob = sine_problem(10.0)
    sol = odekit.solve(prob, "dp54", rtol=1e-10, atol=1e-12, backend="python",
                       events=Event(lambda t, y: y[0], direction=direction))
    np.testing.assert_allclose([r.t for r in sol.events], np.array(expected) * math.pi, rtol=1e-9)


def test_a_vector_g_reports_its_components_and_hands_the_index_to_affect():
    seen = []

    def note(t, y, i):
        seen.append(i)
        return y

    prob = sine_problem(5.0)
    event = Event(lambda t, y: np.array([y[0] - 0.5, np.cos(t)]), affect=note, direction=1)
    sol = odekit.solve(prob, "dp54", rtol=1e-10, atol=1e-12, events=event, backend="python")
    # y = sin t rises through 0.5 at pi/6; cos t rises through 0 at 3 pi/2
    assert [(r.component, round(r.t, 8)) for r in sol.events] == [(0, round(math.pi / 6, 8)),
                                                                   (1, round(1.5 * math.pi, 8))]
    assert seen == [0, 1]


def test_events_on_a_backward_run():
    prob = odekit.ODEProblem(lambda t, y: np.array([math.cos(t)]), (10.0, 0.0), np.array([math.sin(10.0)]))
    sol = odekit.solve(prob, "dp54", rtol=1e-10, atol=1e-12, events=Event(lambda t, y: y[0]), backend="python")
    np.testing.assert_allclose([r.t for r in sol.events], [3 * math.pi, 2 * math.pi, math.pi], rtol=1e-9)


# --- every family -------------------------------------------------------------------------

def oscillator(t_end=7.0):
    return odekit.SecondOrderProblem(lambda t, x, v: -x, (0.0, t_end), np.array([1.0]), np.array([0.0]),
                                     velocity_dependent=False)


@pytest.mark.parametrize("method, order", [("velocity_verlet", 2), ("rk4", 4)])
def test_fixed_step_event_times_converge_at_the_methods_order(method, order):
    """x'' = -x from x = 1: x = cos t crosses zero at pi/2 and 3 pi/2."""
    errors = []
    for h in (0.02, 0.01):
        sol = odekit.solve(oscillator(), method, h=h, events=Event(lambda t, x, v: x[0]), backend="python")
        times = np.array([r.t for r in sol.events])
        assert len(times) == 2
        errors.append(np.abs(times - [math.pi / 2, 1.5 * math.pi]).max())
    assert order - 0.3 < math.log2(errors[0] / errors[1]) < order + 0.3


def test_a_fixed_step_run_rejoins_its_grid_after_an_event():
    prob, event = ball(0.9, t_end=3.0)
    sol = odekit.solve(prob, "rk4", h=0.1, events=event, backend="python")
    grid = np.setdiff1d(sol.t, [r.t for r in sol.events])
    np.testing.assert_allclose(grid, np.round(grid / 0.1) * 0.1, atol=1e-12)
    assert len(grid) == 31


@pytest.mark.parametrize("method", ["radau5", "bdf", "rodas4", "kencarp4", "velocity_verlet"])
def test_every_family_finds_the_bounces(method):
    e = 0.8
    if method == "velocity_verlet":
        prob = odekit.SecondOrderProblem(lambda t, x, v: np.array([-G]), (0.0, 5.0), np.array([H0]),
                                         np.array([0.0]), velocity_dependent=False)

        def bounce(t, x, v):
            v[0] = -e * v[0]                   # in place
        event = Event(lambda t, x, v: x[0], direction=-1, affect=bounce)
        options = dict(h=1e-3)
    else:
        prob, event = ball(e, t_end=5.0)
        options = dict(rtol=1e-8, atol=1e-10)
    sol = odekit.solve(prob, method, events=event, backend="python", **options)
    times = np.array([r.t for r in sol.events])
    expected = bounce_times(e, len(times))
    assert len(times) == np.sum(expected <= 5.0)
    np.testing.assert_allclose(times, expected, rtol=1e-6)


# --- the interfaces ----------------------------------------------------------------------

def test_solve_ivp_takes_scipy_event_functions():
    def hit(t, y):
        return y[0]
    hit.terminal, hit.direction = True, -1.0
    sol = odekit.solve_ivp(fall, (0.0, 10.0), np.array([H0, 0.0]), rtol=1e-10, atol=1e-12, events=hit,
                           backend="python")
    assert sol.status == Status.EVENT and sol.success
    assert sol.t_events[0][0] == pytest.approx(T1, rel=1e-10) and sol.t[-1] == sol.t_events[0][0]
    assert sol.y_events[0].shape == (1, 2)


def test_an_integrator_reports_the_events_each_call_crossed():
    prob, event = ball(0.9, t_end=100.0, terminal=2)
    it = odekit.Integrator(prob, "dp54", rtol=1e-10, atol=1e-12, events=event, backend="python")
    crossed = []
    while not it.terminated:
        it.step()
        crossed += it.last_events
    assert [r.t for r in crossed] == [r.t for r in it.event_log]
    np.testing.assert_allclose([r.t for r in crossed], bounce_times(0.9, 2), rtol=1e-10)
    assert it.t == crossed[-1].t
    with pytest.raises(odekit.IntegrationError, match="terminal event"):
        it.step()


def test_the_problems_own_events_come_first():
    prob = odekit.ODEProblem(fall, (0.0, 3.0), np.array([H0, 0.0]),
                             events=Event(floor, direction=-1, affect=restitution(0.5)))
    sol = odekit.solve(prob, "dp54", rtol=1e-10, events=Event(lambda t, y: y[0] - 5.0, name="half"),
                       backend="python")
    assert [r.index for r in sol.events][:2] == [1, 0] and len(sol.event_list) == 2


@pytest.mark.parametrize("bad, message", [
    (dict(g="floor"), "g must be a function g"),
    (dict(g=floor, direction=2), "direction must be -1, 0 or 1"),
    (dict(g=floor, terminal=0), "terminal must be True, False or a positive integer"),
    (dict(g=floor, terminal=1.5), "terminal must be True, False or a positive integer"),
    (dict(g=floor, affect="bounce"), "affect must be a function"),
])
def test_bad_events_are_refused_naming_the_argument(bad, message):
    with pytest.raises((TypeError, ValueError), match=message):
        Event(**bad)


def test_a_g_that_returns_the_wrong_thing_is_named_at_the_start():
    prob = odekit.ODEProblem(fall, (0.0, 3.0), np.array([H0, 0.0]))
    with pytest.raises(ValueError, match=r"g of event 0 \('nothing'\) returned None at t0=0.0"):
        odekit.solve(prob, "dp54", events=Event(lambda t, y: None, name="nothing"), backend="python")
    with pytest.raises(ValueError, match="event_samples must be"):
        odekit.solve(prob, "dp54", events=Event(floor), event_samples=-1, backend="python")


# --- compiled ----------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["dp54", "velocity_verlet"])
def test_both_backends_give_the_same_event_times(method):
    if method == "velocity_verlet":
        prob = odekit.SecondOrderProblem(lambda t, x, v: np.array([-G]), (0.0, 8.0), np.array([H0]),
                                         np.array([0.0]), velocity_dependent=False)

        def bounce(t, x, v):
            v[0] = -0.8 * v[0]
        event = Event(lambda t, x, v: x[0], direction=-1, affect=bounce)
        options = dict(h=1e-3)
    else:
        prob, event = ball(0.8, t_end=8.0)
        options = dict(rtol=1e-10, atol=1e-12)
    runs = [odekit.solve(prob, method, events=event, backend=b, **options) for b in ("python", "numba")]
    assert runs[1].backend == "numba"
    np.testing.assert_allclose([r.t for r in runs[1].events], [r.t for r in runs[0].events], rtol=1e-14)
    assert len(runs[0].events) >= 3


class Height:
    """The floor's ``g`` as a callable object, which Numba cannot compile."""

    def __init__(self, broken_after=math.inf):
        self.broken_after = broken_after

    def __call__(self, t, y):
        if t > self.broken_after:
            raise RuntimeError("the sensor broke")
        return y[0]


def test_an_event_numba_cannot_compile_runs_as_python_inside_the_compiled_loop():
    prob, _ = ball(0.8, t_end=8.0)
    event = Event(Height(), direction=-1, affect=restitution(0.8), name="floor")
    with pytest.warns(odekit.BackendFallbackWarning, match="g or affect of event 'floor'.*calls them as Python"):
        sol = odekit.solve(prob, "dp54", events=event, rtol=1e-10, atol=1e-12)
    assert sol.backend == "numba" and "event 'floor'" in sol.backend_reason    # the problem's function compiled
    python = odekit.solve(prob, "dp54", events=event, rtol=1e-10, atol=1e-12, backend="python")
    assert len(sol.events) == len(python.events) >= 3
    np.testing.assert_allclose([r.t for r in sol.events], [r.t for r in python.events], rtol=1e-14)
    with pytest.raises(Exception, match="g or affect of event 'floor'"):      # strict: no Python inside
        odekit.solve(prob, "dp54", events=event, backend="numba")


@pytest.mark.parametrize("backend", ["python", "auto"])
def test_an_event_function_that_raises_is_named_and_the_steps_before_are_kept(backend):
    prob, _ = ball(0.8, t_end=8.0)
    event = Event(Height(broken_after=1.0), direction=-1, name="floor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", odekit.BackendFallbackWarning)
        sol = odekit.solve(prob, "dp54", events=event, backend=backend)
    assert sol.status == Status.FUNCTION_ERROR
    assert sol.message.startswith("g of event 'floor' raised RuntimeError: the sensor broke")
    assert len(sol.t) >= 2 and sol.t[-1] > 0.0


@pytest.mark.parametrize("options", [dict(method="rk4", h=0.1), dict(method="dp54")], ids=["fixed", "adaptive"])
def test_an_affect_within_rounding_of_the_end_ends_the_run_there(options):
    """A jump one ulp before t_end leaves no step to take: the run ends at t_end, not in STEP_UNDERFLOW."""
    prob = odekit.ODEProblem(lambda t, y: np.zeros(1), (0.0, 0.1), np.zeros(1))
    event = Event(lambda t, y: t - (0.1 - 3e-17), affect=lambda t, y: y + 1)
    method = options.pop("method")
    sol = odekit.solve(prob, method, events=event, backend="python", **options)
    assert sol.status == Status.SUCCESS and sol.t[-1] == 0.1
    assert len(sol.events) == 1 and sol.y[-1][0] == 1.0


def test_a_second_order_affect_that_returns_x_and_v_compiles():
    """The zoo's ball returns ``(x, v)`` from its bounce; compiled, that once failed to type (the state's
    store had a branch for ``(x, v)`` and one for a state, and Numba types both)."""
    prob = odekit.problems.bouncing_ball(e=0.8, t_end=8.0)
    runs = [odekit.solve(prob, "velocity_verlet", h=1e-3, backend=b) for b in ("python", "numba")]
    assert runs[1].backend == "numba"
    np.testing.assert_allclose([r.t for r in runs[1].events], [r.t for r in runs[0].events], rtol=1e-14)
    assert len(runs[0].events) >= 3


def test_a_scalar_second_order_state_reaches_g_as_numbers():
    """x and v of a scalar SecondOrderProblem reach g as numbers, as they reach the force; compiled,
    ``math.cos`` refused the 0-d arrays they once were."""
    prob = odekit.problems.bouncing_ball(e=0.8, g=G, h0=H0, t_end=1.4)      # falling all along: lands at 1.43

    def level(t, x, v, g, e):
        return math.cos(x)

    runs = [odekit.solve(prob, "velocity_verlet", h=1e-3, events=Event(level), backend=b) for b in ("python", "numba")]
    assert runs[1].backend == "numba"
    # x = H0 - G t^2 / 2 passes the zeros of cos at 5 pi / 2, 3 pi / 2, pi / 2
    expected = [math.sqrt(2 * (H0 - c * math.pi) / G) for c in (2.5, 1.5, 0.5)]
    for sol in runs:
        np.testing.assert_allclose(sol.t_events[1], expected, rtol=1e-12)
    np.testing.assert_allclose(runs[1].t_events[1], runs[0].t_events[1], rtol=1e-14)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_an_event_that_meets_a_full_log_fires_after_the_log_grows(backend):
    """A sawtooth y' = 1, y <- y - 1 at y = 1: a linear g, whose roots are located exactly, on g = 0.
    The 65th event finds the log (64 rows at first) full: the step is cut just before it, the log
    grows, and the next step starts on the event's zero -- where a zero once never fired, and the
    sawtooth rose for ever after."""
    prob = odekit.ODEProblem(lambda t, y: np.array([1.0]), (0.0, 150.5), np.array([0.0]))
    event = Event(lambda t, y: y[0] - 1.0, direction=1, affect=lambda t, y: y - 1.0)
    sol = odekit.solve(prob, "rk4", h=0.3, events=event, backend=backend)
    assert sol.backend == backend
    np.testing.assert_allclose([r.t for r in sol.events], np.arange(1.0, 151.0), rtol=1e-12)
    assert sol.y[-1][0] == pytest.approx(0.5, abs=1e-12)


def test_a_step_far_past_a_bounce_does_not_set_the_next_one():
    """The ball's parabola has no error estimate to speak of: steps that run far past a bounce must
    not grow without bound (an Integrator's steps reached 1e17 and located bounces to 16 s)."""
    prob, event = ball(0.999, t_end=100.0)
    it = odekit.Integrator(prob, "dp54", rtol=1e-10, atol=1e-12, events=event, backend="python")
    while it.t < 60.0:
        it.step()
    times = [r.t for r in it.event_log]
    np.testing.assert_allclose(times, bounce_times(0.999, len(times)), rtol=1e-10)
    assert len(times) == np.sum(bounce_times(0.999, 40) <= it.t * (1 + 1e-12))      # none missed


def test_plain_event_functions_are_wrapped_once():
    def hit(t, y):
        return y[0]
    hit.terminal = True
    from odekit.events import as_events
    assert as_events(hit)[0] is as_events([hit])[0]
    hit.direction = -1
    assert as_events(hit)[0] is not as_events(lambda t, y: y[0])[0] and as_events(hit)[0].direction == -1


def test_the_error_of_a_run_with_jumps_compares_each_side_with_its_own_branch():
    prob = odekit.problems.bouncing_ball()
    sol = odekit.solve(prob, "dp54", rtol=1e-12, atol=1e-12, backend="python")
    assert len(sol.events) >= 5 and sol.error() < 1e-8
