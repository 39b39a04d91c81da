"""The odekit command: each command runs, writes what it promises, and fails clearly."""

import csv
import functools
import inspect
import io
import json
import math
import os
import pathlib
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import warnings

import numpy as np
import pytest

import odekit
from odekit import cli
from odekit.progress import Progress
from odekit.shootout import DEFAULT_METHODS

PNG = b"\x89PNG\r\n\x1a\n"
ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_methods_lists_the_registry(capsys):
    code, out, _ = run(capsys, "methods")
    assert code == 0
    assert out.splitlines()[0].split()[:3] == ["name", "family", "order"]
    assert "forest_ruth" in out and "dp54" in out


def test_solve_prints_the_summary_and_writes_plot_and_csv(capsys, tmp_path):
    png, table = tmp_path / "sol.png", tmp_path / "sol.csv"
    code, out, _ = run(capsys, "solve", "kepler", "--method", "velocity_verlet", "--h", "0.01",
                       "--t-end", "6.2832", "--plot", str(png), "--csv", str(table))
    assert code == 0
    assert "steps 629 accepted" in out and "f-evaluations 630" in out
    # the printed error and drifts are the library's, for the same run
    sol = odekit.solve(odekit.problems.kepler(t_end=6.2832), "velocity_verlet", h=0.01)
    x, v = sol.problem.exact(sol.t[-1])
    error = float(np.max(np.abs(sol.y[-1] - np.stack([x, v]))))
    assert f"final error against the exact solution: {error:.3e}" in out
    energy = sol.invariants()["energy"]
    drift = np.abs(energy - energy[0]) / abs(energy[0])
    assert f"energy drift (relative): max {drift.max():.3e}, final {drift[-1]:.3e}" in out
    printed = re.search(r"angular_momentum drift \(relative\): max (\S+),", out)
    assert float(printed.group(1)) < 1e-13          # a splitting method keeps it to round-off
    assert png.read_bytes()[:8] == PNG
    rows = list(csv.reader(table.open()))
    assert rows[0] == ["t", "x0", "x1", "v0", "v1"] and len(rows) == 1 + 630
    assert float(rows[1][1]) == 0.5 and math.isclose(float(rows[-1][0]), 6.2832)


def test_solve_prints_the_event_log_at_the_closed_forms_bounce_times(capsys):
    code, out, _ = run(capsys, "solve", "bouncing_ball", "--method", "dp54", "--rtol", "1e-10",
                       "--backend", "python", "--quiet")
    assert code == 0
    lines = out.splitlines()
    start = lines.index("  events: 10")
    assert lines[start + 1].split() == ["t", "event", "component", "state", "before", "->", "after"]
    rows = [re.fullmatch(r"\s+(\S+)\s+floor\s+0\s+x (\S+), v (\S+) -> x (\S+), v (\S+)", line)
            for line in lines[start + 3:]]
    assert len(rows) == 10 and all(rows)
    # e = 0.9, g = 9.81, h0 = 10: landing k at t1 (1 + 2 e (1 - e^(k-1)) / (1 - e)), t1 = sqrt(2 h0 / g)
    t1, e = math.sqrt(2 * 10.0 / 9.81), 0.9
    expected = [t1 * (1 + 2 * e * (1 - e ** (k - 1)) / (1 - e)) for k in range(1, 11)]
    np.testing.assert_allclose([float(row[1]) for row in rows], expected, rtol=1e-10)
    for row in rows:
        x_before, v_before, x_after, v_after = (float(row[i]) for i in range(2, 6))
        assert abs(x_before) < 1e-12 and x_after == x_before
        assert v_after == pytest.approx(-e * v_before, rel=1e-5)        # as printed, to six digits


def test_solve_lists_the_first_events_of_many_and_counts_the_rest(capsys):
    code, out, _ = run(capsys, "solve", "bouncing_ball", "-p", "e=0.5", "--t-end", "10", "--backend", "python",
                       "--quiet")
    assert code == 1 and "status EVENTS_ACCUMULATE" in out           # the ball came to rest at t = 4.28
    count = int(re.search(r"  events: (\d+)", out).group(1))
    assert count > cli.EVENT_LINES
    assert len(re.findall(r"^\s+\S+\s+floor\s", out, re.M)) == cli.EVENT_LINES
    assert out.rstrip().endswith(f"    ... and {count - cli.EVENT_LINES} more")


def test_shootout_prints_the_table_and_writes_a_report(capsys, tmp_path):
    report = tmp_path / "report"
    code, out, _ = run(capsys, "shootout", "kepler", "--methods", "euler,rk4,velocity_verlet",
                       "--budget", "400", "--t-end", "6.2832", "--report", str(report), "--quiet")
    assert code == 0
    assert "400 derivative evaluations per unit time" in out
    assert [line.split()[0] for line in out.splitlines()[3:6]] == ["euler", "rk4", "velocity_verlet"]
    page = (report / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 2          # self-contained: images inside
    assert "http" not in page
    assert (report / "shootout.png").read_bytes()[:8] == PNG
    assert (report / "stability.png").read_bytes()[:8] == PNG
    methods = [row["method"] for row in csv.DictReader((report / "shootout.csv").open())]
    assert methods == ["euler", "rk4", "velocity_verlet"]


def test_the_damped_pendulum_shootout_runs_the_classic_eight(capsys):
    """`odekit shootout pendulum -p B=0.5`: the Verlet family and Forest-Ruth run too (#18)."""
    code, out, _ = run(capsys, "shootout", "pendulum", "-p", "B=0.5", "--budget", "200", "--t-end", "2",
                       "--backend", "python", "--quiet")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[3:11]] == list(DEFAULT_METHODS)


def test_convergence_reports_the_orders_and_plots(capsys, tmp_path):
    png = tmp_path / "conv.png"
    code, out, _ = run(capsys, "convergence", "kepler", "--methods", "heun,rk4", "--t-end", "2",
                       "--plot", str(png))
    assert code == 0
    orders = {line.split()[0]: float(line.split()[2]) for line in out.splitlines()
              if line.split() and line.split()[0] in ("heun", "rk4") and len(line.split()) > 6}
    assert abs(orders["heun"] - 2) < 0.25 and abs(orders["rk4"] - 4) < 0.25
    assert png.read_bytes()[:8] == PNG


def test_shootout_csv_holds_the_library_result(capsys, tmp_path):
    table = tmp_path / "shootout.csv"
    code, out, _ = run(capsys, "shootout", "kepler", "--methods", "heun,forest_ruth", "--budget", "300",
                       "--t-end", "3", "--csv", str(table), "--quiet")
    assert code == 0 and f"wrote {table}" in out
    expected = odekit.shootout(odekit.problems.kepler(t_end=3.0), ["heun", "forest_ruth"], budget=300)
    rows = list(csv.DictReader(table.open()))
    assert [r["method"] for r in rows] == ["heun", "forest_ruth"]
    for row, want in zip(rows, expected.rows):
        assert float(row["error"]) == want["error"] and int(row["nfev"]) == want["nfev"]   # full precision
        assert float(row["energy_drift"]) == want["energy_drift"] and row["energy_trend"] == want["energy_trend"]


def test_shootout_by_name_runs_ten_orbits_unless_told(capsys):
    code, out, _ = run(capsys, "shootout", "kepler", "--methods", "rk4", "--budget", "100", "--quiet")
    assert code == 0 and "shootout: kepler, t = 0 .. 62.8319," in out
    code, out, _ = run(capsys, "shootout", "kepler", "--methods", "rk4", "--budget", "100", "--quiet",
                       "-p", "orbits=2")
    assert code == 0 and "t = 0 .. 12.5664," in out


def test_convergence_csv_holds_the_library_result(capsys, tmp_path):
    table = tmp_path / "conv.csv"
    code, out, _ = run(capsys, "convergence", "kepler", "--methods", "heun,rk4", "--t-end", "1",
                       "--hs", "0.02,0.01,0.005", "--invariant", "energy", "--csv", str(table), "--quiet")
    assert code == 0 and f"wrote {table}" in out
    expected = odekit.analysis.convergence(odekit.problems.kepler(t_end=1.0), ["heun", "rk4"],
                                           [0.02, 0.01, 0.005], invariant="energy")
    rows = list(csv.DictReader(table.open()))
    assert [(r["method"], float(r["h"])) for r in rows] == [(r.method, r.h) for r in expected.rows]
    assert [float(r["error"]) for r in rows] == [r.error for r in expected.rows]
    assert [float(r["invariant_error"]) for r in rows] == [r.invariant_error for r in expected.rows]


def test_stability_states_the_facts_and_plots(capsys, tmp_path):
    png = tmp_path / "stab.png"
    code, out, _ = run(capsys, "stability", "euler", "trapezoid", "velocity_verlet", "--plot", str(png))
    assert code == 0
    assert "euler: R(z) = 1 + z" in out and "[-2, 0] and no imaginary hλ ≠ 0" in out
    assert "trapezoid: R(z) = (1 + 1/2 z) / (1 - 1/2 z)" in out and "A-stable: yes; L-stable: no" in out
    assert "stable for real hλ in (-∞, 0] and all imaginary hλ" in out and "inf" not in out
    assert "velocity_verlet: splitting method; on x'' = -ω²x stable for hω < 2" in out
    assert png.read_bytes()[:8] == PNG


@pytest.mark.parametrize("argv, pattern", [
    (["solve", "keplr", "--h", "0.1"], "unknown problem 'keplr'; closest: kepler"),
    (["solve", "kepler", "--method", "rk44", "--h", "0.1"], "unknown method 'rk44'; closest: rk4"),
    (["shootout", "kepler", "--methods", "verlett"], "unknown method 'verlett'"),
    (["shootout", "kepler", "--budget", "-1"], "budget must be a positive"),
    (["convergence", "lorenz", "--methods", "nope"], "unknown method 'nope'"),
    (["stability", "velocity_verlet", "--plot", "x.png"], "splitting methods have none"),
    (["solve", "kepler", "-p", "e"], "--param must look like NAME=VALUE"),
    (["solve", "kepler", "-p", "e=2", "--h", "0.1"], "e must be a number with 0 <= e < 1"),
    (["shootout", "keplr"], "unknown problem 'keplr'; closest: kepler"),
    (["convergence", "lorenzz", "--methods", "rk4"], "unknown problem 'lorenzz'; closest: lorenz"),
    (["stability", "rk4", "rk44"], "unknown method 'rk44'; closest: rk4"),
    (["solve", "kepler", "--h", "0.01", "--plot", "/nonexistent-folder/a.png"],
     "--plot /nonexistent-folder/a.png: the folder '/nonexistent-folder' does not exist"),
    (["solve", "kepler", "--h", "0.01", "--plot", "a.xyz"], "--plot a.xyz: Matplotlib cannot save .xyz files; "
                                                           "accepted: "),
    (["convergence", "kepler", "--methods", "rk4", "--csv", "/nonexistent-folder/c.csv"],
     "--csv /nonexistent-folder/c.csv: the folder '/nonexistent-folder' does not exist"),
    (["stability", "rk4", "--plot", "/nonexistent-folder/s.png"], "--plot /nonexistent-folder/s.png: the folder"),
    (["shootout", "kepler", "--report", "/proc/odekit-report"],
     "--report /proc/odekit-report: cannot create the folder: "),
    # a zero or an empty value is the user's, never a cue for the default
    (["solve", "kepler", "--rtol", "0"], "rtol must be positive and finite, got 0.0"),
    (["solve", "kepler", "--atol", "0"], "atol must be positive and finite, got 0.0"),
    (["solve", "kepler", "--h", "0"], "h must be a positive finite step size, got 0.0"),
    (["shootout", "kepler", "--methods", ""], "methods is empty"),
    (["shootout", "kepler", "--budget", "0"], "budget must be a positive"),
    (["convergence", "kepler", "--methods", ""], "methods is empty"),
    (["convergence", "kepler", "--methods", "rk4", "--hs", ""], "--hs must be a number or comma-separated "
                                                                "numbers, got ''"),
    (["convergence", "kepler", "--methods", "rk4", "--hs", "0.1,abc"], "--hs must be a number or "
                                                                       "comma-separated numbers, got '0.1,abc'"),
    (["solve", "kepler", "--h", "0.01", "--plot", ""], "--plot is empty; accepted: a file name"),
    (["solve", "kepler", "--h", "0.01", "--csv", ""], "--csv is empty; accepted: a file name"),
    (["shootout", "kepler", "--report", ""], "--report is empty; accepted: a folder"),
    (["stability", "rk4", "--plot", ""], "--plot is empty"),
    (["solve", "kepler", "-p", "e=", "--h", "0.01"], "--param e must be a number or comma-separated numbers"),
])
def test_bad_names_and_values_fail_with_a_clear_message(capsys, argv, pattern):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("odekit: error: ") and pattern in err


def test_unwritable_outputs_are_refused_before_any_work(capsys, tmp_path, monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("the work started before the outputs were checked")

    monkeypatch.setattr(cli, "shootout", no_work)
    monkeypatch.setattr(cli, "solve", no_work)
    a_file = tmp_path / "taken"
    a_file.write_text("")
    for argv, message in [
        (["shootout", "kepler", "--report", str(a_file)], f"--report {a_file}: is a file"),
        (["shootout", "kepler", "--csv", str(tmp_path)], f"--csv {tmp_path}: is a folder"),
        (["shootout", "kepler", "--report", "/proc/odekit-x"], "--report /proc/odekit-x: cannot create the folder"),
        (["solve", "kepler", "--plot", str(tmp_path / "no" / "a.png")], "does not exist"),
    ]:
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and err.startswith("odekit: error: ") and message in err, argv
    # a report folder is made (as the command would) and probed, and nothing else is left in it
    with pytest.raises(AssertionError, match="the work started"):
        cli.main(["shootout", "kepler", "--report", str(tmp_path / "new" / "report")])
    assert list((tmp_path / "new" / "report").iterdir()) == []


def test_a_write_that_fails_anyway_is_an_error_line_not_a_traceback(capsys, tmp_path, monkeypatch):
    def full_disk(self, path=None):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(odekit.Solution, "plot", full_disk)
    png = tmp_path / "a.png"
    code, _, err = run(capsys, "solve", "kepler", "--h", "0.01", "--plot", str(png), "--quiet")
    assert code == 2 and err == f"odekit: error: cannot write {png}: No space left on device\n"


@pytest.fixture
def eager_bar(monkeypatch):
    """The commands' progress bars, drawn from the start instead of after a second."""
    monkeypatch.setattr(cli, "Progress", functools.partial(Progress, delay=0.0))


@pytest.mark.parametrize("argv, title", [
    (["solve", "kepler", "--method", "rk4", "--h", "0.01"], "solve"),
    (["shootout", "kepler", "--methods", "euler,rk4", "--budget", "100"], "shootout"),
    (["convergence", "kepler", "--methods", "rk4", "--t-end", "1", "--hs", "0.1,0.05"], "convergence"),
    (["stability", "euler", "rk4"], "stability"),
])
def test_every_command_draws_a_progress_bar_that_quiet_silences(capsys, eager_bar, argv, title):
    code, out, err = run(capsys, *argv)
    assert code == 0 and out
    assert re.search(rf"\r{title} \[#+\] \S+/\S+", err) and err.endswith("\n")   # a full bar, line ended
    assert "[#" not in out                                                        # the bar is not in the table
    code, out_quiet, err = run(capsys, *argv, "--quiet")
    assert code == 0 and err == ""
    assert out_quiet.replace("wall time", "").split("\n")[0] == out.split("\n")[0]


def test_the_installed_command_runs():
    done = subprocess.run([sys.executable, "-m", "odekit.cli", "methods"], capture_output=True, text=True)
    assert done.returncode == 0 and "yoshida6" in done.stdout


def test_progress_bar_stays_silent_for_short_work_and_quiet_runs():
    stream = io.StringIO()
    bar = Progress("job", stream=stream, delay=1.0)
    bar(1, 2, "a")
    bar(2, 2, "b")
    assert stream.getvalue() == ""
    quiet = Progress("job", stream=stream, delay=0.0, quiet=True)
    quiet(1, 1, "a")
    assert stream.getvalue() == ""


def test_progress_bar_draws_for_long_work_and_ends_its_line():
    stream = io.StringIO()
    bar = Progress("job", stream=stream, delay=0.0, width=10)
    bar(1, 4, "first")
    assert "[##........] 1/4 first" in stream.getvalue()
    bar(4, 4, "last")
    assert stream.getvalue().endswith("\n") and "[##########] 4/4 last" in stream.getvalue()


def test_progress_bar_interrupted_as_it_draws_still_ends_its_line():
    class Interrupting(io.StringIO):
        pressed = True

        def write(self, text):          # Ctrl-C arrives just after the text is out
            super().write(text)
            if self.pressed:
                raise KeyboardInterrupt

    stream = Interrupting()
    bar = Progress("job", stream=stream, delay=0.0)
    with pytest.raises(KeyboardInterrupt):
        bar(1, 4, "first")
    stream.pressed = False
    bar.close()
    assert stream.getvalue().endswith(" 1/4 first               \n")


def test_solve_takes_a_linear_solver_for_the_cloth(capsys):
    code, out, _ = run(capsys, "solve", "cloth", "--method", "linearized_euler", "--h", str(1 / 60),
                       "--t-end", "0.1", "-p", "n=6", "--linear-solver", "cg", "--quiet")
    assert code == 0
    sol = odekit.solve(odekit.problems.cloth(n=6, t_end=0.1), "linearized_euler", h=1 / 60, linear_solver="cg")
    assert f"steps {sol.stats.naccepted} accepted" in out and sol.stats.nlu == 6


def test_solve_refuses_an_unknown_linear_solver(capsys):
    with pytest.raises(SystemExit):
        run(capsys, "solve", "cloth", "--method", "backward_euler", "--linear-solver", "qr")
    assert "invalid choice: 'qr'" in capsys.readouterr().err


# --- what a newcomer meets ---------------------------------------------------------------

def test_version_comes_from_the_one_version_the_package_declares(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"odekit {odekit.__version__}\n"
    # the package metadata reads the same attribute: there is no second number to forget
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "odekit.__version__"}


def test_problems_lists_every_problem_with_the_parameters_of_its_constructor(capsys):
    code, out, _ = run(capsys, "problems")
    assert code == 0
    lines = out.splitlines()
    for name, make in odekit.problems.PROBLEMS.items():
        (i,) = [i for i, line in enumerate(lines) if line.startswith(f"{name}: ")]
        listed = dict(item.split("=", 1) for item in re.split(r"\s{2,}", lines[i + 1].removeprefix("  -p ")))
        defaults = {p.name: p.default for p in inspect.signature(make).parameters.values()}
        assert list(listed) == list(defaults), name
        for key, default in defaults.items():
            assert _value(listed[key]) == (None if default is None else pytest.approx(default, rel=1e-5)), (name, key)


def _value(text):
    """A default as `odekit problems` shows it -- 9.8, (1, 0), None -- back as a Python value."""
    if text == "None":
        return None
    numbers = tuple(float(v) for v in text.strip("()").split(","))
    return numbers if text.startswith("(") else numbers[0]


def test_an_unknown_parameter_is_refused_with_the_accepted_ones_and_their_defaults(capsys):
    code, out, err = run(capsys, "solve", "pendulum", "-p", "damping=0.1", "--h", "0.01")
    assert code == 2 and out == ""
    accepted = inspect.signature(odekit.problems.pendulum).parameters.values()
    expected = ", ".join(f"{p.name}={'None' if p.default is None else format(p.default, 'g')}" for p in accepted)
    assert err == f"odekit: error: problem 'pendulum' got an unexpected keyword 'damping'; accepted: {expected}\n"
    code, out, _ = run(capsys, "solve", "pendulum", "-p", "B=0.1", "--h", "0.01", "--quiet", "--backend", "python")
    assert code == 0                                      # the damping is called B


def test_a_vector_parameter_is_given_as_comma_separated_numbers(capsys):
    code, out, _ = run(capsys, "solve", "rotation", "-p", "y0=0,2", "--h", "0.01", "--t-end", "1",
                       "--backend", "python", "--quiet")
    assert code == 0
    sol = odekit.solve(odekit.problems.rotation(y0=(0.0, 2.0), t_end=1.0), "dp54", h=0.01, backend="python")
    assert f"radius drift (relative): max {odekit.analysis.invariant_drift(sol, 'radius').max:.3e}" in out


def test_a_status_prints_as_its_name_and_still_equals_its_number():
    sol = odekit.solve(odekit.problems.decay(), "rk4", h=0.1, backend="python")
    assert str(sol.status) == f"{sol.status}" == "Status.SUCCESS"
    assert sol.status == 0 and isinstance(sol.status, int)
    stopped = odekit.solve(odekit.problems.decay(t_end=10.0), "dp54", rtol=1e-6, max_steps=3, backend="python")
    assert str(stopped.status) == "Status.MAX_STEPS" and stopped.status == odekit.Status.MAX_STEPS < 0


def test_the_wall_time_mentions_compilation_only_when_numba_compiled(capsys):
    argv = ["solve", "kepler", "--method", "rk4", "--h", "0.01", "--quiet"]
    run(capsys, *argv)                              # compiles what this process has not compiled yet
    for backend in ("auto", "python"):              # nothing left to compile / nothing compiled at all
        code, out, _ = run(capsys, *argv, "--backend", backend)
        assert code == 0 and re.search(r"wall time \d+\.\d{3} s\n", out) and "compil" not in out, backend


def test_the_compile_timer_counts_what_numba_compiles_in_the_block():
    numba = pytest.importorskip("numba")
    square = numba.njit(lambda x: x * x)
    with cli._compile_timer("auto") as first:
        square(3.0)
    with cli._compile_timer("auto") as again:
        square(4.0)                                 # the same types: compiled already
    assert first.seconds > 0 and again.seconds == 0


def test_make_demo_installs_odekit_alone_and_make_test_the_test_extras():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")

    def dry_run(target):
        done = subprocess.run(["make", "-n", "-C", str(ROOT), target, "BIN=/nonexistent/bin"],
                              capture_output=True, text=True, check=True)
        return [line for line in done.stdout.splitlines() if "pip install" in line and "--upgrade pip" not in line]

    (demo,) = dry_run("demo")
    assert demo.endswith("pip install --quiet -e .")            # no extras: no server, no Playwright
    (test,) = dry_run("test")
    assert test.endswith("pip install --quiet -e '.[test]'")
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_installs_from_the_checkout():
    """odekit is on no package index: every pip install in the README names this checkout."""
    commands = [c.split("#")[0].strip() for c in re.findall(r"pip install[^\n`]*", (ROOT / "README.md").read_text())]
    assert commands and all(re.fullmatch(r"pip install -e (\.|'\.\[\w+\]')", c) for c in commands), commands


def test_serve_without_its_extra_says_how_to_install_it_from_the_checkout(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)          # as if the serve extra were not installed
    code, out, err = run(capsys, "serve")
    assert code == 2 and out == ""
    assert err == ("odekit: error: odekit serve needs the 'serve' extra (uvicorn is missing): "
                   "python -m pip install -e '.[serve]' in the odekit checkout\n")


def test_euler_going_over_the_top_of_the_pendulum_is_secular_not_too_short(capsys):
    """The README's pendulum shootout: Euler's pendulum gains energy until it rotates."""
    code, out, _ = run(capsys, "shootout", "pendulum", "--budget", "200", "--t-end", "30", "-p", "B=0",
                       "--methods", "euler,velocity_verlet", "--quiet", "--backend", "python")
    assert code == 0
    euler = out.splitlines()[3].split()
    assert euler[0] == "euler" and euler[-1] == "secular" and float(euler[-2]) > 0.5    # energy +55 %


# --- Ctrl-C, and failures that are no fault of the command line: a line, not a traceback ---------

SRC = str(pathlib.Path(odekit.__file__).resolve().parents[1])     # this checkout's odekit, for subprocesses
LIMIT = 120                                                        # seconds a subprocess may take


def odekit_process(*argv, stdout=subprocess.PIPE):
    return subprocess.Popen([sys.executable, "-m", "odekit.cli", *argv], stdout=stdout, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": SRC})


def ctrl_c(argv, label):
    """Run ``odekit argv``, press Ctrl-C once its progress bar shows the run ``label`` under way.

    Returns ``(status, stdout, stderr)``.  The bar appears after a second of
    work, when a run on the Python backend has passed its first slice of
    steps and keeps what it computed.
    """
    proc = odekit_process(*argv)
    seen, deadline = b"", time.monotonic() + LIMIT
    try:
        while not [done for done, run in re.findall(rb"\] ([0-9.e+-]+)/\S+ (\S+)", seen)
                   if run.decode() == label and float(done) > 0]:
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
            assert time.monotonic() < deadline and (chunk or not ready), seen.decode() + proc.stderr.read().decode()
            seen += chunk
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=LIMIT)
    finally:
        proc.kill()
    return proc.returncode, out.decode(), (seen + err).decode()


def test_ctrl_c_in_solve_says_where_it_stopped_and_keeps_the_steps_in_the_csv(tmp_path):
    table = tmp_path / "steps.csv"
    code, out, err = ctrl_c(["solve", "kepler", "--method", "rk4", "--h", "1e-5", "--t-end", "1000",
                             "--backend", "python", "--csv", str(table)], "t")
    assert code == 130 and out == "" and "Traceback" not in err
    line = err.split("\n")[-2]                  # the bar's line is ended first
    stop = re.fullmatch(r"odekit: solve: rk4 on kepler: interrupted by Ctrl-C at t=(\S+) after ([0-9,]+) steps; "
                        rf"the steps so far are in {re.escape(str(table))}", line)
    assert stop, err
    steps = int(stop.group(2).replace(",", ""))
    rows = list(csv.reader(table.open()))
    assert len(rows) == 1 + steps + 1 and steps > 1000             # the header, t0, every step
    assert f"{float(rows[-1][0]):.6g}" == stop.group(1) and math.isclose(float(rows[-1][0]), steps * 1e-5)


def test_ctrl_c_in_a_shootout_names_the_run_and_writes_nothing(tmp_path):
    table = tmp_path / "table.csv"
    code, out, err = ctrl_c(["shootout", "kepler", "--methods", "euler,rk4", "--budget", "1e6", "--backend",
                             "python", "--csv", str(table)], "euler")
    assert code == 130 and out == "" and "Traceback" not in err
    assert re.fullmatch(r"odekit: shootout: euler on kepler: interrupted by Ctrl-C at t=\S+ after [0-9,]+ steps; "
                        r"nothing written", err.split("\n")[-2]), err
    assert not table.exists()


@pytest.mark.parametrize("argv, where", [
    (["solve", "kepler", "--h", "0.01", "--quiet"], "solve"),
    (["stability", "rk4", "--quiet"], "analysis.stability_function"),
])
def test_ctrl_c_before_a_run_has_steps_is_a_line_too(capsys, monkeypatch, argv, where):
    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(odekit.analysis if "." in where else cli, where.split(".")[-1], pressed)
    try:
        code, out, err = run(capsys, *argv)
    except KeyboardInterrupt:               # not to stop the test session
        pytest.fail("Ctrl-C went through odekit's main()")
    assert (code, out, err) == (130, "", f"odekit: {argv[0]}: interrupted by Ctrl-C\n")


@pytest.mark.parametrize("argv, failed", [
    (["convergence", "lorenz", "--methods", "rk4", "--t-end", "1", "--hs", "0.01,0.005"], "the reference run"),
    (["shootout", "lorenz", "--methods", "euler", "--t-end", "1", "--budget", "100"], "the reference solution"),
])
def test_a_failed_reference_run_is_an_error_line_not_a_traceback(capsys, argv, failed):
    # a state of 1e100 grows past the reference's million steps in the first 1e-96 of time
    with warnings.catch_warnings():         # and h = 0.01 is far beyond rk4's stability limit there
        warnings.simplefilter("ignore", odekit.StiffnessWarning)
        code, out, err = run(capsys, *argv, "-p", "y0=1e100,1e100,1e100", "--quiet")
    assert code == 1 and out == ""
    assert err.startswith(f"odekit: error: {failed} ") and "failed: max_steps=1000000 reached" in err


def test_output_to_a_reader_that_went_away_ends_quietly():
    proc = odekit_process("methods", "--markdown")
    proc.stdout.close()                         # `odekit methods --markdown | head -0`
    _, err = proc.communicate(timeout=LIMIT)
    assert proc.returncode == 141 and err == b""


def test_ctrl_c_stops_odekit_serve_without_a_traceback():
    pytest.importorskip("uvicorn", reason="odekit serve needs the 'serve' extra")
    from websockets.sync.client import connect

    proc = odekit_process("serve")
    try:
        line = proc.stdout.readline().decode()
        assert line.startswith("odekit serve: http://127.0.0.1:"), line + proc.stderr.read().decode()
        with connect(f"ws://{line.split()[2].split('//')[1].rstrip('/')}/ws", open_timeout=30) as ws:
            assert json.loads(ws.recv(timeout=60))["type"] == "hello"
            ws.send('{"type": "start", "solvers": ["euler"]}')
            assert json.loads(ws.recv(timeout=60))["type"] == "state"      # a page served, its frames sent
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=LIMIT)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err.decode() and out == b"", err.decode()
