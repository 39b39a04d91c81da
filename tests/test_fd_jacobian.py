"""Finite-difference Jacobians on components far below 1: Robertson to t = 1e11 (issue #17).

Most users give no Jacobian.  With RADAU5's increment ``sqrt(eps max(1e-5,
|y|))`` the late state's ``y2 ~ 1e-13`` was stepped by 4.7e-11, the column
of ``2 k2 y2`` came out 280 times too large, and radau5 without a Jacobian
took 5.5 times the evaluations of the analytic run and ended 1e-3 off.
"""

import numba
import numpy as np
import pytest
from scipy import sparse

import odekit
import odekit.kernels.jit  # noqa: F401  (gives two_thirds_power its compiled loop)
from odekit.kernels import layout
from odekit.kernels.evaluation import CBRT_EPS, differences, increment
from odekit.problems import robertson
from odekit.sparse import SparseJacobian

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


def pulled_and_trace(t, y):
    """A component at 0 pulled by a force of 50, and a trace species ``y1`` ~ 1e-13 decaying as ``3e7 y1^2``."""
    return np.array([-50.0 * (y[0] - 1.0), -3e7 * y[1] ** 2])


def columns(fun, y, atol, pattern=None):
    """The forward difference Jacobian of ``fun`` at ``y`` (dense, or grouped by ``pattern``), and its evaluations."""
    n = y.size
    rhs = odekit.backend._adapters(*odekit.backend._adapter_key(odekit.ODEProblem(fun, (0.0, 1.0), y), False),
                                   "python", None, True)[0]
    W = np.zeros((5, n))
    W[0] = y
    W[1] = fun(0.0, y)
    J = np.zeros((n, n)) if pattern is None else SparseJacobian(n, float, pattern)
    tol = np.array([np.full(n, RTOL), np.full(n, atol)])
    ist, fs = np.zeros(layout.IST_SIZE, dtype=np.int64), np.zeros(layout.FS_SIZE)
    assert differences(rhs, (), False, tol, 0.0, W, 0, 1, J, 2, 3, 4, ist, fs) == 0
    return (J if pattern is None else J.matrix.toarray()), ist[layout.NFEV]


@pytest.mark.parametrize("pattern", [None, "diagonal"])
def test_a_column_lost_in_rounding_is_taken_again_wider_while_a_trace_species_keeps_its_own_step(pattern):
    y = np.array([0.0, 1e-13])
    exact = np.diag([-50.0, -6e7 * y[1]])
    J, nfev = columns(pulled_and_trace, y, 1e-9, None if pattern is None else sparse.csc_matrix(np.eye(2)))
    # y0's step sqrt(eps) atol = 1.5e-17 moves f0 = 50 by 7.5e-16, below its rounding: the column came out
    # 0 and Newton failed at the first step; taken again with 4.7e-11 it is -50 to rounding/4.7e-11, 5e-6
    # of itself.  y1's step 1.5e-17 keeps 2 k y1 = 6e-6 to 1e-4 (RADAU5's 4.7e-11 for both made it 1.4e-3)
    np.testing.assert_allclose(np.diag(J), np.diag(exact), rtol=1e-4)
    assert J[0, 1] == J[1, 0] == 0.0
    # one evaluation a column (both columns in one group, sparse) and one more for the lost column
    assert nfev == (3 if pattern is None else 2)


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


@numba.njit(cache=False)
def _central_increment_compiled(x):
    return increment(x, True)


def test_a_central_increment_is_eps_to_a_third_times_a_power_of_two_near_the_scale_to_two_thirds():
    """Central differences step by eps^(1/3) |x|^(2/3), the power taken as a power of two (no call of pow):
    within 2^(2/3) of the balance of truncation and rounding, from the floor of 1e-5 to 1e300, and the same
    step compiled and in NumPy, for a number or elementwise."""
    x = np.concatenate([-np.logspace(-12, 300, 700), np.logspace(-12, 300, 700), [0.0, 0.5, 1.0, 2.0]])
    steps = increment(x, True)
    exact = CBRT_EPS * np.maximum(1e-5, np.abs(x)) ** (2.0 / 3.0)
    ratio = steps / exact
    assert np.all(ratio >= 2.0 ** (-2 / 3) * (1 - 1e-12)) and np.all(ratio <= 2.0 ** (2 / 3) * (1 + 1e-12))
    assert ratio.min() < 0.64 and ratio.max() > 1.57        # the bound is reached: a power of two, not the power
    mantissa, _ = np.frexp(steps / CBRT_EPS)
    assert np.all(mantissa == 0.5)
    assert np.array_equal([_central_increment_compiled(v) for v in x], steps)
    assert all(increment(v, True) == s for v, s in zip(x, steps))
