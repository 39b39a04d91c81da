"""Bad input from the user's function: the wrong shape, non-finite values or
an exception, at the start or half-way.

Each test checks the error (type, and a message naming the argument, the
offending value and what is accepted) or the status of the returned
``Solution``.  What was computed before a failure is kept: the trajectory so
far, exactly, and the time of the failure.

Closed forms: classic RK4 with step ``h`` on ``y' = -y`` multiplies the state
by ``R(-h)`` per step (``rk4_factor``), so the trajectory kept before a
failure is known to round-off.  Everything runs on the Python backend except
where the compiled path is the point (a failure inside the compiled loop).
"""

import re

import numpy as np
import pytest

from odekit import Integrator, ODEProblem, SecondOrderProblem, Status, solve

from conftest import nan_after, rk4_factor


def named_time(message):
    """The time a failure message names as where it happened: the number after the first 'at t='."""
    match = re.search(r"at t=([-+0-9.eE]+)", message)
    assert match, f"message names no time: {message!r}"
    return float(match.group(1))


def grows_after_half(t, y):
    """Returns one value too many from t = 0.5 on."""
    if t < 0.5:
        return -y
    return np.concatenate((-y, np.zeros(1)))


def grows_after_half_k(t, y, k):
    if t < 0.5:
        return -k * y
    return np.zeros(y.shape[0] + 1)


class Boom(RuntimeError):
    pass


def exponential_growth(t, y):
    return y


# --- fun returning the wrong shape ----------------------------------------------------

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


def _last_force_nan_after(t, x, v):
    """-x, until t = 0.55; then the last body's last component is nan (the lone entry past four of a vector)."""
    a = -x
    if t >= 0.55:
        a[-1] = np.nan
    return a


def _force_that_overflows_the_state(t, x, v):
    return np.full_like(x, 1e308)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_splitting_step_checks_the_whole_force_and_state_it_computes_in_place(backend):
    """The splitting step computes the force into the row of the derivative at its end and checks only
    that half: a nan in the force's last entry stops the run at the step that evaluated it, and a state
    that overflows with finite forces says so."""
    x0, v0 = np.ones(5), np.zeros(5)
    prob = SecondOrderProblem(_last_force_nan_after, (0.0, 1.0), x0, v0, velocity_dependent=False)
    sol = solve(prob, "velocity_verlet", h=0.1, backend=backend)
    assert sol.backend == backend and sol.status == Status.NONFINITE
    np.testing.assert_allclose(sol.t, np.arange(6) * 0.1, rtol=0, atol=1e-15)   # the force at 0.6 is nan
    assert np.all(np.isfinite(sol.y))
    assert "force" in sol.message and "at t=0.6" in sol.message and "from t=0.5" in sol.message, sol.message
    runaway = SecondOrderProblem(_force_that_overflows_the_state, (0.0, 10.0), x0, v0, velocity_dependent=False)
    sol = solve(runaway, "velocity_verlet", h=1.0, backend=backend)
    assert sol.status == Status.NONFINITE and "overflowed" in sol.message, sol.message
    assert sol.t[-1] == 1.0 and np.all(np.isfinite(sol.y))      # x reaches 2e308 in the second step's drift


def test_nonfinite_mid_run_adaptive_shrinks_the_step_then_reports_underflow():
    sol = solve(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "dp54", backend="python")
    assert sol.status == Status.STEP_UNDERFLOW   # f is nan for every t >= 0.55: nothing gets past it
    assert sol.stats.nrejected > 0
    assert np.all(np.isfinite(sol.y))
    # dp54 evaluates f at t_new: every accepted step ends before 0.55, and creeps up to it
    assert 0.55 - 1e-6 < sol.t[-1] < 0.55
    np.testing.assert_allclose(sol.y[-1], np.exp(-sol.t[-1]) * np.array([1.0, 2.0]), rtol=1e-6)
    assert "non-finite" in sol.message and "underflow" in sol.message


def test_a_nonfinite_f_at_t_new_fails_the_step_though_the_estimate_does_not_weigh_it():
    """dop853's last stage is f(t_new, y_new), which neither y_new nor its error estimates weigh:
    the stepper checks it, or the step would pass on a derivative that fails every step after it."""
    from odekit.kernels import layout as L
    from odekit.kernels.explicit_rk import explicit_rk_step

    integ = Integrator(ODEProblem(lambda t, y: -y, (0.0, 1.0), [1.0, 2.0]), "dop853", backend="python")
    fns, data = integ._fns, integ._method_data
    fs, ist, scratch = integ._fs.copy(), integ._ist.copy(), tuple(a.copy() for a in integ._scratch)

    last = L.STAGE + 12                        # dop853's 13th stage: f(t_new, y_new)

    def nan_at_y_new(t, W, src, dst, args):
        ok = fns.rhs(t, W, src, dst, args)
        if dst == last:
            W[dst] = np.nan
        return ok

    h = 0.1
    code, _, _ = explicit_rk_step(nan_at_y_new, fns.jac, fns.args, data.m, data.ctrl, data.tol, scratch, 0.0, h,
                                  L.Y, L.F, False, L.YNEW, L.FNEW, ist, fs)
    assert code == L.NONFINITE
    assert fs[L.T_FAIL] == h                   # blamed on the evaluation at t_new


def test_nonfinite_mid_run_on_the_compiled_backend_keeps_the_trajectory():
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(nan_after, (0.0, 1.0), y0), "rk4", h=0.1, backend="numba")
    assert sol.backend == "numba"
    assert sol.status == Status.NONFINITE
    expected = np.array([y0 * rk4_factor(-0.1) ** k for k in range(6)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)


def spring_inf_after(t, x, v, k):
    """``x'' = -x``, with inf in component ``k`` alone from t = 0.55 on."""
    a = -x
    if t > 0.55:
        a[k] = np.inf
    return a


@pytest.mark.parametrize("k", [0, 3, 6])
def test_one_nonfinite_component_of_a_compiled_force_stops_the_run_at_its_evaluation(k):
    """The compiled finiteness check reads the whole force: its first, a middle and its last component."""
    prob = SecondOrderProblem(spring_inf_after, (0.0, 1.0), np.ones(7), np.zeros(7), args=(k,),
                              velocity_dependent=False)
    sol = solve(prob, "velocity_verlet", h=0.1, backend="numba")
    assert sol.backend == "numba" and sol.status == Status.NONFINITE
    np.testing.assert_allclose(sol.t, np.arange(6) * 0.1, rtol=0, atol=1e-15)   # the force at 0.6 is inf
    claimed = re.search(r"returned non-finite values \(inf or nan\) at t=([-+0-9.eE]+)", sol.message)
    assert claimed and float(claimed.group(1)) == pytest.approx(0.6, abs=1e-12), sol.message


def test_a_state_that_overflows_from_finite_evaluations_is_not_blamed_on_fun():
    """y' = y from 1e308, one Euler step of h = 1: f = 1e308 is finite, y + h f = inf."""
    sol = solve(ODEProblem(exponential_growth, (0.0, 2.0), [1e308]), "euler", h=1.0, backend="python")
    assert sol.status == Status.NONFINITE
    assert sol.t.tolist() == [0.0] and sol.y[0, 0] == 1e308
    assert "overflowed" in sol.message and "every evaluation was finite" in sol.message
    assert "returned non-finite" not in sol.message


# --- fun raising ----------------------------------------------------------------------

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
