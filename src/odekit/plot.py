"""Plots with Matplotlib, headless: figures are built without pyplot.

Each function returns a :class:`matplotlib.figure.Figure` and, given a path,
also saves it there.  No display is needed; nothing here opens a window.
A method keeps its colour across all plots.
"""

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from .methods import methods as registry

# tab20's strong shades first, then its light ones, then tab20b: 40 distinct colours
_PALETTE = tuple(colormaps["tab20"].colors[0::2] + colormaps["tab20"].colors[1::2] + colormaps["tab20b"].colors)


def colour(name):
    """A fixed colour for each registered method, distinct from every other method's."""
    names = registry().names()
    return _PALETTE[names.index(name) % len(_PALETTE)] if name in names else "#333333"


def _finish(fig, path):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def _positions(sol):
    return sol.x if sol.problem.second_order else sol.y


def _draw_trajectory(ax, sol, label, colour_, exact=False):
    pos = _positions(sol).reshape(len(sol.t), -1)
    if pos.shape[1] >= 2 and sol.problem.second_order:
        ax.plot(pos[:, 0], pos[:, 1], color=colour_, lw=0.9, label=label)
        ax.set_xlabel("x₁")
        ax.set_ylabel("x₂")
        ax.set_aspect("equal", adjustable="datalim")
    else:
        ax.plot(sol.t, pos[:, 0].real, color=colour_, lw=0.9, label=label)
        ax.set_xlabel("t")
        ax.set_ylabel("x" if sol.problem.second_order else "y₁")
    if exact and sol.problem.exact is not None:
        t = np.linspace(sol.t[0], sol.t[-1], 2000)
        values = [sol.problem.exact(ti) for ti in t]
        ref = np.array([v[0] for v in values] if sol.problem.second_order else values).reshape(len(t), -1)
        if pos.shape[1] >= 2 and sol.problem.second_order:
            ax.plot(ref[:, 0], ref[:, 1], "k--", lw=0.8, label="exact")
        else:
            ax.plot(t, ref[:, 0].real, "k--", lw=0.8, label="exact")


def _relative_drift(sol, name):
    values = sol.invariants(name)[name]
    scale = abs(values[0]) or 1.0
    return np.abs(values - values[0]) / scale


def solution(sol, path=None):
    """A run at a glance: trajectory (with the exact one), error and invariants against time."""
    panels = 1 + (sol.problem.exact is not None) + bool(sol.problem.invariants)
    fig = Figure(figsize=(5.0 * panels, 4.2))
    axes = fig.subplots(1, panels, squeeze=False)[0]
    _draw_trajectory(axes[0], sol, sol.method.name, colour(sol.method.name), exact=True)
    axes[0].set_title(f"{sol.problem.name}: {sol.method.name}")
    axes[0].legend(fontsize=8)
    k = 1
    if sol.problem.exact is not None:
        values = [sol.problem.exact(ti) for ti in sol.t]
        ref = np.array([np.stack(v) if sol.problem.second_order else v for v in values])
        err = np.abs(sol.y - ref.reshape(sol.y.shape)).reshape(len(sol.t), -1).max(axis=1)
        axes[k].semilogy(sol.t, np.maximum(err, 1e-17), color=colour(sol.method.name))
        axes[k].set_xlabel("t")
        axes[k].set_title("error against the exact solution")
        k += 1
    if sol.problem.invariants:
        for name in sol.problem.invariants:
            axes[k].semilogy(sol.t, np.maximum(_relative_drift(sol, name), 1e-17), label=name)
        axes[k].set_xlabel("t")
        axes[k].set_title("invariant drift |I(t) − I(0)| / |I(0)|")
        axes[k].legend(fontsize=8)
    return _finish(fig, path)


def shootout(result, path=None):
    """Trajectories, energy error against time, and the position errors of a shootout."""
    fig = Figure(figsize=(13.5, 4.4))
    ax_traj, ax_energy, ax_err = fig.subplots(1, 3)
    for i, (name, sol) in enumerate(result.solutions.items()):
        _draw_trajectory(ax_traj, sol, name, colour(name), exact=(i == len(result.solutions) - 1))
        if "energy" in sol.problem.invariants:
            ax_energy.semilogy(sol.t, np.maximum(_relative_drift(sol, "energy"), 1e-17),
                               color=colour(name), lw=0.8, label=name)
    ax_traj.set_title(f"{result.problem.name}: trajectories")
    ax_traj.legend(fontsize=7, loc="best")
    ax_energy.set_title("relative energy error")
    ax_energy.set_xlabel("t")
    names = [row["method"] for row in result.rows]
    errors = [max(row["error"], 1e-17) for row in result.rows]
    ax_err.barh(names, errors, color=[colour(n) for n in names], log=True)
    ax_err.invert_yaxis()
    ax_err.set_title(f"largest position error\n({result.budget:g} evaluations per unit time)")
    return _finish(fig, path)


def convergence(result, path=None):
    """Log-log error against step size, one line per method, labelled with the fitted order."""
    fig = Figure(figsize=(6.4, 4.8))
    ax = fig.subplots()
    for name in result.methods:
        rows = [r for r in result.rows if r.method == name and r.success]
        h = np.array([r.h for r in rows])
        err = np.array([r.error for r in rows])
        fit = result.fits[name]
        ax.loglog(h, err, "o-", color=colour(name), label=f"{name}: order {fit.order:.2f} (declared {fit.declared})")
    ax.set_xlabel("step size h")
    ax.set_ylabel("largest error over the run")
    ax.set_title(f"convergence on {result.problem}")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", lw=0.3)
    return _finish(fig, path)


STABILITY_METHODS = ("euler", "midpoint", "kutta3", "rk4", "backward_euler", "trapezoid")


def stability_regions(methods=STABILITY_METHODS, path=None, re=(-5.0, 3.0), im=(-4.0, 4.0)):
    """Where |R(z)| <= 1 in the complex plane z = h lambda, for each method (shaded), with its boundary."""
    from .analysis import stability_region

    fig = Figure(figsize=(6.4, 6.0))
    ax = fig.subplots()
    for name in methods:
        region = stability_region(name, re=re, im=im, n=401)
        c = colour(region.method)
        ax.contourf(region.re, region.im, region.abs_r, levels=[0, 1], colors=[c], alpha=0.12)
        ax.contour(region.re, region.im, region.abs_r, levels=[1], colors=[c], linewidths=1.2)
        ax.plot([], [], color=c, label=region.method)
    ax.axhline(0, color="k", lw=0.5)
    ax.axvline(0, color="k", lw=0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("Re hλ")
    ax.set_ylabel("Im hλ")
    ax.set_title("stability regions |R(hλ)| ≤ 1")
    ax.legend(fontsize=8, loc="upper left")
    return _finish(fig, path)


def work_precision(result, path=None):
    """Error against f-evaluations and against wall time, one line per method."""
    fig = Figure(figsize=(11.0, 4.4))
    by_nfev, by_time = fig.subplots(1, 2)
    for name in result.methods:
        rows = sorted((r for r in result.rows if r.method == name and r.success), key=lambda r: r.nfev)
        err = [max(r.error, 1e-17) for r in rows]
        by_nfev.loglog([r.nfev for r in rows], err, "o-", color=colour(name), label=name)
        by_time.loglog([r.time for r in rows], err, "o-", color=colour(name), label=name)
    by_nfev.set_xlabel("f-evaluations")
    by_time.set_xlabel("wall time [s]")
    for ax in (by_nfev, by_time):
        ax.set_ylabel("error")
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=8)
    by_nfev.set_title(f"work-precision on {result.problem}")
    return _finish(fig, path)
