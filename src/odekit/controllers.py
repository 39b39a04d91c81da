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

The formulas the loop runs are the kernel hooks of
:mod:`odekit.kernels.control`; this module holds the options.
* :class:`MethodControl` -- the method decides (variable-order BDF).
* :class:`StepDoubling` -- for any method: one step of ``h`` against two of
  ``h/2``; their difference divided by ``2^p - 1`` estimates the error of the
  two half steps (Richardson), and the step adapts by ``(1/err)^(1/(p+1))``.

Where an implicit method's Newton iteration stops is a control parameter too,
chosen by its family (``Family.newton_tolerance``, one of the functions at the
end of this module).
"""

from dataclasses import dataclass
import math

import numpy as np

from . import checks
from .kernels.control import accept_factor, initial_step, reject_factor  # noqa: F401  (the formulas)
from .kernels.layout import (
    C_BETA1, C_BETA2, C_EXPONENT, C_FMAX, C_FMIN, C_HAS_JAC, C_HMAX, C_HMIN, C_HOLD, C_KIND,
    C_LU_CHANGE, C_NEWTON, C_ORDER, C_PREDICTIVE, C_SAFETY, C_SIZE, DOUBLING, EMBEDDED, FIXED, SELF,
)

EPS = np.finfo(float).eps


@dataclass(frozen=True)
class FixedStep:
    """Constant step ``h`` (positive; its sign follows the span)."""

    h: float

    def __post_init__(self):
        object.__setattr__(self, "h", checks.positive("h", self.h, "a positive finite step size"))

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
        checks.real("safety", self.safety, "in (0, 1]", lambda x: 0 < x <= 1)
        checks.real("factor_min", self.factor_min, "in (0, 1)", lambda x: 0 < x < 1)
        checks.real("factor_max", self.factor_max, "greater than 1 and finite", lambda x: 1 < x < math.inf)
        if self.h0 is not None:
            checks.positive("h0", self.h0, "a positive finite number or None")
        h_min = checks.real("h_min", self.h_min, ">= 0 and finite", lambda x: 0 <= x < math.inf)
        h_max = checks.real("h_max", self.h_max, "a positive number (inf: no limit)", lambda x: x > 0)
        if h_min > h_max:
            raise ValueError(f"h_min={self.h_min!r} is larger than h_max={self.h_max!r}; accepted: h_min <= h_max")
        for beta in ("beta1", "beta2"):           # the PI gains of the subclasses that have them
            if getattr(self, beta, None) is not None:
                checks.real(beta, getattr(self, beta), "a finite real number or None")


@dataclass(frozen=True)
class PIController(_Adaptive):
    """PI control for methods with an embedded error estimate.

    ``h_new = h * safety * err^(-beta1) * err_prev^(beta2)``, with
    ``k = min(order, embedded order) + 1`` the order of the local error
    estimate (DOP853's blend of two estimates behaves as one of embedded
    order 7: ``k = 8``, as in Hairer's code).  The defaults are those of Hairer's DOPRI5 code (and
    OrdinaryDiffEq.jl's DP5), ``beta2 = 0.04`` and ``beta1 = 1/5 - 0.75
    beta2`` at ``k = 5``, scaled by ``5/k`` for other orders.  With safety
    0.9 the steps then settle where the error is about 0.45 of the tolerance
    (``0.9^(1/(beta1 - beta2))``); smaller ``beta1 - beta2`` settles lower
    and spends more steps.  ``beta2 = 0`` is plain integral control.

    ``predictive=True`` bounds the factor, from the second accepted step on,
    by Gustafsson's prediction ``(h / h_prev) (err_prev / err)^(1/k)`` times
    itself (Gustafsson, ACM TOMS 20 (1994); Hairer & Wanner, *Solving ODEs
    II*, IV.8): where the error grew faster than the step, the next step is
    cut before it is tried.  ``None`` takes the method family's choice
    (``Family.predictive``), which is on for every pair: with the PI gains
    for the explicit, Runge-Kutta-Nystrom, Rosenbrock and diagonally
    implicit ones, with integral gains ``beta1 = 1/k, beta2 = 0``
    (``Family.integral``) for radau5, RADAU5's and SciPy's Radau's
    controller.  Measured at equal error
    (``benchmarks/bench_controllers.py``: evaluations interpolated at each
    half-decade target error, rtol in eighths of a decade;
    benchmarks/README.md), against the same gains without the bound: 4%
    fewer evaluations for the explicit pairs on nine non-stiff problems (12%
    for vern8 on Arenstorf's orbit, 26% on Kepler's at e = 0.9, where the
    steps shrink towards a close approach and PI alone rejected a fifth of
    its attempts; at most 8% more, bs32 on Lorenz), 7% for the Nystrom pairs
    on four second-order problems (15-22% on Kepler's at e = 0.9), 5% for
    the Rosenbrock and diagonally implicit pairs on four stiff problems (15%
    for rodas5p on Van der Pol at mu = 1000; at most 2% more).  Gustafsson's
    integral gains with the bound spent 2% more than the PI gains with it on
    the non-stiff problems (up to 9% on the pendulum), as many on the
    others.
    """

    beta1: float | None = None
    beta2: float | None = None
    predictive: bool | None = None

    kind = EMBEDDED

    def __post_init__(self):
        super().__post_init__()
        if self.predictive is not None and not isinstance(self.predictive, (bool, np.bool_)):
            raise checks.fail("predictive", "True, False or None (the method family's choice)", self.predictive)

    def exponent(self, method):
        if method.embedded_order is None:
            raise ValueError(
                f"method {method.name!r} has no embedded error estimate; use "
                "StepDoubling (adaptive='doubling') or a fixed step h")
        return min(method.order, method.error_order) + 1

    def params(self, method):
        k = self.exponent(method)
        predictive = method.family.predictive if self.predictive is None else self.predictive
        integral = method.family.integral
        beta2 = (0.0 if integral else 0.2 / k) if self.beta2 is None else self.beta2
        beta1 = (1 / k if integral else (1 - 0.75 * 0.2) / k) if self.beta1 is None else self.beta1
        ctrl = _params(self.kind, method, k, self.safety, self.factor_min,
                       self.factor_max, beta1, beta2, self.h_min, self.h_max)
        ctrl[C_PREDICTIVE] = 1.0 if predictive else 0.0
        return ctrl


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

    Every option applies: the method picks its step and order from its error
    estimates, then ``safety`` (lowered after a slow Newton iteration, as in
    ode15s) and ``factor_min``/``factor_max`` bound the change, as for the
    other controllers (see :mod:`odekit.kernels.bdf`).  The first step, when
    not given, is Hairer's choice for a first-order method.

    Parameters
    ----------
    newton : {'lsode', 'scipy'}
        How each step's Newton iteration runs (see
        :func:`odekit.kernels.bdf.newton`).  ``'lsode'`` (the default) keeps
        the factored matrix while ``h / alpha`` changes by less than 30 %,
        as Hindmarsh's LSODE, and stops at 0.03 of the error tolerance.
        ``'scipy'``, as SciPy's ``BDF``: a new factorisation at every change
        of ``h``, and the stop of :func:`loose_newton_tolerance` -- odekit's
        ndf then takes SciPy's steps and evaluations.  Measured (Van der Pol
        with mu = 1000 at rtol 1e-10, HIRES at 1e-9, Robertson to 1e11 at
        1e-8): 'lsode' spends 10 %, 14 % and 16 % fewer evaluations and a
        quarter to a third of the factorisations, with the same errors to
        within 10 %.  (LSODE's other saving, a contraction rate carried from
        step to step so that one iteration may do, was tried: 3 % fewer
        evaluations, but on Robertson's kinetics with atol = rtol it let y2
        go negative and blow up at 7 of 13 tolerances from 1e-2 to 1e-4.)
    """

    newton: str = "lsode"

    kind = SELF

    def __post_init__(self):
        super().__post_init__()
        if self.newton not in NEWTON_STYLES:
            raise checks.fail("newton", " or ".join(map(repr, NEWTON_STYLES)), self.newton)

    def params(self, method):
        ctrl = _params(self.kind, method, 2, self.safety, self.factor_min,
                       self.factor_max, 0.0, 0.0, self.h_min, self.h_max)
        if self.newton == "lsode":
            ctrl[C_NEWTON] = LSODE_NEWTON_TOLERANCE
            ctrl[C_LU_CHANGE] = LSODE_LU_CHANGE
        return ctrl


def known_by_value(controller):
    """Whether ``controller`` is None or one of odekit's own: frozen, its options numbers and strings, so that
    two equal ones run alike.  A repeated solve may then be known by it, as by its other arguments, and run
    by one compiled call (:mod:`odekit.rerun`); another class (a subclass may keep state) is set up anew."""
    return controller is None or type(controller) in (FixedStep, PIController, StepDoubling, MethodControl)


NEWTON_STYLES = ("lsode", "scipy")
# SciPy's loosest stop (its choice at rtol 1e-3), at every tolerance.  LSODE's own is looser (about half the error
# test): with 0.1, SciPy's fun_linear at rtol 1e-3 ended 3.9 tolerance units off, its classical BDF 2.3
LSODE_NEWTON_TOLERANCE = 0.03
LSODE_LU_CHANGE = 0.3          # LSODE's CCMAX


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
    ctrl[C_NEWTON] = 0.0            # the method family's (runsetup.newton_tolerance) unless the controller sets it
    ctrl[C_HAS_JAC] = 0.0
    # an implicit method keeps its factored Newton matrix while h stays put, so
    # a small growth is not worth a new LU: the family says how small (see families)
    ctrl[C_HOLD] = method.family.hold
    return ctrl


# --- where Newton's iteration stops --------------------------------------------------------
# An implicit kernel stops Newton's iteration when the estimated distance to the
# solution of its stage equations, in the norm of the error test (units of
# atol + rtol |y|), is below ctrl[C_NEWTON].  Each family chooses that fraction
# of the error tolerance (Family.newton_tolerance) from rtol, the smallest one
# when rtol is per component; a floor of a few eps / rtol keeps it above what
# rounding lets the iteration reach.

def radau5_newton_tolerance(rtol):
    """``max(10 eps / rtol, min(0.03, sqrt(rtol)))``: RADAU5's, and SciPy's Radau and BDF.

    The Radau family's.  Hairer & Wanner's RADAU5 (``FNEWT``; *Solving ODEs
    II*, IV.8) applies it to the tolerance it integrates to internally,
    ``0.1 rtol^(2/3)``; SciPy's Radau and BDF (``newton_tol``) to the user's
    ``rtol``, which means what odekit's does.  0.03 at rtol 1e-3: the
    iteration need not be much tighter than the error a step may make
    (there radau5 spends 20-35% fewer evaluations and about half the
    Jacobians on Robertson's, Van der Pol's and HIRES, and ends within 0.2
    tolerance units; the end of Van der Pol's, near a jump, moves with
    what Newton leaves: about 0.1 tolerance units with 1e-3 at rtol 1e-3
    to 2e-2, 0.14 to 2.4 with this, SciPy's Radau 0.13 to 2.2).  1e-4 at rtol
    1e-8: over thousands of steps the Newton errors left in each add up
    (Van der Pol with mu = 1000 at rtol 1e-8 ends 3.3 tolerance units off
    with 1e-3, 0.15 with this, for 6% more evaluations).
    """
    return max(10 * EPS / rtol, min(0.03, math.sqrt(rtol)))


def tight_newton_tolerance(rtol):
    """``max(1e-3, 20 eps / rtol)``: a thousandth of the error tolerance, whatever it is.

    The diagonally implicit family's.  Hairer's SDIRK4 stops at 0.03, but
    odekit's SDIRK methods lose accuracy and robustness with it or with
    :func:`radau5_newton_tolerance` at loose tolerances (measured at rtol
    1e-3: kencarp4 ends HIRES 0.64 tolerance units off instead of 0.06 and
    Bari's E5 14 instead of 3, and fails Robertson's to t = 1e11; trbdf2
    spends 40% more evaluations there; trapezoid runs out of steps on E5),
    a fixed 0.01 still loses some, and at rtol 1e-8 the tighter
    ``sqrt(rtol)`` costs kencarp4 and trbdf2 10-20% more evaluations for no
    consistent gain.
    """
    return max(1e-3, 20 * EPS / rtol)


def loose_newton_tolerance(rtol):
    """The larger of the two above: SciPy's BDF's at rtol >= 1e-6, a thousandth at tighter ones.

    The BDF family's.  SciPy's BDF stops at :func:`radau5_newton_tolerance`
    at every ``rtol``; bdf and ndf do so where it is looser than 1e-3 (at
    rtol 1e-3 they spend 7-23% fewer evaluations on Robertson's, Van der
    Pol's and HIRES, and take SciPy's BDF's evaluations on fun_rational).
    Below rtol 1e-6, where it is tighter, it cost them 10-40% more
    evaluations on those problems at rtol 1e-8 and 1e-10, 2 to 44 times
    more on DETEST F5 and Bari's E5, and all of 200,000 steps on F5 at
    rtol 1e-10, atol 1e-13 (SciPy's BDF was not done after 8 minutes
    there), with no consistent gain in accuracy.
    """
    return max(tight_newton_tolerance(rtol), radau5_newton_tolerance(rtol))
