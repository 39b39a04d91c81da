"""Variable-order, variable-step BDF (orders 1 to 5), in backward differences.

The algorithm of Shampine & Reichelt's ode15s as SciPy's ``BDF`` implements
it (Shampine & Reichelt, SIAM J. Sci. Comput. 18 (1997); Byrne & Hindmarsh,
ACM TOMS 1 (1975) for the quasi-constant step): the history is the array of
backward differences ``D_0 = y, D_1, ..., D_{q+2}`` of the solution at equal
steps ``h``; a change of step rescales it (``D <- (R U)^T D``), a change of
order is free.  Each step predicts ``y_p = sum_{i<=q} D_i``, solves

    y_new = y_p + d,  d - (h / alpha_q) f(t + h, y_new) + psi = 0,
    psi = sum_{1<=i<=q} gamma_i D_i / alpha_q,

by simplified Newton with ``I - (h / alpha_q) J``, and estimates the error
as ``C_{q+1} d``.  ``kappa`` gives the NDFs of Klopfenstein and Shampine
(``kappa = 0``: the classical BDFs).  Newton's iteration keeps its
factors as Hindmarsh's LSODE does by default, or is SciPy's
(``MethodControl(newton=...)``; see :func:`newton`).

The method chooses its own step and order (controller kind SELF): after
each attempt it writes into ``fs[STEP_FACTOR]`` the factor it wants -- after
an error too large, ``safety * err^(-1/(q+1))``; after an acceptable one,
once ``q + 1`` steps of equal size have passed, the best of orders ``q - 1,
q, q + 1`` by their error estimates.  What an accepted attempt changes
(the differences, the order) is committed at the start of the next call,
recognised by its starting time, since only the driver knows whether the
attempt was accepted.

Work arrays ``(W, J, LU, piv, RU)``; ``RU`` is an 18 x 6 scratch matrix
(:func:`history_matrix`).
"""

import numpy as np

from . import jitable
from .evaluation import continues, evaluate_finite, factors_serve, newton_start, overflowed, retake_jacobian
from .layout import (C_FMAX, C_FMIN, C_LU_CHANGE, C_NEWTON, C_SAFETY, CARRY_H, CARRY_T, ERR, FS_FAMILY,
                     IST_FAMILY, JAC_REUSE, LU_HG, NEWTON_FAILED, NLU, STAGE, STEP_ERR, STEP_FACTOR, SUCCESS,
                     T_FAIL)
from .primitives import (abs_matvec, add_to_two, axpy, combine, copy_row, copy_scaled, error_norm, inverse_solve,
                         lu_factor, lu_invert, scaled_difference, scaled_less, scaled_norm, shifted_identity)

MAX_ORDER = 5
KD = STAGE               # the interpolant: D_1 .. D_5 as they would be after the attempt (the "stages")
D0 = STAGE + 5           # the differences D_0 .. D_7
YP = STAGE + 13          # the prediction
PSI = STAGE + 14
DACC = STAGE + 15        # d = y_new - y_p, of the last attempt: committed if it was accepted
DY = STAGE + 16          # a Newton correction
FN = STAGE + 17          # f at the Newton iterate
TMP = STAGE + 18         # six rows for rescaling the differences
YT, FT, FB = STAGE + 24, STAGE + 25, STAGE + 26
WORK_ROWS = STAGE + 27
# BDF's own run state
BDF_H = FS_FAMILY            # the step of the backward differences; 0 = not started
BDF_ORDER = IST_FAMILY       # the current order
BDF_EQUAL = IST_FAMILY + 1   # steps taken at the current step and order
BDF_NEXT = IST_FAMILY + 2    # the order the last attempt chose if accepted; -1 = unchanged
NEWTON_ITERATIONS = 4


def history_matrix():
    """The scratch matrix ``RU`` of :func:`rescale`: ``R``, ``U`` and their product, 6 rows each."""
    return np.zeros((18, 6))


@jitable
def bdf_restart(fs, ist):
    """Forget the history: the next step starts again at order 1 (after the state was changed)."""
    fs[BDF_H] = 0.0


@jitable
def _difference_matrix(M, top, order, factor):
    """``R(order, factor)`` into rows ``top..`` of ``M``: ``R[0, j] = 1``,
    ``R[i, j] = prod_{k=1..i} (k - 1 - factor j) / k`` (and ``R[i, 0] = 0`` for ``i > 0``)."""
    for j in range(order + 1):
        M[top, j] = 1.0
    for i in range(1, order + 1):
        M[top + i, 0] = 0.0
        for j in range(1, order + 1):
            M[top + i, j] = M[top + i - 1, j] * (i - 1 - factor * j) / i


@jitable
def rescale(W, RU, order, factor):
    """``D_0..D_q <- (R U)^T D``: the differences for a step ``factor`` times the old one.

    ``R = R(q, factor)`` (rows 0-5 of ``RU``) and ``U = R(q, 1)`` (rows 6-11);
    the coefficients ``C[i, k] = (R U)[k, i]`` go to rows 12-17, so that the
    new ``D_i`` is one stage-sum of the old ones.

    ``U``'s entries do not depend on ``q``: ``R(5, 1)``, made at the first
    rescale, holds every order's.  Most rescales are at order 5 (154 of 167
    on HIRES at rtol 7.5e-10), told as a constant so that LLVM unrolls the
    loops.  Both together, the same bits (alternating, best of three): bdf
    on HIRES 388 -> 374 us, Robertson to 1e11 311 -> 292, Van der Pol 573
    -> 535.
    """
    if RU[6, 0] != 1.0:
        _difference_matrix(RU, 6, MAX_ORDER, 1.0)
    if order == MAX_ORDER:
        _rescale(W, RU, MAX_ORDER, factor)
    else:
        _rescale(W, RU, order, factor)


@jitable
def _rescale(W, RU, q, factor):
    """:func:`rescale` at order ``q``."""
    _difference_matrix(RU, 0, q, factor)
    for i in range(q + 1):
        for k in range(q + 1):
            acc = 0.0
            for m in range(q + 1):
                acc += RU[k, m] * RU[6 + m, i]
            RU[12 + i, k] = acc
    for i in range(q + 1):
        combine(W, TMP + i, -1, 1.0, RU, 12 + i, D0, q + 1)
    for i in range(q + 1):
        copy_row(W, D0 + i, W, TMP + i)


@jitable
def interpolant(W, q, order):
    """Rows KD..: ``D_1 .. D_order`` as :func:`commit` will make them, and zeros up to ``D_5``.

    With ``y_new`` they are the Newton form of the polynomial through the
    solution at ``t_new, t_new - h, ...`` (degree ``order``, the order the
    next step takes, as SciPy's ``BdfDenseOutput``), which
    :func:`odekit.kernels.dense.interpolate` evaluates: dense output at no
    evaluation of ``f``.
    """
    for j in range(MAX_ORDER, 0, -1):
        if j > order:
            copy_scaled(W, KD + j - 1, 0.0, W, DACC)
        elif j > q:                                # order q + 1: D_{q+1} = d
            copy_row(W, KD + j - 1, W, DACC)
        else:                                      # D_j + D_{j+1} + ... + D_q + d, added as commit adds
            copy_row(W, KD + j - 1, W, D0 + j)
            axpy(W, KD + j - 1, 1.0, W, DACC if j == q else KD + j)


@jitable
def bdf_extend(rhs, args, m, scratch, t, h, y, ist, fs):
    """The family's ``extend``: the interpolant's rows (:func:`interpolant`), made only when the loop uses them.

    Made at every attempt, they were a tenth of a step's time on Van der
    Pol (n = 2); between the attempt and the next call of :func:`bdf_step`
    the differences, ``d`` and the orders they need are unchanged.
    """
    q = ist[BDF_ORDER]
    interpolant(scratch[0], q, ist[BDF_NEXT] if ist[BDF_NEXT] >= 0 else q)
    return SUCCESS


@jitable
def commit(W, ist, fs):
    """The last attempt was accepted: ``d`` enters the differences, and its chosen order applies.

    Nothing writes row DACC between an attempt and the next (a write of the
    state from outside restarts the history), so ``d`` is still there.
    """
    q = ist[BDF_ORDER]
    scaled_difference(W, D0 + q + 2, DACC, D0 + q + 1, 1.0)     # D_{q+2} = d - D_{q+1}
    copy_row(W, D0 + q + 1, W, DACC)                           # D_{q+1} = d
    for i in range(q, -1, -1):                                 # D_i += D_{i+1}
        axpy(W, D0 + i, 1.0, W, D0 + i + 1)
    fs[BDF_H] = fs[CARRY_H]
    if ist[BDF_NEXT] >= 0:          # the attempt chose an order (and a new step, applied by the driver)
        ist[BDF_ORDER] = ist[BDF_NEXT]
        ist[BDF_EQUAL] = 0
    else:
        ist[BDF_EQUAL] += 1


@jitable(cold=True)
def round_off(W, J, c, ynew, tol):
    """The size of a Newton correction that rounding alone makes, in the norm of the tolerance.

    Each component of ``y`` is known to a relative ``eps``; that moves
    ``f`` by up to ``|J| eps |y|`` -- for mass-action kinetics the size of
    ``f``'s terms times ``eps``, which is what remains of their
    cancellation at an equilibrium -- and the residual ``c f`` by ``c``
    times that.  Row TMP is used.
    """
    abs_matvec(W, TMP, J, ynew)
    return abs(c) * np.finfo(np.float64).eps * error_norm(W, TMP, YP, YP, tol)


@jitable
def newton(rhs, args, tol, kappa, W, J, LU, piv, t, c, ynew, ist, fs):
    """Solve ``d = c f(t, y_p + d) - psi`` from ``d = 0``: ``d`` in row DACC, ``y_p + d`` in row ``ynew``.

    Returns ``(code, iterations)``.  Converged, diverging or too slow as in
    :func:`odekit.kernels.implicit_rk.newton_solve`, at most four iterations
    -- except that a correction below ``kappa`` that is no larger than
    rounding makes (:func:`round_off`) converged: there the contraction rate
    is a ratio of rounding errors, which at an equilibrium of a stiff
    problem is 1 or more about half the time, and taken for divergence it
    rejected step after step, whatever their size (DETEST F5: 8,000 to
    1,500,000 evaluations instead of about 150).

    The factors may be those of ``I - c_lu J`` for another ``c_lu``
    (``fs[LU_HG]``): as in Hindmarsh's LSODE (``DSTODE``), :func:`bdf_step`
    keeps them while ``c`` changes by less than ``C_LU_CHANGE``, and each
    correction is then scaled by ``2 / (1 + c / c_lu)``, between what the
    stiff components need (``c_lu / c``) and what the others need (1).
    """
    copy_row(W, ynew, W, YP)
    copy_scaled(W, DACC, 0.0, W, YP)
    dn_old = 0.0
    rate = 0.0
    scale = 1.0 if factors_serve(fs, c) else 2.0 / (1.0 + c / fs[LU_HG])
    for k in range(NEWTON_ITERATIONS):
        code = evaluate_finite(rhs, args, t, W, ynew, FN, ist, fs)
        if code != SUCCESS:
            return code, k
        # each a pass over the rows (as seven passes they took a tenth of a step: HIRES at rtol 1e-9 447 ->
        # 402 us, Robertson 106 -> 95; the same operations in the same order)
        scaled_less(W, DY, c, FN, PSI, DACC)         # dy = c f - psi - d
        inverse_solve(LU, piv, W, DY)
        dn = scaled_norm(W, DY, scale, YP, tol)
        if not np.isfinite(dn):
            break
        rounding = False
        if k > 0:
            rate = dn / dn_old
            if rate >= 1.0 or rate ** (NEWTON_ITERATIONS - k) / (1.0 - rate) * dn > kappa:
                rounding = dn <= kappa and dn <= round_off(W, J, c, ynew, tol)
                if not rounding:
                    break
        add_to_two(W, ynew, DACC, DY)
        if dn == 0.0 or rounding or (k > 0 and rate / (1.0 - rate) * dn < kappa):
            return SUCCESS, k + 1
        dn_old = dn
    fs[T_FAIL] = t
    return NEWTON_FAILED, NEWTON_ITERATIONS


@jitable
def _factor(err, k):
    """The step factor that an error norm ``err`` of local order ``k`` allows (unlimited at 0)."""
    if err == 0.0:
        return np.inf
    return err ** (-1.0 / k)


@jitable
def bdf_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One attempt of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``."""
    gamma, alpha, econst, G, limits = m
    W, J, LU, piv, RU = scratch
    max_order = limits[0]
    if continues(fs, t):
        commit(W, ist, fs)
    fs[CARRY_H] = 0.0
    if fs[BDF_H] == 0.0:                         # a start (or a restart after the state was written)
        if not have_f:
            code = evaluate_finite(rhs, args, t, W, y, f, ist, fs)
            if code != SUCCESS:
                return code, False, False
            have_f = True
        copy_row(W, D0, W, y)
        copy_scaled(W, D0 + 1, h, W, f)
        ist[BDF_ORDER] = 1
        ist[BDF_EQUAL] = 0
        ist[BDF_NEXT] = -1
        fs[BDF_H] = h
    elif abs(h - fs[BDF_H]) > 1e-9 * abs(h):    # (a fixed step's length varies in its last bits)
        rescale(W, RU, ist[BDF_ORDER], h / fs[BDF_H])
        fs[BDF_H] = h
        ist[BDF_EQUAL] = 0
    q = ist[BDF_ORDER]
    copy_row(W, YP, W, D0)                       # y_p = sum D_i
    for i in range(1, q + 1):
        axpy(W, YP, 1.0, W, D0 + i)
    combine(W, PSI, -1, 1.0 / alpha[q], G, 0, D0 + 1, q)
    c = h / alpha[q]
    t_new = t + h
    code, have_f, fresh = newton_start(rhs, jac, args, ctrl, tol, False, t, W, y, f, have_f, J, YT, FT, FB, ist, fs)
    if code != SUCCESS:
        return code, have_f, False
    iterations = 0
    for attempt in range(2):
        if not factors_serve(fs, c, ctrl[C_LU_CHANGE]):
            shifted_identity(LU, J, c)
            ist[NLU] += 1
            if not lu_factor(LU, piv):
                fs[LU_HG] = 0.0
                fs[T_FAIL] = t
                code = NEWTON_FAILED
                break
            lu_invert(LU, piv)                   # tens of solves each: a small matrix's inverse
            fs[LU_HG] = c
        code, iterations = newton(rhs, args, tol, ctrl[C_NEWTON], W, J, LU, piv, t_new, c, ynew, ist, fs)
        if code != NEWTON_FAILED or fresh:
            break
        # an old Jacobian may be what failed: take one at the prediction and try once more
        fresh = True
        code, _ = retake_jacobian(rhs, jac, args, ctrl, tol, t_new, W, YP, FN, False, J, YT, FT, FB, ist, fs)
        if code != SUCCESS:
            return code, have_f, False
    ist[JAC_REUSE] = 1                           # kept until Newton fails with it
    if code != SUCCESS:
        return code, have_f, False
    copy_scaled(W, ERR, econst[q], W, DACC)
    # the driver's norm of the same estimate, against atol + rtol |y_new| as in SciPy's BDF and ode15s (the
    # family's scale_by_new): with max(|y|, |y_new|) a component falling through zero kept the tolerance of
    # its old size, and ndf accepted on SciPy's fun_linear a step that SciPy rejects
    err = fs[STEP_ERR] = error_norm(W, ERR, ynew, ynew, tol)
    # the controller's safety and limits (MethodControl's options), lowered when Newton was slow as ode15s does
    safety = ctrl[C_SAFETY] * (2 * NEWTON_ITERATIONS + 1) / (2 * NEWTON_ITERATIONS + iterations)
    ist[BDF_NEXT] = -1
    fs[STEP_FACTOR] = 1.0                        # until q + 1 equal steps: keep h and q
    if ist[BDF_EQUAL] + 1 >= q + 1:
        # if accepted: the best of orders q - 1, q, q + 1 by their error estimates
        best, delta = _factor(err, q + 1), 0
        if q > 1:
            copy_row(W, TMP, W, D0 + q)          # C_q (D_q + d)
            axpy(W, TMP, 1.0, W, DACC)
            copy_scaled(W, TMP, econst[q - 1], W, TMP)
            fm = _factor(error_norm(W, TMP, ynew, ynew, tol), q)
            if fm > best:
                best, delta = fm, -1
        if q < max_order:
            scaled_difference(W, TMP + 1, DACC, D0 + q + 1, econst[q + 1])   # C_{q+2} (d - D_{q+1})
            fp = _factor(error_norm(W, TMP + 1, ynew, ynew, tol), q + 2)
            if fp > best:
                best, delta = fp, 1
        ist[BDF_NEXT] = q + delta
        fs[STEP_FACTOR] = min(ctrl[C_FMAX], safety * best)
    if err > 1.0:                                # rejected (unless the step is fixed)
        fs[STEP_FACTOR] = max(ctrl[C_FMIN], safety * _factor(err, q + 1))
    fs[CARRY_T] = t
    fs[CARRY_H] = h
    return overflowed(W, ynew, fs), have_f, False
