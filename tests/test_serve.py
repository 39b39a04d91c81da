"""`odekit serve`: the session's physics and protocol, and the WebSocket server around it.

The page's tests in a real browser are in test_serve_browser.py.
"""

import json
import math

import numpy as np
import pytest

pytest.importorskip("starlette", reason="odekit serve needs the 'serve' extra")

from starlette.testclient import TestClient  # noqa: E402

from odekit import IntegrationError, Status, method, problems  # noqa: E402
from odekit.serve import session as S  # noqa: E402
from odekit.serve.app import TRY_AGAIN_LATER, create_app  # noqa: E402


class Clock:
    """Wall time that moves only when a test says so."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def started(**settings):
    clock = Clock()
    session = S.Session(clock)
    reply = session.handle(json.dumps({"type": "start", **settings}))
    assert reply[0]["type"] == "state", reply
    return session, clock


def run(session, clock, sim_seconds):
    """Frames until ``sim_seconds`` of simulated time have passed; the last frame."""
    per_frame = S.MAX_FRAME_WALL * S.SIM_PER_WALL * session.settings["speed"]
    frame = None
    for _ in range(math.ceil(sim_seconds / per_frame - 1e-9)):
        clock.now += S.MAX_FRAME_WALL
        frame = session.frame()
    return frame


def error_of(session, message):
    text = message if isinstance(message, str) else json.dumps(message)
    (reply,) = session.handle(text)
    assert reply["type"] == "error", reply
    return reply


# --- what the page is offered -------------------------------------------------------------

def test_hello_offers_the_shootout_eight_first_and_only_methods_that_apply():
    hello = S.hello()
    assert hello["methods"]["orbit"][:8] == list(S.DEFAULT_METHODS)
    damped = hello["methods"]["pendulum_damped"]
    # the pendulum declares its damping: the Verlet family and Forest-Ruth solve it exactly (#18)
    assert damped[:8] == list(S.DEFAULT_METHODS) and damped == hello["methods"]["pendulum"]
    for name in set().union(*hello["methods"].values()):
        assert hello["info"][name]["evaluations_per_step"] >= 1     # a rate fixes its step
    assert "bdf" not in hello["stability_methods"] and "radau5" in hello["stability_methods"]
    assert json.loads(json.dumps(hello)) == hello                   # all of it is JSON


# --- the physics: odekit's numbers -----------------------------------------------------------

def test_orbit_readouts_at_the_start_are_the_closed_forms_of_the_ellipse():
    e = 0.3
    session, clock = started(scene="orbit", solvers=["rk4"], e=e)
    r = session.frame()["runners"][0]
    assert r["x"] == [1 - e, 0.0]
    assert r["energy"]["total"] == pytest.approx(-0.5, rel=1e-14)
    assert r["energy"]["kinetic"] == pytest.approx(0.5 * (1 + e) / (1 - e), rel=1e-14)
    assert r["readouts"]["angular_momentum"] == pytest.approx(math.sqrt(1 - e * e), rel=1e-14)
    assert r["readouts"]["eccentricity"] == pytest.approx(e, rel=1e-12)
    assert r["readouts"]["period"] == pytest.approx(2 * math.pi, rel=1e-13)
    assert r["accel"] == pytest.approx([-1 / (1 - e) ** 2, 0.0], rel=1e-14)


def test_orbit_readouts_agree_with_the_problems_invariants_along_the_run():
    session, clock = started(scene="orbit", solvers=["euler", "forest_ruth"], rate=300, speed=10, e=0.5)
    inv = problems.kepler(e=0.5).invariants
    frame = run(session, clock, 7.0)
    assert frame["t"] == pytest.approx(7.0)
    for r in frame["runners"]:
        x, v = np.array(r["x"]), np.array(r["v"])
        assert r["energy"]["total"] == inv["energy"](0, x, v)
        assert r["energy"]["kinetic"] + r["energy"]["potential"] == pytest.approx(r["energy"]["total"], abs=1e-15)
        assert r["readouts"]["angular_momentum"] == inv["angular_momentum"](0, x, v)
        assert r["readouts"]["eccentricity"] == inv["eccentricity"](0, x, v)
        assert r["readouts"]["radius"] == pytest.approx(math.hypot(*x), rel=1e-15)
        assert r["readouts"]["r_min"] <= r["readouts"]["radius"] <= r["readouts"]["r_max"]
        a = -1 / (2 * r["energy"]["total"])
        assert r["readouts"]["period"] == pytest.approx(2 * math.pi * a ** 1.5, rel=1e-14)


def test_extreme_radii_are_over_every_step_and_the_path_follows_the_orbit_between_frames():
    e = 0.7
    session, clock = started(scene="orbit", solvers=["rk4"], rate=4000, speed=100, e=e)
    start = session.frame()["runners"][0]["readouts"]
    assert start["r_min"] == start["r_max"] == pytest.approx(1 - e)
    clock.now += S.MAX_FRAME_WALL
    r = session.frame()["runners"][0]                   # one frame: ten time units, 1.6 orbits
    assert r["readouts"]["r_min"] == pytest.approx(1 - e, abs=1e-6)     # from pericentre,
    assert r["readouts"]["r_max"] == pytest.approx(1 + e, abs=1e-6)     # through apocentre
    path = np.array(r["path"])
    assert path.shape == (S.PATH_POINTS, 2) and len(np.unique(path, axis=0)) == S.PATH_POINTS
    energy = problems.kepler(e=e).invariants["energy"]
    for x in path:      # points of the orbit itself: on the ellipse of energy -1/2 ...
        assert 1 - e - 1e-9 <= math.hypot(*x) <= 1 + e + 1e-9
        y = abs(x[1])   # ... x = cos E - e, y = sqrt(1 - e^2) sin E
        assert (x[0] + e) ** 2 + (y / math.sqrt(1 - e * e)) ** 2 == pytest.approx(1.0, abs=1e-6)
    assert energy(0, np.array(r["x"]), np.array(r["v"])) == pytest.approx(-0.5, abs=1e-6)
    session.handle('{"type": "set", "paused": true}')
    clock.now += S.MAX_FRAME_WALL
    assert session.frame()["runners"][0]["path"] == []    # nothing moved


def test_steps_are_h_equal_to_evaluations_per_step_over_the_rate():
    rate = 400.0
    session, clock = started(scene="orbit", solvers=["rk4", "euler"], rate=rate, speed=10)
    frame = run(session, clock, 5.0)
    for r in frame["runners"]:
        h = method(r["solver"]).evaluations_per_step / rate
        assert r["steps"] in (math.floor(5.0 / h) - 1, math.floor(5.0 / h))   # the rest is owed, < 1 step
        assert r["nfev"] >= r["steps"] * method(r["solver"]).evaluations_per_step


def test_euler_energy_grows_while_velocity_verlet_stays_bounded():
    rate = 100.0            # h = 0.01: 630 steps per orbit
    session, clock = started(scene="orbit", solvers=["euler", "velocity_verlet"], rate=rate, speed=100)
    errors = {"euler": [], "velocity_verlet": []}
    for _ in range(5):       # five times ten time units, about eight orbits
        for r in run(session, clock, 10.0)["runners"]:
            errors[r["solver"]].append(r["energy_error"])
    euler, verlet = errors["euler"], errors["velocity_verlet"]
    assert all(b > a for a, b in zip(euler, euler[1:])) and euler[-1] > 0.1       # secular growth
    # velocity Verlet's modified energy is within O(h^2) of the true one: bounded, no trend
    assert max(map(abs, verlet)) < 0.01 ** 2 * 20


def test_thrust_prograde_adds_the_energy_of_the_velocity_change_exactly():
    session, clock = started(scene="orbit", solvers=["velocity_verlet"], rate=1000, speed=10)
    before = run(session, clock, 1.0)["runners"][0]
    session.handle('{"type": "thrust", "direction": "prograde"}')
    after = session.frame()["runners"][0]       # same wall time: no step in between
    assert after["x"] == before["x"]
    speed = math.hypot(*before["v"])
    dv = S.THRUST_DV
    assert after["energy"]["total"] - before["energy"]["total"] == pytest.approx(speed * dv + dv * dv / 2, rel=1e-9)
    assert after["thrust"] == pytest.approx(dv * np.array(before["v"]) / speed, rel=1e-12)
    assert after["energy_error"] == 0.0           # measured from the burn on


def test_radial_burn_keeps_the_angular_momentum_and_retrograde_lowers_energy():
    session, clock = started(scene="orbit", solvers=["rk4"], rate=1000, speed=10)
    before = run(session, clock, 2.0)["runners"][0]
    session.handle('{"type": "thrust", "direction": "radial_out"}')
    radial = session.frame()["runners"][0]
    assert radial["readouts"]["angular_momentum"] == pytest.approx(before["readouts"]["angular_momentum"],
                                                                    abs=1e-15)
    assert radial["readouts"]["eccentricity"] != pytest.approx(before["readouts"]["eccentricity"], abs=1e-6)
    session.handle('{"type": "thrust", "direction": "retrograde"}')
    assert session.frame()["runners"][0]["energy"]["total"] < radial["energy"]["total"]


def test_changing_solver_goes_on_from_the_current_state_and_reset_goes_back():
    session, clock = started(scene="orbit", solvers=["rk4"], rate=500, speed=10)
    before = run(session, clock, 3.0)
    (reply,) = session.handle('{"type": "set", "solvers": ["euler", "leapfrog"], "rate": 200}')
    assert reply["settings"]["solvers"] == ["euler", "leapfrog"] and reply["settings"]["rate"] == 200
    now = session.frame()
    assert now["t"] == before["t"]
    assert [r["solver"] for r in now["runners"]] == ["euler", "leapfrog"]
    assert all(r["x"] == before["runners"][0]["x"] and r["v"] == before["runners"][0]["v"] for r in now["runners"])
    (reply,) = session.handle('{"type": "reset"}')
    assert reply["settings"]["solvers"] == ["euler", "leapfrog"]
    fresh = session.frame()
    assert fresh["t"] == 0.0 and fresh["runners"][0]["x"] == [0.5, 0.0]


def test_pause_stops_the_clock_of_the_simulation():
    session, clock = started(scene="orbit", solvers=["rk4"], speed=10)
    t = run(session, clock, 2.0)["t"]
    session.handle('{"type": "set", "paused": true}')
    assert run(session, clock, 5.0)["t"] == t
    session.handle('{"type": "set", "paused": false}')
    assert run(session, clock, 1.0)["t"] == pytest.approx(t + 1.0)


def test_pendulum_energy_bars_and_damping():
    session, clock = started(scene="pendulum", solvers=["rk4"], rate=2000, speed=1)
    r = session.frame()["runners"][0]
    assert r["energy"]["kinetic"] == 0.0
    assert r["energy"]["total"] == pytest.approx(9.8 * (1 - math.cos(2.0)), rel=1e-15)
    assert r["readouts"]["period"] == pytest.approx(problems.pendulum_period(9.8, 1.0, 2.0, 0.0), rel=1e-15)
    assert r["accel"] == pytest.approx(-9.8 * math.sin(2.0), rel=1e-15)
    session.handle('{"type": "set", "B": 0.5, "speed": 10}')
    e0 = session.frame()["runners"][0]["energy"]["total"]
    damped = run(session, clock, 3.0)["runners"][0]
    assert damped["energy"]["total"] < 0.5 * e0        # loses energy at about 2 B per unit time


def test_the_damped_pendulum_runs_the_verlet_family_and_forest_ruth_on_the_same_swing():
    """The damping is declared (#18): velocity Verlet and Forest-Ruth run it, and agree with RK4 at t = 3
    to their errors at this rate (h = 1/2000 and 3/2000: relative 5e-7 and 6e-11 measured)."""
    session, clock = started(scene="pendulum", solvers=["rk4", "velocity_verlet", "forest_ruth"], rate=2000,
                             speed=10, B=0.5)
    rk4, verlet, forest_ruth = run(session, clock, 3.0)["runners"]
    assert rk4["t"] == verlet["t"] == forest_ruth["t"] == 3.0
    assert rk4["energy"]["total"] < 0.25 * 9.8 * (1 - math.cos(2.0))
    assert verlet["energy"]["total"] == pytest.approx(rk4["energy"]["total"], rel=5e-6)
    assert forest_ruth["energy"]["total"] == pytest.approx(rk4["energy"]["total"], rel=1e-9)
    # the acceleration shown is the whole of it, the declared damping's part too
    assert rk4["accel"] == pytest.approx(-9.8 * math.sin(rk4["x"]) - 0.5 * rk4["v"], rel=1e-14)


def test_a_failed_runner_keeps_its_last_good_state_and_says_why_while_the_others_go_on():
    session, clock = started(scene="orbit", solvers=["euler", "rk4"], rate=100, speed=10)
    good = run(session, clock, 1.0)["runners"][0]
    euler = session.runners[0]

    def fails(n=1):             # as the Integrator does: no step was good, the state stays
        error = IntegrationError(Status.NONFINITE.value, "the state overflowed")
        error.t, error.y = np.array([euler.integ.t]), euler.integ.y[None]
        raise error

    euler.integ.record_steps = fails
    frame = run(session, clock, 1.0)
    failed, rk4 = frame["runners"]
    assert failed["status"] == "failed" and failed["message"] == "the state overflowed"
    assert failed["x"] == good["x"] and failed["steps"] == good["steps"]
    assert rk4["status"] == "running" and frame["t"] == pytest.approx(2.0)
    assert run(session, clock, 1.0)["runners"][0]["steps"] == good["steps"]     # it stays stopped


def crash(solvers, rate=4000):
    """A session whose satellite, lowered by burns at apocentre, falls onto the planet within ~3 time units.

    From e = 0.9 (r from 0.1 to 1.9), 14 retrograde burns of 0.005 at t = 3.2 leave a
    pericentre of about 0.04, below the planet's radius of 0.05.
    """
    session, clock = started(scene="orbit", solvers=solvers, rate=rate, speed=1, e=0.9)
    run(session, clock, 3.2)
    for _ in range(14):
        assert session.handle('{"type": "thrust", "direction": "retrograde"}')[0]["type"] == "state"
    session.handle('{"type": "set", "speed": 10}')
    return session, clock


def test_a_satellite_that_reaches_the_planet_stops_on_its_surface_and_says_so_once():
    session, clock = crash(["rk4", "velocity_verlet"])
    R = S.PLANET_RADIUS
    frames = [run(session, clock, 1.0) for _ in range(8)]
    for i in range(2):
        runners = [f["runners"][i] for f in frames]
        crashes = [(k, e) for k, r in enumerate(runners) for e in r["events"]]
        assert len(crashes) == 1, crashes              # the event reaches the page once
        k, event = crashes[0]
        assert event["name"] == "crash" and 3.2 < event["t"] < 6.5
        last = runners[-1]
        assert last["status"] == "stopped" and last["t"] == event["t"] and last["x"] == event["x"]
        assert math.hypot(*last["x"]) == pytest.approx(R, abs=1e-9)    # on the surface, not through it
        assert last["readouts"]["r_min"] >= R - 1e-12                   # and no step went below it
        assert f"crashed into the planet at t = {event['t']:.4f}" in last["message"]
        assert "Reset" in last["message"]
        assert all(r == dict(runners[k], path=[], events=[], thrust=None) for r in runners[k + 1:])  # still
    assert frames[-1]["t"] == frames[-2]["t"] < 8.0 + 3.2        # the clock stopped with the last runner
    # a burn of a wreck changes nothing, and is no error
    assert session.handle('{"type": "thrust", "direction": "prograde"}')[0]["type"] == "state"
    assert run(session, clock, 1.0)["runners"][0]["v"] == frames[-1]["runners"][0]["v"]
    # new solvers, with every runner stopped, start over from the start; so does reset
    (reply,) = session.handle('{"type": "set", "solvers": ["rk4"]}')
    fresh = session.frame()
    assert fresh["t"] == 0.0 and fresh["runners"][0]["x"] == [1 - 0.9, 0.0]
    assert fresh["runners"][0]["status"] == "running" and fresh["runners"][0]["events"] == []


def test_a_crash_in_a_race_leaves_the_others_running_and_new_solvers_go_on_from_them():
    session, clock = crash(["rk4", "euler"], rate=400)     # Euler spirals out, away from the planet
    frame = run(session, clock, 8.0)
    rk4, euler = frame["runners"]
    assert rk4["status"] == "stopped" and euler["status"] == "running" and frame["t"] == pytest.approx(11.2)
    session.handle('{"type": "set", "solvers": ["leapfrog"]}')
    (leapfrog,) = session.frame()["runners"]
    assert leapfrog["x"] == euler["x"] and leapfrog["t"] == pytest.approx(frame["t"])


def pendulum_bounces(solver, wall, sim_seconds, **settings):
    session, clock = started(scene="pendulum", solvers=[solver], rate=2000, speed=100, wall=wall, **settings)
    xs, events = [], []
    for _ in range(math.ceil(sim_seconds / 10)):
        r = run(session, clock, 10.0)["runners"][0]
        assert r["status"] == "running", r["message"]
        xs += r["path"] + [r["x"]]
        events += r["events"]
    return session, np.array(xs), events


@pytest.mark.parametrize("solver", ["velocity_verlet", "rk4"])
def test_the_pendulums_wall_is_never_passed_and_each_bounce_keeps_e_squared_of_the_kinetic_energy(solver):
    wall = 0.5
    session, theta, events = pendulum_bounces(solver, wall, 200.0)
    assert session.settings["wall"] == wall
    assert np.sin(theta).min() >= -wall - 1e-12              # never beyond the wall (L = 1)
    assert len(events) >= 50 and all(e["name"] == "wall" for e in events)   # about one a swing
    times = np.array([e["t"] for e in events])
    assert np.all(np.diff(times) > 1.0)                       # a swing apart: nothing piles up
    g, e = 9.8, S.WALL_RESTITUTION
    at_wall = g * (1 - math.cos(math.asin(wall)))             # potential energy at the wall
    kinetic = [0.5 * ev["v"] ** 2 for ev in events]           # just after each bounce, at the wall
    for ev in events:
        assert math.sin(ev["x"]) == pytest.approx(-wall, abs=1e-9) and ev["v"] > 0   # sent back to the right
    # energy is conserved between bounces, so each one keeps e^2 of the kinetic energy of the one before
    first = g * (1 - math.cos(2.0)) - at_wall
    assert kinetic[0] == pytest.approx(e ** 2 * first, rel=1e-6)
    np.testing.assert_allclose(np.array(kinetic[1:11]) / kinetic[:10], e ** 2, rtol=1e-7)


def test_the_wall_with_damping_bounces_a_few_times_then_the_swing_stays_clear():
    session, theta, events = pendulum_bounces("rk4", 0.3, 100.0, B=0.5)
    assert 1 <= len(events) < 10 and events[-1]["t"] < 20.0
    assert np.sin(theta).min() >= -0.3 - 1e-12


def test_an_explicit_method_beyond_its_stability_limit_carries_odekits_warning():
    session, clock = started(scene="orbit", solvers=["euler", "symplectic_euler"], rate=10)
    euler, symplectic = session.frame()["runners"]
    assert "euler is unstable at every step size" in euler["warning"] and "velocity_verlet" in euler["warning"]
    assert symplectic["warning"] is None


def test_the_notice_of_a_loop_being_compiled_reaches_the_server_console_not_the_runner(monkeypatch):
    # on a new machine the page waits while Numba compiles the loop: the one-line notice must not be
    # swallowed with the stiffness warnings the page shows (the loop is taken for uncompiled here)
    import odekit
    from odekit import backend
    from odekit.kernels import jit

    monkeypatch.setattr(backend, "_KERNELS", {})
    monkeypatch.setattr(backend, "_PREPARED", {})
    monkeypatch.setattr(jit, "on_disk", lambda fn, signature: False)
    with pytest.warns(odekit.CompilationNotice, match="compiling the explicit Runge-Kutta loop"):
        session, clock = started(scene="orbit", solvers=["euler", "rk4"], rate=10)
    euler, rk4 = session.frame()["runners"]
    assert "euler is unstable at every step size" in euler["warning"] and rk4["warning"] is None


def test_a_page_on_a_new_machine_runs_on_python_while_its_loops_compile_then_goes_on_compiled(monkeypatch):
    # the page no longer waits 20-30 s for Numba: its runners start on Python, the loops compile in a
    # thread (with their notice), and each run goes on compiled from a frame after, with the numbers a
    # compiled run has (the loops are taken for uncompiled here)
    import odekit
    from odekit import backend
    from odekit.kernels import jit

    solvers = ["rk4", "velocity_verlet"]
    reference, ref_clock = started(scene="orbit", solvers=solvers, rate=400)
    assert [r.integ.backend for r in reference.runners] == ["numba", "numba"]
    for name in ("_KERNELS", "_PREPARED", "_SPENT", "_BACKGROUND"):
        monkeypatch.setattr(backend, name, {})
    monkeypatch.setattr(backend, "FIRST_RUN_SECONDS", 1.0)          # the default (the tests set 0)
    monkeypatch.setattr(jit, "on_disk", lambda fn, signature: False)
    with pytest.warns(odekit.CompilationNotice) as notices:
        session, clock = started(scene="orbit", solvers=solvers, rate=400)
        assert [r.integ.backend for r in session.runners] == ["python", "python"]
        frames = [run(session, clock, 1.0)]
        for compiling in list(backend._BACKGROUND.values()):
            compiling.result(timeout=300)
    said = " ".join(str(notice.message) for notice in notices)
    assert "explicit Runge-Kutta" in said and "splitting" in said
    frames += [run(session, clock, 1.0) for _ in range(2)]
    assert [r.integ.backend for r in session.runners] == ["numba", "numba"]
    expected = [run(reference, ref_clock, 1.0) for _ in range(3)]
    for mine, theirs in zip(frames[-1]["runners"], expected[-1]["runners"]):
        assert mine["steps"] == theirs["steps"] > 0 and mine["nfev"] == theirs["nfev"]
        assert (mine["t"], mine["x"], mine["v"]) == (theirs["t"], theirs["x"], theirs["v"])


# --- bad messages: an error reply, and the session goes on ------------------------------------

BAD = [
    ("{not json", None, "not valid JSON"),
    ("[1, 2]", None, "JSON object"),
    ('{"type": "launch"}', "type", "start, set"),
    ('{"type": "start", "solvers": ["rk4"], "code": "import os"}', "code", "unknown field"),
    ('{"type": "start", "scene": "galaxy"}', "scene", "orbit, pendulum"),
    ('{"type": "start", "solvers": ["warp_drive"]}', "solvers", "no such method"),
    ('{"type": "start", "solvers": ["backward_euler"]}', "solvers", "fixed number of evaluations"),
    ('{"type": "start", "solvers": "rk4"}', "solvers", "list of 1 to 8"),
    ('{"type": "start", "solvers": []}', "solvers", "list of 1 to 8"),
    ('{"type": "start", "solvers": ["rk4", "rk4"]}', "solvers", "twice"),
    ('{"type": "start", "solvers": ' + json.dumps(["euler"] * 9) + "}", "solvers", "list of 1 to 8"),
    ('{"type": "start", "rate": 5}', "rate", "from 10 to 20000"),
    ('{"type": "start", "rate": "fast"}', "rate", "from 10 to 20000"),
    ('{"type": "start", "rate": true}', "rate", "from 10 to 20000"),
    ('{"type": "start", "speed": 3}', "speed", "1, 10, 100"),
    ('{"type": "start", "e": 0.95}', "e", "from 0 to 0.9"),
    ('{"type": "start", "scene": "pendulum", "B": -1}', "B", "from 0 to 5"),
    ('{"type": "start", "scene": "pendulum", "wall": 1}', "wall", "null (no wall) or a number from 0.05 to 0.95"),
    ('{"type": "start", "scene": "pendulum", "wall": "left"}', "wall", "null (no wall) or a number"),
    ('{"type": "set", "wall": 0.5}', "wall", "unknown field"),
    ('{"type": "start", "paused": "yes"}', "paused", "true or false"),
    ('{"type": "stability", "methods": ["bdf"]}', "methods", "no stability region"),
    ('{"type": "stability", "methods": ["rk4"], "z": [1]}', "z", "[re, im]"),
    ('{"type": "stability", "methods": ["rk4"], "z": ["1", 0]}', "z", "[re, im]"),
    ('{"type": "stability", "methods": ["rk4"], "z": [1e999, 0]}', "z", "[re, im]"),
]


@pytest.mark.parametrize("text, field, words", BAD)
def test_bad_message_gets_an_error_naming_what_is_accepted(text, field, words):
    session, clock = started(scene="orbit", solvers=["rk4"])
    settings = dict(session.settings)
    reply = error_of(session, text)
    assert reply["field"] == field and words in reply["message"]
    assert session.settings == settings                 # nothing changed
    assert session.handle('{"type": "reset"}')[0]["type"] == "state"   # and the session goes on


def test_messages_before_start_too_long_or_binary_are_refused():
    session = S.Session(Clock())
    assert "send a 'start'" in error_of(session, '{"type": "thrust", "direction": "prograde"}')["message"]
    long = json.dumps({"type": "start", "solvers": ["rk4"], "scene": "orbit" + " " * S.MAX_MESSAGE})
    assert f"limit is {S.MAX_MESSAGE}" in error_of(session, long)["message"]
    (reply,) = session.handle(b"\x00\x01")
    assert reply["type"] == "error" and "binary" in reply["message"]
    session.handle('{"type": "start", "scene": "pendulum", "solvers": ["rk4"]}')
    reply = error_of(session, {"type": "thrust", "direction": "radial_in"})
    assert reply["field"] == "direction" and "prograde, retrograde" in reply["message"]


# Every field of every message: a valid message of each type, and per field the values
# refused (wrong type, out of range, unknown name).  Each gets an error naming its field,
# nothing changes, and the session goes on.  The session is a damped pendulum (B > 0):
# there, radial thrust is refused too (the Verlet family is not: it solves the damping, #18).
VALID = {
    "start": {"type": "start", "scene": "pendulum", "solvers": ["rk4"], "rate": 400, "speed": 10, "e": 0.3,
              "B": 0.5, "wall": 0.5, "paused": False},
    "set": {"type": "set", "solvers": ["rk4", "euler"], "rate": 300, "speed": 100, "B": 1.0, "paused": True},
    "thrust": {"type": "thrust", "direction": "retrograde"},
    "reset": {"type": "reset"},
    "stability": {"type": "stability", "methods": ["rk4", "velocity_verlet"], "z": [-1, 0.5]},
}
DEEP = [[[[[[0]]]]]]
REFUSED = {
    "type": [None, 1, True, ["start"], {"start": 1}, "START", "launch", ""],
    "scene": [None, 1, True, ["orbit"], {"orbit": 1}, "galaxy", "Orbit", "", DEEP],
    "solvers": [None, "rk4", 1, [], ["rk4", 1], [["rk4"]], [None], ["rk4", "rk4"], ["rk4", "classic_rk4"],
                ["euler"] * 9, ["warp_drive"], ["backward_euler"], DEEP],
    "rate": [None, "400", True, [400], {"rate": 400}, 9.99, 20000.5, -400, 10 ** 400, DEEP],
    "speed": [None, "10", True, [10], 3, 1.5, 0, -10, 10 ** 400, DEEP],
    "e": [None, "0.3", True, [0.3], -0.01, 0.91, 10 ** 400, DEEP],
    "B": [None, "1", True, [1], -0.01, 5.01, DEEP],
    "wall": ["0.5", True, False, [0.5], {"x": 0.5}, 0, 0.04, 0.96, 1, -0.5, 10 ** 400, DEEP],    # null: no wall
    "paused": [None, "yes", 1, 0, [True], {}, DEEP],
    "direction": [None, 1, True, ["prograde"], "up", "PROGRADE", "radial_in", DEEP],
    "methods": [None, "rk4", 1, [], ["rk4", 1], [["rk4"]], ["rk4", "rk4"], ["rk4"] * 9, ["warp_drive"], ["bdf"],
                DEEP],
    "z": [None, "1,0", 1, True, [1], [1, 2, 3], ["1", 0], [True, 0], [None, 0], [[1], 0], {"re": 1},
          [1001, 0], [0, -1000.5], [1e200, 0], [10 ** 400, 0], DEEP],
}
REQUIRED = {"thrust": {"direction"}, "stability": {"methods"}}


def refused_cases():
    for kind, message in VALID.items():
        for field in message:
            for value in REFUSED[field]:
                yield pytest.param(dict(message, **{field: value}), field, id=f"{kind}-{field}={_short(value)}")
        yield pytest.param(dict(message, colour="red"), "colour", id=f"{kind}-unknown-field")
        for field in REQUIRED.get(kind, ()):
            yield pytest.param({k: v for k, v in message.items() if k != field}, field, id=f"{kind}-no-{field}")


def _short(value):
    text = json.dumps(value)
    return text if len(text) < 20 else text[:17] + "..."


def test_the_bad_message_table_covers_every_message_type_and_field():
    assert set(VALID) == set(S.KINDS)
    for kind, message in VALID.items():
        assert set(message) == S.FIELDS[kind], kind
    assert set(REFUSED) == set().union(*S.FIELDS.values())
    assert REQUIRED == {kind: set(fields) for kind, fields in S.REQUIRED.items()}


def damped_pendulum():
    return started(scene="pendulum", solvers=["rk4"], B=0.5, speed=10)


def goes_on(session, clock):
    """The session still answers and runs: a reset, a frame that moved, a stability query."""
    assert session.handle('{"type": "set", "paused": false}')[0]["type"] == "state"
    assert session.handle('{"type": "reset"}')[0]["type"] == "state"
    clock.now += S.MAX_FRAME_WALL
    assert session.frame()["t"] > 0
    assert session.handle('{"type": "stability", "methods": ["rk4"]}')[0]["type"] == "stability"


@pytest.mark.parametrize("kind", list(VALID))
def test_the_valid_message_of_each_type_is_answered(kind):
    session, clock = damped_pendulum()
    (reply,) = session.handle(json.dumps(VALID[kind]))
    assert reply["type"] == ("stability" if kind == "stability" else "state"), reply
    goes_on(session, clock)


@pytest.mark.parametrize("message, field", list(refused_cases()))
def test_every_field_of_every_message_is_refused_by_name_and_the_session_goes_on(message, field):
    session, clock = damped_pendulum()
    settings = dict(session.settings)
    reply = error_of(session, message)
    assert reply["field"] == field and field in reply["message"], reply
    assert session.settings == settings
    goes_on(session, clock)


@pytest.mark.parametrize("field", sorted(S.FIELDS["start"] - {"type"}))
def test_a_start_without_a_field_takes_its_default(field):
    message = {k: v for k, v in VALID["start"].items() if k != field}
    (reply,) = S.Session(Clock()).handle(json.dumps(message))
    expected = dict(message, **{field: dict(S.DEFAULTS, paused=False)[field]})
    if field == "solvers":          # velocity_verlet, the default, is not offered with damping
        expected = dict(message, B=0.0, solvers=S.DEFAULTS["solvers"])
        (reply,) = S.Session(Clock()).handle(json.dumps(dict(message, B=0.0)))
    assert reply["type"] == "state" and reply["settings"] == expected, reply


def test_a_set_must_change_something_and_b_is_for_the_pendulum_only():
    session, clock = damped_pendulum()
    reply = error_of(session, {"type": "set"})
    assert "at least one of B, paused, rate, solvers, speed" in reply["message"]
    orbit, clock = started(scene="orbit", solvers=["rk4"])
    reply = error_of(orbit, {"type": "set", "B": 1})
    assert reply["field"] == "B" and "the orbit takes none" in reply["message"] and "rate" in reply["message"]
    assert orbit.settings["B"] == 0.0
    goes_on(orbit, clock)


def test_an_alias_runs_as_its_method_and_counts_as_it():
    session, clock = started(scene="orbit", solvers=["classic_rk4", "verlet"])
    assert session.settings["solvers"] == ["rk4", "velocity_verlet"]
    assert [r["solver"] for r in session.frame()["runners"]] == ["rk4", "velocity_verlet"]
    reply = error_of(session, {"type": "set", "solvers": ["rk4", "runge_kutta"]})
    assert reply["field"] == "solvers" and "rk4 twice" in reply["message"]


def test_stability_replies_are_strict_json_at_a_pole():
    (reply,) = S.Session(Clock()).handle('{"type": "stability", "methods": ["backward_euler"], "z": [1, 0]}')
    assert reply["at"]["backward_euler"] == {"abs_R": None, "stable": False}     # R = 1/(1 - z): a pole
    json.dumps(reply, allow_nan=False)


# --- the stability explorer: odekit's R(z) ------------------------------------------------

def test_stability_reply_gives_R_and_its_modulus_at_the_point():
    session = S.Session(Clock())
    (reply,) = session.handle('{"type": "stability", "methods": ["rk4", "backward_euler", "velocity_verlet"],'
                              ' "z": [-3, 0]}')
    rk4 = reply["methods"]["rk4"]
    assert rk4["kind"] == "rational" and rk4["numerator"] == [1, 1, 0.5, 1 / 6, 1 / 24]
    assert reply["at"]["rk4"]["abs_R"] == pytest.approx(1 - 3 + 4.5 - 4.5 + 81 / 24, rel=1e-14)   # 1.375
    assert reply["at"]["rk4"]["stable"] is False
    assert reply["at"]["backward_euler"] == {"abs_R": pytest.approx(0.25, rel=1e-14), "stable": True}
    assert reply["methods"]["velocity_verlet"] == {"kind": "oscillator", "limit": 2.0}
    (inside,) = session.handle('{"type": "stability", "methods": ["rk4", "velocity_verlet"], "z": [-1, 1.9]}')
    z = complex(-1, 1.9)
    assert inside["at"]["rk4"]["abs_R"] == pytest.approx(abs(1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24), rel=1e-14)
    assert inside["at"]["rk4"]["stable"] is True and inside["at"]["velocity_verlet"]["stable"] is True
    assert inside["at"]["velocity_verlet"]["abs_R"] == pytest.approx(1.0, abs=1e-12)   # area-preserving
    (beyond,) = session.handle('{"type": "stability", "methods": ["velocity_verlet"], "z": [0, 2.1]}')
    assert beyond["at"]["velocity_verlet"]["stable"] is False and beyond["at"]["velocity_verlet"]["abs_R"] > 1


# --- the server ----------------------------------------------------------------------------

def receive(ws, kind):
    """The next message of a kind, passing frames."""
    for _ in range(1000):
        message = ws.receive_json()
        if message["type"] == kind:
            return message
        assert message["type"] == "frame", message
    raise AssertionError(f"no {kind!r} message")


def test_socket_start_frames_bad_message_and_goes_on():
    # the test client calls itself testserver: a name the server answers to only when told
    with TestClient(create_app(warm=False, allow_hosts=["testserver"])) as client, \
            client.websocket_connect("/ws") as ws:
        hello = ws.receive_json()
        assert hello["type"] == "hello" and hello["defaults"]["type"] == "start"
        ws.send_text(json.dumps({"type": "start", "scene": "orbit", "solvers": ["rk4", "euler"], "speed": 10}))
        assert receive(ws, "state")["settings"]["solvers"] == ["rk4", "euler"]
        first = receive(ws, "frame")
        later = receive(ws, "frame")
        assert later["t"] > first["t"] and [r["solver"] for r in later["runners"]] == ["rk4", "euler"]
        ws.send_text('{"type": 42')
        assert "not valid JSON" in receive(ws, "error")["message"]
        ws.send_bytes(b"\xff")
        assert "binary" in receive(ws, "error")["message"]
        ws.send_text('{"type": "thrust", "direction": "prograde"}')
        receive(ws, "state")
        assert receive(ws, "frame")["runners"][0]["thrust"] is not None


def test_socket_over_the_session_limit_is_told_and_closed():
    with TestClient(create_app(max_sessions=1, warm=False, allow_hosts=["testserver"])) as client, \
            client.websocket_connect("/ws") as first:
        assert first.receive_json()["type"] == "hello"
        with client.websocket_connect("/ws") as second:
            reply = second.receive_json()
            assert reply["type"] == "error" and "limit of 1" in reply["message"]
            closed = second.receive()
            assert closed["type"] == "websocket.close" and closed["code"] == TRY_AGAIN_LATER


def test_create_app_checks_max_sessions():
    with pytest.raises(ValueError, match="max_sessions must be a positive integer, got 0"):
        create_app(max_sessions=0)


def test_the_servers_counts_are_odekits_checks_refusing_bools_and_strings():
    from odekit.serve import listen

    with pytest.raises(ValueError, match=r"^max_sessions must be a positive integer, got True \(bool\)$"):
        create_app(max_sessions=True)
    with pytest.raises(ValueError, match=r"^port must be an integer from 0 to 65535 \(0: a free port\), "
                                         r"got '80' \(str\)$"):
        listen(port="80", warm=False)


# --- the server on a real socket ----------------------------------------------------------

@pytest.fixture
def live():
    """``live(**listen_args)``: an ``odekit serve`` server on a free loopback port; its port."""
    import threading
    import time

    from odekit.serve import listen

    running = []

    def start(**kwargs):
        server, sock, url = listen(warm=False, **kwargs)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        running.append((server, thread))
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        return sock.getsockname()[1]

    yield start
    for server, thread in running:
        server.should_exit = True
        thread.join(10)


def http(port, path="/", host=None, headers=()):
    """Status and body of a GET sent as raw bytes, so that any Host header can be given."""
    import socket

    lines = [f"GET {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", "Connection: close", *headers]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
            if data.startswith(b"HTTP/1.1 101"):     # switched to WebSocket: the handshake succeeded
                break
    head, _, body = data.partition(b"\r\n\r\n")
    # after a 101 the server may already have sent its first WebSocket frame (binary framing)
    return int(head.split()[1]), body.decode(errors="replace")


def handshake(port, origin=None, host=None):
    """Status and body of the reply to a WebSocket handshake with this Origin (None: no Origin header)."""
    headers = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
               "Sec-WebSocket-Version: 13"] + ([f"Origin: {origin}"] if origin is not None else [])
    return http(port, "/ws", host, headers)


def test_a_foreign_host_is_refused_with_403_and_the_reason(live):
    port = live()
    for name in ("127.0.0.1", "localhost", "[::1]", "LOCALHOST"):
        assert http(port, host=f"{name}:{port}")[0] == 200, name
    for name in ("evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "10.0.0.1", ""):
        status, body = http(port, host=f"{name}:{port}")      # DNS rebinding: a foreign name, this address
        assert status == 403 and f"not to the host {name}:{port}" in body, (name, body)
        assert "answers to 127.0.0.1, [::1], localhost" in body and "--allow-host" in body
    # the socket too, even from a page of that name (a rebound page is same-origin with itself)
    status, body = handshake(port, origin=f"http://evil.example:{port}", host=f"evil.example:{port}")
    assert status == 403 and "not to the host evil.example" in body


def test_only_the_servers_own_pages_may_open_its_socket(live, capfd):
    port = live()
    assert handshake(port, origin=f"http://127.0.0.1:{port}")[0] == 101
    assert handshake(port, origin=f"http://localhost:{port}", host=f"localhost:{port}")[0] == 101
    for origin in ("http://evil.example", f"http://evil.example:{port}", "null", f"http://localhost:{port}",
                   f"http://127.0.0.1:{port + 1}", f"ftp://127.0.0.1:{port}", f"http://127.0.0.1:{port}/x"):
        status, body = handshake(port, origin=origin)           # cross-site WebSocket hijacking
        assert status == 403, origin
        assert f"a page from {origin} may not open this server's socket" in body
        assert f"only the server's own pages (from http://127.0.0.1:{port})" in body
    # a refusal is not an error of the server's (uvicorn's sans-I/O protocol logs one: Kludex/uvicorn#3138)
    assert "ERROR" not in capfd.readouterr().err


def test_a_socket_without_origin_is_a_script_and_is_served(live):
    from websockets.sync.client import connect

    port = live()
    assert handshake(port, origin=None)[0] == 101       # browsers always send Origin; scripts need not
    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=30) as ws:
        assert json.loads(ws.recv(timeout=60))["type"] == "hello"
    with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}", open_timeout=30) as ws:
        assert json.loads(ws.recv(timeout=60))["type"] == "hello"


def test_allow_host_adds_a_name_and_its_pages(live):
    port = live(allow_hosts=["odekit.test"])
    assert http(port, host=f"odekit.test:{port}")[0] == 200
    assert handshake(port, origin=f"http://odekit.test:{port}", host=f"odekit.test:{port}")[0] == 101
    assert http(port, host=f"other.test:{port}")[0] == 403


def test_the_hosts_answered_depend_on_the_interface():
    from odekit.serve.app import Hosts

    loopback = Hosts("127.0.0.1")
    assert all(loopback.accepts(h) for h in ("127.0.0.1:8000", "localhost", "localhost.:8000", "[::1]:1"))
    assert not any(loopback.accepts(h) for h in ("192.168.1.5:8000", "[::2]", "evil.example", "a@127.0.0.1",
                                                 "127.0.0.1:port", "127.0.0.1/x", ""))
    assert Hosts("::1").accepts("[::1]:80") and Hosts("localhost").accepts("127.0.0.1")
    # every interface: any IP address (a rebound name is never one) and the loopback names, no other name
    for wildcard in ("0.0.0.0", "::", ""):
        every = Hosts(wildcard)
        assert every.any_address
        assert all(every.accepts(h) for h in ("192.168.1.5:8000", "[fe80::1]:8000", "localhost:1", "10.0.0.1"))
        assert not every.accepts("mybox.local:8000") and not every.accepts("evil.example")
        assert Hosts(wildcard, ["mybox.local"]).accepts("MyBox.local:8000")
    # one address: that address, and the names given
    lan = Hosts("192.168.1.5", ["mybox.local"])
    assert lan.accepts("192.168.1.5:8000") and lan.accepts("mybox.local")
    assert not lan.accepts("localhost") and not lan.accepts("10.0.0.1")
    for bad in ("http://mybox", "mybox:8000", "mybox/x", "*", 5):
        with pytest.raises(ValueError, match=f"allow_hosts must be a host name or an IP address alone .*{bad!r}"):
            Hosts("127.0.0.1", [bad])


def test_a_server_without_http_denials_refuses_at_the_handshake_with_a_close():
    import asyncio

    from odekit.serve.app import POLICY_VIOLATION, Hosts, _Guard

    sent = []

    async def record(message):
        sent.append(message)

    async def never(scope, receive, send):
        raise AssertionError("a refused socket reached the application")

    scope = {"type": "websocket", "headers": [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://evil.example")]}
    asyncio.run(_Guard(never, Hosts("127.0.0.1"))(scope, None, record))
    (close,) = sent
    assert close["type"] == "websocket.close" and close["code"] == POLICY_VIOLATION
    assert close["reason"].startswith("a page from http://evil.example may not open this server's socket")


BREAKERS = [    # messages that ended the socket with a traceback: each now gets its error
    ('{"type": "start", "\\ud800": 1}', "\ud800", "unknown field"),
    ('{"type": "start", "scene": "\\udfff"}', "scene", "orbit, pendulum"),
    ('{"type": "start", "solvers": ["\\ud800"]}', "solvers", "no such method"),
    ("[" * 2000 + "]" * 2000, None, "nests too deeply"),
    ('{"type": "start", "scene": ["orbit"]}', "scene", "orbit, pendulum"),
    ('{"type": "stability"}', "methods", "needs the field 'methods'"),
    ('{"type": "stability", "methods": ["velocity_verlet"], "z": [0, 1e200]}', "z", "from -1000 to 1000"),
    ('{"type": "stability", "methods": ["rk4"], "z": [1' + "0" * 400 + ', 0]}', "z", "from -1000 to 1000"),
    ('{"type": "set", "B": 1}', "B", "the orbit takes none"),
    (json.dumps({"type": "start", "scene": "x" * 70_000}), None, "the limit is 4096"),     # over 64 KiB
]


def test_messages_that_broke_the_socket_get_error_replies_on_a_real_socket(live):
    from websockets.sync.client import connect

    port = live()
    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=30) as ws:
        def reply(text, kind):
            ws.send(text)
            for _ in range(1000):
                message = json.loads(ws.recv(timeout=60))
                if message["type"] == kind:
                    return message
                assert message["type"] in ("frame", "hello"), message
            raise AssertionError(f"no {kind!r} reply")

        reply('{"type": "start", "scene": "orbit", "solvers": ["rk4"]}', "state")
        for text, field, words in BREAKERS:
            error = reply(text, "error")
            assert error["field"] == field and words in error["message"], (text[:40], error)
            assert reply('{"type": "set", "speed": 10}', "state")["settings"]["scene"] == "orbit"   # goes on
        # every refused field of the table, on one socket: the session is a damped pendulum
        reply(json.dumps({"type": "start", "scene": "pendulum", "solvers": ["rk4"], "B": 0.5}), "state")
        for case in refused_cases():
            message, field = case.values
            error = reply(json.dumps(message), "error")
            assert error["field"] == field, (case.id, error)
        assert reply('{"type": "reset"}', "state")["settings"]["B"] == 0.5
        assert reply('{"type": "stability", "methods": ["rk4"]}', "stability")["methods"]["rk4"]["kind"] == "rational"


def test_a_frame_past_the_limit_closes_the_socket_with_1009_and_says_so(live):
    from websockets.exceptions import ConnectionClosedError
    from websockets.sync.client import connect

    from odekit.serve.app import MAX_FRAME

    port = live()
    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=30, max_size=None) as ws:
        assert json.loads(ws.recv(timeout=60))["type"] == "hello"
        ws.send("x" * MAX_FRAME)                        # read, and refused in an error reply
        assert "the limit is 4096" in json.loads(ws.recv(timeout=60))["message"]
        ws.send("x" * (MAX_FRAME + 1))                  # not read: the socket is closed
        with pytest.raises(ConnectionClosedError) as closed:
            ws.recv(timeout=60)
    assert closed.value.rcvd.code == 1009 and f"limit of {MAX_FRAME} bytes" in closed.value.rcvd.reason


def test_a_defect_in_handling_a_message_is_an_error_reply_not_a_dead_socket(monkeypatch):
    def broken(self, text):
        raise KeyError("a defect")

    monkeypatch.setattr(S.Session, "handle", broken)
    with TestClient(create_app(warm=False, allow_hosts=["testserver"])) as client, \
            client.websocket_connect("/ws") as ws:
        assert ws.receive_json()["type"] == "hello"
        for _ in range(2):
            ws.send_text('{"type": "reset"}')
            reply = ws.receive_json()
            assert reply["type"] == "error" and "a defect of odekit's" in reply["message"]


# --- the command ---------------------------------------------------------------------------

def test_odekit_serve_prints_its_address_and_serves_the_protocol_there():
    import subprocess
    import sys

    from websockets.sync.client import connect

    proc = subprocess.Popen([sys.executable, "-m", "odekit.cli", "serve", "--max-sessions", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("odekit serve: http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split()[2]
        port = int(url.rsplit(":", 1)[1].strip("/"))
        assert port > 0
        with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=30) as ws:
            assert json.loads(ws.recv(timeout=60))["type"] == "hello"
            ws.send('{"type": "start", "solvers": ["euler"]}')
            assert json.loads(ws.recv(timeout=60))["type"] == "state"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)      # waits, and closes the pipes


def test_odekit_serve_on_a_taken_port_says_so(capsys):
    import socket

    from odekit.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    assert f"odekit: error: cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "port must be an integer from 0 to 65535" in capsys.readouterr().err


def test_frames_are_strict_json_even_when_a_number_overflows():
    session, clock = started(scene="orbit", solvers=["rk4"])
    session.runners[0].reference = 0.0 * math.inf       # as if the start had been non-finite
    text = json.dumps(session.frame(), allow_nan=False)  # raises on inf or nan
    assert json.loads(text)["runners"][0]["energy_error"] is None


def test_serve_open_browser_opens_the_address_it_prints(monkeypatch):
    import uvicorn
    import webbrowser

    from odekit.serve import serve

    opened, lines, ran = [], [], []
    monkeypatch.setattr(webbrowser, "open", opened.append)
    def run(self, sockets):
        ran.append(sockets[0].getsockname())
        sockets[0].close()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    serve(port=0, open_browser=True, announce=lines.append)
    (line,) = lines
    assert opened == [line.split()[2]] and opened[0] == f"http://127.0.0.1:{ran[0][1]}/"
    assert ran[0][0] == "127.0.0.1"           # this machine only, unless --host says otherwise


def test_odekit_serve_allow_host_is_passed_on_and_checked(monkeypatch, capsys):
    import odekit.serve
    from odekit.cli import main

    calls = []
    monkeypatch.setattr(odekit.serve, "serve", lambda *args, **kwargs: calls.append(kwargs))
    assert main(["serve", "--host", "0.0.0.0", "--allow-host", "mybox.local", "--allow-host", "10.0.0.7"]) == 0
    assert calls == [{"allow_hosts": ["mybox.local", "10.0.0.7"]}]
    monkeypatch.undo()
    assert main(["serve", "--allow-host", "http://mybox.local:8000"]) == 2
    assert "allow_hosts must be a host name or an IP address alone" in capsys.readouterr().err
