"""The scenes of the live page: a zoo problem, what the page reads off a state, and burns.

A scene is the physics only; :mod:`odekit.serve.session` runs integrators on
it.  Every readout is computed here from the problem's own invariants
(:func:`odekit.problems.kepler`, :func:`odekit.problems.pendulum`), so the
page shows odekit's numbers, not numbers of its own.
"""

import functools
import math

import numpy as np

from .. import problems
from ..events import Event

# The live run has no end: Integrator.step goes on past the span. The span only sizes
# the growth a StiffnessWarning quotes ("x10^k over the n steps of the span"), which
# reads best over a run a person watches: ~16 orbits, ~50 swings of the pendulum.
T_END = 100.0
# The planet's radius: the orbit's pericentre is 0.1 at the largest e the page offers, so
# only a burn (or a solver's drift) brings the satellite down.  The page draws it this size.
PLANET_RADIUS = 0.05
# The pendulum's wall: a fraction of the speed the bob keeps, reversed along its circle
# (the rod holds it there, so the whole velocity turns, not only its part normal to the wall)
WALL_RESTITUTION = 0.8


def _altitude(t, x, v, mu):
    """Height above the planet's surface: the orbit's event, terminal where it falls to zero."""
    return math.sqrt(x[0] * x[0] + x[1] * x[1]) - PLANET_RADIUS


# one Event for every orbit: the compiled kernels of a run are kept per event, and reused
CRASH = Event(_altitude, direction=-1, terminal=True, name="crash")


@functools.lru_cache(maxsize=16)
def wall_event(wall):
    """The bounce off a wall at ``x = -wall`` (rod lengths left of the pivot), coming from its right."""
    def wall_gap(t, theta, omega, g, L, B):
        return L * np.sin(theta) + wall * L

    def bounce(t, theta, omega, g, L, B):
        # numbers, not the 0-d arrays theta and omega are here: a tuple of those Numba cannot store
        return theta.item(), -WALL_RESTITUTION * omega.item()

    return Event(wall_gap, direction=-1, affect=bounce, name="wall")


class Orbit:
    """A satellite on ``problems.kepler(e)``: mu = 1, semi-major axis 1, period 2 pi.

    Thrust is a velocity change of ``dv`` along the velocity (prograde,
    retrograde) or along the radius (radial_out, radial_in).
    """

    name = "orbit"
    directions = ("prograde", "retrograde", "radial_in", "radial_out")
    events = (CRASH,)

    def __init__(self, e=0.5):
        self.problem = problems.kepler(e=e, t_end=T_END)
        self.mu = self.problem.args[0]
        self.invariants = self.problem.invariants

    def burn(self, x, v, direction, dv):
        """The velocity change of a burn of size ``dv`` at ``(x, v)``."""
        along = {"prograde": v, "retrograde": -v, "radial_out": x, "radial_in": -x}[direction]
        return dv * along / np.hypot(*along)

    def stop_message(self, record):
        """What the page says when the run stops at a terminal event."""
        return (f"crashed into the planet at t = {record.t:.4f} (r = {PLANET_RADIUS:g}); "
                "press Reset, or change e, to fly again")

    def observe(self, positions, track):
        """Keep in ``track`` the extreme radii of the ``positions`` (one row per step)."""
        radii = np.hypot(positions[:, 0], positions[:, 1])
        track["r_min"] = min(track.get("r_min", math.inf), float(radii.min()))
        track["r_max"] = max(track.get("r_max", -math.inf), float(radii.max()))

    def readouts(self, x, v, track):
        """Radius, speed, extreme radii over every step (kept in ``track``), osculating period, L and e."""
        t = 0.0
        radius = float(np.hypot(*x))
        total = float(self.invariants["energy"](t, x, v))
        # Kepler's third law for the osculating ellipse, a = -mu / 2E: the period the
        # orbit would have from here on, which a burn changes at once
        period = 2 * math.pi * math.sqrt((-self.mu / (2 * total)) ** 3 / self.mu) if total < 0 else None
        return {"radius": radius, "speed": float(np.hypot(*v)), "r_min": track["r_min"], "r_max": track["r_max"],
                "period": period,
                "angular_momentum": float(self.invariants["angular_momentum"](t, x, v)),
                "eccentricity": float(self.invariants["eccentricity"](t, x, v))}

    def energy(self, x, v):
        total = float(self.invariants["energy"](0.0, x, v))
        kinetic = 0.5 * float(v @ v)
        return {"kinetic": kinetic, "potential": total - kinetic, "total": total}

    def accel(self, x, v):
        return self.problem.acceleration(0.0, x, v)


class Pendulum:
    """The rigid pendulum ``problems.pendulum(B=B)``, g = 9.8, L = 1, from 2 rad at rest.

    Thrust is a push of ``dv`` in angular velocity, with the swing
    (prograde) or against it (retrograde).  An optional vertical ``wall`` at
    ``x = -wall`` (left of the pivot; the bob starts on the right) bounces
    the bob back with :data:`WALL_RESTITUTION` of its speed.  Gravity pulls
    the bob away from the wall, so the bounces come about a swing apart,
    ever weaker, never piling up in finite time (no Zeno ball): the swing
    shrinks towards the wall's angle (below it with damping, and then the
    bob stays clear until a burn pushes it back).
    """

    name = "pendulum"
    directions = ("prograde", "retrograde")

    def __init__(self, B=0.0, wall=None):
        self.problem = problems.pendulum(B=B, t_end=T_END)
        self.g, self.L, self.B = self.problem.args
        self.wall = wall
        self.events = () if wall is None else (wall_event(wall),)
        self.invariants = self.problem.invariants

    def burn(self, theta, omega, direction, dv):
        sense = 1.0 if omega >= 0 else -1.0       # at rest, prograde is counter-clockwise
        return np.array(dv * sense * (1.0 if direction == "prograde" else -1.0))

    def observe(self, angles, track):
        """Nothing to keep between frames: the readouts are of the current state."""

    def readouts(self, theta, omega, track):
        theta, omega = float(theta), float(omega)
        period = problems.pendulum_period(self.g, self.L, theta, omega)
        return {"angle": theta, "angular_velocity": omega,
                "period": period if math.isfinite(period) else None}

    def energy(self, theta, omega):
        total = float(self.invariants["energy"](0.0, theta, omega))
        kinetic = 0.5 * self.L ** 2 * float(omega) ** 2
        return {"kinetic": kinetic, "potential": total - kinetic, "total": total}

    def accel(self, theta, omega):
        return self.problem.acceleration(0.0, theta, omega)


SCENES = {"orbit": Orbit, "pendulum": Pendulum}
