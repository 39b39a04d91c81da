"""One page's simulation: settings, integrators, frames, and the checking of every message.

A :class:`Session` knows nothing of sockets: :meth:`Session.handle` takes
the text of one message and returns the replies, and :meth:`Session.frame`
advances the integrators by some wall-clock time and returns a frame.  The
WebSocket endpoint (:mod:`odekit.serve.app`) only carries the text, which
keeps the protocol testable without a server.

Nothing the page sends is evaluated: each message is parsed as JSON and
every field is checked against the accepted names, types and ranges, by
odekit's own checks (:mod:`odekit.checks`), with the values shown as JSON.
"""

import json
import math
import warnings

import numpy as np

from .. import analysis, checks
from ..theory.stability import is_splitting
from ..theory.stiffness import StiffnessWarning
from ..integrator import IntegrationError, Integrator
from ..registry import method as lookup_method, methods as all_methods
from ..multistep import BDFCoefficients
from ..shootout import DEFAULT_METHODS
from .scenes import PLANET_RADIUS, SCENES, WALL_RESTITUTION

MAX_MESSAGE = 4096          # characters; a settings message needs a few hundred
MAX_DEPTH = 2               # levels of lists or objects in a field's value: z is [re, im], solvers a list
MAX_SOLVERS = 8
RATE = (10.0, 20000.0)      # derivative evaluations per simulated second
SPEEDS = (1, 10, 100)
E_RANGE = (0.0, 0.9)
B_RANGE = (0.0, 5.0)
WALL_RANGE = (0.05, 0.95)   # the pendulum's wall, rod lengths left of the pivot (at 1 it would only touch the circle)
Z_LIMIT = 1000.0            # |Re z| and |Im z| the stability explorer answers for (its plane shows |z| < 6)
THRUST_DV = 0.005           # velocity change of one burn (orbital speed is ~1)
THRUST_SHOWN = 0.3          # wall seconds a burn's arrow stays on the page
MAX_FRAME_WALL = 0.1        # a late frame advances at most this much wall time
SIM_PER_WALL = 1.0          # simulated seconds per wall second at speed x1
PATH_POINTS = 64            # at most, positions between two frames sent for the trails,
PATH_SPACING = 0.02         # about one per this much simulated time (~300 per orbit)
EVENTS_SHOWN = 16           # at most, the latest events of a runner sent in one frame

DEFAULTS = {"type": "start", "scene": "orbit", "solvers": ["velocity_verlet"], "rate": 500.0,
            "speed": 1, "e": 0.5, "B": 0.0, "wall": None}


class MessageError(ValueError):
    """A message the session refuses; ``field`` names the field at fault, if one."""

    def __init__(self, message, field=None):
        super().__init__(message)
        self.field = field


def live_methods(scene):
    """Names of the methods the page offers for a scene's problem.

    Those with a fixed number of derivative evaluations per step, so that a
    rate of evaluations fixes the step; implicit methods iterate Newton's
    method and are left to the stability explorer.  The classic eight of the
    shootout come first.
    """
    problem = scene.problem
    usable = [m for m in all_methods() if m.evaluations_per_step is not None and m.applies_to(problem)]
    usable.sort(key=lambda m: DEFAULT_METHODS.index(m.name) if m.name in DEFAULT_METHODS else len(DEFAULT_METHODS))
    return [m.name for m in usable]


def stability_methods():
    """Names the stability explorer accepts: one-step methods with ``R(z)``, and kick-drift splittings.

    Not BDF (multistep: no ``R(z)``) nor a method for N bodies only (its drift is no linear flow).
    """
    return [m.name for m in all_methods() if not isinstance(m.coefficients, BDFCoefficients)
            and (is_splitting(m) or not m.second_order_only)]


def hello():
    """The first message of a session: what may be asked for and the defaults."""
    offered = {"orbit": live_methods(SCENES["orbit"]()),
               "pendulum": live_methods(SCENES["pendulum"](B=0.0)),
               "pendulum_damped": live_methods(SCENES["pendulum"](B=1.0))}
    info = {m.name: {"order": m.order, "evaluations_per_step": m.evaluations_per_step, "family": m.family.name,
                     "symplectic": m.symplectic, "title": m.title, "summary": m.summary()}
            for m in all_methods()}
    limits = {"rate": list(RATE), "speeds": list(SPEEDS), "max_solvers": MAX_SOLVERS, "e": list(E_RANGE),
              "B": list(B_RANGE), "wall": list(WALL_RANGE), "wall_restitution": WALL_RESTITUTION,
              "planet_radius": PLANET_RADIUS, "z": Z_LIMIT, "thrust_dv": THRUST_DV, "max_message": MAX_MESSAGE}
    return {"type": "hello", "methods": offered, "info": info, "stability_methods": stability_methods(),
            "limits": limits, "defaults": dict(DEFAULTS)}


class _Live(Integrator):
    """An :class:`Integrator` stepped frame by frame: a loop not compiled yet is compiled in a thread of its own,
    while the page runs on Python, and the run goes on compiled from the first frame after (see
    :func:`odekit.backend.prepare`).  On a new machine the page had waited 20-30 s for Numba."""

    _lazy = "background"


class Runner:
    """One solver on the scene: an :class:`Integrator` at ``h = k / rate``, and what the page shows of it.

    The integrator watches the scene's events (the orbit's crash, the
    pendulum's wall).  ``status`` is ``running``; ``stopped`` after a
    terminal event, with the scene's ``message``; or ``failed`` after an
    :class:`IntegrationError`, with its message.  Either way the state stays
    where the run ended and no more steps are tried.
    """

    def __init__(self, scene, name, rate, x, v, t=0.0):
        self.method = lookup_method(name)
        self.scene = scene
        self.h = self.method.evaluations_per_step / rate
        # an explicit method beyond its stability limit is warned about: on this page
        # that is a lesson, not a mistake, so the warning is shown with the runner; any other
        # warning goes on to the server's console as it is raised -- the notice of a loop that
        # Numba compiles (tens of seconds on a new machine) before the page can start
        caught = []
        with warnings.catch_warnings():
            warnings.simplefilter("always", StiffnessWarning)
            shown = warnings.showwarning

            def show(message, category, *where, **options):
                if issubclass(category, StiffnessWarning):
                    caught.append(str(message))
                else:
                    shown(message, category, *where, **options)
            warnings.showwarning = show
            self.integ = _Live(scene.problem, self.method, h=self.h, events=scene.events)
        self.warning = caught[0] if caught else None
        self.integ.x, self.integ.v, self.integ.t = x, v, t
        self.owed = 0.0             # simulated time not yet stepped: less than one step
        self.track = {}             # extreme radii since the start or the last burn
        self.scene.observe(np.array([x]), self.track)
        self.path = []              # positions at some of the steps of the last frame
        self.reference = scene.energy(*self._state())["total"]
        self.burn = None            # the last burn's velocity change
        self.status = "running"
        self.message = None
        self.events = []            # events since the last frame, as the page is sent them

    def _state(self):
        x, v = self.integ.x, self.integ.v
        return (x.copy(), v.copy()) if x.ndim else (float(x), float(v))

    def advance(self, dt):
        """Advance by ``dt`` of simulated time in whole steps of ``h``; the rest is owed to the next frame.

        Every step is looked at (extreme radii), and a few of them kept as the
        path since the last frame, so that a trail follows the orbit even
        when a frame spans half of it.
        """
        if self.status != "running":
            return
        self.owed += dt
        n = int(self.owed / self.h)
        if n:
            try:
                t, y = self.integ.record_steps(n)
            except IntegrationError as exc:     # the state stays at the last good step
                self.status, self.message = "failed", str(exc)
                t, y = exc.t, exc.y
            self.owed -= n * self.h
            self._happened(self.integ.last_events)
            self.scene.observe(y[:, 0], self.track)
            if len(t) > 2:              # the steps between the last frame's state and this one's
                count = min(PATH_POINTS, len(t) - 2, math.ceil(dt / PATH_SPACING))
                inner = np.linspace(1, len(t) - 2, count).round().astype(int)
                self.path = [_json(x) for x in y[np.unique(inner), 0]]

    def _happened(self, records):
        """Note the events of the last steps for the page; after a bounce, energy is measured from it."""
        for record in records:
            self.events.append({"t": record.t, "name": self.scene.events[record.index].name,
                                "x": _json(record.after[0]), "v": _json(record.after[1])})
        del self.events[:-EVENTS_SHOWN]
        if records and self.integ.terminated:
            self.status, self.message = "stopped", self.scene.stop_message(records[-1])
        elif records:       # an affect changed the energy: that is the scene's physics, not the solver's error
            self.reference = self.scene.energy(*records[-1].after)["total"]

    @property
    def running(self):
        return self.status == "running"

    def thrust(self, direction, dv):
        if not self.running:        # a wreck has no thruster
            return
        x, v = self._state()
        self.burn = self.scene.burn(x, v, direction, dv)
        self.integ.v = v + self.burn
        self.track = {}
        self.scene.observe(np.array([x]), self.track)
        self.reference = self.scene.energy(*self._state())["total"]

    def frame(self, show_burn):
        x, v = self._state()
        energy = self.scene.energy(x, v)
        scale = abs(self.reference) or 1.0
        stats = self.integ.stats
        path, self.path = self.path, []          # each step's position is sent once
        events, self.events = self.events, []    # and each event
        return {"solver": self.method.name, "t": self.integ.t, "x": _json(x), "v": _json(v), "path": path,
                "accel": _json(self.scene.accel(x, v)),
                "thrust": _json(self.burn) if show_burn and self.burn is not None else None,
                "energy": energy, "energy_error": (energy["total"] - self.reference) / scale,
                "readouts": self.scene.readouts(x, v, self.track),
                "steps": int(stats.naccepted), "nfev": int(stats.nfev),
                "status": self.status, "message": self.message, "events": events, "warning": self.warning}


class Session:
    """The settings and runners of one page.

    Parameters
    ----------
    clock : callable
        Wall time in seconds (``time.monotonic``); a test may pass its own.
    """

    def __init__(self, clock):
        self.clock = clock
        self.settings = None
        self.scene = None
        self.runners = []
        self.t = 0.0
        self.last_burn = -math.inf
        self.paused = False

    # --- the protocol ---------------------------------------------------------------
    def handle(self, text):
        """Replies (dicts) to one message's text; a bad message gets an ``error`` reply."""
        try:
            message = parse(text)
            kind = message["type"]
            if kind == "start":
                self.start(message)
            elif kind == "set":
                self.change(message)
            elif kind == "thrust":
                self.thrust(message)
            elif kind == "reset":
                self.reset()
            elif kind == "stability":
                # R(z) overflows to inf at a pole or far out: JSON has no inf
                return [_finite(stability(message))]
            return [self.state()]
        except MessageError as exc:
            return [{"type": "error", "message": str(exc), "field": exc.field}]
        except (ValueError, TypeError) as exc:    # refused by odekit itself (e.g. Integrator)
            return [{"type": "error", "message": str(exc), "field": None}]

    def state(self):
        return {"type": "state", "settings": None if self.settings is None
                else dict(self.settings, paused=self.paused)}

    def start(self, message):
        settings = dict(DEFAULTS)
        settings.update(check_settings(message, start=True))
        scene = _scene(settings)
        settings["solvers"] = _check_solvers(scene, settings["solvers"])
        self.runners = [Runner(scene, name, settings["rate"], scene.problem.x0, scene.problem.v0)
                        for name in settings["solvers"]]
        self.settings, self.scene, self.t = settings, scene, 0.0
        self.paused = bool(message.get("paused", False))
        self.last_burn = -math.inf
        self._tick = self.clock()

    def change(self, message):
        self._require_started()
        changes = check_settings(message, start=False)
        if "B" in changes and self.scene.name != "pendulum":
            raise MessageError(f"B is the pendulum's damping: the {self.scene.name} takes none; a 'set' for it "
                               f"accepts {', '.join(sorted(FIELDS['set'] - {'type', 'B'}))}", "B")
        settings = dict(self.settings, **{k: v for k, v in changes.items() if k != "paused"})
        if "paused" in changes:
            self.paused = changes["paused"]
            self._tick = self.clock()
        if any(key in changes for key in ("solvers", "rate", "B")):
            scene = _scene(settings) if "B" in changes else self.scene
            settings["solvers"] = _check_solvers(scene, settings["solvers"])
            # every solver goes on from where the first running one is, so a switch is seen at
            # once; when every one has stopped (crashed), the new ones start the run over
            going = next((runner for runner in self.runners if runner.running), None)
            if going is None:
                self.t = 0.0
            x, v = going._state() if going else (scene.problem.x0, scene.problem.v0)
            self.runners = [Runner(scene, name, settings["rate"], x, v, self.t) for name in settings["solvers"]]
            self.scene = scene
        self.settings = settings

    def thrust(self, message):
        self._require_started()
        directions = self.scene.directions
        direction = _check(checks.choice, "direction", message.get("direction"), directions,
                           f"one of {', '.join(directions)} for the {self.scene.name}", show=repr)
        for runner in self.runners:
            runner.thrust(direction, THRUST_DV)
        self.last_burn = self.clock()

    def reset(self):
        self._require_started()
        self.start(dict(self.settings, paused=self.paused))

    def _require_started(self):
        if self.settings is None:
            raise MessageError("no simulation yet: send a 'start' message first", "type")

    # --- running --------------------------------------------------------------------
    def frame(self):
        """Advance by the wall time since the last frame (times the speed) and describe the runners."""
        now = self.clock()
        # the clock stops with the last runner: the page's t stays at the crash
        if not self.paused and any(runner.running for runner in self.runners):
            dt = min(now - self._tick, MAX_FRAME_WALL) * SIM_PER_WALL * self.settings["speed"]
            for runner in self.runners:
                runner.advance(dt)
            self.t += dt
        self._tick = now
        show_burn = now - self.last_burn < THRUST_SHOWN
        return _finite({"type": "frame", "t": self.t, "paused": self.paused,
                        "runners": [runner.frame(show_burn) for runner in self.runners]})

    @property
    def running(self):
        return self.settings is not None


# --- checking messages ------------------------------------------------------------------

KINDS = ("start", "set", "thrust", "reset", "stability")
FIELDS = {"start": {"type", "scene", "solvers", "rate", "speed", "e", "B", "wall", "paused"},
          "set": {"type", "solvers", "rate", "speed", "B", "paused"},
          "thrust": {"type", "direction"}, "reset": {"type"}, "stability": {"type", "methods", "z"}}
REQUIRED = {"thrust": ("direction",), "stability": ("methods",)}


def parse(text):
    """The message as a dict with a known ``type`` and known fields, or a :class:`MessageError`."""
    if not isinstance(text, str):
        raise MessageError("messages must be JSON text, got binary data")
    if len(text) > MAX_MESSAGE:
        raise MessageError(f"message of {len(text)} characters is too long; the limit is {MAX_MESSAGE}")
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MessageError(f"message is not valid JSON ({exc.msg} at character {exc.pos})") from None
    except RecursionError:      # thousands of nested brackets: Python's parser gives up, and so do we
        raise MessageError(f"message nests too deeply; no field nests more than {MAX_DEPTH} levels") from None
    if not isinstance(message, dict):
        raise MessageError(f"message must be a JSON object, got {type(message).__name__}")
    kind = _check(checks.choice, "type", message.get("type"), KINDS, f"one of {', '.join(KINDS)}")
    accepted = ', '.join(sorted(FIELDS[kind] - {'type'})) or 'no other field'
    unknown = sorted(set(message) - FIELDS[kind])
    if unknown:
        raise MessageError(f"unknown field {_shown(unknown[0])} in a {kind!r} message; accepted: {accepted}",
                           unknown[0])
    for field in REQUIRED.get(kind, ()):
        if field not in message:
            raise MessageError(f"a {kind!r} message needs the field {field!r}", field)
    if kind == "set" and len(message) == 1:
        raise MessageError(f"a 'set' message changes at least one of {accepted}")
    for field, value in message.items():
        if _depth(value) > MAX_DEPTH:
            raise MessageError(f"{field} nests more than {MAX_DEPTH} levels of lists or objects; "
                               "no field takes more than a list of numbers or names", field)
    return message


def _depth(value):
    """Levels of lists and objects in a parsed JSON value, counted without recursion."""
    deepest, level = 0, [(value, 0)]
    while level:
        item, depth = level.pop()
        if isinstance(item, (list, dict)):
            depth += 1
            deepest = max(deepest, depth)
            level.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_settings(message, start):
    """The settings a ``start`` or ``set`` message gives, each checked."""
    out = {}
    if start:
        out["scene"] = _check(checks.choice, "scene", message.get("scene", DEFAULTS["scene"]), tuple(SCENES),
                              f"one of {', '.join(SCENES)}")
        if "e" in message:
            out["e"] = _number(message, "e", *E_RANGE)
        if "wall" in message:       # null: no wall
            out["wall"] = (None if message["wall"] is None
                           else _number(message, "wall", *WALL_RANGE, "null (no wall) or "))
    if "solvers" in message:
        out["solvers"] = _names(message, "solvers")
    if "rate" in message:
        out["rate"] = _number(message, "rate", *RATE)
    if "speed" in message:
        out["speed"] = int(_check(checks.real, "speed", message["speed"], f"one of {', '.join(map(str, SPEEDS))}",
                                  lambda x: x in SPEEDS))
    if "B" in message:
        out["B"] = _number(message, "B", *B_RANGE)
    if "paused" in message:
        out["paused"] = _check(checks.flag, "paused", message["paused"], "true or false")
    return out


def _number(message, field, low, high, other=""):
    # compared as a float: a 400-digit integer has none, and is refused
    return _check(checks.real, field, message[field], f"{other}a number from {low:g} to {high:g}",
                  lambda x: low <= x <= high)


def _names(message, field):
    names = _check(checks.strings, field, message[field], MAX_SOLVERS, f"a list of 1 to {MAX_SOLVERS} method names")
    if len(set(names)) != len(names):
        raise MessageError(f"{field} names a method twice: {_shown(names)}", field)
    return names


def _check_solvers(scene, names):
    """The registered names of the solvers ``names`` asks for, each offered for ``scene``."""
    offered = live_methods(scene)
    canonical = [_canonical(name) for name in names]
    for name, found in zip(names, canonical):
        if found not in offered:
            why = ("it is not a method with a fixed number of evaluations per step that applies here"
                   if found is not None else "there is no such method")
            raise MessageError(f"solvers: {_shown(name)} is not offered for the {scene.name} ({why}); "
                               f"accepted: {', '.join(offered)}", "solvers")
    # an alias is the method itself: two names of one method would race it against itself
    twice = next((name for i, name in enumerate(canonical) if name in canonical[:i]), None)
    if twice is not None:
        raise MessageError(f"solvers names {twice} twice: {_shown(names)}", "solvers")
    return canonical


def _canonical(name):
    """The registered name of a method name or alias, or None when there is no such method."""
    try:
        return lookup_method(name).name
    except ValueError:
        return None


def _scene(settings):
    if settings["scene"] == "orbit":
        return SCENES["orbit"](e=settings["e"])
    return SCENES["pendulum"](B=settings["B"], wall=settings["wall"])


def _shown(value):
    """A value for an error message, cut short: the page's text is echoed, never run."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check(check, field, value, *args, show=_shown):
    """``check(field, value, *args)``, one of :mod:`odekit.checks`, with values shown as JSON; refused: a MessageError."""
    try:
        return check(field, value, *args, show=show)
    except ValueError as exc:
        raise MessageError(str(exc), field) from None


def _finite(value):
    """``value`` with non-finite floats as None: JSON has no inf or nan, and the page's parser refuses them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _json(a):
    a = np.asarray(a, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


# --- the stability explorer -------------------------------------------------------------

def stability(message):
    """Stability data of the named methods, and their ``|R(z)|`` at ``z`` if given."""
    names = _names(message, "methods")
    accepted = stability_methods()
    z = None
    if "z" in message:
        z = complex(*_check(checks.reals, "z", message["z"], 2,
                            f"[re, im], two numbers from {-Z_LIMIT:g} to {Z_LIMIT:g}",
                            lambda x: -Z_LIMIT <= x <= Z_LIMIT))
    data, at = {}, {}
    for name in names:
        if _canonical(name) not in accepted:
            raise MessageError(f"methods: {_shown(name)} has no stability region here; "
                               f"accepted: {', '.join(accepted)}", "methods")
        m = lookup_method(name)
        if m.second_order_only:
            limit = analysis.oscillator_stability_limit(m)
            data[name] = {"kind": "oscillator", "limit": limit}
            if z is not None:
                # h omega = |Im z|: the step matrix's spectral radius on x'' = -omega^2 x
                M = analysis.oscillator_step_matrix(m, abs(z.imag))
                at[name] = {"abs_R": float(max(abs(np.linalg.eigvals(np.asarray(M, dtype=float))))),
                            "stable": abs(z.imag) < limit}
        else:
            R = analysis.stability_function(m)
            data[name] = {"kind": "rational", "numerator": [float(c) for c in R.numerator],
                          "denominator": [float(c) for c in R.denominator]}
            if z is not None:
                value = abs(complex(R(np.array([z]))[0]))
                at[name] = {"abs_R": value if math.isfinite(value) else None, "stable": value <= 1.0}
    reply = {"type": "stability", "methods": data}
    if z is not None:
        reply["z"] = [z.real, z.imag]
        reply["at"] = at
    return reply
