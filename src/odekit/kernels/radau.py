"""Radau IIA step: three coupled implicit stages, solved as Hairer & Wanner's RADAU5.

Method data: ``(T, TI, c, E, lam)`` (see
:meth:`odekit.tableau.CollocationTableau.kernel_data`).  The stage
increments ``Z_i = Y_i - y`` solve ``A^-1 Z / h = F(Z)``; in the basis
``W = TI Z`` simplified Newton splits into one real system with
``gamma/h I - J`` and one complex system with ``(alpha + i beta)/h I - J``,
solved here in real form as the ``2n x 2n`` block matrix
``[[a I - J, b I], [-b I, a I - J]]`` (*Solving ODEs II*, IV.8).

Work arrays ``(W, J, LUr, pivr, LUc, pivc)``; the rows used after
``STAGE`` are listed below.  As for the diagonally implicit family, the
Jacobian is kept from step to step (a new one after a slow Newton
iteration, or at once when an old one fails) and the two factorisations
while ``h`` is unchanged (to its last bits, :func:`~.evaluation.factors_serve`).
The first Newton iterate extrapolates the collocation polynomial of the
previous attempt (accepted, from where this step starts; or rejected, from
the same point), as RADAU5 does; without one it is ``Z = 0``.  A retry with
a new Jacobian starts again from that iterate.

The step size is the controller's (:class:`odekit.PIController`): for this
family Gustafsson's predictive control, RADAU5's default, with its safety
lowered after a slow Newton iteration -- the number of iterations is left in
``fs[NEWTON_DRAG]`` (:func:`odekit.kernels.control.newton_drag`).
"""

import math

import numpy as np

from . import compiled_as, jitable
from .control import newton_drag
from .evaluation import continues, evaluate_finite, factors_serve, newton_start, overflowed, retake_jacobian
from .layout import (C_NEWTON, CARRY_H, CARRY_T, ERR, JAC_REUSE, LU_HG, NEWTON_DRAG, NEWTON_FAILED,
                     NEWTON_RATE, NLU, STAGE, SUCCESS, T_FAIL)
from .primitives import axpy, combine, copy_row, copy_scaled, error_norm, lu_factor, lu_solve, shifted_identity

Z0 = STAGE           # stage increments Z_0..Z_2
W0 = STAGE + 3       # the same in the eigenbasis of A^-1
F0 = STAGE + 6       # f at the stages
D0 = STAGE + 9       # Newton corrections; D0 + 1, D0 + 2 together hold the complex one
YS = STAGE + 12      # a stage's state y + Z_i
R = STAGE + 13       # right-hand side of the error estimate
ZP = STAGE + 14      # the first Newton iterate of Z, kept for a retry with a new Jacobian
WORK_ROWS = STAGE + 17
BACK = STAGE + 9     # rows borrowed by finite differences of J between Newton solves
MAX_NEWTON_ITERATIONS = 7
SLOW_RATE = 1e-3     # after more than two iterations at a rate above this, take a new Jacobian


def _complex_block_loop(M, J, a, b):
    n = J.shape[0]
    for i in range(n):
        for j in range(n):
            M[i, j] = -J[i, j]
            M[n + i, n + j] = -J[i, j]
            M[i, n + j] = 0.0
            M[n + i, j] = 0.0
        M[i, i] += a
        M[n + i, n + i] += a
        M[i, n + i] = b
        M[n + i, i] = -b


@compiled_as(_complex_block_loop)
def complex_block(M, J, a, b):
    """``M = [[a I - J, b I], [-b I, a I - J]]``: ``(a - i b) I - J`` in real form, ``2n x 2n``."""
    if not isinstance(M, np.ndarray):
        M.complex_block(J, a, b)
        return
    n = J.shape[0]
    eye = np.eye(n)
    M[:n, :n] = a * eye - J
    M[n:, n:] = a * eye - J
    M[:n, n:] = b * eye
    M[n:, :n] = -b * eye


@jitable
def predict(c, W, t, h, fs):
    """The first Newton iterate for the stages of the step ``(t, h)``, in rows ``ZP..``.

    Rows ``Z0..`` hold the stage increments ``Z_i = u(c_i)`` of the last attempt,
    of size ``fs[CARRY_H]`` from ``fs[CARRY_T]``, where ``u`` is the cubic
    collocation polynomial with ``u(0) = 0``.  From the same start it is
    evaluated at ``theta = c_j h / h_old``; from that attempt's end (it was
    accepted) at ``1 + c_j h / h_old``, less ``u(1) = Z_3``.  Otherwise zero.
    """
    h_old = fs[CARRY_H]
    same = h_old != 0.0 and t == fs[CARRY_T]
    after = continues(fs, t)
    n = W.shape[1]
    for j in range(3):
        for q in range(n):
            W[ZP + j, q] = -W[Z0 + 2, q] if after else 0.0
        if not (same or after):
            continue
        theta = (1.0 if after else 0.0) + c[j] * h / h_old
        for i in range(3):                  # Lagrange weight of node c_i (the node 0 has value 0)
            w = theta / c[i]
            for k in range(3):
                if k != i:
                    w *= (theta - c[k]) / (c[i] - c[k])
            axpy(W, ZP + j, w, W, Z0 + i)


@jitable
def collocation(rhs, args, m, ctrl, tol, scratch, t, h, y, ist, fs):
    """Simplified Newton for the stage increments ``Z`` (rows ``Z0..``); returns a status code.

    The factorisations must hold ``gamma/h I - J`` (as ``I - h/gamma J``) and
    the complex block for this ``h``, and rows ``ZP..`` the first iterate
    (:func:`predict`).  After a success ``fs[NEWTON_RATE]`` is the last
    contraction rate if more than two iterations were needed (so that a slow
    convergence asks for a new Jacobian), else 0, and ``fs[NEWTON_DRAG]``
    tells the controller how many iterations it took.
    """
    T, TI, c, E, lam = m
    W, J, LUr, pivr, LUc, pivc = scratch
    n = W.shape[1]
    gam, alpha, beta = lam[0], lam[1], lam[2]
    complex_rows = W[D0 + 1:D0 + 3].reshape(1, 2 * n)       # free: the arrays are borrowed
    for i in range(3):
        copy_row(W, Z0 + i, W, ZP + i)
    for i in range(3):
        combine(W, W0 + i, -1, 1.0, TI, i, Z0, 3)
    kappa = ctrl[C_NEWTON]
    dn_old = 0.0
    rate = 0.0
    for it in range(MAX_NEWTON_ITERATIONS):
        for i in range(3):
            copy_row(W, YS, W, y)
            axpy(W, YS, 1.0, W, Z0 + i)
            code = evaluate_finite(rhs, args, t + c[i] * h, W, YS, F0 + i, ist, fs)
            if code != SUCCESS:
                return code
        # residual TI F - Lambda W / h, then the corrections
        combine(W, D0, -1, 1.0, TI, 0, F0, 3)
        axpy(W, D0, -gam / h, W, W0)
        combine(W, D0 + 1, -1, 1.0, TI, 1, F0, 3)
        axpy(W, D0 + 1, -alpha / h, W, W0 + 1)
        axpy(W, D0 + 1, -beta / h, W, W0 + 2)
        combine(W, D0 + 2, -1, 1.0, TI, 2, F0, 3)
        axpy(W, D0 + 2, beta / h, W, W0 + 1)
        axpy(W, D0 + 2, -alpha / h, W, W0 + 2)
        lu_solve(LUr, pivr, W, D0)
        copy_scaled(W, D0, h / gam, W, D0)
        lu_solve(LUc, pivc, complex_rows, 0)
        dn = math.sqrt((error_norm(W, D0, y, y, tol) ** 2 + error_norm(W, D0 + 1, y, y, tol) ** 2
                        + error_norm(W, D0 + 2, y, y, tol) ** 2) / 3.0)
        if not np.isfinite(dn):
            break
        if it > 0:
            rate = dn / dn_old
            # diverging, or too slow to converge in the iterations left
            if rate >= 1.0 or rate ** (MAX_NEWTON_ITERATIONS - it) / (1.0 - rate) * dn > kappa:
                break
        for i in range(3):
            axpy(W, W0 + i, 1.0, W, D0 + i)
        for i in range(3):
            combine(W, Z0 + i, -1, 1.0, T, i, W0, 3)
        if dn == 0.0 or (it > 0 and rate / (1.0 - rate) * dn < kappa):
            fs[NEWTON_RATE] = rate if it + 1 > 2 else 0.0
            fs[NEWTON_DRAG] = newton_drag(it + 1, MAX_NEWTON_ITERATIONS)
            return SUCCESS
        dn_old = dn
    fs[T_FAIL] = t
    return NEWTON_FAILED


@jitable
def factor_radau(m, scratch, h, ist, fs):
    """Factor ``I - h/gamma J`` and the complex block for step ``h``; False when singular."""
    T, TI, c, E, lam = m
    W, J, LUr, pivr, LUc, pivc = scratch
    shifted_identity(LUr, J, h / lam[0])
    complex_block(LUc, J, lam[1] / h, lam[2] / h)
    ist[NLU] += 2
    if not (lu_factor(LUr, pivr) and lu_factor(LUc, pivc)):
        fs[LU_HG] = 0.0
        return False
    fs[LU_HG] = h
    return True


@jitable
def radau_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``."""
    T, TI, c, E, lam = m
    W, J, LUr, pivr, LUc, pivc = scratch
    code, have_f, fresh = newton_start(rhs, jac, args, ctrl, tol, True, t, W, y, f, have_f, J, YS, BACK, BACK + 1,
                                       ist, fs)
    if code != SUCCESS:
        return code, have_f, False
    predict(c, W, t, h, fs)
    for attempt in range(2):
        if not factors_serve(fs, h) and not factor_radau(m, scratch, h, ist, fs):
            code = NEWTON_FAILED
            fs[T_FAIL] = t
        else:
            code = collocation(rhs, args, m, ctrl, tol, scratch, t, h, y, ist, fs)
        if code != NEWTON_FAILED or fresh:
            break
        # an old Jacobian may be what failed: take it anew and try the same step once more
        fresh = True
        code, have_f = retake_jacobian(rhs, jac, args, ctrl, tol, t, W, y, f, have_f, J, YS, BACK, BACK + 1, ist, fs)
        if code != SUCCESS:
            return code, have_f, False
    ist[JAC_REUSE] = 0 if code == SUCCESS and fs[NEWTON_RATE] > SLOW_RATE else 1
    # the stage polynomial predicts the next attempt, accepted or not
    fs[CARRY_H] = h if code == SUCCESS else 0.0
    fs[CARRY_T] = t
    if code != SUCCESS:
        return code, have_f, False
    copy_row(W, ynew, W, y)
    axpy(W, ynew, 1.0, W, Z0 + 2)             # stiffly accurate: y_new = y + Z_3
    # err = (gamma/h I - J)^-1 (f(y) + sum E_i Z_i / h), with LUr = I - h/gamma J
    combine(W, R, f, 1.0 / h, E, 0, Z0, 3)
    lu_solve(LUr, pivr, W, R)
    copy_scaled(W, ERR, h / lam[0], W, R)
    return overflowed(W, ynew, fs), True, False
