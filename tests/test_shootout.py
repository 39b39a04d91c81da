"""The shootout reproduces the classic findings at an equal budget of evaluations."""

import csv
import io
import math

import pytest

import odekit
from odekit.shootout import DEFAULT_METHODS, shootout

SPLITTING = ("symplectic_euler", "velocity_verlet", "position_verlet", "forest_ruth")
RUNGE_KUTTA = ("euler", "heun", "midpoint", "rk4")


@pytest.fixture(scope="module")
def kepler():
    """Ten orbits of the e = 0.5 satellite, 1000 evaluations per unit time."""
    return shootout("kepler", budget=1000, t_end=20 * math.pi)


@pytest.fixture(scope="module")
def pendulum():
    return shootout(odekit.problems.pendulum(theta0=1.0, B=0.0), budget=1000, t_end=30.0)


def rows(result):
    return {row["method"]: row for row in result.rows}


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
                                             (0.1, "longer than the span")])
def test_bad_budgets_are_refused(budget, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        shootout("kepler", ["rk4"], budget=budget)


def test_unknown_problem_lists_the_zoo():
    with pytest.raises(ValueError, match="unknown problem 'keplr'; closest: kepler"):
        shootout("keplr")
