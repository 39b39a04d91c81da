"""Stability facts from the simulation literature, checked on real runs.

Witkin & Baraff's course notes (*Differential Equation Basics*) and Hairer &
Wanner (*Solving ODEs II*, IV.2-3) state each of these as a closed form;
every test compares the run against it.
"""

import warnings

import numpy as np
import pytest

import odekit

K = 10.0


def euler_decay(h, steps=20):
    prob = odekit.problems.decay(lam=-K, t_end=h * steps)
    return odekit.solve(prob, "euler", h=h, backend="python").y[:, 0]


def test_euler_on_decay_is_exactly_the_power_of_its_amplification():
    h = 0.05
    y = euler_decay(h)
    assert np.allclose(y, (1 - h * K) ** np.arange(len(y)), rtol=1e-14, atol=0)


def test_euler_decays_monotonically_below_one_over_k():
    y = euler_decay(0.9 / K)
    assert np.all(y > 0) and np.all(np.diff(y) < 0)


def test_euler_oscillates_but_decays_between_one_and_two_over_k():
    y = euler_decay(1.5 / K)
    assert np.all(np.sign(y[1:]) == -np.sign(y[:-1]))      # the sign flips every step
    assert np.all(np.abs(y[1:]) < np.abs(y[:-1]))          # and the size shrinks
    assert abs(y[-1]) < 1e-5


def test_euler_diverges_above_two_over_k():
    y = euler_decay(2.1 / K)
    assert np.all(np.sign(y[1:]) == -np.sign(y[:-1]))
    assert np.all(np.abs(y[1:]) > np.abs(y[:-1]))
    assert abs(y[-1]) > 2.0


def test_euler_on_the_stability_boundary_neither_grows_nor_decays():
    y = euler_decay(2.0 / K)
    assert np.allclose(np.abs(y), 1.0, rtol=1e-13)


@pytest.mark.parametrize("h", [1e-3, 0.1, 1.0])
def test_euler_spirals_outward_on_rotation_for_every_h(h):
    """|1 + ih| = sqrt(1 + h^2) > 1: the radius grows by that factor each step."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", odekit.StiffnessWarning)    # at h = 1 it grows 2^25: warned
        sol = odekit.solve(odekit.problems.rotation(t_end=50 * h), "euler", h=h, backend="python")
    r = np.hypot(sol.y[:, 0], sol.y[:, 1])
    assert np.all(np.diff(r) > 0)
    assert np.allclose(r[1:] / r[:-1], np.sqrt(1 + h * h), rtol=1e-12)


@pytest.mark.parametrize("h", [1e-3, 1.0, 1e3, 1e6])
def test_backward_euler_is_stable_on_a_stiff_bead_for_any_h(h):
    """y' = (-x, -k y), k = 1000: each step divides by (1 + h) and (1 + h k)."""
    k = 1000.0
    prob = odekit.problems.bead_on_wire(k=k, t_end=10 * h)
    sol = odekit.solve(prob, "backward_euler", h=h, backend="python")
    x, y = sol.y[:, 0], sol.y[:, 1]
    assert np.all(np.diff(np.abs(x)) <= 0) and np.all(np.diff(np.abs(y)) <= 0)
    n = np.arange(len(sol.t))
    assert np.allclose(x, (1 + h) ** -n, rtol=1e-9)
    assert np.allclose(y, (1 + h * k) ** -n, rtol=1e-9, atol=1e-12)   # Newton stops at ~1e-3 atol


def test_backward_euler_tends_to_zero_as_h_grows():
    """L-stability: R(z) = 1/(1 - z) -> 0 as z -> -inf; one step of a huge h lands on the equilibrium."""
    ends = []
    for h in (1e2, 1e4, 1e6):
        prob = odekit.problems.bead_on_wire(k=1000.0, t_end=h)
        ends.append(np.max(np.abs(odekit.solve(prob, "backward_euler", h=h, backend="python").y[-1])))
    assert ends[0] > ends[1] > ends[2]
    assert ends[2] < 1.1e-6


def test_explicit_euler_blows_up_on_the_same_stiff_bead():
    prob = odekit.problems.bead_on_wire(k=1000.0, t_end=0.1)
    with pytest.warns(odekit.StiffnessWarning, match="h ≤ 0.002"):
        sol = odekit.solve(prob, "euler", h=0.01, backend="python")   # h k = 10 > 2
    assert abs(sol.y[-1, 1]) > 1e8


@pytest.mark.parametrize("method", ["trapezoid", "implicit_midpoint"])
def test_implicit_trapezoid_and_midpoint_keep_the_radius_of_rotation(method):
    """|R(ih)| = |(1 + ih/2)/(1 - ih/2)| = 1: circles stay circles, at any h."""
    for h in (0.1, 1.0):
        sol = odekit.solve(odekit.problems.rotation(t_end=200 * h), method, h=h, backend="python")
        r = np.hypot(sol.y[:, 0], sol.y[:, 1])
        assert np.max(np.abs(r - 1.0)) < 1e-12


def test_trapezoid_is_not_l_stable():
    """R(z) -> -1 as z -> -inf: a stiff component flips sign and barely decays."""
    k = 1e6
    prob = odekit.problems.bead_on_wire(k=k, t_end=1.0)
    sol = odekit.solve(prob, "trapezoid", h=0.1, backend="python")
    y = sol.y[:, 1]
    R = (1 - 0.05 * k) / (1 + 0.05 * k)
    assert np.allclose(y, R ** np.arange(len(y)), rtol=1e-8)
    assert abs(y[-1]) > 0.99
