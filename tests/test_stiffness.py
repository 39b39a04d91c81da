"""Stiffness advice: the spectral-radius estimate, the fixed-step warning, and the starving message."""

import math
import sys
import warnings

import numpy as np
import pytest

import odekit
from odekit import StiffnessWarning, problems
from odekit.kernels import layout as L
from odekit.analysis import max_stable_step, oscillator_stability_limit, stiffness

EXPLICIT = [m.name for m in odekit.methods() if m.family == "explicit_rk"]
SPLITTING = [m.name for m in odekit.methods() if m.family == "splitting"]
STIFFNESS = sys.modules["odekit.theory.stiffness"]     # the module (its name is shadowed by the function)


def chain_omega(n, k=1.0, mass=1.0):
    """The fastest mode of the mass-spring chain: 2 sqrt(k/m) sin(n pi / (2(n+1)))."""
    return 2 * math.sqrt(k / mass) * math.sin(n * math.pi / (2 * (n + 1)))


def without_jac(prob):
    return odekit.ODEProblem(prob.fun, prob.t_span, prob.y0, args=prob.args, name=prob.name)


@pytest.fixture
def no_warnings():
    """Fail on any StiffnessWarning inside the block."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)
        yield


# --- the estimate against closed forms ------------------------------------------------

@pytest.mark.parametrize("k", [10.0, 1000.0, 1e6])
@pytest.mark.parametrize("jac", [True, False], ids=["jac", "differences"])
def test_bead_on_wire_has_spectral_radius_k(k, jac):
    """Eigenvalues -1 and -k: both found (n = 2), real; by differences to 1e-6."""
    prob = problems.bead_on_wire(k=k)
    est = stiffness(prob if jac else without_jac(prob))
    assert est.source == ("jac" if jac else "differences")
    assert est.spectral_radius == pytest.approx(k, rel=1e-6)
    assert est.dominant == pytest.approx(-k, rel=1e-6) and est.kind == "real"
    assert sorted(z.real for z in est.eigenvalues) == pytest.approx([-k, -1.0], rel=1e-6)
    assert all(z.imag == 0 for z in est.eigenvalues)


def test_mass_spring_chain_small_is_exact_and_oscillatory():
    """10 masses: the Krylov space is the whole force Jacobian, so omega_max comes out to round-off."""
    n, k, m = 10, 4.0, 2.0
    est = stiffness(problems.mass_spring_chain(n=n, k=k, mass=m))
    assert est.spectral_radius == pytest.approx(chain_omega(n, k, m), rel=1e-9)
    assert est.omega == pytest.approx(chain_omega(n, k, m), rel=1e-9)
    assert est.kind == "oscillatory" and est.dominant.real == 0
    assert est.products == n and est.evaluations == n + 1     # one product per force evaluation (plus f(y0))


@pytest.mark.parametrize("n", [200, 5000])
def test_mass_spring_chain_large_is_within_its_stated_accuracy(n):
    """A dense spectrum: 20 products approach omega_max from below, within 0.2% (measured 0.07-0.08%)."""
    est = stiffness(problems.mass_spring_chain(n=n))
    omega = chain_omega(n)
    assert omega * (1 - 2e-3) <= est.spectral_radius <= omega * (1 + 1e-9)
    assert est.kind == "oscillatory"
    assert est.products == 20 and est.evaluations == 21        # independent of n: no n x n anything
    assert est.converged


def test_velocity_dependent_mechanics_is_estimated_in_first_order_form():
    """Declared velocity-dependent, the chain is estimated as u' = [v, a]: +-i omega, to 0.5%."""
    p = problems.mass_spring_chain(n=50)
    prob = odekit.SecondOrderProblem(p.accel, p.t_span, p.x0, p.v0, args=p.args, velocity_dependent=True)
    est = stiffness(prob)
    assert est.spectral_radius == pytest.approx(chain_omega(50), rel=5e-3)
    assert est.kind == "oscillatory"


def test_drag_limits_symplectic_euler_like_a_real_eigenvalue():
    """x'' = -v / tau: eigenvalues 0 and -1/tau; symplectic Euler's v *= 1 - h/tau needs h <= 2 tau."""
    tau = 0.25
    est = stiffness(problems.bead_on_rod(tau=tau))
    assert est.spectral_radius == pytest.approx(1 / tau, rel=1e-6) and est.kind == "real"
    assert est.limit("symplectic_euler") == pytest.approx(2 * tau, rel=1e-6)
    assert est.limit("euler") == pytest.approx(2 * tau, rel=1e-6)


@pytest.mark.parametrize("y", [None, (0.7158271, 9.185535e-6, 0.2841637)], ids=["t0", "t40"])
def test_robertson_against_numpy_eigenvalues_of_its_jacobian(y):
    """The oracle: numpy's eigenvalues of problems.robertson().jac at the point (fine in a test)."""
    prob = problems.robertson() if y is None else problems.robertson(y0=y)
    exact = np.linalg.eigvals(prob.jac(0.0, prob.y0, *prob.args))
    rho = float(np.max(np.abs(exact)))
    est = stiffness(prob)
    assert est.spectral_radius == pytest.approx(rho, rel=1e-9)
    assert est.dominant == pytest.approx(exact[np.argmax(np.abs(exact))], rel=1e-9)
    if y is not None:
        # by differences: where it is stiff (rho ~ 3.4e3), the dominant eigenvalue to 1e-4
        assert stiffness(without_jac(prob)).spectral_radius == pytest.approx(rho, rel=1e-4)


def test_a_complex_conjugate_pair_is_found_with_its_direction():
    """Lorenz at its start: a pair -6.83 +- 6.83i dominates; plain power iteration would not converge."""
    prob = problems.lorenz()
    exact = np.linalg.eigvals(prob.jac(0.0, prob.y0, *prob.args))
    top = exact[np.argmax(np.abs(exact))]
    for p in (prob, without_jac(prob)):
        est = stiffness(p)
        assert est.kind == "complex"
        assert est.dominant == pytest.approx(complex(top.real, abs(top.imag)), rel=1e-6)


def test_the_estimate_is_taken_where_asked():
    prob = problems.van_der_pol(mu=1000.0)
    y = np.array([0.5, 1.0])
    exact = np.linalg.eigvals(prob.jac(3.0, y, *prob.args))
    est = stiffness(prob, t=3.0, y=y)
    assert est.t == 3.0 and est.spectral_radius == pytest.approx(np.max(np.abs(exact)), rel=1e-9)


# --- limits per method ------------------------------------------------------------------

def test_limits_equal_max_stable_step_of_the_closed_form_spectrum():
    est = stiffness(problems.bead_on_wire(k=1000.0))
    assert set(est.limits) == set(EXPLICIT)                       # no splitting methods for y' = f(y)
    for name in EXPLICIT:
        assert est.limits[name] == pytest.approx(max_stable_step(name, [-1000.0, -1.0]), rel=1e-12), name
    assert est.limit("euler") == pytest.approx(0.002, rel=1e-12)
    assert est.limit("rk45") == est.limits["dp54"]                  # aliases work


def test_oscillatory_limits_are_those_of_the_imaginary_axis_and_of_splitting():
    n = 10
    omega = chain_omega(n)
    est = stiffness(problems.mass_spring_chain(n=n))
    for name in EXPLICIT:
        assert est.limits[name] == pytest.approx(max_stable_step(name, [1j * omega]), rel=1e-9), name
    assert est.limits["euler"] == 0.0 and est.limits["rk4"] == pytest.approx(2 * math.sqrt(2) / omega, rel=1e-9)
    for name in SPLITTING:
        assert est.limits[name] == pytest.approx(oscillator_stability_limit(name) / omega, rel=1e-9), name


def test_a_growing_mode_limits_no_step():
    """The pendulum near its top (theta = 2): eigenvalues +-2.02, a saddle; only -2.02 limits steps."""
    est = stiffness(problems.pendulum())
    g = math.sqrt(9.8 * -math.cos(2.0))
    assert est.kind == "growing" and est.dominant == pytest.approx(g)
    assert est.eigenvalues == pytest.approx((-g,))
    assert est.limit("euler") == pytest.approx(2 / g) and est.omega == 0.0
    assert est.limit("velocity_verlet") == math.inf


def test_the_result_prints_and_converts():
    est = stiffness(problems.bead_on_wire(k=1000.0))
    text = str(est)
    assert "spectral radius 1000" in text and "euler" in text and "0.002" in text
    d = est.as_dict()
    assert d["spectral_radius"] == est.spectral_radius and d["limits"]["euler"] == est.limits["euler"]
    assert isinstance(d["limits"], dict) and isinstance(d["eigenvalues"], list)
    with pytest.raises(Exception):
        est.spectral_radius = 1.0                                    # frozen
    with pytest.raises(ValueError, match="backward_euler.*implicit"):
        est.limit("backward_euler")


def test_bad_arguments_are_named():
    prob = problems.bead_on_wire()
    with pytest.raises(TypeError, match="problem must be"):
        stiffness("bead")
    with pytest.raises(ValueError, match="iterations must be a positive integer"):
        stiffness(prob, iterations=0)
    with pytest.raises(ValueError, match="backend must be one of"):
        stiffness(prob, backend="fortran")
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        stiffness(prob, y=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="t must be finite"):
        stiffness(prob, t=math.nan)


def raises_off_the_initial_point(t, y):
    """y' = -1000 y, but raising wherever the stiffness check would probe (t0, near y0)."""
    if t == 0.0 and not np.array_equal(y, [1.0, 1.0]):
        raise RuntimeError("only the initial point is allowed at t = 0")
    return -1000.0 * y


def test_an_estimate_that_cannot_be_made_is_an_error_here_and_silent_before_a_run(no_warnings):
    prob = odekit.ODEProblem(raises_off_the_initial_point, (0.0, 1.0), [1.0, 1.0])
    with pytest.raises(ValueError, match="cannot estimate.*RuntimeError"):
        stiffness(prob)
    sol = odekit.solve(prob, "euler", h=0.01, backend="python")      # h * 1000 = 10: would be warned about
    assert sol.success and sol.stats.nfev == 100


# --- the warning before a fixed-step run ---------------------------------------------------

BEAD = problems.bead_on_wire(k=1000.0)                               # euler is stable for h <= 0.002


def test_euler_beyond_its_limit_is_warned_about_before_the_run():
    with pytest.warns(StiffnessWarning) as record:
        sol = odekit.solve(BEAD, "euler", h=0.01, backend="python")
    assert len(record) == 1
    text = str(record[0].message)
    assert "euler" in text and "h=0.01" in text and "h ≤ 0.002" in text
    assert "backward_euler" in text and "trapezoid" in text and "linearized_euler" in text
    assert record[0].filename == __file__                              # points at the caller's line
    assert sol.stats.nfev == 100                                       # the check's evaluations are not counted


def test_a_repeated_fixed_step_solve_estimates_the_spectrum_once_and_warns_each_time():
    calls = [0]

    def counted(t, y, *args):
        calls[0] += 1
        return BEAD.fun(t, y, *args)

    prob = odekit.ODEProblem(counted, BEAD.t_span, BEAD.y0, args=BEAD.args)   # no jac: f is differenced
    runs = []
    for _ in range(2):
        calls[0] = 0
        with pytest.warns(StiffnessWarning, match="h=0.01"):
            sol = odekit.solve(prob, "euler", h=0.01, backend="python")
        runs.append((calls[0], sol.stats.nfev))
    (first, counted_first), (second, counted_second) = runs
    assert counted_first == counted_second == 100
    assert first > counted_first                   # the estimate's own evaluations, uncounted
    assert second == counted_second                # the second run made only its own


def test_the_warning_comes_from_the_integrator_too_and_before_any_step():
    with pytest.warns(StiffnessWarning, match="h=0.01") as record:
        integ = odekit.Integrator(BEAD, "euler", h=0.01, backend="python")
    assert record[0].filename == __file__
    assert integ.t == 0.0 and integ.stats.nfev == 1 and integ.stats.naccepted == 0   # only f(t0), counted


@pytest.mark.parametrize("method, options", [
    ("euler", {"h": 0.001}),                                  # within the limit
    ("euler", {"h": 0.002}),                                  # on it: |R| = 1
    ("backward_euler", {"h": 0.01}),                          # implicit
    ("linearized_euler", {"h": 0.01}),                        # linearly implicit
    ("dp54", {}),                                             # adaptive
    ("euler", {"h": 0.01, "adaptive": "doubling"}),           # adaptive, with a first step beyond the limit
])
def test_no_warning_within_the_limit_for_implicit_methods_or_adaptive_runs(no_warnings, method, options):
    sol = odekit.solve(BEAD, method, backend="python", max_steps=5000, **options)
    assert sol.t[-1] > 0


def test_the_check_changes_neither_the_numbers_nor_the_counts(monkeypatch):
    with pytest.warns(StiffnessWarning):
        checked = odekit.solve(BEAD, "rk4", h=0.01, backend="python")
    monkeypatch.setattr(odekit.Integrator, "_warn_if_unstable", lambda self: None)
    plain = odekit.solve(BEAD, "rk4", h=0.01, backend="python")
    np.testing.assert_array_equal(checked.t, plain.t)
    np.testing.assert_array_equal(checked.y, plain.y)
    assert checked.stats == plain.stats
    assert checked.stats.nfev == 4 * 100                      # RK4: four evaluations per step, f(t0) the first


def test_the_check_runs_on_the_compiled_backend():
    """The compiled right-hand side is called from Python for the check; the run is unchanged."""
    prob = problems.bead_on_wire(k=1000.0)
    with pytest.warns(StiffnessWarning, match="heun"):
        sol = odekit.solve(prob, "heun", h=0.01, backend="auto")
    assert sol.backend == "numba" and sol.stats.nfev == 200
    with pytest.warns(StiffnessWarning, match="heun"):
        reference = odekit.solve(prob, "heun", h=0.01, backend="python")
    np.testing.assert_array_equal(sol.y, reference.y)


def test_splitting_methods_are_checked_against_the_fastest_oscillation(no_warnings):
    """20 masses with k = 1e4: omega_max ~ 199.4, velocity Verlet needs h <= 2 / omega_max ~ 0.01."""
    prob = problems.mass_spring_chain(n=20, k=1e4, t_end=1.0)
    limit = 2 / chain_omega(20, k=1e4)
    odekit.solve(prob, "velocity_verlet", h=0.9 * limit, backend="python")
    with pytest.warns(StiffnessWarning, match="velocity_verlet") as record:
        odekit.solve(prob, "velocity_verlet", h=1.2 * limit, backend="python")
    assert f"h ≤ {limit:.4g}" in str(record[0].message)


def test_a_weak_instability_is_not_warned_about_a_strong_one_is(no_warnings):
    """Euler is unstable on the Kepler orbit's oscillations at every step, but at h = 0.001 they grow by a
    factor 1.3 over ten orbits -- an accuracy matter; at h = 0.05, by e^12."""
    prob = problems.kepler(e=0.5, orbits=10)
    odekit.solve(prob, "euler", h=0.001, backend="python", max_steps=10)   # the check runs before the steps
    with pytest.warns(StiffnessWarning, match="euler is unstable at every step size") as record:
        odekit.solve(prob, "euler", h=0.05, backend="python", max_steps=10)
    assert "velocity_verlet" in str(record[0].message)                # mechanics: a symplectic method too


# --- the message after a starving adaptive run ----------------------------------------------

STIFF = problems.bead_on_wire(k=1e6, t_end=10.0)


@pytest.mark.parametrize("method, options", [("dp54", {}), ("bs32", {}),
                                             ("euler", {"adaptive": "doubling", "rtol": 1e-3})])
def test_an_explicit_adaptive_run_starving_on_a_stiff_problem_says_so(method, options):
    sol = odekit.solve(STIFF, method, max_steps=1000, backend="python", **options)
    assert sol.status == odekit.Status.MAX_STEPS
    assert "max_steps=1000" in sol.message                            # the reason it stopped comes first
    assert "looks stiff" in sol.message and method in sol.message and "backward_euler" in sol.message
    limit = stiffness(STIFF).limit(method)
    assert f"h ≈ {limit:.3g}" in sol.message


def test_the_starving_message_costs_no_counted_evaluations():
    sol = odekit.solve(STIFF, "dp54", max_steps=1000, backend="python")
    assert "looks stiff" in sol.message
    assert sol.stats.nfev == 2 + 6 * sol.stats.nsteps                 # as in any dp54 run (FSAL, first-step guess)


def test_a_successful_starving_run_says_so_too():
    sol = odekit.solve(problems.bead_on_wire(k=1e4, t_end=1.0), "dp54", backend="python")
    assert sol.success and sol.message.startswith("The solver reached t_end=1.")
    assert "looks stiff" in sol.message


def test_starving_is_judged_from_the_mean_step_when_only_t_eval_is_kept():
    sol = odekit.solve(STIFF, "dp54", max_steps=1000, t_eval=[0.0, 10.0], backend="python")
    assert "looks stiff" in sol.message and "mean step" in sol.message


@pytest.mark.parametrize("prob, options", [
    (problems.kepler(e=0.5, orbits=3), {}),
    (problems.kepler(e=0.5, orbits=10), {"rtol": 1e-3}),       # loose: steps near the limit, yet not stiff
    (problems.kepler(e=0.9, orbits=3), {}),
    (problems.harmonic_oscillator(t_end=100.0), {"rtol": 1e-3}),
    (problems.lorenz(), {}),
], ids=["kepler", "kepler-loose", "kepler-e0.9", "oscillator-loose", "lorenz"])
def test_no_stiffness_message_for_non_stiff_problems(prob, options):
    sol = odekit.solve(prob, "dp54", backend="python", **options)
    assert sol.success and sol.stats.naccepted >= 100
    assert "stiff" not in sol.message


def test_no_stiffness_message_for_implicit_or_fixed_step_runs():
    implicit = odekit.solve(STIFF, "backward_euler", adaptive="doubling", rtol=1e-3, backend="python")
    assert implicit.success and "stiff" not in implicit.message
    with pytest.warns(StiffnessWarning):
        fixed = odekit.solve(STIFF, "euler", h=1e-5, max_steps=200, backend="python")
    assert "stiff" not in fixed.message


@pytest.mark.parametrize("kept", ["steps", "t_eval"])
@pytest.mark.parametrize("backend", ["python", "numba"])
def test_the_starving_note_does_not_estimate_for_a_varying_step(monkeypatch, kept, backend):
    """A cheap filter first: the Kepler orbit's and the Lorenz system's steps vary, so no evaluation is spent
    after the run -- judged from the recorded steps, or with only t_eval kept from the spread the loop keeps."""
    calls = []
    original = STIFFNESS._quiet_model
    monkeypatch.setattr(STIFFNESS, "_quiet_model", lambda *a: calls.append(1) or original(*a))

    def solve(prob, **options):
        if kept == "t_eval":
            options["t_eval"] = list(prob.t_span)
        return odekit.solve(prob, "dp54", backend=backend, **options)
    for prob in (problems.kepler(e=0.5, orbits=3), problems.lorenz()):
        assert solve(prob).stats.naccepted >= 100
    assert calls == []
    assert "looks stiff" in solve(STIFF, max_steps=1000).message
    assert calls == [1]


def test_the_loop_keeps_the_range_of_its_recent_steps_by_blocks():
    from odekit.kernels.driver import SPREAD_BLOCK, SPREAD_START, keep_spread

    count = 3 * SPREAD_BLOCK + 5
    sizes = 1.0 + np.arange(count)                  # step k of size k + 1 ...
    counted = np.ones(count, dtype=bool)
    sizes[3], sizes[2 * SPREAD_BLOCK + 9] = 1e-6, 1e-3   # ... but a first guess, and a step after a rejection
    counted[2 * SPREAD_BLOCK + 9] = False
    fs = np.zeros(L.FS_SIZE)
    for k in range(count):
        keep_spread(fs, k, -sizes[k], counted[k])
        if k == SPREAD_BLOCK:                       # the first block, without the run's first steps
            assert (fs[L.H_LO_DONE], fs[L.H_HI_DONE]) == (sizes[SPREAD_START], sizes[SPREAD_BLOCK - 1])
    block = sizes[2 * SPREAD_BLOCK:3 * SPREAD_BLOCK][counted[2 * SPREAD_BLOCK:3 * SPREAD_BLOCK]]
    assert (fs[L.H_LO_DONE], fs[L.H_HI_DONE]) == (block.min(), block.max()) == (2 * SPREAD_BLOCK + 1, 3 * SPREAD_BLOCK)
    assert (fs[L.H_LO], fs[L.H_HI]) == (3 * SPREAD_BLOCK + 1, count)


def test_steps_at_the_stability_limit_of_a_non_stiff_problem_are_not_called_stiff():
    """The rule itself: an oscillator (rho |u| / |f| = 1) whose 150 steps sit exactly at dp54's limit,
    and whose state barely changes per step, passes the cheap filters -- and is still not stiff."""
    prob = problems.harmonic_oscillator(t_end=100.0)
    method = odekit.method("dp54")
    limit = stiffness(prob).limit(method)
    u = prob.initial_state()
    states = u[None, :] * (1 + 1e-6 * np.arange(152))[:, None]
    steps = np.full(151, limit)
    stats = odekit.Stats(nfev=0, njev=0, nlu=0, nsteps=160, naccepted=150, nrejected=10)
    integ = odekit.Integrator(prob, method, backend="python")
    note = STIFFNESS.starving_note(prob, method, integ._kernels.rhs, False, 0.0, u, stats, steps, states, False)
    assert note is None
    # the same steps on the stiff bead are starving
    bead = problems.bead_on_wire(k=1e6)
    limit = stiffness(bead).limit(method)
    u = np.array([1.0, 1e-12])
    states = u[None, :] * (1 + 1e-6 * np.arange(152))[:, None]
    integ = odekit.Integrator(bead, method, backend="python")
    note = STIFFNESS.starving_note(bead, method, integ._kernels.rhs, False, 0.0, u, stats, np.full(151, limit),
                                   states, False)
    assert note is not None and "looks stiff" in note


def test_the_bound_of_the_stiffness_ratio_takes_the_jacobians_frobenius_norm_for_rho():
    """On the bead, y' = (-x, -k y), the differences of a linear function are exact: the bound of rho is
    sqrt(1 + k^2), at least the spectral radius k, times |u| / |f|; and f comes with it."""
    k = 1e6
    bead = problems.bead_on_wire(k=k)
    rhs = odekit.Integrator(bead, "dp54", backend="python")._kernels.rhs
    u = np.array([1.0, 1e-3])
    f, ratio = STIFFNESS._derivative_and_ratio(bead, rhs, False, 0.0, u)
    assert np.array_equal(f, [-1.0, -k * 1e-3])
    assert ratio == pytest.approx(math.hypot(1.0, k) * np.linalg.norm(u) / np.linalg.norm(f), rel=1e-6)
    assert not STIFFNESS.bound_clears(ratio)


def _lorenz_into(t, W, src, dst, args):
    x, y, z = W[src, 0], W[src, 1], W[src, 2]
    W[dst, 0] = args[0] * (y - x)
    W[dst, 1] = x * (args[1] - z) - y
    W[dst, 2] = x * y - args[2] * z
    return True


def _misfit_into(t, W, src, dst, args):
    return W[src, 0] < 0.0                      # "did not fit" from a state with x >= 0


def test_the_compiled_bound_gives_the_numpy_bodys_numbers_and_nan_for_a_misfit():
    """stiffness_bound as a repeated solve's call runs it (a loop over rows of the lane's W) and as the
    note after a first solve does (NumPy, a matrix of its own): the same ratio and f, bit for bit."""
    numba = pytest.importorskip("numba")
    from odekit.kernels import jit  # noqa: F401  (gives the kernels their compiled loops)
    from odekit.kernels.evaluation import stiffness_bound

    @numba.njit(cache=False)
    def compiled(rhs, args, t, W):
        return stiffness_bound(rhs, args, t, W, 0, 1, 2, 3)

    args = (10.0, 28.0, 8.0 / 3.0)
    lorenz_into, misfit_into = numba.njit(_lorenz_into), numba.njit(_misfit_into)
    for u in ([1.0, 1.0, 1.0], [-8.2, -7.1, 27.3], [1e-9, 3e5, -2.0]):
        W, expected = np.zeros((4, 3)), np.zeros((2, 3))
        W[0] = expected[0] = u
        ratio = compiled(lorenz_into, args, 0.0, W)
        assert ratio == stiffness_bound(_lorenz_into, args, 0.0, expected, 0, 1, -1, -1)
        assert np.array_equal(W[:2], expected) and np.isfinite(ratio) and ratio > 0
    W = np.zeros((4, 3))
    W[0] = [1.0, 2.0, 3.0]
    assert math.isnan(compiled(misfit_into, args, 0.0, W))
    assert math.isnan(stiffness_bound(_misfit_into, args, 0.0, W[:2].copy(), 0, 1, -1, -1))


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_steady_run_of_a_non_stiff_problem_is_cleared_by_the_bound_without_an_estimate(monkeypatch, backend):
    """vern8 on the Lorenz system at rtol 1e-4, with only t_eval kept, under PI control without the
    prediction's bound: its last steps vary less than twofold, as a starving run's, so the cheap filter
    does not clear it -- the bound does (rho <= 17 there, far from
    100 |f| / |u| = 252), without the estimate's twenty evaluations."""
    bounds, models = [], []
    bound, model = STIFFNESS._derivative_and_ratio, STIFFNESS._quiet_model
    monkeypatch.setattr(STIFFNESS, "_derivative_and_ratio", lambda *a: bounds.append(1) or bound(*a))
    monkeypatch.setattr(STIFFNESS, "_quiet_model", lambda *a: models.append(1) or model(*a))
    prob = problems.lorenz()
    sol = odekit.solve(prob, "vern8", rtol=1e-4, atol=1e-7, t_eval=list(prob.t_span), backend=backend,
                       controller=odekit.PIController(predictive=False))
    assert sol.success and "stiff" not in sol.message
    assert (bounds, models) == ([1], [])
    assert "looks stiff" in odekit.solve(STIFF, "dp54", max_steps=1000, t_eval=[0.0, 10.0], backend=backend).message
    assert (bounds, models) == ([1, 1], [1])             # a stiff problem is not cleared: the estimate decides
