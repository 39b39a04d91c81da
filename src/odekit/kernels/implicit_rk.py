"""Diagonally implicit Runge--Kutta step, stages solved by Newton's method.

Method data: ``(T, c, flags)`` as for the explicit family; ``A``, the
first ``s`` rows of ``T``, is lower triangular.  A stage with ``A[i, i] == 0``
is explicit.  Each implicit stage solves

    Z = base + h * g * f(t + c_i h, Z),   base = y + h * sum_{j<i} A[i, j] K_j,

by simplified Newton: the Jacobian is taken once per step at (t, y) and the
matrix ``I - h g J`` is factored once per distinct diagonal value ``g``.
The stage derivative is recovered as ``K_i = (Z - base) / (h g)``, which
costs no evaluation and keeps ``y_new`` consistent with ``Z`` exactly.
"""

import numpy as np

from . import jitable
from .evaluation import evaluate_finite, linearise, overflowed
from .layout import C_HAS_JAC, C_NEWTON, ERR, NEWTON_FAILED, NLU, STAGE, SUCCESS, T_FAIL
from .primitives import (axpy, combine, copy_row, error_norm, lu_factor, lu_solve, scaled_difference,
                         shifted_identity)

MAX_NEWTON_ITERATIONS = 10


@jitable(inline=False)
def newton_solve(rhs, args, t, hg, W, base, Z, fz, dz, LU, piv, tol, kappa, ist, fs):
    """Solve ``Z = base + hg * f(t, Z)`` (rows of ``W``) with the factored ``LU = I - hg J``.

    Converged when the scaled correction is below ``kappa`` (a fraction of
    the error tolerance), either outright or as estimated from the observed
    contraction rate ``theta`` (Hairer & Wanner, *Solving ODEs II*, IV.8).
    Diverging (``theta >= 1``) or slow iterations fail with NEWTON_FAILED.
    """
    dn_old = 0.0
    for it in range(MAX_NEWTON_ITERATIONS):
        code = evaluate_finite(rhs, args, t, W, Z, fz, ist, fs)
        if code != SUCCESS:
            return code
        copy_row(W, dz, W, base)            # dz = base + hg f(Z) - Z
        axpy(W, dz, hg, W, fz)
        axpy(W, dz, -1.0, W, Z)
        lu_solve(LU, piv, W, dz)
        axpy(W, Z, 1.0, W, dz)
        dn = error_norm(W, dz, Z, Z, tol)
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


@jitable
def implicit_rk_step(rhs, jac, args, m, ctrl, tol, W, J, LU, piv, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``."""
    T, c, flags = m          # implicit stages never reuse f: no FSAL
    s = c.shape[0]
    base, Z, fz, dz, ytmp, ftmp = STAGE + s, STAGE + s + 1, STAGE + s + 2, STAGE + s + 3, STAGE + s + 4, STAGE + s + 5
    explicit_first = T[0, 0] == 0.0          # stage 1 is f(t, y) itself
    code, have_f = linearise(rhs, jac, args, ctrl[C_HAS_JAC] != 0.0, explicit_first, t, W, y, f, have_f,
                             J, ytmp, ftmp, ist, fs)
    if code != SUCCESS:
        return code, have_f, False
    factored = 0.0
    for i in range(s):
        combine(W, base, y, h, T, i, STAGE, i)
        g = T[i, i]
        if g == 0.0:
            if i == 0 and c[0] == 0.0:
                copy_row(W, STAGE, W, f)
            else:
                code = evaluate_finite(rhs, args, t + c[i] * h, W, base, STAGE + i, ist, fs)
                if code != SUCCESS:
                    return code, True, False
            continue
        if g != factored:
            shifted_identity(LU, J, h * g)
            ist[NLU] += 1
            if not lu_factor(LU, piv):
                fs[T_FAIL] = t
                return NEWTON_FAILED, True, False
            factored = g
        copy_row(W, Z, W, base)
        code = newton_solve(rhs, args, t + c[i] * h, h * g, W, base, Z, fz, dz, LU, piv,
                            tol, ctrl[C_NEWTON], ist, fs)
        if code != SUCCESS:
            return code, True, False
        scaled_difference(W, STAGE + i, Z, base, 1.0 / (h * g))
    combine(W, ynew, y, h, T, s, STAGE, s)
    if flags[1] != 0:
        combine(W, ERR, -1, h, T, s + 1, STAGE, s)
    return overflowed(W, ynew, fs), True, False
