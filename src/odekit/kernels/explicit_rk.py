"""Explicit Runge--Kutta step for any Butcher tableau.

Method data: ``(T, c, flags)``.  ``T`` stacks the tableau's rows: ``A``
(``s`` rows), then ``b``, then the error weights ``e = b - b_hat`` (zeros
without an embedded pair).  ``flags = [fsal, estimate, -, extra, blend]``:
``fsal`` is 1 when the last stage is f(t + h, y_new) and can start the next
step, ``estimate`` when there is an embedded pair; ``extra`` counts the
interpolation stages, ``blend`` says there is a second estimate ``e2``.
With either, ``T`` goes on with ``e2`` (row ``s + 2``) and the rows of the
interpolation stages (row ``i + 3`` for stage ``i >= s``), and ``c`` holds
their nodes after the step's.  Stage ``i`` lives in row ``STAGE + i`` of
the work matrix.
"""

import math

import numpy as np

from . import jitable
from .evaluation import evaluate
from .layout import ERR, NONFINITE, STAGE, SUCCESS, T_FAIL
from .primitives import all_finite, combine, copy_row, copy_scaled, error_norms

BLEND = 0.01     # weight of the lower estimate in Hairer's blend (his DOP853)


@jitable
def explicit_rk_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One step of size ``h`` from row ``y`` into row ``ynew``.

    Returns ``(code, have_f, have_fnew)``: a status, whether row ``f`` now
    holds f(t, y), and whether row ``fnew`` holds f(t + h, y_new).
    """
    T, c, flags = m
    W = scratch[0]
    s = c.shape[0] - flags[3]       # the interpolation stages are left to extend_stages
    tmp = STAGE + c.shape[0]
    fsal = flags[0] != 0
    if not have_f:
        code = evaluate(rhs, args, t, W, y, f, ist, fs)
        if code != SUCCESS:
            return code, False, False
    copy_row(W, STAGE, W, f)        # every explicit tableau has c[0] = 0, A[0] = 0
    last = s - 1 if fsal else s     # FSAL: A's last row is b, so the last stage's argument is y_new itself
    for i in range(1, last):
        combine(W, tmp, y, h, T, i, STAGE, i)
        code = evaluate(rhs, args, t + c[i] * h, W, tmp, STAGE + i, ist, fs)
        if code != SUCCESS:
            return code, True, False
    combine(W, ynew, y, h, T, last, STAGE, last)
    if fsal:
        code = evaluate(rhs, args, t + c[last] * h, W, ynew, STAGE + last, ist, fs)
        if code != SUCCESS:
            return code, True, False
    estimate = flags[1] != 0
    blended = estimate and flags[4] != 0
    if estimate:
        # without the stages the estimate does not weigh (DOP853's f(t + h, y_new)): it need not wait for them
        weighed = max(last_weight(T, s + 1, s), last_weight(T, s + 2, s) if blended else 0)
        combine(W, ERR, -1, h, T, s + 1, STAGE, weighed)
    # y_new multiplies every stage but an FSAL last one, zero weights too: an inf or nan in any shows
    if not (all_finite(W, ynew) and (not estimate or all_finite(W, ERR))
            and (not fsal or all_finite(W, STAGE + s - 1))):
        return nonfinite_stage(W, c, s, t, h, fs), True, False
    if blended:
        combine(W, tmp, -1, h, T, s + 2, STAGE, weighed)
        blend(W, ERR, tmp, y, ynew, tol)
    if fsal:
        copy_row(W, fnew, W, STAGE + s - 1)
        return SUCCESS, True, True
    return SUCCESS, True, False


@jitable
def last_weight(T, row, m):
    """How many of the first ``m`` weights of row ``row`` of ``T`` to combine: up to its last nonzero one."""
    while m > 0 and T[row, m - 1] == 0.0:
        m -= 1
    return m


@jitable
def nonfinite_stage(W, c, s, t, h, fs):
    """NONFINITE, with ``fs[T_FAIL]`` the time of the first of the ``s`` stages that holds inf or nan.

    Stages are not checked one by one as they are evaluated (that costs a
    pass over each); an inf or nan in any of them reaches the step's result
    (an FSAL last stage, which it does not weigh, is checked on its own), and
    the stages are still there to say which evaluation produced it.
    ``T_FAIL`` is nan when every stage is finite: the combination overflowed.
    """
    for i in range(s):
        if not all_finite(W, STAGE + i):
            fs[T_FAIL] = t + c[i] * h
            return NONFINITE
    fs[T_FAIL] = np.nan
    return NONFINITE


@jitable
def blend(W, err, low, y, ynew, tol):
    """Scale ``W[err]`` so that its error norm is Hairer's blend with the lower estimate ``W[low]``.

    ``|e|^2 / sqrt(|e|^2 + BLEND |e2|^2)`` in the norm of the error test, as
    DOP853 measures its step (Hairer, Nørsett & Wanner, *Solving ODEs I*,
    II.10); the controller then sees one row like any pair's.
    """
    e, e2 = error_norms(W, err, low, y, ynew, tol)
    denominator = math.sqrt(e * e + BLEND * e2 * e2)
    if denominator > 0.0:
        copy_scaled(W, err, e / denominator, W, err)


@jitable
def extend_stages(rhs, args, m, scratch, t, h, y, ist, fs):
    """Evaluate the interpolation stages of the accepted step of size ``h`` from row ``y``.

    Called by the loop only when the step's interpolant is used; returns a
    status.  A tableau without interpolation stages evaluates nothing.
    """
    T, c, flags = m
    W = scratch[0]
    n = c.shape[0]
    tmp = STAGE + n
    for i in range(n - flags[3], n):
        combine(W, tmp, y, h, T, i + 3, STAGE, i)
        code = evaluate(rhs, args, t + c[i] * h, W, tmp, STAGE + i, ist, fs)
        if code != SUCCESS:
            return code
    return SUCCESS
