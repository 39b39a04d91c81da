"""Invariant drift: how far an invariant wanders, and whether it is bounded or secular."""

from dataclasses import dataclass, field, fields
import math

import numpy as np

from .. import checks
from ..solution import invariant_values

EPS = np.finfo(float).eps
MIN_CYCLES = 4          # upward crossings of the motion (three whole oscillations) before a drift is classified
CYCLE_COLUMNS = 16      # state components examined at once when counting oscillations


# =====================================================================================
# Invariant drift
# =====================================================================================

@dataclass(frozen=True, eq=False)
class InvariantDrift:
    """How far an invariant ``I`` wandered along a run, and how it trends.

    Attributes
    ----------
    name : str
        The invariant.
    method : str
    initial : float
        ``I(t0)``.
    relative : bool
        True: drifts are relative, divided by ``|I(t0)|``; False: absolute
        (``I(t0) = 0``).
    max : float
        ``max_t |d(t)|`` with ``d(t) = (I(t) - I(t0)) / scale``.
    final : float
        ``|d(t_end)|``.
    signed_final : float
        ``d(t_end)``, signed: positive when ``I`` grew (explicit Euler's
        energy), negative when it was lost.
    trend : str
        The classification: ``"bounded"``, ``"secular"`` or ``"too short"``
        (the rule is in :func:`invariant_drift`); ``"unknown"`` for a run with
        fewer than four output times (a run that failed at once), whose
        ``rate``, ``slope`` and ``growth`` are nan.
    rate : float
        Least-squares slope of ``|d|`` against time: how fast the size of the
        drift grows per unit time (positive for a secular drift; near zero,
        of either sign, for a bounded one).
    slope : float
        Least-squares slope of the signed ``d`` against time: its sign says
        whether ``I`` grows or decays.
    growth : float
        ``M(t_end) / M(t_mid)``, ``M`` the running maximum of ``|d|``.
    linear_share : float
        ``|slope| (t_end - t0) / max``: the part of the largest drift that a
        straight line explains.
    cycles : int
        Upward crossings of the motion in the run (:func:`motion_cycles`):
        about the number of its oscillations.
    mean_shift : float
        Change of the drift's mean over one oscillation, from the first to
        the last cycle (least-squares line through the cycle means), over
        ``max``; nan with fewer than three whole cycles.
    t, drift : ndarray
        Output times and ``d(t)``, for plots.
    """

    name: str
    method: str
    initial: float
    relative: bool
    max: float
    final: float
    signed_final: float
    trend: str
    rate: float
    slope: float
    growth: float
    linear_share: float
    cycles: int
    mean_shift: float
    t: np.ndarray = field(repr=False)
    drift: np.ndarray = field(repr=False)

    @property
    def secular(self):
        return self.trend == "secular"

    @property
    def bounded(self):
        return self.trend == "bounded"

    def as_dict(self):
        """The scalar attributes as a dict (without the arrays)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("t", "drift")}

    def __str__(self):
        how = "relative" if self.relative else "absolute"
        if self.secular:
            detail = f"{self.rate:+.3g}/unit time"
        elif self.trend == "too short":
            detail = f"the motion crossed upward {self.cycles} time(s); {MIN_CYCLES} are needed to judge"
        else:
            detail = f"envelope x{self.growth:.3g} over the second half"
        return (f"{self.name} ({self.method}): max {how} drift {self.max:.3e}, final {self.signed_final:+.3e}; "
                f"{self.trend} ({detail})")


def invariant_drift(solution, name, *, growth_threshold=1.5, linear_threshold=0.5, shift_threshold=0.05,
                    min_cycles=MIN_CYCLES, roundoff=1e3 * EPS):
    """Drift of an invariant along a run, classified as bounded or secular.

    With ``I0 = I(t0)`` and ``scale = |I0|`` (or 1 when ``I0 = 0``: the drift
    is then absolute, ``relative=False``), the drift is ``d(t) = (I(t) -
    I0) / scale``; ``max`` and ``final`` are ``max |d|`` and ``|d(t_end)|``.

    Classification rule.  A symplectic method's energy error stays bounded
    and oscillates with the motion (Hairer, Lubich & Wanner, *Geometric
    Numerical Integration*, IX.8 and X.3); a non-symplectic method's drifts
    secularly, linearly in time for Runge--Kutta methods on Kepler's
    problem, exponentially for explicit Euler on an oscillator (its energy
    is multiplied by ``1 + h^2 omega^2`` every step), or decelerating (Euler
    on Kepler: the orbit widens and slows).  Three statistics separate them:

    * envelope growth ``growth = M(t_end) / M(t_mid)``, with ``M(t) =
      max_{s <= t} |d(s)|`` the running maximum and ``t_mid`` the middle of
      the span: a bounded error reaches its envelope within a few
      oscillations, so ``growth ~ 1``; linear drift gives 2, faster drift
      more;
    * linear share ``|r| (t_end - t0) / max |d|``, with ``r`` (``slope``) the
      least-squares slope of ``d`` against ``t``: a drift that a straight
      line explains gives about 1 (also a decelerating one), an oscillation
      about a constant mean gives nearly 0 over many periods;
    * mean shift: the mean of ``d`` over each oscillation of the motion
      (between successive upward crossings, :func:`motion_cycles`) is
      constant for a bounded error and moves for a secular one, also when a
      large oscillation hides the drift from the first two -- Heun on
      Kepler's orbit at ``h = 0.002``, whose energy error swings by 3e-5 at
      every pericentre while its orbit mean climbs by 1e-6 per orbit.
      ``mean_shift`` is the change of the cycle means along their
      least-squares line, over ``max |d|``.

    The drift is ``"bounded"`` if ``max |d| <= roundoff`` (a random walk of
    round-off grows like ``sqrt(t)``; ``roundoff`` keeps it out).  Otherwise
    the motion must cross upward ``min_cycles`` (4) times, three whole
    oscillations between the crossings, or the run is ``"too short"``: over
    a few periods an error can look secular or hide its drift, and a
    bounded variation slower than the run cannot be told from a drift (on
    one Kepler orbit a symplectic method's energy error rises to its
    pericentre peak at the very end and looks secular; on three, RK4's
    looks bounded).  Then it is ``"secular"`` if ``growth >
    growth_threshold`` (1.5), the linear share exceeds ``linear_threshold``
    (0.5), or ``mean_shift > shift_threshold`` (0.05) with the cycle means
    on their line (the shift more than three times their scatter about
    it); otherwise ``"bounded"``.  Measured at 1000 evaluations per unit
    time on Kepler (e = 0.5, 0.9), the pendulum, the oscillator,
    Hénon--Heiles, a spring chain and the outer solar system (one
    evaluation per day): the splitting methods' mean shifts stay below 0.02,
    those of Heun, midpoint and RK4 are above 0.12.  ``rate`` is the
    least-squares slope of ``|d|`` against ``t``, the growth of the drift
    per unit time.

    Invariants are evaluated with :func:`invariant_values` (vectorised when
    the invariant function accepts trajectories).

    Parameters
    ----------
    solution : Solution
    name : str
        One of ``solution.problem.invariants``.
    growth_threshold : float
        Envelope growth over the second half above which the drift is secular (> 1).
    linear_threshold : float
        Linear share above which the drift is secular (in (0, 1]).
    shift_threshold : float
        Mean shift above which the drift is secular (in (0, 1]).
    min_cycles : int
        Upward crossings of the motion a run needs to be classified (>= 4:
        the mean shift needs three whole cycles).
    roundoff : float
        Drifts whose largest value stays below this are bounded.

    Returns
    -------
    InvariantDrift

    Raises
    ------
    ValueError
        For an unknown invariant or a bad threshold.  (A run with fewer than
        four output times -- one that failed at once -- gets ``trend =
        "unknown"``, not an error, so that a comparison of many runs goes on.)
    """
    growth_threshold = checks.real("growth_threshold", growth_threshold, "a number > 1 (growth of the drift envelope "
                                   "over the second half of the run)", lambda x: 1 < x < math.inf)
    linear_threshold = checks.real("linear_threshold", linear_threshold, "a number in (0, 1] (share of the largest "
                                   "drift explained by a straight line)", lambda x: 0 < x <= 1)
    shift_threshold = checks.real("shift_threshold", shift_threshold, "a number in (0, 1] (change of the drift's "
                                  "mean over a cycle of the motion, from first to last cycle, over the largest drift)",
                                  lambda x: 0 < x <= 1)
    min_cycles = checks.count("min_cycles", min_cycles, 4, accepted="an integer >= 4 (upward crossings of the "
                              "motion needed to tell bounded from secular)")
    roundoff = checks.real("roundoff", roundoff, "a finite number >= 0", lambda x: 0 <= x < math.inf)
    values = invariant_values(solution, name)
    if np.iscomplexobj(values):
        values = values.real if not np.any(values.imag) else np.abs(values)
    values = values.astype(float)
    initial = float(values[0])
    relative = initial != 0.0
    scale = abs(initial) if relative else 1.0
    d = (values - initial) / scale
    e = np.abs(d)
    e = np.where(np.isnan(e), np.inf, e)
    elapsed = np.abs(solution.t - solution.t[0])
    duration = float(elapsed[-1])
    M = np.maximum.accumulate(e)
    mid = min(int(np.searchsorted(elapsed, duration / 2, side="left")), len(elapsed) - 2)
    m_mid, m_end = float(M[mid]), float(M[-1])
    if m_end == 0.0:
        growth = 1.0
    elif m_mid == 0.0 or not math.isfinite(m_end):
        growth = math.inf
    else:
        growth = m_end / m_mid
    with np.errstate(all="ignore"):
        rate = _slope(elapsed, e)
        slope = _slope(elapsed, d)
    if m_end == 0.0:
        share = 0.0
    elif math.isfinite(m_end) and math.isfinite(slope):
        share = abs(slope) * duration / m_end
    else:
        share = math.inf
    ups = motion_cycles(solution)
    shift, steady = _mean_shift(solution.t, d, ups, m_end)
    if values.size < 4:
        trend, rate, slope, growth, share = "unknown", math.nan, math.nan, math.nan, math.nan
    elif m_end <= roundoff:
        trend = "bounded"
    elif not math.isfinite(m_end):
        trend = "secular"               # the invariant blew up: no need to count cycles
    elif ups.size < min_cycles:
        trend = "too short"
    elif growth > growth_threshold or share > linear_threshold or (shift > shift_threshold and steady):
        trend = "secular"
    else:
        trend = "bounded"
    return InvariantDrift(name=name, method=solution.method.name, initial=initial, relative=relative,
                          max=m_end, final=float(e[-1]), signed_final=float(d[-1]), trend=trend, rate=rate,
                          slope=slope, growth=growth, linear_share=share, cycles=int(ups.size), mean_shift=shift,
                          t=solution.t.copy(), drift=d)


def motion_cycles(solution):
    """Where the motion of a run starts each new oscillation: indices into ``solution.t``.

    Each component of the state -- positions and velocities of a
    second-order problem -- is watched with hysteresis: an *upward crossing*
    is counted where the component rises above 3/4 of its range after last
    being below 1/4 of it, so round-off wiggles near one level count
    nothing.  The component with the most crossings -- the fastest
    oscillation; the first such, positions before velocities -- is
    returned; components that hardly move (range below 1e-8 of the largest
    value) are ignored.  ``len(motion_cycles(sol))`` is the number of
    oscillations seen: one Kepler orbit gives 0 or 1, ten orbits 9 or 10.
    Velocities count where a position runs off: a pendulum that Euler's
    energy gain sends over the top has an angle that never returns to its
    old range, while its angular velocity goes on oscillating.

    Parameters
    ----------
    solution : Solution

    Returns
    -------
    ndarray of int
        Increasing indices, possibly empty (no oscillation, e.g. decay).
    """
    y = np.real(np.asarray(solution.y)).reshape(len(solution.t), -1)
    if len(y) < 3:
        return np.zeros(0, dtype=int)
    finite = np.all(np.isfinite(y), axis=0)
    top = float(np.max(np.abs(y[:, finite]))) if finite.any() else 0.0
    best = np.zeros(0, dtype=int)
    rows = np.arange(len(y))[:, None]
    for first in range(0, y.shape[1], CYCLE_COLUMNS):       # a few columns at a time: bounded memory
        block = y[:, first:first + CYCLE_COLUMNS]
        lo, hi = block.min(axis=0), block.max(axis=0)
        moving = finite[first:first + CYCLE_COLUMNS] & (hi - lo > 1e-8 * top)
        if not moving.any():
            continue
        block, lo, hi = block[:, moving], lo[moving], hi[moving]
        level = np.where(block > lo + 0.75 * (hi - lo), 1, 0) - np.where(block < lo + 0.25 * (hi - lo), 1, 0)
        # carry the last level reached (high or low) through the band between them
        last = np.maximum.accumulate(np.where(level != 0, rows, 0), axis=0)
        level = np.take_along_axis(level, last, axis=0)
        ups = (level[1:] == 1) & (level[:-1] == -1)
        k = int(np.argmax(ups.sum(axis=0)))
        if ups[:, k].sum() > best.size:
            best = np.flatnonzero(ups[:, k]) + 1
    return best


def _mean_shift(t, d, ups, largest):
    """(shift, steady): change of the cycle means of ``d`` along their line, over ``largest``.

    ``steady`` says the means lie on the line (the change is more than three
    times their scatter about it).  nan and False with fewer than three
    whole cycles or a non-finite drift.
    """
    if ups.size < 4 or not (math.isfinite(largest) and largest > 0) or not np.all(np.isfinite(d)):
        return math.nan, False
    area = np.concatenate(([0.0], np.cumsum(0.5 * (d[1:] + d[:-1]) * np.diff(t))))
    means = (area[ups[1:]] - area[ups[:-1]]) / (t[ups[1:]] - t[ups[:-1]])
    k = np.arange(means.size, dtype=float)
    slope, intercept = np.polyfit(k, means, 1)
    change = abs(slope) * (means.size - 1)
    scatter = float(np.sqrt(np.mean((means - (intercept + slope * k)) ** 2)))
    return float(change / largest), bool(change > 3 * scatter)


def _slope(x, y):
    """Least-squares slope of ``y`` against ``x`` (nan if undefined)."""
    if len(x) < 2 or not np.all(np.isfinite(y)):
        return math.inf if np.any(np.isposinf(y)) else math.nan
    dx = x - x.mean()
    sxx = float(dx @ dx)
    return float(dx @ (y - y.mean())) / sxx if sxx > 0 else math.nan
