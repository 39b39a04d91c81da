"""What a problem can bring besides its right-hand side: a model object
behind the System protocol (Witkin & Baraff), and the user's Jacobian."""

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, Status, solve

from conftest import decay_k


# --- the System protocol --------------------------------------------------------------

class DecaySystem:
    """A model living in an object (Witkin & Baraff): y' = -0.7 y."""

    def __init__(self):
        self.state = np.array([1.0, 2.0])
        self.time = 0.0
        self.derivatives = 0

    def dim(self):
        return 2

    def get_state(self):
        return self.state.copy()

    def set_state(self, y):
        self.state = np.array(y, dtype=float)

    def get_time(self):
        return self.time

    def set_time(self, t):
        self.time = t

    def derivative(self):
        self.derivatives += 1
        return -0.7 * self.state


def test_from_system_integrates_exactly_like_the_equivalent_function():
    model = DecaySystem()
    assert isinstance(model, odekit.System)
    prob = ODEProblem.from_system(model, 1.0)
    assert prob.t_span == (0.0, 1.0) and prob.name == "DecaySystem"
    a = solve(prob, "rk4", h=0.1, backend="python")
    b = solve(ODEProblem(decay_k, (0.0, 1.0), [1.0, 2.0], args=(0.7,)), "rk4", h=0.1, backend="python")
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.stats == b.stats
    # every counted evaluation went through the object; so did the stiffness check before the
    # fixed-step run, one uncounted evaluation per Jacobian-vector product
    assert model.derivatives == a.stats.nfev + odekit.analysis.stiffness(b.problem).products


def test_from_system_refuses_an_object_without_the_protocol():
    class Half:
        def dim(self):
            return 1

        def get_state(self):
            return [0.0]

    with pytest.raises(TypeError, match=r"missing: set_state, get_time, set_time, derivative"):
        ODEProblem.from_system(Half(), 1.0)


# --- the user's Jacobian --------------------------------------------------------------

STIFF_A = np.array([[-1.0, 2.0], [0.0, -50.0]])


def linear_stiff(t, y):
    return STIFF_A @ y


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_the_users_jacobian_replaces_finite_differences(backend):
    def run(jac):
        return solve(ODEProblem(linear_stiff, (0.0, 1.0), [1.0, 1.0], jac=jac), "backward_euler", h=0.1,
                     backend=backend)

    by_differences, given, constant = run(None), run(lambda t, y: STIFF_A), run(STIFF_A)
    # the same Newton iterates (the problem is linear, both Jacobians exact to round-off), and
    # the same Jacobians (reused from step to step), but no difference columns: n = 2 evaluations
    # fewer per Jacobian
    assert given.stats.njev == constant.stats.njev == by_differences.stats.njev >= 1
    assert given.stats.nfev == constant.stats.nfev == by_differences.stats.nfev - 2 * given.stats.njev
    np.testing.assert_allclose(given.y, by_differences.y, rtol=1e-9)
    # and it is really used: a zero "Jacobian" turns Newton into a fixed-point iteration, which
    # diverges at h * 50 = 5 and stops the fixed-step run
    wrong = run(lambda t, y: np.zeros((2, 2)))
    assert wrong.status == Status.NEWTON_FAILED
