"""Kick--drift splitting step for ``x'' = a(t, x, v)``.

The state is ``u = [x, v]`` (flat).  The right-hand side handed to this
family is the force adapter: ``rhs(t, u, out, args)`` writes ``a`` into
``out``.  Method data: ``(drift, kick, flags)`` with ``len(drift) ==
len(kick) + 1``; a step is

    x += drift[0] h v;  v += kick[0] h a;  x += drift[1] h v;  ...;
    v += kick[-1] h a;  x += drift[-1] h v.

The acceleration at the current position is remembered, so a kick that
follows no drift costs nothing: velocity Verlet's closing half-kick and the
next step's opening half-kick share one evaluation.  A kick at drift time
``tau`` (the sum of the drifts so far) evaluates the force at ``t + tau h``.

``flags[0]`` is 1 when the force depends on ``v``: the remembered value is
then stale after every kick.  ``flags[1]`` is 1 for staggered leapfrog,
which keeps the velocity at half steps, ``w = v(t + h/2)``, from one step to
the next and synchronises ``v`` only for output.

Each force is checked for inf and nan as it is computed: a kick costs far
more than the check, and the time of a failure is then known exactly.
"""

from .evaluation import evaluate_finite, overflowed
from .layout import CARRY_H, SUCCESS
from .primitives import axpy, copy_into


def splitting_step(rhs, jac, args, m, ctrl, tol, t, h, y, f, have_f,
                   ynew, fnew, err, scratch, ist, fs):
    """One step of size ``h``; returns ``(code, have_f, have_fnew)``."""
    drift, kick, flags = m
    work = scratch[0]
    n = y.shape[0] // 2
    a = work[0, :n]
    copy_into(ynew, y)
    X = ynew[:n]
    V = ynew[n:]
    velocity_dependent = flags[0] != 0
    have_a = have_f
    if have_a:
        copy_into(a, f[n:])
    if flags[1] != 0:
        w = work[1, :n]
        if fs[CARRY_H] != h:                     # open the half-step velocity
            if not have_a:
                code = evaluate_finite(rhs, args, t, ynew, a, ist, fs)
                if code != SUCCESS:
                    return code, have_f, False
            copy_into(w, V)
            axpy(w, 0.5 * h, a)
        axpy(X, h, w)                            # drift a whole step with v(t + h/2)
        code = evaluate_finite(rhs, args, t + h, ynew, a, ist, fs)
        if code != SUCCESS:
            fs[CARRY_H] = 0.0
            return code, have_f, False
        copy_into(V, w)
        axpy(V, 0.5 * h, a)                      # synchronised v(t + h), for output
        axpy(w, h, a)                            # v(t + 3h/2) for the next step
        fs[CARRY_H] = h
        copy_into(fnew[:n], V)
        copy_into(fnew[n:], a)
        return overflowed(ynew, fs), have_f, True
    tau = 0.0
    for i in range(kick.shape[0]):
        if drift[i] != 0.0:
            axpy(X, drift[i] * h, V)
            tau += drift[i]
            have_a = False
        if not have_a:
            code = evaluate_finite(rhs, args, t + tau * h, ynew, a, ist, fs)
            if code != SUCCESS:
                return code, have_f, False
        axpy(V, kick[i] * h, a)
        have_a = not velocity_dependent
    if drift[-1] != 0.0:
        axpy(X, drift[-1] * h, V)
        have_a = False
    if have_a:
        copy_into(fnew[:n], V)
        copy_into(fnew[n:], a)
        return overflowed(ynew, fs), have_f, True
    return overflowed(ynew, fs), have_f, False


def second_order_derivative(rhs, args, t, y, f, ist, fs):
    """``f = u'(t) = [v, a(t, x, v)]`` for ``u = [x, v]``: one force evaluation."""
    n = y.shape[0] // 2
    copy_into(f[:n], y[n:])
    return evaluate_finite(rhs, args, t, y, f[n:], ist, fs)
