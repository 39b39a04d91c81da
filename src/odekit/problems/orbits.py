"""Orbits and N-body problems: Kepler's ellipse, Arenstorf's orbit, Hénon--Heiles, the outer planets.

* :func:`kepler` -- a satellite on an ellipse, exact through Kepler's
  equation (:func:`kepler_anomaly`), with the Runge--Lenz vector
  (:func:`runge_lenz`) among its invariants, and its pericentre passages as
  an event (:func:`pericentre_event`);
* :func:`arenstorf` -- the periodic orbit of the restricted three-body
  problem (period ``ARENSTORF_PERIOD``), the classic test of step-size
  control;
* :func:`henon_heiles` -- a star in a galactic potential, regular or chaotic
  by its energy;
* :func:`outer_solar_system` -- the Sun and the five outer planets, Newtonian
  gravity of ``n`` bodies (:func:`nbody_energy`).

Sources: Hairer, Lubich & Wanner, *Geometric Numerical Integration* (2006),
I.2 (Kepler), I.2.4 and Table 2.1 (the outer solar system) and I.3
(Hénon--Heiles); Goldstein, Poole & Safko, *Classical Mechanics* (2002), 3.9
(the Runge--Lenz vector); Arenstorf, Amer. J. Math. 85 (1963) and Hairer,
Nørsett & Wanner, *Solving ODEs I* (1993), II.0 (Arenstorf's orbit); Hénon &
Heiles, Astron. J. 69 (1964).
"""

import functools
import math

import numpy as np

from ..events import Event
from ..kernels import jitable, on_stack
from ..nbody import NBody
from ..problem import SecondOrderProblem
from ._checks import _number, _positive, _span_end


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


def _radial_motion(t, x, v, mu):
    return x[0] * v[0] + x[1] * v[1]


def pericentre_event(terminal=False):
    """An :class:`~odekit.Event` at each pericentre passage of :func:`kepler`'s satellite.

    ``g = x . v = r r'`` crosses zero from negative (falling in) to positive
    (climbing out) at the pericentre, and the other way at the apocentre,
    which ``direction=1`` leaves out.  The time between two passages is the
    orbit's period, ``2 pi a^(3/2) / sqrt(mu)``, located to rounding rather
    than to the output's steps.  A run that starts at the pericentre, as
    :func:`kepler`'s does, counts its first passage one period on.

    Parameters
    ----------
    terminal : bool or int
        As for :class:`~odekit.Event`: ``N`` stops the run at the ``N``-th
        passage, after ``N`` whole orbits.

    Notes
    -----
    For an orbit that is not a circle: on a circle ``x . v`` is zero all
    along, and its round-off crosses zero at random.
    """
    return _pericentre(terminal)


@functools.cache            # one Event per kind, so that it is compiled once per process, like the force
def _pericentre(terminal):
    return Event(_radial_motion, direction=1, terminal=terminal, name="pericentre")


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
    :func:`pericentre_event` marks the passages at the pericentre, one
    period apart.

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
    # Body i's sums are kept in locals while j runs (its x and G m_i too): compiled, the stores into
    # a[j] kept them in memory, since a[i] and a[j] might be one element.  The same sums in the same
    # order, so the same numbers.  Compiled, on a shared 2-core machine: the force of bench_nbody.py's
    # 100 bodies took 26.3 us instead of 31.7 (6 bodies: 129 ns, not 149), a velocity_verlet step 367
    # ns per body instead of 419.
    n = x.shape[0]
    a = np.zeros(x.shape)
    for i in range(n):
        xi0, xi1, xi2, gmi = x[i, 0], x[i, 1], x[i, 2], gm[i]
        ai0, ai1, ai2 = a[i, 0], a[i, 1], a[i, 2]
        for j in range(i + 1, n):
            d0 = x[j, 0] - xi0
            d1 = x[j, 1] - xi1
            d2 = x[j, 2] - xi2
            r2 = d0 * d0 + d1 * d1 + d2 * d2
            s = 1.0 / (r2 * math.sqrt(r2))
            sj = gm[j] * s
            si = gmi * s
            ai0 += sj * d0
            ai1 += sj * d1
            ai2 += sj * d2
            a[j, 0] -= si * d0
            a[j, 1] -= si * d1
            a[j, 2] -= si * d2
        a[i, 0], a[i, 1], a[i, 2] = ai0, ai1, ai2
    return a


PAIRS_BY_PARTNER = 40       # bodies from which the in-place twin sums partner by partner


def _nbody_accel_in_place(W, dst, start, t, x, v, gm):
    """The in-place twin of :func:`_nbody_accel` (see :mod:`odekit.twins`): the same numbers, bit for bit.

    The compiled backend calls it instead of ``_nbody_accel``: it reads the
    positions flat, ``x[3 i + k]``, and writes the accelerations into
    ``W[dst, start:]``, so a force costs neither the reshaped views of the
    state nor a new array.  False when the row does not hold ``n`` bodies.

    Every acceleration is a sum over the other bodies in increasing order,
    ``a_e = sum_k G m_k s_ek (x_k - x_e)`` (the terms of ``k < e`` are
    ``_nbody_accel``'s ``a[j] -= si d``, negated exactly), so it may be
    computed body by body in any order of ``e``.  From
    ``PAIRS_BY_PARTNER`` bodies on, the positions are copied into a
    structure of arrays and the pairs of body ``i``, ``j > i``, are taken
    at once, in a loop that Numba's LLVM vectorises: each pair's ``1 / r^3``
    (a square root and a division, the divider's work that bounds the
    force) and its terms of the bodies ``j``; body ``i``'s own sum is then
    added up in order, for two bodies at a time so that the two chains of
    additions overlap (see :func:`_pairs_by_rows`).  On a shared 2-core
    machine (AVX2), the force of 100 bodies took 16.6 us (26 with the pairs
    taken once, 19.6 with every body updated partner by partner, which
    computed each ``1 / r^3`` twice); the two ways took as long at about
    40 bodies (32: 2.2 us taking the pairs once against 2.5; 48: 5.0
    against 4.5), and below, the pairs are taken once, as ``_nbody_accel``
    does (8 bodies 0.13 us against 0.41, the structure of arrays allocated
    and copied for nothing).  Since the pairs taken once compute their
    ``1 / r^3`` eight at a time (:func:`_pairs_once`), they are the faster
    up to about 75 bodies (2-core AMD EPYC: 39 bodies 2.1 us against 2.9,
    64: 5.6 against 6.0, 100: 13.5 against 12.5); the switch stays at 40,
    which keeps their stack space under 6 kB.
    """
    n = gm.shape[0]
    if W.shape[1] - start != 3 * n or x.shape[0] != 3 * n:
        return False
    if n < PAIRS_BY_PARTNER:
        _pairs_once(W, dst, start, x, gm)
    else:
        _pairs_by_rows(W, dst, start, x, gm)
    return True


PAIRS_ON_STACK = -(-(PAIRS_BY_PARTNER - 1) * (PAIRS_BY_PARTNER - 2) // 16) * 8   # the most pairs, padded to 8s


@jitable
def _pairs_once(W, dst, start, x, gm):
    """``_nbody_accel``'s loop over the pairs ``i < j``, into ``W[dst, start:]``, with each pair's ``1 / r^3``
    computed first, all pairs at once.

    A pair's ``1 / r^3`` takes a square root and a division, which share the
    divider; taken pair by pair, as ``_nbody_accel`` does, they bound the
    force.  Here a first pass stores every pair's ``r^2`` in order on the
    stack (:func:`~odekit.kernels.on_stack`), a loop that LLVM vectorises
    turns them into ``1 / r^3`` eight at a time (the count padded with
    ones), and the second pass adds up the terms as ``_nbody_accel`` does,
    recomputing the differences (cheaper than storing them): the same
    numbers bit for bit.  Compiled, alone in a loop on a 2-core AMD EPYC
    (AVX-512): the force of six bodies 63 ns instead of 79 pair by pair;
    storing the differences as well, on the heap, 69.

    Written twice, here and in ``_nbody_accel``: a zoo function compiles on
    its own (``numba.njit(accel)``, as a user would), so it calls no helper.
    Its indices are unsigned, so that Numba leaves out its wraparound of
    negative ones (four instructions an index), and it writes into the row
    itself, not a view of it (a reference count in and out): compiled, on a
    shared 2-core machine, the force of 6 bodies took 76 ns instead of 117.
    """
    one, two, three, eight = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(8)
    n = np.uint64(gm.shape[0])
    s = on_stack(PAIRS_ON_STACK)
    m = np.uint64(0)
    for i in range(np.uint64(0), n):
        p = three * i
        xi0, xi1, xi2 = x[p], x[p + one], x[p + two]
        for j in range(i + one, n):
            q = three * j
            d0 = x[q] - xi0
            d1 = x[q + one] - xi1
            d2 = x[q + two] - xi2
            s[m] = d0 * d0 + d1 * d1 + d2 * d2
            m += one
    full = (m + eight - one) // eight * eight
    for k in range(m, full):
        s[k] = 1.0
    for k in range(np.uint64(0), full):
        r2 = s[k]
        s[k] = 1.0 / (r2 * math.sqrt(r2))
    a = W[dst]
    o = np.uint64(start)
    for k in range(o, o + three * n):
        a[k] = 0.0
    m = np.uint64(0)
    for i in range(np.uint64(0), n):
        p = three * i
        xi0, xi1, xi2, gmi = x[p], x[p + one], x[p + two], gm[i]
        ai0, ai1, ai2 = a[o + p], a[o + p + one], a[o + p + two]
        for j in range(i + one, n):
            q = three * j
            d0 = x[q] - xi0
            d1 = x[q + one] - xi1
            d2 = x[q + two] - xi2
            sj = gm[j] * s[m]
            si = gmi * s[m]
            m += one
            ai0 += sj * d0
            ai1 += sj * d1
            ai2 += sj * d2
            a[o + q] -= si * d0
            a[o + q + one] -= si * d1
            a[o + q + two] -= si * d2
        a[o + p], a[o + p + one], a[o + p + two] = ai0, ai1, ai2


@jitable(cold=True)
def _pairs_by_rows(W, dst, start, x, gm):
    """Each pair once, in a structure of arrays, two bodies' rows of pairs at a time: see
    :func:`_nbody_accel_in_place`.

    Body ``i``'s sum gets the terms of its partners ``k < i`` from their
    rows (vectorised), then those of ``j > i`` in order: the same sums, in
    the same order, as the pairs taken once.
    """
    n = gm.shape[0]
    S = np.empty((6, n))                    # positions, then sums, by rows
    T = np.empty((2, n))                    # two rows' 1 / r^3
    X, Y, Z, A0, A1, A2 = S[0], S[1], S[2], S[3], S[4], S[5]
    for e in range(n):
        X[e], Y[e], Z[e] = x[3 * e], x[3 * e + 1], x[3 * e + 2]
        A0[e] = A1[e] = A2[e] = 0.0
    for i in range(0, n - 1, 2):            # (the last body of an odd count has no row)
        k = i + 1
        _row_terms(S, T[0], i, gm[i], gm)
        _row_terms(S, T[1], k, gm[k], gm)
        xi0, xi1, xi2 = X[i], Y[i], Z[i]
        xk0, xk1, xk2 = X[k], Y[k], Z[k]
        c = gm[k] * T[0, k]
        a0 = A0[i] + c * (xk0 - xi0)
        a1 = A1[i] + c * (xk1 - xi1)
        a2 = A2[i] + c * (xk2 - xi2)
        b0, b1, b2 = A0[k], A1[k], A2[k]
        for j in range(np.uint64(k + 1), np.uint64(n)):
            c = gm[j] * T[0, j]
            a0 += c * (X[j] - xi0)
            a1 += c * (Y[j] - xi1)
            a2 += c * (Z[j] - xi2)
            c = gm[j] * T[1, j]
            b0 += c * (X[j] - xk0)
            b1 += c * (Y[j] - xk1)
            b2 += c * (Z[j] - xk2)
        A0[i], A1[i], A2[i] = a0, a1, a2
        A0[k], A1[k], A2[k] = b0, b1, b2
    for e in range(n):
        W[dst, start + 3 * e], W[dst, start + 3 * e + 1], W[dst, start + 3 * e + 2] = A0[e], A1[e], A2[e]


@jitable
def _row_terms(S, s, i, gmi, gm):
    """The pairs of body ``i`` and ``j > i``: ``s[j] = 1 / r^3``, and ``a_j += G m_i s (x_i - x_j)`` (``a_j -= G m_i
    s d``, ``d = x_j - x_i``, as the pairs taken once); ``S``: positions, then sums, by rows."""
    X, Y, Z, A0, A1, A2 = S[0], S[1], S[2], S[3], S[4], S[5]
    xi0, xi1, xi2 = X[i], Y[i], Z[i]
    # unsigned indices: Numba then leaves out its wraparound of negative ones, which kept LLVM from
    # vectorising the loop ("cannot identify array bounds")
    for j in range(np.uint64(i + 1), np.uint64(gm.shape[0])):
        d0 = X[j] - xi0
        d1 = Y[j] - xi1
        d2 = Z[j] - xi2
        r2 = d0 * d0 + d1 * d1 + d2 * d2
        q = 1.0 / (r2 * math.sqrt(r2))
        s[j] = q
        c = gmi * q
        A0[j] -= c * d0
        A1[j] -= c * d1
        A2[j] -= c * d2


_nbody_accel.in_place_twin = _nbody_accel_in_place


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
    velocity).  It declares itself an N-body problem (``nbody``, the Sun
    as body 0), so the Wisdom--Holman map (``"wisdom_holman"``) runs it.

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
        velocity_dependent=False, name="outer_solar_system", nbody=NBody(OUTER_SOLAR_SYSTEM_MASSES, G),
        invariants={"energy": energy, "angular_momentum": angular_momentum, "momentum": momentum}, autonomous=True)
