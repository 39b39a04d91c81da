"""Rosenbrock (linearly implicit) step: one LU per step, no Newton iteration.

Method data: ``(T, C, c, d, flags)`` (:meth:`odekit.tableau.RosenbrockTableau.kernel_data`),
in Hairer & Wanner's transformed variables ``u_i = sum_j gamma_ij k_j``
(*Solving ODEs II*, IV.7, eqs. 7.17-7.18, as their RODAS code): ``T`` stacks
``a`` (``s`` rows), ``m`` and the error weights ``m - m_hat``; ``flags =
[estimate, time_derivative]``.  Stage ``i`` solves

    (I - h gamma J) u_i = h gamma f(t + c_i h, y + sum_{j<i} a_ij u_j)
                          + sum_{j<i} C_ij u_j + gamma h^2 d_i f_t,

with ``d`` the row sums of ``Gamma`` and ``f_t`` the time derivative of f
(:func:`time_difference`, two evaluations; skipped for methods without it
and for problems declared ``autonomous``, where it is zero -- as RODAS's
``IFCN = 0``); then ``y_new = y + sum m_i u_i``.  In the variables ``k_i``
each stage would also multiply ``J`` by a vector: ``s n^2`` operations a
step, as many as the LU's for eight unknowns.

Unlike Newton's method in the implicit families, ``J`` enters the result
itself: the order needs the exact Jacobian, and so does a linear invariant
``w^T y``, which the step keeps only as far as ``w^T J = 0`` holds.  A
difference Jacobian (relative error about 1e-12) breaks that by its error
times the stiff entries: on the Bari set's E5 to t = 1e6 at rtol 1e-6,
``y2 - y3 - y4 = 0`` drifted to 1e-18 (4 tolerance units) against 4e-21
(0.01 units) with the exact Jacobian.
"""

from . import jitable
from .evaluation import evaluate_finite, increment, linearise, overflowed
from .layout import C_AUTONOMOUS, C_HAS_JAC, ERR, NEWTON_FAILED, NLU, STAGE, SUCCESS, T0, T_FAIL
from .primitives import axpy, combine, copy_scaled, lu_factor, lu_solve, scaled_difference, shifted_identity


@jitable(cold=True)
def time_difference(rhs, args, t, h, t_start, W, y, f, ft, f1, f2, ist, fs):
    """``W[ft] = df/dt`` at ``(t, W[y])`` by differences of second order, ``W[f]`` holding f there.

    Central (``t +- dt``) where the run has been on both sides; else -- at the
    first step, where ``t - dt`` would be before ``t_start`` and perhaps
    outside the function's domain, or in a step shorter than ``dt`` -- one-sided
    into the step, ``(4 (f(t + s) - f) - (f(t + 2 s) - f)) / (2 s)``, with
    ``2 |s|`` at most ``|h|``: f is never evaluated outside ``[t_start, t + h]``.
    Exactly zero when f does not depend on t.  Two evaluations either way.
    """
    dt = increment(t, True)
    if abs(t - t_start) >= dt and abs(h) >= dt:
        code = evaluate_finite(rhs, args, t + dt, W, y, f1, ist, fs)
        if code == SUCCESS:
            code = evaluate_finite(rhs, args, t - dt, W, y, f2, ist, fs)
        if code == SUCCESS:
            scaled_difference(W, ft, f1, f2, 0.5 / dt)
        return code
    s = min(dt, 0.5 * abs(h)) if h > 0 else -min(dt, 0.5 * abs(h))
    code = evaluate_finite(rhs, args, t + s, W, y, f1, ist, fs)
    if code == SUCCESS:
        code = evaluate_finite(rhs, args, t + 2.0 * s, W, y, f2, ist, fs)
    if code == SUCCESS:
        scaled_difference(W, f1, f1, f, 4.0)
        scaled_difference(W, f2, f2, f, 1.0)
        scaled_difference(W, ft, f1, f2, 0.5 / s)
    return code


@jitable
def rosenbrock_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``."""
    T, C, c, d, flags = m
    W, J, LU, piv = scratch
    s = c.shape[0]
    stage, fi, ytmp, ftmp, ft, fback = (STAGE + s, STAGE + s + 1, STAGE + s + 2, STAGE + s + 3, STAGE + s + 4,
                                        STAGE + s + 5)
    # the order rests on J itself (not just Newton's convergence): central differences
    code, have_f = linearise(rhs, jac, args, ctrl[C_HAS_JAC] != 0.0, True, tol, True, t, W, y, f, have_f,
                             J, ytmp, ftmp, fback, ist, fs)
    if code != SUCCESS:
        return code, have_f, False
    time_derivative = flags[1] != 0 and ctrl[C_AUTONOMOUS] == 0.0
    if time_derivative:
        code = time_difference(rhs, args, t, h, fs[T0], W, y, f, ft, ftmp, fback, ist, fs)
        if code != SUCCESS:
            return code, True, False
    hg = h * C[0, 0]                 # C's diagonal holds gamma
    shifted_identity(LU, J, hg)
    ist[NLU] += 1
    if not lu_factor(LU, piv):
        fs[T_FAIL] = t
        return NEWTON_FAILED, True, False
    for i in range(s):
        u = STAGE + i
        if i == 0:
            copy_scaled(W, u, hg, W, f)
        else:
            combine(W, stage, y, 1.0, T, i, STAGE, i)
            code = evaluate_finite(rhs, args, t + c[i] * h, W, stage, fi, ist, fs)
            if code != SUCCESS:
                return code, True, False
            combine(W, u, -1, 1.0, C, i, STAGE, i)
            axpy(W, u, hg, W, fi)
        if time_derivative and d[i] != 0.0:
            axpy(W, u, hg * h * d[i], W, ft)
        lu_solve(LU, piv, W, u)
    combine(W, ynew, y, 1.0, T, s, STAGE, s)
    if flags[0] != 0:
        combine(W, ERR, -1, 1.0, T, s + 1, STAGE, s)
    return overflowed(W, ynew, fs), True, False
