"""`odekit serve`: the page, in a real headless Chromium driven by Playwright.

The server runs in a thread of this process; each test opens the page and
reads what it shows: the numbers in its readouts, the colours on its canvas,
the verdicts of the stability explorer.  Every test also fails if the page
logs a console error or warning.  The protocol itself is tested without a
browser in test_serve.py.

Without Chromium or Playwright the module is skipped, unless
ODEKIT_REQUIRE_BROWSER=1 (as `make test` sets), when it fails instead.
A screenshot is saved to $ODEKIT_ARTIFACTS (default tests/artifacts/).
"""

import json
import math
import os
import pathlib
import shutil
import socket
import threading
import time

import pytest

REQUIRED = os.environ.get("ODEKIT_REQUIRE_BROWSER") == "1"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
VIEWPORT = {"width": 1280, "height": 900}
ARTIFACTS = pathlib.Path(os.environ.get("ODEKIT_ARTIFACTS") or pathlib.Path(__file__).with_name("artifacts"))
FIRST_FRAME = 60_000      # ms: the first integrator of a family may wait for Numba to compile


def _missing(reason):
    if REQUIRED:
        pytest.fail(f"{reason}; ODEKIT_REQUIRE_BROWSER=1 asks for the browser tests to run", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


try:
    from playwright.sync_api import sync_playwright
except ImportError:
    _missing("playwright is not installed (pip install -e '.[test]')")
try:
    import uvicorn

    from odekit.serve.app import create_app
except ImportError as exc:
    _missing(f"odekit serve needs the 'serve' extra ({exc.name} is missing)")
if not os.access(CHROMIUM, os.X_OK):
    _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium, or make test)")

from odekit import problems  # noqa: E402
from odekit.serve.session import DEFAULT_METHODS, THRUST_DV  # noqa: E402


# --- the server and the browser ------------------------------------------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(app, port=None):
    """Run ``app`` with uvicorn in a thread (on ``port``, else a free one); its URL and a function that stops it."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port or _free_port(), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the odekit serve app did not start under uvicorn")
        time.sleep(0.02)

    def stop():
        server.should_exit = True
        thread.join(10)
    return f"http://127.0.0.1:{config.port}/", stop


@pytest.fixture(scope="module")
def url():
    address, stop = _serve(create_app(max_sessions=8))
    yield address
    stop()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser, request):
    """``open_page(hash)``: the page at ``url#hash`` (or ``base#hash``) once its first frame is drawn.

    Console errors and warnings, and uncaught page errors, fail the test;
    with ``socket_may_fail``, Chromium's own report of a socket that failed
    does not.
    """
    contexts, problems_seen = [], []

    def open_(fragment="", base=None, wait=True, socket_may_fail=False):
        context = browser.new_context(viewport=VIEWPORT)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: problems_seen.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning")
                and not (socket_may_fail and m.text.startswith("WebSocket connection to")) else None)
        page.on("pageerror", lambda e: problems_seen.append(f"page error: {e}"))
        page.goto((base or request.getfixturevalue("url")) + fragment)
        if wait:
            page.wait_for_function("() => window.odekitPage && window.odekitPage.frame", timeout=FIRST_FRAME)
        return page

    yield open_
    for context in contexts:
        context.close()
    assert not problems_seen, "the page logged:\n" + "\n".join(problems_seen)


# --- reading the page ------------------------------------------------------------------------

def _js(value):
    """``value`` as JSON.stringify writes it, quoted for a JavaScript expression."""
    return json.dumps(json.dumps(value, separators=(",", ":")))


def settings_are(page, **expected):
    """Wait until the server has confirmed these settings (its last `state`)."""
    checks = " && ".join(f"JSON.stringify(s.{k}) === {_js(v)}" for k, v in expected.items())
    page.wait_for_function(f"() => {{ const s = window.odekitPage.settings; return s && {checks}; }}", timeout=FIRST_FRAME)
    # and a frame of the new runners
    solvers = expected.get("solvers")
    if solvers:
        page.wait_for_function(f"""() => {{ const f = window.odekitPage.frame;
            return f && JSON.stringify(f.runners.map(r => r.solver)) === {_js(solvers)}; }}""",
                               timeout=FIRST_FRAME)


def wait_for_time(page, t):
    page.wait_for_function(f"() => window.odekitPage.frame && window.odekitPage.frame.t >= {t}", timeout=FIRST_FRAME)


def mark_run(page):
    """Note the server's last `state`, so that `wait_for_new_run` can tell the next one from it."""
    page.evaluate("window.stateBefore = window.odekitPage.settings")


def wait_for_new_run(page):
    """Wait for the server's next `state` after `mark_run` and a frame after it: the new run's.

    Waiting for a small t instead loses a race: at x10 a run's t passes 1 within
    three frames, and on a loaded machine even its first frame may be at t = 1
    (a frame advances at most 0.1 s of wall time).
    """
    page.wait_for_function("() => { const s = window.odekitPage.settings; return s && s !== window.stateBefore; }",
                           timeout=FIRST_FRAME)
    page.evaluate("window.frameBefore = window.odekitPage.frame")
    page.wait_for_function("() => window.odekitPage.frame !== window.frameBefore", timeout=FIRST_FRAME)


def reset(page):
    """Click Reset and wait for the new run's first frame."""
    mark_run(page)
    page.click('[data-testid="reset"]')
    wait_for_new_run(page)


def shown(page, solver, key):
    """The number the readout table shows for ``solver`` under ``key``."""
    return float(page.text_content(f'[data-testid="runner-{solver}"] [data-key="{key}"]'))


def row(page, solver):
    """One consistent reading of a runner's row: the state it shows and every cell's text."""
    return page.evaluate("""(solver) => {
        const row = document.querySelector(`[data-testid="runner-${solver}"]`);
        const cells = Object.fromEntries([...row.querySelectorAll('td')].map(td => [td.dataset.key, td.textContent]));
        return {x: JSON.parse(row.dataset.x), v: JSON.parse(row.dataset.v), cells};
    }""", solver)


def agrees(text, value, digits=6):
    """``text`` shows ``value`` to ``digits`` significant figures."""
    if value is None:
        return text == "—"
    if value == 0:
        return float(text) == 0
    half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(value))) - digits + 1)
    return abs(float(text) - value) <= half_unit * (1 + 1e-9) + 1e-15


# Pixels of a canvas within `tolerance` (per channel) of each '#rrggbb'.
COUNT_COLOURS = """([selector, colours, tolerance]) => {
        const source = document.querySelector(selector);
        // a copy read once, so that the page's canvas is never read back repeatedly
        const copy = document.createElement('canvas');
        copy.width = source.width; copy.height = source.height;
        const ctx = copy.getContext('2d', {willReadFrequently: true});
        ctx.drawImage(source, 0, 0);
        const data = ctx.getImageData(0, 0, copy.width, copy.height).data;
        const wanted = colours.map(c => [1, 3, 5].map(i => parseInt(c.slice(i, i + 2), 16)));
        const counts = wanted.map(() => 0);
        for (let p = 0; p < data.length; p += 4) {
            wanted.forEach((c, k) => {
                if (Math.abs(data[p] - c[0]) <= tolerance && Math.abs(data[p + 1] - c[1]) <= tolerance
                    && Math.abs(data[p + 2] - c[2]) <= tolerance) counts[k]++;
            });
        }
        return counts;
    }"""


def colour_counts(page, selector, colours, tolerance=10):
    """Pixels of ``selector``'s canvas within ``tolerance`` (per channel) of each ``#rrggbb``."""
    return page.evaluate(COUNT_COLOURS, [selector, colours, tolerance])


PIXEL_AT = """([selector, x, y]) => {
        const source = document.querySelector(selector);
        const ratio = source.width / source.clientWidth;
        const copy = document.createElement('canvas');
        copy.width = source.width; copy.height = source.height;
        const ctx = copy.getContext('2d', {willReadFrequently: true});
        ctx.drawImage(source, 0, 0);
        return [...ctx.getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data.slice(0, 3)];
    }"""


def pixel_at(page, selector, x, y):
    """The [r, g, b] of ``selector``'s canvas at (x, y) CSS pixels."""
    return page.evaluate(PIXEL_AT, [selector, x, y])


def set_rate(page, rate):
    page.fill("#rate-number", str(rate))
    page.press("#rate-number", "Enter")


def pause(page):
    page.click('[data-testid="pause"]')
    settings_are(page, paused=True)
    # a frame sent after the pause took effect: the state shown no longer moves
    t = page.evaluate("window.odekitPage.frame.t")
    page.wait_for_function(f"() => window.odekitPage.frame.paused && window.odekitPage.frame.t === {t}")


# --- the tests -------------------------------------------------------------------------------

def test_the_page_loads_without_console_errors_and_runs_the_servers_defaults(open_page):
    page = open_page()
    settings_are(page, scene="orbit", solvers=["velocity_verlet"], rate=500, speed=1)
    wait_for_time(page, 0.5)
    # the defaults are written to the address and to the share link
    assert "scene=orbit" in page.url and "solvers=velocity_verlet" in page.url
    assert page.text_content('[data-testid="share-link"]') == page.url
    # a satellite from pericentre of e = 0.5: E = -1/2, L = sqrt(1 - e^2)
    assert shown(page, "velocity_verlet", "energy") == pytest.approx(-0.5, abs=1e-3)
    assert shown(page, "velocity_verlet", "angular_momentum") == pytest.approx(math.sqrt(0.75), abs=1e-5)
    assert page.get_attribute('[data-testid="status"]', "data-kind") == "info"
    assert page.evaluate("window.odekitPage.trailLengths().velocity_verlet") > 3


def sample_energy(page, solver, t_end):
    """The displayed total energy of ``solver``, read at each frame until simulated time ``t_end``."""
    readings = []
    while True:
        t = page.evaluate("window.odekitPage.frame.t")
        readings.append((t, shown(page, solver, "energy")))
        if t >= t_end:
            return readings
        page.wait_for_timeout(40)


def test_euler_at_a_low_rate_gains_energy_and_velocity_verlet_keeps_it(open_page):
    page = open_page()
    page.click('[data-testid="solver-euler"]')
    set_rate(page, 100)
    page.click('[data-testid="speed-10"]')
    settings_are(page, solvers=["euler"], rate=100, speed=10)
    reset(page)
    euler = sample_energy(page, "euler", 20.0)

    page.click('[data-testid="solver-velocity_verlet"]')
    settings_are(page, solvers=["velocity_verlet"], rate=100)
    reset(page)
    verlet = sample_energy(page, "velocity_verlet", 20.0)

    # Euler's energy grows, every orbit (h = 0.01: it drifts by more than a tenth in 3 orbits)
    early = [E for t, E in euler if t < 2]
    late = [E for t, E in euler if t > 15]
    assert early and late and len(euler) > 20
    assert min(late) > max(early) + 0.05, euler
    assert euler[-1][1] > -0.5 + 0.05
    # velocity Verlet's stays within O(h^2) of -1/2: h = 1/rate = 0.01, and its energy
    # error on this orbit is ~3 h^2 (measured 2.7e-4)
    h = 1 / 100
    error = max(abs(E + 0.5) / 0.5 for t, E in verlet)
    assert error < 10 * h ** 2, verlet
    assert len(verlet) > 20
    assert abs(euler[-1][1] + 0.5) / 0.5 > 100 * error


def prograde_energy(x, v, burns, dv):
    """The energy after ``burns`` velocity changes of ``dv`` along ``v`` (or against it, burns < 0)."""
    speed = math.hypot(*v) + burns * dv
    return 0.5 * speed ** 2 - 1 / math.hypot(*x)


def test_arrow_keys_fire_the_thruster_and_change_the_orbits_energy(open_page):
    page = open_page()
    wait_for_time(page, 1.0)
    pause(page)
    dv = THRUST_DV
    before = row(page, "velocity_verlet")
    E0 = float(before["cells"]["energy"])

    page.click('[data-testid="scene"]')
    for _ in range(4):
        page.keyboard.press("ArrowUp")
    expected = prograde_energy(before["x"], before["v"], 4, dv)
    page.wait_for_function(f"() => Math.abs(window.odekitPage.frame.runners[0].energy.total - {expected}) < 1e-9")
    # the burn's arrow is drawn, in yellow, while it is fresh
    page.keyboard.press("ArrowUp")
    yellow = page.evaluate("window.odekitPage.arrows.thrust")
    page.wait_for_function(f"(args) => ({COUNT_COLOURS})(args)[0] > 5", arg=["#scene", [yellow], 10], polling=50)
    expected = prograde_energy(before["x"], before["v"], 5, dv)
    page.wait_for_function(f"() => Math.abs(window.odekitPage.frame.runners[0].energy.total - {expected}) < 1e-9")
    after = row(page, "velocity_verlet")
    assert after["x"] == before["x"]                 # paused: only the velocity changed
    assert agrees(after["cells"]["energy"], expected)
    assert float(after["cells"]["energy"]) > E0 + 4 * dv * math.hypot(*before["v"])

    # retrograde takes it back down
    for _ in range(5):
        page.keyboard.press("ArrowDown")
    page.wait_for_function(f"() => Math.abs(window.odekitPage.frame.runners[0].energy.total - {E0}) < 1e-5")
    assert float(row(page, "velocity_verlet")["cells"]["energy"]) == pytest.approx(E0, abs=2e-6)


def test_a_satellite_that_hits_the_planet_stops_and_the_page_says_so_once(open_page):
    page = open_page("#scene=orbit&solvers=rk4&rate=4000&speed=1&e=0.9")
    settings_are(page, scene="orbit", solvers=["rk4"], e=0.9)
    wait_for_time(page, 2.8)            # near apocentre (t = pi): 20 retrograde burns drop the pericentre
    pause(page)                         # from 0.1 to below the planet's radius, 0.05
    page.click('[data-testid="scene"]')
    for _ in range(20):
        page.keyboard.press("ArrowDown")
    page.wait_for_function("() => window.odekitPage.frame.runners[0].readouts.speed < 0.15")
    page.click('[data-testid="speed-10"]')
    page.click('[data-testid="pause"]')
    page.wait_for_function("() => window.odekitPage.frame.runners[0].status === 'stopped'", timeout=FIRST_FRAME)
    shown_status = status(page)
    assert shown_status["kind"] == "event" and "rk4 crashed into the planet at t = " in shown_status["text"]
    assert "Reset" in shown_status["text"]
    assert "rk4 crashed into the planet" in page.text_content("#notes")
    assert shown(page, "rk4", "radius") == pytest.approx(0.05, abs=1e-6)      # on the surface, to 6 figures
    # said once: for a second of frames of the stopped run, the status line does not change
    page.evaluate("""() => { window.statusChanges = 0; new MutationObserver(() => window.statusChanges++)
        .observe(document.querySelector('[data-testid=status]'), {childList: true, characterData: true, subtree: true}); }""")
    page.wait_for_timeout(1000)
    assert page.evaluate("window.statusChanges") == 0 and status(page) == shown_status
    page.click('[data-testid="reset"]')
    page.wait_for_function("() => window.odekitPage.frame.runners[0].status === 'running'")


def test_the_pendulums_wall_is_drawn_and_bounces_the_bob(open_page):
    page = open_page("#scene=pendulum&solvers=rk4&rate=2000&speed=10")
    settings_are(page, scene="pendulum", wall=None)
    page.check('[data-testid="wall-on"]')
    settings_are(page, wall=0.5)
    assert "wall=0.5" in page.url
    # from 2 rad, E = 9.8 (1 - cos 2) = 13.9; the first bounce keeps 0.8^2 of the kinetic energy at the
    # wall, E - 9.8 (1 - cos 30deg) = 8.97, leaving 10.7: rk4 alone conserves it to many digits
    page.wait_for_function("() => window.odekitPage.frame.runners[0].energy.total < 12", timeout=FIRST_FRAME)
    x = page.evaluate("window.odekitPage.frame.runners[0]")["x"]
    assert math.sin(x) >= -0.5 - 1e-12


def test_race_mode_draws_one_trail_and_one_error_curve_per_solver(open_page):
    page = open_page()
    page.check('[data-testid="race"]')
    page.check('[data-testid="solver-euler"]')
    page.check('[data-testid="solver-rk4"]')
    set_rate(page, 60)
    page.click('[data-testid="speed-10"]')
    race = ["velocity_verlet", "euler", "rk4"]
    settings_are(page, solvers=race, rate=60, speed=10)
    reset(page)
    wait_for_time(page, 25.0)                  # four orbits: Euler has spiralled well out
    page.wait_for_function("() => Object.values(window.odekitPage.trailLengths()).every(n => n > 50)")

    lengths = page.evaluate("window.odekitPage.trailLengths()")
    assert list(lengths) == race
    colours = page.evaluate("window.odekitPage.colours")
    counts = colour_counts(page, "#scene", colours)
    used, unused = counts[:len(race)], counts[len(race):]
    assert all(n > 40 for n in used), dict(zip(colours, counts))
    assert all(n < 5 for n in unused), dict(zip(colours, counts))
    # the energy-error plot has a curve per solver too
    curves = colour_counts(page, "#error-plot", colours)
    assert all(n > 20 for n in curves[:len(race)]) and all(n < 5 for n in curves[len(race):]), curves
    # and the table a row per solver, in the race's order
    rows = page.eval_on_selector_all('#readouts tbody tr', "rows => rows.map(r => r.dataset.solver)")
    assert rows == race

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "serve-race.png"
    shot.unlink(missing_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= VIEWPORT["width"] and height >= VIEWPORT["height"]
    assert len(data) > 30_000            # a picture, not a blank page


@pytest.mark.parametrize("scene", ["orbit", "pendulum"])
def test_the_readouts_agree_with_odekits_invariants_at_the_state_shown(open_page, scene):
    page = open_page(f"#scene={scene}&solvers=rk4&rate=200&speed=10&e=0.7&B=0")
    settings_are(page, scene=scene, solvers=["rk4"], e=0.7)
    wait_for_time(page, 3.0)
    pause(page)
    shown_row = row(page, "rk4")
    x, v, cells = shown_row["x"], shown_row["v"], shown_row["cells"]
    if scene == "orbit":
        problem = problems.kepler(e=0.7)
        inv = {name: g(0.0, x, v) for name, g in problem.invariants.items()}
        E = inv["energy"]
        expected = {"energy": E, "angular_momentum": inv["angular_momentum"], "eccentricity": inv["eccentricity"],
                    "radius": math.hypot(*x), "speed": math.hypot(*v),
                    "period": 2 * math.pi * (-1 / (2 * E)) ** 1.5}
        # the extreme radii seen: between the pericentre 0.3 of e = 0.7 and the apocentre 1.7
        assert 0.3 - 1e-3 < float(cells["r_min"]) <= float(cells["radius"]) <= float(cells["r_max"]) < 1.7 + 1e-3
    else:
        problem = problems.pendulum()
        expected = {"energy": problem.invariants["energy"](0.0, x, v), "angle": x, "angular_velocity": v,
                    "period": problems.pendulum_period(9.8, 1.0, x, v)}
    for key, value in expected.items():
        assert agrees(cells[key], float(value)), (key, cells[key], value)
    # the energy bars show the same total
    assert agrees(page.text_content('[data-testid="bar-total"]'), expected["energy"], digits=4)


def open_stability(open_page, methods):
    page = open_page(f"#scene=stability&methods={','.join(methods)}")
    page.wait_for_function(f"() => window.odekitPage.stability.names.length === {len(methods)}")
    return page


def click_plane(page, re, im):
    box = page.locator('[data-testid="plane"]').bounding_box()
    at = page.evaluate(f"window.odekitPage.planePoint({re}, {im})")
    page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])
    page.wait_for_function(f"""() => {{ const s = window.odekitPage.stability;
        return s.at && s.z && Math.abs(s.z[0] - {re}) < 0.05 && Math.abs(s.z[1] - {im}) < 0.05; }}""")
    return page.evaluate("window.odekitPage.stability")


def verdict(page, method):
    return page.text_content(f'[data-testid="stability-{method}"] [data-key="verdict"]')


def test_the_stability_explorer_shades_regions_and_judges_the_point_clicked(open_page):
    page = open_stability(open_page, ["rk4", "velocity_verlet"])
    rk4 = page.evaluate("window.odekitPage.colours[0]")
    # the region drawn: z = -1 + 0.5i is inside rk4's (|R| <= 1), -3.5 + 0.5i outside
    inside = page.evaluate("window.odekitPage.planePoint(-1, 0.5)")
    outside = page.evaluate("window.odekitPage.planePoint(-3.5, 0.5)")
    background = [11, 16, 32]
    page.wait_for_function(f"(args) => ({PIXEL_AT})(args).join() !== '{','.join(map(str, background))}'",
                           arg=["#plane", inside["x"], inside["y"]])      # the regions are drawn
    tint = pixel_at(page, "#plane", inside["x"], inside["y"])
    plain = pixel_at(page, "#plane", outside["x"], outside["y"])
    colour = [int(rk4[i:i + 2], 16) for i in (1, 3, 5)]
    # shaded toward rk4's colour; the outside is the bare background
    assert sum(abs(a - b) for a, b in zip(tint, colour)) < sum(abs(a - b) for a, b in zip(plain, colour)) - 60
    assert plain == background

    far = click_plane(page, -3, 0)
    assert verdict(page, "rk4") == "unstable"
    # R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24: 1.375 at z = -3; the page's own evaluation agrees
    z = far["z"]
    assert far["at"]["rk4"]["abs_R"] == pytest.approx(abs(sum(complex(*z) ** k / math.factorial(k)
                                                              for k in range(5))), rel=1e-12)
    assert page.evaluate(f"window.odekitPage.absR('rk4', {z[0]}, {z[1]})") == pytest.approx(far["at"]["rk4"]["abs_R"])
    assert verdict(page, "velocity_verlet") == "stable"     # on the real axis, h omega = 0
    # |R|^n is animated up to n = 40: it grows past 1e4 for the unstable step
    page.wait_for_function("() => document.querySelector('[data-testid=power-n]').textContent === '40'", timeout=10_000)
    power = float(page.text_content('[data-testid="stability-rk4"] [data-key="power"]'))
    assert power == pytest.approx(far["at"]["rk4"]["abs_R"] ** 40, rel=1e-2) and power > 1e4

    near = click_plane(page, -1, 0)
    assert verdict(page, "rk4") == "stable"
    assert near["at"]["rk4"]["abs_R"] == pytest.approx(0.375, abs=0.02)     # 3/8 at z = -1 exactly
    assert page.get_attribute('[data-testid="stability-rk4"]', "data-stable") == "true"

    # an implicit method: the page's R = P/Q agrees with the server's |R(z)| there too
    page.check('[data-testid="method-backward_euler"]')
    page.wait_for_function("() => window.odekitPage.stability.names.length === 3")
    page.wait_for_function("() => window.odekitPage.stability.at")
    stab = page.evaluate("window.odekitPage.stability")
    assert stab["names"] == ["rk4", "velocity_verlet", "backward_euler"]
    for name in ("rk4", "backward_euler"):
        js = page.evaluate(f"window.odekitPage.absR('{name}', {stab['z'][0]}, {stab['z'][1]})")
        assert js == pytest.approx(stab["at"][name]["abs_R"], rel=1e-12), name
    assert verdict(page, "backward_euler") == "stable"

    # a splitting method by its interval: velocity Verlet's is |h omega| < 2
    click_plane(page, -0.5, 2.5)
    assert verdict(page, "velocity_verlet") == "unstable"
    click_plane(page, -0.5, 1.5)
    assert verdict(page, "velocity_verlet") == "stable"
    # the point is part of the address
    assert "methods=rk4,velocity_verlet" in page.url and "&z=-0.5" in page.url


def test_damping_keeps_all_eight_offered_and_the_energy_decays(open_page):
    page = open_page("#scene=pendulum&solvers=velocity_verlet,rk4&rate=400&speed=10&B=0")
    settings_are(page, scene="pendulum", solvers=["velocity_verlet", "rk4"], B=0)
    page.locator('[data-testid="B"]').fill("1")
    settings_are(page, B=1, solvers=["velocity_verlet", "rk4"])
    # the damping is declared, so the Verlet family and Forest-Ruth solve it exactly (#18): the
    # classic comparison's eight are all offered at B > 0, and none was dropped
    for name in DEFAULT_METHODS:
        assert page.locator(f'[data-testid="solver-{name}"]').count() == 1, name
    assert "cannot run" not in page.text_content('[data-testid="status"]')
    assert "B=1" in page.url and "solvers=velocity_verlet,rk4" in page.url
    t = page.evaluate("window.odekitPage.frame.t")
    E_then = [shown(page, name, "energy") for name in ("velocity_verlet", "rk4")]
    wait_for_time(page, t + 3.0)
    for name, before in zip(("velocity_verlet", "rk4"), E_then):   # e^{-B t}: a damped swing loses most of it
        assert shown(page, name, "energy") < 0.5 * before, name


def test_a_link_restores_its_settings_and_names_what_it_could_not(open_page):
    page = open_page("#scene=orbit&solvers=rk4,nonsense,euler&rate=250&speed=100&e=0.3")
    settings_are(page, scene="orbit", solvers=["rk4", "euler"], rate=250, speed=100, e=0.3)
    status = page.locator('[data-testid="status"]')
    assert status.get_attribute("data-kind") == "error" and "nonsense" in status.text_content()
    assert page.is_checked('[data-testid="race"]')
    assert page.is_checked('[data-testid="speed-100"]')
    assert page.input_value('[data-testid="rate"]') == "250"
    # the share link is the address of exactly this view
    link = page.text_content('[data-testid="share-link"]')
    assert "solvers=rk4,euler" in link and "rate=250" in link and "e=0.3" in link and "nonsense" not in link


def test_a_refusal_by_the_server_is_shown_on_the_page(open_page):
    # a server for one page: the second is refused with an `error`, which the page must show
    address, stop = _serve(create_app(max_sessions=1, warm=False))
    try:
        first = open_page(base=address, wait=False)
        first.wait_for_function("() => window.odekitPage && window.odekitPage.settings", timeout=FIRST_FRAME)
        second = open_page(base=address, wait=False)
        second.wait_for_function("() => document.querySelector('[data-testid=status]').dataset.kind === 'error'")
        assert "limit of 1" in second.text_content('[data-testid="status"]')
        first.close()
        second.close()
    finally:
        stop()


# --- a server that is not there ----------------------------------------------------------------

CONNECT_TIMEOUT = 5.0       # s: the page's own limit on a handshake (app.js)
HELLO_TIMEOUT = 10.0        # s: the page's wait for the server's first message before it says so (app.js)
INK = [148, 163, 184]       # the pendulum's pivot (draw.js)


def _page_only(socket):
    """The page's own files, with the coroutine ``socket`` at /ws in place of the server's."""
    from starlette.applications import Starlette
    from starlette.responses import FileResponse
    from starlette.routing import Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles

    from odekit.serve.app import STATIC

    async def index(request):
        return FileResponse(STATIC / "index.html")
    return Starlette(routes=[Route("/", index), Mount("/static", StaticFiles(directory=STATIC)),
                             WebSocketRoute("/ws", socket)])


def status(page):
    return page.evaluate("(() => { const s = document.querySelector('[data-testid=status]');"
                         " return {kind: s.dataset.kind, text: s.textContent}; })()")


@pytest.mark.parametrize("behaviour", ["refuses", "never answers"])
def test_the_page_says_when_it_cannot_reach_the_server_and_tries_again(open_page, behaviour):
    import asyncio

    attempts, release = [], threading.Event()

    async def socket(ws):
        attempts.append(time.monotonic())
        if behaviour == "never answers":        # the handshake is left hanging
            while not release.is_set():
                await asyncio.sleep(0.05)
        await ws.close()                        # before accepting: a 403 to the handshake

    address, stop = _serve(_page_only(socket))
    try:
        began = time.monotonic()
        page = open_page("#scene=pendulum", base=address, wait=False, socket_may_fail=True)
        # before any answer: the tab the link asks for, its pivot drawn, the controls waiting
        assert page.get_attribute("#tab-pendulum", "aria-selected") == "true"
        centre = page.evaluate("[document.querySelector('#scene').clientWidth / 2,"
                               " document.querySelector('#scene').clientHeight / 2]")
        page.wait_for_function(f"(args) => ({PIXEL_AT})(args).join() === '{','.join(map(str, INK))}'",
                               arg=["#scene", *centre], timeout=5_000)
        assert page.is_disabled('[data-testid="rate"]') and page.is_disabled('[data-testid="race"]')
        assert "listed once the server answers" in page.text_content("#solver-list")
        # then, within a bounded time, what happened and what to do
        page.wait_for_function("() => document.querySelector('[data-testid=status]').dataset.kind === 'error'",
                               timeout=(CONNECT_TIMEOUT + 5) * 1000)
        waited = time.monotonic() - began
        shown = status(page)["text"]
        port = address.rsplit(":", 1)[1].strip("/")
        assert f"Cannot reach the odekit server at 127.0.0.1:{port}" in shown, shown
        assert "odekit serve" in shown and "Trying again in 1 s; or reload the page" in shown
        if behaviour == "refuses":
            assert "refused" in shown and waited < CONNECT_TIMEOUT
        else:
            assert f"no answer within {CONNECT_TIMEOUT:g} s" in shown and waited >= CONNECT_TIMEOUT - 0.5
        # and it tries again by itself, waiting longer each time
        page.wait_for_function("() => document.querySelector('[data-testid=status]').textContent"
                               ".includes('Trying again in 2 s')", timeout=(CONNECT_TIMEOUT + 5) * 1000)
        assert len(attempts) >= 2
        assert page.is_disabled('[data-testid="rate"]')
    finally:
        release.set()
        stop()


def test_the_page_says_when_the_connection_drops_and_reconnects_by_itself(open_page):
    port = _free_port()
    address, stop = _serve(create_app(warm=False), port)
    page = open_page("#scene=orbit&solvers=rk4&rate=200&speed=10", base=address, socket_may_fail=True)
    wait_for_time(page, 1.0)
    assert not page.is_disabled('[data-testid="rate"]')
    mark_run(page)
    stop()
    page.wait_for_function("() => document.querySelector('[data-testid=status]').dataset.kind === 'error'",
                           timeout=10_000)
    shown = status(page)["text"]
    assert f"Lost the connection to the odekit server at 127.0.0.1:{port}" in shown, shown
    assert "Trying again in" in shown and page.is_disabled('[data-testid="rate"]')
    # the server is back: the page finds it, starts its link's run again and says so
    address, stop = _serve(create_app(warm=False), port)
    try:
        page.wait_for_function("() => document.querySelector('[data-testid=status]').textContent"
                               ".startsWith('reconnected')", timeout=30_000)
        assert status(page)["kind"] == "info"
        wait_for_new_run(page)
        settings_are(page, scene="orbit", solvers=["rk4"], rate=200, speed=10)
        assert not page.is_disabled('[data-testid="rate"]')
    finally:
        stop()


def test_the_page_says_when_the_server_accepts_but_never_says_hello(open_page):
    import asyncio

    attempts, release = [], threading.Event()

    async def socket(ws):
        attempts.append(time.monotonic())
        await ws.accept()
        while not release.is_set():
            await asyncio.sleep(0.05)
        await ws.close()

    address, stop = _serve(_page_only(socket))
    try:
        page = open_page(base=address, wait=False, socket_may_fail=True)
        page.wait_for_function("() => document.querySelector('[data-testid=status]').dataset.kind === 'error'",
                               timeout=(HELLO_TIMEOUT + 5) * 1000)
        shown = status(page)["text"]
        assert f"accepted the connection but has said nothing for {HELLO_TIMEOUT:g} s; still waiting" in shown
        assert len(attempts) == 1 and page.is_disabled('[data-testid="rate"]')     # it waits, it does not retry
    finally:
        release.set()
        stop()
