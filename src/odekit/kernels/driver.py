"""The integration loop shared by every family and controller.

``drive`` advances the run held in ``y, f, fs, ist`` until ``fs[T_END]``,
a step limit, a full output buffer or a failure, writing its progress into
those arrays at every accepted step.  It returns a status code from
:mod:`.layout`.  The family's stepper (``step``) and derivative (``deriv``)
are function arguments, so one loop serves explicit, implicit, Rosenbrock
and splitting methods alike; Numba compiles one specialisation per family
and right-hand side.
"""

import numpy as np

from ..controllers import accept_factor, reject_factor
from .dense import interpolate
from .layout import (
    BAD_SHAPE, BUFFER_FULL, C_HMAX, C_HMIN, C_KIND, C_ORDER,
    CARRY_H, DOUBLING, ERR_PREV, FIXED, H, HAVE_F, KSTEP, LAST_FAIL,
    MAX_ACCEPT, MAX_STEPS, NACCEPT, NDENSE, NONFINITE, NOUT, NREJECT, PAUSE_AFTER,
    PAUSED, RECORD, RECORD_STEPS, RECORD_TEVAL, STEP_UNDERFLOW, SUCCESS, T, T0, T_END, TEVAL_NEXT,
)
from .primitives import copy_into, error_norm

SHRINK_ON_FAILURE = 0.25     # step factor after a non-finite value or a Newton failure


def drive(step, deriv, rhs, jac, args, m, P, ctrl, tol, y, f, fs, ist, scratch,
          t_eval, out_t, out_y, dense_t, dense_y, dense_f, dense_k):
    """Integrate until ``fs[T_END]`` or an earlier stop; return a status code.

    Output goes to ``out_t, out_y`` as ``ist[RECORD]`` asks: nothing, every
    accepted step, or the interpolated state at each ``t_eval``.  With ``dense_t``
    non-empty, every step's end point (and, for a method with its own
    interpolant, its stages) is kept for ``Solution.sol``.
    """
    ynew = np.empty_like(y)
    fnew = np.empty_like(y)
    err = np.empty_like(y)
    yfull = np.empty_like(y)
    ymid = np.empty_like(y)
    fmid = np.empty_like(y)
    K = scratch[0]
    kind = int(ctrl[C_KIND])
    t_end = fs[T_END]
    direction = 1.0 if t_end > fs[T] else -1.0
    eps = np.finfo(np.float64).eps
    record_steps = ist[RECORD] == RECORD_STEPS
    record_teval = ist[RECORD] == RECORD_TEVAL
    dense = dense_t.shape[0] > 0
    own = P.shape[0] > 0 and kind != DOUBLING
    Pused = P if own else P[:0]
    doubling_scale = 1.0 / (2.0 ** ctrl[C_ORDER] - 1.0)
    taken = 0
    after_reject = False
    while True:
        t = fs[T]
        if direction * (t_end - t) <= 0.0:
            return SUCCESS
        if ist[NACCEPT] >= ist[MAX_ACCEPT]:
            return MAX_STEPS
        if taken >= ist[PAUSE_AFTER]:
            return PAUSED
        if (record_steps and ist[NOUT] >= out_t.shape[0]) or (dense and ist[NDENSE] >= dense_t.shape[0]):
            return BUFFER_FULL
        have_f = ist[HAVE_F] != 0

        # --- the step to try
        clipped = False
        if kind == FIXED:
            t_new = fs[T0] + (ist[KSTEP] + 1) * fs[H]
            if direction * (t_new - t_end) >= -1e-9 * abs(fs[H]):
                t_new = t_end
                clipped = True
        else:
            h = fs[H]
            if abs(h) > ctrl[C_HMAX]:
                h = direction * ctrl[C_HMAX]
            t_new = t + h
            if direction * (t_new - t_end) >= 0.0:
                t_new = t_end
                clipped = True
            elif abs(h) < ctrl[C_HMIN]:
                return STEP_UNDERFLOW
        h = t_new - t
        if abs(h) <= 10.0 * eps * max(abs(t), abs(t_new)):
            return STEP_UNDERFLOW

        # --- attempt it
        if kind == DOUBLING:
            fs[CARRY_H] = 0.0
            code, have_f, have_fnew = step(rhs, jac, args, m, ctrl, tol, t, h, y, f, have_f,
                                           yfull, fnew, err, scratch, ist, fs)
            if code == SUCCESS:
                fs[CARRY_H] = 0.0
                code, have_f, have_fmid = step(rhs, jac, args, m, ctrl, tol, t, 0.5 * h, y, f, have_f,
                                               ymid, fmid, err, scratch, ist, fs)
            if code == SUCCESS:
                code, have_fmid, have_fnew = step(rhs, jac, args, m, ctrl, tol, t + 0.5 * h, 0.5 * h,
                                                  ymid, fmid, have_fmid, ynew, fnew, err, scratch, ist, fs)
            if code == SUCCESS:
                err[:] = (ynew - yfull) * doubling_scale
        else:
            code, have_f, have_fnew = step(rhs, jac, args, m, ctrl, tol, t, h, y, f, have_f,
                                           ynew, fnew, err, scratch, ist, fs)
        ist[HAVE_F] = 1 if have_f else 0

        # --- the derivative at the new point, when the output needs it
        wants_f = dense or (record_teval and not own and ist[TEVAL_NEXT] < t_eval.shape[0])
        if code == SUCCESS and wants_f and not have_fnew:
            code = deriv(rhs, args, t_new, ynew, fnew, ist, fs)
            have_fnew = True

        # --- accept or reject
        if code != SUCCESS:
            if kind == FIXED or code == BAD_SHAPE:
                return code
            ist[LAST_FAIL] = code
            ist[NREJECT] += 1
            fs[H] = h * SHRINK_ON_FAILURE
            after_reject = True
            continue
        factor = 1.0
        if kind != FIXED:
            en = error_norm(err, y, ynew, tol)
            if not np.isfinite(en):
                ist[LAST_FAIL] = NONFINITE
                ist[NREJECT] += 1
                fs[H] = h * SHRINK_ON_FAILURE
                after_reject = True
                continue
            if en > 1.0:
                ist[NREJECT] += 1
                fs[H] = h * reject_factor(ctrl, en)
                after_reject = True
                continue
            factor = accept_factor(ctrl, en, fs[ERR_PREV], after_reject)
            fs[ERR_PREV] = max(en, 1e-4)
        after_reject = False

        # --- output
        if record_steps:
            out_t[ist[NOUT]] = t_new
            copy_into(out_y[ist[NOUT]], ynew)
            ist[NOUT] += 1
        elif record_teval:
            while ist[TEVAL_NEXT] < t_eval.shape[0]:
                te = t_eval[ist[TEVAL_NEXT]]
                if direction * (te - t_new) > 0.0:
                    break
                interpolate(Pused, (te - t) / h, h, y, ynew, f, fnew, K, out_y[ist[NOUT]])
                out_t[ist[NOUT]] = te
                ist[NOUT] += 1
                ist[TEVAL_NEXT] += 1
        if dense:
            d = ist[NDENSE]
            dense_t[d] = t_new
            copy_into(dense_y[d], ynew)
            copy_into(dense_f[d], fnew)
            if own:
                dense_k[d - 1, :, :] = K[:dense_k.shape[1]]
            ist[NDENSE] += 1

        # --- commit
        copy_into(y, ynew)
        if have_fnew:
            copy_into(f, fnew)
        ist[HAVE_F] = 1 if have_fnew else 0
        fs[T] = t_new
        ist[NACCEPT] += 1
        taken += 1
        if kind == FIXED:
            if clipped:
                fs[T0] = t_new
                ist[KSTEP] = 0
            else:
                ist[KSTEP] += 1
        elif not clipped:
            fs[H] = h * factor

