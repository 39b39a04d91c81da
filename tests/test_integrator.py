"""The Integrator: stepping on a grid, landing on a target, writing the state
(a thrust, a reset) and the errors that keep the last good step.

Exact values come from closed forms: classic RK4 with step ``h`` on
``y' = -k y`` multiplies the state by ``R(-k h)`` per step (``rk4_factor``);
a free particle (``x'' = 0``) is integrated exactly by every method.
"""

import math

import numpy as np
import pytest

import odekit
from odekit import IntegrationError, Integrator, ODEProblem, SecondOrderProblem, Status

from conftest import decay_k, nan_after, rk4_factor, spring


def free(t, x, v):
    return np.zeros_like(x)


def test_integrator_step_advances_exactly_h_on_the_grid():
    integ = Integrator(ODEProblem(decay_k, (0.0, 10.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    assert integ.h == 0.1
    assert integ.step() == 0.1 and integ.t == 0.1
    assert integ.step(3) == 4 * 0.1            # the grid t0 + k h, no accumulated sums
    np.testing.assert_allclose(integ.y, [rk4_factor(-0.1) ** 4], rtol=1e-15)
    assert integ.stats.naccepted == 4 and integ.stats.nfev == 16


def test_integrator_steps_backward_with_a_decreasing_span():
    integ = Integrator(ODEProblem(decay_k, (1.0, 0.0), [1.0], args=(1.0,)), "rk4", h=0.25, backend="python")
    assert integ.h == -0.25
    assert integ.step(2) == 0.5


def test_integrator_advance_to_lands_exactly_on_the_target():
    integ = Integrator(ODEProblem(decay_k, (0.0, 10.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    assert integ.advance_to(0.95) == 0.95 and integ.t == 0.95
    assert integ.stats.naccepted == 10      # nine whole steps and a shortened one
    last = 0.95 - 9 * 0.1
    np.testing.assert_allclose(integ.y, [rk4_factor(-0.1) ** 9 * rk4_factor(-last)], rtol=1e-14)
    assert integ.advance_to(0.95) == 0.95 and integ.stats.naccepted == 10   # already there: no step
    with pytest.raises(ValueError, match=r"not behind the current time"):
        integ.advance_to(0.5)


def test_integrator_thrust_impulse_changes_a_free_particle_as_predicted():
    prob = SecondOrderProblem(free, (0.0, 10.0), [0.0, 1.0], [1.0, 0.0], velocity_dependent=False)
    for name, kw in [("velocity_verlet", dict(h=0.1)), ("rk4", dict(h=0.1)), ("symplectic_euler", dict(h=0.1)),
                     ("leapfrog", dict(h=0.1)), ("forest_ruth", dict(h=0.1)), ("dp54", {}),
                     ("backward_euler", dict(h=0.1))]:
        integ = Integrator(prob, name, backend="python", **kw)
        integ.advance_to(1.0)
        np.testing.assert_allclose(integ.x, [1.0, 1.0], rtol=0, atol=1e-13, err_msg=name)
        integ.v = [0.0, 3.0]                      # the thrust: a write
        np.testing.assert_array_equal(integ.v, [0.0, 3.0])
        integ.advance_to(2.5)
        # x = x(1) + v_new (t - 1), exact for every method on x'' = 0
        np.testing.assert_allclose(integ.x, [1.0, 1.0 + 3.0 * 1.5], rtol=0, atol=1e-12, err_msg=name)
        np.testing.assert_array_equal(integ.v, [0.0, 3.0], err_msg=name)


@pytest.mark.parametrize("name, h", [("velocity_verlet", 0.1), ("leapfrog", 0.1), ("dp54", 0.1),
                                     ("forest_ruth", 0.1)])
def test_writing_the_state_discards_remembered_derivatives(name, h):
    # after a write, the run must continue exactly like a fresh run from the written state
    prob = SecondOrderProblem(spring, (0.0, 10.0), [1.0], [0.0], velocity_dependent=False)
    integ = Integrator(prob, name, h=h, backend="python")
    integ.step()
    integ.x = [0.25]
    v_now = integ.v.copy()
    integ.step(2)
    fresh = Integrator(SecondOrderProblem(spring, (h, 10.0), [0.25], v_now, velocity_dependent=False), name,
                       h=h, backend="python")
    fresh.step(2)
    np.testing.assert_allclose(integ.y, fresh.y, rtol=1e-15, atol=1e-16)


def test_integrator_state_views_are_read_only():
    integ = Integrator(ODEProblem(decay_k, (0.0, 1.0), [1.0, 2.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    with pytest.raises(ValueError, match=r"read-only"):
        integ.y[0] = 5.0
    np.testing.assert_array_equal(integ.y, [1.0, 2.0])
    integ.y = [3.0, 4.0]
    np.testing.assert_array_equal(integ.y, [3.0, 4.0])
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        integ.y = [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"y must be finite"):
        integ.y = [np.nan, 1.0]
    with pytest.raises(AttributeError, match=r"SecondOrderProblem"):
        integ.x
    mech = Integrator(SecondOrderProblem(spring, (0.0, 1.0), [1.0], [0.0], velocity_dependent=False),
                      "velocity_verlet", h=0.1, backend="python")
    with pytest.raises(ValueError, match=r"read-only"):
        mech.v[0] = 1.0
    with pytest.raises(ValueError, match=r"read-only"):
        mech.x[0] = 1.0


def test_setting_t_restarts_the_grid_there():
    integ = Integrator(ODEProblem(decay_k, (0.0, 10.0), [1.0], args=(1.0,)), "rk4", h=0.1, backend="python")
    integ.step(3)
    integ.t = 5.03
    assert integ.t == 5.03
    assert integ.step() == 5.03 + 0.1
    assert integ.step() == 5.03 + 2 * 0.1
    np.testing.assert_allclose(integ.y, [rk4_factor(-0.1) ** 5], rtol=1e-14)
    with pytest.raises(ValueError, match=r"t must be finite"):
        integ.t = math.nan


def test_integration_error_keeps_the_state_of_the_last_good_step():
    integ = Integrator(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="python")
    with pytest.raises(IntegrationError, match=r"non-finite") as info:
        integ.step(10)
    assert info.value.status == Status.NONFINITE
    assert integ.t == 0.5
    np.testing.assert_allclose(integ.y, np.array([1.0, 2.0]) * rk4_factor(-0.1) ** 5, rtol=1e-14)
    assert integ.stats.naccepted == 5


def test_record_steps_returns_every_step_and_on_failure_the_steps_before_it():
    prob = odekit.problems.kepler(e=0.5)
    integ = Integrator(prob, "velocity_verlet", h=0.01)
    integ.step(7)
    t, y = integ.record_steps(40)
    assert t.shape == (41,) and y.shape == (41, 2, 2)
    np.testing.assert_allclose(t, 0.07 + 0.01 * np.arange(41), rtol=1e-13)
    assert integ.t == t[-1] and np.array_equal(integ.y, y[-1])
    one = Integrator(prob, "velocity_verlet", h=0.01)
    one.step(7)
    for k in range(1, 41):                      # the same as one step at a time, bit for bit
        one.step()
        assert np.array_equal(one.y, y[k])

    failing = Integrator(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="python")
    with pytest.raises(IntegrationError, match=r"non-finite") as info:
        failing.record_steps(10)
    assert info.value.t.shape == (6,) and info.value.t[-1] == failing.t == 0.5
    np.testing.assert_allclose(info.value.y[-1], np.array([1.0, 2.0]) * rk4_factor(-0.1) ** 5, rtol=1e-14)


def test_integration_error_from_a_raising_function_chains_the_exception():
    def fun(t, y):
        if t > 0.25:
            raise ZeroDivisionError("no")
        return -y

    integ = Integrator(ODEProblem(fun, (0.0, 1.0), [1.0]), "rk4", h=0.1, backend="python")
    with pytest.raises(IntegrationError, match=r"ZeroDivisionError") as info:
        integ.advance_to(1.0)
    assert info.value.status == Status.FUNCTION_ERROR
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert integ.t == 0.2


# --- a step per frame: one call of the compiled loop ------------------------------------------

def test_steps_after_the_first_skip_the_general_path_and_give_its_numbers(monkeypatch):
    """From the second step() on, the compiled loop is called directly; the states are those of steps
    taken through the general path, bit for bit, including after the state is written."""
    prob = odekit.problems.kepler(e=0.5)
    general = Integrator(prob, "dp54")
    quick = Integrator(prob, "dp54")
    general.step()
    quick.step()
    calls = []
    monkeypatch.setattr(quick, "_advance", lambda *a: calls.append(a))
    for k in range(30):
        general._advance(math.inf, 1, general._no_recording)
        assert quick.step() == general.t and np.array_equal(quick.y, general.y)
        if k == 10:
            general.v = quick.v = [0.1, 1.2]          # a thrust: the remembered derivative is dropped
    assert calls == [] and quick.stats == general.stats


STEP_IN_A_NEW_PROCESS = """
import json
from numba.core import event
import odekit

recorder = event.RecordingListener()
event.register("numba:compile", recorder)
integ = odekit.Integrator(odekit.problems.kepler(e=0.5), "rk4", h=0.01)
ts = [integ.step() for _ in range(3)]
names = [e.data["dispatcher"].py_func.__qualname__ for _, e in recorder.buffer if e.is_start]
print(json.dumps({"compiled": names, "y": integ.y.tolist(), "t": ts}))
"""


def test_a_new_process_loads_the_one_argument_step_from_the_disk_cache():
    # step() calls the loop with its bundles as one StructRef (two kernels beside the loop's): kept on
    # disk, or every game would wait about a second and a half on its first step
    import json
    import subprocess
    import sys

    runs = [json.loads(subprocess.run([sys.executable, "-c", STEP_IN_A_NEW_PROCESS], capture_output=True, text=True,
                                      check=True).stdout.splitlines()[-1]) for _ in range(2)]
    assert not [name for name in runs[1]["compiled"] if "bundl" in name], runs[1]["compiled"]
    assert runs[1]["y"] == runs[0]["y"] and runs[1]["t"] == runs[0]["t"]
    general = Integrator(odekit.problems.kepler(e=0.5), "rk4", h=0.01)
    general.advance_to(0.03)
    assert runs[1]["y"] == general.y.tolist()


def test_any_other_call_between_steps_sends_the_next_step_the_general_way():
    """advance_to leaves its target in the loop's arrays: a step after it must not stop there."""
    integ = Integrator(odekit.problems.kepler(e=0.5), "rk4", h=0.01)
    integ.step()
    integ.step()
    integ.advance_to(0.05)
    assert integ.step(3) == pytest.approx(0.08, abs=1e-15)
    t, _ = integ.record_steps(2)
    assert integ.step() == pytest.approx(0.11, abs=1e-15) and t[-1] == pytest.approx(0.10, abs=1e-15)


def test_a_failing_step_on_the_direct_path_raises_as_the_general_path_does():
    """max_steps ends the run on the step that reaches it, both ways, and the state stays there."""
    def outcomes(integ, step):
        seen = []
        for _ in range(4):
            try:
                step(integ)
                seen.append(("ok", integ.t))
            except IntegrationError as error:
                seen.append((error.status, str(error), integ.t, integ.stats.naccepted))
        return seen

    prob = odekit.problems.kepler(e=0.5)
    quick = outcomes(Integrator(prob, "rk4", h=0.01, max_steps=3), lambda integ: integ.step())
    general = outcomes(Integrator(prob, "rk4", h=0.01, max_steps=3),
                       lambda integ: integ._advance(math.inf, 1, integ._no_recording))
    assert quick == general
    assert quick[2][0] == Status.MAX_STEPS and quick[3][2:] == (pytest.approx(0.03, abs=1e-15), 3)
