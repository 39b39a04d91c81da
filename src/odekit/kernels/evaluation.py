"""Calling the user's functions from a kernel: counting and checking.

The user's right-hand side reaches the kernels through a small adapter (see
:mod:`odekit.backend`) with the calling convention ``rhs(t, y, out, args)``:
it writes the derivative into ``out`` and returns False when the user's
function returned the wrong number of values.  Counting happens here, in the
kernel, so the user's function is never wrapped in Python to count it.
"""

import math

import numpy as np

from . import jitable
from .layout import BAD_SHAPE, NFEV, NJEV, NONFINITE, SUCCESS, T_FAIL
from .primitives import all_finite, copy_into


@jitable
def evaluate(rhs, args, t, y, out, ist, fs):
    """Evaluate ``rhs`` at ``(t, y)`` into ``out``, counted; return a status code.

    Checks the size of the result but not its finiteness: an explicit stage
    that is inf or nan reaches ``y_new`` (or the error estimate), which is
    checked once per step.  Values that are used on their own -- forces,
    derivatives for output, Jacobian columns, Newton iterates -- go through
    :func:`evaluate_finite`.
    """
    ist[NFEV] += 1
    if not rhs(t, y, out, args):
        fs[T_FAIL] = t
        return BAD_SHAPE
    return SUCCESS


@jitable
def evaluate_finite(rhs, args, t, y, out, ist, fs):
    """:func:`evaluate`, and NONFINITE when the result holds inf or nan."""
    code = evaluate(rhs, args, t, y, out, ist, fs)
    if code == SUCCESS and not all_finite(out):
        fs[T_FAIL] = t
        return NONFINITE
    return code


@jitable
def overflowed(ynew, fs):
    """NONFINITE when ``y_new`` holds inf or nan although every evaluation was finite.

    ``T_FAIL`` is set to nan to say that no evaluation is to blame.  Each
    stepper ends with this check (or a finer one), so the driver need not.
    """
    if all_finite(ynew):
        return SUCCESS
    fs[T_FAIL] = np.nan
    return NONFINITE


@jitable
def store(out, value):
    """Copy a user function's result into ``out``; False if it has the wrong size.

    How every adapter hands a returned array (or scalar) to the kernels.
    """
    r = np.asarray(value)
    if r.size != out.size:
        return False
    copy_into(out, r)
    return True


@jitable
def linearise(rhs, jac, args, has_jac, need_f, t, y, f, have_f, J, ytmp, ftmp, ist, fs):
    """The Jacobian at ``(t, y)``, and f there when ``need_f`` or differencing needs it.

    How every (linearly) implicit step starts.  Returns ``(code, have_f)``.
    ``f`` is checked for inf and nan, since a finite-difference Jacobian is
    built from it.
    """
    if not have_f and (need_f or not has_jac):
        code = evaluate_finite(rhs, args, t, y, f, ist, fs)
        if code != SUCCESS:
            return code, False
        have_f = True
    return jacobian(rhs, jac, args, has_jac, t, y, f, J, ytmp, ftmp, ist, fs), have_f


@jitable
def jacobian(rhs, jac, args, has_jac, t, y, f, J, ytmp, ftmp, ist, fs):
    """Fill ``J`` with df/dy at ``(t, y)``; ``f`` must hold f(t, y).

    Uses the user's Jacobian when ``has_jac`` and forward differences
    otherwise, with the increment of Hairer & Wanner's RADAU5,
    ``sqrt(eps * max(1e-5, |y_j|))``.  Each difference column costs one
    evaluation of ``rhs``, counted in ``nfev``; the Jacobian itself in ``njev``.
    """
    ist[NJEV] += 1
    if has_jac:
        if not jac(t, y, J, args):
            fs[T_FAIL] = t
            return BAD_SHAPE
        for i in range(J.shape[0]):
            if not all_finite(J[i]):
                fs[T_FAIL] = t
                return NONFINITE
        return SUCCESS
    eps = np.finfo(np.float64).eps
    copy_into(ytmp, y)
    for j in range(y.shape[0]):
        delta = math.sqrt(eps * max(1e-5, abs(y[j])))
        ytmp[j] = y[j] + delta
        code = evaluate_finite(rhs, args, t, ytmp, ftmp, ist, fs)
        if code != SUCCESS:
            return code
        J[:, j] = (ftmp - f) / delta
        ytmp[j] = y[j]
    return SUCCESS


def first_order_derivative(rhs, args, t, y, f, ist, fs):
    """``f = y'(t)`` for a first-order system: one checked evaluation of ``rhs``."""
    return evaluate_finite(rhs, args, t, y, f, ist, fs)
