"""Adaptive step control: embedded pairs with PI control, and step doubling."""

import math

import numpy as np
import pytest

import odekit
from odekit.controllers import accept_factor, reject_factor
from odekit.kernels import layout

EMBEDDED = [m for m in odekit.methods() if m.adaptive]
ORBIT = odekit.problems.kepler(e=0.5, orbits=1)


def final_error(sol):
    x, v = sol.problem.exact(sol.t[-1])
    return float(np.max(np.abs(sol.y[-1] - np.stack([x, v]))))


@pytest.mark.parametrize("m", EMBEDDED, ids=lambda m: m.name)
def test_error_falls_with_the_tolerance(m):
    errors, steps = [], []
    for rtol in (1e-4, 1e-6, 1e-8):
        sol = odekit.solve(ORBIT, m, rtol=rtol, atol=rtol * 1e-3)
        assert sol.success
        errors.append(final_error(sol))
        steps.append(sol.stats.naccepted)
    # 100x tighter tolerance: at least 5x smaller error, and more steps
    assert errors[1] < errors[0] / 5 and errors[2] < errors[1] / 5, errors
    assert steps[0] < steps[1] < steps[2]


def test_dp54_meets_its_tolerance_on_one_orbit():
    sol = odekit.solve(ORBIT, "dp54", rtol=1e-8, atol=1e-11, backend="python")
    assert final_error(sol) < 1e-6


def test_rejected_steps_are_counted_and_fsal_makes_each_attempt_cost_six():
    """A first step of a whole time unit at pericentre is far too big: rejected."""
    prob = odekit.problems.kepler(e=0.9, orbits=1)
    sol = odekit.solve(prob, controller=odekit.PIController(h0=1.0), backend="python")
    st = sol.stats
    assert sol.success and st.nrejected >= 1
    assert st.nsteps == st.naccepted + st.nrejected
    # one initial evaluation; each attempt evaluates stages 2..7 (stage 1 is remembered)
    assert st.nfev == 1 + 6 * st.nsteps


def test_the_initial_step_estimate_costs_one_evaluation():
    sol = odekit.solve(ORBIT, "dp54", backend="python")
    assert sol.stats.nfev == 2 + 6 * sol.stats.nsteps


def test_step_doubling_adapts_euler_by_the_square_root_of_the_error_ratio():
    """y' = -y: one Euler step of h against two of h/2 differ by exactly h^2 y / 4.

    The error estimate is that difference divided by 2^1 - 1; the next step is
    h * 0.9 * (1/err)^(1/2), err measured against atol + rtol |y|.
    """
    rtol, atol, h0 = 1e-3, 1e-6, 0.01
    prob = odekit.problems.decay(lam=-1.0, t_end=1.0)
    sol = odekit.solve(prob, "euler", adaptive="doubling", h=h0, rtol=rtol, atol=atol, backend="python")
    assert sol.t[1] == h0                                  # accepted at once
    y_half = (1 - h0 / 2) ** 2
    err = (h0 * h0 / 4) / (atol + rtol * max(1.0, y_half))
    assert sol.y[1, 0] == pytest.approx(y_half, rel=1e-15)   # the two half steps are kept
    assert sol.t[2] - sol.t[1] == pytest.approx(h0 * 0.9 * err ** -0.5, rel=1e-12)


@pytest.mark.parametrize("name", ["rk4", "midpoint", "velocity_verlet", "forest_ruth", "backward_euler"])
def test_step_doubling_works_for_any_method(name):
    prob = ORBIT
    errors = []
    for rtol in (1e-4, 1e-7):
        sol = odekit.solve(prob, name, adaptive="doubling", rtol=rtol, atol=rtol * 1e-3)
        assert sol.success, sol.message
        errors.append(final_error(sol))
    assert errors[1] < errors[0] / 10, errors


def test_step_doubling_lets_backward_euler_take_large_steps_on_a_stiff_problem():
    """k = 1e6: explicit Euler is held near its stability limit h = 2/k long
    after the fast mode has died out (it chatters around the limit: a few
    over-large steps grow the stiff mode until a step is rejected)."""
    k = 1e6
    prob = odekit.problems.bead_on_wire(k=k, t_end=10.0)
    implicit = odekit.solve(prob, "backward_euler", adaptive="doubling", rtol=1e-3, backend="python")
    assert implicit.success and implicit.stats.naccepted < 1000
    explicit = odekit.solve(prob, "euler", adaptive="doubling", rtol=1e-3, max_steps=200_000)
    assert explicit.status == odekit.Status.MAX_STEPS
    assert explicit.t[-1] / explicit.stats.naccepted < 10 * (2 / k)


def test_h_max_bounds_every_step():
    sol = odekit.solve(ORBIT, controller=odekit.PIController(h_max=0.05), backend="python")
    assert np.max(np.diff(sol.t)) <= 0.05 * (1 + 1e-12)
    assert sol.success


def _clipped_at(name, h):
    """The controller of ``name`` (a method, or ``"rk4 doubling"``) with first and largest step ``h``."""
    if name.endswith(" doubling"):
        return name.split()[0], odekit.StepDoubling(h0=h, h_max=h)
    if odekit.method(name).family.self_controlled:
        return name, odekit.MethodControl(h0=h, h_max=h)
    return name, odekit.PIController(h0=h, h_max=h)


@pytest.mark.parametrize("backend, name", [("python", m.name) for m in odekit.methods() if m.adaptive]
                         + [("python", "rk4 doubling"), ("numba", "dp54"), ("numba", "radau5"), ("numba", "bdf")])
def test_steps_that_reach_t_end_short_by_rounding_end_there(name, backend):
    """Ten steps of h_max = 0.1 from 0 end at 0.9999999999999999: the run went on to a sliver of
    1.1e-16 and stopped with STEP_UNDERFLOW, for every adaptive method (SciPy's solve_ivp with
    first_step = max_step = 0.1 ends at 1).  Now the tenth step lands on t_end."""
    prob, end = odekit.ODEProblem(lambda t, y: np.ones_like(y), (0.0, 1.0), [0.0]), [1.0]
    method, controller = _clipped_at(name, 0.1)
    if odekit.method(method).second_order_only:     # x'' = 0 from v = 1: x = t, as y = t above
        prob = odekit.SecondOrderProblem(lambda t, x, v: np.zeros_like(x), (0.0, 1.0), [0.0], [1.0],
                                         velocity_dependent=False)
        end = [[1.0], [1.0]]
    sol = odekit.solve(prob, method, controller=controller, backend=backend)
    assert sol.success, sol.message
    assert sol.t[-1] == 1.0 and sol.stats.naccepted == 10
    np.testing.assert_allclose(sol.y[-1], end, rtol=1e-14)


def test_h_min_stops_a_run_that_needs_smaller_steps():
    sol = odekit.solve(odekit.problems.kepler(e=0.9, orbits=1),
                       controller=odekit.PIController(h_min=0.05), backend="python")
    assert sol.status == odekit.Status.STEP_UNDERFLOW
    assert "h_min=0.05" in sol.message
    assert len(sol.t) >= 1 and sol.t[-1] < 2 * math.pi


# --- the controller's formulas -------------------------------------------------------

def params(**options):
    return odekit.PIController(**options).params(odekit.method("dp54"))


def test_pi_defaults_are_those_of_hairers_dopri5():
    p = params()
    assert p[layout.C_EXPONENT] == 5          # min(5, 4) + 1 for Dormand-Prince
    assert p[layout.C_BETA2] == pytest.approx(0.04) and p[layout.C_BETA1] == pytest.approx(0.2 - 0.75 * 0.04)
    bs = odekit.PIController().params(odekit.method("bs32"))
    assert bs[layout.C_EXPONENT] == 3 and bs[layout.C_BETA2] == pytest.approx(0.04 * 5 / 3)


def test_accept_factor_is_the_pi_formula_within_its_limits():
    p = params()
    err, prev = 0.3, 0.5
    assert accept_factor(p, err, prev, False) == pytest.approx(0.9 * err ** (-0.17) * prev ** 0.04)
    assert accept_factor(p, 1e-12, 1.0, False) == 10.0          # capped at factor_max
    assert accept_factor(p, 0.0, 1.0, False) == 10.0
    assert accept_factor(p, 0.3, 1.0, True) == 1.0                # no growth right after a rejection


def test_reject_factor_shrinks_by_the_error_and_never_below_factor_min():
    p = params()
    assert reject_factor(p, 2.0) == pytest.approx(0.9 * 2.0 ** (-1 / 5))
    assert reject_factor(p, 1e9) == 0.2


@pytest.mark.parametrize("option, value, pattern", [
    ("safety", 1.5, "safety must be in"), ("factor_min", 1.0, "factor_min must be in"),
    ("factor_max", 0.5, "factor_max must be greater than 1"), ("h0", -1.0, "h0 must be a positive"),
    ("h_min", -1.0, "h_min must be >= 0"), ("h_max", 0.0, "h_max must be a positive"),
])
def test_controller_options_are_checked(option, value, pattern):
    with pytest.raises(ValueError, match=pattern):
        odekit.PIController(**{option: value})


def test_pi_control_needs_an_embedded_pair():
    with pytest.raises(ValueError, match="no embedded error estimate.*StepDoubling"):
        odekit.solve(ORBIT, "rk4", controller=odekit.PIController(), backend="python")


def _pendulum(t, y):
    return np.array([y[1], -9.8 * np.sin(y[0])])


def _decay3(t, y):
    return np.array([-y[0], -10.0 * y[1], 0.1 * y[2]])


@pytest.mark.parametrize("fun, y0, rtol, atol", [
    (_pendulum, [2.0, 0.0], 1e-6, 1e-9),
    (_pendulum, [0.1, 0.3], 1e-3, 1e-6),
    (_decay3, [1.0, 2.0, 3.0], 1e-8, 1e-12),
    (_decay3, [0.0, 1e-9, 0.0], 1e-6, 1e-9),      # y0 below atol: Hairer's 1e-6 start
])
@pytest.mark.parametrize("backend", ["numba", "python"])
def test_the_first_step_is_hairers_choice_as_scipy_computes_it(fun, y0, rtol, atol, backend):
    """The kernel's initial step equals SciPy's implementation of the same algorithm (Hairer,
    Norsett & Wanner, II.4) for the same local order: dp54's error estimate is of order 4."""
    select_initial_step = pytest.importorskip("scipy.integrate._ivp.common").select_initial_step
    y0 = np.array(y0)
    integ = odekit.Integrator(odekit.ODEProblem(fun, (0.0, 10.0), y0), "dp54", rtol=rtol, atol=atol,
                              backend=backend)
    integ.step()
    assert integ.stats.nrejected == 0           # so the step taken is the one chosen
    expected = select_initial_step(fun, 0.0, y0, 10.0, np.inf, fun(0.0, y0), 1, 4, rtol, atol)
    assert integ.t == pytest.approx(expected, rel=1e-12)


# --- Gustafsson's prediction bounds every pair's growth ---------------------------------------

def test_the_prediction_bounds_every_pair_by_default_and_can_be_turned_off():
    radau = odekit.method("radau5")
    p = odekit.PIController().params(radau)
    assert p[layout.C_PREDICTIVE] == 1 and p[layout.C_EXPONENT] == 4          # min(5, 3) + 1
    assert p[layout.C_BETA1] == pytest.approx(1 / 4) and p[layout.C_BETA2] == 0   # RADAU5's integral gains
    plain = odekit.PIController(predictive=False).params(radau)
    assert plain[layout.C_PREDICTIVE] == 0 and plain[layout.C_BETA1] == pytest.approx(1 / 4)
    # the other pairs: the bound with the PI gains
    for name in ("dp54", "dprkn8", "rodas4", "kencarp4"):
        p = odekit.PIController().params(odekit.method(name))
        k = p[layout.C_EXPONENT]
        assert p[layout.C_PREDICTIVE] == 1 and p[layout.C_BETA2] == pytest.approx(0.2 / k)
        assert odekit.PIController(predictive=False).params(odekit.method(name))[layout.C_PREDICTIVE] == 0
    with pytest.raises(ValueError, match=r"predictive must be True, False or None.*got .yes."):
        odekit.PIController(predictive="yes")


def test_the_prediction_bounds_the_growth_where_the_error_grew_faster_than_the_step():
    p = params(predictive=True, beta1=0.2, beta2=0.0)          # k = 5: Gustafsson's integral gains
    err, prev = 0.3, 0.005
    plain = 0.9 * err ** (-1 / 5)
    # the step doubled, the error grew 60-fold (more than 2^5): the prediction is smaller
    assert accept_factor(p, err, prev, False, 2.0) == pytest.approx(plain * 2.0 * (prev / err) ** (1 / 5))
    assert accept_factor(p, err, prev, False, 2.0) < 0.9 * plain
    # the step grew fivefold: 5 (1/60)^(1/5) > 1, the plain factor stands
    assert accept_factor(p, err, prev, False, 5.0) == pytest.approx(plain)
    assert accept_factor(p, err, prev, False) == pytest.approx(plain)          # no previous step


@pytest.mark.parametrize("method", ["dp54", "dop853", "vern8"])
def test_the_explicit_pairs_bounded_by_the_prediction_reject_less_and_spend_less_on_arenstorfs_orbit(method):
    # where the steps shrink towards the close approach, PI alone accepts a step and then rejects the next
    # attempt (23 of 120 for vern8 at rtol 1e-7); the prediction cuts the step before it is tried
    prob = odekit.problems.arenstorf()
    start = np.concatenate([prob.x0, prob.v0])
    runs = [odekit.solve(prob, method, rtol=1e-7, atol=1e-10, controller=controller)
            for controller in (None, odekit.PIController(predictive=False))]
    (bounded, plain), (bounded_error, plain_error) = runs, [np.abs(s.y[-1].ravel() - start).max() for s in runs]
    assert bounded.success and plain.success
    assert 2 * bounded.stats.nrejected <= plain.stats.nrejected
    assert bounded.stats.nfev < 0.95 * plain.stats.nfev
    assert bounded_error <= plain_error          # one period: the orbit closes on its start


def test_a_slow_newton_iteration_lowers_the_safety_as_radau5_does():
    from odekit.kernels.control import newton_drag
    p = params()
    for iterations, most in ((1, 7), (2, 7), (7, 7), (4, 4)):
        safety = 0.9 * (2 * most + 1) / (2 * most + iterations)          # RADAU5's FAC, ode15s's too
        drag = newton_drag(iterations, most)
        assert reject_factor(p, 2.0, drag) == pytest.approx(safety * 2.0 ** (-1 / 5))
        assert accept_factor(p, 0.3, 1.0, False, 0.0, drag) == pytest.approx(safety * 0.3 ** (-0.17))
