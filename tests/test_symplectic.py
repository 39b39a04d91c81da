"""Long-time behaviour on the Kepler problem (e = 0.5) over 1000 orbits.

Symplectic methods keep the energy error bounded -- it oscillates with the
orbit and does not grow -- while a non-symplectic method of higher order
(RK4) drifts secularly (Hairer, Lubich & Wanner, *Geometric Numerical
Integration*, I.2 and X).  Kicks along x and drifts along v leave x × v
unchanged, so every splitting method conserves angular momentum exactly,
up to round-off.  Compiled backend: about 600,000 steps per run.
"""

import numpy as np
import pytest

import odekit

ORBITS = 1000
KEPLER = odekit.problems.kepler(e=0.5, orbits=ORBITS)
E0 = -0.5
L0 = np.sqrt(1 - 0.5 ** 2)

# Steps for which truncation, not round-off, dominates the energy error: h = p / 200 for a
# method of order p, larger for a higher order, whose error is smaller -- except where a larger
# step was measured to keep truncation dominant (their small error constants allow it).
STEPS = {m.name: m.order / 200 for m in odekit.methods("splitting")} | {"pefrl": 0.03, "yoshida6": 0.05}


def energy_error(sol):
    x, v = sol.x, sol.v
    return np.abs(0.5 * np.sum(v * v, axis=1) - 1 / np.sqrt(np.sum(x * x, axis=1)) - E0)


def momentum_drift(sol):
    x, v = sol.x, sol.v
    return np.max(np.abs(x[:, 0] * v[:, 1] - x[:, 1] * v[:, 0] - L0)) / L0


def growth(err):
    """Largest error in the last tenth of the run over that in the first tenth."""
    n = len(err) // 10
    return err[-n:].max() / err[:n].max()


@pytest.fixture(scope="module")
def runs():
    out = {name: odekit.solve(KEPLER, name, h=h) for name, h in STEPS.items()}
    out["rk4"] = odekit.solve(KEPLER, "rk4", h=0.01)
    return out


def test_the_registry_splitting_methods_are_all_exercised():
    assert set(STEPS) == set(odekit.methods("splitting").names())


@pytest.mark.parametrize("name", STEPS)
def test_symplectic_energy_error_is_bounded(runs, name):
    sol = runs[name]
    assert sol.success and sol.backend == "numba"
    assert sol.t[-1] == pytest.approx(ORBITS * 2 * np.pi, rel=1e-15)
    err = energy_error(sol)
    assert growth(err) < 1.2
    assert err.max() < 1e-2


@pytest.mark.parametrize("name", STEPS)
def test_splitting_methods_conserve_angular_momentum_to_round_off(runs, name):
    assert momentum_drift(runs[name]) < 1e-12


def test_rk4_energy_drifts_secularly(runs):
    """Linear growth: the last tenth's error is about ten times the first tenth's."""
    err = energy_error(runs["rk4"])
    assert 7 < growth(err) < 13
    assert momentum_drift(runs["rk4"]) > 1e-8
