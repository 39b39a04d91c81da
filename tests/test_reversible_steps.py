"""Time-reversible adaptive steps for splitting methods (odekit.reversible, Hairer & Söderlind 2005)."""

import math

import numpy as np
import pytest

import odekit
from odekit import ReversibleSteps, SecondOrderProblem, distance_control, problems
from odekit.analysis import invariant_drift

EPS = np.finfo(float).eps
KEPLER = distance_control(1.5)


def periapsis_time(e):
    """The time scale of Kepler's orbit at its pericentre, ``r^(3/2)``: the size of a sensible first step."""
    return (1 - e) ** 1.5


def first_step(kepler, k):
    """``k`` times the pericentre's time scale: :func:`problems.kepler` starts at the pericentre ``x0``."""
    return k * kepler.x0[0] ** 1.5


def reversible(problem, method="velocity_verlet", k=0.03, control=KEPLER, **options):
    return odekit.solve(problem, method, h=first_step(problem, k), step_control=ReversibleSteps(control),
                        **options)


# --- the long run: bounded energy, fewer evaluations than fixed steps -----------------------

@pytest.mark.parametrize("e, k", [(0.9, 0.03), (0.99, 0.03)])
def test_energy_error_bounded_over_a_thousand_orbits(e, k):
    sol = reversible(problems.kepler(e=e, orbits=1000), k=k, save_every=7)
    assert sol.success
    drift = invariant_drift(sol, "energy")
    assert drift.bounded, str(drift)
    # no secular trend: the largest error of the last hundred orbits is that of the first hundred
    t, d = drift.t, np.abs(drift.drift)
    period = 2 * math.pi
    first, last = d[t < 100 * period].max(), d[t > 900 * period].max()
    assert last < 1.1 * first, (first, last)
    # ... at the error of a pericentre passage (3.3e-3 and 4.0e-2, measured)
    assert drift.max < 0.05


@pytest.mark.parametrize("e", [0.9, 0.99])
def test_fewer_evaluations_than_fixed_verlet_at_equal_energy_error(e):
    # one orbit from pericentre to pericentre holds the largest error of any number of orbits
    adaptive = reversible(problems.kepler(e=e, orbits=1), k=0.03)
    error = invariant_drift(adaptive, "energy").max
    # fixed-step Verlet's energy error is h^2 C: the step of equal largest error, from one run
    probe_h = 0.1 * periapsis_time(e)
    probe = odekit.solve(problems.kepler(e=e, orbits=1), "velocity_verlet", h=probe_h)
    h = probe_h * math.sqrt(error / invariant_drift(probe, "energy").max)
    fixed = odekit.solve(problems.kepler(e=e, orbits=1), "velocity_verlet", h=h)
    assert invariant_drift(fixed, "energy").max == pytest.approx(error, rel=0.3)
    assert fixed.stats.nfev > 5 * adaptive.stats.nfev, (fixed.stats.nfev, adaptive.stats.nfev)


def test_dp54_drifts_where_reversible_steps_do_not():
    """The contrast: a standard adaptive method on the same orbit loses energy secularly."""
    problem = problems.kepler(e=0.9, orbits=200)
    sol = odekit.solve(problem, "dp54", rtol=1e-6, atol=1e-9)
    drift = invariant_drift(sol, "energy")
    assert drift.secular, str(drift)


# --- reversibility --------------------------------------------------------------------------

def _there_and_back(control, n=3000, method="velocity_verlet"):
    kepler = problems.kepler(e=0.9, orbits=100)
    out = reversible(kepler, method, control=control, max_steps=n)
    assert out.status == odekit.Status.MAX_STEPS and out.stats.naccepted == n
    x, v = out.x[-1], out.v[-1]
    back = SecondOrderProblem(kepler.accel, kepler.t_span, x, -v, args=kepler.args, velocity_dependent=False)
    ret = odekit.solve(back, method, h=first_step(kepler, 0.03),
                       step_control=ReversibleSteps(control, rho0=out.rho[-1]), max_steps=n)
    return kepler, out, ret


@pytest.mark.parametrize("control, method", [(KEPLER, "velocity_verlet"), (None, "velocity_verlet"),
                                             (KEPLER, "forest_ruth"), (None, "position_verlet"),
                                             (KEPLER, "yoshida6")])
def test_forward_then_backward_returns_to_the_start(control, method):
    n = 3000
    kepler, out, ret = _there_and_back(control, n, method)
    assert out.rho.max() / out.rho.min() > 15           # the steps did adapt: r_apo / r_peri = 19
    # rounding of each sub-step's sums; the default control's difference quotient of the force amplifies the
    # rounding of the state it is taken at (measured: up to 14 n eps |y|, against 2.6 for distance_control)
    scale = (10 if control is KEPLER else 30) * np.abs(out.y).max()
    assert np.abs(ret.x[-1] - kepler.x0).max() < n * EPS * scale
    assert np.abs(-ret.v[-1] - kepler.v0).max() < n * EPS * scale
    assert abs(ret.rho[-1] - 1.0) < n * EPS * out.rho.max()
    assert ret.t[-1] - ret.t[0] == pytest.approx(out.t[-1] - out.t[0], rel=n * EPS)


def test_a_control_even_in_v_is_not_reversible():
    """The property above can fail: a control that does not change sign with v breaks it."""
    def speed(t, x, v, mu):
        return float(np.vdot(v, v)) ** 0.5 / 10
    n = 300
    kepler, out, ret = _there_and_back(speed, n)
    assert np.abs(ret.x[-1] - kepler.x0).max() > 1e6 * n * EPS


# --- order ---------------------------------------------------------------------------------

@pytest.mark.parametrize("method, order", [("velocity_verlet", 2), ("forest_ruth", 4), ("pefrl", 4)])
def test_order_of_the_method_is_kept(method, order):
    problem = problems.kepler(e=0.9, orbits=1)
    x_end, v_end = problem.exact(problem.t_span[1])
    errors = []
    for k in (0.02, 0.01, 0.005) if order == 2 else (0.04, 0.02, 0.01):
        sol = reversible(problem, method, k=k)
        errors.append(max(np.abs(sol.x[-1] - x_end).max(), np.abs(sol.v[-1] - v_end).max()))
    slopes = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(slopes - order) < 0.2), slopes


def test_zero_control_is_fixed_step_verlet():
    """With g = 0 the control variable never moves: the run is fixed-step Verlet, to rounding.

    (The fixed-step loop steps between the times ``t0 + k h``, whose differences vary by rounding.)
    """
    problem = problems.kepler(e=0.5, orbits=1)
    h = 2 * math.pi / 1000
    sol = odekit.solve(problem, "velocity_verlet", h=h, step_control=ReversibleSteps(lambda t, x, v, mu: 0.0))
    fixed = odekit.solve(problem, "velocity_verlet", h=h, backend="python")
    assert sol.stats.nfev == fixed.stats.nfev
    np.testing.assert_allclose(sol.t, fixed.t, rtol=0, atol=4 * EPS * sol.t[-1])
    np.testing.assert_allclose(sol.y, fixed.y, rtol=0, atol=len(sol.t) * EPS * np.abs(sol.y).max())


# --- backends -------------------------------------------------------------------------------

@pytest.mark.parametrize("control, method", [(KEPLER, "velocity_verlet"), (None, "pefrl"),
                                             (KEPLER, "leapfrog")])
def test_same_numbers_compiled_and_as_python(control, method):
    problem = problems.kepler(e=0.9, orbits=2)
    runs = [reversible(problem, method, control=control, backend=b) for b in ("numba", "python")]
    assert [r.backend for r in runs] == ["numba", "python"]
    np.testing.assert_array_equal(runs[0].t, runs[1].t)
    np.testing.assert_array_equal(runs[0].y, runs[1].y)
    np.testing.assert_array_equal(runs[0].rho, runs[1].rho)
    assert runs[0].stats == runs[1].stats


def test_leapfrog_runs_as_velocity_verlet():
    """Leapfrog's staggered velocity assumes a fixed step: with varying steps it runs synchronised."""
    problem = problems.kepler(e=0.9, orbits=2)
    leapfrog, verlet = (reversible(problem, m) for m in ("leapfrog", "velocity_verlet"))
    np.testing.assert_array_equal(leapfrog.y, verlet.y)


def test_a_control_numba_cannot_compile_runs_as_python():
    def plain_python(x, v):                              # not compiled: Numba cannot call it from compiled code
        return 1.5 * float(np.dot(x, v)) / float(np.dot(x, x))

    def control(t, x, v, mu):
        return plain_python(x, v)
    problem = problems.kepler(e=0.9, orbits=1)
    with pytest.warns(odekit.BackendFallbackWarning, match="Numba could not compile the force or the control"):
        sol = reversible(problem, control=control)
    assert sol.backend == "python" and sol.success
    np.testing.assert_allclose(sol.y[-1], reversible(problem).y[-1], rtol=1e-10)     # np.dot sums differently


# --- refusals -------------------------------------------------------------------------------

def test_refuses_what_cannot_be_reversible():
    kepler = problems.kepler(e=0.5)
    control = ReversibleSteps(KEPLER)
    with pytest.raises(ValueError, match="'symplectic_euler' is not symmetric"):
        odekit.solve(kepler, "symplectic_euler", h=0.01, step_control=control)
    with pytest.raises(ValueError, match="'rk4' is explicit Runge-Kutta"):
        odekit.solve(kepler, "rk4", h=0.01, step_control=control)
    with pytest.raises(ValueError, match="needs h"):
        odekit.solve(kepler, "velocity_verlet", step_control=control)
    with pytest.raises(ValueError, match="t_eval=.*cannot be given with step_control"):
        odekit.solve(kepler, "velocity_verlet", h=0.01, step_control=control, t_eval=[0.0, 1.0])
    with pytest.raises(ValueError, match="rtol=1e-08 cannot be given with step_control"):   # it has no tolerance
        odekit.solve(kepler, "velocity_verlet", h=0.01, step_control=control, rtol=1e-8)
    with pytest.raises(ValueError, match="backend must be one of auto, numba, python, got 'jax'"):
        odekit.solve(kepler, "velocity_verlet", h=0.01, step_control=control, backend="jax")
    with pytest.raises(ValueError, match="step_control must be a ReversibleSteps or None"):
        odekit.solve(kepler, "velocity_verlet", h=0.01, step_control=0.5)
    damped = SecondOrderProblem(kepler.accel, kepler.t_span, kepler.x0, kepler.v0, args=kepler.args,
                                velocity_dependent=False, damping=0.1)
    with pytest.raises(ValueError, match="damped problem"):
        odekit.solve(damped, "velocity_verlet", h=0.01, step_control=control)
    with pytest.raises(ValueError, match="rho0 must be a positive finite number, got -1"):
        ReversibleSteps(rho0=-1)
    with pytest.raises(TypeError, match="control must be a function"):
        ReversibleSteps(control=3)


@pytest.mark.parametrize("name, problem", [("dprkn6", problems.kepler(e=0.5)),
                                           ("wisdom_holman", problems.outer_solar_system(t_end=100.0))])
def test_refuses_second_order_methods_that_are_not_kick_drift_splittings(name, problem):
    """A Nystrom pair and the Kepler splitting integrate x'' = a too, but the loop steps a kick-drift scheme."""
    with pytest.raises(ValueError, match=rf"runs kick-drift splitting methods; method '{name}' is .*: choose a "
                                         "symmetric splitting method such as 'velocity_verlet'"):
        odekit.solve(problem, name, h=0.01, step_control=ReversibleSteps(KEPLER), backend="python")


def test_refuses_velocity_dependent_forces_saying_what_runs_them():
    kepler = problems.kepler(e=0.5)
    dependent = SecondOrderProblem(kepler.accel, kepler.t_span, kepler.x0, kepler.v0, args=kepler.args,
                                   velocity_dependent=True)
    with pytest.raises(ValueError, match=r"reversible steps need forces that do not depend on velocity, but the "
                                         r"problem says velocity_dependent=True; accepted: velocity_dependent=False "
                                         r"if accel ignores v, or fixed steps h"):
        odekit.solve(dependent, "velocity_verlet", h=0.01, step_control=ReversibleSteps(KEPLER))
    assert odekit.solve(dependent, "velocity_verlet", h=0.01, backend="python").success    # the advice holds


def test_a_step_the_control_cannot_take_stops_with_a_status():
    """Too large an h drives rho through zero: the run stops, keeping what it computed."""
    sol = odekit.solve(problems.kepler(e=0.99), "velocity_verlet", h=0.01,
                       step_control=ReversibleSteps(KEPLER))
    assert sol.status == odekit.Status.STEP_UNDERFLOW
    assert "take a smaller h" in sol.message
    assert len(sol.t) == sol.stats.naccepted + 1


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_a_control_that_raises_or_is_not_finite_ends_the_run_with_its_status(backend):
    problem = problems.kepler(e=0.9, orbits=1)
    half_orbit = math.pi

    def nan_after(t, x, v, mu):
        return math.nan if t > half_orbit else 1.5 * (x[0] * v[0] + x[1] * v[1]) / (x[0] * x[0] + x[1] * x[1])
    sol = reversible(problem, control=nan_after, backend=backend)
    assert sol.status == odekit.Status.NONFINITE and "not finite" in sol.message
    assert half_orbit < sol.t[-1] < 2 * half_orbit and sol.t[-2] <= half_orbit < sol.t[-1]
    assert len(sol.t) == sol.stats.naccepted + 1


def test_a_control_that_raises_keeps_what_was_computed():
    problem = problems.kepler(e=0.9, orbits=1)

    def raises_late(t, x, v, mu):
        if t > math.pi:
            raise ZeroDivisionError("no control beyond half an orbit")
        return 1.5 * (x[0] * v[0] + x[1] * v[1]) / (x[0] * x[0] + x[1] * x[1])
    sol = reversible(problem, control=raises_late, backend="python")
    assert sol.status == odekit.Status.FUNCTION_ERROR
    assert "no control beyond half an orbit" in sol.message
    assert sol.t[-1] > math.pi and len(sol.t) == sol.stats.naccepted + 1


def test_a_step_too_small_to_advance_t_stops_with_a_status():
    """A control that makes rho grow without bound: the run stops instead of stepping in place forever."""
    def collapsing(t, x, v, mu):
        return -1e30 if t > 1.0 else 0.0          # from t = 1 on, rho jumps by h 1e30 / 2: steps of 2e-30
    sol = reversible(problems.kepler(e=0.5, orbits=20), control=collapsing)
    assert sol.status == odekit.Status.STEP_UNDERFLOW
    assert "no longer advances t" in sol.message
    assert 1.0 < sol.t[-1] < 1.1


def test_refuses_a_problem_with_events():
    problem = problems.kepler(e=0.5)
    with_events = SecondOrderProblem(problem.accel, problem.t_span, problem.x0, problem.v0, args=problem.args,
                                     velocity_dependent=False, events=problems.orbits.pericentre_event())
    with pytest.raises(ValueError, match="reversible steps do not search events"):
        reversible(with_events)
