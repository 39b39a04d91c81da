"""Runs the solver cannot finish: ``max_steps`` reached, the step size
underflowing at a blow-up, Newton failing to converge.  The run returns what
it computed, with its status and a message.

Each test checks the error (type, and a message naming the argument, the
offending value and what is accepted) or the status of the returned
``Solution``.

Closed forms: classic RK4 with step ``h`` on ``y' = -y`` multiplies the state
by ``R(-h)`` per step (``rk4_factor``); ``y' = y^2`` from 1 blows up at ``t = 1``;
``y' = -y^3`` from ``y0`` is ``1/sqrt(1/y0^2 + 2t)``.
"""

import math
import re

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, Status, solve

from conftest import decay, rk4_factor


def square(t, y):
    return y * y


def minus_cube(t, y):
    return -y ** 3


# --- max_steps ------------------------------------------------------------------------

def test_max_steps_fixed_step_returns_exactly_that_many_steps():
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(decay, (0.0, 1.0), y0), "rk4", h=0.01, max_steps=7, backend="python")
    assert sol.status == Status.MAX_STEPS
    assert not sol.success
    assert sol.stats.naccepted == 7 and sol.stats.nsteps == 7
    assert len(sol.t) == 8
    np.testing.assert_allclose(sol.t, np.arange(8) * 0.01, rtol=0, atol=1e-15)
    expected = np.array([y0 * rk4_factor(-0.01) ** k for k in range(8)])
    np.testing.assert_allclose(sol.y, expected, rtol=1e-14, atol=0)
    assert "max_steps=7" in sol.message and "t=0.07" in sol.message


def test_max_steps_adaptive_returns_exactly_that_many_accepted_steps():
    sol = solve(ODEProblem(decay, (0.0, 100.0), [1.0, 2.0]), "dp54", max_steps=5, backend="python")
    assert sol.status == Status.MAX_STEPS
    assert sol.stats.naccepted == 5 and len(sol.t) == 6
    assert sol.t[-1] < 100.0
    np.testing.assert_allclose(sol.y, np.exp(-sol.t)[:, None] * [1.0, 2.0], rtol=1e-6)
    assert "max_steps=5" in sol.message


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_max_steps_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match=rf"max_steps must be a positive integer, got {re.escape(repr(bad))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, max_steps=bad, backend="python")


# --- step-size underflow --------------------------------------------------------------

def test_step_size_underflows_at_the_blow_up_of_y_squared():
    # y' = y^2, y(0) = 1: y = 1/(1 - t) blows up at t = 1.  The numerical blow-up time
    # differs from 1 by an amount proportional to the tolerance (a few 1e-7 at rtol=1e-6,
    # on either side of 1), so "close to 1" is bounded by the tolerance.
    rtol = 1e-6
    sol = solve(ODEProblem(square, (0.0, 2.0), 1.0), "dp54", rtol=rtol, backend="python")
    assert sol.status == Status.STEP_UNDERFLOW
    assert not sol.success
    assert abs(sol.t[-1] - 1.0) < 10 * rtol
    assert np.all(np.isfinite(sol.y)) and sol.y[-1] > 1e10
    assert re.search(r"step size underflow at t=(1|0\.99\d*)\b", sol.message), sol.message
    # the trajectory before the blow-up is kept and right
    early = sol.t < 0.9
    np.testing.assert_allclose(sol.y[early], 1 / (1 - sol.t[early]), rtol=1e-5)


def test_h_min_stops_with_underflow_naming_h_min():
    ctrl = odekit.PIController(h_min=1e-3)
    sol = solve(ODEProblem(square, (0.0, 2.0), 1.0), "dp54", controller=ctrl, backend="python")
    assert sol.status == Status.STEP_UNDERFLOW
    assert sol.t[-1] < 1.0
    assert "h_min=0.001" in sol.message


# --- Newton failure -------------------------------------------------------------------

def test_newton_failure_at_a_fixed_step_stops_with_a_clear_message():
    # backward Euler on y' = -y^3 from 10 with h = 1: Z + Z^3 = 10; simplified Newton with
    # the Jacobian at y0 (1 + 300) contracts too slowly to converge in its iterations.
    sol = solve(ODEProblem(minus_cube, (0.0, 2.0), 10.0), "backward_euler", h=1.0, backend="python")
    assert sol.status == Status.NEWTON_FAILED
    assert not sol.success
    np.testing.assert_array_equal(sol.t, [0.0])
    np.testing.assert_array_equal(sol.y, [10.0])
    assert sol.stats.naccepted == 0 and sol.stats.njev == 1 and sol.stats.nlu == 1
    assert "Newton" in sol.message and "did not converge" in sol.message
    assert "t=1" in sol.message and "h=1" in sol.message
    assert "smaller h" in sol.message


def test_newton_failure_without_a_real_solution_stops_the_fixed_step():
    # y' = 10 y^2, y0 = 1, h = 0.5: Z = 1 + 5 Z^2 has no real root, Newton cannot converge
    sol = solve(ODEProblem(lambda t, y: 10 * y * y, (0.0, 1.0), 1.0), "backward_euler", h=0.5,
                backend="python")
    assert sol.status == Status.NEWTON_FAILED
    assert len(sol.t) == 1 and "Newton" in sol.message


def test_newton_failure_with_step_doubling_is_retried_smaller_and_succeeds():
    sol = solve(ODEProblem(minus_cube, (0.0, 2.0), 10.0), "backward_euler", h=1.0, adaptive="doubling",
                rtol=1e-3, backend="python")
    assert sol.success, sol.message
    assert sol.stats.nrejected > 0
    assert sol.t[1] < 1.0          # the first step of 1 was not accepted
    assert sol.t[-1] == 2.0
    exact = 1 / math.sqrt(1 / 100 + 2 * 2.0)       # y = 1/sqrt(1/y0^2 + 2t)
    assert abs(sol.y[-1] - exact) < 0.02 * exact
