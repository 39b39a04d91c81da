"""Sweeps: a zoo problem at many values of one parameter, one ensemble per method (odekit sweep)."""

import csv
import math

import numpy as np
import pytest

from odekit import cli
from odekit.sweep import sweep


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_damped_pendulums_final_energy_follows_the_linearised_closed_form(capsys, tmp_path):
    # small swings: theta = a e^{-B t/2} (cos wd t + B/(2 wd) sin wd t), and E = omega^2/2 + (g/L)(1 - cos theta)
    path = tmp_path / "sweep.csv"
    code, out, _ = run(capsys, "sweep", "pendulum", "-p", "B=0:2:5", "-p", "theta0=0.001", "-p", "t_end=3",
                       "--rtol", "1e-11", "--atol", "1e-16", "--csv", str(path), "--quiet")
    assert code == 0 and "energy at end" in out
    rows = list(csv.DictReader(path.open()))
    B = np.array([float(r["B"]) for r in rows])
    g, a, t = 9.8, 0.001, 3.0
    w0 = math.sqrt(g)
    wd = np.sqrt(w0 ** 2 - B ** 2 / 4)
    decay = a * np.exp(-B * t / 2)
    theta = decay * (np.cos(wd * t) + B / (2 * wd) * np.sin(wd * t))
    omega = -decay * (w0 ** 2 / wd) * np.sin(wd * t)
    energy = omega ** 2 / 2 + g * (1 - np.cos(theta))
    # the nonlinearity changes the energy by about a^2 of itself
    np.testing.assert_allclose([float(r["energy at end"]) for r in rows], energy, rtol=1e-5)
    assert [r["status"] for r in rows] == ["SUCCESS"] * 5


def test_keplers_energy_error_grows_with_eccentricity_for_verlet_not_for_an_adaptive_pair():
    es = np.linspace(0.0, 0.8, 5)
    verlet = sweep("kepler", "e", es, ["velocity_verlet"], {"orbits": 2.0}, save="steps", h=0.01,
                   backend="python")
    error = verlet.invariants("velocity_verlet")["energy"][1]
    assert np.all(np.diff(error) > 0)                      # a fixed step fits a rounder orbit better
    assert error[-1] > 100 * error[0]
    adaptive = sweep("kepler", "e", es, ["dp54"], {"orbits": 2.0}, save="steps", rtol=1e-10, atol=1e-12,
                     backend="python")
    assert np.all(adaptive.invariants("dp54")["energy"][1] < 1e-8)      # its steps follow the orbit


def test_threads_change_nothing(capsys, tmp_path):
    tables = []
    for workers in ("1", "2"):
        path = tmp_path / f"w{workers}.csv"
        code, _, _ = run(capsys, "sweep", "kepler", "-p", "e=0:0.6:4", "--method", "rk4,dp54", "--h", "0.01",
                         "--workers", workers, "--csv", str(path), "--quiet")
        assert code == 0
        tables.append(path.read_text())
    assert tables[0] == tables[1]


@pytest.mark.parametrize("argv,words", [
    (["-p", "B=0:1"], "must look like NAME=START:STOP:COUNT"),
    (["-p", "B=0:1:x"], "must look like NAME=START:STOP:COUNT"),
    (["-p", "B=0.5"], "needs one parameter to sweep"),
    (["-p", "B=0:1:3", "-p", "L=1:2:3"], "got 2"),
    (["-p", "damping=0:1:3"], "unexpected keyword 'damping'"),
])
def test_a_bad_sweep_is_named(capsys, argv, words):
    code, _, err = run(capsys, "sweep", "pendulum", *argv, "--backend", "python", "--quiet")
    assert code == 2 and words in err
