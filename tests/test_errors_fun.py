"""Bad input: every item of the issue's "Bad input" list gets its error or status.

Each test checks the error (type, and a message naming the argument, the
offending value and what is accepted) or the status of the returned
``Solution`` -- and, where something was computed before the failure, that it
is kept: the trajectory so far, exactly, and the time of the failure.

Closed forms used throughout: classic RK4 with step ``h`` on ``y' = -y``
multiplies the state by ``R(-h)`` per step, ``R(z) = 1 + z + z^2/2 + z^3/6 +
z^4/24``; so the trajectory kept before a failure is known to round-off.

Everything runs on the Python backend except where the compiled path is the
point (a failure inside the compiled loop).
"""

import math
import re

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, SecondOrderProblem, Status, solve, solve_ivp


def rk4_factor(z):
    """Stability function of classic RK4: one step on y' = lambda y multiplies y by R(h lambda)."""
    return 1 + z + z ** 2 / 2 + z ** 3 / 6 + z ** 4 / 24


def named_time(message):
    """The time a failure message names as where it happened: the number after the first 'at t='."""
    match = re.search(r"at t=([-+0-9.eE]+)", message)
    assert match, f"message names no time: {message!r}"
    return float(match.group(1))


# --- module-level right-hand sides (shared by the compiled backend) -------------------

def decay(t, y):
    return -y


def decay_k(t, y, k):
    return -k * y


def grows_after_half(t, y):
    """Returns one value too many from t = 0.5 on."""
    if t < 0.5:
        return -y
    return np.concatenate((-y, np.zeros(1)))


def grows_after_half_k(t, y, k):
    if t < 0.5:
        return -k * y
    return np.zeros(y.shape[0] + 1)


def nan_after(t, y):
    """-y, until t = 0.55, then nan."""
    if t < 0.55:
        return -y
    return np.full_like(y, np.nan)


class Boom(RuntimeError):
    pass


def square(t, y):
    return y * y


def minus_cube(t, y):
    return -y ** 3


def spring(t, x, v):
    return -x


def damped_spring(t, x, v):
    return -x - 0.5 * v


SPLITTING = [m.name for m in odekit.methods("splitting")]
NEEDS_V_INDEPENDENT = [m.name for m in odekit.methods("splitting") if m.needs_velocity_independent]


# --- non-finite initial state ----------------------------------------------------------

@pytest.mark.parametrize("y0, where", [([1.0, np.nan, 3.0], r"y0\[1\]"),
                                       ([[1.0, 2.0], [3.0, np.inf]], r"y0\[1, 1\]"),
                                       (-np.inf, r"y0")])
def test_nonfinite_y0_is_refused_naming_y0_and_the_entry(y0, where):
    with pytest.raises(ValueError, match=r"y0 must be finite") as info:
        ODEProblem(decay, (0.0, 1.0), y0)
    assert re.search(where, str(info.value)), str(info.value)
    assert re.search(r"nan|inf", str(info.value)), str(info.value)


def test_nonfinite_y0_is_refused_by_solve_ivp_too():
    with pytest.raises(ValueError, match=r"y0 must be finite.*y0\[0\].*inf"):
        solve_ivp(decay, (0.0, 1.0), [np.inf, 1.0], "rk4", h=0.1, backend="python")


@pytest.mark.parametrize("x0, v0, name", [([np.nan], [0.0], "x0"), ([1.0], [np.inf], "v0")])
def test_nonfinite_x0_v0_are_refused_naming_them(x0, v0, name):
    with pytest.raises(ValueError, match=rf"{name} must be finite.*{name}\[0\]"):
        SecondOrderProblem(spring, (0.0, 1.0), x0, v0)


# --- fun returning the wrong shape -----------------------------------------------------

def test_wrong_shape_at_t0_raises_naming_both_shapes():
    prob = ODEProblem(lambda t, y: np.zeros(3), (0.0, 1.0), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"fun returned an array of shape \(3,\).*expected.*\(2,\)"):
        solve(prob, "rk4", h=0.1, backend="python")


@pytest.mark.parametrize("name", ["rk4", "velocity_verlet"])
def test_wrong_shape_of_accel_at_t0_raises_naming_accel_and_both_shapes(name):
    prob = SecondOrderProblem(lambda t, x, v: np.zeros(3), (0.0, 1.0), [1.0, 2.0], [0.0, 0.0],
                              velocity_dependent=False)
    with pytest.raises(ValueError, match=r"accel returned an array of shape \(3,\).*expected.*\(2,\)"):
        solve(prob, name, h=0.1, backend="python")


def test_nonfinite_at_t0_raises_naming_fun_and_t0():
    prob = ODEProblem(lambda t, y: np.array([np.nan, 0.0]), (0.0, 1.0), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"fun returned non-finite values.*t0=0"):
        solve(prob, "rk4", h=0.1, backend="python")


def test_wrong_shape_mid_run_fixed_step_keeps_the_trajectory_and_names_the_time():
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(grows_after_half, (0.0, 1.0), y0), "rk4", h=0.1, backend="python")
    assert sol.status == Status.BAD_SHAPE
    assert not sol.success
    # the step from 0.4 evaluates f at 0.5 (its last stage): 0.0 .. 0.4 are kept
    np.testing.assert_allclose(sol.t, [0.0, 0.1, 0.2, 0.3, 0.4], rtol=0, atol=1e-15)
    expected = np.array([y0 * rk4_factor(-0.1) ** k for k in range(5)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)
    assert sol.stats.naccepted == 4
    assert named_time(sol.message) == 0.5
    assert "wrong number of values (an array of shape (3,))" in sol.message
    assert "expected an array of shape (2,)" in sol.message


def test_wrong_shape_mid_run_adaptive_is_not_retried_and_keeps_the_trajectory():
    late_calls = []

    def fun(t, y):
        if t >= 0.5:
            late_calls.append(t)
        return grows_after_half(t, y)

    sol = solve(ODEProblem(fun, (0.0, 1.0), [1.0, 2.0]), "dp54", backend="python")
    assert sol.status == Status.BAD_SHAPE
    # a shape error is not a step-size problem: no retry -- one evaluation at t >= 0.5, and the
    # message's own call at the same time to name the shape returned
    assert sol.stats.nrejected == 0
    assert len(late_calls) == 2 and late_calls[0] == late_calls[1]
    assert "(an array of shape (3,))" in sol.message
    assert len(sol.t) == sol.stats.naccepted + 1
    assert 0.0 < sol.t[-1] < 0.5
    np.testing.assert_allclose(sol.y, np.exp(-sol.t)[:, None] * [1.0, 2.0], rtol=1e-6)
    t_fail = named_time(sol.message)
    assert sol.t[-1] < t_fail and t_fail >= 0.5   # fun changes its shape at t >= 0.5 only
    assert t_fail == pytest.approx(late_calls[0], rel=1e-5)   # the time of the bad evaluation


def test_wrong_shape_mid_run_on_the_compiled_backend_keeps_the_trajectory():
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(grows_after_half_k, (0.0, 1.0), y0, args=(0.7,)), "rk4", h=0.1, backend="numba")
    assert sol.backend == "numba"
    assert sol.status == Status.BAD_SHAPE
    expected = np.array([y0 * rk4_factor(-0.07) ** k for k in range(5)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)
    assert named_time(sol.message) == 0.5


# --- fun returning non-finite values mid-run ------------------------------------------

def test_nonfinite_mid_run_fixed_step_stops_with_the_trajectory_to_the_last_good_step():
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(nan_after, (0.0, 1.0), y0), "rk4", h=0.1, backend="python")
    assert sol.status == Status.NONFINITE
    # the step from 0.5 to 0.6 evaluates f at 0.55 -> nan; 0.0 .. 0.5 are kept
    np.testing.assert_allclose(sol.t, np.arange(6) * 0.1, rtol=0, atol=1e-15)
    expected = np.array([y0 * rk4_factor(-0.1) ** k for k in range(6)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)
    assert np.all(np.isfinite(sol.y))
    assert "non-finite" in sol.message
    assert "t=0.5" in sol.message and "h=0.1" in sol.message   # the failing step: from 0.5 with h 0.1


def test_nonfinite_message_names_a_time_at_which_fun_was_nonfinite():
    sol = solve(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="python")
    assert sol.status == Status.NONFINITE
    claimed = re.search(r"returned non-finite values \(inf or nan\) at t=([-+0-9.eE]+)", sol.message)
    assert claimed, sol.message
    t_claimed = float(claimed.group(1))
    assert not np.all(np.isfinite(nan_after(t_claimed, np.array([1.0, 2.0])))), sol.message


def test_nonfinite_mid_run_adaptive_shrinks_the_step_then_reports_underflow():
    sol = solve(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "dp54", backend="python")
    assert sol.status == Status.STEP_UNDERFLOW   # f is nan for every t >= 0.55: nothing gets past it
    assert sol.stats.nrejected > 0
    assert np.all(np.isfinite(sol.y))
    # dp54 evaluates f at t_new: every accepted step ends before 0.55, and creeps up to it
    assert 0.55 - 1e-6 < sol.t[-1] < 0.55
    np.testing.assert_allclose(sol.y[-1], np.exp(-sol.t[-1]) * np.array([1.0, 2.0]), rtol=1e-6)
    assert "non-finite" in sol.message and "underflow" in sol.message


def test_nonfinite_mid_run_on_the_compiled_backend_keeps_the_trajectory():
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(nan_after, (0.0, 1.0), y0), "rk4", h=0.1, backend="numba")
    assert sol.backend == "numba"
    assert sol.status == Status.NONFINITE
    expected = np.array([y0 * rk4_factor(-0.1) ** k for k in range(6)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)


# --- fun raising ------------------------------------------------------------------------

def test_fun_raising_mid_run_keeps_the_trajectory_and_the_exception():
    raised = []

    def fun(t, y):
        if t > 0.35:
            exc = Boom(f"gave up at t={t}")
            raised.append(exc)
            raise exc
        return -y

    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(fun, (0.0, 1.0), y0), "rk4", h=0.1, backend="python")
    assert sol.status == Status.FUNCTION_ERROR
    assert not sol.success
    assert len(raised) == 1 and sol.exception is raised[0]
    np.testing.assert_allclose(sol.t, [0.0, 0.1, 0.2, 0.3], rtol=0, atol=1e-15)
    expected = np.array([y0 * rk4_factor(-0.1) ** k for k in range(4)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)
    assert "Boom" in sol.message and "gave up at t=0.35" in sol.message
    assert "t=0.3" in sol.message            # the step it happened in


def test_fun_raising_in_an_adaptive_run_is_not_retried():
    calls = []

    def fun(t, y):
        calls.append(t)
        if t > 0.5:
            raise KeyError("missing table entry")
        return -y

    sol = solve(ODEProblem(fun, (0.0, 1.0), [1.0]), "dp54", backend="python")
    assert sol.status == Status.FUNCTION_ERROR
    assert isinstance(sol.exception, KeyError)
    assert sol.stats.nrejected == 0
    assert sol.t[-1] <= 0.5 and len(sol.t) == sol.stats.naccepted + 1
    assert max(calls) > 0.5 and sum(c > 0.5 for c in calls) == 1   # stopped at the first raise


# --- h ---------------------------------------------------------------------------------

@pytest.mark.parametrize("h", [0, 0.0, -0.1, -1])
def test_nonpositive_h_is_refused(h):
    with pytest.raises(ValueError, match=rf"h must be a positive finite step size, got {re.escape(repr(h))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=h, backend="python")


@pytest.mark.parametrize("h", [math.nan, math.inf])
def test_nonfinite_h_is_refused(h):
    with pytest.raises(ValueError, match=rf"\bh\b.*{repr(h)}") as info:
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=h, backend="python")
    assert "accepted" in str(info.value) or "positive finite" in str(info.value)


@pytest.mark.parametrize("h", [1.5, 2, np.float64(2.0),
                               np.float32(2.0),
                               np.int64(2)])
def test_h_larger_than_the_span_is_refused_naming_the_span(h):
    with pytest.raises(ValueError, match=r"h=.*larger than the span.*1\.0.*accepted: 0 < h <= 1\.0"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=h, backend="python")


def test_fixed_step_controller_larger_than_the_span_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"controller.h=5.0 is larger than the span.*accepted: 0 < controller.h <= 1\.0"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", controller=odekit.FixedStep(5.0), backend="python")


def test_h_larger_than_a_backward_span_is_refused():
    with pytest.raises(ValueError, match=r"larger than the span.*0\.5"):
        solve(ODEProblem(decay, (1.0, 0.5), [1.0]), "rk4", h=0.75, backend="python")


def test_h_equal_to_the_span_is_accepted_and_takes_one_step():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=1.0, backend="python")
    assert sol.success and sol.stats.naccepted == 1
    np.testing.assert_allclose(sol.y[-1], [rk4_factor(-1.0)], rtol=1e-15)


# --- tolerances ------------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [("rtol", 0), ("rtol", -1e-6), ("rtol", math.nan),
                                         ("atol", 0.0), ("atol", -1.0), ("atol", [1e-9, 0.0])])
def test_nonpositive_tolerances_are_refused_naming_them(name, value):
    prob = ODEProblem(decay, (0.0, 1.0), [1.0, 2.0])
    with pytest.raises(ValueError, match=rf"{name} must be positive and finite, got {re.escape(repr(value))}"):
        solve(prob, "dp54", backend="python", **{name: value})


def test_tolerance_with_the_wrong_number_of_entries_is_refused():
    with pytest.raises(ValueError, match=r"atol must be a number or have one entry per state component \(2\)"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0, 2.0]), "dp54", atol=[1e-9] * 3, backend="python")


# --- zero-length span ------------------------------------------------------------------

@pytest.mark.parametrize("span", [(1.0, 1.0), (0, 0.0)])
def test_zero_length_span_is_refused(span):
    with pytest.raises(ValueError, match=r"t_span has zero length.*accepted: t_end != t0"):
        ODEProblem(decay, span, [1.0])
    with pytest.raises(ValueError, match=r"t_span has zero length"):
        SecondOrderProblem(spring, span, [1.0], [0.0])
    with pytest.raises(ValueError, match=r"t_span has zero length"):
        solve_ivp(decay, span, [1.0], "rk4", h=0.1, backend="python")


def test_nonfinite_span_is_refused():
    with pytest.raises(ValueError, match=r"t_span must be finite"):
        ODEProblem(decay, (0.0, math.inf), [1.0])


# --- max_steps -------------------------------------------------------------------------

def test_max_steps_fixed_step_returns_exactly_that_many_steps():
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(decay, (0.0, 1.0), y0), "rk4", h=0.01, max_steps=7, backend="python")
    assert sol.status == Status.MAX_STEPS
    assert not sol.success
    assert sol.stats.naccepted == 7 and sol.stats.nsteps == 7
    assert len(sol.t) == 8
    np.testing.assert_allclose(sol.t, np.arange(8) * 0.01, rtol=0, atol=1e-15)
    expected = np.array([y0 * rk4_factor(-0.01) ** k for k in range(8)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)
    assert "max_steps=7" in sol.message and "t=0.07" in sol.message


def test_max_steps_adaptive_returns_exactly_that_many_accepted_steps():
    sol = solve(ODEProblem(decay, (0.0, 100.0), [1.0, 2.0]), "dp54", max_steps=5, backend="python")
    assert sol.status == Status.MAX_STEPS
    assert sol.stats.naccepted == 5 and len(sol.t) == 6
    assert sol.t[-1] < 100.0
    np.testing.assert_allclose(sol.y, np.exp(-sol.t)[:, None] * [1.0, 2.0], rtol=1e-6)
    assert "max_steps=5" in sol.message


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_max_steps_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match=rf"max_steps must be a positive integer, got {re.escape(repr(bad))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, max_steps=bad, backend="python")


# --- step-size underflow ---------------------------------------------------------------

def test_step_size_underflows_at_the_blow_up_of_y_squared():
    # y' = y^2, y(0) = 1: y = 1/(1 - t) blows up at t = 1.  The numerical blow-up time
    # differs from 1 by an amount proportional to the tolerance (a few 1e-7 at rtol=1e-6,
    # on either side of 1), so "close to 1" is bounded by the tolerance.
    rtol = 1e-6
    sol = solve(ODEProblem(square, (0.0, 2.0), 1.0), "dp54", rtol=rtol, backend="python")
    assert sol.status == Status.STEP_UNDERFLOW
    assert not sol.success
    assert abs(sol.t[-1] - 1.0) < 10 * rtol
    assert np.all(np.isfinite(sol.y)) and sol.y[-1] > 1e10
    assert re.search(r"step size underflow at t=(1|0\.99\d*)\b", sol.message), sol.message
    # the trajectory before the blow-up is kept and right
    early = sol.t < 0.9
    np.testing.assert_allclose(sol.y[early], 1 / (1 - sol.t[early]), rtol=1e-5)


def test_h_min_stops_with_underflow_naming_h_min():
    ctrl = odekit.PIController(h_min=1e-3)
    sol = solve(ODEProblem(square, (0.0, 2.0), 1.0), "dp54", controller=ctrl, backend="python")
    assert sol.status == Status.STEP_UNDERFLOW
    assert sol.t[-1] < 1.0
    assert "h_min=0.001" in sol.message


# --- splitting methods and the problem they are given ---------------------------------

@pytest.mark.parametrize("name", NEEDS_V_INDEPENDENT)
def test_velocity_dependent_forces_are_refused_by_methods_that_need_independent_ones(name):
    prob = SecondOrderProblem(damped_spring, (0.0, 1.0), [1.0], [0.0], velocity_dependent=True)
    with pytest.raises(ValueError, match=rf"{name}.*velocity_dependent=True.*symplectic_euler"):
        solve(prob, name, h=0.1, backend="python")


def test_velocity_verlet_is_among_the_refusing_methods():
    assert "velocity_verlet" in NEEDS_V_INDEPENDENT and "leapfrog" in NEEDS_V_INDEPENDENT


def test_velocity_verlet_is_accepted_when_forces_do_not_depend_on_velocity():
    prob = SecondOrderProblem(spring, (0.0, 0.1), [1.0], [0.0], velocity_dependent=False)
    sol = solve(prob, "velocity_verlet", h=0.1, backend="python")
    # one kick-drift-kick step: v = -h/2, x = 1 - h^2/2, v = -h/2 - h/2 x
    np.testing.assert_allclose(sol.x[-1], [1 - 0.005], rtol=1e-15)
    np.testing.assert_allclose(sol.v[-1], [-0.05 - 0.05 * 0.995], rtol=1e-15)


def test_symplectic_euler_is_accepted_with_velocity_dependent_forces():
    prob = SecondOrderProblem(damped_spring, (0.0, 0.2), [1.0], [0.0], velocity_dependent=True)
    sol = solve(prob, "symplectic_euler", h=0.1, backend="python")
    assert sol.success
    # velocity first, with the current velocity in the force:
    v1 = 0.0 + 0.1 * (-1.0 - 0.5 * 0.0)
    x1 = 1.0 + 0.1 * v1
    v2 = v1 + 0.1 * (-x1 - 0.5 * v1)
    x2 = x1 + 0.1 * v2
    np.testing.assert_allclose(sol.x[:, 0], [1.0, x1, x2], rtol=1e-15)
    np.testing.assert_allclose(sol.v[:, 0], [0.0, v1, v2], rtol=1e-15)


@pytest.mark.parametrize("name", SPLITTING)
def test_splitting_method_on_a_first_order_problem_is_refused(name):
    with pytest.raises(ValueError, match=rf"{name}.*splitting method.*SecondOrderProblem"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), name, h=0.1, backend="python")


# --- Newton failure --------------------------------------------------------------------

def test_newton_failure_at_a_fixed_step_stops_with_a_clear_message():
    # backward Euler on y' = -y^3 from 10 with h = 1: Z + Z^3 = 10; simplified Newton with
    # the Jacobian at y0 (1 + 300) contracts too slowly to converge in its iterations.
    sol = solve(ODEProblem(minus_cube, (0.0, 2.0), 10.0), "backward_euler", h=1.0, backend="python")
    assert sol.status == Status.NEWTON_FAILED
    assert not sol.success
    np.testing.assert_array_equal(sol.t, [0.0])
    np.testing.assert_array_equal(sol.y, [10.0])
    assert sol.stats.naccepted == 0 and sol.stats.njev == 1 and sol.stats.nlu == 1
    assert "Newton" in sol.message and "did not converge" in sol.message
    assert "t=1" in sol.message and "h=1" in sol.message
    assert "smaller h" in sol.message


def test_newton_failure_without_a_real_solution_stops_the_fixed_step():
    # y' = 10 y^2, y0 = 1, h = 0.5: Z = 1 + 5 Z^2 has no real root, Newton cannot converge
    sol = solve(ODEProblem(lambda t, y: 10 * y * y, (0.0, 1.0), 1.0), "backward_euler", h=0.5,
                backend="python")
    assert sol.status == Status.NEWTON_FAILED
    assert len(sol.t) == 1 and "Newton" in sol.message


def test_newton_failure_with_step_doubling_is_retried_smaller_and_succeeds():
    sol = solve(ODEProblem(minus_cube, (0.0, 2.0), 10.0), "backward_euler", h=1.0, adaptive="doubling",
                rtol=1e-3, backend="python")
    assert sol.success, sol.message
    assert sol.stats.nrejected > 0
    assert sol.t[1] < 1.0          # the first step of 1 was not accepted
    assert sol.t[-1] == 2.0
    exact = 1 / math.sqrt(1 / 100 + 2 * 2.0)       # y = 1/sqrt(1/y0^2 + 2t)
    assert abs(sol.y[-1] - exact) < 0.02 * exact


# --- names of methods, backends, adaptive ---------------------------------------------

@pytest.mark.parametrize("wrong, close", [("velocity_verlett", "velocity_verlet"), ("rk5", "rk45"),
                                          ("dp45", "dp54"), ("backwards_euler", "backward_euler")])
def test_unknown_method_lists_close_names(wrong, close):
    with pytest.raises(ValueError, match=rf"unknown method '{wrong}'; closest: .*\b{close}\b"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), wrong, h=0.1, backend="python")


def test_unknown_method_from_odekit_method_too():
    with pytest.raises(ValueError, match=r"unknown method 'leap_frog'; closest: .*leapfrog"):
        odekit.method("leap_frog")


def test_unknown_method_far_from_every_name_still_lists_some():
    with pytest.raises(ValueError, match=r"unknown method 'zzzz'; closest: \w+, \w+, \w+, \w+\. `odekit methods`"):
        odekit.method("zzzz")


@pytest.mark.parametrize("scipy_name, advice", [("LSODA", r"use 'bdf'.*stiff.*'dp54'.*non-stiff"),
                                                 ("DOP853", r"8\(5,3\).*not implemented.*'dp54'")])
def test_scipy_methods_odekit_lacks_are_refused_with_advice(scipy_name, advice):
    # a SciPy user's solve_ivp(..., method="LSODA") must not get edit-distance guesses like 'rodas'
    with pytest.raises(ValueError, match=rf"method '{scipy_name}' is not in odekit: .*{advice}"):
        solve_ivp(decay, (0.0, 1.0), [1.0], scipy_name, backend="python")


@pytest.mark.parametrize("scipy_name, ours", [("RK45", "dp54"), ("RK23", "bs32"), ("Radau", "radau5"),
                                              ("BDF", "bdf")])
def test_scipy_method_names_are_aliases(scipy_name, ours):
    assert odekit.method(scipy_name) is odekit.method(ours)


@pytest.mark.parametrize("backend", ["cuda", "Numba", "", None])
def test_bad_backend_name_lists_the_accepted_ones(backend):
    with pytest.raises(ValueError, match=rf"backend must be one of auto, numba, python, got {re.escape(repr(backend))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, backend=backend)


@pytest.mark.parametrize("adaptive", ["yes", "double", "pi", 2])
def test_bad_adaptive_value_lists_the_accepted_ones(adaptive):
    with pytest.raises(ValueError, match=rf"adaptive must be None, True, False or 'doubling', got {re.escape(repr(adaptive))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "dp54", adaptive=adaptive, backend="python")


@pytest.mark.parametrize("name", ["rk4", "euler", "implicit_midpoint", "midpoint"])
def test_adaptive_without_an_embedded_pair_suggests_doubling(name):
    prob = ODEProblem(decay, (0.0, 1.0), [1.0])
    with pytest.raises(ValueError, match=rf"'{name}' has no embedded error estimate.*adaptive='doubling'"):
        solve(prob, name, backend="python")                     # no h: adaptive by default
    with pytest.raises(ValueError, match=r"adaptive='doubling'"):
        solve(prob, name, h=0.1, adaptive=True, backend="python")
    sol = solve(prob, name, adaptive="doubling", rtol=1e-4, backend="python")   # what it suggests works
    assert sol.success and sol.t[-1] == 1.0


def test_fixed_steps_without_h_are_refused():
    with pytest.raises(ValueError, match=r"fixed steps need h"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", adaptive=False, backend="python")


# --- t_eval ----------------------------------------------------------------------------

@pytest.mark.parametrize("t_eval, bad", [([0.0, 0.5, 1.5], "1.5"), ([-0.1, 0.5], "-0.1")])
def test_t_eval_outside_the_span_is_refused_naming_the_value(t_eval, bad):
    with pytest.raises(ValueError, match=rf"t_eval must lie within t_span \[0\.0, 1\.0\].*{re.escape(bad)}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, t_eval=t_eval, backend="python")


def test_unsorted_t_eval_is_refused():
    with pytest.raises(ValueError, match=r"t_eval must be sorted in the direction of integration \(increasing\)"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, t_eval=[0.5, 0.2], backend="python")


def test_t_eval_must_follow_a_backward_span():
    with pytest.raises(ValueError, match=r"t_eval must be sorted .*\(decreasing\)"):
        solve(ODEProblem(decay, (1.0, 0.0), [1.0]), "rk4", h=0.1, t_eval=[0.2, 0.5], backend="python")


def test_two_dimensional_t_eval_is_refused():
    with pytest.raises(ValueError, match=r"t_eval must be one-dimensional"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, t_eval=[[0.1, 0.2]], backend="python")


# --- args ------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [0.7, "k", np.array([0.7])])
def test_args_that_are_not_a_tuple_raise_type_error_suggesting_one(args):
    with pytest.raises(TypeError, match=r"args must be a tuple.*args=\("):
        ODEProblem(decay_k, (0.0, 1.0), [1.0], args=args)
    with pytest.raises(TypeError, match=r"args must be a tuple"):
        solve_ivp(decay_k, (0.0, 1.0), [1.0], "rk4", args=args, h=0.1, backend="python")


def test_single_argument_hint_is_the_tuple_to_write():
    with pytest.raises(TypeError, match=re.escape("write args=(0.7,)")):
        ODEProblem(decay_k, (0.0, 1.0), [1.0], args=0.7)


def test_args_given_as_a_list_are_used_as_a_tuple():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=[0.5]), "rk4", h=0.5, backend="python")
    np.testing.assert_allclose(sol.y[-1], [rk4_factor(-0.25) ** 2], rtol=1e-15)


# --- other arguments -------------------------------------------------------------------

def test_non_callable_fun_is_refused():
    with pytest.raises(TypeError, match=r"fun must be callable, got list"):
        ODEProblem([1.0], (0.0, 1.0), [1.0])


def test_controller_and_h_together_are_refused():
    with pytest.raises(ValueError, match=r"either controller=\.\.\. or h/adaptive"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, controller=odekit.FixedStep(0.1),
              backend="python")


def test_pi_controller_for_a_method_without_a_pair_suggests_doubling():
    with pytest.raises(ValueError, match=r"'rk4' has no embedded error estimate.*doubling"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", controller=odekit.PIController(), backend="python")


def test_a_state_that_overflows_from_finite_evaluations_is_not_blamed_on_fun():
    """y' = y from 1e308, one Euler step of h = 1: f = 1e308 is finite, y + h f = inf."""
    sol = solve(ODEProblem(exponential_growth, (0.0, 2.0), [1e308]), "euler", h=1.0, backend="python")
    assert sol.status == Status.NONFINITE
    assert sol.t.tolist() == [0.0] and sol.y[0, 0] == 1e308
    assert "overflowed" in sol.message and "every evaluation was finite" in sol.message
    assert "returned non-finite" not in sol.message


def exponential_growth(t, y):
    return y
