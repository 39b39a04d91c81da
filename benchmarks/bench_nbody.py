"""N-body benchmark: odekit's ``velocity_verlet`` against REBOUND's ``leapfrog``, per step and body.

Two systems, each run by both codes from the same state (same ``G``, masses,
positions and velocities) with the same fixed step:

* the zoo's ``problems.outer_solar_system`` (the Sun and the five outer
  planets, AU, solar masses and days), step 10 days;
* a cluster of 100 equal masses drawn from a Plummer sphere with a fixed
  seed (Aarseth, Hénon & Wielen, Astron. Astrophys. 37 (1974); Hénon units:
  ``G = M = 1``, total energy -1/4), moved to its centre of mass, with the
  zoo's force (no softening: odekit's N-body force has none, so REBOUND
  runs without it too), step 1e-4 of a crossing time about 2.8.

Both methods are second order with one force per step, but not the same
map: odekit's velocity Verlet is kick-drift-kick, REBOUND's leapfrog
drift-kick-drift.  Their relative energy errors at the end of the run should
therefore be of the same size (a check that both compute the same thing),
not equal.  REBOUND uses its defaults otherwise (``gravity = "basic"``,
direct summation, no collisions).

Times: CPU time of this process, best of five runs over the whole span
after a warm-up run (odekit's compiles its loop once per machine), divided
by steps and bodies.  odekit's include the run's set-up (small beside the
steps); REBOUND's include only ``sim.steps``, the simulation being built
before the clock starts.

Run ``python benchmarks/bench_nbody.py [--quick] [--json PATH]``.  A measurement: nothing asserted.
"""

import dataclasses
import math
import time

import numpy as np

import common
import odekit
from odekit import problems

SEED = 20261124
CLUSTER_BODIES = 100


@dataclasses.dataclass(frozen=True)
class Sizes:
    """The steps of each case and the timing; ``QUICK`` for ``--quick``."""

    solar_steps: int = 200_000        # 2,000,000 days at h = 10: 460 orbits of Jupiter
    cluster_steps: int = 2_000        # 0.2 in Hénon units at h = 1e-4
    timing: common.Timing = common.Timing(repeats=5, batch_seconds=0.0, clock=time.process_time)


QUICK = Sizes(solar_steps=2_000, cluster_steps=20, timing=common.QUICK_TIMING)


def plummer(n, seed=SEED):
    """``(masses, x0, v0)`` of ``n`` equal masses from a Plummer sphere in Hénon units, at rest at the origin.

    Radii from the inverse of the cumulative mass (cut at 10 scale radii),
    speeds by von Neumann rejection from ``q^2 (1 - q^2)^(7/2)`` times the
    local escape speed, isotropic directions; then scaled from the scale
    radius 1 to Hénon units (length ``3 pi / 16``) and shifted to the centre
    of mass.
    """
    rng = np.random.default_rng(seed)
    masses = np.full(n, 1.0 / n)
    x, v = np.empty((n, 3)), np.empty((n, 3))
    for i in range(n):
        r = 11.0
        while r > 10.0:
            r = 1.0 / math.sqrt(rng.uniform(1e-10, 1.0) ** (-2.0 / 3.0) - 1.0)
        x[i] = r * _direction(rng)
        while True:
            q, g = rng.uniform(0.0, 1.0), rng.uniform(0.0, 0.1)
            if g < q * q * (1.0 - q * q) ** 3.5:
                break
        v[i] = q * math.sqrt(2.0) * (1.0 + r * r) ** -0.25 * _direction(rng)
    scale = 3.0 * math.pi / 16.0
    x *= scale
    v /= math.sqrt(scale)
    x -= masses @ x
    v -= masses @ v
    return masses, x, v


def _direction(rng):
    """A random unit vector, uniform on the sphere."""
    z = rng.uniform(-1.0, 1.0)
    phi = rng.uniform(0.0, 2.0 * math.pi)
    s = math.sqrt(1.0 - z * z)
    return np.array([s * math.cos(phi), s * math.sin(phi), z])


def cluster(steps, h):
    """The Plummer cluster as a second-order problem over ``steps`` steps of ``h``, with the zoo's force."""
    masses, x0, v0 = plummer(CLUSTER_BODIES)
    G = 1.0

    def energy(t, x, v):
        return problems.nbody_energy(x, v, masses, G)

    return odekit.SecondOrderProblem(problems.outer_solar_system().accel, (0.0, steps * h), x0, v0,
                                     args=(G * masses,), velocity_dependent=False, name="plummer_cluster",
                                     invariants={"energy": energy}, autonomous=True), masses, G


def cases(sizes):
    """``(label, problem, masses, G, h, steps)`` of each system."""
    h_sun = 10.0
    sun = problems.outer_solar_system(t_end=sizes.solar_steps * h_sun)
    h_cluster = 1e-4
    clu, masses, G = cluster(sizes.cluster_steps, h_cluster)
    return [("outer solar system, h = 10 d", sun, np.array(problems.OUTER_SOLAR_SYSTEM_MASSES),
             problems.OUTER_SOLAR_SYSTEM_G, h_sun, sizes.solar_steps),
            (f"Plummer cluster, {CLUSTER_BODIES} bodies, h = 1e-4", clu, masses, G, h_cluster,
             sizes.cluster_steps)]


def odekit_run(prob, h):
    """A fixed-step velocity Verlet solve recording its ends: ``(relative energy error, steps)``."""
    steps = round((prob.t_span[1] - prob.t_span[0]) / h)
    sol = odekit.solve(prob, "velocity_verlet", h=h, save_every=steps, backend="numba")
    assert sol.success and sol.backend == "numba", sol.message
    energy = sol.invariants()["energy"]
    return abs(energy[-1] - energy[0]) / abs(energy[0]), sol.stats.naccepted


def rebound_simulation(masses, G, x0, v0, h):
    """REBOUND's simulation of these bodies with its ``leapfrog`` and step ``h``."""
    import rebound

    sim = rebound.Simulation()
    sim.G = G
    for m, x, v in zip(masses, x0, v0):
        sim.add(m=m, x=x[0], y=x[1], z=x[2], vx=v[0], vy=v[1], vz=v[2])
    sim.integrator = "leapfrog"
    sim.dt = h
    return sim


def rebound_run(sim, steps):
    """``steps`` steps of ``sim``: the relative energy error at the end."""
    e0 = sim.energy()
    sim.steps(steps)
    return abs(sim.energy() - e0) / abs(e0)


def rebound_time(masses, G, prob, h, steps, timing):
    """Best CPU time of ``sim.steps(steps)`` over ``timing.repeats`` fresh simulations, built off the clock."""
    sims = [rebound_simulation(masses, G, prob.x0, prob.v0, h) for _ in range(timing.repeats)]
    return common.best_of(lambda: sims.pop().steps(steps), timing)[0]


def main(argv=None):
    options = common.parser(__doc__).parse_args(argv)
    sizes = QUICK if options.quick else Sizes()
    report = {"machine": common.machine(), "quick": options.quick, "cases": []}
    common.print_header("odekit N-body benchmark: velocity_verlet against REBOUND's leapfrog",
                        report["machine"], options.quick)
    rebound = common.rebound(report["machine"])
    rows, ratios = [], {}
    for label, prob, masses, G, h, steps in cases(sizes):
        bodies = len(masses)
        odekit_run(prob.with_span((0.0, 10 * h)), h)                           # warm-up: compiles once
        case = {"case": label, "bodies": bodies, "h": h, "steps": steps}
        case["odekit_energy"], done = odekit_run(prob, h)
        assert done == steps, (done, steps)
        case["odekit_s"] = common.best_of(lambda: odekit_run(prob, h), sizes.timing)[0]
        per = 1e9 / (steps * bodies)
        row = [label, bodies, steps, f"{case['odekit_energy']:.2e}", "", f"{case['odekit_s'] * per:.1f}", ""]
        if rebound is not None:
            rebound_run(rebound_simulation(masses, G, prob.x0, prob.v0, h), min(steps, 10))   # warm-up
            case["rebound_energy"] = rebound_run(rebound_simulation(masses, G, prob.x0, prob.v0, h), steps)
            case["rebound_s"] = rebound_time(masses, G, prob, h, steps, sizes.timing)
            row[4], row[6] = f"{case['rebound_energy']:.2e}", f"{case['rebound_s'] * per:.1f}"
            ratios[f"{label}: REBOUND time / odekit's (>1: odekit faster)"] = case["rebound_s"] / case["odekit_s"]
            ratios[f"{label}: REBOUND energy error / odekit's"] = case["rebound_energy"] / case["odekit_energy"]
        else:
            ratios[f"{label}: odekit ns per step and body"] = case["odekit_s"] * per
        rows.append(row)
        report["cases"].append(case)
    print(f"\nenergy error: relative, at the end of the run; time: ns per step and body, best of "
          f"{sizes.timing.repeats} (CPU time)\n")
    common.print_table(["case", "bodies", "steps", "dE/E odekit", "dE/E REBOUND", "ns odekit", "ns REBOUND"], rows)
    common.print_ratios("velocity_verlet against REBOUND's leapfrog, per step and body", ratios)
    common.write_json(options.json, report)


if __name__ == "__main__":
    main()
