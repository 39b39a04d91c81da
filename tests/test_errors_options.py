"""Bad options to solve: the step ``h``, the tolerances, ``t_eval``, the
backend, ``adaptive``, and a controller given beside ``h``.

Each test checks the error (type, and a message naming the argument, the
offending value and what is accepted) or the status of the returned
``Solution``.
"""

import math
import re

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, solve

from conftest import decay, rk4_factor


# --- h --------------------------------------------------------------------------------

@pytest.mark.parametrize("h", [0, 0.0, -0.1, -1])
def test_nonpositive_h_is_refused(h):
    with pytest.raises(ValueError, match=rf"h must be a positive finite step size, got {re.escape(repr(h))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=h, backend="python")


@pytest.mark.parametrize("h", [math.nan, math.inf])
def test_nonfinite_h_is_refused(h):
    with pytest.raises(ValueError, match=rf"\bh\b.*{repr(h)}") as info:
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=h, backend="python")
    assert "accepted" in str(info.value) or "positive finite" in str(info.value)


@pytest.mark.parametrize("h", [1.5, 2, np.float64(2.0),
                               np.float32(2.0),
                               np.int64(2)])
def test_h_larger_than_the_span_is_refused_naming_the_span(h):
    with pytest.raises(ValueError, match=r"h=.*larger than the span.*1\.0.*accepted: 0 < h <= 1\.0"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=h, backend="python")


def test_fixed_step_controller_larger_than_the_span_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"controller.h=5.0 is larger than the span.*accepted: 0 < controller.h <= 1\.0"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", controller=odekit.FixedStep(5.0), backend="python")


def test_h_larger_than_a_backward_span_is_refused():
    with pytest.raises(ValueError, match=r"larger than the span.*0\.5"):
        solve(ODEProblem(decay, (1.0, 0.5), [1.0]), "rk4", h=0.75, backend="python")


def test_h_equal_to_the_span_is_accepted_and_takes_one_step():
    sol = solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=1.0, backend="python")
    assert sol.success and sol.stats.naccepted == 1
    np.testing.assert_allclose(sol.y[-1], [rk4_factor(-1.0)], rtol=1e-15)


def test_fixed_steps_without_h_are_refused():
    with pytest.raises(ValueError, match=r"fixed steps need h"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", adaptive=False, backend="python")


def test_controller_and_h_together_are_refused():
    with pytest.raises(ValueError, match=r"either controller=\.\.\. or h/adaptive"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, controller=odekit.FixedStep(0.1),
              backend="python")


# --- tolerances -----------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [("rtol", 0), ("rtol", -1e-6), ("rtol", math.nan),
                                         ("atol", 0.0), ("atol", -1.0), ("atol", [1e-9, 0.0])])
def test_nonpositive_tolerances_are_refused_naming_them(name, value):
    prob = ODEProblem(decay, (0.0, 1.0), [1.0, 2.0])
    with pytest.raises(ValueError, match=rf"{name} must be positive and finite, got {re.escape(repr(value))}"):
        solve(prob, "dp54", backend="python", **{name: value})


def test_tolerance_with_the_wrong_number_of_entries_is_refused():
    with pytest.raises(ValueError, match=r"atol must be a number or have one entry per state component \(2\)"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0, 2.0]), "dp54", atol=[1e-9] * 3, backend="python")


# --- t_eval ---------------------------------------------------------------------------

@pytest.mark.parametrize("t_eval, bad", [([0.0, 0.5, 1.5], "1.5"), ([-0.1, 0.5], "-0.1")])
def test_t_eval_outside_the_span_is_refused_naming_the_value(t_eval, bad):
    with pytest.raises(ValueError, match=rf"t_eval must lie within t_span \[0\.0, 1\.0\].*{re.escape(bad)}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, t_eval=t_eval, backend="python")


def test_unsorted_t_eval_is_refused():
    with pytest.raises(ValueError, match=r"t_eval must be sorted in the direction of integration \(increasing\)"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, t_eval=[0.5, 0.2], backend="python")


def test_t_eval_must_follow_a_backward_span():
    with pytest.raises(ValueError, match=r"t_eval must be sorted .*\(decreasing\)"):
        solve(ODEProblem(decay, (1.0, 0.0), [1.0]), "rk4", h=0.1, t_eval=[0.2, 0.5], backend="python")


def test_two_dimensional_t_eval_is_refused():
    with pytest.raises(ValueError, match=r"t_eval must be one-dimensional"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, t_eval=[[0.1, 0.2]], backend="python")


# --- backend and adaptive -------------------------------------------------------------

@pytest.mark.parametrize("backend", ["cuda", "Numba", "", None])
def test_bad_backend_name_lists_the_accepted_ones(backend):
    with pytest.raises(ValueError, match=rf"backend must be one of auto, numba, python, got {re.escape(repr(backend))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "rk4", h=0.1, backend=backend)


@pytest.mark.parametrize("adaptive", ["yes", "double", "pi", 2])
def test_bad_adaptive_value_lists_the_accepted_ones(adaptive):
    with pytest.raises(ValueError, match=rf"adaptive must be None, True, False or 'doubling', got {re.escape(repr(adaptive))}"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), "dp54", adaptive=adaptive, backend="python")
