"""Plots are drawn headless and show what they claim: the right lines, labels and files."""

import numpy as np
import pytest

import odekit
from odekit import analysis, plot

PNG = b"\x89PNG\r\n\x1a\n"


def lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_solution_plot_shows_trajectory_exact_error_and_invariants(tmp_path):
    sol = odekit.solve(odekit.problems.kepler(e=0.5, orbits=1), "velocity_verlet", h=0.01, backend="python")
    fig = sol.plot(tmp_path / "sol.png")
    assert (tmp_path / "sol.png").read_bytes()[:8] == PNG
    trajectory, error, invariants = fig.axes
    drawn = lines(trajectory)
    assert {"velocity_verlet", "exact"} <= set(drawn)
    np.testing.assert_allclose(drawn["velocity_verlet"].get_xydata(), sol.x)   # the orbit as computed
    assert error.get_yscale() == "log"
    assert {"energy", "angular_momentum"} <= set(lines(invariants))


def test_every_method_has_its_own_colour():
    colours = [plot.colour(name) for name in odekit.methods().names()]
    assert len(set(colours)) == len(colours)


def test_stability_regions_draw_each_method_and_its_boundary(tmp_path):
    fig = plot.stability_regions(("euler", "rk4"), tmp_path / "s.png")
    ax = fig.axes[0]
    assert {"euler", "rk4"} <= {text.get_text() for text in ax.get_legend().get_texts()}
    # Euler's boundary is the circle |1 + z| = 1
    circle = [c for c in ax.collections if hasattr(c, "get_paths")]
    vertices = np.concatenate([p.vertices for c in circle for p in c.get_paths()
                               if len(p.vertices) and abs(p.vertices[:, 0].min() + 2) < 0.05])
    assert np.max(np.abs(np.hypot(vertices[:, 0] + 1, vertices[:, 1]) - 1)) < 0.05
    assert (tmp_path / "s.png").read_bytes()[:8] == PNG


def test_convergence_plot_labels_each_line_with_its_fitted_order(tmp_path):
    prob = odekit.problems.kepler(e=0.3, t_end=2.0)
    result = analysis.convergence(prob, ["euler", "rk4"], {"euler": [0.02, 0.01, 0.005], "rk4": [0.1, 0.05, 0.025]},
                                  backend="python")
    fig = result.plot(tmp_path / "c.png")
    labels = {label.split(":")[0]: label for label in lines(fig.axes[0])}
    assert labels["rk4"].startswith(f"rk4: order {result.order('rk4'):.2f}")
    assert fig.axes[0].get_xscale() == fig.axes[0].get_yscale() == "log"


def test_work_precision_plot_has_error_against_work_and_time(tmp_path):
    result = analysis.work_precision(odekit.problems.kepler(e=0.3), ["dp54", "bs32"], tolerances=[1e-4, 1e-7],
                                     backend="python", repeat=1)
    fig = result.plot(tmp_path / "w.png")
    by_nfev, by_time = fig.axes
    dp54 = lines(by_nfev)["dp54"].get_xydata()
    rows = sorted((r for r in result.rows if r.method == "dp54"), key=lambda r: r.nfev)
    np.testing.assert_allclose(dp54[:, 0], [r.nfev for r in rows])
    assert by_time.get_xlabel() == "wall time [s]"


@pytest.mark.parametrize("name", ["pendulum", "lorenz"])
def test_solution_plot_works_without_a_plane_orbit(name, tmp_path):
    prob = odekit.problems.problem(name).with_span((0.0, 1.0))
    sol = odekit.solve(prob, "rk4", h=0.01, backend="python")
    fig = sol.plot(tmp_path / "p.png")
    assert fig.axes[0].get_xlabel() == "t"
