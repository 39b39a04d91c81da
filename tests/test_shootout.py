"""The shootout reproduces the classic findings at an equal budget of evaluations."""

import csv
import io
import importlib
import math

import pytest

import odekit
from odekit.problems import pendulum_period
from odekit.shootout import DEFAULT_METHODS, shootout, shootout_problem
from odekit.solve import _Reporting

shootout_module = importlib.import_module("odekit.shootout")     # odekit.shootout is the function

SPLITTING = ("symplectic_euler", "velocity_verlet", "position_verlet", "forest_ruth")
RUNGE_KUTTA = ("euler", "heun", "midpoint", "rk4")


@pytest.fixture(scope="module")
def kepler():
    """The default run: ten orbits of the e = 0.5 satellite, 1000 evaluations per unit time."""
    return shootout("kepler", budget=1000)


@pytest.fixture(scope="module")
def pendulum():
    return shootout(odekit.problems.pendulum(theta0=1.0, B=0.0), budget=1000, t_end=30.0)


def rows(result):
    return {row["method"]: row for row in result.rows}


def test_by_name_a_periodic_problem_runs_for_ten_periods(kepler):
    assert kepler.problem.t_span == (0.0, 20 * math.pi)
    assert shootout_problem("kepler", mu=4.0).t_span == (0.0, 10 * math.pi)          # period 2 pi / sqrt(mu)
    assert shootout_problem("pendulum").t_span[1] == pytest.approx(10 * pendulum_period(9.8, 1.0, 2.0), rel=1e-14)
    assert shootout_problem("pendulum", theta0=1.0, L=2.0).t_span[1] == pytest.approx(
        10 * pendulum_period(9.8, 2.0, 1.0), rel=1e-14)
    assert shootout_problem("harmonic_oscillator", omega=2.0).t_span == (0.0, 10 * math.pi)
    assert shootout_problem("arenstorf").t_span[1] == pytest.approx(10 * odekit.problems.ARENSTORF_PERIOD)


def test_a_span_given_by_parameter_argument_or_problem_is_kept():
    assert shootout_problem("kepler", orbits=2).t_span == (0.0, 4 * math.pi)
    assert shootout_problem("pendulum", t_end=3.0).t_span == (0.0, 3.0)
    assert shootout_problem("lorenz").t_span == odekit.problems.lorenz().t_span       # not periodic
    one_orbit = odekit.problems.kepler(orbits=1)
    result = shootout(one_orbit, ["rk4", "velocity_verlet"], budget=200)
    assert result.problem.t_span == one_orbit.t_span
    # one orbit is too short to tell bounded from secular, or to time an orbit
    assert [row["energy_trend"] for row in result.rows] == ["too short", "too short"]
    assert all(math.isnan(row["period"]) for row in result.rows)
    assert shootout("kepler", ["rk4"], budget=200, t_end=1.0).problem.t_span == (0.0, 1.0)


def test_on_ten_orbits_every_runge_kutta_energy_drifts_and_no_splitting_one_does(kepler):
    r = rows(kepler)
    for name in RUNGE_KUTTA:
        assert r[name]["energy_trend"] == "secular", name
    for name in SPLITTING:
        assert r[name]["energy_trend"] == "bounded", name


def test_every_method_gets_the_same_budget(kepler):
    assert [row["method"] for row in kepler.rows] == list(DEFAULT_METHODS)
    nfev = [row["nfev"] for row in kepler.rows]
    span = 20 * math.pi
    for row in kepler.rows:
        per_step = odekit.method(row["method"]).evaluations_per_step
        assert row["h"] == pytest.approx(per_step / 1000)
        assert row["nfev"] == pytest.approx(1000 * span, rel=1e-3)     # + the start-up evaluation
    assert max(nfev) - min(nfev) <= 4


def test_splitting_methods_keep_angular_momentum_and_runge_kutta_methods_do_not(kepler):
    r = rows(kepler)
    for name in SPLITTING:
        assert r[name]["angular_momentum_drift"] < 1e-12, name
    for name in RUNGE_KUTTA:
        assert r[name]["angular_momentum_drift"] > 1e-11, name   # splitting: ~1e-14


def test_euler_drifts_most_in_energy(kepler):
    r = rows(kepler)
    assert max(r, key=lambda name: r[name]["energy_drift"]) == "euler"
    assert r["euler"]["energy_trend"] == "secular"


def test_rk4_and_forest_ruth_have_the_smallest_position_errors(kepler):
    ranked = sorted(kepler.rows, key=lambda row: row["error"])
    assert {ranked[0]["method"], ranked[1]["method"]} == {"rk4", "forest_ruth"}


def test_orbit_quantities_are_close_to_the_exact_orbit_for_good_methods(kepler):
    r = rows(kepler)
    for name in ("rk4", "forest_ruth", "velocity_verlet"):
        assert r[name]["min_radius"] == pytest.approx(0.5, abs=1e-4)
        assert r[name]["max_radius"] == pytest.approx(1.5, abs=1e-4)
        assert r[name]["period"] == pytest.approx(2 * math.pi, rel=1e-4)
        assert r[name]["eccentricity"] == pytest.approx(0.5, abs=1e-4)
    # explicit Euler spirals outward: its orbit grows
    assert r["euler"]["max_radius"] > 1.6 and r["euler"]["period"] > 2 * math.pi * 1.05


def test_pendulum_energy_grows_under_euler_and_is_lost_by_rk4(pendulum):
    r = rows(pendulum)
    assert r["euler"]["energy_change"] > 1e-2 and r["euler"]["energy_trend"] == "secular"
    assert r["rk4"]["energy_change"] < 0 and r["rk4"]["energy_trend"] == "secular"


def test_pendulum_second_order_runge_kutta_drifts_secularly(pendulum):
    """Heun and midpoint amplify oscillations slightly: |R(ih)|^2 = 1 + h^4/4 for
    both, so near the pendulum's linear regime their energy creeps up."""
    r = rows(pendulum)
    for name in ("heun", "midpoint"):
        assert r[name]["energy_trend"] == "secular", name
        assert r[name]["energy_change"] > 0, name


def test_pendulum_symplectic_energy_oscillates_without_trend(pendulum):
    r = rows(pendulum)
    for name in SPLITTING:
        assert r[name]["energy_trend"] == "bounded", name


def test_result_prints_converts_and_exports(kepler):
    text = str(kepler)
    assert "1000 derivative evaluations per unit time" in text
    for name in DEFAULT_METHODS:
        assert name in text
    dicts = kepler.as_dicts()
    assert dicts[0]["method"] == "euler" and set(dicts[0]) >= {
        "method", "h", "nfev", "error", "energy_drift", "angular_momentum_drift",
        "min_radius", "max_radius", "period", "eccentricity"}
    parsed = list(csv.DictReader(io.StringIO(kepler.to_csv())))
    assert [p["method"] for p in parsed] == list(DEFAULT_METHODS)
    assert float(parsed[3]["error"]) == pytest.approx(dicts[3]["error"], rel=1e-12)


def test_plot_writes_a_png(kepler, tmp_path):
    path = tmp_path / "shootout.png"
    fig = kepler.plot(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(fig.axes) == 3


def test_methods_that_do_not_apply_are_refused_by_name():
    with pytest.raises(ValueError, match="'velocity_verlet' does not apply to problem 'lorenz'"):
        shootout("lorenz", ["velocity_verlet"], budget=100, t_end=1.0)
    with pytest.raises(ValueError, match="'backward_euler' spends a varying number of evaluations"):
        shootout("kepler", ["backward_euler"], budget=100)


def test_default_methods_skip_those_that_cannot_apply():
    result = shootout("lorenz", budget=200, t_end=0.5, backend="python")
    assert [row["method"] for row in result.rows] == list(RUNGE_KUTTA)


@pytest.mark.parametrize("budget, pattern", [(0, "budget must be a positive"), (-5, "budget must be a positive"),
                                             ("many", "budget must be a number"),
                                             (0.01, "longer than the span")])
def test_bad_budgets_are_refused(budget, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        shootout("kepler", ["rk4"], budget=budget)


def test_the_reference_run_uses_the_backend_and_reports_progress(monkeypatch):
    """Lorenz has no exact solution: the reference run is one of the runs, on the shootout's backend."""
    monkeypatch.setattr(_Reporting, "FIRST_CHUNK", 5)
    monkeypatch.setattr(_Reporting, "INTERVAL", 0.0)
    solves = []

    def recording_solve(prob, method, **options):
        solves.append((odekit.method(method).name, options["backend"]))
        return odekit.solve(prob, method, **options)

    monkeypatch.setattr(shootout_module, "solve", recording_solve)
    calls = []
    result = shootout("lorenz", ["euler", "rk4"], budget=200, t_end=0.5, backend="python",
                      progress=lambda *a: calls.append(a))
    assert solves == [("dp54", "python"), ("euler", "python"), ("rk4", "python")]
    assert {sol.backend for sol in result.solutions.values()} == {"python"}
    assert calls[0][1:] == (3, "reference") and 0 <= calls[0][0] < 1
    # whole numbers once each run is done; fractions, never going back, while one is under way
    assert [c for c in calls if isinstance(c[0], int)] == [(1, 3, "reference"), (2, 3, "euler"), (3, 3, "rk4")]
    done = [c[0] for c in calls]
    assert done == sorted(done) and calls[-1] == (3, 3, "rk4")
    assert any(0 < d < 1 for d in done) and any(1 < d < 2 for d in done)


def test_unknown_problem_lists_the_zoo():
    with pytest.raises(ValueError, match="unknown problem 'keplr'; closest: kepler"):
        shootout("keplr")


def test_the_damped_pendulum_runs_all_eight_and_rk4_and_forest_ruth_are_the_most_accurate():
    """The comparison the project grew from, at damping B = 0.5: the Verlet family and Forest-Ruth run
    (the damping declared, solved exactly by their drifts), and at an equal budget RK4 and Forest-Ruth
    come out ahead of the other six."""
    result = shootout(odekit.problems.pendulum(B=0.5), budget=1000, t_end=10.0, backend="python")
    r = rows(result)
    assert list(r) == list(DEFAULT_METHODS)
    ranked = sorted(r, key=lambda name: r[name]["error"])
    assert set(ranked[:2]) == {"rk4", "forest_ruth"}, [(name, r[name]["error"]) for name in ranked]
    assert r["forest_ruth"]["error"] < 1e-3 * r["velocity_verlet"]["error"]


def test_a_damped_problems_energy_is_measured_against_the_true_energy_not_its_start():
    # the damping takes energy away: its drift from the start measured the damping (1 and "too short" for
    # every method); against the true energy it measures each method, and orders them as the error does
    prob = odekit.problems.pendulum(B=0.5)
    result = shootout(prob, methods=["euler", "rk4", "velocity_verlet"], budget=1000, t_end=10.0, backend="python")
    r = rows(result)
    assert "energy_drift" not in result.columns and "energy_trend" not in result.columns
    sol = result.solutions["velocity_verlet"]
    true = odekit.solve(prob.with_span((0.0, 10.0)), "dop853", rtol=1e-12, atol=1e-14, t_eval=sol.t[-1:])
    energy = prob.invariants["energy"]
    E0, E_end, E_true = energy(0, *sol.y[0]), energy(0, *sol.y[-1]), energy(0, *true.y[-1])
    assert r["velocity_verlet"]["energy_error"] >= abs(E_end - E_true) / E0     # at least the final deviation
    assert r["rk4"]["energy_error"] < 1e-8 < 1e-4 < r["euler"]["energy_error"]
    assert (r["rk4"]["energy_error"] < r["velocity_verlet"]["energy_error"] < r["euler"]["energy_error"] < 0.1)
    t, series = result.energy_errors["euler"]                  # what the plot draws against time
    assert series.max() == r["euler"]["energy_error"] and t[0] == 0.0 and t[-1] == 10.0
    conserved = rows(shootout(odekit.problems.pendulum(), methods=["rk4"], budget=1000, t_end=10.0, backend="python"))
    assert "energy_error" not in conserved["rk4"] and conserved["rk4"]["energy_drift"] < 1e-8
