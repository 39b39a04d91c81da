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


E5_RATES = (7.89e-10, 1.1e7, 1.13e3, 1e6)   # A, B, C, M of the Bari test set's E5 (stiff DETEST E5)


def e5(t, y):
    A, B, C, M = E5_RATES
    return np.array([-A * y[0] - B * y[0] * y[2],
                     A * y[0] - M * C * y[1] * y[2],
                     A * y[0] - M * C * y[1] * y[2] - B * y[0] * y[2] + C * y[3],
                     B * y[0] * y[2] - C * y[3]])


def e5_jac(t, y):
    A, B, C, M = E5_RATES
    return np.array([[-A - B * y[2], 0.0, -B * y[0], 0.0],
                     [A, -M * C * y[2], -M * C * y[1], 0.0],
                     [A - B * y[2], -M * C * y[2], -M * C * y[1] - B * y[0], C],
                     [B * y[2], 0.0, B * y[0], -C]])


E5_Y0 = [1.76e-3, 0.0, 0.0, 0.0]
E5_ATOL = 1.7e-24


@pytest.mark.parametrize("rtol", [1e-3, 1e-6])
def test_rodas4_solves_e5_to_its_tolerance_while_e5_is_well_conditioned(rtol):
    """To t = 1e6 (y2, y3 ~ 2e-13) rodas4 with the exact Jacobian errs by 0.06 and 0.01 tolerance
    units (radau5: 0.003, 0.02), and keeps the linear invariant y2 - y3 - y4 = 0 to rounding."""
    from scipy.integrate import solve_ivp

    ref = solve_ivp(e5, (0.0, 1e6), E5_Y0, method="Radau", rtol=1e-12, atol=1e-32, jac=e5_jac).y[:, -1]
    sol = odekit.solve(odekit.ODEProblem(e5, (0.0, 1e6), E5_Y0, jac=e5_jac), "rodas4", rtol=rtol, atol=E5_ATOL,
                       backend="python")
    assert np.max(np.abs(sol.y[-1] - ref) / (E5_ATOL + rtol * np.abs(ref))) < 0.1
    assert abs(sol.y[-1, 1] - sol.y[-1, 2] - sol.y[-1, 3]) < 1e-19


@pytest.mark.parametrize("name", ["rodas4", "radau5", "bdf"])
def test_e5_at_t_1e13_is_decided_by_rounding(name):
    """Bari's E5 to t = 1e13 asks for y2 = 8.87e-23, y3 = 8.85e-23 at atol 1.7e-24.  There y2 and y3
    decay as 1/(M C t) only while y2 - y3 - y4 = 0 holds to far below 1e-22; rounding of terms up to
    1e-7 breaks it by 1e-22 .. 1e-20 in any double-precision run (SciPy's Radau at rtol 1e-12 too),
    and whichever of y2, y3 is ahead survives.  So a change of y2(0) by 1e-22 -- below the rounding
    of y1(0) = 1.76e-3 -- changes the end state by more than the answer: every method is 50 to
    16,000 tolerance units off there, rodas4 no more than radau5 and bdf."""
    ends = []
    for y2 in (0.0, 1e-22):
        prob = odekit.ODEProblem(e5, (0.0, 1e13), [1.76e-3, y2, 0.0, 0.0], jac=e5_jac)
        sol = odekit.solve(prob, name, rtol=1e-6, atol=E5_ATOL, backend="python")
        assert sol.success, sol.message
        ends.append(sol.y[-1])
    assert np.max(np.abs(ends[1][1:3] - ends[0][1:3])) > 1e-22
