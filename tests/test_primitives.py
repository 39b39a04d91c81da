"""The kernels' primitives: each compiled loop gives the numbers of its NumPy body, bit for bit."""

import numba
import numpy as np
import pytest

import odekit.kernels.jit  # noqa: F401  (gives the primitives their compiled loops)
from odekit.kernels.primitives import combine


@numba.njit(cache=False)
def _combine_compiled(W, out, base, h, C, row, first, m):
    combine(W, out, base, h, C, row, first, m)


@pytest.mark.parametrize("n", range(1, 10))
def test_combine_compiled_sums_each_component_in_the_numpy_bodys_order(n):
    """The compiled combine sums four components at a time (n = 1..9: whole blocks, and the last block's
    lanes clamped onto the last component), each term by term as the NumPy body: the same bits, also when
    the result overwrites its base row and when an error estimate leaves the base out."""
    rng = np.random.default_rng(n)
    C = rng.standard_normal((3, 6))
    for m in range(6):
        for out, base in ((0, 1), (1, 1), (0, -1)):
            W = rng.standard_normal((9, n)) * 10.0 ** rng.integers(-8, 8, size=(9, n))
            expected, got = W.copy(), W.copy()
            combine(expected, out, base, 0.37, C, 2, 3, m)
            _combine_compiled(got, out, base, 0.37, C, 2, 3, m)
            assert np.array_equal(got, expected), (m, out, base)
            assert np.array_equal(got[2:], W[2:])          # the stages are read, never written


def test_combine_compiled_shows_an_inf_in_a_stage_of_zero_weight():
    """Zero weights are multiplied, not skipped: an inf in any stage reaches the result as nan."""
    W = np.ones((6, 5))
    W[3, 4] = np.inf
    C = np.array([[1.0, 0.0, 2.0]])
    _combine_compiled(W, 0, 1, 0.5, C, 0, 2, 3)
    assert np.isnan(W[0, 4]) and np.all(np.isfinite(W[0, :4]))
