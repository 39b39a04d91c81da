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
    assert "velocity_verlet" not in damped and "forest_ruth" not in damped and "symplectic_euler" in damped
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
    reply = error_of(session, {"type": "set", "solvers": ["velocity_verlet"]})
    assert reply["field"] == "solvers" and "velocity" in reply["message"] and "symplectic_euler" in reply["message"]
    assert session.settings["solvers"] == ["rk4"]       # refused: nothing changed


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


def test_an_explicit_method_beyond_its_stability_limit_carries_odekits_warning():
    session, clock = started(scene="orbit", solvers=["euler", "symplectic_euler"], rate=10)
    euler, symplectic = session.frame()["runners"]
    assert "euler is unstable at every step size" in euler["warning"] and "velocity_verlet" in euler["warning"]
    assert symplectic["warning"] is None


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
    with TestClient(create_app(warm=False)) as client, client.websocket_connect("/ws") as ws:
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
    with TestClient(create_app(max_sessions=1, warm=False)) as client, client.websocket_connect("/ws") as first:
        assert first.receive_json()["type"] == "hello"
        with client.websocket_connect("/ws") as second:
            reply = second.receive_json()
            assert reply["type"] == "error" and "limit of 1" in reply["message"]
            closed = second.receive()
            assert closed["type"] == "websocket.close" and closed["code"] == TRY_AGAIN_LATER


def test_create_app_checks_max_sessions():
    with pytest.raises(ValueError, match="max_sessions must be a positive integer, got 0"):
        create_app(max_sessions=0)


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
