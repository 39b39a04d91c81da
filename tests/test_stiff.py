"""Stiff solvers on the standard stiff problems, against SciPy's and against conservation laws."""

import numpy as np
import pytest

import odekit

STIFF_ADAPTIVE = ["radau5", "kencarp4", "trbdf2", "rodas4", "bdf", "ndf"]


@pytest.mark.parametrize("name", STIFF_ADAPTIVE)
def test_robertson_keeps_its_mass_to_1e11(name):
    """y1 + y2 + y3 = 1 is linear, so every Runge-Kutta, Rosenbrock and BDF method keeps it up to
    Newton's and round-off error -- over 11 decades of time and rate constants 4e-2 .. 3e7."""
    prob = odekit.problems.robertson().with_span((0.0, 1e11))
    sol = odekit.solve(prob, name, rtol=1e-6, atol=1e-10)
    assert sol.success, sol.message
    assert np.max(np.abs(sol.y.sum(axis=1) - 1.0)) < 1e-10
    assert sol.y[-1, 2] > 0.9999999                      # nearly all converted by t = 1e11
    assert sol.stats.naccepted < 2000


def test_van_der_pol_mu_1000_takes_scipy_radaus_number_of_steps():
    """The same method, the same tolerance: within a factor of 2 of SciPy's Radau in steps."""
    from scipy.integrate import solve_ivp

    prob = odekit.problems.van_der_pol(mu=1000).with_span((0.0, 3000.0))
    sol = odekit.solve(prob, "radau5", rtol=1e-6, atol=1e-6)
    ref = solve_ivp(prob.fun, prob.t_span, prob.y0, method="Radau", rtol=1e-6, atol=1e-6, args=prob.args)
    assert sol.success and ref.success
    ratio = sol.stats.naccepted / (len(ref.t) - 1)
    assert 0.5 <= ratio <= 2.0, ratio
    np.testing.assert_allclose(sol.y[-1], ref.y[:, -1], rtol=1e-3)


@pytest.mark.parametrize("name", STIFF_ADAPTIVE)
def test_results_agree_with_scipy_at_tight_tolerance(name):
    from scipy.integrate import solve_ivp

    prob = odekit.problems.robertson().with_span((0.0, 1e3))
    ref = solve_ivp(prob.fun, prob.t_span, prob.y0, method="Radau", rtol=1e-11, atol=1e-16, args=prob.args)
    sol = odekit.solve(prob, name, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(sol.y[-1], ref.y[:, -1], rtol=1e-6)


@pytest.mark.parametrize("name", ["radau5", "kencarp4", "bdf", "rodas4"])
def test_an_explicit_method_starves_where_the_stiff_one_strides(name):
    """Robertson to t = 40: dp54 needs thousands of steps at its stability limit, the stiff
    solvers tens to hundreds."""
    prob = odekit.problems.robertson()
    stiff = odekit.solve(prob, name, rtol=1e-6, atol=1e-10)
    explicit = odekit.solve(prob, "dp54", rtol=1e-6, atol=1e-10)
    assert stiff.stats.naccepted * 10 < explicit.stats.naccepted


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_an_autonomous_problem_spares_rodas4_two_evaluations_a_step(backend):
    # the zoo's Robertson is declared autonomous; the same functions undeclared pay for df/dt,
    # which is exactly zero here: the same steps and states, bit for bit
    prob = odekit.problems.robertson().with_span((0.0, 100.0))
    undeclared = odekit.ODEProblem(prob.fun, prob.t_span, prob.y0, args=prob.args, jac=prob.jac)
    a = odekit.solve(prob, "rodas4", rtol=1e-6, atol=1e-10, backend=backend)
    b = odekit.solve(undeclared, "rodas4", rtol=1e-6, atol=1e-10, backend=backend)
    assert a.stats.nsteps == b.stats.nsteps > 50
    assert b.stats.nfev - a.stats.nfev == 2 * a.stats.nsteps
    np.testing.assert_array_equal(a.y, b.y)


def test_a_retried_step_differences_its_jacobian_against_f_at_its_own_start():
    """Implicit midpoint has no explicit first stage and evaluates f(t, y) only for a new
    finite-difference Jacobian; it claimed f there after every step, so a rejected step retook
    its Jacobian against an f of some earlier state: on Robertson 786 rejections and 25,599
    evaluations, now a handful and a few hundred."""
    prob = odekit.problems.robertson()
    undifferentiated = odekit.ODEProblem(prob.fun, prob.t_span, prob.y0, args=prob.args)
    sol = odekit.solve(undifferentiated, "implicit_midpoint", adaptive="doubling", rtol=1e-4, atol=1e-8,
                       backend="python")
    assert sol.success, sol.message
    assert sol.stats.nrejected <= 5 and sol.stats.nfev < 1000, sol.stats
    assert np.max(np.abs(sol.y.sum(axis=1) - 1.0)) < 1e-10
