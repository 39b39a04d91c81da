"""Plots with Matplotlib, headless: figures are built without pyplot.

Each function returns a :class:`matplotlib.figure.Figure` and, given a path,
also saves it there.  No display is needed; nothing here opens a window.
A method keeps its colour across all plots.  Legends sit outside the axes,
where they cover no curve.
"""

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .registry import CLASSIC, methods as registry
from .events import compared_rows

STABILITY_METHODS = ("euler", "midpoint", "kutta3", "rk4", "backward_euler", "trapezoid")

# tab10, with the two of its colours closest to another (pink to purple, grey to brown) last,
# then tab20's light shades, tab20b and tab20c: 60 distinct colours
_TAB10, _TAB20, _TAB20B, _TAB20C = (colormaps[name].colors for name in ("tab10", "tab20", "tab20b", "tab20c"))
_PALETTE = tuple(_TAB10[i] for i in (0, 1, 2, 3, 4, 5, 8, 9, 6, 7)) + _TAB20[1::2] + _TAB20B + _TAB20C
# the methods of the default shootout, then the others of the default stability figure, get the
# first colours, so that the lines of those figures are told apart at a glance (the trapezoid
# before backward Euler: its dashes on their dark edge need a middle shade, not a light one)
_FIRST = CLASSIC + ("kutta3", "trapezoid", "backward_euler")


def colour(name):
    """A fixed colour for each registered method, distinct from every other method's."""
    names = registry().names()
    if name not in names:
        return "#333333"
    order = [n for n in _FIRST if n in names] + [n for n in names if n not in _FIRST]
    return _PALETTE[order.index(name) % len(_PALETTE)]


def _finish(fig, path):
    if fig.get_layout_engine() is None:
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
        keep = compared_rows(sol.t, err)
        axes[k].semilogy(sol.t[keep], np.maximum(err[keep], 1e-17), color=colour(sol.method.name))
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
    """Trajectories, energy error against time, and the position errors of a shootout.

    One legend below the three panels names every method by its colour
    (and the exact solution by its dashed line).
    """
    fig = Figure(figsize=(13.5, 5.0), layout="constrained")
    ax_traj, ax_energy, ax_err = fig.subplots(1, 3)
    dissipative = bool(result.energy_errors)      # the energy the run should have is the true one's
    for i, (name, sol) in enumerate(result.solutions.items()):
        _draw_trajectory(ax_traj, sol, name, colour(name), exact=(i == len(result.solutions) - 1))
        if dissipative:
            t, error = result.energy_errors[name]
        elif "energy" in sol.problem.invariants:
            t, error = sol.t, _relative_drift(sol, "energy")
        else:
            continue
        ax_energy.semilogy(t, np.maximum(error, 1e-17), color=colour(name), lw=1.0, label=name)
    ax_traj.set_title(f"{result.problem.name}: trajectories")
    handles, labels = ax_traj.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5), fontsize=9)
    ax_energy.set_title("energy error against the true energy" if dissipative else "relative energy error")
    ax_energy.set_xlabel("t")
    names = [row["method"] for row in result.rows]
    errors = [max(row["error"], 1e-17) for row in result.rows]
    ax_err.barh(names, errors, color=[colour(n) for n in names], log=True)
    ax_err.invert_yaxis()
    ax_err.set_title(f"largest position error\n({result.budget:g} evaluations per unit time)")
    return _finish(fig, path)


def convergence(result, path=None):
    """Log-log error against step size with the fitted slopes, one colour per method.

    Each method's errors are drawn as dots and its least-squares fit
    ``error = C h^p`` (:func:`odekit.analysis.fit_order`) as a dashed line
    over the fitted steps, labelled with the measured order ``p``.  When the
    study measured an invariant's error (``invariant=...``), a second panel
    shows that error and its fit in the same way.
    """
    panels = [("error", "order", "largest error over the run")]
    if result.invariant is not None:
        panels.append(("invariant_error", "invariant_order", f"largest error in {result.invariant}"))
    fig = Figure(figsize=(6.4 * len(panels), 4.8))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (column, order, ylabel) in zip(axes, panels):
        for name in result.methods:
            fit = result.fits[name]
            _draw_fit(ax, result, name, column, getattr(fit, order), fit.declared)
        ax.set_xlabel("step size h")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", lw=0.3)
    axes[0].set_title(f"convergence on {result.problem}")
    if len(panels) > 1:
        axes[1].set_title(f"error in {result.invariant}: its own order")
    return _finish(fig, path)


def _draw_fit(ax, result, name, column, order, declared):
    """The (h, error) points of one method and the line of their fit ``C h^p``.

    The points are those the table's fit used: successful runs with a
    positive finite error.
    """
    from .theory.fitting import fit_order

    points = [(r.h, getattr(r, column)) for r in result.rows if r.method == name and r.success]
    points = [(h, e) for h, e in points if e is not None and np.isfinite(e) and e > 0]
    c = colour(name)
    if not np.isfinite(order) or len({h for h, _ in points}) < 2:    # e.g. an invariant kept to round-off
        if points:
            ax.loglog(*zip(*points), "o", color=c, label=f"{name}: no order")
        return
    h, e = map(np.array, zip(*points))
    fit = fit_order(h, e)                  # the table's fit again, for its constant C
    ax.loglog(h, e, "o", color=c, label=f"{name}: order {order:.2f} (declared {declared})")
    ends = np.array([h.min(), h.max()])
    ax.loglog(ends, fit.constant * ends ** fit.order, "--", color=c, lw=1.2, gid=f"{name} fit")


_HATCHES = ("/", "\\", "|", "-")


def stability_regions(methods=STABILITY_METHODS, path=None, re=(-5.0, 3.0), im=(-4.0, 4.0)):
    """Where |R(z)| <= 1 in the complex plane z = h lambda, for each method, with its boundary.

    A bounded region (explicit methods) is shaded and outlined with a solid
    line.  An unbounded one (an A-stable method: the whole left half-plane
    and more) would cover the others if shaded, so it is hatched and its
    boundary dashed and drawn on top, with a dark edge: the trapezoid rule's
    boundary is the imaginary axis itself, under RK4's curve.  Methods with
    the same stability function (Heun's and the midpoint rule's ``1 + z +
    z^2/2``) have one region, drawn once and labelled ``"heun = midpoint"``.
    The legend, beside the plane, says which is which.  Each boundary is one
    contour set with ``gid = "<label> boundary"``.
    """
    from matplotlib import patheffects

    from .theory.stability import is_a_stable, stability_region

    fig = Figure(figsize=(9.6, 6.0), layout="constrained")
    ax = fig.subplots()
    ax.axhline(0, color="0.6", lw=0.5, zorder=0)
    ax.axvline(0, color="0.6", lw=0.5, zorder=0)
    handles, unbounded = [], 0
    for names in _same_regions(methods):
        region = stability_region(names[0], re=re, im=im, n=401)
        c = colour(region.method)
        name = " = ".join(names)
        if is_a_stable(region.method):
            hatch = _HATCHES[unbounded % len(_HATCHES)]
            unbounded += 1
            shade = ax.contourf(region.re, region.im, region.abs_r, levels=[0, 1], colors="none",
                                hatches=[hatch], zorder=1)
            shade.set_edgecolor((*c[:3], 0.6))        # lighter hatching: the curves stay readable on it
            shade.set_linewidth(0)
            style = dict(linestyles="--", linewidths=2.4, zorder=4,
                         path_effects=[patheffects.withStroke(linewidth=3.6, foreground="0.25")])
            label = f"{name} (A-stable: hatched, unbounded)"
        else:
            ax.contourf(region.re, region.im, region.abs_r, levels=[0, 1], colors=[c], alpha=0.12, zorder=1)
            style = dict(linestyles="-", linewidths=1.3, zorder=3)
            label = name
        boundary = ax.contour(region.re, region.im, region.abs_r, levels=[1], colors=[c], **style)
        boundary.set_gid(f"{name} boundary")
        handles.append(Line2D([], [], color=c, lw=style["linewidths"], ls=style["linestyles"], label=label))
    ax.set_aspect("equal")
    ax.set_xlabel("Re hλ")
    ax.set_ylabel("Im hλ")
    ax.set_title("stability regions |R(hλ)| ≤ 1")
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0)
    return _finish(fig, path)


def _same_regions(methods):
    """The methods' names in groups of equal stability functions ``R``, in their first order."""
    from .theory.stability import stability_function

    groups = []                     # (R's coefficients, names)
    for name in methods:
        R = stability_function(name)
        key = (R.numerator, R.denominator)
        same = [names for k, names in groups if k == key]
        if same:
            same[0].append(R.method.name)
        else:
            groups.append((key, [R.method.name]))
    return [names for _, names in groups]


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


ENSEMBLE_LINES = 40      # trajectories drawn as lines under an ensemble's spread


def ensemble(ens, path=None):
    """An ensemble: its final states (``save="final"``), or the spread of its trajectories against time.

    Final states: the first two components against each other (each
    trajectory a dot, failed ones as crosses), or one component against the
    trajectory's index.  Kept states: per component (three at most), the
    median and the band from the 10th to the 90th percentile at each time,
    over a few trajectories drawn as thin lines.
    """
    flat = ens.y_final.reshape(len(ens), -1).real
    ok = ens.success
    if ens.save == "final":
        fig = Figure(figsize=(5.5, 4.5))
        ax = fig.add_subplot()
        if flat.shape[1] >= 2:
            x, y, labels = flat[:, 0], flat[:, 1], ("component 1", "component 2")
        else:
            x, y, labels = np.arange(len(ens)), flat[:, 0], ("trajectory", "final value")
        ax.scatter(x[ok], y[ok], s=6, color=_PALETTE[0], label="final state")
        if not ok.all():
            ax.scatter(x[~ok], y[~ok], s=20, marker="x", color=_PALETTE[3], label="failed")
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        ax.set_title(f"{ens.problem(0).name}, {ens.method.name}: {len(ens):,} trajectories")
        return _finish(fig, path)
    shown = np.linspace(0, len(ens) - 1, min(len(ens), ENSEMBLE_LINES)).astype(int)
    parts = min(3, flat.shape[1])
    fig = Figure(figsize=(7.0, 2.4 * parts))
    axes = fig.subplots(parts, 1, sharex=True, squeeze=False)[:, 0]
    for i in shown:
        sol = ens[i]
        rows = sol.y.reshape(len(sol.t), -1).real
        for c, ax in enumerate(axes):
            ax.plot(sol.t, rows[:, c], color="#999999", lw=0.5, alpha=0.6)
    if ens.save == "t_eval":
        values = ens.y.reshape(len(ens), ens.t.size, -1).real[ok]
        if len(values):
            low, mid, high = np.nanpercentile(values, [10, 50, 90], axis=0)
            for c, ax in enumerate(axes):
                ax.fill_between(ens.t, low[:, c], high[:, c], color=_PALETTE[0], alpha=0.3, label="10-90 %")
                ax.plot(ens.t, mid[:, c], color=_PALETTE[0], lw=1.2, label="median")
            axes[0].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    for c, ax in enumerate(axes):
        ax.set_ylabel(f"component {c + 1}")
    axes[-1].set_xlabel("t")
    axes[0].set_title(f"{ens.problem(0).name}, {ens.method.name}: {len(ens):,} trajectories")
    return _finish(fig, path)


def sweep(result, path=None):
    """A :class:`~odekit.sweep.SweepResult`: each invariant at the end of the span, and its relative change,
    against the swept parameter; a line per method."""
    names = list(result.invariants(next(iter(result.runs))))
    if not names:
        raise ValueError(f"{result.problem} has no invariants to plot against {result.name}")
    fig = Figure(figsize=(10.0, 3.2 * len(names)))
    axes = fig.subplots(len(names), 2, squeeze=False)
    for m in result.runs:
        for row, (inv, (end, change)) in zip(axes, result.invariants(m).items()):
            row[0].plot(result.values, end, marker=".", color=colour(m), label=m)
            row[1].semilogy(result.values, np.maximum(change, 1e-17), marker=".", color=colour(m), label=m)
            row[0].set_ylabel(f"{inv} at t_end")
            row[1].set_ylabel(f"|{inv} change| / |{inv}(t0)|")
    for ax in axes[-1]:
        ax.set_xlabel(result.name)
    axes[0][1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(f"{result.problem}: sweep over {result.name}")
    return _finish(fig, path)
