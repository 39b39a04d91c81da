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


def boundaries(ax):
    """The boundary contour of each method, by its gid."""
    return {c.get_gid().removesuffix(" boundary"): c for c in ax.collections
            if (c.get_gid() or "").endswith(" boundary")}


def test_the_default_stability_figure_draws_one_visible_boundary_per_method(tmp_path):
    fig = plot.stability_regions(path=tmp_path / "default.png")
    assert (tmp_path / "default.png").read_bytes()[:8] == PNG
    ax = fig.axes[0]
    found = boundaries(ax)
    assert list(found) == list(plot.STABILITY_METHODS)                 # one each, in order
    assert [t.get_text().split()[0] for t in ax.get_legend().get_texts()] == list(plot.STABILITY_METHODS)
    for name, contour in found.items():
        assert np.allclose(contour.get_edgecolor()[0][:3], plot.colour(name)[:3]), name
        assert sum(len(p.vertices) for p in contour.get_paths()) > 50, name
    # the trapezoid's boundary is the imaginary axis, across the whole picture ...
    trapezoid = np.concatenate([p.vertices for p in found["trapezoid"].get_paths()])
    assert np.max(np.abs(trapezoid[:, 0])) < 0.02
    assert trapezoid[:, 1].min() < -3.9 and trapezoid[:, 1].max() > 3.9
    # ... so it is dashed, edged and drawn above RK4's curve, which runs along that axis
    rk4 = found["rk4"]
    assert found["trapezoid"].get_linestyle()[0][1] is not None and rk4.get_linestyle()[0][1] is None
    assert found["trapezoid"].get_zorder() > rk4.get_zorder() and found["trapezoid"].get_path_effects()
    assert "A-stable" in ax.get_legend().get_texts()[-1].get_text()
    # backward Euler: |1 - z| = 1, the circle it is unstable inside
    circle = np.concatenate([p.vertices for p in found["backward_euler"].get_paths()])
    assert np.max(np.abs(np.hypot(circle[:, 0] - 1, circle[:, 1]) - 1)) < 0.02


def fit_line(ax, name):
    (line,) = [line for line in ax.get_lines() if line.get_gid() == f"{name} fit"]
    return line.get_xydata()


def test_convergence_plot_draws_each_fitted_slope_and_the_invariant_order(tmp_path):
    prob = odekit.problems.kepler(e=0.3, t_end=2.0)
    steps = {"euler": [0.02, 0.01, 0.005], "velocity_verlet": [0.04, 0.02, 0.01]}
    result = analysis.convergence(prob, list(steps), steps, invariant="energy", backend="python")
    fig = result.plot(tmp_path / "c.png")
    solution_ax, invariant_ax = fig.axes
    for name, h in steps.items():
        rows = result.select(name)
        for ax, column, order in ((solution_ax, "error", result.fits[name].order),
                                  (invariant_ax, "invariant_error", result.fits[name].invariant_order)):
            line = fit_line(ax, name)
            np.testing.assert_array_equal(line[:, 0], [min(h), max(h)])     # over the fitted steps
            slope = np.diff(np.log(line[:, 1])) / np.diff(np.log(line[:, 0]))
            assert slope[0] == pytest.approx(order, rel=1e-12)             # the table's order
            # the line is the least-squares fit: the points straddle it
            errors = np.array([getattr(r, column) for r in rows])
            fitted = np.exp(np.polyval(np.polyfit(np.log(h), np.log(errors), 1), np.log(line[:, 0])))
            np.testing.assert_allclose(line[:, 1], fitted, rtol=1e-10)
    assert result.fits["velocity_verlet"].invariant_order == pytest.approx(2.0, abs=0.05)
    assert "energy" in invariant_ax.get_ylabel()
    single = analysis.convergence(prob, ["euler"], steps["euler"], backend="python").plot()
    assert len(single.axes) == 1


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
