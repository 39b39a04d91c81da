"""Cloth: Baraff & Witkin's mass--spring sheet, a large stiff problem with sparse Jacobians.

:func:`cloth` builds the sheet, an ``n x n`` grid of particles joined by
Provot's springs (:func:`cloth_springs`); :func:`cloth_stretch` measures its
largest spring elongation; its force Jacobians are sparse SciPy matrices,
summed block by block over the springs.  (The module is not called ``cloth``,
so that ``odekit.problems.cloth`` is always the function.)

Sources: Baraff & Witkin, *Large Steps in Cloth Simulation*, SIGGRAPH (1998);
Provot, *Deformation Constraints in a Mass-Spring Model to Describe Rigid
Cloth Behavior*, Graphics Interface (1995) (the springs); Choi & Ko, *Stable
but Responsive Cloth*, SIGGRAPH (2002) (the clamp of the Jacobian).
"""

import math

import numpy as np
from scipy import sparse

from ..problem import SecondOrderProblem
from ._checks import _count, _nonnegative, _positive, _span_end


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
