"""Linear-algebra primitives of the kernels.

Each primitive has a vectorised NumPy body, used when the kernels run as
plain Python, and an explicit-loop twin that Numba compiles instead (see
:func:`odekit.kernels.compiled_as`).  The loops avoid temporaries, which is
what keeps a compiled Runge--Kutta step near the speed of C.
"""

import math
import warnings

import numpy as np

from . import compiled_as


# --- out = y + h * sum_j coef[j] K[j] ------------------------------------------

def _lincomb_loop(out, y, h, coef, K, m):
    for i in range(y.shape[0]):
        acc = y[i] * 0.0
        for j in range(m):
            if coef[j] != 0.0:
                acc += coef[j] * K[j, i]
        out[i] = y[i] + h * acc


@compiled_as(_lincomb_loop)
def lincomb(out, y, h, coef, K, m):
    """Write ``y + h * sum(coef[j] * K[j] for j < m)`` into ``out``."""
    np.add(y, h * _stage_sum(coef, K, m, y), out=out)


def _stage_sum(coef, K, m, like):
    """``sum(coef[j] * K[j])`` term by term, in the compiled loop's order.

    The same order of additions is what makes both backends give the same
    numbers: an error estimate is a cancellation, and a different rounding
    of it changes the step sizes of an adaptive run.
    """
    acc = np.zeros_like(like)
    for j in range(m):
        if coef[j] != 0.0:
            acc += coef[j] * K[j]
    return acc


# --- out = h * sum_j coef[j] K[j] ----------------------------------------------

def _weighted_sum_loop(out, h, coef, K, m):
    for i in range(out.shape[0]):
        acc = K[0, i] * 0.0
        for j in range(m):
            if coef[j] != 0.0:
                acc += coef[j] * K[j, i]
        out[i] = h * acc


@compiled_as(_weighted_sum_loop)
def weighted_sum(out, h, coef, K, m):
    """Write ``h * sum(coef[j] * K[j] for j < m)`` into ``out``."""
    np.multiply(h, _stage_sum(coef, K, m, out), out=out)


# --- checks and norms ----------------------------------------------------------

def _all_finite_loop(x):
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True


@compiled_as(_all_finite_loop)
def all_finite(x):
    """True when every entry of the 1-D array ``x`` is finite."""
    return bool(np.isfinite(x).all())


def _error_norm_loop(err, y, ynew, tol):
    n = y.shape[0]
    acc = 0.0
    for i in range(n):
        scale = tol[1, i] + tol[0, i] * max(abs(y[i]), abs(ynew[i]))
        acc += (abs(err[i]) / scale) ** 2
    return math.sqrt(acc / n)


@compiled_as(_error_norm_loop)
def error_norm(err, y, ynew, tol):
    """Root-mean-square of ``err`` scaled by ``atol + rtol * max(|y|, |ynew|)``.

    ``tol`` stacks the per-component ``rtol`` (row 0) and ``atol`` (row 1).
    A value of 1 means the error is exactly at the requested tolerance
    (Hairer, Nørsett & Wanner, *Solving ODEs I*, eq. II.4.11).
    """
    scale = tol[1] + tol[0] * np.maximum(np.abs(y), np.abs(ynew))
    # cumsum adds left to right, like the loop (np.sum would add pairwise)
    return math.sqrt(float(np.cumsum((np.abs(err) / scale) ** 2)[-1]) / y.shape[0])


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
    from scipy.linalg import LinAlgWarning, lu_factor as _lu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinAlgWarning)
        lu, p = _lu(M, overwrite_a=True, check_finite=False)
    M[...] = lu
    piv[:] = p
    return bool(np.all(np.diag(M) != 0) and np.all(np.isfinite(M)))


def _lu_solve_loop(LU, piv, b):
    n = LU.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for i in range(n):
        acc = b[i]
        for j in range(i):
            acc -= LU[i, j] * b[j]
        b[i] = acc
    for i in range(n - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, n):
            acc -= LU[i, j] * b[j]
        b[i] = acc / LU[i, i]


@compiled_as(_lu_solve_loop)
def lu_solve(LU, piv, b):
    """Overwrite ``b`` with the solution of ``M x = b`` from :func:`lu_factor`."""
    from scipy.linalg import lu_solve as _solve

    b[:] = _solve((LU, piv), b, check_finite=False)


def _matvec_loop(out, A, x):
    for i in range(A.shape[0]):
        acc = x[0] * 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        out[i] = acc


@compiled_as(_matvec_loop)
def matvec(out, A, x):
    """Write ``A @ x`` into ``out``."""
    np.dot(A, x, out=out)


def _shifted_identity_loop(M, J, scale):
    n = J.shape[0]
    for i in range(n):
        for j in range(n):
            M[i, j] = -scale * J[i, j]
        M[i, i] += 1.0


@compiled_as(_shifted_identity_loop)
def shifted_identity(M, J, scale):
    """Write ``I - scale * J`` into ``M`` (the Newton matrix of an implicit stage)."""
    np.multiply(J, -scale, out=M)
    M.flat[:: M.shape[0] + 1] += 1.0


def _axpy_loop(y, alpha, x):
    for i in range(y.shape[0]):
        y[i] += alpha * x[i]


@compiled_as(_axpy_loop)
def axpy(y, alpha, x):
    """``y += alpha * x`` in place."""
    y += alpha * x


def _copy_into_loop(out, r):
    i = 0
    for value in r.flat:
        out[i] = value
        i += 1


@compiled_as(_copy_into_loop)
def copy_into(out, r):
    """Copy the entries of ``r`` (any shape, ``r.size == out.size``) into the 1-D ``out``.

    The compiled loop avoids Numba's broadcasting slice assignment, whose
    error-message machinery costs seconds of compilation per user function.
    """
    out[:] = np.ravel(r)
