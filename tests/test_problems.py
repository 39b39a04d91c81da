"""The problem zoo: every exact solution solves its ODE, every invariant is kept.

Three kinds of checks, each able to fail:

* **Residual** -- a central difference of ``exact(t)`` must match the right-hand
  side at ``exact(t)``.  With step ``d = 1e-4 tau`` (``tau`` the fastest time
  scale of the case) the difference has truncation error ``d^2 |y'''| / 6``,
  about ``2e-9 |f|`` when derivatives grow by ``1/tau`` per order, and
  round-off ``eps |y| / d`` ~ ``2e-12 |f|``; the bound ``1e-6 max|f|`` leaves a
  margin of 500.  The same check rejects the exact solution run on a clock
  0.1 % fast (residual ~ ``1e-3 |f|``).
* **Invariants** -- a tight reference solve (dp54, rtol 1e-11) has a local
  error ~1e-11 per step, so over at most a few thousand steps an invariant
  may drift by ~1e-8 of its size; the bound is 1e-7.  Explicit Euler with a
  few thousand steps, and a deliberately wrong invariant, exceed it by orders
  of magnitude.
* **Facts** from the literature: Arenstorf's orbit closes after its period,
  Robertson's mass stays 1 and its solution at t = 40 is Hindmarsh's, HIRES
  reaches the Test Set's reference solution, the pendulum's period is ``4 K(k) / w``, Kepler's Runge--Lenz vector gives
  ``e``, the outer planets' data give their known orbits.

Everything runs on the Python backend except the checks that the right-hand
sides compile with Numba.
"""

import math
import warnings

import numpy as np
import pytest
from scipy.special import ellipk

import odekit
from odekit import problems
from odekit.problems import PROBLEMS, problem

TIGHT = dict(rtol=1e-11, atol=1e-13, backend="python")
RESIDUAL_BOUND = 1e-6
DRIFT_BOUND = 1e-7


# --- helpers -----------------------------------------------------------------------------

def exact_state(prob, t):
    """``exact(t)`` as one flat vector (``[x, v]`` for second-order problems)."""
    value = prob.exact(t)
    if prob.second_order:
        return np.concatenate([np.ravel(value[0]), np.ravel(value[1])])
    return np.ravel(np.asarray(value))


def rhs(prob, t, u):
    """The right-hand side at the flat state ``u`` (``[v, a]`` for second order)."""
    if prob.second_order:
        n = u.size // 2
        x, v = u[:n].reshape(prob.shape), u[n:].reshape(prob.shape)
        return np.concatenate([u[n:], np.ravel(prob.acceleration(t, x, v))])    # with v x b, if any
    return np.ravel(prob.fun(t, u.reshape(prob.shape), *prob.args))


def residual(prob, tau, exact=None):
    """Largest ``|central difference of exact - f(exact)|`` over the span, relative to ``max |f|``."""
    exact = exact or prob.exact
    shown = type("Shown", (), {"exact": staticmethod(exact), "second_order": prob.second_order})
    d = 1e-4 * tau
    t0, t1 = prob.t_span
    worst = scale = 0.0
    for t in t0 + (t1 - t0) * np.array([0.05, 0.25, 0.5, 0.75, 1.0]):
        diff = (exact_state(shown, t + d) - exact_state(shown, t - d)) / (2 * d)
        f = rhs(prob, t, exact_state(shown, t))
        worst = max(worst, float(np.max(np.abs(diff - f))))
        scale = max(scale, float(np.max(np.abs(f))))
    return worst / scale


def drift(values, scale=None):
    values = np.asarray(values, dtype=float)
    return float(np.max(np.abs(values - values[0]))) / (scale or abs(values[0]))


# --- the registry ----------------------------------------------------------------------

EXPECTED = {"decay", "bead_on_rod", "bead_on_wire", "rotation", "kepler", "pendulum",
            "harmonic_oscillator", "bouncing_ball", "arenstorf", "van_der_pol", "lorenz", "brusselator",
            "robertson", "hires", "henon_heiles", "outer_solar_system", "mass_spring_chain", "cloth",
            "charged_particle", "magnetic_bottle"}


def test_every_problem_is_registered_builds_by_name_and_is_documented():
    assert set(PROBLEMS) == EXPECTED
    for name, make in PROBLEMS.items():
        prob = problem(name)
        assert isinstance(prob, (odekit.ODEProblem, odekit.SecondOrderProblem))
        assert prob.name == name
        doc = make.__doc__
        for section in ("Parameters", "Notes", "Reference"):
            assert section in doc, (name, section)
        assert ("exact" in doc) and (not prob.invariants or "nvariant" in doc), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_problem_declared_autonomous_does_not_depend_on_t(name):
    # Rosenbrock methods drop df/dt on the declaration's word: a time-dependent right-hand
    # side declared autonomous would lose them their order without a sound
    prob = problem(name)
    assert prob.autonomous
    rng = np.random.default_rng(7)
    t0 = prob.t_span[0]
    if prob.second_order:
        x, v = (s * (1 + 0.1 * rng.standard_normal(s.shape)) for s in (prob.x0, prob.v0))
        values = [prob.accel(t, x, v, *prob.args) for t in (t0, t0 + 0.37, t0 - 5.0)]
    else:
        y = prob.y0 * (1 + 0.1 * rng.standard_normal(prob.y0.shape))
        values = [prob.fun(t, y, *prob.args) for t in (t0, t0 + 0.37, t0 - 5.0)]
    for other in values[1:]:
        np.testing.assert_array_equal(other, values[0])


def test_problem_passes_parameters_and_accepts_the_command_lines_floats():
    assert problem("kepler", e=0.9).x0[0] == pytest.approx(0.1)
    assert problem("mass_spring_chain", n=7.0).shape == (7,)
    assert problem("pendulum", t_end=3.0).t_span == (0.0, 3.0)


def test_unknown_problem_names_the_closest():
    with pytest.raises(ValueError, match=r"unknown problem 'keplr'; closest: kepler.*Known: decay"):
        problem("keplr")
    with pytest.raises(TypeError, match="unexpected keyword"):
        problem("lorenz", e=0.5)


# --- exact solutions: they solve the ODE -------------------------------------------------

# (name, parameters, fastest time scale)
EXACT_CASES = [
    ("decay", {}, 1.0),
    ("decay", {"lam": -1 + 4j, "y0": [1.0, 2 - 1j]}, 0.25),
    ("decay", {"lam": 3j, "t_end": 2.0}, 0.3),
    ("bead_on_rod", {}, 0.5),
    ("bead_on_rod", {"tau": 0.05, "x0": -1.0, "v0": 10.0}, 0.05),
    ("bead_on_wire", {}, 1e-3),
    ("rotation", {"y0": (0.3, -2.0)}, 1.0),
    ("kepler", {}, 0.3),
    ("kepler", {"e": 0.0, "orbits": 0.7}, 1.0),
    ("kepler", {"e": 0.9, "mu": 2.0}, 0.015),
    ("pendulum", {}, 0.3),
    ("pendulum", {"theta0": -1.0, "omega0": 2.0}, 0.3),
    ("pendulum", {"theta0": 0.3, "omega0": -7.0}, 0.1),                    # over the top
    ("pendulum", {"theta0": 7.0, "omega0": 6.5, "g": 1.0, "L": 2.0}, 0.3),  # over the top, unwrapped
    ("harmonic_oscillator", {}, 1.0),
    ("harmonic_oscillator", {"omega": 3.0, "zeta": 0.2, "v0": 1.0}, 0.3),
    ("harmonic_oscillator", {"omega": 2.0, "zeta": 1.0}, 0.5),               # critically damped
    ("harmonic_oscillator", {"omega": 2.0, "zeta": 3.0, "x0": -1.0, "v0": 4.0}, 0.08),  # over-damped
    ("mass_spring_chain", {}, 0.5),
    ("mass_spring_chain", {"n": 3, "k": 4.0, "mass": 0.5, "x0": [0.1, -0.2, 0.3], "v0": [1.0, 0.0, -1.0]}, 0.2),
    # between bounces; no sample point lies within the difference's step of a landing
    ("bouncing_ball", {}, 0.1),
    ("bouncing_ball", {"e": 1.0, "g": 1.62, "h0": 0.5, "t_end": 7.3}, 0.1),
    ("bouncing_ball", {"e": 0.5, "t_end": 3.3}, 0.01),                         # at rest from t = 4.28
    ("charged_particle", {}, 1.0),
    ("charged_particle", {"b": (0.3, -0.4, 1.2), "e": (0.2, 0.1, -0.3), "v0": (0.5, 0.8, -0.2)}, 0.5),
]
CASE_IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(EXACT_CASES)]


def test_every_problem_with_an_exact_solution_is_checked():
    with_exact = {name for name in PROBLEMS if problem(name).exact is not None}
    assert with_exact == {name for name, _, _ in EXACT_CASES}
    assert with_exact == EXPECTED - {"arenstorf", "van_der_pol", "lorenz", "brusselator", "robertson",
                                     "hires", "henon_heiles", "outer_solar_system", "cloth", "magnetic_bottle"}


@pytest.mark.parametrize("name, params, tau", EXACT_CASES, ids=CASE_IDS)
def test_exact_solution_satisfies_the_ode(name, params, tau):
    prob = problem(name, **params)
    assert residual(prob, tau) < RESIDUAL_BOUND


@pytest.mark.parametrize("name, params, tau", EXACT_CASES, ids=CASE_IDS)
def test_residual_check_rejects_a_clock_running_fast(name, params, tau):
    prob = problem(name, **params)
    assert residual(prob, tau, exact=lambda t: prob.exact(1.001 * t)) > 100 * RESIDUAL_BOUND


@pytest.mark.parametrize("name, params, tau", EXACT_CASES, ids=CASE_IDS)
def test_exact_solution_starts_at_the_initial_state(name, params, tau):
    prob = problem(name, **params)
    start = exact_state(prob, prob.t_span[0])
    assert start.dtype.kind == prob.initial_state().dtype.kind
    np.testing.assert_allclose(start, prob.initial_state(), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name, params", [("mass_spring_chain", {}), ("pendulum", {"theta0": 3.0, "omega0": 0.1}),
                                          ("kepler", {"e": 0.7}), ("decay", {"lam": -0.5 + 2j})])
def test_exact_solution_matches_a_tight_numerical_solve(name, params):
    prob = problem(name, **params)
    sol = odekit.solve(prob, "dp54", **TIGHT)
    assert sol.success
    assert sol.error() < 1e-8 * max(1.0, float(np.max(np.abs(sol.y))))


# --- invariants: kept by a tight solve, not by Euler ----------------------------------------

SHORTER = {"outer_solar_system": {"t_end": 20_000.0},                # ~4.6 orbits of Jupiter
           "cloth": {"n": 3, "damping": 0.0, "k_stretch": 100.0, "k_shear": 50.0, "k_bend": 2.0,
                     "t_end": 0.6}}                                  # undamped and soft: energy kept, few steps
SOLVER = {"robertson": dict(method="implicit_midpoint", adaptive="doubling", rtol=1e-6, atol=1e-12),
          "hires": dict(method="radau5", rtol=1e-10, atol=1e-14)}           # stiff: dp54 needs 16,000 steps
ANGLE_SCALE = {("kepler", "perihelion_angle"): math.pi}               # starts at 0: absolute, in half-turns
LINEAR = {("bead_on_rod", "rest_position"), ("robertson", "mass"), ("outer_solar_system", "momentum"),
          ("hires", "y7_plus_y8")}
# (t_end, steps) for Euler on the stiff problems, inside its stability limit (HIRES: |lambda| <= 212)
EULER_SPAN = {"robertson": (0.3, 3000), "hires": (5.0, 1000)}
INVARIANT_CASES = [(name, inv) for name in PROBLEMS for inv in problem(name).invariants]
# adiabatic invariants: the true flow keeps them only on average, within this fraction
ADIABATIC = {("magnetic_bottle", "magnetic_moment"): 0.12}
KEPT_CASES = [case for case in INVARIANT_CASES if case not in ADIABATIC]


def _solve_tight(name):
    prob = problem(name, **SHORTER.get(name, {}))
    options = SOLVER.get(name, dict(method="dp54", **TIGHT))
    sol = odekit.solve(prob, **{"backend": "python", **options})
    assert sol.success, sol.message
    return sol


_TIGHT_SOLUTIONS = {}


def tight_solution(name):
    if name not in _TIGHT_SOLUTIONS:
        _TIGHT_SOLUTIONS[name] = _solve_tight(name)
    return _TIGHT_SOLUTIONS[name]


@pytest.mark.parametrize("name, inv", KEPT_CASES, ids=[f"{n}-{i}" for n, i in KEPT_CASES])
def test_invariant_is_kept_by_a_tight_solve(name, inv):
    values = tight_solution(name).invariants(inv)[inv]
    assert drift(values, ANGLE_SCALE.get((name, inv))) < DRIFT_BOUND


@pytest.mark.parametrize("name, inv", list(ADIABATIC), ids=[f"{n}-{i}" for n, i in ADIABATIC])
def test_an_adiabatic_invariant_oscillates_within_its_bound(name, inv):
    values = tight_solution(name).invariants(inv)[inv]
    assert 0.1 * ADIABATIC[name, inv] < drift(values) < ADIABATIC[name, inv]      # it does oscillate


@pytest.mark.parametrize("name, inv", [c for c in INVARIANT_CASES if c not in LINEAR],
                         ids=[f"{n}-{i}" for n, i in INVARIANT_CASES if (n, i) not in LINEAR])
def test_explicit_euler_does_not_keep_a_nonlinear_invariant(name, inv):
    prob = problem(name, **SHORTER.get(name, {}))
    # coarser, henon_heiles leaves the well, and the particle the bottle
    steps = {"henon_heiles": 20_000, "magnetic_bottle": 20_000}.get(name, 2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", odekit.StiffnessWarning)     # arenstorf: Euler is warned about
        sol = odekit.solve(prob, "euler", h=(prob.t_span[1] - prob.t_span[0]) / steps, backend="python")
        values = sol.invariants(inv)[inv]
    assert sol.success
    assert drift(values, ANGLE_SCALE.get((name, inv))) > 1e4 * DRIFT_BOUND


def test_linear_invariants_are_kept_even_by_euler():
    """Every Runge-Kutta method keeps linear invariants: the exemption above is a fact, not a dodge."""
    for name, inv in LINEAR:
        t_end, steps = EULER_SPAN.get(name, (None, 500))
        prob = problem(name, **SHORTER.get(name, {}), **({"t_end": t_end} if t_end else {}))
        h = (prob.t_span[1] - prob.t_span[0]) / steps
        sol = odekit.solve(prob, "euler", h=h, backend="python")
        assert sol.success
        assert drift(sol.invariants(inv)[inv]) < 1e-12


def test_a_wrong_invariant_is_not_kept():
    """Kepler's energy with the potential 1 % too strong, under the same tight solve."""
    prob = problems.kepler(e=0.5)
    sol = odekit.solve(prob, "dp54", **TIGHT)
    wrong = [0.5 * float(v @ v) - 1.01 / math.hypot(*x) for x, v in zip(sol.x, sol.v)]
    assert drift(wrong) > 1e-3
    right = sol.invariants("energy")["energy"]
    assert drift(right) < DRIFT_BOUND


def test_damped_problems_lose_energy_monotonically():
    for prob in (problems.pendulum(B=0.5), problems.harmonic_oscillator(zeta=0.1, t_end=20.0)):
        assert prob.velocity_dependent or prob.damping is not None     # the pendulum declares damping=B (#18)
        energy = odekit.solve(prob, "dp54", **TIGHT).invariants("energy")["energy"]
        assert np.all(np.diff(energy) < 0)
        assert energy[-1] < 0.5 * energy[0]
    assert problems.pendulum(B=0.5).exact is None


# --- facts about particular problems ----------------------------------------------------

def test_arenstorf_orbit_closes_after_one_period():
    prob = problems.arenstorf()
    assert prob.t_span == (0.0, problems.ARENSTORF_PERIOD)
    sol = odekit.solve(prob, "dp54", t_eval=[prob.t_span[1] / 2, prob.t_span[1]], **TIGHT)
    start = prob.initial_state()
    # rtol 1e-11 over ~1800 steps, amplified by the close pass at the Earth: 6e-8 measured
    assert np.max(np.abs(sol.y[-1].ravel() - start)) < 1e-6
    assert np.max(np.abs(sol.y[0].ravel() - start)) > 1.0            # half-way it is elsewhere
    assert prob.velocity_dependent                                    # Coriolis forces


def test_arenstorf_orbit_does_not_close_with_a_perturbed_start():
    prob = problems.arenstorf()
    bent = odekit.SecondOrderProblem(prob.accel, prob.t_span, prob.x0, prob.v0 * (1 + 1e-4), args=prob.args)
    end = odekit.solve(bent, "dp54", **TIGHT).y[-1].ravel()
    assert np.max(np.abs(end - prob.initial_state())) > 1e-3


def test_robertson_keeps_its_mass_and_reaches_hindmarshs_values():
    prob = problems.robertson()
    for method in ("implicit_midpoint", "linearized_euler"):
        sol = odekit.solve(prob, method, adaptive="doubling", rtol=1e-6, atol=1e-12, backend="python")
        assert sol.success
        np.testing.assert_allclose(sol.invariants("mass")["mass"], 1.0, rtol=0, atol=1e-13)
    # DLSODE's demonstration output at t = 40, 7 digits; implicit midpoint at rtol 1e-6 gives ~1e-7
    last = odekit.solve(prob, "implicit_midpoint", adaptive="doubling", rtol=1e-6, atol=1e-12,
                        backend="python").y[-1]
    np.testing.assert_allclose(last, [0.7158271, 9.185535e-6, 0.2841637], rtol=1e-5)


def test_hires_reference_is_the_test_sets_and_scipys_radau_agrees():
    """The published constants against an independent solver: SciPy's Radau at rtol 1e-12 (3e-13 measured)."""
    from scipy.integrate import solve_ivp

    prob = problems.hires()
    assert prob.t_span == (0.0, problems.HIRES_T_END) == (0.0, 321.8122)
    np.testing.assert_array_equal(prob.y0, [1.0, 0, 0, 0, 0, 0, 0, 0.0057])
    ref = np.array(problems.HIRES_REFERENCE)
    assert ref.shape == (8,) and ref[0] == 0.7371312573325668e-3 and ref[7] == 0.2850001604814231e-2
    assert ref[6] + ref[7] == pytest.approx(0.0057, rel=1e-15)           # the invariant, at the end
    scipy_sol = solve_ivp(prob.fun, prob.t_span, prob.y0, method="Radau", rtol=1e-12, atol=1e-16, jac=prob.jac)
    assert scipy_sol.success
    np.testing.assert_allclose(scipy_sol.y[:, -1], ref, rtol=1e-11, atol=0)


def test_hires_radau5_reaches_the_reference_solution():
    """A tight radau5 solve (5e-11 relative measured) against the Test Set's reference, component by component.

    A rate constant changed in its third digit (280 -> 281) moves the end state
    by about 1e-3 relative, so the bound 1e-7 tells the right system from a near miss.
    """
    prob = problems.hires()
    sol = odekit.solve(prob, "radau5", rtol=1e-9, atol=1e-13, backend="python")
    assert sol.success, sol.message
    assert sol.t[-1] == problems.HIRES_T_END
    ref = np.array(problems.HIRES_REFERENCE)
    np.testing.assert_allclose(sol.y[-1], ref, rtol=1e-7, atol=0)
    assert sol.stats.njev > 0 and sol.stats.nlu > 0                  # the analytic Jacobian was used

    def perturbed(t, y):
        f = problems._hires_rhs(t, y)
        extra = 1.0 * y[5] * y[7]                                    # 281 instead of 280
        f[5] -= extra
        f[6] += extra
        f[7] -= extra
        return f

    near_miss = odekit.ODEProblem(perturbed, prob.t_span, prob.y0, name="hires_281")
    wrong = odekit.solve(near_miss, "radau5", rtol=1e-9, atol=1e-13, backend="python").y[-1]
    assert np.max(np.abs(wrong - ref) / ref) > 1e3 * 1e-7


def test_hires_jacobian_has_the_pattern_of_its_reactions():
    """Beyond matching differences at random points: the zero pattern, and exact entries at y0."""
    prob = problems.hires()
    pattern = np.zeros((8, 8), dtype=bool)
    for i, columns in enumerate([(0, 1, 2), (0, 1), (2, 3, 4), (1, 2, 3), (4, 5, 6),
                                 (3, 4, 5, 6, 7), (5, 6, 7), (5, 6, 7)]):
        pattern[i, list(columns)] = True
    J = prob.jac(0.0, prob.y0 + 0.1)
    np.testing.assert_array_equal(J != 0, pattern)
    np.testing.assert_array_equal(J[6] + J[7], np.zeros(8))              # y7 + y8 is kept
    J0 = prob.jac(0.0, prob.y0)                                          # y6 = 0: y8's column vanishes
    assert J0[5, 5] == pytest.approx(-280 * 0.0057 - 0.43, rel=1e-15)
    assert J0[6, 5] == -J0[7, 5] == pytest.approx(280 * 0.0057, rel=1e-15)
    assert not np.any(J0[:, 7])


# first order; the force Jacobians of cloth are checked in test_cloth.py
@pytest.mark.parametrize("name", [n for n in PROBLEMS if callable(problem(n).jac) and not problem(n).second_order])
def test_analytic_jacobian_matches_central_differences(name):
    prob = problem(name)
    rng = np.random.default_rng(7)
    for _ in range(3):
        y = prob.y0 + rng.uniform(0.5, 2.0, prob.y0.shape).astype(prob.y0.dtype)
        J = np.asarray(prob.jac(0.3, y, *prob.args))
        numeric = np.empty_like(J)
        for j in range(y.size):
            d = 1e-6 * max(1.0, abs(y[j]))
            e = np.zeros_like(y)
            e[j] = d
            numeric[:, j] = (prob.fun(0.3, y + e, *prob.args) - prob.fun(0.3, y - e, *prob.args)) / (2 * d)
        # polynomial right-hand sides: the difference is exact up to round-off of |f| / d ~ 1e-10 |J|
        np.testing.assert_allclose(J, numeric, rtol=1e-7, atol=1e-7 * float(np.max(np.abs(J))))


def test_pendulum_period_is_4K_over_w():
    g, L, theta0 = 9.8, 1.0, 2.0
    w = math.sqrt(g / L)
    k = math.sin(theta0 / 2)
    T = 4 * float(ellipk(k * k)) / w                                  # scipy's ellipk takes m = k^2
    assert problems.pendulum_period(g, L, theta0) == pytest.approx(T, rel=1e-15)
    assert T == pytest.approx(1.3289 * 2 * math.pi / w, rel=1e-4)     # 33 % longer than small swings
    prob = problems.pendulum(g=g, L=L, theta0=theta0)
    np.testing.assert_allclose(np.ravel(prob.exact(T)), [theta0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.ravel(prob.exact(T / 2)), [-theta0, 0.0], atol=1e-12)
    assert float(prob.exact(T / 4)[0]) == pytest.approx(0.0, abs=1e-12)
    assert abs(float(prob.exact(T / 4)[1])) == pytest.approx(2 * k * w, rel=1e-12)   # max speed at the bottom
    # and the ODE itself comes back after T, not before
    sol = odekit.solve(problems.pendulum(g=g, L=L, theta0=theta0, t_end=T), "dp54",
                       t_eval=[0.9 * T, T], **TIGHT)
    assert abs(sol.y[-1][0] - theta0) < 1e-8 and abs(sol.y[-1][1]) < 1e-7
    assert abs(sol.y[0][0] - theta0) > 0.1


def test_pendulum_period_limits():
    w = math.sqrt(9.8)
    assert problems.pendulum_period(theta0=1e-5) == pytest.approx(2 * math.pi / w, rel=1e-10)
    assert problems.pendulum_period(theta0=math.pi) == math.inf
    # over the top, one full turn: exact(T) = theta0 + 2 pi
    T = problems.pendulum_period(theta0=0.3, omega0=7.0)
    prob = problems.pendulum(theta0=0.3, omega0=7.0)
    np.testing.assert_allclose(np.ravel(prob.exact(T)), [0.3 + 2 * math.pi, 7.0], atol=1e-11)


@pytest.mark.parametrize("e", [0.0, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("mu", [1.0, 2.5])
def test_kepler_invariants_along_the_exact_solution(e, mu):
    prob = problems.kepler(e=e, mu=mu)
    inv = prob.invariants
    for t in np.linspace(0.0, prob.t_span[1], 13):
        x, v = prob.exact(t)
        assert inv["eccentricity"](t, x, v) == pytest.approx(e, abs=1e-13)
        assert inv["energy"](t, x, v) == pytest.approx(-mu / 2, rel=1e-13)
        assert inv["angular_momentum"](t, x, v) == pytest.approx(math.sqrt(mu * (1 - e * e)), rel=1e-13)
        if e > 0:
            assert inv["perihelion_angle"](t, x, v) == pytest.approx(0.0, abs=1e-12)
    x0, v0 = prob.x0, prob.v0
    np.testing.assert_allclose(problems.runge_lenz(x0, v0, mu), [mu * e, 0.0], atol=1e-14)


def test_kepler_perihelion_angle_sees_a_rotated_orbit():
    """The invariant measures a direction: rotating the state by 0.4 rad rotates it by 0.4."""
    prob = problems.kepler(e=0.6)
    c, s = math.cos(0.4), math.sin(0.4)
    R = np.array([[c, -s], [s, c]])
    x, v = prob.exact(1.234)
    assert prob.invariants["perihelion_angle"](0.0, R @ x, R @ v) == pytest.approx(0.4, abs=1e-13)
    assert prob.invariants["eccentricity"](0.0, R @ x, R @ v) == pytest.approx(0.6, abs=1e-13)


def test_outer_solar_system_data_give_the_planets_known_orbits():
    prob = problems.outer_solar_system()
    assert prob.shape == (6, 3) and prob.x0.shape == prob.v0.shape == (6, 3)
    assert not prob.velocity_dependent
    G, m = problems.OUTER_SOLAR_SYSTEM_G, np.array(problems.OUTER_SOLAR_SYSTEM_MASSES)
    # osculating heliocentric semi-major axes (AU): a typo in the table moves one of them
    known = {"Jupiter": 5.20, "Saturn": 9.54, "Uranus": 19.2, "Neptune": 30.1, "Pluto": 39.5}
    for i, body in enumerate(problems.OUTER_SOLAR_SYSTEM_BODIES[1:], start=1):
        r, v2 = np.linalg.norm(prob.x0[i]), prob.v0[i] @ prob.v0[i]
        a = 1 / (2 / r - v2 / (G * (m[0] + m[i])))
        assert a == pytest.approx(known[body], rel=0.015), body
    # energy by a separate double loop over pairs
    energy = sum(0.5 * m[i] * (prob.v0[i] @ prob.v0[i]) for i in range(6))
    energy -= sum(G * m[i] * m[j] / np.linalg.norm(prob.x0[i] - prob.x0[j]) for i in range(6) for j in range(i))
    assert prob.invariants["energy"](0.0, prob.x0, prob.v0) == pytest.approx(energy, rel=1e-14)
    assert energy == pytest.approx(-3.2154532e-08, rel=1e-7)
    momentum = np.linalg.norm(m @ prob.v0)
    assert prob.invariants["momentum"](0.0, prob.x0, prob.v0) == pytest.approx(momentum, rel=1e-14)


def test_outer_solar_system_solution_keeps_its_shape_and_its_energy():
    sol = tight_solution("outer_solar_system")
    assert sol.y.shape[1:] == (2, 6, 3) and sol.x.shape[1:] == (6, 3)
    energy = sol.invariants("energy")["energy"]
    assert energy[0] == pytest.approx(-3.2154532e-08, rel=1e-7)
    assert drift(energy) < DRIFT_BOUND
    assert sol.t[-1] / 4332.6 > 4                                     # several orbits of Jupiter


def test_nbody_force_sums_each_pair_once_in_order_on_both_backends():
    """The zoo's N-body force is Newton's gravity summed pair by pair, ``i < j`` in order, bit for bit
    (compiled too): its loop may be made faster, but every solve of an N-body problem keeps its numbers."""
    import numba

    rng = np.random.default_rng(7)
    x, gm = rng.normal(size=(9, 3)), rng.uniform(0.1, 1.0, size=9)
    expected = np.zeros_like(x)
    for i in range(9):
        for j in range(i + 1, 9):
            d = x[j] - x[i]
            r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            s = 1.0 / (r2 * math.sqrt(r2))
            expected[i] += gm[j] * s * d
            expected[j] -= gm[i] * s * d
    accel = problems.outer_solar_system().accel
    assert np.array_equal(accel(0.0, x, x, gm), expected)
    assert np.array_equal(numba.njit(accel)(0.0, x, x, gm), expected)


def test_bead_on_rod_comes_to_rest_at_x0_plus_v0_tau():
    prob = problems.bead_on_rod(tau=0.5, x0=2.0, v0=3.0)
    assert prob.t_span == (0.0, 2.5) and prob.velocity_dependent
    x, v = prob.exact(50.0)
    assert float(x) == pytest.approx(2.0 + 3.0 * 0.5, abs=1e-15) and abs(float(v)) < 1e-20
    for t in (0.0, 0.3, 7.0):
        assert prob.invariants["rest_position"](t, *prob.exact(t)) == pytest.approx(3.5, abs=1e-14)


def test_mass_spring_chain_modes_are_the_eigenvectors_of_the_stiffness_matrix():
    n, k, mass = 6, 2.0, 0.5
    K = k / mass * (2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1))
    omega, shapes = problems.chain_modes(n, k, mass)
    np.testing.assert_allclose(omega ** 2, np.linalg.eigvalsh(K), rtol=1e-13)
    np.testing.assert_allclose(K @ shapes, shapes * omega ** 2, atol=1e-13)
    np.testing.assert_allclose(shapes.T @ shapes, np.eye(n), atol=1e-14)


def test_mass_spring_chain_exact_solution_matches_a_tight_solve_with_random_data():
    rng = np.random.default_rng(3)
    prob = problems.mass_spring_chain(n=5, k=3.0, mass=0.7, x0=rng.normal(size=5), v0=rng.normal(size=5),
                                      t_end=15.0)
    sol = odekit.solve(prob, "dp54", **TIGHT)
    assert sol.error() < 1e-8
    assert drift(sol.invariants("energy")["energy"]) < DRIFT_BOUND


def test_decay_is_complex_when_lambda_or_y0_is_and_stays_complex():
    assert problems.decay(lam=-1 + 2j).y0.dtype == np.complex128
    assert problems.decay(lam=-1.0, y0=1j).y0.dtype == np.complex128
    assert problems.decay(lam=np.complex64(-1 + 1j)).y0.dtype == np.complex128
    assert problems.decay().y0.dtype == np.float64
    prob = problems.decay(lam=-0.5 + 3j, y0=[1.0, 1j])
    for method in ("dp54", "backward_euler", "linearized_euler"):
        sol = odekit.solve(prob, method, h=1e-3, backend="python")
        assert sol.y.dtype == np.complex128
        assert sol.error() < 0.01                                     # first order at worst: ~ h |lam|^2


def test_complex_decay_on_the_compiled_backend_matches_python():
    prob = problems.decay(lam=-0.5 + 3j, y0=[1.0, 1j])
    a = odekit.solve(prob, "rk4", h=0.01, backend="numba")
    b = odekit.solve(prob, "rk4", h=0.01, backend="python")
    assert a.backend == "numba" and a.y.dtype == np.complex128
    np.testing.assert_allclose(a.y, b.y, rtol=1e-13, atol=0)
    assert a.error() < 1e-6


# --- compiled right-hand sides ------------------------------------------------------------

def _call_args(prob):
    t = 0.37
    if prob.second_order:
        x, v = prob.x0 + 0.01, prob.v0 - 0.02
        if prob.shape == ():
            x, v = float(x), float(v)
        return prob.accel, (t, x, v, *prob.args)
    return prob.fun, (t, prob.y0 * 0.9, *prob.args)


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_right_hand_sides_compile_in_nopython_mode_and_agree(name):
    """odekit's ``auto`` backend compiles these; a fallback to Python would be silent speed lost."""
    import numba

    prob = problem(name)
    fun, args = _call_args(prob)
    assert fun.__module__.startswith("odekit.problems.") and fun.__closure__ is None   # shared by all instances
    np.testing.assert_allclose(numba.njit(fun)(*args), fun(*args), rtol=1e-14, atol=1e-300)
    if callable(prob.jac):
        assert prob.jac.__closure__ is None
    if callable(prob.jac) and not prob.second_order:     # cloth's sparse Jacobians are SciPy's, not compiled
        y = prob.y0 * 0.9
        np.testing.assert_allclose(numba.njit(prob.jac)(0.37, y, *prob.args), prob.jac(0.37, y, *prob.args),
                                   rtol=1e-14)


def test_instances_share_their_right_hand_side():
    assert problems.pendulum(theta0=1.0).accel is problems.pendulum(g=1.0, B=0.3).accel
    assert problems.decay(lam=-2.0).jac is problems.decay(lam=3j).jac


def test_auto_backend_runs_a_zoo_problem_compiled():
    with warnings.catch_warnings():
        warnings.simplefilter("error", odekit.BackendFallbackWarning)
        sol = odekit.solve(problems.arenstorf(orbits=0.1), "rk4", h=1e-3, backend="auto")
    assert sol.backend == "numba" and sol.success


# --- parameter validation ------------------------------------------------------------------

BAD = [
    ("kepler", {"e": 1.0}, r"e must be a number with 0 <= e < 1 .*got 1.0"),
    ("kepler", {"e": -0.1}, r"e must be .*got -0.1"),
    ("kepler", {"mu": 0.0}, r"mu must be a finite number > 0, got 0.0"),
    ("kepler", {"orbits": -1}, r"orbits must be a finite number > 0, got -1"),
    ("kepler", {"t_end": 0.0}, r"t_end must be a finite number != 0"),
    ("decay", {"lam": "fast"}, r"lam must be a finite real or complex number, got 'fast'"),
    ("decay", {"lam": complex(math.nan, 1)}, r"lam must be a finite real or complex number, got \(nan\+1j\)"),
    ("bead_on_rod", {"tau": 0.0}, r"tau must be a finite number > 0, got 0.0"),
    ("bead_on_rod", {"v0": math.inf}, r"v0 must be a finite real number, got inf"),
    ("bead_on_wire", {"k": -5.0}, r"k must be a finite number > 0, got -5.0"),
    ("rotation", {"y0": (1.0, 2.0, 3.0)}, r"y0 must be 2 finite real numbers"),
    ("pendulum", {"g": 0.0}, r"g must be a finite number > 0, got 0.0"),
    ("pendulum", {"L": -1.0}, r"L must be a finite number > 0, got -1.0"),
    ("pendulum", {"B": -0.1}, r"B must be a finite number >= 0, got -0.1"),
    ("pendulum", {"theta0": math.nan}, r"theta0 must be a finite real number, got nan"),
    ("harmonic_oscillator", {"omega": 0.0}, r"omega must be a finite number > 0, got 0.0"),
    ("harmonic_oscillator", {"zeta": -1.0}, r"zeta must be a finite number >= 0, got -1.0"),
    ("arenstorf", {"orbits": 0.0}, r"orbits must be a finite number > 0, got 0.0"),
    ("van_der_pol", {"mu": -1.0}, r"mu must be a finite number >= 0, got -1.0"),
    ("lorenz", {"rho": None}, r"rho must be a finite real number, got None"),
    ("lorenz", {"y0": (1.0, 2.0)}, r"y0 must be 3 finite real numbers"),
    ("brusselator", {"A": 0.0}, r"A must be a finite number > 0, got 0.0"),
    ("robertson", {"k2": -3e7}, r"k2 must be a finite number > 0, got -30000000.0"),
    ("hires", {"y0": (1.0, 0.0, 0.0)}, r"y0 must be 8 finite real numbers \(shape \(8,\)\)"),
    ("hires", {"t_end": math.nan}, r"t_end must be a finite number != 0 .*got nan"),
    ("henon_heiles", {"energy": 0.2}, r"energy must be a number with 0 < energy < 1/6 .*got 0.2"),
    ("henon_heiles", {"q2": 1.5}, r"q2 must be a number with -1/2 < q2 < 1 .*got 1.5"),
    ("henon_heiles", {"energy": 0.01, "q2": 0.5}, r"energy=0.01 is below the energy .* of the point q2=0.5"),
    ("outer_solar_system", {"t_end": math.inf}, r"t_end must be a finite number != 0 .*got inf"),
    ("mass_spring_chain", {"n": 0}, r"n must be a whole number >= 1, got 0"),
    ("mass_spring_chain", {"n": 2.5}, r"n must be a whole number >= 1, got 2.5"),
    ("mass_spring_chain", {"mass": 0.0}, r"mass must be a finite number > 0, got 0.0"),
    ("mass_spring_chain", {"n": 3, "x0": [1.0, 2.0]}, r"x0 must be 3 finite real numbers \(shape \(3,\)\)"),
    ("bouncing_ball", {"e": 0.0}, r"e must be a number with 0 < e <= 1 .*got 0.0"),
    ("bouncing_ball", {"e": 1.5}, r"e must be a number with 0 < e <= 1 .*got 1.5"),
    ("bouncing_ball", {"g": -9.81}, r"g must be a finite number > 0, got -9.81"),
    ("bouncing_ball", {"h0": 0.0}, r"h0 must be a finite number > 0, got 0.0"),
]


@pytest.mark.parametrize("name, params, message", BAD, ids=[f"{n}-{'-'.join(p)}" for n, p, _ in BAD])
def test_bad_parameters_get_a_clear_error(name, params, message):
    with pytest.raises(ValueError, match=message):
        problem(name, **params)
