"""Diagonally implicit Runge--Kutta step, stages solved by Newton's method.

Method data: ``(T, c, flags)`` as for the explicit family; ``A``, the
first ``s`` rows of ``T``, is lower triangular.  A stage with ``A[i, i] == 0``
is explicit.  Each implicit stage solves

    Z = base + h * g * f(t + c_i h, Z),   base = y + h * sum_{j<i} A[i, j] K_j,

by simplified Newton (Hairer & Wanner, *Solving ODEs II*, IV.8).  The
Jacobian and the factored matrix ``I - h g J`` are kept from step to step:

* the Jacobian is reused while Newton contracts fast (rate below
  ``SLOW_RATE``); after a slow step, or a failed iteration with an old
  Jacobian, it is taken anew at the step's start (a failed iteration then
  retries the step at once, before the step size is cut);
* the factors are reused while ``h g`` is unchanged -- which the controller
  helps by keeping ``h`` for small growth factors (``C_HOLD``).

The stage derivative is recovered as ``K_i = (Z - base) / (h g)``, which
costs no evaluation and keeps ``y_new`` consistent with ``Z`` exactly.

The embedded error estimate ``err = h sum e_i K_i`` is multiplied by
``(I - h g J)^-1`` when every implicit stage has the same ``g`` (flag 2):
for a stiff component the raw difference of stage derivatives is huge
while the solution barely moves, and the filter bounds it (Shampine; as in
Hairer & Wanner's RADAU5), so the step size follows the accuracy of the
smooth part instead of starving on the stiff one.
"""

import numpy as np

from . import jitable
from .evaluation import evaluate_finite, factors_serve, newton_start, overflowed, retake_jacobian
from .layout import (C_NEWTON, ERR, JAC_REUSE, LU_HG, NEWTON_FAILED, NEWTON_RATE, NLU, STAGE,
                     SUCCESS, T_FAIL)
from .primitives import (axpy, combine, copy_row, error_norm, inverse_solve, lu_factor, lu_invert,
                         scaled_difference, shifted_identity)

MAX_NEWTON_ITERATIONS = 10
SLOW_RATE = 0.1      # a Newton contraction rate above this asks for a new Jacobian next step


@jitable
def newton_solve(rhs, args, t, hg, W, base, Z, fz, dz, LU, piv, tol, kappa, ist, fs):
    """Solve ``Z = base + hg * f(t, Z)`` (rows of ``W``) with the factored ``LU = I - hg J``.

    Converged when the scaled correction is below ``kappa`` (a fraction of
    the error tolerance), either outright or as estimated from the observed
    contraction rate ``theta`` (Hairer & Wanner, *Solving ODEs II*, IV.8);
    the largest rate seen is kept in ``fs[NEWTON_RATE]``.  Diverging
    (``theta >= 1``) or slow iterations fail with NEWTON_FAILED.
    """
    dn_old = 0.0
    for it in range(MAX_NEWTON_ITERATIONS):
        code = evaluate_finite(rhs, args, t, W, Z, fz, ist, fs)
        if code != SUCCESS:
            return code
        copy_row(W, dz, W, base)            # dz = base + hg f(Z) - Z
        axpy(W, dz, hg, W, fz)
        axpy(W, dz, -1.0, W, Z)
        inverse_solve(LU, piv, W, dz)
        axpy(W, Z, 1.0, W, dz)
        dn = error_norm(W, dz, Z, Z, tol)
        if not np.isfinite(dn):
            break
        if dn <= kappa:
            return SUCCESS
        if it > 0:
            theta = dn / dn_old
            fs[NEWTON_RATE] = max(fs[NEWTON_RATE], theta)
            if theta >= 1.0:
                break
            if theta / (1.0 - theta) * dn <= kappa:
                return SUCCESS
        dn_old = dn
    fs[T_FAIL] = t
    return NEWTON_FAILED


@jitable
def dirk_stages(rhs, args, m, ctrl, tol, W, J, LU, piv, t, h, y, f, ist, fs):
    """All stages of one step from row ``y`` (``W[f]`` holds f there when stage 1 is explicit).

    The stages go to rows ``STAGE + i``; returns a status code.
    """
    T, c, flags = m
    s = c.shape[0]
    base, Z, fz, dz = STAGE + s, STAGE + s + 1, STAGE + s + 2, STAGE + s + 3
    fs[NEWTON_RATE] = 0.0
    for i in range(s):
        combine(W, base, y, h, T, i, STAGE, i)
        g = T[i, i]
        if g == 0.0:
            if i == 0 and c[0] == 0.0:
                copy_row(W, STAGE, W, f)
            else:
                code = evaluate_finite(rhs, args, t + c[i] * h, W, base, STAGE + i, ist, fs)
                if code != SUCCESS:
                    return code
            continue
        if not factors_serve(fs, h * g):
            shifted_identity(LU, J, h * g)
            ist[NLU] += 1
            if not lu_factor(LU, piv):
                fs[LU_HG] = 0.0
                fs[T_FAIL] = t
                return NEWTON_FAILED
            lu_invert(LU, piv)                   # reused by every stage and step it serves
            fs[LU_HG] = h * g
        copy_row(W, Z, W, base)
        code = newton_solve(rhs, args, t + c[i] * h, h * g, W, base, Z, fz, dz, LU, piv,
                            tol, ctrl[C_NEWTON], ist, fs)
        if code != SUCCESS:
            return code
        scaled_difference(W, STAGE + i, Z, base, 1.0 / (h * g))
    return SUCCESS


@jitable
def implicit_rk_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``."""
    T, c, flags = m          # implicit stages never reuse f: no FSAL
    W, J, LU, piv = scratch
    s = c.shape[0]
    ytmp, ftmp, fback = STAGE + s + 4, STAGE + s + 5, STAGE + s + 6
    explicit_first = T[0, 0] == 0.0          # stage 1 is f(t, y) itself
    code, have_f, fresh = newton_start(rhs, jac, args, ctrl, tol, explicit_first, t, W, y, f, have_f,
                                       J, ytmp, ftmp, fback, ist, fs)
    if code != SUCCESS:
        return code, have_f, False
    code = dirk_stages(rhs, args, m, ctrl, tol, W, J, LU, piv, t, h, y, f, ist, fs)
    if code == NEWTON_FAILED and not fresh:
        # an old Jacobian may be what failed: take it anew and try the same step once more
        code, have_f = retake_jacobian(rhs, jac, args, ctrl, tol, t, W, y, f, have_f, J, ytmp, ftmp, fback, ist, fs)
        if code != SUCCESS:
            return code, have_f, False
        code = dirk_stages(rhs, args, m, ctrl, tol, W, J, LU, piv, t, h, y, f, ist, fs)
    # The Jacobian serves the next attempt too: after a failure it was taken at this
    # very state; after a success, unless Newton contracted slowly with it.
    ist[JAC_REUSE] = 0 if code == SUCCESS and fs[NEWTON_RATE] > SLOW_RATE else 1
    if code != SUCCESS:
        return code, have_f, False
    combine(W, ynew, y, h, T, s, STAGE, s)
    if flags[1] != 0:
        combine(W, ERR, -1, h, T, s + 1, STAGE, s)
        if flags[2] != 0:                    # filtered by (I - h g J)^-1, factored for the last stage
            inverse_solve(LU, piv, W, ERR)
    return overflowed(W, ynew, fs), have_f, False   # f at y only if it was needed (not always)
