"""Rosenbrock (linearly implicit) step: one LU per step, no Newton iteration.

Method data: ``(alpha, gamma, b, e, c, d)`` as float arrays.  Stage ``i``
solves (Hairer & Wanner, *Solving ODEs II*, eq. IV.7.4)

    (I - h gamma_ii J) k_i = h f(t + c_i h, y + sum_{j<i} alpha_ij k_j)
                             + h J sum_{j<i} gamma_ij k_j + h^2 d_i f_t,

with ``c`` and ``d`` the row sums of ``alpha`` and ``gamma`` and ``f_t`` the
time derivative of f (forward difference, one evaluation, skipped when every
``d_i`` is zero); then ``y_new = y + sum b_i k_i``.  All ``gamma_ii`` are equal.
"""

import math

import numpy as np

from .evaluation import evaluate_finite, linearise, overflowed
from .layout import C_HAS_JAC, NEWTON_FAILED, NLU, SUCCESS, T_FAIL
from .primitives import copy_into, lincomb, lu_factor, lu_solve, matvec, shifted_identity, weighted_sum


def rosenbrock_step(rhs, jac, args, m, ctrl, tol, t, h, y, f, have_f,
                    ynew, fnew, err, scratch, ist, fs):
    """One step of size ``h``; returns ``(code, have_f, have_fnew)``."""
    alpha, gamma, b, e, c, d = m
    work, J, M, piv = scratch
    s = b.shape[0]
    K = work
    stage, fi, v, ytmp, ftmp, ft = work[s], work[s + 1], work[s + 2], work[s + 3], work[s + 4], work[s + 5]
    code, have_f = linearise(rhs, jac, args, ctrl[C_HAS_JAC] != 0.0, True, t, y, f, have_f,
                             J, ytmp, ftmp, ist, fs)
    if code != SUCCESS:
        return code, have_f, False
    if np.any(d != 0.0):
        dt = math.sqrt(np.finfo(np.float64).eps) * max(1e-5, abs(t))
        code = evaluate_finite(rhs, args, t + dt, y, ftmp, ist, fs)
        if code != SUCCESS:
            return code, True, False
        ft[:] = (ftmp - f) / dt
    shifted_identity(M, J, h * gamma[0, 0])
    ist[NLU] += 1
    if not lu_factor(M, piv):
        fs[T_FAIL] = t
        return NEWTON_FAILED, True, False
    for i in range(s):
        if i == 0:
            copy_into(fi, f)
        else:
            lincomb(stage, y, 1.0, alpha[i], K, i)
            code = evaluate_finite(rhs, args, t + c[i] * h, stage, fi, ist, fs)
            if code != SUCCESS:
                return code, True, False
        K[i, :] = h * fi
        if i > 0:
            weighted_sum(stage, 1.0, gamma[i], K, i)
            matvec(v, J, stage)
            K[i, :] += h * v
        if d[i] != 0.0:
            K[i, :] += (h * h * d[i]) * ft
        lu_solve(M, piv, K[i])
    lincomb(ynew, y, 1.0, b, K, s)
    if e.shape[0] > 0:
        weighted_sum(err, 1.0, e, K, s)
    return overflowed(ynew, fs), True, False
