"""Wisdom-Holman benchmark: odekit's ``wisdom_holman`` against REBOUND's WHFast on the outer solar system.

The zoo's ``problems.outer_solar_system`` (the Sun and the five outer planets,
Hairer, Lubich & Wanner's data, units of AU, solar masses and days) run by
both codes from the same state with the same fixed steps, fractions of
Jupiter's period (4332.6 days): the largest relative energy error over the
run, sampled every ``SAMPLE`` steps, and the time per step.  Both run the
same map -- drift-kick-drift in Jacobi coordinates, the Kepler drift solved
in universal variables -- REBOUND with its defaults (safe mode: synchronised
every step, as odekit always is; no symplectic corrector).  odekit's
``velocity_verlet`` at the same steps shows what splitting around Kepler
buys.

Times: the best of several runs (CPU time of this process), each over the
whole span without sampling, after a warm-up run that compiles odekit's
loop; divided by the number of steps.  odekit's include its set-up of the
run, which is small beside 10^4 steps.

Run ``python benchmarks/bench_whfast.py [--quick] [--json PATH]``.  A measurement: nothing asserted.
"""

import dataclasses
import time

import numpy as np

import common
import odekit
from odekit import problems

JUPITER_PERIOD = 4332.59         # days
SAMPLE = 100                     # steps between the energies compared


@dataclasses.dataclass(frozen=True)
class Sizes:
    """The span, the steps (fractions of Jupiter's period) and the timing; ``QUICK`` for ``--quick``."""

    t_end: float = 2_000_000.0    # 460 orbits of Jupiter, 22 of Pluto
    fractions: tuple = (10, 20, 40, 80)
    timing: common.Timing = common.Timing(repeats=3, batch_seconds=0.0, clock=time.process_time)


QUICK = Sizes(t_end=20_000.0, fractions=(20,), timing=common.QUICK_TIMING)


def odekit_run(prob, method, h, sample):
    """One fixed-step solve, recording every ``sample``-th step: its relative energy error and steps."""
    sol = odekit.solve(prob, method, h=h, save_every=sample, backend="numba")
    assert sol.success and sol.backend == "numba", sol.message
    energy = sol.invariants()["energy"]
    return float(np.max(np.abs(energy - energy[0])) / abs(energy[0])), sol.stats.naccepted


def rebound_simulation(prob, h):
    """REBOUND's simulation of ``prob``'s bodies with WHFast and step ``h`` (None if not installed)."""
    import rebound

    sim = rebound.Simulation()
    sim.G = prob.nbody.G
    for m, x, v in zip(prob.nbody.masses, prob.x0, prob.v0):
        sim.add(m=m, x=x[0], y=x[1], z=x[2], vx=v[0], vy=v[1], vz=v[2])
    sim.integrator = "whfast"
    sim.dt = h
    return sim


def rebound_run(prob, h, steps, sample):
    """``steps`` steps of WHFast, the energy every ``sample``: the relative energy error."""
    sim = rebound_simulation(prob, h)
    e0, worst = sim.energy(), 0.0
    done = 0
    while done < steps:
        k = min(sample, steps - done)
        sim.steps(k)
        done += k
        worst = max(worst, abs(sim.energy() - e0) / abs(e0))
    return worst


def rebound_time(prob, h, steps, timing):
    def run():
        sim = rebound_simulation(prob, h)
        sim.steps(steps)
        return sim
    return common.best_of(run, timing)[0]


def main(argv=None):
    options = common.parser(__doc__).parse_args(argv)
    sizes = QUICK if options.quick else Sizes()
    report = {"machine": common.machine(), "quick": options.quick, "t_end": sizes.t_end, "cases": []}
    common.print_header("odekit Wisdom-Holman benchmark: the outer solar system against REBOUND's WHFast",
                        report["machine"], options.quick)
    rebound = common.rebound(report["machine"])
    prob = problems.outer_solar_system(t_end=sizes.t_end)
    odekit.solve(prob.with_span((0.0, 1000.0)), "wisdom_holman", h=100.0, backend="numba")      # compile
    odekit.solve(prob.with_span((0.0, 1000.0)), "velocity_verlet", h=100.0, backend="numba")
    print(f"\n{sizes.t_end:g} days; energy errors: the largest relative error, every {SAMPLE} steps")
    rows, ratios = [], {}
    for fraction in sizes.fractions:
        h = JUPITER_PERIOD / fraction
        case = {"h": h, "fraction": fraction}
        case["odekit_energy"], steps = odekit_run(prob, "wisdom_holman", h, SAMPLE)
        case["steps"] = steps
        case["verlet_energy"] = odekit_run(prob, "velocity_verlet", h, SAMPLE)[0]
        case["odekit_s"] = common.best_of(lambda: odekit_run(prob, "wisdom_holman", h, steps), sizes.timing)[0]
        case["verlet_s"] = common.best_of(lambda: odekit_run(prob, "velocity_verlet", h, steps), sizes.timing)[0]
        label = f"h = P_J/{fraction}"
        row = [label, f"{h:.1f}", steps, f"{case['odekit_energy']:.2e}", f"{case['verlet_energy']:.2e}",
               f"{case['odekit_s'] / steps * 1e6:.2f}", f"{case['verlet_s'] / steps * 1e6:.2f}"]
        if rebound is not None:
            case["rebound_energy"] = rebound_run(prob, h, steps, SAMPLE)
            case["rebound_s"] = rebound_time(prob, h, steps, sizes.timing)
            row[4:4] = [f"{case['rebound_energy']:.2e}"]
            row[-1:-1] = [f"{case['rebound_s'] / steps * 1e6:.2f}"]
            ratios[f"{label}: REBOUND energy error / odekit's"] = case["rebound_energy"] / case["odekit_energy"]
            ratios[f"{label}: odekit time per step / REBOUND's"] = case["odekit_s"] / case["rebound_s"]
        ratios[f"{label}: velocity_verlet energy error / wisdom_holman's"] = (case["verlet_energy"]
                                                                            / case["odekit_energy"])
        rows.append(row)
        report["cases"].append(case)
    header = ["step", "h (days)", "steps", "dE/E odekit WH", "dE/E verlet", "us/step odekit WH", "us/step verlet"]
    if rebound is not None:
        header[4:4] = ["dE/E REBOUND"]
        header[-1:-1] = ["us/step REBOUND"]
    print()
    common.print_table(header, rows)
    common.print_ratios("the outer solar system at equal steps", ratios)
    common.write_json(options.json, report)


if __name__ == "__main__":
    main()
