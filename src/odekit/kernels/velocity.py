"""Splitting steps for velocity-dependent forces ``x'' = a(t, x, v)``: kicks implicit in v.

A kick ``v' = a(x, v)`` at fixed ``x`` has no exact flow, so the kicks of a
scheme are replaced by a first-order method and its adjoint: with ``Phi``
the drift followed by an explicit kick, ``v += tau a(x, v)``, its adjoint
``Phi*`` is an implicit kick, ``v_new = v + tau a(x, v_new)``, followed by
the drift.  Any splitting ``D(d_0) K(k_0) D(d_1) ... K(k_{m-1}) D(d_m)`` is
a composition of ``Phi`` and ``Phi*`` with the same coefficients, and keeps
its order whatever the first-order method (Hairer, Lubich & Wanner,
*Geometric Numerical Integration*, 2nd ed. 2006, II.4 and II.5 (McLachlan's
correspondence of splitting and composition methods)): kick ``j`` becomes an
explicit part ``e_j`` followed by an implicit part ``k_j - e_j``,

    e_0 = d_0,    e_{j+1} = d_{j+1} - (k_j - e_j),

so that each kick solves

    v_new = v + h (e_j a(x, v) + (k_j - e_j) a(x, v_new)).

Velocity Verlet becomes the generalized Stormer--Verlet method of HLW VI.3,
eq. (3.4): ``v_{1/2} = v_0 + h/2 a(x_0, v_{1/2})``, ``x_1 = x_0 + h
v_{1/2}``, ``v_1 = v_{1/2} + h/2 a(x_1, v_{1/2})``; position Verlet a drift,
a trapezoidal kick, a drift.  Symmetric schemes stay symmetric (time
reversible), so Forest--Ruth, PEFRL and Yoshida's compositions keep orders
4 and 6.  A linear damping declared as ``damping=c`` stays in the drifts'
exact flow, which composes as any drift does.

Each implicit kick is solved to round-off: the iteration stops when the
map ``v -> v + h (...)`` moves no velocity by more than ``ROUNDING`` of its
scale (``|v| + |h k a|``), or, where the force's own rounding sets a floor,
when it stops contracting within ``FLOOR``.  It starts as fixed-point
iteration from the explicit kick; when that does not contract, or would
need more iterations than Newton's method costs (the Jacobian ``da/dv``:
the second of the pair the problem's ``jac`` returns, or forward
differences, one evaluation per position; then an iteration or two), it
goes on with simplified Newton.  Every evaluation counts in ``nfev``; the
Jacobian in ``njev``, its factors in ``nlu``.  An iteration that does
not converge stops the attempt with ``NEWTON_FAILED`` at the kick's time.

Where the force does not depend on ``v`` the kicks give bitwise the
numbers of the plain scheme (the explicit kick's force is used as it is),
at two to three times its evaluations.  Newton's matrix is ``I - h i J`` with
``J = [[0, 0], [0, da/dv]]`` over the whole state, so that the kernels'
dense LU applies to rows of the work matrix as they are.
"""

import math

import numpy as np

from . import compiled_as, jitable
from .evaluation import evaluate_finite, increment, keeps_whole, user_jacobian
from .layout import C_HAS_JAC, NEWTON_FAILED, NJEV, NLU, SUCCESS, T_FAIL
from .primitives import copy_row, lu_factor, lu_solve, shifted_identity, zero_row
from .splitting import ACC, copy_velocity, damp, damped, drift_of, finish_step, kick, splitting_step

EPS = np.finfo(np.float64).eps
ROUNDING = 4.0 * EPS       # converged: the map moves v by at most this, relative to its scale
FLOOR = 128.0 * EPS        # ... or by at most this and no longer contracts (the force's rounding)
MAX_ITERATIONS = 50        # evaluations of one implicit kick, Newton's included (its Jacobian not)
MAX_NEWTON_STATE = 1000    # Newton's matrix is allocated for states of at most this many numbers
IMPLICIT_VELOCITY = 2      # flags[0] of a splitting scheme's data whose kicks are made implicit in v


@jitable
def velocity_rows(W):
    """The four rows of the work matrix an implicit kick works in: the last ones.

    ``V0`` the state where the kick starts, ``A0`` the force there, ``R``
    the iteration's result (and Newton's correction), ``AP`` a difference
    quotient's force.  A splitting run's matrix has seven rows after its
    kicks; the first three of them are the splitting kernel's own.
    """
    last = W.shape[0] - 1
    return last - 3, last - 2, last - 1, last


@jitable
def fixed_point_map(W, row, v0, a0, r, kh, share):
    """``W[r] = v0 + kh (a0 + share (a - a0))``, with ``a`` the force in row ``ACC``; returns the scaled change.

    ``share`` is the implicit part of the kick; ``share = 1`` uses ``a``
    alone (``a0`` may be stale).  The change is ``max_i |W[r, i] - W[row,
    i]| / (|v0_i| + |W[r, i] - v0_i| + |W[row, i] - v0_i|)`` over the
    velocities.  Scalar arithmetic both compiled and as
    Python, so the two give the same numbers.
    """
    n = W.shape[1] // 2
    worst = 0.0
    for i in range(n, 2 * n):
        if share == 1.0:
            mean = W[ACC, i]
        else:
            mean = W[a0, i] + share * (W[ACC, i] - W[a0, i])
        new = W[v0, i] + kh * mean
        W[r, i] = new
        change = abs(new - W[row, i])
        if change != 0.0:               # then the scale is not nil either
            worst = max(worst, change / (abs(W[v0, i]) + abs(new - W[v0, i]) + abs(W[row, i] - W[v0, i])))
    return worst


def _store_velocity_block_loop(J, value):
    r = np.asarray(value)
    n = J.shape[0] // 2
    if r.size != n * n:
        return False
    for i in range(n):
        for j in range(n):
            J[n + i, n + j] = r.flat[i * n + j]
    return True


@compiled_as(_store_velocity_block_loop)
def store_velocity_block(J, value):
    """``da/dv`` -- the second of the pair a second-order problem's ``jac`` returns -- into ``J``'s lower right block.

    False when it is not a matrix of the positions' size and the state's
    kind (as :func:`~odekit.kernels.evaluation.store`).  As Python, a
    :mod:`scipy.sparse` matrix is taken too.
    """
    if hasattr(value, "toarray"):
        value = value.toarray()
    r = np.asarray(value)
    n = J.shape[0] // 2
    if r.size != n * n or not keeps_whole(J.dtype, r.dtype):
        return False
    J[n:, n:] = r.reshape(n, n)
    return True


@jitable(cold=True)
def newton_matrix(rhs, jac, args, has_jac, t, W, row, ap, hg, J, LU, piv, ist, fs):
    """``LU`` = the factors of ``I - hg J``, ``J`` = da/dv at ``W[row]``; a status code.

    From the problem's ``jac`` when ``has_jac``, else by forward differences:
    row ``ACC`` holds the force at ``W[row]``, and each velocity costs one
    evaluation.
    """
    n = W.shape[1] // 2
    ist[NJEV] += 1
    if has_jac:
        code = user_jacobian(jac, args, t, W, row, J, fs)
        return code if code != SUCCESS else factor_newton_matrix(t, hg, J, LU, piv, ist, fs)
    for j in range(n, 2 * n):
        vj = W[row, j]
        delta = increment(vj, False)
        W[row, j] = vj + delta
        code = evaluate_finite(rhs, args, t, W, row, ap, ist, fs)
        W[row, j] = vj
        if code != SUCCESS:
            return code
        for i in range(n, 2 * n):
            J[i, j] = (W[ap, i] - W[ACC, i]) / delta
    return factor_newton_matrix(t, hg, J, LU, piv, ist, fs)


@jitable(cold=True)
def factor_newton_matrix(t, hg, J, LU, piv, ist, fs):
    """``LU`` = the factors of ``I - hg J``; NEWTON_FAILED when it is singular."""
    shifted_identity(LU, J, hg)
    ist[NLU] += 1
    if not lu_factor(LU, piv):
        fs[T_FAIL] = t
        return NEWTON_FAILED
    return SUCCESS


@jitable
def newton_pays(change, rate, n):
    """Whether to go on with Newton's method: the fixed point does not contract (``rate >= 1``), or
    would need more iterations to reach ``ROUNDING`` than a Jacobian of ``n`` differences and two
    Newton iterations cost."""
    if rate >= 1.0:
        return True
    return rate > 0.0 and math.log(ROUNDING / change) / math.log(rate) > n + 2


@jitable
def implicit_kick(rhs, jac, args, has_jac, t, h, k, explicit, W, row, have_a, J, LU, piv, ist, fs):
    """Kick the velocities of ``W[row]``: ``v_new = v + h (explicit a(x, v) + (k - explicit) a(x, v_new))``.

    ``have_a``: row ``ACC`` holds the force at ``W[row]``.  On success row
    ``ACC`` holds the force at the last iterate, within round-off of
    ``v_new``.  Returns a status code.
    """
    v0, a0, r, ap = velocity_rows(W)
    kh = k * h
    share = (k - explicit) / k
    copy_row(W, v0, W, row)
    if explicit != 0.0 or have_a:              # the explicit kick is the first iterate
        if not have_a:
            code = evaluate_finite(rhs, args, t, W, row, ACC, ist, fs)
            if code != SUCCESS:
                return code
        copy_row(W, a0, W, ACC)
        kick(W, row, kh, a0)
    newton = False
    change_old = 0.0
    for it in range(MAX_ITERATIONS):
        code = evaluate_finite(rhs, args, t, W, row, ACC, ist, fs)
        if code != SUCCESS:
            return code
        change = fixed_point_map(W, row, v0, a0, r, kh, share)
        rate = change / change_old if it > 0 else 0.0
        if change <= ROUNDING or (change <= FLOOR and rate >= 0.5):
            copy_velocity(W, row, 1, r)
            return SUCCESS
        if not np.isfinite(change) or (newton and rate >= 1.0):
            break
        if not newton and it > 0 and newton_pays(change, rate, W.shape[1] // 2):
            if J.shape[0] != W.shape[1]:          # no room for Newton's matrix: go on if it contracts
                if rate >= 1.0:
                    break
            else:
                newton = True
                code = newton_matrix(rhs, jac, args, has_jac, t, W, row, ap, h * (k - explicit), J, LU, piv,
                                     ist, fs)
                if code != SUCCESS:
                    return code
        if newton:                              # v += (I - h i da/dv)^-1 (map(v) - v)
            n = W.shape[1] // 2
            zero_row(W, ap)
            for i in range(n, 2 * n):
                W[ap, i] = W[r, i] - W[row, i]
            lu_solve(LU, piv, W, ap)
            for i in range(n, 2 * n):
                W[row, i] += W[ap, i]
        else:
            copy_velocity(W, row, 1, r)
        change_old = change
    fs[T_FAIL] = t
    return NEWTON_FAILED


@jitable
def implicit_velocity_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``, kicks implicit in v; ``(code, have_f, have_fnew)``."""
    drifts, kicks, flags = m
    W, J, LU, piv = scratch[0], scratch[1], scratch[2], scratch[3]
    copy_row(W, ynew, W, y)
    with_damping = damped(W)
    have_a = have_f
    if have_a:
        copy_row(W, ACC, W, f)                   # f = [v, a - c v]
        if with_damping:
            damp(W, ACC, y, -1.0)                # the force a alone
    tau = 0.0
    explicit = drifts[0]
    for i in range(kicks.shape[0]):
        if drifts[i] != 0.0:
            drift_of(W, ynew, drifts[i] * h, ynew, with_damping)
            tau += drifts[i]
            have_a = False
        implicit = kicks[i] - explicit
        if implicit == 0.0:                      # an explicit kick, as the plain scheme's
            if not have_a:
                code = evaluate_finite(rhs, args, t + tau * h, W, ynew, ACC, ist, fs)
                if code != SUCCESS:
                    return code, have_f, False
            kick(W, ynew, kicks[i] * h, ACC)
            have_a = False                       # the force was at the old v
        else:
            code = implicit_kick(rhs, jac, args, ctrl[C_HAS_JAC] != 0.0, t + tau * h, h, kicks[i], explicit, W, ynew,
                                 have_a, J, LU, piv, ist, fs)
            if code != SUCCESS:
                return code, have_f, False
            have_a = True
        explicit = drifts[i + 1] - implicit
    return finish_step(W, ynew, fnew, ACC, drifts[-1] * h, have_a, have_f, with_damping, fs)


@jitable
def splitting_or_implicit_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """The splitting family's stepper: kicks implicit in v where the method data asks for them (``flags[0]``)."""
    if m[2][0] == IMPLICIT_VELOCITY:
        return implicit_velocity_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs)
    return splitting_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs)
