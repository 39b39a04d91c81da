"""Kick--drift splitting step for ``x'' = a(t, x, v)``.

The state is ``u = [x, v]``, a row of the work matrix.  The right-hand side
handed to this family is the force adapter: ``rhs(t, W, src, dst, args)``
writes ``a(t, x, v)`` into the second half of row ``dst`` -- where the
velocity's derivative sits in ``u' = [v, a]``.  Method data: ``(drift, kick,
flags)`` with ``len(drift) == len(kick) + 1``; a step is

    x += drift[0] h v;  v += kick[0] h a;  x += drift[1] h v;  ...;
    v += kick[-1] h a;  x += drift[-1] h v.

The acceleration at the current position is remembered, so a kick that
follows no drift costs nothing: velocity Verlet's closing half-kick and the
next step's opening half-kick share one evaluation.  A kick at drift time
``tau`` (the sum of the drifts so far) evaluates the force at ``t + tau h``.

``flags[0]`` is 1 when the force depends on ``v``: the remembered value is
then stale after every kick.  ``flags[1]`` is 1 for staggered leapfrog,
which keeps the velocity at half steps, ``w = v(t + h/2)``, from one step to
the next (in row ``HALF``) and synchronises ``v`` only for output.

Each force is checked for inf and nan as it is computed: a kick costs far
more than the check, and the time of a failure is then known exactly.
"""

from . import compiled_as, jitable
from .evaluation import evaluate_finite, overflowed
from .layout import CARRY_H, STAGE, SUCCESS
from .primitives import copy_row

ACC = STAGE          # the force, in the second half (the first half stays finite)
HALF = STAGE + 1     # leapfrog's half-step velocity w, in the second half


# --- the halves of a row: positions first, velocities second ---------------------

def _drift_loop(W, row, alpha, vrow):
    n = W.shape[1] // 2
    for i in range(n):
        W[row, i] += alpha * W[vrow, n + i]


@compiled_as(_drift_loop)
def drift(W, row, alpha, vrow):
    """``x += alpha * v``: the positions of row ``row``, the velocities of row ``vrow``."""
    n = W.shape[1] // 2
    W[row, :n] += alpha * W[vrow, n:]


def _kick_loop(W, row, alpha, arow):
    n = W.shape[1] // 2
    for i in range(n, 2 * n):
        W[row, i] += alpha * W[arow, i]


@compiled_as(_kick_loop)
def kick(W, row, alpha, arow):
    """``v += alpha * a``: the velocities of row ``row``, the force in row ``arow``."""
    n = W.shape[1] // 2
    W[row, n:] += alpha * W[arow, n:]


def _copy_velocity_loop(W, dst, dst_half, src):
    n = W.shape[1] // 2
    for i in range(n):
        W[dst, dst_half * n + i] = W[src, n + i]


@compiled_as(_copy_velocity_loop)
def copy_velocity(W, dst, dst_half, src):
    """Copy the velocities of row ``src`` into half ``dst_half`` (0 or 1) of row ``dst``.

    Into the first half it makes ``x' = v`` of a derivative row.
    """
    n = W.shape[1] // 2
    W[dst, dst_half * n:(dst_half + 1) * n] = W[src, n:]


# --- the step ----------------------------------------------------------------------

@jitable
def splitting_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``."""
    drifts, kicks, flags = m
    W = scratch[0]
    copy_row(W, ynew, W, y)
    velocity_dependent = flags[0] != 0
    have_a = have_f
    if have_a:
        copy_row(W, ACC, W, f)                   # f = [v, a]
    if flags[1] != 0:
        if fs[CARRY_H] != h:                     # open the half-step velocity
            if not have_a:
                code = evaluate_finite(rhs, args, t, W, ynew, ACC, ist, fs)
                if code != SUCCESS:
                    return code, have_f, False
            copy_row(W, HALF, W, ynew)
            kick(W, HALF, 0.5 * h, ACC)
        drift(W, ynew, h, HALF)                  # drift a whole step with v(t + h/2)
        code = evaluate_finite(rhs, args, t + h, W, ynew, ACC, ist, fs)
        if code != SUCCESS:
            fs[CARRY_H] = 0.0
            return code, have_f, False
        copy_velocity(W, ynew, 1, HALF)
        kick(W, ynew, 0.5 * h, ACC)              # synchronised v(t + h), for output
        kick(W, HALF, h, ACC)                    # v(t + 3h/2) for the next step
        fs[CARRY_H] = h
        copy_row(W, fnew, W, ACC)
        copy_velocity(W, fnew, 0, ynew)
        return overflowed(W, ynew, fs), have_f, True
    tau = 0.0
    for i in range(kicks.shape[0]):
        if drifts[i] != 0.0:
            drift(W, ynew, drifts[i] * h, ynew)
            tau += drifts[i]
            have_a = False
        if not have_a:
            code = evaluate_finite(rhs, args, t + tau * h, W, ynew, ACC, ist, fs)
            if code != SUCCESS:
                return code, have_f, False
        kick(W, ynew, kicks[i] * h, ACC)
        have_a = not velocity_dependent
    if drifts[-1] != 0.0:
        drift(W, ynew, drifts[-1] * h, ynew)
        have_a = False
    if have_a:
        copy_row(W, fnew, W, ACC)
        copy_velocity(W, fnew, 0, ynew)
        return overflowed(W, ynew, fs), have_f, True
    return overflowed(W, ynew, fs), have_f, False


@jitable
def second_order_derivative(rhs, args, t, W, src, dst, ist, fs):
    """``W[dst] = u'(t) = [v, a(t, x, v)]`` for ``u = [x, v]``: one force evaluation."""
    copy_velocity(W, dst, 0, src)
    return evaluate_finite(rhs, args, t, W, src, dst, ist, fs)
