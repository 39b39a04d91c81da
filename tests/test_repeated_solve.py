"""A solve repeated on the same problem copies its set-up (Integrator._started, from the third start on: the
first is noted, the second kept): the same numbers as a first solve, and whatever changed since -- the initial
state in place, an attribute reassigned -- is read again."""

import numpy as np
import pytest

import odekit
from odekit import integrator
from odekit.integrator import Integrator


def _decay(t, y, k):
    return -k * y


def fresh_solve(problem, method, **options):
    """solve() with nothing kept from an earlier start."""
    integrator._STARTS.clear()
    return odekit.solve(problem, method, **options)


def kept(problem, method, **options):
    """Solve twice: the next solve of ``problem`` with these options copies the start kept."""
    for _ in range(2):
        odekit.solve(problem, method, **options)
    assert any(entry[0] is problem and entry[2] is not None for entry in integrator._STARTS.values())


def assert_same(a, b):
    assert a.status == b.status and a.stats == b.stats and a.message == b.message
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("method,options", [("dop853", dict(rtol=1e-8)), ("rk4", dict(h=0.01)),
                                            ("rodas4", dict(rtol=1e-6, atol=1e-10)), ("bdf", dict(rtol=1e-6))])
def test_a_repeated_solve_is_a_first_solve_bit_for_bit(method, options):
    problem = odekit.problems.van_der_pol(mu=5.0, t_end=3.0)
    first = fresh_solve(problem, method, **options)
    kept(problem, method, **options)                    # compiled, no events, scalar args
    for _ in range(2):
        assert_same(odekit.solve(problem, method, **options), first)


def test_an_initial_state_changed_in_place_is_read_again():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(0.5,))
    kept(problem, "dp54")
    problem.y0[:] = [3.0, -1.0]
    again = odekit.solve(problem, "dp54")
    np.testing.assert_allclose(again.y[-1], np.array([3.0, -1.0]) * np.exp(-0.5), rtol=1e-5)
    assert_same(again, fresh_solve(odekit.ODEProblem(_decay, (0.0, 1.0), [3.0, -1.0], args=(0.5,)), "dp54"))


def test_an_attribute_reassigned_is_a_new_start():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(0.5,))
    kept(problem, "dp54")
    problem.args = (2.0,)
    np.testing.assert_allclose(odekit.solve(problem, "dp54").y[-1], [np.exp(-2.0)], rtol=1e-5)
    problem.t_span = (0.0, 2.0)
    again = odekit.solve(problem, "dp54")
    assert again.t[-1] == 2.0 and again.y[-1, 0] == pytest.approx(np.exp(-4.0), rel=1e-5)


def test_a_repeated_start_whose_f_fails_is_refused_as_a_first_one():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(0.5,))
    kept(problem, "dp54")
    problem.y0[:] = np.nan
    with pytest.raises(ValueError, match="non-finite values .* at t0=0.0 for the initial state"):
        odekit.solve(problem, "dp54")


def test_a_repeated_fixed_step_beyond_stability_is_warned_each_time():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(50.0,))
    for _ in range(3):
        with pytest.warns(odekit.StiffnessWarning):
            odekit.solve(problem, "rk4", h=0.1)


def test_starts_are_kept_for_a_bounded_number_of_problems_and_not_with_events():
    integrator._STARTS.clear()
    for k in range(integrator.STARTS_KEPT + 10):
        problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(1.0 + k,))
        for _ in range(2):
            odekit.solve(problem, "dp54")
    assert len(integrator._STARTS) == integrator.STARTS_KEPT
    integrator._STARTS.clear()
    ball, lorenz = odekit.problems.bouncing_ball(), odekit.problems.lorenz()
    for _ in range(2):
        odekit.solve(ball, "dp54")                                       # events: set up every time
        odekit.solve(lorenz, "dp54", atol=[1e-9, 1e-9, 1e-8])            # tolerances per component
    assert all(entry[2] is None for entry in integrator._STARTS.values())


def test_a_started_integrator_is_its_own():
    problem = odekit.problems.kepler(e=0.5)
    for _ in range(2):
        Integrator._started(problem, "rk4", dict(h=0.01))
    one = Integrator._started(problem, "rk4", dict(h=0.01))
    two = Integrator._started(problem, "rk4", dict(h=0.01))
    one.step(10)
    assert two.t == 0.0 and two.stats.naccepted == 0
    np.testing.assert_array_equal(two.y, problem.initial_state().reshape(two.y.shape))
