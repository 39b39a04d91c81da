"""The problem zoo: test problems with exact solutions and invariants.

Right-hand sides are module-level functions that take their parameters as
``args``, so every instance of a problem shares one compiled function: the
compiled backend builds it once per process, not once per instance.
"""

import math

import numpy as np

from .problem import ODEProblem, SecondOrderProblem


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


def kepler(e=0.5, orbits=1.0, t_end=None, mu=1.0):
    """A satellite on an ellipse of eccentricity ``e`` and semi-major axis 1.

    ``x'' = -mu x / |x|^3`` in the plane, starting at pericentre
    ``x0 = (1 - e, 0)``, ``v0 = (0, sqrt(mu (1 + e) / (1 - e)))``.  The
    period is ``2 pi / sqrt(mu)``.  Exact solution through Kepler's equation
    (Hairer, Lubich & Wanner, *Geometric Numerical Integration*, I.2.3).

    Invariants: ``energy = |v|^2/2 - mu/|x|`` (= ``-mu/2``) and
    ``angular_momentum = x_1 v_2 - x_2 v_1`` (= ``sqrt(mu (1 - e^2))``).

    Parameters
    ----------
    e : float
        Eccentricity, ``0 <= e < 1``.
    orbits : float
        Length of the span in periods (ignored when ``t_end`` is given).
    t_end : float, optional
    mu : float
        Gravitational parameter ``G M``.
    """
    if not 0 <= e < 1:
        raise ValueError(f"e must satisfy 0 <= e < 1 for a closed orbit, got {e!r}")
    if not mu > 0:
        raise ValueError(f"mu must be positive, got {mu!r}")
    n = math.sqrt(mu)                         # mean motion for a = 1
    t_end = orbits * 2 * math.pi / n if t_end is None else float(t_end)
    b = math.sqrt(1 - e * e)

    def exact(t):
        E = kepler_anomaly(n * t, e)
        dE = n / (1 - e * math.cos(E))
        return (np.array([math.cos(E) - e, b * math.sin(E)]),
                np.array([-math.sin(E) * dE, b * math.cos(E) * dE]))

    def energy(t, x, v):
        return 0.5 * float(v @ v) - mu / math.sqrt(float(x @ x))

    def angular_momentum(t, x, v):
        return float(x[0] * v[1] - x[1] * v[0])

    return SecondOrderProblem(
        _kepler_accel, (0.0, t_end), [1 - e, 0.0], [0.0, math.sqrt(mu * (1 + e) / (1 - e))],
        args=(mu,), velocity_dependent=False, exact=exact, name="kepler",
        invariants={"energy": energy, "angular_momentum": angular_momentum})


# --- linear test problems -----------------------------------------------------------

def _decay_rhs(t, y, lam):
    return lam * y


def decay(lam=-1.0, y0=1.0, t_end=1.0):
    """Dahlquist's test equation ``y' = lam y``; ``y = y0 exp(lam t)``.

    ``lam`` may be complex (then so is ``y``).  The reference problem of
    linear stability analysis (Hairer & Wanner, *Solving ODEs II*, IV.2).
    """
    lam = complex(lam) if isinstance(lam, complex) else float(lam)
    y0 = np.atleast_1d(np.asarray(y0, dtype=complex if isinstance(lam, complex) else float))
    return ODEProblem(_decay_rhs, (0.0, t_end), y0, args=(lam,), jac=lambda t, y, lam: np.diag(np.full(y.size, lam)),
                      exact=lambda t: y0 * np.exp(lam * t), name="decay")


def _rotation_rhs(t, y):
    return np.array([-y[1], y[0]])


def rotation(t_end=2 * math.pi, y0=(1.0, 0.0)):
    """The rotation field ``y' = (-y_2, y_1)``: circles of constant radius.

    Explicit Euler spirals outward on it for every ``h`` (Witkin & Baraff,
    *Differential Equation Basics*).  Invariant: ``radius``.
    """
    y0 = np.asarray(y0, dtype=float)

    def exact(t):
        c, s = math.cos(t), math.sin(t)
        return np.array([c * y0[0] - s * y0[1], s * y0[0] + c * y0[1]])

    return ODEProblem(_rotation_rhs, (0.0, t_end), y0, jac=np.array([[0.0, -1.0], [1.0, 0.0]]),
                      exact=exact, name="rotation",
                      invariants={"radius": lambda t, y: float(np.hypot(y[0], y[1]))})


def _bead_rhs(t, y, k):
    return np.array([-y[0], -k * y[1]])


def bead_on_wire(k=1000.0, y0=(1.0, 1.0), t_end=1.0):
    """A bead pulled to a wire by a stiff spring: ``y' = (-x, -k y)``.

    Stiff for large ``k``: explicit Euler needs ``h < 2/k`` while the slow
    motion has time scale 1 (Witkin & Baraff).  Exact: ``(x0 e^-t, y0 e^-kt)``.
    """
    y0 = np.asarray(y0, dtype=float)
    return ODEProblem(_bead_rhs, (0.0, t_end), y0, args=(float(k),),
                      jac=lambda t, y, k: np.array([[-1.0, 0.0], [0.0, -k]]),
                      exact=lambda t: y0 * np.exp(np.array([-1.0, -k]) * t), name="bead_on_wire")


def _oscillator_accel(t, x, v, omega, zeta):
    return -omega * omega * x - 2.0 * zeta * omega * v


def harmonic_oscillator(omega=1.0, zeta=0.0, x0=1.0, v0=0.0, t_end=2 * math.pi):
    """``x'' = -omega^2 x - 2 zeta omega v``: the (damped) harmonic oscillator.

    Exact solution for every damping ratio ``zeta >= 0``.  Invariant
    ``energy = (v^2 + omega^2 x^2) / 2`` (conserved when ``zeta = 0``).
    """
    if zeta < 0:
        raise ValueError(f"zeta must be >= 0, got {zeta!r}")
    x0, v0, omega, zeta = float(x0), float(v0), float(omega), float(zeta)
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
        invariants={"energy": lambda t, x, v: 0.5 * (v * v + omega * omega * x * x)})


PROBLEMS = {
    "kepler": kepler,
    "decay": decay,
    "rotation": rotation,
    "bead_on_wire": bead_on_wire,
    "harmonic_oscillator": harmonic_oscillator,
}


def problem(name, **params):
    """A zoo problem by name, with keyword parameters (``problem("kepler", e=0.9)``)."""
    try:
        make = PROBLEMS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(PROBLEMS), n=3, cutoff=0.5)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown problem {name!r}{hint}. Known: {', '.join(PROBLEMS)}") from None
    return make(**params)
