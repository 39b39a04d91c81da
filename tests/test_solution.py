"""The Solution: the shapes of its arrays (``y`` keeps the shape of ``y0``; a
second-order problem stacks ``x`` and ``v``) and its invariants along the
trajectory.

Exact values come from closed forms: classic RK4 with step ``h`` on
``y' = -k y`` multiplies the state by ``R(-k h)`` per step (``rk4_factor``).
"""

import math

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, SecondOrderProblem, solve

from conftest import decay_k, oscillator, rk4_factor


# --- shapes ---------------------------------------------------------------------------

def test_scalar_y0_gives_a_one_dimensional_trajectory():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), 1.0, args=(1.0,)), "rk4", h=0.1, backend="python")
    assert sol.t.shape == (11,)
    assert sol.y.shape == (11,)
    np.testing.assert_allclose(sol.y, rk4_factor(-0.1) ** np.arange(11), rtol=1e-14)


def test_matrix_y0_keeps_its_shape_in_every_row():
    y0 = np.arange(1.0, 7.0).reshape(3, 2)
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), y0, args=(1.0,)), "rk4", h=0.1, backend="python")
    assert sol.y.shape == (11, 3, 2)
    np.testing.assert_array_equal(sol.y[0], y0)
    np.testing.assert_allclose(sol.y[-1], y0 * rk4_factor(-0.1) ** 10, rtol=1e-14)


def test_matrix_y0_keeps_its_shape_with_t_eval_and_dense_output():
    y0 = np.arange(1.0, 7.0).reshape(3, 2)
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), y0, args=(1.0,)), "dp54", t_eval=[0.25, 0.5, 0.75],
                dense_output=True, backend="python")
    assert sol.y.shape == (3, 3, 2)
    assert sol(0.4).shape == (3, 2)
    assert sol([0.1, 0.2]).shape == (2, 3, 2)


@pytest.mark.parametrize("name", ["velocity_verlet", "rk4"])
def test_second_order_output_stacks_x_and_v(name):
    x0 = np.arange(12.0).reshape(4, 3)
    v0 = -np.arange(12.0).reshape(4, 3) / 10
    prob = SecondOrderProblem(oscillator, (0.0, 1.0), x0, v0, args=(2.0,), velocity_dependent=False)
    sol = solve(prob, name, h=0.1, backend="python")
    assert sol.y.shape == (11, 2, 4, 3)
    assert sol.x.shape == (11, 4, 3) and sol.v.shape == (11, 4, 3)
    np.testing.assert_array_equal(sol.x, sol.y[:, 0])
    np.testing.assert_array_equal(sol.v, sol.y[:, 1])
    np.testing.assert_array_equal(sol.x[0], x0)
    np.testing.assert_array_equal(sol.v[0], v0)
    # x = x0 cos 2t + v0/2 sin 2t, componentwise
    exact = x0 * math.cos(2.0) + v0 / 2 * math.sin(2.0)
    # (neighbouring entries differ by 0.46: a scrambled reshape cannot pass)
    np.testing.assert_allclose(sol.x[-1], exact, rtol=0, atol=0.05 if name == "velocity_verlet" else 1e-3)


def test_x_on_a_first_order_solution_raises_attribute_error():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(1.0,)), "rk4", h=0.5, backend="python")
    with pytest.raises(AttributeError, match=r"sol\.x exists for SecondOrderProblem"):
        sol.x
    with pytest.raises(AttributeError, match=r"sol\.v exists for SecondOrderProblem"):
        sol.v
    assert not hasattr(sol, "x")


# --- invariants -----------------------------------------------------------------------

def test_invariants_are_evaluated_along_the_trajectory():
    w = 2.0
    prob = SecondOrderProblem(
        oscillator, (0.0, 1.0), [1.0], [0.5], args=(w,), velocity_dependent=False,
        invariants={"energy": lambda t, x, v: 0.5 * float(v @ v) + 0.5 * w * w * float(x @ x),
                    "time": lambda t, x, v: t,
                    "position": lambda t, x, v: float(x[0])})
    sol = solve(prob, "velocity_verlet", h=0.1, backend="python")
    inv = sol.invariants()
    assert set(inv) == {"energy", "time", "position"}
    for values in inv.values():
        assert values.shape == (len(sol.t),)
    assert inv["energy"][0] == 0.5 * 0.25 + 0.5 * 4.0
    np.testing.assert_array_equal(inv["time"], sol.t)
    np.testing.assert_array_equal(inv["position"], sol.x[:, 0])
    # Verlet keeps the energy within O(h^2) of its start on the oscillator
    assert np.max(np.abs(inv["energy"] - inv["energy"][0])) < 0.05 * inv["energy"][0]
    assert set(sol.invariants("time")) == {"time"}
    with pytest.raises(KeyError, match=r"unknown invariant"):
        sol.invariants("momentum")


def test_invariants_of_a_first_order_problem_take_t_and_y():
    prob = ODEProblem(decay_k, (0.0, 1.0), [3.0, 4.0], args=(1.0,),
                      invariants={"norm2": lambda t, y: float(y @ y)})
    sol = solve(prob, "rk4", h=0.25, backend="python")
    norm2 = sol.invariants()["norm2"]
    assert norm2.shape == (5,)
    assert norm2[0] == 25.0
    np.testing.assert_allclose(norm2, 25.0 * rk4_factor(-0.25) ** (2 * np.arange(5)), rtol=1e-14)


def test_kepler_invariants_start_at_their_exact_values():
    prob = odekit.problems.kepler(e=0.5, orbits=0.1)
    sol = solve(prob, "velocity_verlet", h=0.01, backend="python")
    inv = sol.invariants()
    assert len(inv["energy"]) == len(sol.t)
    assert inv["energy"][0] == pytest.approx(-0.5, rel=1e-15)
    assert inv["angular_momentum"][0] == pytest.approx(math.sqrt(1 - 0.25), rel=1e-15)
