"""Nonlinear oscillators and chaos: the rigid pendulum, Lorenz's attractor, the Brusselator.

* :func:`pendulum` -- the rigid pendulum, undamped or damped, exact (when
  undamped) by Jacobi elliptic functions, with its period
  :func:`pendulum_period`, and optionally a wall it stops or bounces at;
* :func:`lorenz` -- the Lorenz equations: chaos, a test of how long a
  trajectory stays accurate;
* :func:`brusselator` -- an autocatalytic reaction that settles on a limit
  cycle.

Sources: Hairer, Lubich & Wanner, *Geometric Numerical Integration* (2006),
I.1 and Lawden, *Elliptic Functions and Applications* (1989) (the pendulum);
Lorenz, J. Atmos. Sci. 20 (1963); Prigogine & Lefever, J. Chem. Phys. 48
(1968); Hairer, Nørsett & Wanner, *Solving ODEs I* (1993), I.16 and II.10
(Lorenz and the Brusselator as test problems).
"""

import math

import numpy as np

from ..events import Event
from ..problem import ODEProblem, SecondOrderProblem
from ._checks import _nonnegative, _number, _positive, _span_end, _vector


# The damping -B omega is declared as the problem's damping, a function of the args (so that an
# ensemble over B gives each trajectory its own), not computed in accel: every method then
# subtracts it (the same numbers as in accel), and splitting methods solve it exactly.

def _pendulum_accel(t, theta, omega, g, L, B):
    return -(g / L) * math.sin(theta)


def _pendulum_damping(g, L, B):
    return B


# --- the pendulum against a wall: the wall's angle and restitution ride in args, for its event

def _pendulum_wall_accel(t, theta, omega, g, L, B, wall, e):
    return -(g / L) * math.sin(theta)


def _pendulum_wall_damping(g, L, B, wall, e):
    return B


def _wall(t, theta, omega, g, L, B, wall, e):
    # zero at the wall and at each full turn from it, a simple zero at each, so a pendulum
    # that goes over the top meets the wall again one turn on
    return math.sin(0.5 * (theta - wall))


def _wall_bounce(t, theta, omega, g, L, B, wall, e):
    return theta, -e * omega


WALL_STOP = Event(_wall, terminal=True, name="wall")
WALL_BOUNCE = Event(_wall, affect=_wall_bounce, name="wall")


def pendulum_period(g=9.8, L=1.0, theta0=2.0, omega0=0.0):
    """Period of the undamped pendulum started at angle ``theta0``, rate ``omega0``.

    For a swing (``k^2 = sin^2(theta0/2) + (omega0 / 2w)^2 < 1``,
    ``w = sqrt(g/L)``): ``4 K(k) / w``, with ``K`` the complete elliptic
    integral of the first kind; ``k = sin(theta_max / 2)``.  For a pendulum
    that goes over the top (``k > 1``): ``2 K(1/k) / (k w)``, the time of one
    full turn.  Infinite on the separatrix ``k = 1``.
    """
    from scipy.special import ellipk

    g, L = _positive("g", g), _positive("L", L)
    w = math.sqrt(g / L)
    k2 = math.sin(_number("theta0", theta0) / 2) ** 2 + (_number("omega0", omega0) / (2 * w)) ** 2
    if k2 < 1:
        return 4 * float(ellipk(k2)) / w
    if k2 > 1:
        return 2 * float(ellipk(1 / k2)) / (math.sqrt(k2) * w)
    return math.inf


def _pendulum_exact(w, theta0, omega0):
    """``exact(t) -> (theta, theta')`` of ``theta'' = -w^2 sin theta`` by Jacobi elliptic functions."""
    from scipy.special import ellipj, ellipk, ellipkinc

    k2 = math.sin(theta0 / 2) ** 2 + (omega0 / (2 * w)) ** 2
    if k2 == 1 and omega0 == 0:                     # at rest upside down: the unstable equilibrium
        return lambda t: (np.array(theta0), np.array(0.0))
    if k2 <= 1:
        # A swing: sin(theta/2) = k sn(w t + u0 | k^2), theta' = 2 k w cn(w t + u0 | k^2).
        k = math.sqrt(k2)
        turns = round(theta0 / (2 * math.pi))     # theta0 = base + 2 pi turns, |base| <= pi
        base = theta0 - 2 * math.pi * turns
        phi0 = math.atan2(math.sin(base / 2) / k, omega0 / (2 * w * k))   # am(u0): sn = sin, cn = cos
        u0 = float(ellipkinc(phi0, k2))
        quarter = float(ellipk(k2))                 # sn, cn have period 4K (infinite on the separatrix)

        def exact(t):
            u = w * t + u0
            if math.isfinite(quarter):
                u = math.remainder(u, 4 * quarter)  # keeps ellipj accurate for long times
            sn, cn, dn, ph = ellipj(u, k2)
            return (np.array(2 * math.pi * turns + 2 * math.asin(min(1.0, max(-1.0, k * sn)))),
                    np.array(2 * k * w * cn))
        return exact
    # Over the top: theta/2 = sigma am(k w t + u0 | 1/k^2), theta' = 2 sigma k w dn(...).
    k = math.sqrt(k2)
    m = 1 / k2
    sigma = math.copysign(1.0, omega0)
    u0 = float(ellipkinc(sigma * theta0 / 2, m))
    half = float(ellipk(m))                         # am(u + 2K) = am(u) + pi

    def exact(t):
        u = k * w * t + u0
        n = math.floor(u / (2 * half) + 0.5)
        sn, cn, dn, ph = ellipj(u - 2 * half * n, m)
        return np.array(sigma * 2 * (ph + math.pi * n)), np.array(sigma * 2 * k * w * dn)
    return exact


def pendulum(g=9.8, L=1.0, B=0.0, theta0=2.0, omega0=0.0, t_end=10.0, wall=None, restitution=0.0):
    """The rigid pendulum in its angle: ``theta'' = -(g/L) sin theta - B theta'``.

    A point mass on a massless rod of length ``L`` in gravity ``g``, with
    linear damping ``B`` (per unit time).  The default amplitude, 2 rad
    (115 degrees), is well into the nonlinear range: the period is 33 %
    longer than the small-swing ``2 pi sqrt(L/g)``.

    Parameters
    ----------
    g : float
        Gravitational acceleration, > 0.
    L : float
        Rod length, > 0.
    B : float
        Damping rate, >= 0: the problem's ``damping`` (see
        :class:`~odekit.SecondOrderProblem`), which every method applies
        and splitting methods solve exactly, keeping their order.
    theta0 : float
        Initial angle from the downward vertical (rad), any finite value.
    omega0 : float
        Initial angular velocity (rad per unit time).
    t_end : float
    wall : float, optional
        The angle of a wall the bob hits (rad, from the downward vertical),
        watched for by an :class:`~odekit.Event` of the problem; none by
        default.  A pendulum that goes over the top meets it once a turn.
    restitution : float
        What the wall gives back, ``0 <= restitution <= 1``.  0 (default):
        the bob stops dead at the wall, an inelastic stop that ends the
        run there (a terminal event: ``Status.EVENT``; the last time and
        state are the hit's, its speed the speed of impact); otherwise it
        bounces back, ``theta' <- -restitution theta'``.

    Notes
    -----
    ``exact(t)`` (for ``B = 0``; ``None`` for ``B > 0``) by Jacobi elliptic
    functions, ``w = sqrt(g/L)``, ``k^2 = sin^2(theta0/2) + (omega0/2w)^2``:
    for a swing (``k < 1``, ``k = sin(theta_max/2)``)
    ``theta = 2 arcsin(k sn(w t + u0, k))``, ``theta' = 2 k w cn(w t + u0, k)``
    -- from rest at ``theta0 > 0``, ``u0 = K(k)`` -- with period
    ``4 K(k) / w`` (:func:`pendulum_period`); over the top (``k > 1``)
    ``theta = 2 am(k w t + u0, 1/k)``, ``theta' = 2 k w dn(k w t + u0, 1/k)``.
    ``scipy.special`` takes the parameter ``m = k^2``.

    With a ``wall`` the pendulum swings freely until it hits it, so
    ``exact`` holds for a stop (it ends the run) and is ``None`` for a
    bounce.  From rest at ``theta0 > 0`` the bob hits a wall within its
    swing, ``|wall| < theta0``, after ``(K(k) - F(asin(sin(wall/2) / k), k))
    / w`` (``F`` the incomplete elliptic integral of the first kind): the
    time the exact solution takes from ``theta0`` to the wall.

    Invariant: ``energy`` per unit mass ``= L^2 theta'^2 / 2 + g L (1 -
    cos theta)``, conserved when ``B = 0`` and decaying when ``B > 0`` (and
    at each bounce from a wall).

    Reference: Hairer, Lubich & Wanner, *Geometric Numerical Integration*
    (2006), I.1 (the pendulum as a test problem); Lawden, *Elliptic Functions
    and Applications* (1989) (the exact solution).
    """
    g, L, B = _positive("g", g), _positive("L", L), _nonnegative("B", B)
    theta0, omega0 = _number("theta0", theta0), _number("omega0", omega0)
    t_end = _span_end(t_end, None)
    restitution = _number("restitution", restitution, "a number with 0 <= restitution <= 1",
                          lambda v: 0 <= v <= 1)
    exact = _pendulum_exact(math.sqrt(g / L), theta0, omega0) if B == 0 else None

    def energy(t, theta, omega):       # for one state or a whole trajectory
        return 0.5 * L * L * omega * omega + g * L * (1 - np.cos(theta))

    accel, damping, args, events = _pendulum_accel, _pendulum_damping, (g, L, B), None
    if wall is not None:
        wall = _number("wall", wall, "a finite angle in rad, or None for no wall")
        if math.remainder(theta0 - wall, 2 * math.pi) == 0:
            raise ValueError(f"theta0={theta0!r} is at the wall (wall={wall!r}, or a full turn from it); "
                             "accepted: a pendulum that starts off the wall")
        accel, damping, args = _pendulum_wall_accel, _pendulum_wall_damping, (g, L, B, wall, restitution)
        events = WALL_STOP if restitution == 0 else WALL_BOUNCE
        exact = exact if restitution == 0 else None
    return SecondOrderProblem(
        accel, (0.0, t_end), theta0, omega0, args=args, velocity_dependent=False, damping=damping,
        exact=exact, name="pendulum", invariants={"energy": energy}, autonomous=True, events=events)


def _lorenz_rhs(t, y, sigma, rho, beta):
    return np.array([sigma * (y[1] - y[0]),
                     y[0] * (rho - y[2]) - y[1],
                     y[0] * y[1] - beta * y[2]])


def _lorenz_jac(t, y, sigma, rho, beta):
    J = np.empty((3, 3))
    J[0, 0], J[0, 1], J[0, 2] = -sigma, sigma, 0.0
    J[1, 0], J[1, 1], J[1, 2] = rho - y[2], -1.0, -y[0]
    J[2, 0], J[2, 1], J[2, 2] = y[1], y[0], -beta
    return J


def lorenz(sigma=10.0, rho=28.0, beta=8.0 / 3.0, y0=(-8.0, 8.0, 27.0), t_end=16.0):
    """The Lorenz (Saltzman--Lorenz) equations: a strange attractor.

    ``x' = sigma (y - x)``, ``y' = x (rho - z) - y``, ``z' = x y - beta z``.
    Chaotic for the classic parameters: nearby solutions separate like
    ``e^{0.9 t}``, so any two solvers part ways after a few tens of time
    units -- a test of how long a trajectory stays accurate.

    Parameters
    ----------
    sigma, rho, beta : float
        Finite; defaults 10, 28, 8/3 (Lorenz's).
    y0 : (float, float, float)
        Default ``(-8, 8, 27)`` and ``t_end = 16`` as in HNW's LRNZ problem.
    t_end : float

    Notes
    -----
    No closed form (``exact`` is ``None``) and no invariants; analytic
    Jacobian.

    Reference: Lorenz, J. Atmos. Sci. 20 (1963); Hairer, Nørsett & Wanner,
    *Solving ODEs I* (1993), I.16 (eq. 16.17) and II.10 (problem LRNZ).
    """
    sigma, rho, beta = _number("sigma", sigma), _number("rho", rho), _number("beta", beta)
    y0 = _vector("y0", y0, 3)
    t_end = _span_end(t_end, None)
    return ODEProblem(_lorenz_rhs, (0.0, t_end), y0, args=(sigma, rho, beta), jac=_lorenz_jac,
                      name="lorenz", autonomous=True)


def _brusselator_rhs(t, y, A, B):
    u2v = y[0] * y[0] * y[1]
    return np.array([A + u2v - (B + 1.0) * y[0], B * y[0] - u2v])


def _brusselator_jac(t, y, A, B):
    J = np.empty((2, 2))
    uv = y[0] * y[1]
    uu = y[0] * y[0]
    J[0, 0], J[0, 1] = 2.0 * uv - (B + 1.0), uu
    J[1, 0], J[1, 1] = B - 2.0 * uv, -uu
    return J


def brusselator(A=1.0, B=3.0, y0=(1.5, 3.0), t_end=20.0):
    """The Brusselator, a model of an autocatalytic (oscillating) reaction.

    ``u' = A + u^2 v - (B + 1) u``, ``v' = B u - u^2 v``.  The steady state
    ``(A, B/A)`` is unstable for ``B > 1 + A^2`` and solutions tend to a
    limit cycle: with the defaults ``u' = 1 + u^2 v - 4 u``,
    ``v' = 3 u - u^2 v``.

    Parameters
    ----------
    A, B : float
        Concentrations of the feed species, > 0.
    y0 : (float, float)
        Default ``(1.5, 3)``.
    t_end : float
        Default 20.

    Notes
    -----
    No closed form (``exact`` is ``None``) and no invariants; analytic
    Jacobian.

    Reference: Prigogine & Lefever, J. Chem. Phys. 48 (1968); Hairer,
    Nørsett & Wanner, *Solving ODEs I* (1993), I.16 (the two-component
    Brusselator with these values).
    """
    A, B = _positive("A", A), _positive("B", B)
    y0 = _vector("y0", y0, 2)
    t_end = _span_end(t_end, None)
    return ODEProblem(_brusselator_rhs, (0.0, t_end), y0, args=(A, B), jac=_brusselator_jac,
                      name="brusselator", autonomous=True)
