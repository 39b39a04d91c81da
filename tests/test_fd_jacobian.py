"""Finite-difference Jacobians on components far below 1: Robertson to t = 1e11 (issue #17).

Most users give no Jacobian.  With RADAU5's increment ``sqrt(eps max(1e-5,
|y|))`` the late state's ``y2 ~ 1e-13`` was stepped by 4.7e-11, the column
of ``2 k2 y2`` came out 280 times too large, and radau5 without a Jacobian
took 5.5 times the evaluations of the analytic run and ended 1e-3 off.
"""

import numpy as np
import pytest

import odekit
from odekit.kernels import layout
from odekit.kernels.evaluation import differences
from odekit.problems import robertson

RTOL, ATOL, T_END = 1e-6, 1e-10, 1e11


def without_jac(prob):
    return odekit.ODEProblem(prob.fun, prob.t_span, prob.y0, args=prob.args, name=prob.name, autonomous=True)


def error(y, ref):
    """``max_i |y_i - ref_i| / max(|ref_i|, atol)``, as benchmarks/bench_stiff.py measures."""
    return float(np.max(np.abs(y - ref) / np.maximum(np.abs(ref), ATOL)))


@pytest.fixture(scope="module")
def reference():
    return odekit.solve(robertson(t_end=T_END), "radau5", rtol=1e-12, atol=1e-16, backend="python").y[-1]


def test_difference_columns_match_the_analytic_jacobian_at_a_late_state_with_tiny_components(reference):
    prob = robertson(t_end=T_END)
    y = reference                                    # y1 ~ 2e-8, y2 ~ 8e-14, y3 ~ 1
    rhs = odekit.backend._adapters(*odekit.backend._adapter_key(prob, False), "python", None, True)[0]
    W = np.zeros((5, 3))
    W[0] = y
    W[1] = prob.fun(T_END, y, *prob.args)
    J = np.zeros((3, 3))
    tol = np.array([np.full(3, RTOL), np.full(3, ATOL)])
    ist, fs = np.zeros(layout.IST_SIZE, dtype=np.int64), np.zeros(layout.FS_SIZE)
    assert differences(rhs, prob.args, False, tol, T_END, W, 0, 1, J, 2, 3, 4, ist, fs) == 0
    exact = np.asarray(prob.jac(T_END, y, *prob.args))
    # each column to 1e-6 of its largest entry, and the small entry 2 k2 y2 ~ 5e-6 (row 3 of
    # column 2; RADAU5's increment made it 1.4e-3) to 1e-3 of itself
    for j in range(3):
        np.testing.assert_allclose(J[:, j], exact[:, j], rtol=0, atol=1e-6 * np.abs(exact[:, j]).max())
    assert J[2, 1] == pytest.approx(exact[2, 1], rel=1e-3)


@pytest.mark.parametrize("name", ["radau5", "bdf"])
def test_without_a_jacobian_robertson_to_1e11_costs_and_errs_as_with_the_analytic_one(name, reference):
    prob = robertson(t_end=T_END)
    exact = odekit.solve(prob, name, rtol=RTOL, atol=ATOL, backend="python")
    diff = odekit.solve(without_jac(prob), name, rtol=RTOL, atol=ATOL, backend="python")
    assert exact.success and diff.success
    # the difference columns (3 evaluations a Jacobian) included, within 1.1x of the analytic run's
    # evaluations (RADAU5's increment: radau5 5.9x, bdf 1.6x)
    assert diff.stats.nfev <= 1.1 * (exact.stats.nfev + 3 * exact.stats.njev)
    assert diff.stats.nsteps <= 1.05 * exact.stats.nsteps
    # the same error as with the analytic Jacobian, to 10 % (RADAU5's increment: radau5 1.2e-3 against 9e-7)
    assert error(diff.y[-1], reference) <= 1.1 * error(exact.y[-1], reference)


def test_radau5_without_a_jacobian_reaches_the_reference_to_the_tolerance(reference):
    sol = odekit.solve(without_jac(robertson(t_end=T_END)), "radau5", rtol=RTOL, atol=ATOL, backend="python")
    # within 10 rtol in the benchmark's error (RADAU5's increment: 1.2e-3, a thousand times rtol)
    assert error(sol.y[-1], reference) < 10 * RTOL
