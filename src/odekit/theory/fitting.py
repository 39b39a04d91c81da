"""Fitting an order of convergence to measured errors: arithmetic on numbers, no solve.

:func:`fit_order` is used by the convergence studies (:mod:`odekit.analysis`)
and by the plots that draw their fitted lines; it sits below both.
"""

from dataclasses import dataclass
import math

import numpy as np

from .. import checks


@dataclass(frozen=True)
class OrderFit:
    """A least-squares fit ``log error = log C + p log h``.

    Attributes
    ----------
    order : float
        The slope ``p``: the measured order.
    stderr : float
        Standard error of the slope (``nan`` with only two points).
    constant : float
        ``C`` in ``error ~ C h^p``.
    points : int
        Number of ``(h, error)`` pairs fitted.
    """

    order: float
    stderr: float
    constant: float
    points: int

    def __float__(self):
        return float(self.order)

    def __str__(self):
        pm = "" if math.isnan(self.stderr) else f" ± {self.stderr:.2g}"
        return f"order {self.order:.3f}{pm} ({self.points} points)"


def fit_order(hs, errors):
    """Measured order of convergence: the slope of ``log(error)`` against ``log(h)``.

    For a method of order ``p`` the global error behaves as ``e(h) = C h^p +
    O(h^(p+1))``, so over steps in the asymptotic range ``log e`` is a
    straight line in ``log h`` of slope ``p`` (Hairer, Nørsett & Wanner,
    *Solving ODEs I*, II.3 and the convergence plots of II.10).  The slope is
    the ordinary least-squares estimate

        p = sum (u_i - u)(w_i - w) / sum (u_i - u)^2,  u = log h, w = log e,

    with standard error ``sqrt(s^2 / sum (u_i - u)^2)``, ``s^2`` the residual
    variance with ``n - 2`` degrees of freedom.

    Parameters
    ----------
    hs : sequence of float
        Step sizes, positive and finite, at least two distinct.
    errors : sequence of float
        The errors at those steps, positive and finite (an error of exactly
        zero has no logarithm: leave such points out).

    Returns
    -------
    OrderFit
        ``float(fit)`` is the order.  The fit is only as good as the range:
        steps too large (pre-asymptotic) or errors near round-off bend the
        line -- look at ``stderr``.

    Raises
    ------
    ValueError
        For unequal lengths, fewer than two points, equal steps, or a
        non-positive or non-finite step or error; the message names the entry.
    """
    h = _positive_array("hs", hs)
    e = _positive_array("errors", errors)
    if h.size != e.size:
        raise ValueError(f"hs and errors must have the same length, got {h.size} and {e.size}")
    if h.size < 2:
        raise ValueError(f"fitting an order needs at least two (h, error) pairs, got {h.size}")
    u, w = np.log(h), np.log(e)
    du = u - u.mean()
    sxx = float(du @ du)
    if sxx == 0.0:
        raise ValueError(f"hs must contain at least two different step sizes, got {list(h)}")
    slope = float(du @ (w - w.mean())) / sxx
    intercept = float(w.mean() - slope * u.mean())
    n = h.size
    if n > 2:
        resid = w - (intercept + slope * u)
        stderr = math.sqrt(float(resid @ resid) / (n - 2) / sxx)
    else:
        stderr = math.nan
    return OrderFit(order=slope, stderr=stderr, constant=math.exp(intercept), points=n)


def _positive_array(name, values):
    a = checks.array(name, values, checks.REAL, "a sequence of positive numbers").astype(float)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence of numbers, got shape {a.shape}")
    bad = np.flatnonzero(~(np.isfinite(a) & (a > 0)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] = {float(a[i])!r}; accepted: positive finite numbers"
                         + (" (drop the points whose error is exactly zero)" if name == "errors" else ""))
    return a
