"""The step-size controller as the loop sees it: three hooks and their formulas.

The loop (:mod:`.driver`) asks the controller three things, as
OrdinaryDiffEq.jl's controllers answer them: the first step when none was
given (:func:`initial_step`), the factor for ``h`` after a rejected attempt
(:func:`rejected`) and after an accepted one (:func:`accepted`).  The
controller's options live in ``ctrl`` (built by :mod:`odekit.controllers`),
its memory -- the last accepted error -- in the run's ``fs``.  A
self-controlled method (variable-order BDF) chooses its factor during its
attempt and leaves it in ``fs[STEP_FACTOR]``; the hooks hand it on, so the
loop never asks which kind of control runs.
"""

import math

from . import jitable
from .layout import (C_BETA1, C_BETA2, C_EXPONENT, C_FMAX, C_FMIN, C_HOLD, C_KIND, C_PREDICTIVE, C_SAFETY, ERR_PREV,
                     H_PREV, NEWTON_DRAG, SELF, STEP_FACTOR)


@jitable
def accept_factor(ctrl, err, err_prev, after_reject, ratio=0.0, drag=0.0):
    """Growth factor of ``h`` after an accepted step with error norm ``err``.

    ``ctrl[C_SAFETY] err^(-beta1) err_prev^beta2``, with the safety divided by
    ``1 + drag`` after a slow Newton iteration (:func:`newton_drag`).  With
    ``ratio = h / h_prev > 0``, the ratio of this accepted step to the one
    before, the factor is at most ``ratio (err_prev / err)^(1/k)`` times
    that: Gustafsson's prediction (see :func:`accepted`).
    """
    if err == 0.0:
        factor = ctrl[C_FMAX]
    else:
        factor = ctrl[C_SAFETY] / (1.0 + drag) * err ** (-ctrl[C_BETA1]) * max(err_prev, 1e-4) ** ctrl[C_BETA2]
        if ratio > 0.0 and err_prev > 0.0:
            factor *= min(1.0, ratio * (err_prev / err) ** (1.0 / ctrl[C_EXPONENT]))
    factor = min(ctrl[C_FMAX], max(ctrl[C_FMIN], factor))
    if after_reject:
        factor = min(1.0, factor)
    if 1.0 <= factor <= ctrl[C_HOLD]:
        factor = 1.0
    return factor


@jitable
def reject_factor(ctrl, err, drag=0.0):
    """Shrink factor of ``h`` after a step rejected with error norm ``err > 1``."""
    return max(ctrl[C_FMIN], ctrl[C_SAFETY] / (1.0 + drag) * err ** (-1.0 / ctrl[C_EXPONENT]))


@jitable
def newton_drag(iterations, most):
    """How a Newton solve of ``iterations`` (of at most ``most``) lowers the controller's safety.

    The safety becomes ``safety (2 most + 1) / (2 most + iterations)``, as
    in Hairer & Wanner's RADAU5 (*Solving ODEs II*, IV.8) and Shampine &
    Reichelt's ode15s: unchanged after one iteration, nearly halved after
    the most: a step whose iteration converged slowly was close to a size at
    which it fails, and a failure costs more than a somewhat smaller step.
    Returns ``drag``, with which ``safety / (1 + drag)`` is that safety.
    """
    return (iterations - 1.0) / (2.0 * most + 1.0)


@jitable(cold=True)
def initial_step(deriv, rhs, args, t0, t_end, h_max, W, y, f, y1, f1, direction, k, tol, ist, fs):
    """Hairer's starting step (*Solving ODEs I*, II.4, p. 169), unsigned.

    Compares the size of ``W[y]`` and its derivative ``W[f]`` to choose
    ``h0``, takes an explicit Euler step (into row ``y1``) to estimate the
    second derivative, and sets ``h`` so that the local error of a method
    of local order ``k`` would be near tolerance.  Costs one evaluation of
    ``deriv`` (counted), into row ``f1``; if that fails, the first guess
    ``h0`` is returned and the first step meets the failure itself.

    The probe goes no further than ``h_max`` and the end of the run
    ``t_end``: a function defined only on the span is never evaluated outside
    it (SciPy's ``select_initial_step`` bounds its probe so since gh-17341 and
    gh-8848).  The step returned may be longer; the driver limits it to
    ``h_max`` and shortens it to land on ``t_end``, as every step.  With
    ``t_end = t0`` there is no probe, and the step is 0.
    """
    reach = min(abs(t_end - t0), h_max)
    if reach == 0.0:
        return 0.0
    n = W.shape[1]
    d0 = 0.0
    d1 = 0.0
    for q in range(n):
        scale = tol[1, q] + tol[0, q] * abs(W[y, q])
        d0 += (abs(W[y, q]) / scale) ** 2
        d1 += (abs(W[f, q]) / scale) ** 2
    d0 = math.sqrt(d0 / n)
    d1 = math.sqrt(d1 / n)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, reach)
    for q in range(n):
        W[y1, q] = W[y, q] + direction * h0 * W[f, q]
    t1 = t0 + direction * h0
    if direction * (t1 - t_end) > 0.0:      # t0 + (t_end - t0) may round past t_end
        t1 = t_end
    code = deriv(rhs, args, t1, W, y1, f1, ist, fs)
    if code != 0:
        return h0
    d2 = 0.0
    for q in range(n):
        scale = tol[1, q] + tol[0, q] * abs(W[y, q])
        d2 += (abs(W[f1, q] - W[f, q]) / scale) ** 2
    d2 = math.sqrt(d2 / n) / h0
    if max(d1, d2) <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / k)
    return min(100 * h0, h1)


# --- the hooks -------------------------------------------------------------------------

@jitable
def rejected(ctrl, err, fs):
    """The factor for ``h`` after an attempt rejected with error norm ``err > 1``."""
    if ctrl[C_KIND] == SELF:
        return fs[STEP_FACTOR]
    return reject_factor(ctrl, err, fs[NEWTON_DRAG])


@jitable
def accepted(ctrl, err, h, fs, after_reject):
    """The factor for ``h`` after an accepted attempt ``h`` with error norm ``err``; remembers both.

    With ``ctrl[C_PREDICTIVE]``, from the second accepted step on, the
    factor is also bounded by Gustafsson's predictive controller
    (Gustafsson, ACM TOMS 20 (1994); Hairer & Wanner, *Solving ODEs II*,
    IV.8; the default of RADAU5 and of SciPy's Radau): where the error grew
    from the last accepted step to this one by more than ``(h /
    h_prev)^k``, the error's constant grew, which the plain formula takes
    as constant; the prediction extrapolates that growth to the next step.
    The previous error enters as it was, as in SciPy (RADAU5 raises it to at
    least 1e-2, which after a first step of tiny error predicts nothing).
    After a slow Newton iteration the safety is lowered (``fs[NEWTON_DRAG]``,
    written by the stepper).
    """
    if ctrl[C_KIND] == SELF:
        factor = fs[STEP_FACTOR]
    else:
        ratio = abs(h) / fs[H_PREV] if ctrl[C_PREDICTIVE] != 0.0 and fs[H_PREV] > 0.0 else 0.0
        factor = accept_factor(ctrl, err, fs[ERR_PREV], after_reject, ratio, fs[NEWTON_DRAG])
    fs[ERR_PREV] = err
    fs[H_PREV] = abs(h)
    return factor
