"""The small stiff test problems: van der Pol's oscillator, Robertson's kinetics, HIRES.

The three of Hairer & Wanner, *Solving ODEs II* (1996), IV.10 (problems
VDPOL, ROBER and HIRES), each with an analytic Jacobian:

* :func:`van_der_pol` -- a limit cycle, a stiff relaxation oscillation for
  large ``mu`` (not stiff at the default ``mu = 1``);
* :func:`robertson` -- chemical kinetics whose rates span eleven orders of
  magnitude;
* :func:`hires` -- eight species of a plant's response to light, with the
  published reference solution ``HIRES_REFERENCE``.

The zoo's other stiff problems are :func:`~odekit.problems.bead_on_wire`
(linear) and :func:`~odekit.problems.cloth` (large and sparse).

Sources: van der Pol, Phil. Mag. (7) 2 (1926); Robertson, in *Numerical
Analysis: An Introduction* (ed. Walsh, 1966); Schäfer, J. Math. Biol. 2
(1975); Mazzia, Iavernaro & Magherini, *Test Set for IVP Solvers*, release
2.4 (2008) (the HIRES reference solution).
"""

import numpy as np

from ..problem import ODEProblem
from ._checks import _nonnegative, _positive, _span_end, _vector


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
