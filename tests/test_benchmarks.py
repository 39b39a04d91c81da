"""Every benchmark still runs: its ``--quick`` mode exits 0 and prints its ratio tables.

Nothing else runs the benchmarks, and a benchmark nobody runs rots (as
torchdiffeq's shootout script did).  Each script runs as a user runs it,
``python benchmarks/bench_x.py --quick``, in its own process, on the odekit
these tests import.  Its figures are not checked -- at tiny sizes they mean
nothing -- but every ratio must be a finite positive number: a ratio that
came out ``nan`` or ``inf`` is a broken measurement.  A peer that is not
installed (a C compiler, SciPy) is skipped by the script with a note and its
ratios left out, so the tables need not be complete.
"""

import json
import math
import os
import pathlib
import re
import subprocess
import sys

import pytest

import odekit

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("bench_*.py"))
RATIOS = "ratios:"      # benchmarks/common.py's RATIOS: the first line of every ratio table


def ratio_tables(out):
    """``{title: {name: ratio}}`` of every ratio table printed in ``out``.

    A table is the line ``ratios: TITLE``, a header, then lines
    ``  NAME  VALUEx``, up to the first line that is not indented.
    """
    tables, current = {}, None
    for line in out.splitlines():
        if line.startswith(RATIOS):
            current = tables.setdefault(line[len(RATIOS):].strip(), {})
        elif current is not None and line.startswith("  "):
            name, _, value = line.strip().rpartition(" ")
            if value.endswith("x"):
                current[name.strip()] = float(value[:-1])
        else:
            current = None
    return tables


def test_scripts_are_found():
    assert {"bench_core.py", "bench_stiff.py", "bench_startup.py"} <= {s.name for s in SCRIPTS}


def test_make_bench_runs_every_script_with_its_peers():
    """A script left out of ``make bench`` is never run at full size; its peers come with the extra."""
    root = BENCHMARKS.parent
    listed = re.search(r"^BENCHMARKS := (.*)$", (root / "Makefile").read_text(), re.M).group(1).split()
    assert sorted(f"bench_{name}.py" for name in listed) == [s.name for s in SCRIPTS]
    peers = re.search(r"^peers = \[(.*)\]$", (root / "pyproject.toml").read_text(), re.M).group(1)
    for peer in ("numbalsoda", "rebound", "diffrax", "distributed"):
        assert peer in peers


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_quick_mode_runs_and_prints_finite_ratios(script, tmp_path):
    pytest.importorskip("scipy", reason="the benchmarks compare against SciPy")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(pathlib.Path(odekit.__file__).parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])]))
    figures = tmp_path / "figures.json"
    done = subprocess.run([sys.executable, str(script), "--quick", "--json", str(figures)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(figures.read_text())["quick"] is True
    tables = ratio_tables(done.stdout)
    assert tables, f"{script.name} printed no ratio table:\n{done.stdout[-3000:]}"
    for title, ratios in tables.items():
        assert ratios, f"ratio table {title!r} of {script.name} is empty"
        bad = {name: value for name, value in ratios.items() if not (math.isfinite(value) and value > 0)}
        assert not bad, f"{script.name}, {title!r}: ratios not finite and positive: {bad}"


def _common():
    """benchmarks/common.py, imported as the scripts import it."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import common
    finally:
        sys.path.remove(str(BENCHMARKS))
    return common


def test_the_tolerance_search_finds_the_loosest_tolerance_between_rungs_that_meets_the_target():
    """A solver whose error is 5 rtol meets 1e-4 from rtol 2e-5 on: the ladder's rung is 1e-5, the search's
    1e-5 * 10^(2/8) = 1.78e-5 (eighths of a decade from the rung above, 3.16e-5, the loosest that meets it)."""
    common = _common()
    tried = []

    def run(rtol):
        tried.append(rtol)
        return 5.0 * rtol

    ladder = [10.0 ** (-k / 2) for k in range(6, 13)]
    timing = common.Timing(repeats=1, batch_seconds=0.0)
    points = common.measure(run, ladder, timing, error=lambda y: y)
    assert common.at_target(points, 1e-4)[2] == 1e-5
    tried.clear()
    seconds, error, rtol = common.searched(run, points, 1e-4, timing, error=lambda y: y)
    assert rtol == pytest.approx(10.0 ** -4.75) and error == pytest.approx(5 * 10.0 ** -4.75) and seconds > 0
    assert sorted(set(tried), reverse=True) == pytest.approx([10.0 ** -4.625, 10.0 ** -4.75])   # looser first
    # a rung that is the ladder's loosest, or a target no rung meets: nothing to search
    assert common.searched(run, points, 1.0, timing, error=lambda y: y)[2] == ladder[0]
    assert common.searched(run, points, 1e-12, timing, error=lambda y: y) is None
