"""Output between the steps: ``t_eval`` (values at requested times) and dense
output (``sol(t)``) -- their accuracy, what they cost, and their errors.

Bounds come from closed forms: on ``y' = -y`` a cubic Hermite interpolant
errs by at most its node errors (weighted by ``1 + 8h/27``) plus
``h^4/384 max|y^(4)|``; classic RK4 multiplies the state by ``R(-h)`` per step.
"""

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, solve

from conftest import decay_k, rk4_factor


# --- t_eval ---------------------------------------------------------------------------

def test_t_eval_times_are_returned_exactly_and_values_match_the_exact_solution():
    t_eval = np.array([0.0, 0.1234, 1 / 3, 0.5, 0.77777, 1.0])
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,)), "dp54", t_eval=t_eval, backend="python")
    assert sol.success
    np.testing.assert_array_equal(sol.t, t_eval)
    # dp54's own interpolant: error at the level of the tolerance (Hermite on these steps: ~6e-7)
    np.testing.assert_allclose(sol.y[:, 0], np.exp(-t_eval), rtol=0, atol=1e-7)


def test_t_eval_with_rk4_is_hermite_accurate():
    h = 0.1
    t_eval = np.arange(10) * h + h / 2          # midpoints of the steps
    prob = ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,))
    sol = solve(prob, "rk4", h=h, t_eval=t_eval, backend="python")
    np.testing.assert_array_equal(sol.t, t_eval)
    steps = solve(prob, "rk4", h=h, backend="python")
    node_error = np.max(np.abs(steps.y[:, 0] - np.exp(-steps.t)))
    # cubic Hermite through (y, f) at both ends: node errors (weighted by at most 1 + 8h/27
    # since f = -y) plus h^4/384 max|y''''|
    bound = node_error * (1 + 8 * h / 27) + h ** 4 / 384
    assert np.max(np.abs(sol.y[:, 0] - np.exp(-t_eval))) <= bound


def test_t_eval_not_starting_at_t0_returns_only_the_requested_times():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.1, t_eval=[0.5, 1.0],
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


# --- dense output ---------------------------------------------------------------------

def test_dense_output_of_dp54_uses_its_own_interpolant():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,)), "dp54", dense_output=True,
                backend="python")
    tt = np.linspace(0.0, 1.0, 1001)
    err = np.max(np.abs(sol(tt)[:, 0] - np.exp(-tt)))
    # the same steps interpolated by cubic Hermite err by ~6e-7, linearly by ~2e-3
    assert err < 1e-7
    np.testing.assert_allclose(sol(sol.t)[:, 0], sol.y[:, 0], rtol=1e-14)


def test_dense_output_of_rk4_is_cubic_hermite():
    h = 0.1
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=h, dense_output=True,
                backend="python")
    node_error = np.max(np.abs(sol.y[:, 0] - np.exp(-sol.t)))
    tt = np.linspace(0.0, 1.0, 1001)
    err = np.max(np.abs(sol(tt)[:, 0] - np.exp(-tt)))
    assert err <= node_error * (1 + 8 * h / 27) + h ** 4 / 384   # << h^3 = 1e-3
    np.testing.assert_allclose(sol(sol.t)[:, 0], sol.y[:, 0], rtol=1e-14)
    assert np.ndim(sol(0.5)) == 1 and sol(0.5).shape == (1,)


def test_dense_output_refuses_times_outside_the_span():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.1, dense_output=True,
                backend="python")
    with pytest.raises(ValueError, match=r"t must lie within the solved span"):
        sol(1.5)


def test_calling_a_solution_without_dense_output_raises_naming_dense_output():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    with pytest.raises(ValueError, match=r"dense_output=True"):
        sol(0.5)
