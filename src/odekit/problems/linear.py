"""Linear problems, each with its exact solution.

* :func:`decay` -- Dahlquist's test equation ``y' = lam y``, the reference
  problem of linear stability;
* :func:`rotation` -- circles, on which explicit Euler spirals outward;
* :func:`bead_on_wire` -- a bead pulled to a wire by a spring, stiff for a
  stiff spring;
* :func:`bead_on_rod` -- a bead slowed by viscous drag, a force that depends
  on the velocity;
* :func:`harmonic_oscillator` -- undamped, under-, critically or over-damped;
* :func:`mass_spring_chain` -- ``n`` masses between two walls, exact by its
  normal modes (:func:`chain_modes`).

Sources: Witkin & Baraff, *Physically Based Modeling*, SIGGRAPH course notes
(1997) (decay, rotation, the beads); Dahlquist, BIT 3 (1963) and Hairer &
Wanner, *Solving ODEs II* (1996), IV.2 (the test equation); Goldstein, Poole
& Safko, *Classical Mechanics* (2002), ch. 6 (the oscillator and the chain);
Fermi, Pasta & Ulam, Los Alamos report LA-1940 (1955) (the chain).
"""

import math

import numpy as np

from ..problem import ODEProblem, SecondOrderProblem
from ._checks import _count, _nonnegative, _number, _positive, _span_end, _vector


def _decay_rhs(t, y, lam):
    return lam * y


def _decay_jac(t, y, lam):
    return lam * np.eye(y.size)


def decay(lam=-1.0, y0=1.0, t_end=1.0):
    """Dahlquist's test equation ``y' = lam y``; ``y = y0 exp(lam t)``.

    The reference problem of linear stability analysis: a method applied to
    it multiplies ``y`` by its stability function ``R(h lam)`` per step.

    Parameters
    ----------
    lam : float or complex
        Finite; a complex ``lam`` makes the state complex (an oscillation
        ``Im lam`` damped by ``Re lam``).
    y0 : float, complex or array_like
        Initial value(s); the state is a 1-D array, complex when ``lam`` or
        ``y0`` is.
    t_end : float

    Notes
    -----
    ``exact(t) = y0 exp(lam t)``; analytic Jacobian ``lam I``.  No
    invariants (``|y|`` is one only for imaginary ``lam``).

    Reference: Dahlquist, BIT 3 (1963); Hairer & Wanner, *Solving ODEs II*
    (1996), IV.2.
    """
    if isinstance(lam, (str, bytes)) or lam is None:
        raise ValueError(f"lam must be a finite real or complex number, got {lam!r}")
    try:
        is_complex = np.iscomplexobj(lam)
        lam = complex(lam) if is_complex else float(lam)
    except (TypeError, ValueError):
        raise ValueError(f"lam must be a finite real or complex number, got {lam!r}") from None
    if not (math.isfinite(lam.real) and math.isfinite(lam.imag)):
        raise ValueError(f"lam must be a finite real or complex number, got {lam!r}")
    is_complex = is_complex or np.iscomplexobj(y0)
    try:
        y0 = np.atleast_1d(np.array(y0, dtype=complex if is_complex else float))
    except (TypeError, ValueError):
        raise ValueError(f"y0 must be real or complex numbers, got {y0!r}") from None
    t_end = _span_end(t_end, None)
    return ODEProblem(_decay_rhs, (0.0, t_end), y0, args=(lam,), jac=_decay_jac,
                      exact=lambda t: y0 * np.exp(lam * t), name="decay", autonomous=True)


def _rotation_rhs(t, y):
    return np.array([-y[1], y[0]])


def rotation(t_end=2 * math.pi, y0=(1.0, 0.0)):
    """The rotation field ``y' = (-y_2, y_1)``: circles of constant radius.

    Explicit Euler spirals outward on it for every ``h``, because its
    eigenvalues ``+-i`` lie outside Euler's stability disk.

    Parameters
    ----------
    t_end : float
    y0 : (float, float)

    Notes
    -----
    ``exact(t)`` rotates ``y0`` by the angle ``t``.  Invariant: ``radius``
    ``= |y|``.

    Reference: Witkin & Baraff, *Physically Based Modeling: Differential
    Equation Basics*, SIGGRAPH course notes (1997).
    """
    y0 = _vector("y0", y0, 2)
    t_end = _span_end(t_end, None)

    def exact(t):
        c, s = math.cos(t), math.sin(t)
        return np.array([c * y0[0] - s * y0[1], s * y0[0] + c * y0[1]])

    return ODEProblem(_rotation_rhs, (0.0, t_end), y0, jac=np.array([[0.0, -1.0], [1.0, 0.0]]),
                      exact=exact, name="rotation",
                      invariants={"radius": lambda t, y: float(np.hypot(y[0], y[1]))}, autonomous=True)


def _bead_rhs(t, y, k):
    return np.array([-y[0], -k * y[1]])


def _bead_jac(t, y, k):
    J = np.zeros((2, 2))
    J[0, 0] = -1.0
    J[1, 1] = -k
    return J


def bead_on_wire(k=1000.0, y0=(1.0, 1.0), t_end=1.0):
    """A bead pulled to a wire by a stiff spring: ``y' = (-x, -k y)``.

    Stiff for large ``k``: explicit Euler needs ``h < 2/k`` while the slow
    motion has time scale 1.

    Parameters
    ----------
    k : float
        Spring stiffness, > 0.
    y0 : (float, float)
    t_end : float

    Notes
    -----
    ``exact(t) = (x0 e^-t, y0 e^-kt)``; analytic Jacobian ``diag(-1, -k)``.
    No invariants.

    Reference: Witkin & Baraff, *Physically Based Modeling: Differential
    Equation Basics*, SIGGRAPH course notes (1997).
    """
    k = _positive("k", k)
    y0 = _vector("y0", y0, 2)
    t_end = _span_end(t_end, None)
    rates = np.array([-1.0, -k])
    return ODEProblem(_bead_rhs, (0.0, t_end), y0, args=(k,), jac=_bead_jac,
                      exact=lambda t: y0 * np.exp(rates * t), name="bead_on_wire", autonomous=True)


def _bead_on_rod_accel(t, x, v, tau):
    return -v / tau


def bead_on_rod(tau=0.5, x0=2.0, v0=3.0, t_end=None):
    """A bead sliding on a rod with viscous drag: ``x'' = -v / tau``.

    The drag force ``-k_d v`` of a particle system per unit mass, with
    relaxation time ``tau = m / k_d``; the force depends on the velocity.

    Parameters
    ----------
    tau : float
        Relaxation time, > 0.
    x0, v0 : float
        Initial position and velocity.
    t_end : float, optional
        Default ``5 tau`` (the velocity has fallen to 0.7 %).

    Notes
    -----
    ``exact(t)``: ``v = v0 e^{-t/tau}``, ``x = x0 + v0 tau (1 - e^{-t/tau})``,
    so the bead comes to rest at ``x0 + v0 tau``.  Invariant:
    ``rest_position = x + tau v`` (conserved: its derivative is
    ``v - tau v / tau = 0``; being linear, every Runge--Kutta and splitting
    method keeps it to round-off).

    Reference: Witkin & Baraff, *Physically Based Modeling: Particle System
    Dynamics*, SIGGRAPH course notes (1997) -- viscous drag.
    """
    tau = _positive("tau", tau)
    x0 = _number("x0", x0)
    v0 = _number("v0", v0)
    t_end = _span_end(t_end, 5 * tau)

    def exact(t):
        decay_ = math.exp(-t / tau)
        return np.array(x0 + v0 * tau * (1 - decay_)), np.array(v0 * decay_)

    return SecondOrderProblem(
        _bead_on_rod_accel, (0.0, t_end), x0, v0, args=(tau,), velocity_dependent=True,
        exact=exact, name="bead_on_rod",
        invariants={"rest_position": lambda t, x, v: float(x + tau * v)}, autonomous=True)


def _oscillator_accel(t, x, v, omega, zeta):
    return -omega * omega * x - 2.0 * zeta * omega * v


def harmonic_oscillator(omega=1.0, zeta=0.0, x0=1.0, v0=0.0, t_end=2 * math.pi):
    """``x'' = -omega^2 x - 2 zeta omega v``: the (damped) harmonic oscillator.

    Parameters
    ----------
    omega : float
        Natural angular frequency, > 0.
    zeta : float
        Damping ratio, >= 0: under-damped below 1, critically damped at 1,
        over-damped above.
    x0, v0 : float
    t_end : float

    Notes
    -----
    ``exact(t)`` for every damping ratio: ``x = e^{st} (x0 C(t) + (v0 - s x0)
    S(t))`` with ``s = -zeta omega`` and ``C, S`` the cosine and sine (cosh,
    sinh; 1, t) of the damped frequency.  Invariant ``energy = (v^2 +
    omega^2 x^2) / 2``, conserved only when ``zeta = 0`` (it decays
    otherwise).

    Reference: any mechanics text, e.g. Goldstein, Poole & Safko,
    *Classical Mechanics* (2002), ch. 6 (small oscillations).
    """
    omega = _positive("omega", omega)
    zeta = _nonnegative("zeta", zeta)
    x0 = _number("x0", x0)
    v0 = _number("v0", v0)
    t_end = _span_end(t_end, None)
    wd2 = omega * omega * (1 - zeta * zeta)
    s = -zeta * omega

    def exact(t):
        # x = e^{st} (x0 C(t) + (v0 - s x0) S(t)), C/S the cos/sin (or cosh/sinh) of the damped frequency
        if wd2 > 0:
            wd = math.sqrt(wd2)
            C, S, dC, dS = math.cos(wd * t), math.sin(wd * t) / wd, -wd * math.sin(wd * t), math.cos(wd * t)
        elif wd2 < 0:
            wd = math.sqrt(-wd2)
            C, S, dC, dS = math.cosh(wd * t), math.sinh(wd * t) / wd, wd * math.sinh(wd * t), math.cosh(wd * t)
        else:
            C, S, dC, dS = 1.0, t, 0.0, 1.0
        a, b = x0, v0 - s * x0
        g = math.exp(s * t)
        x = g * (a * C + b * S)
        v = s * x + g * (a * dC + b * dS)
        return np.array(x), np.array(v)

    return SecondOrderProblem(
        _oscillator_accel, (0.0, t_end), x0, v0, args=(omega, zeta), velocity_dependent=zeta != 0,
        exact=exact, name="harmonic_oscillator",
        invariants={"energy": lambda t, x, v: float(0.5 * (v * v + omega * omega * x * x))}, autonomous=True)


def _chain_accel(t, x, v, k, mass):
    a = -2.0 * x
    a[1:] += x[:-1]
    a[:-1] += x[1:]
    return (k / mass) * a


def chain_modes(n, k=1.0, mass=1.0):
    """Normal modes of ``n`` masses between two walls: ``(omega, Phi)``.

    ``omega_j = 2 sqrt(k/m) sin(j pi / (2(n+1)))`` and the orthonormal shapes
    ``Phi[i, j] = sqrt(2/(n+1)) sin(i j pi / (n+1))``, ``i, j = 1..n``.
    """
    j = np.arange(1, n + 1)
    omega = 2 * math.sqrt(k / mass) * np.sin(j * math.pi / (2 * (n + 1)))
    shapes = math.sqrt(2 / (n + 1)) * np.sin(np.outer(j, j) * math.pi / (n + 1))
    return omega, shapes


def mass_spring_chain(n=10, k=1.0, mass=1.0, x0=None, v0=None, t_end=None):
    """``n`` equal masses joined by ``n + 1`` equal springs between two walls.

    Displacements ``x_i`` from equilibrium: ``m x_i'' = k (x_{i-1} - 2 x_i +
    x_{i+1})``, ``x_0 = x_{n+1} = 0`` (the walls).  Linear, with frequencies
    from ``omega_1 ~ pi sqrt(k/m) / (n+1)`` to nearly ``2 sqrt(k/m)``: a plucked
    end sends a dispersive wave down the chain.

    Parameters
    ----------
    n : int
        Number of masses, >= 1.
    k : float
        Spring stiffness, > 0.
    mass : float
        Mass of each body, > 0.
    x0, v0 : array_like, optional
        Initial displacements and velocities, ``n`` numbers each.  Default:
        the first mass displaced by 1, all at rest.
    t_end : float, optional
        Default: one period of the slowest mode, ``2 pi / omega_1``.

    Notes
    -----
    ``exact(t)`` by normal modes (:func:`chain_modes`):
    ``x(t) = Phi (a cos(omega t) + b sin(omega t) / omega)`` with
    ``a = Phi^T x0``, ``b = Phi^T v0``.  Invariant: ``energy`` ``= m |v|^2/2 +
    k sum_{i=0..n} (x_{i+1} - x_i)^2 / 2``.

    Reference: the normal modes of a loaded string, e.g. Goldstein, Poole &
    Safko, *Classical Mechanics* (2002), ch. 6; it is the linear part of the
    chain of Fermi, Pasta & Ulam, Los Alamos report LA-1940 (1955).
    """
    n = _count("n", n, 1)
    k, mass = _positive("k", k), _positive("mass", mass)
    x0 = np.eye(1, n)[0] if x0 is None else _vector("x0", x0, n)
    v0 = np.zeros(n) if v0 is None else _vector("v0", v0, n)
    omega, shapes = chain_modes(n, k, mass)
    t_end = _span_end(t_end, 2 * math.pi / omega[0])
    a, b = shapes.T @ x0, shapes.T @ v0

    def exact(t):
        c, s = np.cos(omega * t), np.sin(omega * t)
        return shapes @ (a * c + b * s / omega), shapes @ (omega * (b * c / omega - a * s))

    def energy(t, x, v):
        stretch = np.diff(np.concatenate(([0.0], x, [0.0])))
        return float(0.5 * mass * (v @ v) + 0.5 * k * (stretch @ stretch))

    return SecondOrderProblem(
        _chain_accel, (0.0, t_end), x0, v0, args=(k, mass), velocity_dependent=False,
        exact=exact, name="mass_spring_chain", invariants={"energy": energy}, autonomous=True)
