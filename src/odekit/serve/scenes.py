"""The scenes of the live page: a zoo problem, what the page reads off a state, and burns.

A scene is the physics only; :mod:`odekit.serve.session` runs integrators on
it.  Every readout is computed here from the problem's own invariants
(:func:`odekit.problems.kepler`, :func:`odekit.problems.pendulum`), so the
page shows odekit's numbers, not numbers of its own.
"""

import math

import numpy as np

from .. import problems

# The live run has no end: Integrator.step goes on past the span. The span only sizes
# the growth a StiffnessWarning quotes ("x10^k over the n steps of the span"), which
# reads best over a run a person watches: ~16 orbits, ~50 swings of the pendulum.
T_END = 100.0


class Orbit:
    """A satellite on ``problems.kepler(e)``: mu = 1, semi-major axis 1, period 2 pi.

    Thrust is a velocity change of ``dv`` along the velocity (prograde,
    retrograde) or along the radius (radial_out, radial_in).
    """

    name = "orbit"
    directions = ("prograde", "retrograde", "radial_in", "radial_out")

    def __init__(self, e=0.5):
        self.problem = problems.kepler(e=e, t_end=T_END)
        self.mu = self.problem.args[0]
        self.invariants = self.problem.invariants

    def burn(self, x, v, direction, dv):
        """The velocity change of a burn of size ``dv`` at ``(x, v)``."""
        along = {"prograde": v, "retrograde": -v, "radial_out": x, "radial_in": -x}[direction]
        return dv * along / np.hypot(*along)

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
        return self.problem.accel(0.0, x, v, *self.problem.args)


class Pendulum:
    """The rigid pendulum ``problems.pendulum(B=B)``, g = 9.8, L = 1, from 2 rad at rest.

    Thrust is a push of ``dv`` in angular velocity, with the swing
    (prograde) or against it (retrograde).
    """

    name = "pendulum"
    directions = ("prograde", "retrograde")

    def __init__(self, B=0.0):
        self.problem = problems.pendulum(B=B, t_end=T_END)
        self.g, self.L, self.B = self.problem.args
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
        return self.problem.accel(0.0, theta, omega, *self.problem.args)


SCENES = {"orbit": Orbit, "pendulum": Pendulum}
