"""The shootout report: a folder with PNG plots, a CSV and one self-contained HTML page.

The page embeds its images (as data URIs), so ``report.html`` can be mailed
or archived on its own; the PNG files beside it are the same images.
"""

import base64
import datetime
import html
import pathlib
import platform

from . import __version__
from .shootout import format_cell


def write_report(result, directory):
    """Write ``shootout.png``, ``stability.png``, ``shootout.csv`` and ``report.html`` into ``directory``.

    ``stability.png`` shows the stability regions of the Runge--Kutta
    methods of the shootout (splitting methods have none in the complex
    plane); it is left out when there are none.

    Parameters
    ----------
    result : ShootoutResult
    directory : str or Path
        Created if needed.

    Returns
    -------
    Path
        The HTML page.
    """
    from . import plot

    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    figures = [("shootout.png", "Trajectories, energy error and position error", result.plot)]
    runge_kutta = [sol.method.name for sol in result.solutions.values() if not sol.method.second_order_only]
    if runge_kutta:
        figures.append(("stability.png", "Stability regions |R(hλ)| ≤ 1 of the Runge-Kutta methods",
                        lambda path: plot.stability_regions(runge_kutta, path)))
    images = []
    for filename, title, draw in figures:
        draw(out / filename)
        images.append((filename, title))
    result.to_csv(out / "shootout.csv")
    page = out / "report.html"
    page.write_text(_page(result, out, images), encoding="utf-8")
    return page


def _page(result, out, images):
    prob = result.problem
    t0, t1 = prob.t_span
    cols = result.columns
    # a long column name may break after its underscores; a number never breaks
    head = "".join(f"<th>{html.escape(c).replace('_', '_<wbr>')}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(format_cell(row.get(c)))}</td>" for c in cols) + "</tr>"
        for row in result.rows)
    figures = "".join(
        f'<figure><img alt="{html.escape(title)}" src="data:image/png;base64,'
        f'{base64.b64encode((out / name).read_bytes()).decode()}"><figcaption>{html.escape(title)} '
        f'(<a href="{html.escape(name)}">{html.escape(name)}</a>)</figcaption></figure>'
        for name, title in images)
    methods = "".join(f"<li><code>{html.escape(sol.method.name)}</code>: {html.escape(sol.method.summary())}</li>"
                      for sol in result.solutions.values())
    stamp = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>odekit shootout: {html.escape(prob.name)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; padding: 0 1em; max-width: 1200px; color: #222; }}
.table {{ overflow-x: auto; }}
table {{ border-collapse: collapse; font-size: 0.85em; font-variant-numeric: tabular-nums; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.45em; text-align: right; }}
th {{ vertical-align: bottom; }}
td {{ white-space: nowrap; }}
th:first-child, td:first-child {{ text-align: left; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; }}
.note {{ color: #555; }}
</style></head><body>
<h1>Shootout: {html.escape(prob.name)}</h1>
<p>Every method spends the same budget, <b>{result.budget:g} derivative evaluations per unit of
simulated time</b>, on t = {t0:g} .. {t1:g}: a method using k evaluations per step takes steps of
h = k / {result.budget:g}.</p>
<p class="note">error: largest deviation of the positions (or state) from the exact or a tight
reference solution. Drifts: largest relative change of the invariant over the run;
energy_change: signed relative change at the end; energy_trend: whether the energy error grows
(secular) or stays bounded, or "too short" for a run of fewer than about four oscillations.
energy_error (a problem whose energy is not conserved: damping, impacts): largest deviation of the
energy from the true one, relative to the initial energy.</p>
<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>
{figures}
<h2>Methods</h2><ul>{methods}</ul>
<p class="note">odekit {__version__}, Python {platform.python_version()}, {html.escape(platform.platform())},
{stamp}. Data: <a href="shootout.csv">shootout.csv</a>.</p>
</body></html>
"""

