"""Bad input refused when the problem is built: a non-finite initial state or
span, a zero-length span, ``args`` that are not a tuple, a right-hand side
that is not callable.

Each test checks the error (type, and a message naming the argument, the
offending value and what is accepted) or the status of the returned
``Solution``.
"""

import math
import re

import numpy as np
import pytest

from odekit import ODEProblem, SecondOrderProblem, solve, solve_ivp

from conftest import decay, decay_k, rk4_factor, spring


# --- non-finite initial state ---------------------------------------------------------

@pytest.mark.parametrize("y0, where", [([1.0, np.nan, 3.0], r"y0\[1\]"),
                                       ([[1.0, 2.0], [3.0, np.inf]], r"y0\[1, 1\]"),
                                       (-np.inf, r"y0")])
def test_nonfinite_y0_is_refused_naming_y0_and_the_entry(y0, where):
    with pytest.raises(ValueError, match=r"y0 must be finite") as info:
        ODEProblem(decay, (0.0, 1.0), y0)
    assert re.search(where, str(info.value)), str(info.value)
    assert re.search(r"nan|inf", str(info.value)), str(info.value)


def test_nonfinite_y0_is_refused_by_solve_ivp_too():
    with pytest.raises(ValueError, match=r"y0 must be finite.*y0\[0\].*inf"):
        solve_ivp(decay, (0.0, 1.0), [np.inf, 1.0], "rk4", h=0.1, backend="python")


@pytest.mark.parametrize("x0, v0, name", [([np.nan], [0.0], "x0"), ([1.0], [np.inf], "v0")])
def test_nonfinite_x0_v0_are_refused_naming_them(x0, v0, name):
    with pytest.raises(ValueError, match=rf"{name} must be finite.*{name}\[0\]"):
        SecondOrderProblem(spring, (0.0, 1.0), x0, v0)


# --- zero-length span -----------------------------------------------------------------

@pytest.mark.parametrize("span", [(1.0, 1.0), (0, 0.0)])
def test_zero_length_span_is_refused(span):
    with pytest.raises(ValueError, match=r"t_span has zero length.*accepted: t_end != t0"):
        ODEProblem(decay, span, [1.0])
    with pytest.raises(ValueError, match=r"t_span has zero length"):
        SecondOrderProblem(spring, span, [1.0], [0.0])
    # solve_ivp returns SciPy's trivial success instead: test_scipy_ivp.py, "trivial spans and states"
    assert solve_ivp(decay, span, [1.0], "rk4", h=0.1, backend="python").success


def test_nonfinite_span_is_refused():
    with pytest.raises(ValueError, match=r"t_span must be finite"):
        ODEProblem(decay, (0.0, math.inf), [1.0])


# --- args -----------------------------------------------------------------------------

@pytest.mark.parametrize("args", [0.7, "k", np.array([0.7])])
def test_args_that_are_not_a_tuple_raise_type_error_suggesting_one(args):
    with pytest.raises(TypeError, match=r"args must be a tuple.*args=\("):
        ODEProblem(decay_k, (0.0, 1.0), [1.0], args=args)
    with pytest.raises(TypeError, match=r"args must be a tuple"):
        solve_ivp(decay_k, (0.0, 1.0), [1.0], "rk4", args=args, h=0.1, backend="python")


def test_single_argument_hint_is_the_tuple_to_write():
    with pytest.raises(TypeError, match=re.escape("write args=(0.7,)")):
        ODEProblem(decay_k, (0.0, 1.0), [1.0], args=0.7)


def test_args_given_as_a_list_are_used_as_a_tuple():
    sol = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0], args=[0.5]), "rk4", h=0.5, backend="python")
    np.testing.assert_allclose(sol.y[-1], [rk4_factor(-0.25) ** 2], rtol=1e-15)


# --- fun ------------------------------------------------------------------------------

def test_non_callable_fun_is_refused():
    with pytest.raises(TypeError, match=r"fun must be callable, got list"):
        ODEProblem([1.0], (0.0, 1.0), [1.0])
