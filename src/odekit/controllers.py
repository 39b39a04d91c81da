"""Step-size controllers: who decides ``h``, separate from the method.

A controller is a frozen set of options.  ``solve`` turns it, with the
method's order, into a small parameter array for the kernels; the per-run
state (current ``h``, previous error) lives in the run, never here.  The
formulas below are written once and run in both backends.

* :class:`FixedStep` -- a constant ``h``; the last step is shortened to land
  on the end of the span.
* :class:`PIController` -- for embedded pairs: proportional--integral control
  of the error estimate (Gustafsson; Hairer & Wanner, *Solving ODEs II*,
  IV.2), with Hairer's initial-step selection (in the kernel, before the
  first step) when ``h0`` is not given.
* :class:`MethodControl` -- the method decides (variable-order BDF).
* :class:`StepDoubling` -- for any method: one step of ``h`` against two of
  ``h/2``; their difference divided by ``2^p - 1`` estimates the error of the
  two half steps (Richardson), and the step adapts by ``(1/err)^(1/(p+1))``.
"""

from dataclasses import dataclass
import math

import numpy as np

from .kernels import jitable
from .kernels.layout import (
    C_BETA1, C_BETA2, C_EXPONENT, C_FMAX, C_FMIN, C_HAS_JAC, C_HMAX, C_HMIN, C_HOLD,
    C_KIND, C_NEWTON, C_ORDER, C_SAFETY, C_SIZE, DOUBLING, EMBEDDED, FIXED, SELF,
)


def _positive(name, value, allow_inf=False):
    value = float(value)
    if not (value > 0 and (allow_inf or math.isfinite(value))):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return value


@dataclass(frozen=True)
class FixedStep:
    """Constant step ``h`` (positive; its sign follows the span)."""

    h: float

    def __post_init__(self):
        object.__setattr__(self, "h", _positive("h", self.h))

    kind = FIXED

    def params(self, method):
        return _params(self.kind, method, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, math.inf)


@dataclass(frozen=True)
class _Adaptive:
    """Options shared by the adaptive controllers.

    Parameters
    ----------
    safety : float
        Fraction of the optimal step actually taken (0.9).
    factor_min, factor_max : float
        Limits of the step change per step (0.2 and 10); after a rejected
        step the next may not grow.
    h0 : float, optional
        First step; by default chosen by Hairer's algorithm.
    h_min : float
        The run fails with ``STEP_UNDERFLOW`` if the step must go below this
        (default 0: only floating-point underflow stops it).
    h_max : float
        Largest step allowed (default: no limit).
    """

    safety: float = 0.9
    factor_min: float = 0.2
    factor_max: float = 10.0
    h0: float | None = None
    h_min: float = 0.0
    h_max: float = math.inf

    def __post_init__(self):
        if not 0 < self.safety <= 1:
            raise ValueError(f"safety must be in (0, 1], got {self.safety!r}")
        if not 0 < self.factor_min < 1:
            raise ValueError(f"factor_min must be in (0, 1), got {self.factor_min!r}")
        if not self.factor_max > 1:
            raise ValueError(f"factor_max must be greater than 1, got {self.factor_max!r}")
        if self.h0 is not None:
            _positive("h0", self.h0)
        if not self.h_min >= 0:
            raise ValueError(f"h_min must be >= 0, got {self.h_min!r}")
        _positive("h_max", self.h_max, allow_inf=True)


@dataclass(frozen=True)
class PIController(_Adaptive):
    """PI control for methods with an embedded error estimate.

    ``h_new = h * safety * err^(-beta1) * err_prev^(beta2)``, with
    ``k = min(order, embedded order) + 1`` the order of the local error
    estimate.  The defaults are those of Hairer's DOPRI5 code (and
    OrdinaryDiffEq.jl's DP5), ``beta2 = 0.04`` and ``beta1 = 1/5 - 0.75
    beta2`` at ``k = 5``, scaled by ``5/k`` for other orders.  With safety
    0.9 the steps then settle where the error is about 0.45 of the tolerance
    (``0.9^(1/(beta1 - beta2))``); smaller ``beta1 - beta2`` settles lower
    and spends more steps.  ``beta2 = 0`` is plain integral control.
    """

    beta1: float | None = None
    beta2: float | None = None

    kind = EMBEDDED

    def exponent(self, method):
        if method.embedded_order is None:
            raise ValueError(
                f"method {method.name!r} has no embedded error estimate; use "
                "StepDoubling (adaptive='doubling') or a fixed step h")
        return min(method.order, method.embedded_order) + 1

    def params(self, method):
        k = self.exponent(method)
        beta2 = 0.2 / k if self.beta2 is None else self.beta2
        beta1 = (1 - 0.75 * 0.2) / k if self.beta1 is None else self.beta1
        return _params(self.kind, method, k, self.safety, self.factor_min,
                       self.factor_max, beta1, beta2, self.h_min, self.h_max)


@dataclass(frozen=True)
class StepDoubling(_Adaptive):
    """Step doubling (Richardson extrapolation) for any method.

    Each step costs about three steps of the method: ``h`` once and ``h/2``
    twice.  The two half steps are kept; ``k = order + 1``, with integral
    control ``h_new = h * safety * (1/err)^(1/k)`` by default.
    """

    beta1: float | None = None
    beta2: float = 0.0

    kind = DOUBLING

    def exponent(self, method):
        return method.order + 1

    def params(self, method):
        k = self.exponent(method)
        beta1 = 1.0 / k if self.beta1 is None else self.beta1
        return _params(self.kind, method, k, self.safety, self.factor_min,
                       self.factor_max, beta1, self.beta2, self.h_min, self.h_max)


@dataclass(frozen=True)
class MethodControl(_Adaptive):
    """The method chooses its own steps (and order): variable-order BDF.

    Only ``h0``, ``h_min`` and ``h_max`` apply; safety and the factor limits
    are the method's own (see :mod:`odekit.kernels.bdf`).  The first step,
    when not given, is Hairer's choice for a first-order method.
    """

    kind = SELF

    def params(self, method):
        return _params(self.kind, method, 2, self.safety, self.factor_min,
                       self.factor_max, 0.0, 0.0, self.h_min, self.h_max)


def _params(kind, method, k, safety, fmin, fmax, beta1, beta2, hmin, hmax):
    ctrl = np.zeros(C_SIZE)
    ctrl[C_KIND] = kind
    ctrl[C_EXPONENT] = k
    ctrl[C_SAFETY] = safety
    ctrl[C_FMIN] = fmin
    ctrl[C_FMAX] = fmax
    ctrl[C_BETA1] = beta1
    ctrl[C_BETA2] = beta2
    ctrl[C_HMIN] = hmin
    ctrl[C_HMAX] = hmax
    ctrl[C_ORDER] = method.order
    ctrl[C_NEWTON] = 1e-3
    ctrl[C_HAS_JAC] = 0.0
    # an implicit method keeps its factored Newton matrix while h stays put, so
    # a small growth is not worth a new LU (Hairer & Wanner's RADAU5 keeps h
    # for factors in [1, 1.2])
    ctrl[C_HOLD] = IMPLICIT_HOLD if method.family in ("implicit_rk", "radau") else 1.0
    return ctrl


IMPLICIT_HOLD = 1.2


# --- the formulas, run by the kernels in both backends -------------------------

@jitable
def accept_factor(ctrl, err, err_prev, after_reject):
    """Growth factor of ``h`` after an accepted step with error norm ``err``."""
    if err == 0.0:
        factor = ctrl[C_FMAX]
    else:
        factor = ctrl[C_SAFETY] * err ** (-ctrl[C_BETA1]) * err_prev ** ctrl[C_BETA2]
    factor = min(ctrl[C_FMAX], max(ctrl[C_FMIN], factor))
    if after_reject:
        factor = min(1.0, factor)
    if 1.0 <= factor <= ctrl[C_HOLD]:
        factor = 1.0
    return factor


@jitable
def reject_factor(ctrl, err):
    """Shrink factor of ``h`` after a step rejected with error norm ``err > 1``."""
    return max(ctrl[C_FMIN], ctrl[C_SAFETY] * err ** (-1.0 / ctrl[C_EXPONENT]))


@jitable
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
