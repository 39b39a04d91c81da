"""Impacts: a problem whose state jumps at an event, with the event it carries.

* :func:`bouncing_ball` -- a ball dropped on a floor that returns ``e`` of
  its speed at each bounce, exact between bounces, with its bounce times
  and apex heights (:func:`ball_bounces`) and the time it comes to rest
  (:func:`ball_rest_time`).

Its floor is an :class:`~odekit.Event` of the problem, so every run of it
bounces; the event's functions, like the force, are module-level and take
the parameters as ``args``, and the event is one object shared by every
instance, so the compiled backend builds it once per process.

Sources: Witkin & Baraff, *Physically Based Modeling*, SIGGRAPH course notes
(1997), "Collision" (contact and restitution); Goebel, Sanfelice & Teel,
IEEE Control Systems 29 (2009), 2 (the bouncing ball as the hybrid system
whose bounces accumulate: Zeno behaviour).
"""

import math
from collections import namedtuple

import numpy as np

from ..events import Event
from ..problem import SecondOrderProblem
from ._checks import _count, _number, _positive, _span_end

Bounces = namedtuple("Bounces", "t apex_t apex")
Bounces.__doc__ = """The ball's first bounces: landing times ``t``, and the time ``apex_t`` and height ``apex``
of the top of each flight that follows."""

FLIGHTS = 10         # the default span ends at the apex of the tenth flight after a bounce


def _ball_accel(t, x, v, g, e):
    return -g


def _ball_floor(t, x, v, g, e):
    return x


def _ball_bounce(t, x, v, g, e):
    return x, -e * v


FLOOR = Event(_ball_floor, direction=-1, affect=_ball_bounce, name="floor")


def _restitution(e):
    return _number("e", e, "a number with 0 < e <= 1 (the share of its speed the ball keeps)",
                   lambda v: 0 < v <= 1)


def _fall(g, h0):
    """``t1``, the first landing: ``sqrt(2 h0 / g)``; the landing speed is ``g t1``."""
    return math.sqrt(2 * _positive("h0", h0) / _positive("g", g))


def _landing(k, e, t1):
    """The time of the ``k``-th landing (``k >= 1``; an array too): the flights before it are ``2 e^j t1``."""
    k = np.asarray(k, dtype=float)
    if e == 1:
        return t1 * (2 * k - 1)
    return t1 * (1 + 2 * e * (1 - e ** (k - 1)) / (1 - e))


def ball_bounces(count, e=0.9, g=9.81, h0=10.0):
    """The first ``count`` bounces of :func:`bouncing_ball`: landing times and apex heights.

    The ball falls from rest at ``h0`` and lands at ``t1 = sqrt(2 h0 / g)``
    with speed ``v1 = g t1``.  Bounce ``k`` sends it up at ``e^k v1``: the
    flight lasts ``2 e^k v1 / g = 2 e^k t1`` and tops out ``e^k t1`` after the
    bounce at ``e^(2k) h0``.  So the ``k``-th landing is at
    ``t1 (1 + 2 e (1 - e^(k-1)) / (1 - e))`` (``t1 (2k - 1)`` for ``e = 1``).

    Returns
    -------
    Bounces
        ``t[k-1]``, the ``k``-th landing, and ``apex_t[k-1]``, ``apex[k-1]``
        the top of the flight after it, ``k = 1 .. count``.
    """
    count = _count("count", count, 1)
    e, t1 = _restitution(e), _fall(g, h0)
    k = np.arange(1, count + 1)
    t = _landing(k, e, t1)
    return Bounces(t, t + e ** k * t1, e ** (2 * k) * h0)


def ball_rest_time(e=0.9, g=9.81, h0=10.0):
    """When :func:`bouncing_ball` comes to rest: ``t1 (1 + 2 e / (1 - e))``, ``t1 = sqrt(2 h0 / g)``.

    The flights ``2 e^k t1`` sum to a finite time: infinitely many bounces
    happen before it (Zeno behaviour).  Infinite for ``e = 1``.
    """
    e, t1 = _restitution(e), _fall(g, h0)
    return math.inf if e == 1 else t1 * (1 + 2 * e / (1 - e))


def _ball_exact(e, g, h0):
    """``exact(t) -> (x, v)`` of the ball: a parabola per flight, at rest on the floor after it stops."""
    t1 = _fall(g, h0)
    rest = ball_rest_time(e, g, h0)

    def exact(t):
        if t < t1:
            return np.array(h0 - 0.5 * g * t * t), np.array(-g * t)
        if t >= rest:
            return np.array(0.0), np.array(0.0)
        k = _flight(t, e, t1)
        s = t - float(_landing(k, e, t1))
        up = e ** k * g * t1                  # the speed bounce k gives
        return np.array(s * (up - 0.5 * g * s)), np.array(up - g * s)
    return exact


def _flight(t, e, t1):
    """The last bounce ``k`` at or before ``t`` (``t1 <= t`` before the rest time), from the landing times."""
    if e == 1:
        k = math.floor((t / t1 + 1) / 2)
    else:
        k = 1 + math.floor(math.log(1 - (t / t1 - 1) * (1 - e) / (2 * e)) / math.log(e))
    k = max(k, 1)
    while _landing(k + 1, e, t1) <= t:     # the logarithm rounds: settle k on the landings themselves
        k += 1
    while k > 1 and _landing(k, e, t1) > t:
        k -= 1
    return k


def bouncing_ball(e=0.9, g=9.81, h0=10.0, t_end=None):
    """A ball dropped from rest at height ``h0`` onto a floor: ``x'' = -g``, and ``v <- -e v`` at ``x = 0``.

    The floor is the problem's own :class:`~odekit.Event` (``x`` crossing
    zero downward; its affect reverses and scales the speed), so every run
    of the problem bounces, with any method: the force does not depend on
    the velocity, so splitting methods (``velocity_verlet``) run it too.
    Each bounce keeps ``e^2`` of the energy; the bounces come ever faster
    and accumulate at :func:`ball_rest_time`, where a run stops with
    ``Status.EVENTS_ACCUMULATE`` (Zeno behaviour).

    Parameters
    ----------
    e : float
        Coefficient of restitution, ``0 < e <= 1`` (1: elastic, bounces for ever).
    g : float
        Gravitational acceleration, > 0.
    h0 : float
        Height of the drop, > 0.
    t_end : float, optional
        Default: the apex of the tenth flight after a bounce.  The span then
        ends in the air, not at a landing where ``exact`` jumps, and long
        before the rest time: close to it the flights are shorter and lower
        than a tolerance resolves (``e^(2k) h0`` at the ``k``-th apex), and
        a span past it ends in the accumulation status.

    Notes
    -----
    ``exact(t)`` is ``(x, v)`` of the flight under way: before the first
    landing ``t1 = sqrt(2 h0 / g)``, ``x = h0 - g t^2 / 2``; after bounce
    ``k`` at ``t_k``, ``x = u s - g s^2 / 2``, ``v = u - g s`` with
    ``s = t - t_k``, ``u = e^k v1``, ``v1 = g t1``; at a landing itself the
    state after the bounce (as ``Solution.__call__`` gives it); at rest on
    the floor after the rest time.  :func:`ball_bounces` gives the landing
    times ``t_k = t1 (1 + 2 e (1 - e^(k-1)) / (1 - e))`` (flight ``k`` lasts
    ``2 e^k v1 / g``) and the apex heights ``e^(2k) h0``;
    :func:`ball_rest_time` the accumulation point ``t1 (1 + 2 e / (1 - e))``.

    No invariants: the energy ``v^2 / 2 + g x`` is kept between bounces and
    drops to ``e^2`` of itself at each.

    Reference: Witkin & Baraff, *Physically Based Modeling*, SIGGRAPH course
    notes (1997), "Collision"; Goebel, Sanfelice & Teel, IEEE Control
    Systems 29 (2009), 2 (the bouncing ball and its Zeno time).
    """
    e, g, h0 = _restitution(e), _positive("g", g), _positive("h0", h0)
    if t_end is None:
        t_end = float(ball_bounces(FLIGHTS, e, g, h0).apex_t[-1])
    t_end = _span_end(t_end, None)
    return SecondOrderProblem(
        _ball_accel, (0.0, t_end), h0, 0.0, args=(g, e), velocity_dependent=False,
        exact=_ball_exact(e, g, h0), name="bouncing_ball", autonomous=True, events=FLOOR)
