"""analysis.reference.Reference: the one true solution convergence, work-precision and the shootout measure against."""

import numpy as np
import pytest

import odekit
from odekit.analysis.reference import REFERENCE, Reference

KEPLER = odekit.problems.kepler(e=0.5, t_end=1.0)


def test_the_exact_solution_is_used_when_the_problem_has_one():
    ref = Reference(KEPLER)
    t = np.array([0.0, 0.25, 1.0])
    expected = np.array([np.asarray(KEPLER.exact(ti)) for ti in t])
    assert ref.label == "exact"
    np.testing.assert_array_equal(ref.states(t, (2, 2)), expected)


def test_a_dense_solution_answers_every_time_at_once_with_the_numbers_of_one_call_per_time():
    dense = odekit.solve(KEPLER, "dp54", rtol=1e-10, atol=1e-10, dense_output=True, backend="python")
    t = np.linspace(0.0, 1.0, 7)
    states = Reference(KEPLER, dense).states(t, (2, 2))
    np.testing.assert_array_equal(states, np.array([dense(ti) for ti in t]))    # bit for bit


def test_a_mapping_updates_the_default_run_made_at_the_runs_output_times():
    ref = Reference(KEPLER, {"rtol": 1e-11})
    assert ref.label == f"reference method=dp54, rtol=1e-11, atol={REFERENCE['atol']}"
    run = odekit.solve(KEPLER, "rk4", h=0.25, backend="python")
    ref.prepare([run])
    states = ref.states(run.t, run.y.shape[1:])
    np.testing.assert_allclose(states, np.array([np.asarray(KEPLER.exact(ti)) for ti in run.t]), atol=1e-9)


def _oscillator_run():
    """A dense run of a problem with another state: one position, not two."""
    return odekit.solve(odekit.problems.harmonic_oscillator(), "rk4", h=0.1, dense_output=True, backend="python")


@pytest.mark.parametrize("make", [lambda: (lambda t: np.zeros(3)), _oscillator_run], ids=["function", "dense"])
def test_a_reference_of_the_wrong_shape_is_refused_naming_the_shape(make):
    with pytest.raises(ValueError, match=r"the reference returned \d+ values at .*; expected shape \(.*2, 2\)"):
        Reference(KEPLER, make()).states(np.array([0.0, 0.5]), (2, 2))
