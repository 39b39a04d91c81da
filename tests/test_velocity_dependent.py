"""Velocity-dependent forces x'' = a(t, x, v) in splitting methods: kicks implicit in v (#18).

Every splitting method of order > 1 runs them as a composition of an
explicit and an implicit kick (see :mod:`odekit.kernels.velocity`): the
measured orders against a tight reference, the symmetry of a step, the
failure of an implicit kick that has no solution, and bitwise the plain
scheme's numbers where the force ignores v.
"""

import math
import warnings

import numpy as np
import pytest

import odekit
from odekit import SecondOrderProblem, Status, solve
from odekit.registry import CLASSIC

IMPLICIT = [m for m in odekit.methods("splitting") if m.velocity_implicit]
EPS = np.finfo(float).eps


def van_der_pol(t, x, v, mu):
    return -x - mu * (x * x - 1.0) * v


def projectile(t, x, v, k):
    """Gravity and quadratic drag in the plane: a = g - k |v| v (a full 2 x 2 da/dv)."""
    speed = math.sqrt(v[0] * v[0] + v[1] * v[1])
    return np.array([-k * speed * v[0], -1.0 - k * speed * v[1]])


PROBLEMS = {
    "van_der_pol": SecondOrderProblem(van_der_pol, (0.0, 2.0), [2.0], [0.0], args=(1.0,)),
    "quadratic_drag": SecondOrderProblem(projectile, (0.0, 2.0), [0.0, 0.0], [3.0, 4.0], args=(0.3,)),
}
# steps of the coarsest run per order: in the asymptotic regime, and the finest run's error
# (about 1e-10 for order 6) far above the reference's
COARSEST = {2: 20, 4: 20, 6: 10}


def reference(prob):
    ref = solve(prob, "dop853", rtol=1e-13, atol=1e-15, backend="python")
    assert ref.success
    return np.concatenate([ref.x[-1].ravel(), ref.v[-1].ravel()])


def measured_order(prob, method, coarsest, halvings=4):
    """Least-squares slope of log(error at t_end) against log h."""
    exact = reference(prob)
    span = prob.t_span[1] - prob.t_span[0]
    steps = [span / (coarsest * 2 ** i) for i in range(halvings)]
    errors = []
    for h in steps:
        sol = solve(prob, method, h=h, backend="python")
        assert sol.success, sol.message
        errors.append(np.max(np.abs(np.concatenate([sol.x[-1].ravel(), sol.v[-1].ravel()]) - exact)))
    return float(np.polyfit(np.log(steps), np.log(errors), 1)[0]), errors


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("method", IMPLICIT, ids=lambda m: m.name)
def test_implicit_kicks_keep_every_splitting_methods_order(method, name):
    """Verlet and leapfrog 2, Forest-Ruth and PEFRL 4, Yoshida 6, on nonlinear forces of v (explicit
    kicks would give 1)."""
    order, errors = measured_order(PROBLEMS[name], method, COARSEST[method.order])
    assert abs(order - method.order) <= 0.2, (order, errors)


def test_every_composition_of_the_registry_runs_implicit_kicks():
    names = {m.name for m in IMPLICIT}
    assert {"velocity_verlet", "position_verlet", "leapfrog", "forest_ruth", "pefrl", "yoshida6"} <= names
    assert not {"symplectic_euler", "symplectic_euler_b"} & names


@pytest.mark.parametrize("method", IMPLICIT, ids=lambda m: m.name)
def test_a_step_forward_and_back_returns_to_the_start(method):
    """Time reversibility: one step of h, then one of -h from its end, gives the start to round-off."""
    h, x0, v0 = 0.1, 2.0, 0.5
    forward = solve(SecondOrderProblem(van_der_pol, (0.0, h), [x0], [v0], args=(1.0,)), method, h=h,
                    backend="python")
    back = solve(SecondOrderProblem(van_der_pol, (h, 0.0), forward.x[-1], forward.v[-1], args=(1.0,)), method,
                 h=h, backend="python")
    assert abs(forward.x[-1, 0] - x0) > 0.01                         # it moved
    assert abs(back.x[-1, 0] - x0) <= 4 * EPS * x0 and abs(back.v[-1, 0] - v0) <= 4 * EPS * x0, (
        back.x[-1, 0] - x0, back.v[-1, 0] - v0)


def test_velocity_verlet_is_the_generalized_stormer_verlet_method():
    """One step on x'' = -x - c v (linear: each implicit half-kick solved by hand)."""
    c, h, x0, v0 = 0.7, 0.1, 1.0, 0.5
    sol = solve(SecondOrderProblem(lambda t, x, v: -x - c * v, (0.0, h), [x0], [v0]), "velocity_verlet", h=h,
                backend="python")
    v_half = (v0 - h / 2 * x0) / (1 + h / 2 * c)           # v_half = v0 + h/2 a(x0, v_half)
    x1 = x0 + h * v_half
    v1 = v_half + h / 2 * (-x1 - c * v_half)                # explicit, at (x1, v_half)
    np.testing.assert_allclose([sol.x[-1, 0], sol.v[-1, 0]], [x1, v1], rtol=4 * EPS)


def cubic_spring(t, x, v):
    return -x - x ** 3


@pytest.mark.parametrize("method", IMPLICIT, ids=lambda m: m.name)
def test_a_force_that_ignores_v_gives_bitwise_the_plain_schemes_numbers(method):
    """Declared velocity-dependent, a force of x alone runs exactly as the plain kicks (leapfrog's
    implicit kicks are velocity Verlet's: its staggering does not apply to them)."""
    plain = "velocity_verlet" if method.name == "leapfrog" else method
    implicit = solve(SecondOrderProblem(cubic_spring, (0.0, 1.0), [1.0], [0.2], velocity_dependent=True), method,
                     h=0.1, backend="python")
    explicit = solve(SecondOrderProblem(cubic_spring, (0.0, 1.0), [1.0], [0.2], velocity_dependent=False), plain,
                     h=0.1, backend="python")
    assert np.array_equal(implicit.y, explicit.y)


def test_every_evaluation_is_counted():
    """Velocity Verlet on a force of x alone: the first step's implicit half-kick starts from the known
    force and is confirmed by one evaluation, every later one takes two (the explicit guess, its
    confirmation); the closing half-kick one.  With the first evaluation of the run, 3 per step."""
    steps = 10
    sol = solve(SecondOrderProblem(cubic_spring, (0.0, 1.0), [1.0], [0.2]), "velocity_verlet", h=1.0 / steps,
                backend="python")
    assert sol.stats.nfev == 1 + 2 + 3 * (steps - 1)
    assert sol.stats.njev == 0


def test_newton_takes_over_where_the_fixed_point_does_not_contract():
    """Strong drag, h c / 2 = 2.5: the fixed-point map expands, Newton's method (one Jacobian per
    implicit kick, counted) converges; the result solves the implicit half-kick."""
    c, h, x0, v0 = 50.0, 0.1, 1.0, 0.0
    sol = solve(SecondOrderProblem(lambda t, x, v: -x - c * v, (0.0, h), [x0], [v0]), "velocity_verlet", h=h,
                backend="python")
    assert sol.success, sol.message
    assert sol.stats.njev == 1 and sol.stats.nlu == 1
    v_half = (v0 - h / 2 * x0) / (1 + h / 2 * c)
    x1 = x0 + h * v_half
    np.testing.assert_allclose([sol.x[-1, 0], sol.v[-1, 0]], [x1, v_half + h / 2 * (-x1 - c * v_half)],
                               rtol=8 * EPS)


def test_a_kick_without_solution_stops_the_run_with_a_status_naming_the_step():
    """v' = v^2 blows up at t = 1; the half-kick v = v0 + h/2 v^2 has no real solution once v0 > 1/h
    (at t = 0.8 for h = 0.1): the run returns the steps before it, and says where it stopped."""
    sol = solve(SecondOrderProblem(lambda t, x, v: v * v, (0.0, 2.0), [0.0], [1.0]), "velocity_verlet",
                h=0.1, backend="python")
    assert sol.status == Status.NEWTON_FAILED and not sol.success
    assert sol.t[-1] == pytest.approx(0.8) and len(sol.t) == 9
    assert sol.v[-1, 0] > 1 / 0.1 / 2
    assert ("the implicit velocity kick of 'velocity_verlet' (fixed-point iteration, then Newton's method) "
            "did not converge at t=0.8, in the step from t=0.8 with h=0.1") in sol.message


def pendulum_with_drag(t, theta, omega, g, L, B):
    return -(g / L) * np.sin(theta) - B * omega


def velocity_dependent_pendulum(t_end=10.0):
    """odekit.problems.pendulum(B=0.5) with its damping in the force instead of declared."""
    zoo = odekit.problems.pendulum(B=0.5, t_end=t_end)
    return SecondOrderProblem(pendulum_with_drag, zoo.t_span, zoo.x0, zoo.v0, args=zoo.args,
                              velocity_dependent=True, invariants=zoo.invariants)


@pytest.mark.parametrize("name", CLASSIC)
def test_the_classic_eight_run_the_velocity_dependent_pendulum_at_their_orders(name):
    method = odekit.method(name)
    order, errors = measured_order(velocity_dependent_pendulum(t_end=2.0), method, {1: 200, 2: 50, 4: 20}[method.order])
    assert abs(order - method.order) <= 0.2, (order, errors)


@pytest.mark.parametrize("name", CLASSIC)
def test_the_classic_eight_run_the_pendulum_that_declares_its_damping_at_their_orders(name):
    """The shootout's own problem, ``odekit.problems.pendulum(B=0.5)``: the splittings solve the damping in
    their drifts (a drift that damped v by 1 - c tau, not e^{-c tau}, would leave them first order)."""
    method = odekit.method(name)
    zoo = odekit.problems.pendulum(B=0.5, t_end=2.0)
    assert zoo.damping is not None and not zoo.velocity_dependent
    order, errors = measured_order(zoo, method, {1: 200, 2: 50, 4: 20}[method.order])
    assert abs(order - method.order) <= 0.2, (order, errors)


def test_the_shootout_runs_the_classic_eight_on_the_velocity_dependent_pendulum():
    """As on the pendulum that declares its damping: all eight run, Forest-Ruth and RK4 the most accurate."""
    result = odekit.shootout(velocity_dependent_pendulum(), budget=1000, backend="python")
    rows = {row["method"]: row for row in result.rows}
    assert list(rows) == list(CLASSIC)
    ranked = sorted(rows, key=lambda name: rows[name]["error"])
    assert set(ranked[:2]) == {"rk4", "forest_ruth"}, [(name, rows[name]["error"]) for name in ranked]


def test_the_shootouts_budget_holds_for_kicks_that_iterate():
    """Implicit kicks spend more than their declared evaluations (velocity Verlet about six a step at
    h = 1/budget): the shootout sizes their steps by what they spend, so that every method spends the
    budget to 2 %, and its progress still never goes back."""
    calls = []
    result = odekit.shootout(velocity_dependent_pendulum(), budget=1000, backend="python",
                             progress=lambda *a: calls.append(a))
    for row in result.rows:
        m = odekit.method(row["method"])
        assert abs(row["nfev"] / (1000 * 10.0) - 1) <= 0.02, row
        declared = m.evaluations_per_step / 1000
        assert row["h"] > 3 * declared if m.velocity_implicit else row["h"] == declared, row
    done = [c[0] for c in calls]
    assert done == sorted(done)
    assert [c for c in calls if isinstance(c[0], int)] == [(i + 1, 9, name)
                                                           for i, name in enumerate(("reference",) + CLASSIC)]


@pytest.mark.parametrize("name, mu, options", [
    ("forest_ruth", 1.0, dict(h=0.01)),           # fixed point and Newton
    ("velocity_verlet", 30.0, dict(h=0.01)),      # Newton at every kick (h mu x^2 / 2 > 0.5)
    ("pefrl", 1.0, dict(adaptive="doubling")),    # rejected steps
])
def test_implicit_kicks_give_the_same_numbers_on_both_backends(name, mu, options):
    prob = SecondOrderProblem(van_der_pol, (0.0, 3.0), [2.0], [0.0], args=(mu,))
    a, b = (solve(prob, name, backend=backend, **options) for backend in ("numba", "python"))
    assert a.backend == "numba" and a.success and b.success
    assert np.array_equal(a.t, b.t) and np.array_equal(a.y, b.y)
    assert a.stats == b.stats and a.stats.njev > 0


def test_no_stability_warning_from_the_theory_of_explicit_kicks():
    """x'' = -x - 10 v: the theory of the explicit kick (omega ~ 9.9) would limit PEFRL to h <= 0.3, but
    the implicit part of each kick takes the drag stably: no StiffnessWarning, and the motion decays."""
    prob = SecondOrderProblem(lambda t, x, v: -x - 10.0 * v, (0.0, 40.0), [1.0], [0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", odekit.StiffnessWarning)
        sol = solve(prob, "pefrl", h=1.0, backend="python")
    assert sol.success and abs(sol.x[-1, 0]) < 0.1 and np.all(np.abs(sol.x) <= 1.0)
    assert "pefrl" not in odekit.analysis.stiffness(prob).limits


def spectral_radius(name, h, c):
    """Of the one-step map of x'' = -x - c v (linear: its columns are the steps from (1, 0) and (0, 1))."""
    columns = []
    for x0, v0 in ((1.0, 0.0), (0.0, 1.0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", odekit.StiffnessWarning)      # c = 0: the undamped theory's
            sol = solve(SecondOrderProblem(lambda t, x, v: -x - c * v, (0.0, h), [x0], [v0]), name, h=h,
                        backend="python")
        columns.append([sol.x[-1, 0], sol.v[-1, 0]])
    return max(abs(np.linalg.eigvals(np.array(columns).T)))


@pytest.mark.parametrize("name", ["velocity_verlet", "position_verlet"])
def test_verlet_with_implicit_kicks_is_stable_below_h_omega_2_at_any_drag(name):
    for c in (0.1, 1.0, 10.0, 100.0):
        assert spectral_radius(name, 1.99, c) <= 1.0
    assert spectral_radius(name, 2.01, 0.0) > 1.0


BACKWARD = [m for m in IMPLICIT if min(m.coefficients.kick_parts()[1]) < 0]


@pytest.mark.parametrize("method", BACKWARD, ids=lambda m: m.name)
def test_a_kick_backwards_in_time_amplifies_near_the_drag_that_makes_it_singular(method):
    """The docs' warning: an implicit part beta < 0 makes 1 + beta h c vanish at h c = 1/|beta|."""
    assert {m.name for m in BACKWARD} == {"forest_ruth", "pefrl", "yoshida6"}
    beta, c = min(method.coefficients.kick_parts()[1]), 10.0
    assert spectral_radius(method, 0.99 / (-beta * c), c) > 1.2
    assert spectral_radius(method, 0.5 / (-beta * c), c) <= 1.0
    assert f"singular at h c = {-1 / beta:.3g}" in method.markdown()


def projectile_jacobians(t, x, v, k):
    """(da/dx, da/dv) of the projectile: da/dv = -k (|v| I + v v^T / |v|)."""
    speed = math.sqrt(v[0] * v[0] + v[1] * v[1])
    a_v = -k * (speed * np.eye(2) + np.outer(v, v) / speed)
    return np.zeros((2, 2)), a_v


def test_newton_uses_the_problems_jac_for_da_dv():
    """With jac, Newton's da/dv costs no evaluation (without it, two per Jacobian): fewer evaluations,
    the same Jacobians, and the same solution to round-off."""
    options = dict(h=0.2, backend="python")          # h k |v| ~ 0.3: Newton at every implicit kick
    differenced = solve(PROBLEMS["quadratic_drag"], "forest_ruth", **options)
    drag = PROBLEMS["quadratic_drag"]
    given = solve(SecondOrderProblem(projectile, drag.t_span, drag.x0, drag.v0, args=drag.args,
                                     jac=projectile_jacobians), "forest_ruth", **options)
    assert given.success and given.stats.njev == differenced.stats.njev > 0
    assert given.stats.nfev == differenced.stats.nfev - 2 * differenced.stats.njev
    np.testing.assert_allclose(given.y, differenced.y, rtol=0, atol=1e-14)


def test_a_jac_of_the_wrong_shape_is_refused_naming_it():
    drag = PROBLEMS["quadratic_drag"]
    prob = SecondOrderProblem(projectile, drag.t_span, drag.x0, drag.v0, args=drag.args,
                              jac=lambda t, x, v, k: np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"jac returned \(2, 2\) at t=0.0; expected a pair \(A_x, A_v\) "
                                         r"of \(2, 2\) matrices"):
        solve(prob, "velocity_verlet", h=0.1, backend="python")


def test_the_problems_jac_gives_the_same_numbers_on_both_backends():
    drag = PROBLEMS["quadratic_drag"]
    prob = SecondOrderProblem(projectile, drag.t_span, drag.x0, drag.v0, args=drag.args, jac=projectile_jacobians)
    a, b = (solve(prob, "forest_ruth", h=0.2, backend=backend) for backend in ("numba", "python"))
    assert a.backend == "numba" and a.success and a.stats.njev > 0
    assert np.array_equal(a.y, b.y) and a.stats == b.stats


def test_an_ensemble_runs_implicit_kicks_as_solve_does():
    """Each trajectory its own mu (Newton at mu = 30, the fixed point at 0.5), each bitwise its own solve."""
    mus = (0.5, 1.0, 30.0)
    prob = SecondOrderProblem(van_der_pol, (0.0, 2.0), [2.0], [0.0], args=(1.0,))
    result = odekit.ensemble(prob, "forest_ruth", args=[(mu,) for mu in mus], h=0.01, backend="python")
    for i, mu in enumerate(mus):
        alone = solve(SecondOrderProblem(van_der_pol, (0.0, 2.0), [2.0], [0.0], args=(mu,)), "forest_ruth", h=0.01,
                      backend="python")
        assert np.array_equal(np.asarray(result.y)[i], alone.y[-1])
