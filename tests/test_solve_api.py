"""solve and solve_ivp: the work they count, integration backward in time, and
solve_ivp as a mirror of solve with SciPy's method names.

Exact values come from closed forms: classic RK4 with step ``h`` on
``y' = -k y`` multiplies the state by ``R(-k h)`` per step (``rk4_factor``).
"""

import math

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, solve, solve_ivp

from conftest import decay_k, rk4_factor


def switched(t, y):
    """Relaxes to 0, then (from t = 1) to 50: the jump forces rejected steps."""
    if t < 1.0:
        return -y
    return 50.0 - y


# --- stats ----------------------------------------------------------------------------

def test_fixed_step_rk4_costs_exactly_four_evaluations_per_step():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0, 2.0], args=(1.0,)), "rk4", h=0.1, backend="python")
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


# --- backward integration -------------------------------------------------------------

def test_backward_integration_adaptive_recovers_the_initial_value():
    sol = solve(ODEProblem(decay_k, (1.0, 0.0), [math.exp(-1.0)], args=(1.0,)), "dp54", backend="python")
    assert sol.success
    assert sol.t[0] == 1.0 and sol.t[-1] == 0.0
    assert np.all(np.diff(sol.t) < 0)
    np.testing.assert_allclose(sol.y[:, 0], np.exp(-sol.t), rtol=1e-6)
    assert abs(sol.y[-1, 0] - 1.0) < 1e-7


def test_backward_integration_fixed_step_matches_the_closed_form():
    sol = solve(ODEProblem(decay_k, (1.0, 0.0), [math.exp(-1.0)], args=(1.0,)), "rk4", h=0.1, backend="python")
    np.testing.assert_allclose(sol.t, 1.0 - 0.1 * np.arange(11), rtol=0, atol=1e-15)
    # h = -0.1 on y' = -y: each step multiplies by R(+0.1)
    np.testing.assert_allclose(sol.y[:, 0], math.exp(-1.0) * rk4_factor(0.1) ** np.arange(11), rtol=1e-14)


def test_backward_integration_with_t_eval_and_dense_output():
    sol = solve(ODEProblem(decay_k, (1.0, 0.0), [math.exp(-1.0)], args=(1.0,)), "dp54",
                t_eval=[1.0, 0.6, 0.2, 0.0], dense_output=True, backend="python")
    np.testing.assert_array_equal(sol.t, [1.0, 0.6, 0.2, 0.0])
    np.testing.assert_allclose(sol.y[:, 0], np.exp(-sol.t), rtol=1e-6)
    np.testing.assert_allclose(sol(0.45), [math.exp(-0.45)], rtol=1e-6)


# --- solve_ivp ------------------------------------------------------------------------

def test_solve_ivp_mirrors_solve():
    a = solve_ivp(decay_k, (0.0, 2.0), [1.0, 2.0], "rk4", args=(0.7,), h=0.1, backend="python")
    b = solve(ODEProblem(decay_k, (0.0, 2.0), [1.0, 2.0], args=(0.7,)), "rk4", h=0.1, backend="python")
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.stats == b.stats and a.status == b.status and a.method is b.method


def test_solve_ivp_passes_the_options_and_accepts_scipy_names():
    kw = dict(args=(0.7,), rtol=1e-8, t_eval=[0.5, 1.5], dense_output=True, backend="python")
    a = solve_ivp(decay_k, (0.0, 2.0), [1.0, 2.0], "RK45", **kw)
    kw.pop("args")
    b = solve(ODEProblem(decay_k, (0.0, 2.0), [1.0, 2.0], args=(0.7,)), "dp54", **kw)
    assert a.method.name == "dp54"
    np.testing.assert_array_equal(a.t, [0.5, 1.5])
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a(1.0), b(1.0))
    assert a.stats == b.stats
    assert solve_ivp(decay_k, (0.0, 1.0), [1.0], "RK23", args=(1.0,), backend="python").method.name == "bs32"
