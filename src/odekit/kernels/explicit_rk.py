"""Explicit Runge--Kutta step for any Butcher tableau.

Method data: ``(A, b, c, e, fsal)`` as float arrays, ``e = b - b_hat`` the
error weights (empty without an embedded pair), ``fsal`` 1 when the last
stage is f(t + h, y_new) and can start the next step.
"""

import numpy as np

from .evaluation import evaluate
from .layout import NONFINITE, SUCCESS, T_FAIL
from .primitives import all_finite, copy_into, lincomb, weighted_sum


def explicit_rk_step(rhs, jac, args, m, ctrl, tol, t, h, y, f, have_f,
                     ynew, fnew, err, scratch, ist, fs):
    """One step of size ``h``; stages are left in the first rows of ``work``.

    Returns ``(code, have_f, have_fnew)``: a status, whether ``f`` now holds
    f(t, y), and whether ``fnew`` holds f(t + h, y_new).
    """
    A, b, c, e, fsal = m
    work = scratch[0]
    s = b.shape[0]
    K = work
    tmp = work[s]
    if not have_f:
        code = evaluate(rhs, args, t, y, f, ist, fs)
        if code != SUCCESS:
            return code, False, False
    copy_into(K[0], f)      # every explicit tableau has c[0] = 0, A[0] = 0
    for i in range(1, s):
        lincomb(tmp, y, h, A[i], K, i)
        code = evaluate(rhs, args, t + c[i] * h, tmp, K[i], ist, fs)
        if code != SUCCESS:
            return code, True, False
    lincomb(ynew, y, h, b, K, s)
    estimate = e.shape[0] > 0
    if estimate:
        weighted_sum(err, h, e, K, s)
    if not (all_finite(ynew) and (not estimate or all_finite(err))):
        # Stages are not checked one by one (that costs a pass over each); an
        # inf or nan in any of them reaches y_new or the error estimate, and
        # the stages are still here to say which evaluation produced it.
        for i in range(s):
            if not all_finite(K[i]):
                fs[T_FAIL] = t + c[i] * h
                return NONFINITE, True, False
        fs[T_FAIL] = np.nan          # every stage finite: the combination overflowed
        return NONFINITE, True, False
    if fsal:
        copy_into(fnew, K[s - 1])
        return SUCCESS, True, True
    return SUCCESS, True, False
