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
then stale after every kick (2: the kicks are implicit in ``v``, a step of
:mod:`odekit.kernels.velocity`).  ``flags[1]`` is 1 for staggered leapfrog,
which keeps the velocity at half steps, ``w = v(t + h/2)``, from one step to
the next (in row ``HALF``) and synchronises ``v`` only for output.

Each force is checked for inf and nan as it is computed: a kick costs far
more than the check, and the time of a failure is then known exactly.

Linear damping, ``a = f(t, x) - c v``, is kept out of the force and split
with the drift: the drift of duration ``tau`` becomes the exact flow of
``x' = v, v' = -c v``, ``x += (1 - e^{-c tau})/c v, v *= e^{-c tau}``, and
the kick stays the kick of ``f``.  Both flows are exact, so every scheme
keeps its order, and each drift contracts the symplectic form by exactly
``e^{-c tau}``: a step's Jacobian has determinant ``e^{-h sum(c)}``, as the
true flow's (a conformal symplectic splitting: McLachlan & Quispel,
*Splitting methods*, Acta Numerica 11 (2002), and Bhatt, Floyd & Moore,
*Second order conformal symplectic schemes for damped Hamiltonian systems*,
J. Sci. Comput. 66 (2016)).  The coefficients reach the stepper in row
``DAMP`` of the work matrix (see :func:`load_damping`); the derivative
``[v, f - c v]`` in the rows ``F`` includes the damping, as every other
family's does, so the stepper adds ``c v`` back where it reuses it as the force.

A magnetic force ``v x b`` (``SecondOrderProblem(..., magnetic=...)``) is
kept out of the force too: its field reaches the stepper in row ``FIELD``
(see :mod:`odekit.kernels.boris`) and every kick becomes Boris's push,
which rotates ``v`` about ``b``.  The registry lets only ``boris`` run such
a problem; the rows ``F`` hold ``[v, a + v x b - c v]``.
"""

import math

import numpy as np

from . import compiled_as, jitable
from .boris import boris_kick, has_field, lorentz
from .evaluation import evaluate_finite, overflowed
from .layout import CARRY_H, STAGE, SUCCESS
from .primitives import copy_row

ACC = STAGE          # the force, in the second half (the first half stays finite)
HALF = STAGE + 1     # leapfrog's half-step velocity w, in the second half
DAMP = STAGE + 2     # the damping: c in the second half, aligned with v; its kind in DAMP[0]
UNDAMPED, UNIFORM, PER_COMPONENT = 0.0, 1.0, 2.0     # the kinds: one c for all (in entry n), or one each


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
    for i in range(n):                  # (LLVM vectorised range(n), not range(n, 2 n))
        W[row, n + i] += alpha * W[arow, n + i]


@compiled_as(_kick_loop)
def kick(W, row, alpha, arow):
    """``v += alpha * a``: the velocities of row ``row``, the force in row ``arow``."""
    n = W.shape[1] // 2
    W[row, n:] += alpha * W[arow, n:]


def _drift_into_loop(W, dst, src, alpha):
    n = W.shape[1] // 2
    for i in range(n):
        W[dst, i] = W[src, i] + alpha * W[src, n + i]
        W[dst, n + i] = W[src, n + i]


@compiled_as(_drift_into_loop)
def drift_into(W, dst, src, alpha):
    """Row ``dst`` = row ``src`` drifted by ``alpha``: ``x + alpha v`` and ``v``; :func:`drift` and a copy in one
    pass."""
    n = W.shape[1] // 2
    W[dst, :n] = W[src, :n] + alpha * W[src, n:]
    W[dst, n:] = W[src, n:]


def _kick_into_loop(W, dst, src, alpha, arow):
    n = W.shape[1] // 2
    for i in range(n):
        W[dst, i] = W[src, i]
        W[dst, n + i] = W[src, n + i] + alpha * W[arow, n + i]


@compiled_as(_kick_into_loop)
def kick_into(W, dst, src, alpha, arow):
    """Row ``dst`` = row ``src`` kicked by ``alpha`` times the force in row ``arow``: ``x`` and ``v + alpha a``."""
    n = W.shape[1] // 2
    W[dst, :n] = W[src, :n]
    W[dst, n:] = W[src, n:] + alpha * W[arow, n:]


def _kick_drift_into_loop(W, dst, src, kick_by, arow, drift_by):
    n = W.shape[1] // 2
    for i in range(n):
        v = W[src, n + i] + kick_by * W[arow, n + i]
        W[dst, n + i] = v
        W[dst, i] = W[src, i] + drift_by * v


@compiled_as(_kick_drift_into_loop)
def kick_drift_into(W, dst, src, kick_by, arow, drift_by):
    """Row ``dst`` = row ``src`` kicked by ``kick_by`` times the force in row ``arow``, then drifted by
    ``drift_by``: :func:`kick_into` and :func:`drift` in one pass (``dst`` may be ``src``), the same numbers."""
    n = W.shape[1] // 2
    W[dst, n:] = W[src, n:] + kick_by * W[arow, n:]
    W[dst, :n] = W[src, :n] + drift_by * W[dst, n:]


def _closing_kick_loop(W, row, kick_by, arow):
    n = W.shape[1] // 2
    finite = True
    for i in range(n):
        v = W[row, n + i] + kick_by * W[arow, n + i]
        W[row, n + i] = v
        W[arow, i] = v
        finite &= np.isfinite(v) & np.isfinite(W[row, i])
    return finite


@compiled_as(_closing_kick_loop)
def closing_kick(W, row, kick_by, arow):
    """A step's last kick, ``v += kick_by a``, that also completes row ``arow`` (the force ``a`` in its
    second half) as the derivative ``[v, a]`` there, and whether row ``row`` is then finite: :func:`kick`,
    :func:`copy_velocity` and :func:`~.evaluation.overflowed`'s test in one pass, the same numbers."""
    n = W.shape[1] // 2
    W[row, n:] += kick_by * W[arow, n:]
    W[arow, :n] = W[row, n:]
    return bool(np.isfinite(W[row]).all())


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


# --- linear damping: a = f - c v, c in row DAMP ----------------------------------
# The force adapter of a damped problem (odekit.backend) writes the problem's c -- a constant,
# or a function of the args, so an ensemble's trajectories may each have their own -- into row
# DAMP at every evaluation; the run's first evaluation comes before any step.  A matrix too
# small to hold the row (a probe's, in odekit.diagnosis and odekit.theory) gets the force alone.

def _load_damping_loop(W, c):
    if W.shape[0] > DAMP:
        n = W.shape[1] // 2
        flat = c.ravel()
        W[DAMP, 0] = PER_COMPONENT
        for i in range(n):
            W[DAMP, n + i] = flat[i]


@compiled_as(_load_damping_loop)
def load_damping(W, c):
    """Row ``DAMP`` of ``W`` holds ``c``, an array shaped like the positions: one coefficient each."""
    if W.shape[0] > DAMP:
        n = W.shape[1] // 2
        W[DAMP, 0] = PER_COMPONENT
        W[DAMP, n:] = np.ravel(c)


@jitable
def load_uniform_damping(W, c):
    """Row ``DAMP`` of ``W`` holds ``c``, one number for every component (``c = 0``: undamped)."""
    if W.shape[0] > DAMP:
        W[DAMP, 0] = UNIFORM if c != 0.0 else UNDAMPED
        W[DAMP, W.shape[1] // 2] = c


@jitable
def damped(W):
    """Whether the run has damping (see :func:`load_damping`)."""
    return W[DAMP, 0].real != UNDAMPED


def _damp_loop(W, dst, src, sign):
    n = W.shape[1] // 2
    per_component = W[DAMP, 0].real == PER_COMPONENT
    c = W[DAMP, n]
    for i in range(n):
        if per_component:
            c = W[DAMP, n + i]
        W[dst, n + i] -= sign * c * W[src, n + i]


@compiled_as(_damp_loop)
def damp(W, dst, src, sign):
    """``a -= sign c v``: the velocities' derivatives of row ``dst``, ``v`` of row ``src``, ``c`` of row ``DAMP``.

    ``sign`` 1 adds the damping to a force, -1 takes it out again.
    """
    n = W.shape[1] // 2
    c = W[DAMP, n:] if W[DAMP, 0].real == PER_COMPONENT else W[DAMP, n]
    W[dst, n:] -= sign * c * W[src, n:]


def _subtract_damping_loop(W, dst, src, c):
    n = W.shape[1] // 2
    flat = c.ravel()
    for i in range(n):
        W[dst, n + i] -= flat[i] * W[src, n + i]


@compiled_as(_subtract_damping_loop)
def subtract_damping(W, dst, src, c):
    """``a -= c v`` in row ``dst`` (``v`` of row ``src``), ``c`` an array shaped like the positions.

    The first-order view of a damped problem, ``u' = [v, a - c v]``, for the other families.
    """
    n = W.shape[1] // 2
    W[dst, n:] -= np.ravel(c) * W[src, n:]


def _subtract_uniform_damping_loop(W, dst, src, c):
    n = W.shape[1] // 2
    for i in range(n):
        W[dst, n + i] -= c * W[src, n + i]


@compiled_as(_subtract_uniform_damping_loop)
def subtract_uniform_damping(W, dst, src, c):
    """As :func:`subtract_damping` for one number ``c``."""
    n = W.shape[1] // 2
    W[dst, n:] -= c * W[src, n:]


@jitable
def damping_factors(c, tau):
    """``(e^{-c tau}, (1 - e^{-c tau}) / c)``: the exact flow's factors, the second ``tau`` for ``c = 0``.

    ``expm1`` keeps the second accurate for small ``c tau``, where ``1 - e^{-c tau}`` cancels.
    """
    if c == 0.0:
        return 1.0, tau
    return math.exp(-c * tau), -math.expm1(-c * tau) / c


@jitable
def damped_drift(W, row, tau, vrow):
    """The exact flow of ``x' = v, v' = -c v`` over ``tau``: ``x`` of row ``row``, ``v`` of row ``vrow``.

    ``x += (1 - e^{-c tau})/c v`` with the velocities before they decay by ``e^{-c tau}``.
    Scalar arithmetic both compiled and as Python, so the two give the same numbers.
    """
    n = W.shape[1] // 2
    per_component = W[DAMP, 0].real == PER_COMPONENT
    decay, reach = damping_factors(W[DAMP, n].real, tau)
    for i in range(n):
        if per_component:
            decay, reach = damping_factors(W[DAMP, n + i].real, tau)
        W[row, i] += reach * W[vrow, n + i]
        W[vrow, n + i] *= decay


@jitable
def drift_of(W, row, tau, vrow, with_damping):
    """A drift of ``tau``: damped, or the plain ``x += tau v``."""
    if with_damping:
        damped_drift(W, row, tau, vrow)
    else:
        drift(W, row, tau, vrow)


@jitable
def kick_of(W, row, tau, arow, rotating):
    """A kick of ``tau``: Boris's push in a magnetic field, or the plain ``v += tau a``."""
    if rotating:
        boris_kick(W, row, tau, arow)
    else:
        kick(W, row, tau, arow)


@jitable
def drift_from(W, row, src, tau, with_damping):
    """A drift of ``tau`` of row ``row``, which starts as row ``src``: the plain one copies as it drifts."""
    if src == row or with_damping:
        if src != row:
            copy_row(W, row, W, src)
        drift_of(W, row, tau, row, with_damping)
    else:
        drift_into(W, row, src, tau)


@jitable
def kick_from(W, row, src, tau, arow, rotating):
    """A kick of ``tau`` of row ``row``, which starts as row ``src``: the plain one copies as it kicks."""
    if src == row or rotating:
        if src != row:
            copy_row(W, row, W, src)
        kick_of(W, row, tau, arow, rotating)
    else:
        kick_into(W, row, src, tau, arow)


# --- the step ----------------------------------------------------------------------

@jitable
def splitting_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``.

    The force is computed into row ``fnew``, whose second half is where the
    derivative ``[v, a - c v]`` at ``ynew`` keeps it, and the first kick of
    an undamped step without a field reads it from row ``f`` (see
    :func:`force_row`).  The step's first drift or kick reads row ``y``, so
    that ``ynew`` is written once and not first copied; without damping or
    a field a kick and the drift after it are one pass
    (:func:`kick_drift_into`), and a last kick writes ``f_new`` and checks
    ``y_new`` in its pass (:func:`closing_kick`).  Each pass over the state
    took as long as the force of a few bodies (benchmarks/bench_nbody.py:
    velocity Verlet on the outer solar system 24.8 -> 22.8 ns per step and
    body with these and :func:`kick_drift_kick`); the numbers are the same.
    """
    if m[2][1] != 0:
        return leapfrog_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs)
    drifts, kicks, flags = m
    W = scratch[0]
    velocity_dependent = flags[0] != 0
    with_damping = damped(W)
    rotating = has_field(W)
    plain = not (with_damping or rotating)       # a kick and the drift after it are one pass
    have_a, arow = force_row(W, y, f, have_f, fnew, with_damping, rotating)
    if (plain and have_a and not velocity_dependent and kicks.shape[0] == 2 and drifts[0] == 0.0
            and drifts[2] == 0.0):
        code = kick_drift_kick(rhs, args, t, h, drifts[1], kicks, W, y, f, ynew, fnew, ist, fs)
        return code, have_f, code == SUCCESS
    src = y                                      # the row the next drift or kick starts from
    tau = 0.0
    last = kicks.shape[0] - 1
    drifted = False                              # drift i was made with kick i - 1
    for i in range(last + 1):
        if drifts[i] != 0.0:
            if not drifted:
                drift_from(W, ynew, src, drifts[i] * h, with_damping)
                src = ynew
            tau += drifts[i]
            have_a = False
        if not have_a:
            code = evaluate_finite(rhs, args, t + tau * h, W, src, fnew, ist, fs, W.shape[1] // 2)
            if code != SUCCESS:
                return code, have_f, False
            arow = fnew
        drifted = plain and drifts[i + 1] != 0.0
        if drifted:
            kick_drift_into(W, ynew, src, kicks[i] * h, arow, drifts[i + 1] * h)
        elif i == last and plain and src == ynew and arow == fnew and not velocity_dependent:
            # the step ends with this kick: f_new and the check of y_new come with it
            code = close_step(W, ynew, kicks[i] * h, fnew, fs)
            return code, have_f, code == SUCCESS
        else:
            kick_from(W, ynew, src, kicks[i] * h, arow, rotating)
        src = ynew
        have_a = not velocity_dependent
    if drifted:                                  # the last drift is made
        return finish_step(W, ynew, fnew, arow, 0.0, False, have_f, with_damping, fs)
    return finish_step(W, ynew, fnew, arow, drifts[-1] * h, have_a, have_f, with_damping, fs)


@jitable
def kick_drift_kick(rhs, args, t, h, drift, kicks, W, y, f, ynew, fnew, ist, fs):
    """Velocity Verlet's shape of step (kick, drift, force, kick), the force at ``y`` in row ``f``, as
    :func:`splitting_step` makes it, in two passes over the state and no loop over the kicks; a status.

    The shape of the workhorse on its own: straight, it took 23.8 against
    22.5 ns per step and body of the outer solar system (benchmarks/
    bench_nbody.py), the same numbers.
    """
    kick_drift_into(W, ynew, y, kicks[0] * h, f, drift * h)
    code = evaluate_finite(rhs, args, t + drift * h, W, ynew, fnew, ist, fs, W.shape[1] // 2)
    if code != SUCCESS:
        return code
    return close_step(W, ynew, kicks[1] * h, fnew, fs)


@jitable
def close_step(W, ynew, kick_by, fnew, fs):
    """A step's last kick by :func:`closing_kick`: SUCCESS, or :func:`~.evaluation.overflowed`'s NONFINITE
    when ``y_new`` is not finite (every force was)."""
    return SUCCESS if closing_kick(W, ynew, kick_by, fnew) else overflowed(W, ynew, fs)


@jitable
def force_row(W, y, f, have_f, fnew, with_damping, rotating):
    """``(have_a, arow)``: whether the force at row ``y`` is known, and the row whose second half holds it.

    Row ``f``, the derivative ``[v, a - c v]`` at ``y``, when there is no
    damping; with damping, ``c v`` is added back in row ``fnew``.  With a
    field ``f`` holds ``v x b`` too: the force is evaluated afresh.
    """
    if not have_f or rotating:
        return False, fnew
    if not with_damping:
        return True, f
    copy_row(W, fnew, W, f)
    damp(W, fnew, y, -1.0)                       # the force a alone
    return True, fnew


@jitable
def leapfrog_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """Staggered leapfrog's step (``flags[1]``), its half-step velocity in row ``HALF``; as :func:`splitting_step`."""
    W = scratch[0]
    copy_row(W, ynew, W, y)
    with_damping = damped(W)
    rotating = has_field(W)
    have_a, arow = force_row(W, y, f, have_f, fnew, with_damping, rotating)
    if have_a:
        copy_row(W, ACC, W, arow)                # kept in ACC, which the half-step velocity reads
    if fs[CARRY_H] != h:                         # open the half-step velocity
        if not have_a:
            code = evaluate_finite(rhs, args, t, W, ynew, ACC, ist, fs)
            if code != SUCCESS:
                return code, have_f, False
        copy_row(W, HALF, W, ynew)
        kick(W, HALF, 0.5 * h, ACC)
    drift_of(W, ynew, h, HALF, with_damping)      # drift a whole step with v(t + h/2)
    code = evaluate_finite(rhs, args, t + h, W, ynew, ACC, ist, fs)
    if code != SUCCESS:
        fs[CARRY_H] = 0.0
        return code, have_f, False
    copy_velocity(W, ynew, 1, HALF)
    kick(W, ynew, 0.5 * h, ACC)                  # synchronised v(t + h), for output
    kick(W, HALF, h, ACC)                        # v(t + 3h/2) for the next step
    fs[CARRY_H] = h
    derivative_from_force(W, fnew, ynew, ACC, with_damping)
    return overflowed(W, ynew, fs), have_f, True


@jitable
def finish_step(W, ynew, fnew, arow, last_drift, have_a, have_f, with_damping, fs):
    """A splitting step's end: its last drift (``last_drift``, a length of time), then ``W[fnew]`` from the
    force in row ``arow`` when that force is still the state's (``have_a``); ``(code, have_f, have_fnew)``."""
    if last_drift != 0.0:
        drift_of(W, ynew, last_drift, ynew, with_damping)
        have_a = False
    if have_a:
        derivative_from_force(W, fnew, ynew, arow, with_damping)
        return overflowed(W, ynew, fs), have_f, True
    return overflowed(W, ynew, fs), have_f, False


@jitable
def derivative_from_force(W, dst, src, arow, with_damping):
    """``W[dst] = [v, a + v x b - c v]`` from the force ``a`` in row ``arow`` (``dst`` itself, or another) and ``v``
    of row ``src``."""
    if arow != dst:
        copy_velocity(W, dst, 1, arow)           # (the second halves: the force)
    copy_velocity(W, dst, 0, src)
    if has_field(W):
        lorentz(W, dst, src, 1.0)
    if with_damping:
        damp(W, dst, src, 1.0)


@jitable
def second_order_derivative(rhs, args, t, W, src, dst, ist, fs):
    """``W[dst] = u'(t) = [v, a(t, x, v) + v x b - c v]`` for ``u = [x, v]``: one force evaluation."""
    copy_velocity(W, dst, 0, src)
    code = evaluate_finite(rhs, args, t, W, src, dst, ist, fs)
    if code == SUCCESS and has_field(W):
        lorentz(W, dst, src, 1.0)
    if code == SUCCESS and damped(W):
        damp(W, dst, src, 1.0)
    return code
