"""Diagonally implicit Runge--Kutta step, stages solved by Newton's method.

Method data: ``(A, b, c, e, fsal)`` as for the explicit family; ``A`` is
lower triangular.  A stage with ``A[i, i] == 0`` is explicit.  Each implicit
stage solves

    Z = base + h * g * f(t + c_i h, Z),   base = y + h * sum_{j<i} A[i, j] K_j,

by simplified Newton: the Jacobian is taken once per step at (t, y) and the
matrix ``I - h g J`` is factored once per distinct diagonal value ``g``.
The stage derivative is recovered as ``K_i = (Z - base) / (h g)``, which
costs no evaluation and keeps ``y_new`` consistent with ``Z`` exactly.
"""

import numpy as np

from . import jitable
from .evaluation import evaluate_finite, linearise, overflowed
from .layout import C_HAS_JAC, C_NEWTON, NEWTON_FAILED, NLU, SUCCESS, T_FAIL
from .primitives import copy_into, error_norm, lincomb, lu_factor, lu_solve, shifted_identity, weighted_sum

MAX_NEWTON_ITERATIONS = 10


@jitable
def newton_solve(rhs, args, t, hg, base, Z, fz, dz, M, piv, tol, kappa, ist, fs):
    """Solve ``Z = base + hg * f(t, Z)`` with the factored ``M = I - hg J``.

    Converged when the scaled correction is below ``kappa`` (a fraction of
    the error tolerance), either outright or as estimated from the observed
    contraction rate ``theta`` (Hairer & Wanner, *Solving ODEs II*, IV.8).
    Diverging (``theta >= 1``) or slow iterations fail with NEWTON_FAILED.
    """
    dn_old = 0.0
    for it in range(MAX_NEWTON_ITERATIONS):
        code = evaluate_finite(rhs, args, t, Z, fz, ist, fs)
        if code != SUCCESS:
            return code
        dz[:] = base + hg * fz - Z
        lu_solve(M, piv, dz)
        Z += dz
        dn = error_norm(dz, Z, Z, tol)
        if not np.isfinite(dn):
            break
        if dn <= kappa:
            return SUCCESS
        if it > 0:
            theta = dn / dn_old
            if theta >= 1.0:
                break
            if theta / (1.0 - theta) * dn <= kappa:
                return SUCCESS
        dn_old = dn
    fs[T_FAIL] = t
    return NEWTON_FAILED


def implicit_rk_step(rhs, jac, args, m, ctrl, tol, t, h, y, f, have_f,
                     ynew, fnew, err, scratch, ist, fs):
    """One step of size ``h``; returns ``(code, have_f, have_fnew)``."""
    A, b, c, e, _ = m          # implicit stages never reuse f: no FSAL
    work, J, M, piv = scratch
    s = b.shape[0]
    K = work
    base, Z, fz, dz, ytmp, ftmp = work[s], work[s + 1], work[s + 2], work[s + 3], work[s + 4], work[s + 5]
    explicit_first = A[0, 0] == 0.0          # stage 1 is f(t, y) itself
    code, have_f = linearise(rhs, jac, args, ctrl[C_HAS_JAC] != 0.0, explicit_first, t, y, f, have_f,
                             J, ytmp, ftmp, ist, fs)
    if code != SUCCESS:
        return code, have_f, False
    factored = 0.0
    for i in range(s):
        lincomb(base, y, h, A[i], K, i)
        g = A[i, i]
        if g == 0.0:
            if i == 0 and c[0] == 0.0:
                copy_into(K[0], f)
            else:
                code = evaluate_finite(rhs, args, t + c[i] * h, base, K[i], ist, fs)
                if code != SUCCESS:
                    return code, True, False
            continue
        if g != factored:
            shifted_identity(M, J, h * g)
            ist[NLU] += 1
            if not lu_factor(M, piv):
                fs[T_FAIL] = t
                return NEWTON_FAILED, True, False
            factored = g
        copy_into(Z, base)
        code = newton_solve(rhs, args, t + c[i] * h, h * g, base, Z, fz, dz, M, piv,
                            tol, ctrl[C_NEWTON], ist, fs)
        if code != SUCCESS:
            return code, True, False
        K[i, :] = (Z - base) / (h * g)
    lincomb(ynew, y, h, b, K, s)
    if e.shape[0] > 0:
        weighted_sum(err, h, e, K, s)
    return overflowed(ynew, fs), True, False
