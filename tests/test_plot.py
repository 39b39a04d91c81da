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


# --- legends that cover nothing, colours that are told apart ---------------------------------

def lab(rgb):
    """CIE L*a*b* of sRGB colours (D65): Euclidean distance there is the perceived difference."""
    c = np.asarray(rgb, dtype=float)[..., :3]
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = c @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


DISTINCT = 25.0     # CIE76 distance: tab10's closest pair (purple, pink) is 27.7; the three greens were 17


def closest_pair(colours):
    points = lab(colours)
    distance = np.linalg.norm(points[:, None] - points[None], axis=-1)
    return distance[np.triu_indices(len(points), 1)].min()


def covers_nothing(fig, legend):
    """The legend's box overlaps no axes' box (a legend inside the axes may cover a curve)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()                                   # lays the figure out as saving it does
    renderer = canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    return not any(box.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)


@pytest.fixture(scope="module")
def default_shootout():
    return odekit.shootout("kepler", budget=200, t_end=2.0, backend="python")


def test_the_shootout_legend_names_every_energy_line_by_a_distinct_colour_beside_the_panels(default_shootout, tmp_path):
    fig = default_shootout.plot(tmp_path / "shootout.png")
    ax_traj, ax_energy, _ = fig.axes
    (legend,) = fig.legends
    entries = {text.get_text(): handle.get_color() for text, handle in zip(legend.get_texts(), legend.legend_handles)}
    energy = {line.get_label(): line.get_color() for line in ax_energy.get_lines()}
    assert list(energy) == [row["method"] for row in default_shootout.rows]
    for name, c in energy.items():
        assert np.allclose(entries[name][:3], c[:3]), name                   # the same colour in the legend
    assert "exact" in entries
    assert closest_pair(list(energy.values())) > DISTINCT
    assert covers_nothing(fig, legend)
    assert ax_traj.get_legend() is None and ax_energy.get_legend() is None


def test_the_default_figures_colour_their_methods_apart():
    from odekit.shootout import DEFAULT_METHODS

    for names in (DEFAULT_METHODS, plot.STABILITY_METHODS):
        assert closest_pair([plot.colour(name) for name in names]) > DISTINCT, names


def test_methods_with_one_stability_function_share_one_labelled_region(tmp_path):
    # every explicit 2-stage method of order 2 has R = 1 + z + z^2/2; RK4 and the 3/8 rule 1 + ... + z^4/24
    fig = plot.stability_regions(("euler", "heun", "midpoint", "rk4", "ralston", "rk38"), tmp_path / "s.png")
    ax = fig.axes[0]
    assert list(boundaries(ax)) == ["euler", "heun = midpoint = ralston", "rk4 = rk38"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(boundaries(ax))
    assert covers_nothing(fig, ax.get_legend())


def test_the_stability_legend_covers_no_region(tmp_path):
    for methods in (plot.STABILITY_METHODS, ("euler", "rk4", "trapezoid", "backward_euler")):
        fig = plot.stability_regions(methods, tmp_path / "s.png")
        assert covers_nothing(fig, fig.axes[0].get_legend()), methods
