"""The user-facing interface: shapes, stats, output, dense output, Integrator,
the registry, invariants, the System protocol and the two backends.

Exact values come from closed forms: classic RK4 with step ``h`` on
``y' = -k y`` multiplies the state by ``R(-k h)`` per step, ``R(z) = 1 + z +
z^2/2 + z^3/6 + z^4/24``; a free particle (``x'' = 0``) is integrated exactly
by every method.  Most tests run on the Python backend; the compiled backend
is used where it is the point, with module-level problem functions so each
kernel is compiled once.
"""

import math
import re
import warnings

import numpy as np
import pytest

import odekit
from odekit import (BackendFallbackWarning, IntegrationError, Integrator, ODEProblem, SecondOrderProblem,
                    Status, solve, solve_ivp)


def rk4_factor(z):
    return 1 + z + z ** 2 / 2 + z ** 3 / 6 + z ** 4 / 24


# --- module-level problem functions (compiled once by the numba backend) ---------------

def decay(t, y, k):
    return -k * y


def pendulum(t, y, k):
    return np.array([y[1], -k * np.sin(y[0])])


def switched(t, y):
    """Relaxes to 0, then (from t = 1) to 50: the jump forces rejected steps."""
    if t < 1.0:
        return -y
    return 50.0 - y


def stiff_pair(t, y):
    return np.array([-y[0] ** 3, -50.0 * (y[1] - np.cos(t))])


def oscillator(t, x, v, w):
    return -w * w * x


def free(t, x, v):
    return np.zeros_like(x)


def spring(t, x, v):
    return -x


def nan_after(t, y):
    if t < 0.55:
        return -y
    return np.full_like(y, np.nan)


_RATES = {"decay": 0.7}


def dict_decay(t, y):
    """Reads a module-level dict: Numba cannot type it."""
    return -_RATES["decay"] * y


# The issue's list of methods: all of them must be registered.
ISSUE_METHODS = [
    "euler", "midpoint", "heun", "ralston", "kutta3", "rk4", "rk38",
    "heun_euler", "bs32", "rkf45", "cash_karp", "dp54",
    "backward_euler", "trapezoid", "implicit_midpoint", "linearized_euler",
    "symplectic_euler", "symplectic_euler_b", "velocity_verlet", "position_verlet", "leapfrog",
    "forest_ruth", "pefrl", "yoshida6",
]


# --- shapes ----------------------------------------------------------------------------

def test_scalar_y0_gives_a_one_dimensional_trajectory():
    sol = solve(ODEProblem(decay, (0.0, 1.0), 1.0, args=(1.0,)), "rk4", h=0.1, backend="python")
    assert sol.t.shape == (11,)
    assert sol.y.shape == (11,)
    np.testing.assert_allclose(sol.y, rk4_factor(-0.1) ** np.arange(11), rtol=1e-14)


def test_matrix_y0_keeps_its_shape_in_every_row():
    y0 = np.arange(1.0, 7.0).reshape(3, 2)
    sol = solve(ODEProblem(decay, (0.0, 1.0), y0, args=(1.0,)), "rk4", h=0.1, backend="python")
    assert sol.y.shape == (11, 3, 2)
    np.testing.assert_array_equal(sol.y[0], y0)
    np.testing.assert_allclose(sol.y[-1], y0 * rk4_factor(-0.1) ** 10, rtol=1e-14)


def test_matrix_y0_keeps_its_shape_with_t_eval_and_dense_output():
    y0 = np.arange(1.0, 7.0).reshape(3, 2)
    sol = solve(ODEProblem(decay, (0.0, 1.0), y0, args=(1.0,)), "dp54", t_eval=[0.25, 0.5, 0.75],
                dense_output=True, backend="python")
    assert sol.y.shape == (3, 3, 2)
    assert sol(0.4).shape == (3, 2)
    assert sol([0.1, 0.2]).shape == (2, 3, 2)


@pytest.mark.parametrize("name", ["velocity_verlet", "rk4"])
def test_second_order_output_stacks_x_and_v(name):
    x0 = np.arange(12.0).reshape(4, 3)
    v0 = -np.arange(12.0).reshape(4, 3) / 10
    prob = SecondOrderProblem(oscillator, (0.0, 1.0), x0, v0, args=(2.0,), velocity_dependent=False)
    sol = solve(prob, name, h=0.1, backend="python")
    assert sol.y.shape == (11, 2, 4, 3)
    assert sol.x.shape == (11, 4, 3) and sol.v.shape == (11, 4, 3)
    np.testing.assert_array_equal(sol.x, sol.y[:, 0])
    np.testing.assert_array_equal(sol.v, sol.y[:, 1])
    np.testing.assert_array_equal(sol.x[0], x0)
    np.testing.assert_array_equal(sol.v[0], v0)
    # x = x0 cos 2t + v0/2 sin 2t, componentwise
    exact = x0 * math.cos(2.0) + v0 / 2 * math.sin(2.0)
    # (neighbouring entries differ by 0.46: a scrambled reshape cannot pass)
    np.testing.assert_allclose(sol.x[-1], exact, rtol=0, atol=0.05 if name == "velocity_verlet" else 1e-3)


def test_x_on_a_first_order_solution_raises_attribute_error():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.5, backend="python")
    with pytest.raises(AttributeError, match=r"sol\.x exists for SecondOrderProblem"):
        sol.x
    with pytest.raises(AttributeError, match=r"sol\.v exists for SecondOrderProblem"):
        sol.v
    assert not hasattr(sol, "x")


# --- stats -----------------------------------------------------------------------------

def test_fixed_step_rk4_costs_exactly_four_evaluations_per_step():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0, 2.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    s = sol.stats
    assert s.naccepted == 10
    assert s.nsteps == s.naccepted
    assert s.nrejected == 0
    assert s.nfev == 4 * s.naccepted
    assert s.njev == 0 and s.nlu == 0


def test_dp54_is_fsal_six_evaluations_per_attempt_plus_two_at_the_start():
    # the two: f(t0, y0) (the first evaluation, which also checks fun) and the explicit
    # Euler probe of Hairer's initial-step selection (controllers.initial_step,
    # "Costs one evaluation (counted)").  Rejected attempts cost six too (f(t, y) is kept).
    sol = solve(ODEProblem(switched, (0.0, 2.0), [1.0, 2.0]), "dp54", backend="python")
    s = sol.stats
    assert sol.success
    assert s.nrejected > 0                  # the formula is checked with rejections in it
    assert s.nsteps == s.naccepted + s.nrejected
    assert s.nfev == 2 + 6 * s.nsteps
    assert len(sol.t) == s.naccepted + 1


def test_dp54_with_a_given_first_step_skips_the_initial_step_probe():
    sol = solve(ODEProblem(switched, (0.0, 2.0), [1.0, 2.0]), "dp54", h=0.01, adaptive=True,
                backend="python")
    assert sol.stats.nrejected > 0
    assert sol.stats.nfev == 1 + 6 * sol.stats.nsteps


@pytest.mark.parametrize("name", [m.name for m in odekit.methods("explicit_rk") if m.fsal and m.adaptive])
def test_every_fsal_pair_costs_its_evaluations_per_step(name):
    m = odekit.method(name)
    sol = solve(ODEProblem(switched, (0.0, 2.0), [1.0, 2.0]), name, backend="python")
    assert sol.success and sol.stats.nrejected > 0
    assert m.evaluations_per_step == m.stages - 1
    assert sol.stats.nfev == 2 + m.evaluations_per_step * sol.stats.nsteps


# --- t_eval ----------------------------------------------------------------------------

def test_t_eval_times_are_returned_exactly_and_values_match_the_exact_solution():
    t_eval = np.array([0.0, 0.1234, 1 / 3, 0.5, 0.77777, 1.0])
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,)), "dp54", t_eval=t_eval, backend="python")
    assert sol.success
    np.testing.assert_array_equal(sol.t, t_eval)
    # dp54's own interpolant: error at the level of the tolerance (Hermite on these steps: ~6e-7)
    np.testing.assert_allclose(sol.y[:, 0], np.exp(-t_eval), rtol=0, atol=1e-7)


def test_t_eval_with_rk4_is_hermite_accurate():
    h = 0.1
    t_eval = np.arange(10) * h + h / 2          # midpoints of the steps
    prob = ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,))
    sol = solve(prob, "rk4", h=h, t_eval=t_eval, backend="python")
    np.testing.assert_array_equal(sol.t, t_eval)
    steps = solve(prob, "rk4", h=h, backend="python")
    node_error = np.max(np.abs(steps.y[:, 0] - np.exp(-steps.t)))
    # cubic Hermite through (y, f) at both ends: node errors (weighted by at most 1 + 8h/27
    # since f = -y) plus h^4/384 max|y''''|
    bound = node_error * (1 + 8 * h / 27) + h ** 4 / 384
    assert np.max(np.abs(sol.y[:, 0] - np.exp(-t_eval))) <= bound


def test_t_eval_not_starting_at_t0_returns_only_the_requested_times():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.1, t_eval=[0.5, 1.0],
                backend="python")
    np.testing.assert_array_equal(sol.t, [0.5, 1.0])
    np.testing.assert_allclose(sol.y[-1], [rk4_factor(-0.1) ** 10], rtol=1e-14)


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_t_eval_costs_at_most_one_evaluation_per_requested_time(backend):
    # Radau IIA has no f at the end of its step: Hermite output needs one evaluation there, but
    # only in the steps a requested time falls in -- the steps and their values are the same
    prob = odekit.problems.robertson().with_span((0.0, 1e3))
    plain = solve(prob, "radau5", rtol=1e-6, atol=1e-10, backend=backend)
    for t_eval in ([1e3], np.linspace(0.0, 1e3, 7)):
        sol = solve(prob, "radau5", rtol=1e-6, atol=1e-10, t_eval=t_eval, backend=backend)
        assert sol.stats.nsteps == plain.stats.nsteps > 50
        assert plain.stats.nfev < sol.stats.nfev <= plain.stats.nfev + len(t_eval)
        np.testing.assert_array_equal(sol.y[-1], plain.y[-1])


def test_dense_output_of_bdf_evaluates_nothing_more():
    # BDF interpolates with the polynomial of its differences (as SciPy's BdfDenseOutput):
    # no f at the ends of its steps, which it never needs otherwise
    prob = odekit.problems.van_der_pol(mu=1000.0, t_end=3000.0)
    plain = solve(prob, "bdf", rtol=1e-6, atol=1e-6)
    dense = solve(prob, "bdf", rtol=1e-6, atol=1e-6, dense_output=True)
    assert plain.stats.nrejected > 50
    assert dense.stats == plain.stats
    np.testing.assert_array_equal(dense.y, plain.y)


# --- dense output ----------------------------------------------------------------------

def test_dense_output_of_dp54_uses_its_own_interpolant():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,)), "dp54", dense_output=True,
                backend="python")
    tt = np.linspace(0.0, 1.0, 1001)
    err = np.max(np.abs(sol(tt)[:, 0] - np.exp(-tt)))
    # the same steps interpolated by cubic Hermite err by ~6e-7, linearly by ~2e-3
    assert err < 1e-7
    np.testing.assert_allclose(sol(sol.t)[:, 0], sol.y[:, 0], rtol=1e-14)


def test_dense_output_of_rk4_is_cubic_hermite():
    h = 0.1
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=h, dense_output=True,
                backend="python")
    node_error = np.max(np.abs(sol.y[:, 0] - np.exp(-sol.t)))
    tt = np.linspace(0.0, 1.0, 1001)
    err = np.max(np.abs(sol(tt)[:, 0] - np.exp(-tt)))
    assert err <= node_error * (1 + 8 * h / 27) + h ** 4 / 384   # << h^3 = 1e-3
    np.testing.assert_allclose(sol(sol.t)[:, 0], sol.y[:, 0], rtol=1e-14)
    assert np.ndim(sol(0.5)) == 1 and sol(0.5).shape == (1,)


def test_dense_output_refuses_times_outside_the_span():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.1, dense_output=True,
                backend="python")
    with pytest.raises(ValueError, match=r"t must lie within the solved span"):
        sol(1.5)


def test_calling_a_solution_without_dense_output_raises_naming_dense_output():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    with pytest.raises(ValueError, match=r"dense_output=True"):
        sol(0.5)


# --- backward integration --------------------------------------------------------------

def test_backward_integration_adaptive_recovers_the_initial_value():
    sol = solve(ODEProblem(decay, (1.0, 0.0), [math.exp(-1.0)], args=(1.0,)), "dp54", backend="python")
    assert sol.success
    assert sol.t[0] == 1.0 and sol.t[-1] == 0.0
    assert np.all(np.diff(sol.t) < 0)
    np.testing.assert_allclose(sol.y[:, 0], np.exp(-sol.t), rtol=1e-6)
    assert abs(sol.y[-1, 0] - 1.0) < 1e-7


def test_backward_integration_fixed_step_matches_the_closed_form():
    sol = solve(ODEProblem(decay, (1.0, 0.0), [math.exp(-1.0)], args=(1.0,)), "rk4", h=0.1, backend="python")
    np.testing.assert_allclose(sol.t, 1.0 - 0.1 * np.arange(11), rtol=0, atol=1e-15)
    # h = -0.1 on y' = -y: each step multiplies by R(+0.1)
    np.testing.assert_allclose(sol.y[:, 0], math.exp(-1.0) * rk4_factor(0.1) ** np.arange(11), rtol=1e-14)


def test_backward_integration_with_t_eval_and_dense_output():
    sol = solve(ODEProblem(decay, (1.0, 0.0), [math.exp(-1.0)], args=(1.0,)), "dp54",
                t_eval=[1.0, 0.6, 0.2, 0.0], dense_output=True, backend="python")
    np.testing.assert_array_equal(sol.t, [1.0, 0.6, 0.2, 0.0])
    np.testing.assert_allclose(sol.y[:, 0], np.exp(-sol.t), rtol=1e-6)
    np.testing.assert_allclose(sol(0.45), [math.exp(-0.45)], rtol=1e-6)


# --- solve_ivp -------------------------------------------------------------------------

def test_solve_ivp_mirrors_solve():
    a = solve_ivp(decay, (0.0, 2.0), [1.0, 2.0], "rk4", args=(0.7,), h=0.1, backend="python")
    b = solve(ODEProblem(decay, (0.0, 2.0), [1.0, 2.0], args=(0.7,)), "rk4", h=0.1, backend="python")
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.stats == b.stats and a.status == b.status and a.method is b.method


def test_solve_ivp_passes_the_options_and_accepts_scipy_names():
    kw = dict(args=(0.7,), rtol=1e-8, t_eval=[0.5, 1.5], dense_output=True, backend="python")
    a = solve_ivp(decay, (0.0, 2.0), [1.0, 2.0], "RK45", **kw)
    kw.pop("args")
    b = solve(ODEProblem(decay, (0.0, 2.0), [1.0, 2.0], args=(0.7,)), "dp54", **kw)
    assert a.method.name == "dp54"
    np.testing.assert_array_equal(a.t, [0.5, 1.5])
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a(1.0), b(1.0))
    assert a.stats == b.stats
    assert solve_ivp(decay, (0.0, 1.0), [1.0], "RK23", args=(1.0,), backend="python").method.name == "bs32"


# --- Integrator ------------------------------------------------------------------------

def test_integrator_step_advances_exactly_h_on_the_grid():
    integ = Integrator(ODEProblem(decay, (0.0, 10.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    assert integ.h == 0.1
    assert integ.step() == 0.1 and integ.t == 0.1
    assert integ.step(3) == 4 * 0.1            # the grid t0 + k h, no accumulated sums
    np.testing.assert_allclose(integ.y, [rk4_factor(-0.1) ** 4], rtol=1e-15)
    assert integ.stats.naccepted == 4 and integ.stats.nfev == 16


def test_integrator_steps_backward_with_a_decreasing_span():
    integ = Integrator(ODEProblem(decay, (1.0, 0.0), [1.0], args=(1.0,)), "rk4", h=0.25, backend="python")
    assert integ.h == -0.25
    assert integ.step(2) == 0.5


def test_integrator_advance_to_lands_exactly_on_the_target():
    integ = Integrator(ODEProblem(decay, (0.0, 10.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    assert integ.advance_to(0.95) == 0.95 and integ.t == 0.95
    assert integ.stats.naccepted == 10      # nine whole steps and a shortened one
    last = 0.95 - 9 * 0.1
    np.testing.assert_allclose(integ.y, [rk4_factor(-0.1) ** 9 * rk4_factor(-last)], rtol=1e-14)
    assert integ.advance_to(0.95) == 0.95 and integ.stats.naccepted == 10   # already there: no step
    with pytest.raises(ValueError, match=r"not behind the current time"):
        integ.advance_to(0.5)


def test_integrator_thrust_impulse_changes_a_free_particle_as_predicted():
    prob = SecondOrderProblem(free, (0.0, 10.0), [0.0, 1.0], [1.0, 0.0], velocity_dependent=False)
    for name, kw in [("velocity_verlet", dict(h=0.1)), ("rk4", dict(h=0.1)), ("symplectic_euler", dict(h=0.1)),
                     ("leapfrog", dict(h=0.1)), ("forest_ruth", dict(h=0.1)), ("dp54", {}),
                     ("backward_euler", dict(h=0.1))]:
        integ = Integrator(prob, name, backend="python", **kw)
        integ.advance_to(1.0)
        np.testing.assert_allclose(integ.x, [1.0, 1.0], rtol=0, atol=1e-13, err_msg=name)
        integ.v = [0.0, 3.0]                      # the thrust: a write
        np.testing.assert_array_equal(integ.v, [0.0, 3.0])
        integ.advance_to(2.5)
        # x = x(1) + v_new (t - 1), exact for every method on x'' = 0
        np.testing.assert_allclose(integ.x, [1.0, 1.0 + 3.0 * 1.5], rtol=0, atol=1e-12, err_msg=name)
        np.testing.assert_array_equal(integ.v, [0.0, 3.0], err_msg=name)


@pytest.mark.parametrize("name, h", [("velocity_verlet", 0.1), ("leapfrog", 0.1), ("dp54", 0.1),
                                     ("forest_ruth", 0.1)])
def test_writing_the_state_discards_remembered_derivatives(name, h):
    # after a write, the run must continue exactly like a fresh run from the written state
    prob = SecondOrderProblem(spring, (0.0, 10.0), [1.0], [0.0], velocity_dependent=False)
    integ = Integrator(prob, name, h=h, backend="python")
    integ.step()
    integ.x = [0.25]
    v_now = integ.v.copy()
    integ.step(2)
    fresh = Integrator(SecondOrderProblem(spring, (h, 10.0), [0.25], v_now, velocity_dependent=False), name,
                       h=h, backend="python")
    fresh.step(2)
    np.testing.assert_allclose(integ.y, fresh.y, rtol=1e-15, atol=1e-16)


def test_integrator_state_views_are_read_only():
    integ = Integrator(ODEProblem(decay, (0.0, 1.0), [1.0, 2.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    with pytest.raises(ValueError, match=r"read-only"):
        integ.y[0] = 5.0
    np.testing.assert_array_equal(integ.y, [1.0, 2.0])
    integ.y = [3.0, 4.0]
    np.testing.assert_array_equal(integ.y, [3.0, 4.0])
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        integ.y = [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"y must be finite"):
        integ.y = [np.nan, 1.0]
    with pytest.raises(AttributeError, match=r"SecondOrderProblem"):
        integ.x
    mech = Integrator(SecondOrderProblem(spring, (0.0, 1.0), [1.0], [0.0], velocity_dependent=False),
                      "velocity_verlet", h=0.1, backend="python")
    with pytest.raises(ValueError, match=r"read-only"):
        mech.v[0] = 1.0
    with pytest.raises(ValueError, match=r"read-only"):
        mech.x[0] = 1.0


def test_setting_t_restarts_the_grid_there():
    integ = Integrator(ODEProblem(decay, (0.0, 10.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    integ.step(3)
    integ.t = 5.03
    assert integ.t == 5.03
    assert integ.step() == 5.03 + 0.1
    assert integ.step() == 5.03 + 2 * 0.1
    np.testing.assert_allclose(integ.y, [rk4_factor(-0.1) ** 5], rtol=1e-14)
    with pytest.raises(ValueError, match=r"t must be finite"):
        integ.t = math.nan


def test_integration_error_keeps_the_state_of_the_last_good_step():
    integ = Integrator(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="python")
    with pytest.raises(IntegrationError, match=r"non-finite") as info:
        integ.step(10)
    assert info.value.status == Status.NONFINITE
    assert integ.t == 0.5
    np.testing.assert_allclose(integ.y, np.array([1.0, 2.0]) * rk4_factor(-0.1) ** 5, rtol=1e-14)
    assert integ.stats.naccepted == 5


def test_record_steps_returns_every_step_and_on_failure_the_steps_before_it():
    prob = odekit.problems.kepler(e=0.5)
    integ = Integrator(prob, "velocity_verlet", h=0.01)
    integ.step(7)
    t, y = integ.record_steps(40)
    assert t.shape == (41,) and y.shape == (41, 2, 2)
    np.testing.assert_allclose(t, 0.07 + 0.01 * np.arange(41), rtol=1e-13)
    assert integ.t == t[-1] and np.array_equal(integ.y, y[-1])
    one = Integrator(prob, "velocity_verlet", h=0.01)
    one.step(7)
    for k in range(1, 41):                      # the same as one step at a time, bit for bit
        one.step()
        assert np.array_equal(one.y, y[k])

    failing = Integrator(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="python")
    with pytest.raises(IntegrationError, match=r"non-finite") as info:
        failing.record_steps(10)
    assert info.value.t.shape == (6,) and info.value.t[-1] == failing.t == 0.5
    np.testing.assert_allclose(info.value.y[-1], np.array([1.0, 2.0]) * rk4_factor(-0.1) ** 5, rtol=1e-14)


def test_integration_error_from_a_raising_function_chains_the_exception():
    def fun(t, y):
        if t > 0.25:
            raise ZeroDivisionError("no")
        return -y

    integ = Integrator(ODEProblem(fun, (0.0, 1.0), [1.0]), "rk4", h=0.1, backend="python")
    with pytest.raises(IntegrationError, match=r"ZeroDivisionError") as info:
        integ.advance_to(1.0)
    assert info.value.status == Status.FUNCTION_ERROR
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert integ.t == 0.2


# --- the registry ----------------------------------------------------------------------

@pytest.mark.parametrize("alias, name", [("semi_implicit_euler", "symplectic_euler"), ("RK45", "dp54"),
                                         ("rk45", "dp54"), ("Rk45", "dp54"), ("ode45", "dp54"),
                                         ("RK23", "bs32"), ("forward_euler", "euler"),
                                         ("explicit_euler", "euler"), ("Velocity-Verlet", "velocity_verlet"),
                                         ("crank_nicolson", "trapezoid"), ("implicit_euler", "backward_euler"),
                                         ("  dp54 ", "dp54")])
def test_method_lookup_by_alias(alias, name):
    m = odekit.method(alias)
    assert m.name == name
    assert m is odekit.method(name)
    assert odekit.method(m) is m


def test_every_method_of_the_issue_is_registered():
    names = odekit.methods().names()
    assert set(ISSUE_METHODS) <= set(names)
    assert len(names) == len(set(names))


def test_methods_prints_a_table_with_one_row_per_method():
    table = odekit.methods()
    text = str(table)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["name", "family", "order"]
    rows = [line.split()[0] for line in lines[2:]]
    assert rows == [m.name for m in table]
    assert set(ISSUE_METHODS) <= set(rows)
    assert repr(table) == text
    for m in table:
        for alias in m.aliases:
            assert re.search(rf"\b{re.escape(alias)}\b", text)


def test_methods_by_family():
    splitting = odekit.methods("splitting")
    assert {m.name for m in splitting} == {"symplectic_euler", "symplectic_euler_b", "velocity_verlet",
                                           "position_verlet", "leapfrog", "forest_ruth", "pefrl", "yoshida6"}
    with pytest.raises(ValueError, match=r"family must be one of"):
        odekit.methods("multistep_typo")


# --- invariants ------------------------------------------------------------------------

def test_invariants_are_evaluated_along_the_trajectory():
    w = 2.0
    prob = SecondOrderProblem(
        oscillator, (0.0, 1.0), [1.0], [0.5], args=(w,), velocity_dependent=False,
        invariants={"energy": lambda t, x, v: 0.5 * float(v @ v) + 0.5 * w * w * float(x @ x),
                    "time": lambda t, x, v: t,
                    "position": lambda t, x, v: float(x[0])})
    sol = solve(prob, "velocity_verlet", h=0.1, backend="python")
    inv = sol.invariants()
    assert set(inv) == {"energy", "time", "position"}
    for values in inv.values():
        assert values.shape == (len(sol.t),)
    assert inv["energy"][0] == 0.5 * 0.25 + 0.5 * 4.0
    np.testing.assert_array_equal(inv["time"], sol.t)
    np.testing.assert_array_equal(inv["position"], sol.x[:, 0])
    # Verlet keeps the energy within O(h^2) of its start on the oscillator
    assert np.max(np.abs(inv["energy"] - inv["energy"][0])) < 0.05 * inv["energy"][0]
    assert set(sol.invariants("time")) == {"time"}
    with pytest.raises(KeyError, match=r"unknown invariant"):
        sol.invariants("momentum")


def test_invariants_of_a_first_order_problem_take_t_and_y():
    prob = ODEProblem(decay, (0.0, 1.0), [3.0, 4.0], args=(1.0,),
                      invariants={"norm2": lambda t, y: float(y @ y)})
    sol = solve(prob, "rk4", h=0.25, backend="python")
    norm2 = sol.invariants()["norm2"]
    assert norm2.shape == (5,)
    assert norm2[0] == 25.0
    np.testing.assert_allclose(norm2, 25.0 * rk4_factor(-0.25) ** (2 * np.arange(5)), rtol=1e-14)


def test_kepler_invariants_start_at_their_exact_values():
    prob = odekit.problems.kepler(e=0.5, orbits=0.1)
    sol = solve(prob, "velocity_verlet", h=0.01, backend="python")
    inv = sol.invariants()
    assert len(inv["energy"]) == len(sol.t)
    assert inv["energy"][0] == pytest.approx(-0.5, rel=1e-15)
    assert inv["angular_momentum"][0] == pytest.approx(math.sqrt(1 - 0.25), rel=1e-15)


# --- the System protocol ---------------------------------------------------------------

class DecaySystem:
    """A model living in an object (Witkin & Baraff): y' = -0.7 y."""

    def __init__(self):
        self.state = np.array([1.0, 2.0])
        self.time = 0.0
        self.derivatives = 0

    def dim(self):
        return 2

    def get_state(self):
        return self.state.copy()

    def set_state(self, y):
        self.state = np.array(y, dtype=float)

    def get_time(self):
        return self.time

    def set_time(self, t):
        self.time = t

    def derivative(self):
        self.derivatives += 1
        return -0.7 * self.state


def test_from_system_integrates_exactly_like_the_equivalent_function():
    model = DecaySystem()
    assert isinstance(model, odekit.System)
    prob = ODEProblem.from_system(model, 1.0)
    assert prob.t_span == (0.0, 1.0) and prob.name == "DecaySystem"
    a = solve(prob, "rk4", h=0.1, backend="python")
    b = solve(ODEProblem(decay, (0.0, 1.0), [1.0, 2.0], args=(0.7,)), "rk4", h=0.1, backend="python")
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.stats == b.stats
    # every counted evaluation went through the object; so did the stiffness check before the
    # fixed-step run, one uncounted evaluation per Jacobian-vector product
    assert model.derivatives == a.stats.nfev + odekit.analysis.stiffness(b.problem).products


def test_from_system_refuses_an_object_without_the_protocol():
    class Half:
        def dim(self):
            return 1

        def get_state(self):
            return [0.0]

    with pytest.raises(TypeError, match=r"missing: set_state, get_time, set_time, derivative"):
        ODEProblem.from_system(Half(), 1.0)


# --- the two backends ------------------------------------------------------------------

def _agree(a, b, rel=1e-13):
    assert a.backend == "numba" and b.backend == "python"
    assert a.status == b.status == Status.SUCCESS
    np.testing.assert_array_equal(a.t, b.t)
    scale = np.max(np.abs(b.y))
    assert np.max(np.abs(a.y - b.y)) <= rel * scale
    assert a.stats == b.stats


@pytest.mark.parametrize("name, prob, h", [
    ("rk4", ODEProblem(pendulum, (0.0, 3.0), [1.0, 0.0], args=(0.7,)), 0.05),
    ("dp54", ODEProblem(pendulum, (0.0, 3.0), [1.0, 0.0], args=(0.7,)), 0.05),
    ("velocity_verlet", SecondOrderProblem(oscillator, (0.0, 3.0), [1.0, 0.5], [0.0, 0.2], args=(2.0,),
                                           velocity_dependent=False), 0.05),
    ("backward_euler", ODEProblem(stiff_pair, (0.0, 1.0), [1.0, 0.0]), 0.05),
], ids=["rk4", "dp54-fixed", "velocity_verlet", "backward_euler"])
def test_compiled_and_python_backends_give_the_same_numbers(name, prob, h):
    a = solve(prob, name, h=h, backend="numba")
    b = solve(prob, name, h=h, backend="python")
    _agree(a, b)


@pytest.mark.parametrize("name", odekit.methods().names())
def test_every_method_gives_the_same_numbers_on_both_backends(name):
    """Registry-driven: every family's kernel, compiled and as Python (implicit ones solve with
    different LU codes, so they agree to round-off rather than to the last bit)."""
    prob = SecondOrderProblem(oscillator, (0.0, 2.0), [1.0, 0.5], [0.0, 0.2], args=(2.0,),
                              velocity_dependent=False)
    a = solve(prob, name, h=0.05, backend="numba")
    b = solve(prob, name, h=0.05, backend="python")
    _agree(a, b, rel=1e-11 if odekit.method(name).implicit else 1e-13)


@pytest.mark.parametrize("name, options", [
    ("rk4", dict(adaptive="doubling")),
    ("leapfrog", dict(adaptive="doubling")),
    ("trapezoid", dict(adaptive="doubling")),
    ("dp54", dict(t_eval=np.linspace(0.0, 3.0, 7), dense_output=True)),
    ("rk4", dict(h=0.1, t_eval=np.linspace(0.0, 3.0, 7), dense_output=True)),
], ids=["rk4-doubling", "leapfrog-doubling", "trapezoid-doubling", "dp54-teval-dense", "rk4-teval-dense"])
def test_both_backends_agree_on_step_doubling_and_recorded_output(name, options):
    prob = SecondOrderProblem(oscillator, (0.0, 3.0), [1.0, 0.5], [0.0, 0.2], args=(2.0,),
                              velocity_dependent=False)
    a = solve(prob, name, backend="numba", **options)
    b = solve(prob, name, backend="python", **options)
    _agree(a, b, rel=1e-11 if odekit.method(name).implicit else 1e-13)
    if options.get("dense_output"):
        t = np.linspace(0.0, 3.0, 31)
        np.testing.assert_allclose(a.sol(t), b.sol(t), rtol=0, atol=1e-13)


def test_compiled_and_python_backends_give_the_same_numbers_adaptive_dp54():
    prob = ODEProblem(pendulum, (0.0, 3.0), [1.0, 0.0], args=(0.7,))
    a = solve(prob, "dp54", backend="numba")
    b = solve(prob, "dp54", backend="python")
    _agree(a, b)


def test_auto_backend_compiles_a_compilable_function():
    sol = solve(ODEProblem(pendulum, (0.0, 1.0), [1.0, 0.0], args=(0.7,)), "rk4", h=0.05, backend="auto")
    assert sol.backend == "numba" and sol.backend_reason == ""


def test_uncompilable_function_falls_back_to_python_with_a_warning():
    prob = ODEProblem(dict_decay, (0.0, 1.0), [1.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = solve(prob, "rk4", h=0.1, backend="auto")
    fallbacks = [w for w in caught if issubclass(w.category, BackendFallbackWarning)]
    assert len(fallbacks) == 1                              # says why, once
    assert fallbacks[0].filename == __file__                # points at the caller's line
    assert sol.backend == "python"
    assert sol.backend_reason != ""
    assert sol.backend_reason in str(fallbacks[0].message)
    assert sol.success
    np.testing.assert_allclose(sol.y[-1], np.array([1.0, 2.0]) * rk4_factor(-0.07) ** 10, rtol=1e-14)
    with pytest.warns(BackendFallbackWarning) as direct:    # and from the Integrator, one frame less deep
        odekit.Integrator(ODEProblem(dict_decay, (0.0, 1.0), [1.0, 3.0]), "rk4", h=0.1, backend="auto")
    assert direct[0].filename == __file__


def test_fallback_reason_says_why():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BackendFallbackWarning)
        sol = solve(ODEProblem(dict_decay, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="auto")
    assert "_RATES" in sol.backend_reason or "dict" in sol.backend_reason, sol.backend_reason


def test_uncompilable_function_with_backend_numba_raises():
    from numba.core.errors import NumbaError

    with warnings.catch_warnings():
        warnings.simplefilter("error", BackendFallbackWarning)    # no silent fallback either
        with pytest.raises(NumbaError, match=r"_RATES"):
            solve(ODEProblem(dict_decay, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="numba")


def test_python_backend_reports_python_and_no_reason():
    sol = solve(ODEProblem(pendulum, (0.0, 1.0), [1.0, 0.0], args=(0.7,)), "rk4", h=0.05, backend="python")
    assert sol.backend == "python" and sol.backend_reason == ""
    assert Integrator(ODEProblem(pendulum, (0.0, 1.0), [1.0, 0.0], args=(0.7,)), "rk4", h=0.05,
                      backend="python").backend == "python"


# --- the user's Jacobian ------------------------------------------------------------------

STIFF_A = np.array([[-1.0, 2.0], [0.0, -50.0]])


def linear_stiff(t, y):
    return STIFF_A @ y


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_the_users_jacobian_replaces_finite_differences(backend):
    def run(jac):
        return solve(ODEProblem(linear_stiff, (0.0, 1.0), [1.0, 1.0], jac=jac), "backward_euler", h=0.1,
                     backend=backend)

    by_differences, given, constant = run(None), run(lambda t, y: STIFF_A), run(STIFF_A)
    # the same Newton iterates (the problem is linear, both Jacobians exact to round-off), and
    # the same Jacobians (reused from step to step), but no difference columns: n = 2 evaluations
    # fewer per Jacobian
    assert given.stats.njev == constant.stats.njev == by_differences.stats.njev >= 1
    assert given.stats.nfev == constant.stats.nfev == by_differences.stats.nfev - 2 * given.stats.njev
    np.testing.assert_allclose(given.y, by_differences.y, rtol=1e-9)
    # and it is really used: a zero "Jacobian" turns Newton into a fixed-point iteration, which
    # diverges at h * 50 = 5 and stops the fixed-step run
    wrong = run(lambda t, y: np.zeros((2, 2)))
    assert wrong.status == Status.NEWTON_FAILED
