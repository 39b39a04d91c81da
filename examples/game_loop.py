"""A game loop with a fixed physics step: a bouncing ball, drawn at a frame rate that wobbles.

The physics steps at ``h = 1/120`` s whatever the frame rate, as games do
(Glenn Fiedler, "Fix your timestep!"): each frame hands its duration to
:meth:`odekit.Integrator.run_frame`, which takes the whole steps that fit and
returns ``alpha``, the leftover fraction of a step; the frame draws
:meth:`odekit.Integrator.interpolate` at ``alpha``, the state between the
last two steps.  The frame clock is fake -- about 60 Hz with jitter, and
one hitch of a third of a second, longer than ``max_substeps`` steps, whose
excess is dropped rather than caught up -- and the drawing is a line of
text per frame, so no window is needed::

    python examples/game_loop.py                 # 3 s of frames
    python examples/game_loop.py --seconds 10 --backend numba
"""

import argparse

import numpy as np

import odekit

G, RESTITUTION, H = 9.81, 0.8, 1 / 120


def gravity(t, x, v):
    return np.array([-G])


def height(t, x, v):
    return x[0]


def bounce(t, x, v):
    v[0] = -RESTITUTION * v[0]


def frame_times(seconds, seed=0):
    """About 60 frames a second, give or take 4 ms, and a hitch of 0.3 s after the first second."""
    rng = np.random.default_rng(seed)
    t, hitched = 0.0, False
    while t < seconds:
        dt = 1 / 60 + rng.uniform(-0.004, 0.004)
        if t > 1.0 and not hitched:
            dt, hitched = 0.3, True
        t += dt
        yield dt


def draw(height_now, width=60, top=2.0):
    """The ball as an ``o`` on a line: its height to scale, the floor at the left."""
    column = int(round(min(max(height_now, 0.0), top) / top * (width - 1)))
    return "|" + " " * column + "o"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="frame time to run (default 3)")
    parser.add_argument("--backend", default="python", choices=["auto", "numba", "python"])
    options = parser.parse_args()
    ball = odekit.SecondOrderProblem(gravity, (0.0, 1e9), np.array([2.0]), np.array([0.0]),
                                     velocity_dependent=False)
    floor = odekit.Event(height, direction=-1, affect=bounce, name="floor")
    it = odekit.Integrator(ball, "velocity_verlet", h=H, events=floor, backend=options.backend)
    for frame, dt in enumerate(frame_times(options.seconds)):
        t_before = it.t
        alpha = it.run_frame(dt, max_substeps=8)
        x, v = it.interpolate(alpha)
        steps = round((it.t - t_before) / H)
        note = "".join(f"  bounce at t={e.t:.4f}" for e in it.last_events)
        if it.dropped:
            note += f"  dropped {it.dropped * 1e3:.0f} ms"
        print(f"{frame:4d} dt={dt * 1e3:5.1f} ms  steps={steps}  alpha={alpha:.2f}  {draw(x[0]):62s}{note}")
    bounces = len(it.event_log)
    print(f"\n{it.stats.naccepted - bounces} steps of {H:.5f} s (and {bounces} bounces, each cutting one in two), "
          f"t = {it.t:.4f}; frame time dropped: {it.total_dropped:.4f} s, not yet stepped: {it.accumulator:.4f} s")


if __name__ == "__main__":
    main()
