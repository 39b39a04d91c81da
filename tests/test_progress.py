"""Progress: the bar, and solves that report it without changing a single step."""

import io
import time

import numpy as np
import pytest

import odekit
from odekit.progress import Progress
from odekit.solve import _Reporting

KEPLER = odekit.problems.kepler(e=0.5, orbits=2)


@pytest.fixture
def small_chunks(monkeypatch):
    """Pause after every few steps, so that a short run is cut into many pieces."""
    monkeypatch.setattr(_Reporting, "FIRST_CHUNK", 7)
    monkeypatch.setattr(_Reporting, "INTERVAL", 0.0)


@pytest.mark.parametrize("method, options", [
    ("velocity_verlet", {"h": 0.01}),                                   # carries its force between steps
    ("dp54", {"rtol": 1e-8, "dense_output": True}),                     # PI controller memory
    ("rk4", {"h": 0.01, "t_eval": np.linspace(0.0, 12.0, 37)}),          # interpolated output
    ("rk4", {"rtol": 1e-6, "adaptive": "doubling"}),
    ("kencarp4", {"rtol": 1e-6}),                                       # Newton, Jacobians
    ("rodas4", {"rtol": 1e-6}),
    ("rk4", {"h": 0.01, "max_steps": 500}),                             # stops early
])
def test_a_solve_with_progress_is_the_same_run_bit_for_bit(small_chunks, method, options):
    calls = []
    plain = odekit.solve(KEPLER, method, backend="python", **options)
    reported = odekit.solve(KEPLER, method, backend="python", progress=lambda *a: calls.append(a), **options)
    assert np.array_equal(plain.t, reported.t) and np.array_equal(plain.y, reported.y)
    assert plain.stats == reported.stats and plain.status == reported.status and plain.message == reported.message
    if options.get("dense_output"):
        t = np.linspace(0.0, KEPLER.t_span[1], 101)
        assert np.array_equal(plain(t), reported(t))
    # many reports, the simulated time covered, never going back, of the whole span
    done = [c[0] for c in calls]
    assert len(calls) >= 5 and done == sorted(done)
    assert {c[1] for c in calls} == {KEPLER.t_span[1]} and {c[2] for c in calls} == {"t"}
    # a run that stopped early reports where it stopped (500 steps of 0.01)
    assert done[-1] == (KEPLER.t_span[1] if plain.success else reported.t[-1])


def test_progress_stops_at_the_end_of_the_span_on_the_compiled_backend(small_chunks):
    calls = []
    plain = odekit.solve(KEPLER, "forest_ruth", h=0.003)
    reported = odekit.solve(KEPLER, "forest_ruth", h=0.003, progress=lambda *a: calls.append(a))
    assert np.array_equal(plain.y, reported.y) and plain.stats == reported.stats
    assert calls[-1][:2] == (KEPLER.t_span[1], KEPLER.t_span[1])


def test_progress_must_be_callable():
    with pytest.raises(TypeError, match="progress must be a callable progress\\(done, total, label\\) or None, "
                                        "got str"):
        odekit.solve(KEPLER, "rk4", h=0.1, progress="yes")


def test_fractional_amounts_are_shown_to_three_digits():
    stream = io.StringIO()
    bar = Progress("solve", stream=stream, delay=0.0, width=10)
    bar(31.5, 62.83185, "t")
    assert "solve [#####.....] 31.5/62.8 t" in stream.getvalue()


def test_inside_a_with_block_the_bar_shows_while_nothing_reports():
    """Compiling on a first run reports nothing; the heartbeat draws the last state anyway."""
    stream = io.StringIO()
    with Progress("solve", stream=stream, delay=0.05, beat=0.01, width=4) as bar:
        bar(0.0, 10.0, "setting up")                 # before the delay: nothing drawn yet
        assert stream.getvalue() == ""
        deadline = time.perf_counter() + 5.0
        while "setting up" not in stream.getvalue() and time.perf_counter() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)
        assert stream.getvalue().count("setting up") == 1        # drawn once, not at every beat
    assert "solve [....] 0/10 setting up" in stream.getvalue()
    assert stream.getvalue().endswith("\n")                # leaving the block ends the line
    text = stream.getvalue()
    time.sleep(0.05)
    assert stream.getvalue() == text                       # and stops the heartbeat


def test_a_quiet_bar_draws_nothing_even_with_a_heartbeat():
    stream = io.StringIO()
    with Progress("solve", stream=stream, delay=0.0, beat=0.01, quiet=True) as bar:
        bar(1.0, 10.0, "t")
        time.sleep(0.05)
    assert stream.getvalue() == ""
