"""The problem zoo: test problems with exact solutions and invariants.

Two kinds of problems live here.  From the simulation literature:
:func:`decay`, :func:`bead_on_rod`, :func:`bead_on_wire`, :func:`rotation`,
:func:`kepler`, :func:`pendulum`, :func:`harmonic_oscillator`.  Standard test
problems of the numerical literature: :func:`arenstorf`,
:func:`van_der_pol`, :func:`lorenz`, :func:`brusselator`, :func:`robertson`,
:func:`hires`, :func:`henon_heiles`, :func:`outer_solar_system`,
:func:`mass_spring_chain`.  And one large, stiff one from graphics:
:func:`cloth`, Baraff & Witkin's mass--spring sheet with sparse Jacobians.
``PROBLEMS`` maps each name to its constructor and :func:`problem` builds one
by name.

Each constructor returns an :class:`~odekit.ODEProblem` or a
:class:`~odekit.SecondOrderProblem` with

* ``exact(t)`` -- the true ``y(t)`` (or ``(x(t), v(t))``) where a closed form
  exists, else ``None``;
* ``invariants`` -- ``{name: g(t, y)}`` (or ``g(t, x, v)``) of quantities the
  true flow keeps constant.  A damped problem keeps its ``energy`` entry so
  that its decay can be watched; each docstring says when it is conserved;
* ``autonomous=True`` -- no right-hand side here depends on ``t``, which
  spares Rosenbrock methods the time derivative (two evaluations a step).

Right-hand sides are module-level functions that take their parameters as
``args`` (never closures over parameters), so every instance of a problem
shares one compiled function: the compiled backend builds it once per
process, not once per instance.  They are written for Numba's nopython mode.
Parameters are passed as floats, and most problems pass one to three of them,
so problems share the compiled kernels of their argument types too.
"""

import math

import numpy as np
from scipy import sparse

from ..problem import ODEProblem, SecondOrderProblem


# --- parameter checks ------------------------------------------------------------------

def _number(name, value, accepted="a finite real number", ok=lambda v: True):
    """``value`` as a float, or a ValueError naming the parameter, the value and what is accepted."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {accepted}, got {value!r}") from None
    if not (math.isfinite(number) and ok(number)):
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    return number


def _positive(name, value):
    return _number(name, value, "a finite number > 0", lambda v: v > 0)


def _nonnegative(name, value):
    return _number(name, value, "a finite number >= 0", lambda v: v >= 0)


def _count(name, value, minimum):
    """A whole number >= ``minimum``; ``10.0`` is accepted (the command line passes floats)."""
    accepted = f"a whole number >= {minimum}"
    number = _number(name, value, accepted, lambda v: v == int(v) and v >= minimum)
    return int(number)


def _span_end(t_end, default):
    """``t_end`` (the span starts at 0), or ``default`` when it is None."""
    if t_end is None and default is not None:
        return float(default)
    return _number("t_end", t_end, "a finite number != 0 (the span starts at t = 0)", lambda v: v != 0)


def _vector(name, value, n):
    """A real array of ``n`` finite numbers."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {n} real numbers, got {value!r}") from None
    if array.shape != (n,) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be {n} finite real numbers (shape ({n},)), got {value!r}")
    return array


# --- Kepler: a satellite around a planet ---------------------------------------------

def _kepler_accel(t, x, v, mu):
    r2 = x[0] * x[0] + x[1] * x[1]
    return -mu * x / (r2 * math.sqrt(r2))


def kepler_anomaly(mean_anomaly, e):
    """Solve Kepler's equation ``E - e sin E = M`` for the eccentric anomaly ``E``.

    Newton's method from ``E = M + e sin M`` (or ``pi`` for large ``e``),
    converged to machine precision.
    """
    M = math.remainder(mean_anomaly, 2 * math.pi)
    E = M + e * math.sin(M) if e < 0.8 else math.copysign(math.pi, M) if M else 0.0
    for _ in range(50):
        dE = (E - e * math.sin(E) - M) / (1 - e * math.cos(E))
        E -= dE
        if abs(dE) < 4 * np.finfo(float).eps * max(1.0, abs(E)):
            break
    return E + (mean_anomaly - M)


def runge_lenz(x, v, mu=1.0):
    """The Runge--Lenz vector ``A = v x L - mu x/|x|`` of a planar orbit.

    ``L = x_1 v_2 - x_2 v_1`` is the angular momentum (along the normal of
    the plane), so ``v x L = (v_2 L, -v_1 L)``.  ``A`` points to the
    pericentre and ``|A| = mu e``.
    """
    L = x[0] * v[1] - x[1] * v[0]
    r = math.hypot(x[0], x[1])
    return np.array([v[1] * L - mu * x[0] / r, -v[0] * L - mu * x[1] / r])


def kepler(e=0.5, orbits=1.0, t_end=None, mu=1.0):
    """A satellite on an ellipse of eccentricity ``e`` and semi-major axis 1.

    ``x'' = -mu x / |x|^3`` in the plane, starting at pericentre
    ``x0 = (1 - e, 0)``, ``v0 = (0, sqrt(mu (1 + e) / (1 - e)))``.  The
    period is ``2 pi / sqrt(mu)``.

    Parameters
    ----------
    e : float
        Eccentricity, ``0 <= e < 1``.
    orbits : float
        Length of the span in periods (ignored when ``t_end`` is given), > 0.
    t_end : float, optional
    mu : float
        Gravitational parameter ``G M``, > 0.

    Notes
    -----
    ``exact(t)`` is the true ``(x(t), v(t))``, through Kepler's equation
    ``E - e sin E = sqrt(mu) t`` solved by Newton's method.

    Invariants: ``energy = |v|^2/2 - mu/|x|`` (= ``-mu/2``),
    ``angular_momentum = x_1 v_2 - x_2 v_1`` (= ``sqrt(mu (1 - e^2))``),
    ``eccentricity = |A| / mu`` (= ``e``) and ``perihelion_angle``, the
    direction ``atan2(A_2, A_1)`` of the Runge--Lenz vector
    ``A = v x L - mu x/|x|`` (= 0: the pericentre lies on the positive
    x-axis; undefined, pure round-off, for a circle ``e = 0``).  A method
    whose orbit precesses keeps the eccentricity but not the angle.

    Reference: Hairer, Lubich & Wanner, *Geometric Numerical Integration*
    (2006), I.2 (the problem and its exact solution); for the Runge--Lenz
    vector, Goldstein, Poole & Safko, *Classical Mechanics* (2002), 3.9.
    """
    e = _number("e", e, "a number with 0 <= e < 1 (a closed orbit)", lambda v: 0 <= v < 1)
    mu = _positive("mu", mu)
    n = math.sqrt(mu)                         # mean motion for a = 1
    if t_end is None:
        t_end = _positive("orbits", orbits) * 2 * math.pi / n
    t_end = _span_end(t_end, None)
    b = math.sqrt(1 - e * e)

    def exact(t):
        E = kepler_anomaly(n * t, e)
        dE = n / (1 - e * math.cos(E))
        return (np.array([math.cos(E) - e, b * math.sin(E)]),
                np.array([-math.sin(E) * dE, b * math.cos(E) * dE]))

    # written for one state or a whole trajectory (time on the last axis), so the
    # analysis can evaluate long runs in one call
    def energy(t, x, v):
        return 0.5 * (v[0] * v[0] + v[1] * v[1]) - mu / np.sqrt(x[0] * x[0] + x[1] * x[1])

    def angular_momentum(t, x, v):
        return x[0] * v[1] - x[1] * v[0]

    def eccentricity(t, x, v):
        A = runge_lenz(x, v, mu)
        return float(math.hypot(A[0], A[1]) / mu)

    def perihelion_angle(t, x, v):
        A = runge_lenz(x, v, mu)
        return float(math.atan2(A[1], A[0]))

    return SecondOrderProblem(
        _kepler_accel, (0.0, t_end), [1 - e, 0.0], [0.0, math.sqrt(mu * (1 + e) / (1 - e))],
        args=(mu,), velocity_dependent=False, exact=exact, name="kepler",
        invariants={"energy": energy, "angular_momentum": angular_momentum,
                    "eccentricity": eccentricity, "perihelion_angle": perihelion_angle}, autonomous=True)


# --- linear test problems -----------------------------------------------------------

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


# --- the rigid pendulum ----------------------------------------------------------------

def _pendulum_accel(t, theta, omega, g, L, B):
    return -(g / L) * math.sin(theta) - B * omega


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


def pendulum(g=9.8, L=1.0, B=0.0, theta0=2.0, omega0=0.0, t_end=10.0):
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
        Damping rate, >= 0; the force depends on the velocity when ``B > 0``.
    theta0 : float
        Initial angle from the downward vertical (rad), any finite value.
    omega0 : float
        Initial angular velocity (rad per unit time).
    t_end : float

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

    Invariant: ``energy`` per unit mass ``= L^2 theta'^2 / 2 + g L (1 -
    cos theta)``, conserved when ``B = 0`` and decaying when ``B > 0``.

    Reference: Hairer, Lubich & Wanner, *Geometric Numerical Integration*
    (2006), I.1 (the pendulum as a test problem); Lawden, *Elliptic Functions
    and Applications* (1989) (the exact solution).
    """
    g, L, B = _positive("g", g), _positive("L", L), _nonnegative("B", B)
    theta0, omega0 = _number("theta0", theta0), _number("omega0", omega0)
    t_end = _span_end(t_end, None)
    exact = _pendulum_exact(math.sqrt(g / L), theta0, omega0) if B == 0 else None

    def energy(t, theta, omega):       # for one state or a whole trajectory
        return 0.5 * L * L * omega * omega + g * L * (1 - np.cos(theta))

    return SecondOrderProblem(
        _pendulum_accel, (0.0, t_end), theta0, omega0, args=(g, L, B), velocity_dependent=B != 0,
        exact=exact, name="pendulum", invariants={"energy": energy}, autonomous=True)


# --- standard test problems ----------------------------------------------------------

ARENSTORF_MU = 0.012277471
ARENSTORF_PERIOD = 17.0652165601579625588917206249
ARENSTORF_V0 = -2.00158510637908252240537862224


def _arenstorf_accel(t, x, v, mu):
    mu1 = 1.0 - mu
    y1, y2 = x[0], x[1]
    r1 = (y1 + mu) * (y1 + mu) + y2 * y2
    r2 = (y1 - mu1) * (y1 - mu1) + y2 * y2
    d1 = r1 * math.sqrt(r1)
    d2 = r2 * math.sqrt(r2)
    return np.array([y1 + 2.0 * v[1] - mu1 * (y1 + mu) / d1 - mu * (y1 - mu1) / d2,
                     y2 - 2.0 * v[0] - mu1 * y2 / d1 - mu * y2 / d2])


def arenstorf(orbits=1.0, t_end=None):
    """Arenstorf's periodic orbit of the restricted three-body problem.

    A satellite of negligible mass in the rotating frame of the Earth (mass
    ``1 - mu`` at ``(-mu, 0)``) and the Moon (mass ``mu`` at ``(1 - mu, 0)``)::

        y1'' = y1 + 2 y2' - (1-mu) (y1 + mu) / D1 - mu (y1 - 1 + mu) / D2
        y2'' = y2 - 2 y1' - (1-mu) y2 / D1 - mu y2 / D2
        D1 = ((y1 + mu)^2 + y2^2)^(3/2),  D2 = ((y1 - 1 + mu)^2 + y2^2)^(3/2)

    with ``mu = 0.012277471``, ``y(0) = (0.994, 0)``,
    ``y'(0) = (0, -2.00158510637908252240537862224)``.  The forces depend on
    the velocity (Coriolis).  The close passes by the Earth make it the
    classic test of step-size control.

    Parameters
    ----------
    orbits : float
        Length of the span in periods (ignored when ``t_end`` is given), > 0.
    t_end : float, optional

    Notes
    -----
    The solution is periodic with period ``ARENSTORF_PERIOD`` ``T =
    17.0652165601579625588917206249``: ``y(n T) = y(0)`` for whole ``n``,
    which is what a test of the error uses.  There is no closed form in
    between, so ``exact`` is ``None``.

    Invariant: ``energy`` ``= |y'|^2/2 - |y|^2/2 - (1-mu)/r1 - mu/r2``, the
    Jacobi integral (``C_J = -2 energy``): the energy in the rotating frame.

    Reference: Arenstorf, Amer. J. Math. 85 (1963); Hairer, Nørsett & Wanner,
    *Solving ODEs I* (1993), II.0 (the problem, its initial values and
    period).
    """
    if t_end is None:
        t_end = _positive("orbits", orbits) * ARENSTORF_PERIOD
    t_end = _span_end(t_end, None)
    mu = ARENSTORF_MU
    mu1 = 1.0 - mu

    def energy(t, x, v):
        r1 = math.hypot(x[0] + mu, x[1])
        r2 = math.hypot(x[0] - mu1, x[1])
        return float(0.5 * (v[0] * v[0] + v[1] * v[1]) - 0.5 * (x[0] * x[0] + x[1] * x[1])
                     - mu1 / r1 - mu / r2)

    return SecondOrderProblem(
        _arenstorf_accel, (0.0, t_end), [0.994, 0.0], [0.0, ARENSTORF_V0], args=(mu,),
        velocity_dependent=True, exact=None, name="arenstorf", invariants={"energy": energy}, autonomous=True)


def _van_der_pol_rhs(t, y, mu):
    return np.array([y[1], mu * (1.0 - y[0] * y[0]) * y[1] - y[0]])


def _van_der_pol_jac(t, y, mu):
    J = np.empty((2, 2))
    J[0, 0] = 0.0
    J[0, 1] = 1.0
    J[1, 0] = -2.0 * mu * y[0] * y[1] - 1.0
    J[1, 1] = mu * (1.0 - y[0] * y[0])
    return J


def van_der_pol(mu=1.0, y0=(2.0, 0.0), t_end=20.0):
    """Van der Pol's oscillator ``x'' = mu (1 - x^2) x' - x``, in first-order form.

    The state is ``y = (x, x')``: ``y1' = y2``, ``y2' = mu (1 - y1^2) y2 - y1``.
    Every solution tends to a limit cycle of amplitude about 2; for large
    ``mu`` it becomes a relaxation oscillation and the problem is stiff
    (period about ``(3 - 2 ln 2) mu``).

    Parameters
    ----------
    mu : float
        Nonlinearity and damping, >= 0 (``mu = 0``: harmonic oscillator).
    y0 : (float, float)
        Initial ``(x, x')``; the default starts near the limit cycle.
    t_end : float
        Default 20, about three periods for ``mu = 1``.

    Notes
    -----
    No closed form (``exact`` is ``None``) and no invariants; analytic
    Jacobian.

    Reference: van der Pol, Phil. Mag. (7) 2 (1926); Hairer, Nørsett &
    Wanner, *Solving ODEs I* (1993), I.16; Hairer & Wanner, *Solving ODEs II*
    (1996), IV.10 (problem VDPOL: the stiff case, in scaled time).
    """
    mu = _nonnegative("mu", mu)
    y0 = _vector("y0", y0, 2)
    t_end = _span_end(t_end, None)
    return ODEProblem(_van_der_pol_rhs, (0.0, t_end), y0, args=(mu,), jac=_van_der_pol_jac,
                      name="van_der_pol", autonomous=True)


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


def _robertson_rhs(t, y, k1, k2, k3):
    fast = k3 * y[1] * y[2]
    slow = k2 * y[1] * y[1]
    return np.array([-k1 * y[0] + fast, k1 * y[0] - fast - slow, slow])


def _robertson_jac(t, y, k1, k2, k3):
    J = np.empty((3, 3))
    J[0, 0], J[0, 1], J[0, 2] = -k1, k3 * y[2], k3 * y[1]
    J[1, 0], J[1, 1], J[1, 2] = k1, -k3 * y[2] - 2.0 * k2 * y[1], -k3 * y[1]
    J[2, 0], J[2, 1], J[2, 2] = 0.0, 2.0 * k2 * y[1], 0.0
    return J


def robertson(k1=0.04, k2=3e7, k3=1e4, y0=(1.0, 0.0, 0.0), t_end=40.0):
    """Robertson's chemical kinetics: the classic stiff test problem.

    Three species, reactions ``A -> B`` (rate ``k1``), ``B + B -> C + B``
    (``k2``) and ``B + C -> A + C`` (``k3``)::

        y1' = -k1 y1 + k3 y2 y3
        y2' =  k1 y1 - k3 y2 y3 - k2 y2^2
        y3' =  k2 y2^2

    The rates span eleven orders of magnitude: ``y2`` settles in ~1e-4 time
    units and then stays near 1e-5 while the others evolve over ``t`` ~ 1e1
    to 1e11.  Explicit methods need ``h`` below ~1e-3 throughout.

    Parameters
    ----------
    k1, k2, k3 : float
        Rate constants, > 0 (defaults 0.04, 3e7, 1e4).
    y0 : (float, float, float)
        Default ``(1, 0, 0)``.
    t_end : float
        Default 40; at ``t = 40``, ``y = (0.7158271, 9.185535e-6, 0.2841637)``
        (Hindmarsh's LSODE demonstration).

    Notes
    -----
    No closed form (``exact`` is ``None``).  Invariant: ``mass`` ``= y1 + y2 +
    y3`` (= 1 by default): the rows of the right-hand side add to zero.  Being
    linear it is kept to round-off by every Runge--Kutta and Rosenbrock method.
    Analytic Jacobian.

    Reference: Robertson, in *Numerical Analysis: An Introduction* (ed.
    Walsh, 1966); Hairer & Wanner, *Solving ODEs II* (1996), IV.1 and IV.10
    (problem ROBER).
    """
    k1, k2, k3 = _positive("k1", k1), _positive("k2", k2), _positive("k3", k3)
    y0 = _vector("y0", y0, 3)
    t_end = _span_end(t_end, None)
    return ODEProblem(_robertson_rhs, (0.0, t_end), y0, args=(k1, k2, k3), jac=_robertson_jac,
                      name="robertson", invariants={"mass": lambda t, y: float(y[0] + y[1] + y[2])}, autonomous=True)


# Mazzia, Iavernaro & Magherini, Test Set for IVP Solvers (release 2.4), problem HIRES:
# the reference solution at t = 321.8122, computed there with RADAU5 at tight tolerance.
HIRES_T_END = 321.8122
HIRES_Y0 = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057)
HIRES_REFERENCE = (0.7371312573325668e-3, 0.1442485726316185e-3, 0.5888729740967575e-4,
                   0.1175651343283149e-2, 0.2386356198831331e-2, 0.6238968252742796e-2,
                   0.2849998395185769e-2, 0.2850001604814231e-2)


def _hires_rhs(t, y):
    fast = 280.0 * y[5] * y[7]
    slow = 1.81 * y[6]
    return np.array([-1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007,
                     1.71 * y[0] - 8.75 * y[1],
                     -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4],
                     8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3],
                     -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6],
                     -fast + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6],
                     fast - slow,
                     slow - fast])


def _hires_jac(t, y):
    J = np.zeros((8, 8))
    J[0, 0], J[0, 1], J[0, 2] = -1.71, 0.43, 8.32
    J[1, 0], J[1, 1] = 1.71, -8.75
    J[2, 2], J[2, 3], J[2, 4] = -10.03, 0.43, 0.035
    J[3, 1], J[3, 2], J[3, 3] = 8.32, 1.71, -1.12
    J[4, 4], J[4, 5], J[4, 6] = -1.745, 0.43, 0.43
    J[5, 3], J[5, 4], J[5, 5], J[5, 6], J[5, 7] = 0.69, 1.71, -280.0 * y[7] - 0.43, 0.69, -280.0 * y[5]
    J[6, 5], J[6, 6], J[6, 7] = 280.0 * y[7], -1.81, 280.0 * y[5]
    J[7, 5], J[7, 6], J[7, 7] = -280.0 * y[7], 1.81, -280.0 * y[5]
    return J


def hires(y0=HIRES_Y0, t_end=HIRES_T_END):
    """HIRES: Schäfer's model of the "high irradiance responses" of plants.

    Eight chemical species of photomorphogenesis, governed by light through
    phytochrome; a stiff system of eight equations, linear but for the
    reaction ``y6 + y8 -> y7`` at rate 280::

        y1' = -1.71 y1 + 0.43 y2 + 8.32 y3 + 0.0007
        y2' =  1.71 y1 - 8.75 y2
        y3' = -10.03 y3 + 0.43 y4 + 0.035 y5
        y4' =  8.32 y2 + 1.71 y3 - 1.12 y4
        y5' = -1.745 y5 + 0.43 y6 + 0.43 y7
        y6' = -280 y6 y8 + 0.69 y4 + 1.71 y5 - 0.43 y6 + 0.69 y7
        y7' =  280 y6 y8 - 1.81 y7
        y8' = -280 y6 y8 + 1.81 y7

    Parameters
    ----------
    y0 : 8 floats
        Default ``(1, 0, 0, 0, 0, 0, 0, 0.0057)`` (``HIRES_Y0``).
    t_end : float
        Default ``HIRES_T_END = 321.8122``, the end of the standard span.

    Notes
    -----
    No closed form (``exact`` is ``None``).  ``HIRES_REFERENCE`` is ``y`` at
    ``t = 321.8122`` from the default ``y0``, as published with the Test Set
    (RADAU5 at tight tolerance; SciPy's Radau at rtol 1e-12 agrees to 3e-13
    relative in every component).

    Invariant: ``y7_plus_y8`` ``= y7 + y8`` (= 0.0057 by default): the fast
    reaction only moves matter between ``y7`` and ``y8``.  Being linear it is
    kept to round-off by every Runge--Kutta and Rosenbrock method.  Analytic
    Jacobian.

    Reference: Schäfer, J. Math. Biol. 2 (1975); Hairer & Wanner, *Solving
    ODEs II* (1996), IV.10 (problem HIRES); Mazzia, Iavernaro & Magherini,
    *Test Set for IVP Solvers*, release 2.4 (2008), problem HIRES (the
    reference solution).
    """
    y0 = _vector("y0", y0, 8)
    t_end = _span_end(t_end, None)
    return ODEProblem(_hires_rhs, (0.0, t_end), y0, jac=_hires_jac, name="hires",
                      invariants={"y7_plus_y8": lambda t, y: float(y[6] + y[7])}, autonomous=True)


def _henon_heiles_accel(t, x, v):
    return np.array([-x[0] - 2.0 * x[0] * x[1], -x[1] - x[0] * x[0] + x[1] * x[1]])


def _henon_heiles_energy(t, x, v):
    return float(0.5 * (v[0] * v[0] + v[1] * v[1]) + 0.5 * (x[0] * x[0] + x[1] * x[1])
                 + x[0] * x[0] * x[1] - x[1] ** 3 / 3.0)


def henon_heiles(energy=1 / 8, q2=0.1, p2=0.0, t_end=100.0):
    """The Hénon--Heiles model: a star in a galactic potential.

    ``H = (p1^2 + p2^2)/2 + (q1^2 + q2^2)/2 + q1^2 q2 - q2^3/3``, so
    ``q1'' = -q1 - 2 q1 q2``, ``q2'' = -q2 - q1^2 + q2^2``.  Motion is bounded
    for ``H < 1/6``; mostly regular at ``H = 1/12`` and mostly chaotic at
    ``H = 1/8``.

    The initial point lies on the Poincaré section ``q1 = 0``, ``p1 > 0``:
    ``q = (0, q2)``, ``p = (p1, p2)`` with ``p1 = sqrt(2 H - p2^2 - q2^2 +
    2 q2^3/3)`` chosen so that the energy is ``energy``.

    Parameters
    ----------
    energy : float
        ``0 < energy < 1/6``.  Default 1/8.
    q2, p2 : float
        The rest of the initial point; ``-1/2 < q2 < 1`` and the energy must
        leave ``p1^2 >= 0``.
    t_end : float

    Notes
    -----
    No closed form (``exact`` is ``None``).  Invariant: ``energy`` (``H``).

    Reference: Hénon & Heiles, Astron. J. 69 (1964); Hairer, Lubich & Wanner,
    *Geometric Numerical Integration* (2006), I.3.
    """
    energy = _number("energy", energy, "a number with 0 < energy < 1/6 (bounded motion)",
                     lambda v: 0 < v < 1 / 6)
    q2 = _number("q2", q2, "a number with -1/2 < q2 < 1 (inside the potential well)",
                 lambda v: -0.5 < v < 1)
    p2 = _number("p2", p2)
    p1_squared = 2 * energy - p2 * p2 - q2 * q2 + 2 * q2 ** 3 / 3
    if p1_squared < 0:
        raise ValueError(f"energy={energy!r} is below the energy {energy - p1_squared / 2!r} of "
                         f"the point q2={q2!r}, p2={p2!r}; accepted: energy >= "
                         f"(p2^2 + q2^2)/2 - q2^3/3")
    t_end = _span_end(t_end, None)
    return SecondOrderProblem(
        _henon_heiles_accel, (0.0, t_end), [0.0, q2], [math.sqrt(p1_squared), p2],
        velocity_dependent=False, name="henon_heiles", invariants={"energy": _henon_heiles_energy}, autonomous=True)


# Hairer, Lubich & Wanner, Geometric Numerical Integration, I.2.4, Table 2.1:
# masses relative to the Sun (the Sun's includes the inner planets), distances
# in astronomical units, time in earth days, positions and velocities at
# 5 September 1994, 0h00 GST.
OUTER_SOLAR_SYSTEM_G = 2.95912208286e-4
OUTER_SOLAR_SYSTEM_BODIES = ("Sun", "Jupiter", "Saturn", "Uranus", "Neptune", "Pluto")
OUTER_SOLAR_SYSTEM_MASSES = (1.00000597682, 0.000954786104043, 0.000285583733151,
                             0.0000437273164546, 0.0000517759138449, 1 / 1.3e8)
_OUTER_X0 = ((0.0, 0.0, 0.0),
             (-3.5023653, -3.8169847, -1.5507963),
             (9.0755314, -3.0458353, -1.6483708),
             (8.3101420, -16.2901086, -7.2521278),
             (11.4707666, -25.7294829, -10.8169456),
             (-15.5387357, -25.2225594, -3.1902382))
_OUTER_V0 = ((0.0, 0.0, 0.0),
             (0.00565429, -0.00412490, -0.00190589),
             (0.00168318, 0.00483525, 0.00192462),
             (0.00354178, 0.00137102, 0.00055029),
             (0.00288930, 0.00114527, 0.00039677),
             (0.00276725, -0.00170702, -0.00136504))


def _nbody_accel(t, x, v, gm):
    """Newtonian gravity of ``n`` bodies; ``gm[i] = G m_i``; ``x`` is ``(n, 3)``."""
    n = x.shape[0]
    a = np.zeros(x.shape)
    for i in range(n):
        for j in range(i + 1, n):
            d0 = x[j, 0] - x[i, 0]
            d1 = x[j, 1] - x[i, 1]
            d2 = x[j, 2] - x[i, 2]
            r2 = d0 * d0 + d1 * d1 + d2 * d2
            s = 1.0 / (r2 * math.sqrt(r2))
            a[i, 0] += gm[j] * s * d0
            a[i, 1] += gm[j] * s * d1
            a[i, 2] += gm[j] * s * d2
            a[j, 0] -= gm[i] * s * d0
            a[j, 1] -= gm[i] * s * d1
            a[j, 2] -= gm[i] * s * d2
    return a


def nbody_energy(x, v, masses, G):
    """``sum m_i |v_i|^2 / 2 - G sum_{i<j} m_i m_j / |x_i - x_j|`` for ``(n, 3)`` arrays."""
    m = np.asarray(masses)
    kinetic = 0.5 * float(np.sum(m * np.sum(v * v, axis=1)))
    potential = 0.0
    for i in range(len(m)):
        d = np.linalg.norm(x[i + 1:] - x[i], axis=1)
        potential -= G * m[i] * float(np.sum(m[i + 1:] / d))
    return kinetic + potential


def outer_solar_system(t_end=200_000.0):
    """The Sun and the five outer planets: a gravitational six-body problem.

    ``x_i'' = G sum_{j != i} m_j (x_j - x_i) / |x_j - x_i|^3`` for the Sun
    (with the inner planets' masses added), Jupiter, Saturn, Uranus, Neptune
    and Pluto.  Positions and velocities are ``(6, 3)`` arrays (row ``i`` is
    body ``OUTER_SOLAR_SYSTEM_BODIES[i]``); units are astronomical units, solar
    masses and earth days, so ``G = 2.95912208286e-4``.  Jupiter's period is
    about 4330 days, Pluto's about 90 000.

    Parameters
    ----------
    t_end : float
        Default 200 000 days, as in Hairer, Lubich & Wanner.

    Notes
    -----
    No closed form (``exact`` is ``None``).  Invariants: ``energy`` (kinetic
    plus potential, :func:`nbody_energy`), ``angular_momentum`` (the length of
    ``sum m_i x_i x v_i``) and ``momentum`` (the length of ``sum m_i v_i``;
    the data put the Sun at rest, so the centre of mass drifts at a constant
    velocity).

    Reference: Hairer, Lubich & Wanner, *Geometric Numerical Integration*
    (2006), I.2.4 and Table 2.1 (the data).
    """
    t_end = _span_end(t_end, None)
    G = OUTER_SOLAR_SYSTEM_G
    m = np.array(OUTER_SOLAR_SYSTEM_MASSES)
    mm = m[:, None]

    def energy(t, x, v):
        return nbody_energy(x, v, m, G)

    def angular_momentum(t, x, v):
        return float(np.linalg.norm(np.sum(mm * np.cross(x, v), axis=0)))

    def momentum(t, x, v):
        return float(np.linalg.norm(np.sum(mm * v, axis=0)))

    return SecondOrderProblem(
        _nbody_accel, (0.0, t_end), np.array(_OUTER_X0), np.array(_OUTER_V0), args=(G * m,),
        velocity_dependent=False, name="outer_solar_system",
        invariants={"energy": energy, "angular_momentum": angular_momentum, "momentum": momentum}, autonomous=True)


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


# --- cloth: a mass-spring grid ------------------------------------------------------------

CLOTH_GRAVITY = 9.81


def cloth_springs(n):
    """Provot's springs of an ``n`` x ``n`` grid of particles ``r n + c`` (row ``r``, column ``c``).

    Returns ``(pairs, kind)``: ``pairs`` an int64 ``(S, 2)`` array of particle
    indices, ``kind`` an int64 ``(S,)`` array, 0 for stretch (grid neighbours),
    1 for shear (diagonals), 2 for bend (two apart along a grid line).
    """
    grid = np.arange(n * n).reshape(n, n)
    ends = [(grid[:, :-1], grid[:, 1:]), (grid[:-1, :], grid[1:, :]),          # stretch
            (grid[:-1, :-1], grid[1:, 1:]), (grid[:-1, 1:], grid[1:, :-1]),    # shear
            (grid[:, :-2], grid[:, 2:]), (grid[:-2, :], grid[2:, :])]          # bend
    pairs = np.concatenate([np.stack([a.ravel(), b.ravel()], axis=1) for a, b in ends]).astype(np.int64)
    kind = np.repeat(np.arange(6) // 2, [a.size for a, _ in ends]).astype(np.int64)
    return pairs, kind


def _cloth_accel(t, x, v, springs, rest, k, c, m, g, pinned):
    # one pass over the springs, each adding its force to both ends: the loop Numba compiles
    a = np.zeros(x.shape)
    for s in range(springs.shape[0]):
        i, j = springs[s, 0], springs[s, 1]
        d0, d1, d2 = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1], x[j, 2] - x[i, 2]
        length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        u0, u1, u2 = d0 / length, d1 / length, d2 / length
        closing = (v[j, 0] - v[i, 0]) * u0 + (v[j, 1] - v[i, 1]) * u1 + (v[j, 2] - v[i, 2]) * u2
        f = k[s] * (length - rest[s]) + c * closing          # tension along u, on i towards j
        a[i, 0] += f * u0
        a[i, 1] += f * u1
        a[i, 2] += f * u2
        a[j, 0] -= f * u0
        a[j, 1] -= f * u1
        a[j, 2] -= f * u2
    for p in range(a.shape[0]):
        a[p, 0] /= m
        a[p, 1] /= m
        a[p, 2] = a[p, 2] / m - g
    for p in pinned:
        a[p, 0] = a[p, 1] = a[p, 2] = 0.0
    return a


def _spring_blocks(springs, blocks, N, free):
    """Sum each spring's 3x3 block into ``d(force)/d(positions)`` (or velocities), for each array of blocks.

    A spring between ``i`` and ``j`` with block ``B`` adds ``+B`` to blocks
    ``(i, j)`` and ``(j, i)`` and ``-B`` to ``(i, i)`` and ``(j, j)``, over
    ``x.ravel()`` indices ``3 p + component``.  Rows and columns of pinned
    particles (``~free``) are left out: they never move.  Built as a block
    (BSR) matrix whose blocks are sorted once for all ``blocks``; no two
    springs join the same pair, so only the diagonal blocks need summing.
    """
    i, j = springs[:, 0], springs[:, 1]
    nodes = np.arange(N)
    p, q = np.concatenate([i, j, nodes]), np.concatenate([j, i, nodes])
    kept = np.flatnonzero(free[p] & free[q])
    take = kept[np.argsort(p[kept] * N + q[kept])]             # the kept blocks, row by row
    indptr = np.concatenate([[0], np.cumsum(np.bincount(p[kept], minlength=N))])
    matrices = []
    for B in blocks:
        flat = B.reshape(-1, 9)
        diag = np.stack([-np.bincount(i, flat[:, e], N) - np.bincount(j, flat[:, e], N) for e in range(9)], axis=1)
        data = np.concatenate([B, B, diag.reshape(N, 3, 3)])[take]
        matrices.append(sparse.bsr_matrix((data, q[take], indptr), shape=(3 * N, 3 * N)).tocsr())
    return matrices


def _cloth_jac(t, x, v, springs, rest, k, c, m, g, pinned):
    """``(A_x, A_v) = (da/dx, da/dv)`` of :func:`_cloth_accel`, sparse, vectorised over springs.

    Baraff & Witkin's spring Jacobian ``K = k [(1 - L/l)(I - u u^T) + u u^T]``
    with ``(1 - L/l)`` clamped at 0: exact for stretched springs, and keeps
    ``-A_x`` positive semidefinite when some are compressed.  The damping
    force's dependence on ``x`` (through ``u``) is left out of ``A_x``, as
    there: it vanishes with the relative velocity and would break symmetry.
    """
    N = x.shape[0]
    d = x[springs[:, 1]] - x[springs[:, 0]]
    length = np.sqrt(np.einsum("sk,sk->s", d, d))
    u = d / length[:, None]
    uu = u[:, :, None] * u[:, None, :]
    tension = np.maximum(1.0 - rest / length, 0.0)          # the clamp: see cloth's Notes
    K = (k * tension)[:, None, None] * (np.eye(3) - uu) + k[:, None, None] * uu
    free = np.ones(N, dtype=bool)
    free[pinned] = False
    A_x, A_v = _spring_blocks(springs, (K / m, (c / m) * uu), N, free)
    return A_x, A_v


def cloth_stretch(x, springs, rest, *_):
    """The largest relative elongation ``|d|/L - 1`` of any spring; ``cloth_stretch(x, *prob.args)``."""
    d = x[springs[:, 1]] - x[springs[:, 0]]
    return float(np.max(np.sqrt(np.einsum("sk,sk->s", d, d)) / rest) - 1.0)


def cloth(n=32, k_stretch=1000.0, k_shear=500.0, k_bend=20.0, damping=0.02, mass=0.3, size=1.0,
          t_end=2.5):
    """Cloth as a mass--spring grid: a sheet pinned at two corners falls and swings.

    ``n x n`` particles of mass ``m = mass / n^2`` on a square grid of side
    ``size`` and spacing ``L = size / (n - 1)``, joined by Provot's springs
    (:func:`cloth_springs`): *stretch* between grid neighbours (rest length
    ``L``), *shear* along the diagonals (``sqrt(2) L``) and *bend* between
    particles two apart along a grid line (``2 L``).  A spring from ``i`` to
    ``j``, ``d = x_j - x_i``, ``u = d/|d|``, pulls ``i`` with
    ``f_i = k (|d| - L0) u + c ((v_j - v_i) . u) u`` and ``j`` with ``-f_i``;
    gravity ``g = 9.81`` pulls along ``-z``.  Particle ``r n + c`` (row ``r``,
    column ``c``) starts at rest at ``(c L, r L, 0)``: the sheet lies flat
    and horizontal, held by the two pinned corners of row 0 (particles ``0``
    and ``n - 1``, acceleration 0), so it falls, swings down about the
    pinned edge and comes to hang as a curtain.  Positions and velocities
    are ``(n^2, 3)`` arrays.

    Parameters
    ----------
    n : int
        Particles per side, >= 2 (a whole number).
    k_stretch, k_shear, k_bend : float
        Spring stiffnesses (N/m), > 0.
    damping : float
        Damping ``c`` of every spring along its own direction (N s/m),
        >= 0; the force depends on the velocity when ``damping > 0``.
    mass : float
        Total mass of the sheet (kg), > 0.
    size : float
        Side of the square (m), > 0.
    t_end : float
        Default 2.5 s: the fall, a swing and its decay.

    Notes
    -----
    No closed form (``exact`` is ``None``).  Invariant: ``energy`` -- kinetic
    plus gravitational (height measured from ``z = -size``, where the free
    edge of a sheet hanging straight down would be, so the initial energy is
    ``mass g size``) plus the springs' ``k (|d| - L0)^2 / 2``.  Conserved when
    ``damping = 0``; with damping it only decreases.  ``cloth_stretch(x,
    *prob.args)`` gives the largest spring elongation.  At the defaults the
    hanging sheet stretches most at the pinned corners, which carry its
    weight: 3 % at ``n = 32``, 6 % at ``n = 64`` (the corner springs' share
    of the load stays the same while they get shorter), and up to 11 % at
    ``n = 64`` in the jerk at the bottom of the fall.

    Stiff: a spring of stiffness ``k`` between particles of mass ``m``
    oscillates at ``sqrt(2k/m)``, and the fastest grid modes faster still, so
    explicit methods need ``h`` below ``~2 sqrt(m/k)``.  At the defaults with
    ``n = 64`` that is ``2 sqrt(m/k_stretch) = 5.4e-4`` s, and the fastest
    mode (``omega_max = 9.0e3``/s) limits leapfrog to ``h < 2/omega_max =
    2.2e-4`` s -- 75 times below a frame, ``h = 1/60`` s.  Baraff &
    Witkin's step, one Newton iteration of backward Euler per frame, is
    ``linearized_euler``: with ``linear_solver="cg"`` it takes ``h = 1/60``
    s.  Fixed-step ``backward_euler`` iterates Newton to convergence, which
    does not converge at that step (nor at ``h = 1/480`` s, nor from a
    sagging start); adaptive ``backward_euler`` gets through in smaller
    steps.

    Analytic force Jacobians (``jac``): sparse ``(A_x, A_v) = (da/dx,
    da/dv)`` over ``x.ravel()``, each ``3 n^2`` square, with Baraff &
    Witkin's block ``K = k [(1 - L0/l)(I - u u^T) + u u^T]`` per spring and
    ``c u u^T`` for damping, divided by ``m``; pinned particles' rows and
    columns are zero.  ``(1 - L0/l)`` is clamped at 0 for compressed springs,
    a deliberate approximation (Choi & Ko 2002): it keeps ``-A_x`` positive
    semidefinite, so that ``I - h A_v - h^2 A_x`` is symmetric positive
    definite and conjugate gradients apply.  Newton still converges to the
    true step, because its residual uses the true force.  ``A_x`` also leaves
    out the damping force's dependence on the spring directions (zero when
    the particles are at rest relative to each other).

    Reference: Baraff & Witkin, *Large Steps in Cloth Simulation*, SIGGRAPH
    (1998); Provot, *Deformation Constraints in a Mass-Spring Model to
    Describe Rigid Cloth Behavior*, Graphics Interface (1995) (the springs);
    Choi & Ko, *Stable but Responsive Cloth*, SIGGRAPH (2002) (the clamp).
    """
    n = _count("n", n, 2)
    k_stretch, k_shear, k_bend = (_positive(name, value) for name, value in
                                  (("k_stretch", k_stretch), ("k_shear", k_shear), ("k_bend", k_bend)))
    damping = _nonnegative("damping", damping)
    mass, size = _positive("mass", mass), _positive("size", size)
    t_end = _span_end(t_end, None)
    spacing = size / (n - 1)
    rows, cols = np.divmod(np.arange(n * n), n)
    x0 = np.stack([cols * spacing, rows * spacing, np.zeros(n * n)], axis=1)
    springs, kind = cloth_springs(n)
    rest = np.array([1.0, math.sqrt(2.0), 2.0])[kind] * spacing
    k = np.array([k_stretch, k_shear, k_bend])[kind]
    m, g = mass / (n * n), CLOTH_GRAVITY
    pinned = np.array([0, n - 1], dtype=np.int64)

    def energy(t, x, v):
        d = x[springs[:, 1]] - x[springs[:, 0]]
        extension = np.sqrt(np.einsum("sk,sk->s", d, d)) - rest
        return float(0.5 * m * np.sum(v * v) + m * g * np.sum(x[:, 2] + size)
                     + 0.5 * np.sum(k * extension * extension))

    return SecondOrderProblem(
        _cloth_accel, (0.0, t_end), x0, np.zeros_like(x0), args=(springs, rest, k, damping, m, g, pinned),
        velocity_dependent=damping > 0, name="cloth", jac=_cloth_jac, invariants={"energy": energy}, autonomous=True)


PROBLEMS = {
    # from the simulation literature
    "decay": decay,
    "bead_on_rod": bead_on_rod,
    "bead_on_wire": bead_on_wire,
    "rotation": rotation,
    "kepler": kepler,
    "pendulum": pendulum,
    "harmonic_oscillator": harmonic_oscillator,
    # standard test problems
    "arenstorf": arenstorf,
    "van_der_pol": van_der_pol,
    "lorenz": lorenz,
    "brusselator": brusselator,
    "robertson": robertson,
    "hires": hires,
    "henon_heiles": henon_heiles,
    "outer_solar_system": outer_solar_system,
    "mass_spring_chain": mass_spring_chain,
    "cloth": cloth,
}


def problem(name, **params):
    """A zoo problem by name, with keyword parameters (``problem("kepler", e=0.9)``).

    ``PROBLEMS`` lists the names; an unknown name gets a ValueError with the
    closest names and the full list.
    """
    try:
        make = PROBLEMS[name]
    except (KeyError, TypeError):
        import difflib

        close = difflib.get_close_matches(str(name), list(PROBLEMS), n=3, cutoff=0.5)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown problem {name!r}{hint}. Known: {', '.join(PROBLEMS)}") from None
    return make(**params)
