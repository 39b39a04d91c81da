"""The kernels' primitives: each compiled loop gives the numbers of its NumPy body, bit for bit."""

import numba
import numpy as np
import pytest

import odekit.kernels.jit  # noqa: F401  (gives the primitives their compiled loops)
from odekit.kernels import held, on_stack
from odekit.kernels.primitives import (INVERSE_UP_TO, add_to_two, axpy, combine, copy_scaled, error_norm,
                                      inverse_solve, lu_factor, lu_invert, lu_solve, scaled_less, scaled_norm)
from odekit.kernels.splitting import closing_kick, copy_velocity, drift, kick, kick_drift_into, kick_into


@numba.njit(cache=False)
def _combine_compiled(W, out, base, h, C, row, first, m):
    combine(W, out, base, h, C, row, first, m)


@pytest.mark.parametrize("n", range(1, 10))
def test_combine_compiled_sums_each_component_in_the_numpy_bodys_order(n):
    """The compiled combine sums four components at a time (n = 1..4: one block of constant columns; 5..9:
    whole blocks, and the last block's lanes clamped onto the last component), each term by term as the
    NumPy body: the same bits, also when the result overwrites its base row and when an error estimate
    leaves the base out."""
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


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_combine_compiled_shows_an_inf_in_a_stage_of_zero_weight(n):
    """Zero weights are multiplied, not skipped: an inf in any stage reaches the result as nan (in a block of
    constant columns and in the blocks of a larger system)."""
    W = np.ones((6, n))
    W[3, n - 1] = np.inf
    C = np.array([[1.0, 0.0, 2.0]])
    _combine_compiled(W, 0, 1, 0.5, C, 0, 2, 3)
    assert np.isnan(W[0, n - 1]) and np.all(np.isfinite(W[0, :n - 1]))


@numba.njit(cache=False)
def _kick_drift_into_compiled(W, dst, src, kick_by, arow, drift_by):
    kick_drift_into(W, dst, src, kick_by, arow, drift_by)


@numba.njit(cache=False)
def _closing_kick_compiled(W, row, kick_by, arow):
    return closing_kick(W, row, kick_by, arow)


@pytest.mark.parametrize("n", [1, 3, 18])
def test_the_fused_passes_of_a_splitting_step_give_the_separate_passes_numbers(n):
    """kick_drift_into is kick_into then drift, closing_kick is kick then copy_velocity (and says whether the
    row is finite): compiled and in NumPy, the same bits as the separate passes, also in place."""
    rng = np.random.default_rng(n)
    for dst, src in ((0, 1), (1, 1)):
        W = rng.standard_normal((4, 2 * n))
        separate = W.copy()
        if dst != src:
            kick_into(separate, dst, src, 0.37, 3)
        else:
            kick(separate, dst, 0.37, 3)
        drift(separate, dst, 1.3, dst)
        for fused_pass in (_kick_drift_into_compiled, kick_drift_into):
            fused = W.copy()
            fused_pass(fused, dst, src, 0.37, 3, 1.3)
            assert np.array_equal(fused, separate)
    W = rng.standard_normal((4, 2 * n))
    separate = W.copy()
    kick(separate, 0, 0.5, 2)
    copy_velocity(separate, 2, 0, 0)
    for closing in (_closing_kick_compiled, closing_kick):
        fused = W.copy()
        assert closing(fused, 0, 0.5, 2)
        assert np.array_equal(fused, separate)
    for overflowing in (0, n, 2 * n - 1):          # a position, the first velocity, the last
        for closing in (_closing_kick_compiled, closing_kick):
            fused = W.copy()
            fused[0, overflowing] = np.inf
            assert not closing(fused, 0, 0.5, 2)


@numba.njit(cache=False)
def _newton_passes_compiled(W, c, scale, tol):
    scaled_less(W, 0, c, 1, 2, 3)
    dn = scaled_norm(W, 0, scale, 4, tol)
    add_to_two(W, 5, 6, 0)
    return dn


def _newton_passes(W, c, scale, tol, separate):
    """bdf's Newton correction: ``dy = c f - psi - d`` in row 0, scaled, its norm, added to rows 5 and 6."""
    if not separate:
        scaled_less(W, 0, c, 1, 2, 3)
        dn = scaled_norm(W, 0, scale, 4, tol)
        add_to_two(W, 5, 6, 0)
        return dn
    copy_scaled(W, 0, c, W, 1)
    axpy(W, 0, -1.0, W, 2)
    axpy(W, 0, -1.0, W, 3)
    if scale != 1.0:
        copy_scaled(W, 0, scale, W, 0)
    dn = error_norm(W, 0, 4, 4, tol)
    axpy(W, 5, 1.0, W, 0)
    axpy(W, 6, 1.0, W, 0)
    return dn


@pytest.mark.parametrize("n", [1, 3, 8])
@pytest.mark.parametrize("scale", [1.0, 0.7])
def test_bdfs_fused_newton_passes_give_the_separate_passes_numbers(n, scale):
    """scaled_less, scaled_norm and add_to_two are copy_scaled, axpy and error_norm fused into three passes:
    the same numbers, bit for bit, compiled and in NumPy."""
    rng = np.random.default_rng(30 + n)
    tol = np.abs(rng.standard_normal((2, n))) * 1e-6
    for trial in range(10):
        W = rng.standard_normal((7, n)) * 10.0 ** rng.integers(-6, 6, size=(7, n))
        separate = W.copy()
        expected = _newton_passes(separate, 0.37, scale, tol, True)
        for fused_passes in (_newton_passes_compiled, lambda *a: _newton_passes(*a, False)):
            fused = W.copy()
            assert fused_passes(fused, 0.37, scale, tol) == expected, trial
            assert np.array_equal(fused, separate), trial


@numba.njit(cache=False)
def _lu_compiled(M, piv, W, row):
    ok = lu_factor(M, piv)
    lu_solve(M, piv, W, row)
    return ok


def _substitution(LU, piv, b):
    """The solve written out as the compiled loop sums it: pivots, forward, back -- each row's sum from the last
    unknown down -- with each unknown times the reciprocal of its pivot."""
    b = b.copy()
    n = b.size
    for k in range(n):
        b[k], b[piv[k]] = b[piv[k]], b[k]
    for i in range(n):
        for j in range(i):
            b[i] -= LU[i, j] * b[j]
    for i in range(n - 1, -1, -1):
        for j in range(n - 1, i, -1):
            b[i] -= LU[i, j] * b[j]
        b[i] = b[i] * (1.0 / LU[i, i])
    return b


@pytest.mark.parametrize("n", range(1, 11))
def test_the_compiled_lu_solve_of_a_small_system_rounds_as_the_general_loop(n):
    """Up to eight unknowns the substitution is compiled for its size (unrolled: the loops' set-up was most
    of a Rosenbrock stage on Van der Pol): the same operations in the same order, so the same bits as the
    general substitution, on each side of the size where the general loop takes over."""
    rng = np.random.default_rng(20 + n)
    for trial in range(20):
        A = rng.standard_normal((n, n)) * 10.0 ** rng.integers(-3, 3, size=(n, n))
        M, piv = A.copy(), np.zeros(n, dtype=np.int64)
        W = rng.standard_normal((2, n))
        got = W.copy()
        assert _lu_compiled(M, piv, got, 1)
        assert np.array_equal(got[1], _substitution(M, piv, W[1])), trial


@pytest.mark.parametrize("n", range(1, 10))
def test_the_compiled_lu_solve_solves_with_pivoting(n):
    """The compiled factor and solve against NumPy's solve, on matrices
    whose pivots must be exchanged (a small leading entry), each row of W in its turn."""
    rng = np.random.default_rng(10 + n)
    A = rng.standard_normal((n, n)) + n * np.eye(n)
    A[0, 0] = 1e-9                                   # the first pivot is another row
    for row in range(3):
        W = rng.standard_normal((3, n))
        expected = np.linalg.solve(A, W[row])
        got, M, piv = W.copy(), A.copy(), np.zeros(n, dtype=np.int64)
        assert _lu_compiled(M, piv, got, row)
        np.testing.assert_allclose(got[row], expected, rtol=1e-12, atol=1e-12 * np.max(np.abs(expected)))
        assert np.array_equal(np.delete(got, row, axis=0), np.delete(W, row, axis=0))


def _inverse_numpy(M, piv, W, rows):
    ok = lu_factor(M, piv)
    lu_invert(M, piv)
    for row in rows:
        inverse_solve(M, piv, W, row)
    return ok


_inverse_compiled = numba.njit(cache=False)(_inverse_numpy)


@pytest.mark.parametrize("n", range(1, INVERSE_UP_TO + 3))
def test_a_solve_with_the_inverse_solves_as_the_factors_do(n):
    """lu_invert turns the factors into the transposed inverse up to INVERSE_UP_TO unknowns (and leaves them
    beyond), and inverse_solve then solves with either: on matrices whose first pivot is exchanged (a tiny
    leading entry), within 1e-12 of NumPy's solve, compiled and in NumPy, each row of W in its turn and the
    others untouched.  A product that took the inverse untransposed, or a row of it the wrong way,
    misses by order one."""
    rng = np.random.default_rng(40 + n)
    for trial in range(10):
        A = rng.standard_normal((n, n)) + n * np.eye(n)
        A[0, 0] = 1e-9
        W = rng.standard_normal((3, n))
        expected = np.linalg.solve(A, W.T).T
        for solve in (_inverse_compiled, _inverse_numpy):
            got, M, piv = W.copy(), A.copy(), np.zeros(n, dtype=np.int64)
            assert solve(M, piv, got, np.array([0, 2]))
            scale = np.max(np.abs(expected[[0, 2]]))
            np.testing.assert_allclose(got[[0, 2]], expected[[0, 2]], rtol=0, atol=1e-12 * scale)
            assert np.array_equal(got[1], W[1])
            if n <= INVERSE_UP_TO:
                np.testing.assert_allclose(M, np.linalg.inv(A).T, rtol=1e-10, atol=1e-12 * np.abs(M).max())


@numba.njit(cache=False)
def _product_compiled(M, piv, W, row):
    inverse_solve(M, piv, W, row)


@pytest.mark.parametrize("n", range(1, INVERSE_UP_TO + 1))
def test_the_compiled_product_with_the_inverse_sums_as_the_numpy_body(n):
    """Given the same inverse, the compiled product (unrolled for each size) and the NumPy body add the
    same terms in the same order: the same bits."""
    rng = np.random.default_rng(60 + n)
    M, piv = rng.standard_normal((n, n)), np.zeros(n, dtype=np.int64)
    W = rng.standard_normal((2, n)) * 10.0 ** rng.integers(-6, 6, size=(2, n))
    compiled, numpy = W.copy(), W.copy()
    _product_compiled(M, piv, compiled, 1)
    inverse_solve(M, piv, numpy, 1)
    assert np.array_equal(compiled, numpy)


@numba.njit(cache=False)
def _scratch_sums(x, heap):
    total = 0.0
    for r in range(100):
        s = np.empty(8) if heap else on_stack(8)
        for k in range(8):
            s[k] = x[k] * r
        for k in range(8):
            total += s[k]
    return total


def test_scratch_on_the_stack_holds_its_numbers_and_allocates_nothing():
    """Compiled, ``on_stack`` is space in the caller's frame: a hundred scratch arrays in a loop hold what is
    written into them and cost no allocation (the same loop with ``np.empty`` counts a hundred); in Python it
    is an array of the size."""
    from numba.core.runtime import _nrt_python, rtsys

    x = np.arange(1.0, 9.0)
    expected = float(np.sum(x)) * sum(range(100))
    _nrt_python.memsys_enable_stats()
    try:
        allocations = {}
        for heap in (False, True):
            before = rtsys.get_allocation_stats().alloc
            assert _scratch_sums(x, heap) == expected
            allocations[heap] = rtsys.get_allocation_stats().alloc - before
    finally:
        _nrt_python.memsys_disable_stats()
    assert allocations[True] - allocations[False] == 100
    assert on_stack(5).shape == (5,) and on_stack(5).dtype == np.float64


@numba.njit(cache=False)
def _complex_scratch(z):
    s = on_stack(4, z)
    for k in range(4):
        s[k] = z[k] * 1j
    return s[0] + s[1] + s[2] + s[3]


def test_scratch_on_the_stack_takes_the_dtype_of_an_array_given():
    """``on_stack(size, like)`` is of ``like``'s dtype: complex numbers written into it keep their imaginary
    parts (float scratch would not type, or would drop them), compiled and in Python."""
    z = np.array([1 + 2j, 3 - 1j, -2 + 0.5j, 0.25j])
    assert _complex_scratch(z) == complex(np.sum(z * 1j))
    assert on_stack(3, z).dtype == np.complex128


@numba.njit(cache=False)
def _held_pair(a, b):
    a, b = held((a, b))
    a[1, 2] = 7.0
    b[3] += 1.0
    return a.shape[0], a.shape[1], a.strides[0], b.shape[0], b.sum()


def test_held_arrays_are_the_same_arrays():
    """Compiled, ``held`` passes an array's data pointer, shape and strides through an empty assembly: the
    arrays that come out are the ones that went in -- writes reach them, shapes and strides are theirs (a
    field passed in the wrong place would show here); in Python it is the value itself."""
    a, b = np.zeros((3, 5)), np.arange(6.0)
    assert _held_pair(a, b) == (3, 5, 40, 6, 16.0)
    assert a[1, 2] == 7.0 and b[3] == 4.0
    pair = (a, b)
    assert held(pair) is pair


HELD_MANY_TIMES = """
import numpy as np, numba
from odekit.kernels import held
import odekit.kernels.jit

@numba.njit(cache=False)
def first(a, b):
    a, b = held((a, b))
    return a[0] + b[0]

for i in range(2000):
    first(np.ones(3), np.ones(4))
    kept = [np.ones(7) for _ in range(5)]
print("ok")
"""


def test_held_arrays_of_their_own_are_counted_as_a_call_returning_them_counts_them():
    """``held`` of arrays that are not borrowed hands back a reference of its own, as a function returning its
    argument does: without it, each call released the arrays once too often, and a few thousand calls later
    malloc found its heap corrupted and aborted the process (as a whole test run once did).  In a process
    of its own, so that a failure is this test's."""
    import os
    import pathlib
    import subprocess
    import sys

    import odekit

    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(odekit.__file__).parents[1]))
    done = subprocess.run([sys.executable, "-c", HELD_MANY_TIMES], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
