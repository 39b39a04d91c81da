"""Linear-algebra primitives of the kernels, on rows of matrices.

Vectors are rows of a matrix, named by index (see :mod:`.layout`): a
compiled kernel then never makes an array view, whose reference counting
costs more than a small system's arithmetic.  Each primitive has a
vectorised NumPy body, used when the kernels run as plain Python, and an
explicit-loop twin that Numba compiles instead (see
:func:`odekit.kernels.compiled_as`).  Both add in the same order, so both
backends give the same numbers.

The NumPy bodies of the Newton-matrix primitives also accept the sparse
Jacobians and linear systems of :mod:`odekit.sparse` in place of arrays, and
hand them the work: that is how the same kernels solve large sparse
systems, on the Python backend.
"""

import math
import warnings

import numpy as np

from . import compiled_as, jitable, on_stack


# --- copies and updates of rows --------------------------------------------------

def _copy_row_loop(D, d, S, s):
    for q in range(D.shape[1]):
        D[d, q] = S[s, q]


@compiled_as(_copy_row_loop)
def copy_row(D, d, S, s):
    """``D[d] = S[s]`` (the matrices may be the same)."""
    D[d] = S[s]


def _zero_row_loop(D, d):
    for q in range(D.shape[1]):
        D[d, q] = 0.0


@compiled_as(_zero_row_loop, cold=True)
def zero_row(D, d):
    """``D[d] = 0``."""
    D[d] = 0.0


def _copy_scaled_loop(D, d, alpha, S, s):
    for q in range(D.shape[1]):
        D[d, q] = alpha * S[s, q]


@compiled_as(_copy_scaled_loop)
def copy_scaled(D, d, alpha, S, s):
    """``D[d] = alpha * S[s]``."""
    D[d] = alpha * S[s]


def _axpy_loop(D, d, alpha, S, s):
    for q in range(D.shape[1]):
        D[d, q] += alpha * S[s, q]


@compiled_as(_axpy_loop)
def axpy(D, d, alpha, S, s):
    """``D[d] += alpha * S[s]``."""
    D[d] += alpha * S[s]


def _axpy_difference_loop(D, d, alpha, S, a, b):
    for q in range(D.shape[1]):
        D[d, q] += alpha * (S[a, q] - S[b, q])


@compiled_as(_axpy_difference_loop)
def axpy_difference(D, d, alpha, S, a, b):
    """``D[d] += alpha * (S[a] - S[b])``."""
    D[d] += alpha * (S[a] - S[b])


def _scaled_difference_loop(W, out, a, b, scale):
    for q in range(W.shape[1]):
        W[out, q] = (W[a, q] - W[b, q]) * scale


@compiled_as(_scaled_difference_loop)
def scaled_difference(W, out, a, b, scale):
    """``W[out] = (W[a] - W[b]) * scale``."""
    W[out] = (W[a] - W[b]) * scale


def _scaled_less_loop(W, out, alpha, a, b, c):
    for q in range(W.shape[1]):
        W[out, q] = alpha * W[a, q] - W[b, q] - W[c, q]


@compiled_as(_scaled_less_loop)
def scaled_less(W, out, alpha, a, b, c):
    """``W[out] = alpha * W[a] - W[b] - W[c]``, subtracted left to right."""
    W[out] = alpha * W[a] - W[b] - W[c]


def _add_to_two_loop(W, a, b, src):
    for q in range(W.shape[1]):
        W[a, q] += W[src, q]
        W[b, q] += W[src, q]


@compiled_as(_add_to_two_loop)
def add_to_two(W, a, b, src):
    """``W[a] += W[src]`` and ``W[b] += W[src]`` (three distinct rows)."""
    W[a] += W[src]
    W[b] += W[src]


# --- W[out] = W[base] + h * sum_j C[row, j] W[first + j] ----------------------------

def _combine_loop(W, out, base, h, C, row, first, m):
    # Four components at a time, each summed term by term (_combine_block).  One component's sum is a chain
    # of additions, each waiting for the one before; four independent chains keep the floating-point units
    # busy, and on a small system the stages are mostly this sum (benchmarks/README.md, Explicit pairs).
    # The last block's spare lanes repeat the last component (no branch per lane).  A system of one to four
    # components is one block whose columns are constants: with four columns computed at run time the
    # loop spilled its indices to the stack, and vern8 on Lorenz (rtol 3.2e-10) took 234 us against 166,
    # on Arenstorf (1e-13) 207 against 177, bdf on Van der Pol (1e-8) 724 against 662; the same bits.
    # The block is inlined by LLVM, not in Numba's IR: five copies typed per call site made a cold
    # compile of dp54's loop take 22.5 s of CPU instead of 9.  Larger systems are tested first: behind
    # the small cases, bdf on HIRES (n = 8) took 8 % longer.
    n = W.shape[1]
    if n > 4:
        last = n - 1
        for q0 in range(0, n, 4):
            _combine_block(W, out, base, h, C, row, first, m, q0, min(q0 + 1, last), min(q0 + 2, last),
                           min(q0 + 3, last))
    elif n == 4:
        _combine_block(W, out, base, h, C, row, first, m, 0, 1, 2, 3)
    elif n == 3:
        _combine_block(W, out, base, h, C, row, first, m, 0, 1, 2, 2)
    elif n == 2:
        _combine_block(W, out, base, h, C, row, first, m, 0, 1, 1, 1)
    else:
        _combine_block(W, out, base, h, C, row, first, m, 0, 0, 0, 0)


@jitable
def _combine_block(W, out, base, h, C, row, first, m, q0, q1, q2, q3):
    """Columns ``q0..q3`` of :func:`combine`, each summed term by term; stored only after all four are
    computed: ``out`` may be ``base``."""
    a0 = W[first, q0] * 0.0
    a1 = W[first, q1] * 0.0
    a2 = W[first, q2] * 0.0
    a3 = W[first, q3] * 0.0
    for j in range(m):
        c = C[row, j]
        r = first + j
        a0 += c * W[r, q0]
        a1 += c * W[r, q1]
        a2 += c * W[r, q2]
        a3 += c * W[r, q3]
    if base >= 0:
        a0 = W[base, q0] + h * a0
        a1 = W[base, q1] + h * a1
        a2 = W[base, q2] + h * a2
        a3 = W[base, q3] + h * a3
    else:
        a0 = h * a0
        a1 = h * a1
        a2 = h * a2
        a3 = h * a3
    W[out, q0] = a0
    W[out, q1] = a1
    W[out, q2] = a2
    W[out, q3] = a3


@compiled_as(_combine_loop, inline=True)
def combine(W, out, base, h, C, row, first, m):
    """``W[out] = W[base] + h * sum(C[row, j] * W[first + j] for j < m)``.

    The stages of a step are consecutive rows from ``first``, and their
    weights a row of the method's coefficient matrix; ``base < 0`` leaves the
    base term out (an error estimate).  ``out`` may be ``base`` but not a
    stage.  Zero weights are multiplied, not skipped (a branch per term cost
    more than the multiplications it saved): an inf or nan in any stage shows.
    """
    # term by term, in the compiled loop's order: an error estimate is a
    # cancellation, and a different rounding changes an adaptive run's steps
    acc = np.zeros_like(W[first])
    for j in range(m):
        acc += C[row, j] * W[first + j]
    W[out] = h * acc if base < 0 else W[base] + h * acc


# --- checks and norms ----------------------------------------------------------

def _finite_from_loop(W, row, start):
    # no early return: a loop without one LLVM vectorises, and a row is finite but when a run fails;
    # unsigned indices: from a start that is not 0, Numba's wraparound of negative ones made LLVM gather the
    # entries one by one
    finite = True
    for q in range(np.uint64(start), np.uint64(W.shape[1])):
        finite &= np.isfinite(W[row, q])
    return finite


@compiled_as(_finite_from_loop)
def finite_from(W, row, start):
    """True when every entry of ``W[row, start:]`` is finite."""
    return bool(np.isfinite(W[row, start:]).all())


@jitable
def all_finite(W, row):
    """True when every entry of ``W[row]`` is finite."""
    return finite_from(W, row, 0)


def _error_norm_loop(W, err, y, ynew, tol):
    n = W.shape[1]
    acc = 0.0
    for q in range(n):
        scale = tol[1, q] + tol[0, q] * max(abs(W[y, q]), abs(W[ynew, q]))
        acc += (abs(W[err, q]) / scale) ** 2
    return math.sqrt(acc / n)


@compiled_as(_error_norm_loop)
def error_norm(W, err, y, ynew, tol):
    """Root-mean-square of ``W[err]`` scaled by ``atol + rtol * max(|W[y]|, |W[ynew]|)``.

    ``tol`` stacks the per-component ``rtol`` (row 0) and ``atol`` (row 1).
    A value of 1 means the error is exactly at the requested tolerance
    (Hairer, Nørsett & Wanner, *Solving ODEs I*, eq. II.4.11).
    """
    scale = tol[1] + tol[0] * np.maximum(np.abs(W[y]), np.abs(W[ynew]))
    # cumsum adds left to right, like the loop (np.sum would add pairwise)
    return math.sqrt(float(np.cumsum((np.abs(W[err]) / scale) ** 2)[-1]) / W.shape[1])


def _scaled_norm_loop(W, row, factor, y, tol):
    n = W.shape[1]
    acc = 0.0
    for q in range(n):
        if factor != 1.0:
            W[row, q] = factor * W[row, q]
        scale = tol[1, q] + tol[0, q] * abs(W[y, q])
        acc += (abs(W[row, q]) / scale) ** 2
    return math.sqrt(acc / n)


@compiled_as(_scaled_norm_loop)
def scaled_norm(W, row, factor, y, tol):
    """``W[row] *= factor`` (unless it is 1), then :func:`error_norm` of it scaled by ``W[y]`` alone."""
    if factor != 1.0:
        W[row] = factor * W[row]
    return error_norm(W, row, y, y, tol)


def _error_norms_loop(W, a, b, y, ynew, tol):
    n = W.shape[1]
    acc_a = 0.0
    acc_b = 0.0
    for q in range(n):
        scale = tol[1, q] + tol[0, q] * max(abs(W[y, q]), abs(W[ynew, q]))
        acc_a += (abs(W[a, q]) / scale) ** 2
        acc_b += (abs(W[b, q]) / scale) ** 2
    return math.sqrt(acc_a / n), math.sqrt(acc_b / n)


@compiled_as(_error_norms_loop)
def error_norms(W, a, b, y, ynew, tol):
    """:func:`error_norm` of rows ``a`` and ``b``, the same numbers in one pass (the scale made once)."""
    return error_norm(W, a, y, ynew, tol), error_norm(W, b, y, ynew, tol)


# --- dense LU with partial pivoting --------------------------------------------
# The factors and the pivots follow LAPACK's getrf convention (row i was
# swapped with row piv[i]), so each backend pairs its own factor and solve.

def _lu_factor_loop(M, piv):
    n = M.shape[0]
    for k in range(n):
        p = k
        big = abs(M[k, k])
        for i in range(k + 1, n):
            if abs(M[i, k]) > big:
                big = abs(M[i, k])
                p = i
        piv[k] = p
        if big == 0.0:
            return False
        if p != k:
            for j in range(n):
                tmp = M[k, j]
                M[k, j] = M[p, j]
                M[p, j] = tmp
        for i in range(k + 1, n):
            M[i, k] /= M[k, k]
            lik = M[i, k]
            if lik != 0.0:
                for j in range(k + 1, n):
                    M[i, j] -= lik * M[k, j]
    return True


@compiled_as(_lu_factor_loop)
def lu_factor(M, piv):
    """Factor the square matrix ``M`` in place; False when it is singular."""
    if not isinstance(M, np.ndarray):
        return M.factor()
    from scipy.linalg import LinAlgWarning, lu_factor as _lu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinAlgWarning)
        lu, p = _lu(M, overwrite_a=True, check_finite=False)
    M[...] = lu
    piv[:] = p
    return bool(np.all(np.diag(M) != 0) and np.all(np.isfinite(M)))


def _lu_solve_loop(LU, piv, W, row):
    # Up to eight unknowns, the substitution is told its size as a constant, so that LLVM unrolls its loops:
    # loops of 0 to n - 1 trips, each ending at another count, cost more than their arithmetic (alone in a
    # loop, a solve of 3 unknowns 32 -> 8 ns, of 8 unknowns 96 -> 55 ns; the same operations in the same
    # order).  Larger systems are tested first, so that they pay one comparison.
    n = LU.shape[0]
    if n > 8:
        _substitute(LU, piv, W, row, n)
    elif n == 8:
        _substitute(LU, piv, W, row, 8)
    elif n == 7:
        _substitute(LU, piv, W, row, 7)
    elif n == 6:
        _substitute(LU, piv, W, row, 6)
    elif n == 5:
        _substitute(LU, piv, W, row, 5)
    elif n == 4:
        _substitute(LU, piv, W, row, 4)
    elif n == 3:
        _substitute(LU, piv, W, row, 3)
    elif n == 2:
        _substitute(LU, piv, W, row, 2)
    else:
        _substitute(LU, piv, W, row, 1)


@jitable
def _substitute(LU, piv, W, row, n):
    """The pivots' exchanges, then forward and back substitution in row ``row`` of ``W``, for ``n`` unknowns."""
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = W[row, k]
            W[row, k] = W[row, p]
            W[row, p] = tmp
    for i in range(n):
        acc = W[row, i]
        for j in range(i):
            acc -= LU[i, j] * W[row, j]
        W[row, i] = acc
    for i in range(n - 1, -1, -1):
        acc = W[row, i]
        # from the last unknown down, as reference LAPACK's dtrsm subtracts them: the unknown just found comes
        # last, so the other terms need not wait for it (from i + 1 up, each unknown waited on a chain of
        # subtractions that began with the one before it; alone, a solve of 8 unknowns 52.9 -> 35.7 ns, of 4
        # 18.9 -> 16.5)
        for j in range(n - 1, i, -1):
            acc -= LU[i, j] * W[row, j]
        # times the reciprocal: its division waits for nothing, where ``acc / LU[i, i]`` held each unknown
        # back by a division after the one before it (LAPACK's solve, the Python backend's, rounds so too)
        W[row, i] = acc * (1.0 / LU[i, i])


@compiled_as(_lu_solve_loop)
def lu_solve(LU, piv, W, row):
    """Overwrite ``W[row]`` with the solution of ``M x = W[row]`` from :func:`lu_factor`."""
    if not isinstance(LU, np.ndarray):
        W[row] = LU.solve(W[row])
        return
    from scipy.linalg import lu_solve as _solve

    W[row] = _solve((LU, piv), W[row], check_finite=False)


# --- many solves with one small matrix: its inverse ---------------------------------------
# A BDF step solves with its Newton matrix two or three times, and keeps the matrix for tens of
# steps (HIRES at rtol 7.5e-10: 2,268 solves with 45 factorisations); an SDIRK method, for every
# stage of the steps it serves.  A substitution is a chain -- each unknown waits for the one found
# before it -- where a product with the inverse is n sums that wait for nothing: of 8 unknowns 44 ns
# a solve against about 10, for n more solves per factorisation to make the inverse (bdf on HIRES
# 372 -> 311 us; benchmarks/README.md, *A solve as a product*).  Up to INVERSE_UP_TO unknowns,
# where the product is unrolled for its size; a larger matrix keeps its factors.
INVERSE_UP_TO = 8


def _lu_invert_loop(M, piv):
    n = M.shape[0]
    if n > INVERSE_UP_TO:
        return
    X = on_stack(64, M).reshape((INVERSE_UP_TO, INVERSE_UP_TO))   # row j: M^-1 e_j, in the first n columns
    for j in range(n):
        for i in range(n):
            X[j, i] = 0.0
        X[j, j] = 1.0
        lu_solve(M, piv, X, j)
    for j in range(n):
        for i in range(n):
            M[j, i] = X[j, i]


@compiled_as(_lu_invert_loop)
def lu_invert(M, piv):
    """The factors of :func:`lu_factor` in ``M`` become the transpose of the inverse of the matrix they
    factor, for at most :data:`INVERSE_UP_TO` unknowns (larger: unchanged); :func:`inverse_solve` then
    solves with either."""
    if isinstance(M, np.ndarray) and M.shape[0] <= INVERSE_UP_TO:
        from scipy.linalg import lu_solve as _solve

        M[...] = _solve((M, piv), np.eye(M.shape[0]), check_finite=False).T


def _inverse_solve_loop(M, piv, W, row):
    # told its size as a constant (as the substitution): the sums unrolled, kept in registers
    n = M.shape[0]
    if n > INVERSE_UP_TO:
        lu_solve(M, piv, W, row)
    elif n == 8:
        _times_rows(M, W, row, 8)
    elif n == 7:
        _times_rows(M, W, row, 7)
    elif n == 6:
        _times_rows(M, W, row, 6)
    elif n == 5:
        _times_rows(M, W, row, 5)
    elif n == 4:
        _times_rows(M, W, row, 4)
    elif n == 3:
        _times_rows(M, W, row, 3)
    elif n == 2:
        _times_rows(M, W, row, 2)
    else:
        _times_rows(M, W, row, 1)


@jitable
def _times_rows(M, W, row, n):
    """``W[row] = sum_j W[row, j] M[j]`` for ``n`` unknowns: row by row of ``M``, each unknown a sum of its own."""
    x = on_stack(8, W)
    b = W[row, 0]
    for i in range(n):
        x[i] = b * M[0, i]
    for j in range(1, n):
        b = W[row, j]
        for i in range(n):
            x[i] += b * M[j, i]
    for i in range(n):
        W[row, i] = x[i]


@compiled_as(_inverse_solve_loop)
def inverse_solve(M, piv, W, row):
    """Overwrite ``W[row]`` with the solution of ``A x = W[row]``, ``M`` being what :func:`lu_invert` made
    of ``A``'s factors: a product with ``A``'s inverse up to :data:`INVERSE_UP_TO` unknowns, a
    substitution (:func:`lu_solve`) beyond.

    A product with the inverse is not backward stable as the substitution
    is: its error is of the size of ``eps |A^-1| |b|`` rather than
    ``eps |A^-1| |A| |x|``.  For the simplified Newton iteration of an
    implicit step, whose matrix is itself an approximation (an old
    Jacobian, an old step size), that does not show: on the stiff problems
    of ``bench_lsoda.py`` (bdf, ndf, kencarp4 and trbdf2, with and without
    the Jacobian, 15 tolerances each) 417 of 480 runs took the same steps
    to the same error, the others -- at loose tolerances mostly -- at most
    7 % more or fewer steps, their errors moved either way as a change in
    the last bits moves them.
    """
    if not isinstance(M, np.ndarray) or M.shape[0] > INVERSE_UP_TO:
        lu_solve(M, piv, W, row)
        return
    W[row] = np.cumsum(W[row][:, None] * M, axis=0)[-1]     # (summed as the loop sums)


def _abs_matvec_loop(W, out, A, src):
    for i in range(A.shape[0]):
        acc = abs(W[src, 0]) * 0.0
        for j in range(A.shape[1]):
            acc += abs(A[i, j]) * abs(W[src, j])
        W[out, i] = acc


@compiled_as(_abs_matvec_loop, cold=True)
def abs_matvec(W, out, A, src):
    """``W[out] = |A| @ |W[src]|``, entry by entry (dense: added in the loop's order)."""
    if not isinstance(A, np.ndarray):
        W[out] = abs(A.full()) @ np.abs(W[src])
        return
    W[out] = np.cumsum(np.abs(A) * np.abs(W[src]), axis=1)[:, -1]


def _shifted_identity_loop(M, J, scale):
    n = J.shape[0]
    for i in range(n):
        for j in range(n):
            M[i, j] = -scale * J[i, j]
        M[i, i] += 1.0


@compiled_as(_shifted_identity_loop)
def shifted_identity(M, J, scale):
    """Write ``I - scale * J`` into ``M`` (the Newton matrix of an implicit stage)."""
    if not isinstance(M, np.ndarray):
        M.shifted_identity(J, scale)
        return
    np.multiply(J, -scale, out=M)
    M.flat[:: M.shape[0] + 1] += 1.0


def _difference_column_loop(J, j, W, a, b, delta):
    for i in range(J.shape[0]):
        J[i, j] = (W[a, i] - W[b, i]) / delta


@compiled_as(_difference_column_loop)
def difference_column(J, j, W, a, b, delta):
    """``J[:, j] = (W[a] - W[b]) / delta``: a finite-difference Jacobian column."""
    J[:, j] = (W[a] - W[b]) / delta
