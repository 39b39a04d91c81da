"""Cloth, Baraff & Witkin's mass--spring sheet: forces, Jacobians, pins, energy.

Each check can fail:

* the sparse Jacobians must equal central differences of ``accel`` (at a
  stretched state, where the clamp of compressed springs is inactive);
* ``-A_x`` must stay positive semidefinite at a compressed state, where the
  true Jacobian (the differences) is indefinite -- the clamp must act;
* pinned corners have zero acceleration and zero Jacobian rows and columns;
* an accurate undamped solve keeps the energy, a damped one loses it;
* the compiled and Python backends agree.

Everything runs on the Python backend but the one backend comparison.
"""

import math

import numpy as np
import pytest
from scipy.sparse.linalg import eigsh

import odekit
from odekit import problems
from odekit.problems import cloth_springs, cloth_stretch


def state(prob, scale, seed=0):
    """Positions scaled by ``scale`` plus 1e-3 noise, random velocities (pins feel no force anyway)."""
    rng = np.random.default_rng(seed)
    return scale * prob.x0 + 1e-3 * rng.standard_normal(prob.x0.shape), rng.standard_normal(prob.x0.shape)


def differences(prob, x, v, wrt):
    """Central differences of ``accel`` by ``x`` or ``v`` (``wrt`` 0 or 1), dense over ``x.ravel()``."""
    u = [x, v]
    J = np.empty((x.size, x.size))
    d = 1e-6
    for col in range(x.size):
        plus, minus = [w.copy() for w in u], [w.copy() for w in u]
        plus[wrt].flat[col] += d
        minus[wrt].flat[col] -= d
        J[:, col] = (prob.accel(0.0, *plus, *prob.args) - prob.accel(0.0, *minus, *prob.args)).ravel() / (2 * d)
    return J


def test_springs_are_provots_stretch_shear_and_bend():
    pairs, kind = cloth_springs(4)
    counts = np.bincount(kind)
    assert counts.tolist() == [2 * 4 * 3, 2 * 3 * 3, 2 * 4 * 2]
    rows, cols = np.divmod(pairs, 4)
    steps = np.abs(rows[:, 1] - rows[:, 0]) + np.abs(cols[:, 1] - cols[:, 0])
    assert np.all(steps[kind == 0] == 1) and np.all(steps[kind == 1] == 2) and np.all(steps[kind == 2] == 2)
    assert np.all((rows[kind == 1, 1] != rows[kind == 1, 0]) & (cols[kind == 1, 1] != cols[kind == 1, 0]))
    assert len({tuple(sorted(p)) for p in pairs.tolist()}) == len(pairs)        # no spring twice
    prob = problems.cloth(n=4)
    assert cloth_stretch(prob.x0, *prob.args) == pytest.approx(0.0, abs=1e-15)   # all at rest length


def test_jacobians_match_central_differences_where_springs_are_stretched():
    prob = problems.cloth(n=4, damping=0.05)
    x, v = state(prob, 1.1)
    springs, rest = prob.args[:2]
    lengths = np.linalg.norm(x[springs[:, 1]] - x[springs[:, 0]], axis=1)
    assert np.all(lengths > rest)                                # the clamp is inactive here
    # A_x leaves out the damping force's dependence on x, which vanishes at v = 0
    A_x = prob.jac(0.0, x, np.zeros_like(v), *prob.args)[0].toarray()
    A_v = prob.jac(0.0, x, v, *prob.args)[1].toarray()
    pinned = (3 * prob.args[-1][:, None] + np.arange(3)).ravel()
    for A, numeric in ((A_x, differences(prob, x, np.zeros_like(v), 0)), (A_v, differences(prob, x, v, 1))):
        assert np.max(np.abs(A)) > 0 and np.any(numeric[:, pinned])
        numeric[:, pinned] = 0.0                  # pinned particles never move: their columns are dropped
        np.testing.assert_allclose(A, numeric, rtol=0, atol=1e-6 * np.max(np.abs(A)))


def test_force_jacobians_are_symmetric_and_definite_even_with_compressed_springs():
    prob = problems.cloth(n=5, damping=0.05)
    x, v = state(prob, 0.9, seed=1)
    A_x, A_v = (A.toarray() for A in prob.jac(0.0, x, v, *prob.args))
    for A in (A_x, A_v):
        np.testing.assert_array_equal(A, A.T)
        assert np.linalg.eigvalsh(A).max() <= 1e-9 * np.linalg.norm(A, 2)       # -A positive semidefinite
    # without the clamp it would not be: the true stiffness of compressed springs is indefinite
    true = differences(prob, x, np.zeros_like(v), 0)
    assert np.linalg.eigvalsh(0.5 * (true + true.T)).max() > 1e-3 * np.linalg.norm(A_x, 2)


def test_pinned_corners_do_not_move():
    n = 5
    prob = problems.cloth(n=n, damping=0.05)
    pinned = prob.args[-1]
    assert pinned.tolist() == [0, n - 1]
    x, v = state(prob, 1.1)
    v[pinned] = 0.0
    a = prob.accel(0.0, x, v, *prob.args)
    assert np.all(a[pinned] == 0) and np.all(np.abs(np.delete(a, pinned, axis=0)) > 0)
    rows = (3 * pinned[:, None] + np.arange(3)).ravel()
    for A in prob.jac(0.0, x, v, *prob.args):
        A = A.toarray()
        assert not np.any(A[rows]) and not np.any(A[:, rows])
        assert np.all(np.delete(np.abs(A).sum(axis=1), rows) > 0)
    sol = odekit.solve(prob.with_span((0.0, 0.02)), "rk4", h=1e-3, backend="python")
    assert np.all(sol.x[:, pinned] == prob.x0[pinned])
    assert np.all(sol.x[-1, n:, 2] < -1e-4)                                      # the rest falls


def test_energy_is_kept_without_damping_and_lost_with_it():
    # RK4 at h omega_max = 0.1 (omega_max = 511/s at n = 4): its energy error is ~1e-13
    prob = problems.cloth(n=4, damping=0.0, t_end=0.1)
    assert not prob.velocity_dependent
    sol = odekit.solve(prob, "rk4", h=2e-4, backend="python")
    energy = sol.invariants("energy")["energy"]
    assert energy[0] == pytest.approx(0.3 * 9.81 * 1.0, rel=1e-15)            # mass g size, at rest
    assert np.max(np.abs(energy - energy[0])) < 1e-10 * energy[0]
    # the bound is tight: a spring potential twice too large is not kept by the same solve
    springs, rest, k = prob.args[:3]
    extra = [0.5 * np.sum(k * (np.linalg.norm(x[springs[:, 1]] - x[springs[:, 0]], axis=1) - rest) ** 2)
             for x in sol.x]
    assert np.max(np.abs(energy + extra - energy[0])) > 1e-4 * energy[0]

    damped = odekit.solve(problems.cloth(n=4, damping=0.05, t_end=0.1), "rk4", h=2e-4, backend="python")
    lost = damped.invariants("energy")["energy"]
    assert damped.problem.velocity_dependent
    assert np.all(np.diff(lost) <= 1e-14 * lost[0]) and lost[-1] < lost[0] - 1e-6 * lost[0]


@pytest.mark.parametrize("params, message", [
    ({"n": 1}, r"n must be a whole number >= 2, got 1"),
    ({"n": 2.5}, r"n must be a whole number >= 2, got 2.5"),
    ({"k_stretch": -1}, r"k_stretch must be a finite number > 0, got -1"),
    ({"k_bend": 0.0}, r"k_bend must be a finite number > 0, got 0.0"),
    ({"damping": -0.1}, r"damping must be a finite number >= 0, got -0.1"),
    ({"mass": math.nan}, r"mass must be a finite number > 0, got nan"),
    ({"size": 0}, r"size must be a finite number > 0, got 0"),
])
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        problems.cloth(**params)


def test_compiled_and_python_backends_agree():
    prob = problems.cloth(n=3, damping=0.05, t_end=0.02)
    python = odekit.solve(prob, "rk4", h=1e-3, backend="python")
    compiled = odekit.solve(prob, "rk4", h=1e-3, backend="numba")
    assert compiled.backend == "numba"
    np.testing.assert_allclose(compiled.y, python.y, rtol=0, atol=1e-12)
    assert np.max(np.abs(python.y[-1] - python.y[0])) > 1e-3                     # it moved


def test_defaults_are_far_too_stiff_for_explicit_steps_of_one_frame():
    """The docstring's numbers: at n = 64 the fastest mode limits leapfrog to h < 2/omega_max = 2.2e-4 s."""
    prob = problems.cloth(n=64)
    m, k_stretch = prob.args[4], 1000.0
    assert 2 * math.sqrt(m / k_stretch) == pytest.approx(5.4e-4, rel=0.01)
    omega_max = math.sqrt(eigsh(-prob.jac(0.0, prob.x0, prob.v0, *prob.args)[0], k=1, which="LA",
                                return_eigenvectors=False)[0])
    assert 2 / omega_max == pytest.approx(2.2e-4, rel=0.02)
    assert 2 / omega_max < (1 / 60) / 50
