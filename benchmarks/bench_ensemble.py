"""Ensemble benchmark: many Lorenz trajectories, by odekit's ensemble and by its peers, errors matched.

10,000 and 100,000 trajectories of the Lorenz equations (sigma 10, rho 28,
beta 8/3) from random initial states around the attractor, to t = 1, each
run keeping its final state.  Every solver gets the same right-hand side,
written in place in its own convention:

* odekit's ``ensemble`` on one and two threads, with each of its explicit
  pairs in :data:`METHODS` (the fastest at the matched error is compared),
  and through a Dask ``LocalCluster`` of two worker processes;
* a Python loop of ``odekit.solve`` and one of SciPy's ``solve_ivp``
  (``RK45``), timed on a sample and counted per trajectory;
* numbalsoda's ``lsoda`` and ``dop853`` in a ``numba.prange`` loop, its
  documented pattern for many trajectories, on one and two threads (the
  ``bench`` extra installs it; it needs a Fortran compiler to build);
* diffrax's ``Tsit5`` under ``jax.jit(jax.vmap(...))`` on the CPU, in
  double precision, as diffrax documents batching (XLA uses every core; the
  ``peers`` extra installs JAX and diffrax).  ``vmap`` runs the trajectories
  in lock-step: each step is as long as the batch's slowest needs.

Errors are matched before times are compared: each solver runs at the
loosest tolerance (``rtol`` from 1e-4 down in half decades, ``atol = rtol
/ 100``) at which the median relative error of its final states, against
a reference (odekit ``dp54`` at ``rtol = 1e-13``), is at most ``TARGET_ERROR``.
Times are wall-clock, the best of a few runs, after a warm-up run that
compiles.  Run ``python benchmarks/bench_ensemble.py [--quick] [--json PATH]``.
A measurement: nothing asserted.
"""

import dataclasses

import numpy as np

import common
import odekit

SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
T_END = 1.0
TARGET_ERROR = 1e-6
RTOLS = [10.0 ** (-k / 2) for k in range(8, 23)]


@dataclasses.dataclass(frozen=True)
class Sizes:
    counts: tuple = (10_000, 100_000)
    sample: int = 2_000            # trajectories of the Python loops (odekit.solve; SciPy: a tenth)
    tolerance_sample: int = 200    # trajectories on which each solver's tolerance is matched
    timing: common.Timing = common.Timing(repeats=7)     # a 10,000 run is 37 ms: best of 7 against jitter


QUICK = Sizes(counts=(200,), sample=20, tolerance_sample=20, timing=common.QUICK_TIMING)


def lorenz(t, u, du, sigma, rho, beta):
    x, y, z = u[0], u[1], u[2]
    du[0] = sigma * (y - x)
    du[1] = x * (rho - z) - y
    du[2] = x * y - beta * z


PROBLEM = odekit.ODEProblem(lorenz, (0.0, T_END), [1.0, 1.0, 1.0], args=(SIGMA, RHO, BETA), inplace=True,
                            autonomous=True, name="lorenz")


def starts(count, seed=2026):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-15, 15, count), rng.uniform(-20, 20, count), rng.uniform(5, 40, count)])


def median_error(final, reference):
    return float(np.median(np.max(np.abs(final - reference), axis=1) / np.max(np.abs(reference), axis=1)))


# --- the solvers: each run(y0, rtol) -> final states ------------------------------------------

METHODS = ("dp54", "tsit5", "dop853", "vern7", "vern8", "vern9")   # the fastest at the error is compared
DASK_METHOD = "dop853"


def odekit_ensemble(workers, method="dp54"):
    def run(y0, rtol):
        ens = odekit.ensemble(PROBLEM, method, y0=y0, rtol=rtol, atol=rtol / 100, workers=workers)
        assert ens.success.all() and ens.backend == "numba", ens.message
        return ens.y
    return run


def odekit_loop(y0, rtol, method="dop853"):
    return np.array([odekit.solve(_problem(u), method, rtol=rtol, atol=rtol / 100).y[-1] for u in y0])


def _problem(u):
    return odekit.ODEProblem(lorenz, (0.0, T_END), u, args=(SIGMA, RHO, BETA), inplace=True, autonomous=True)


def scipy_loop(y0, rtol):
    from scipy.integrate import solve_ivp

    def f(t, u):
        return np.array([SIGMA * (u[1] - u[0]), u[0] * (RHO - u[2]) - u[1], u[0] * u[1] - BETA * u[2]])
    return np.array([solve_ivp(f, (0.0, T_END), u, "RK45", rtol=rtol, atol=rtol / 100).y[:, -1] for u in y0])


def numbalsoda_solver(name):
    """numbalsoda's ``name`` (lsoda or dop853) in a prange loop, or None when it is not installed."""
    try:
        import numbalsoda
    except ImportError:
        return None
    import numba
    from numba import cfunc, njit, prange

    solver = getattr(numbalsoda, name)

    @cfunc(numbalsoda.lsoda_sig)
    def rhs(t, u, du, p):
        x, y, z = u[0], u[1], u[2]
        du[0] = p[0] * (y - x)
        du[1] = x * (p[1] - z) - y
        du[2] = x * y - p[2] * z

    address = rhs.address

    @njit(parallel=True)
    def many(y0, t_eval, data, rtol, atol):
        out = np.empty_like(y0)
        for i in prange(y0.shape[0]):
            usol, success = solver(address, y0[i], t_eval, data=data, rtol=rtol, atol=atol)
            out[i] = usol[-1]
        return out

    data = np.array([SIGMA, RHO, BETA])
    t_eval = np.array([0.0, T_END])

    def run(threads):
        def go(y0, rtol):
            numba.set_num_threads(threads)
            return many(y0, t_eval, data, rtol, rtol / 100)
        return go
    return run


def diffrax_solver():
    """diffrax's Tsit5 over a batch with ``jax.vmap``, compiled by ``jax.jit``, or None when JAX is missing."""
    try:
        import jax
        import jax.numpy as jnp
        import diffrax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def f(t, u, args):
        sigma, rho, beta = args
        return jnp.stack([sigma * (u[1] - u[0]), u[0] * (rho - u[2]) - u[1], u[0] * u[1] - beta * u[2]])

    term, solver = diffrax.ODETerm(f), diffrax.Tsit5()

    def one(u0, rtol):
        sol = diffrax.diffeqsolve(term, solver, 0.0, T_END, None, u0, args=(SIGMA, RHO, BETA),
                                  stepsize_controller=diffrax.PIDController(rtol=rtol, atol=rtol / 100),
                                  saveat=diffrax.SaveAt(t1=True), max_steps=100_000)
        return sol.ys[-1]

    many = jax.jit(jax.vmap(one, in_axes=(0, None)))     # rtol traced: one compilation per batch size

    def run(y0, rtol):
        return np.asarray(many(jnp.asarray(y0), rtol))   # np.asarray waits for the result
    return run


# --- matching the errors, then timing ------------------------------------------------------

def matched_rtol(run, y0, reference):
    """The loosest rtol of RTOLS at which ``run`` meets TARGET_ERROR on ``y0``; and its error."""
    for rtol in RTOLS:
        err = median_error(run(y0, rtol), reference)
        if err <= TARGET_ERROR:
            return rtol, err
    return RTOLS[-1], err


def main():
    args = common.parser(__doc__).parse_args()
    sizes = QUICK if args.quick else Sizes()
    m = common.machine()
    common.print_header("odekit ensemble benchmark: Lorenz to t = 1, final states", m, args.quick)
    biggest = max(sizes.counts)
    y0_all = starts(biggest)
    sample = y0_all[:sizes.tolerance_sample]
    reference = odekit_ensemble(None)(y0_all, 1e-13)
    solvers = {}
    for method in METHODS:
        solvers[f"odekit ensemble {method}, 1 thread"] = odekit_ensemble(1, method)
        solvers[f"odekit ensemble {method}, 2 threads"] = odekit_ensemble(2, method)
    for name in ("lsoda", "dop853"):
        peer = numbalsoda_solver(name)
        if peer is not None:
            solvers[f"numbalsoda {name} prange, 1 thread"] = peer(1)
            solvers[f"numbalsoda {name} prange, 2 threads"] = peer(2)
    batched = diffrax_solver()
    if batched is None:
        print("  diffrax  skipped: JAX or diffrax is not installed (the peers extra)")
    else:
        solvers["diffrax Tsit5 jit(vmap), every core"] = batched
    loops = {"Python loop of odekit.solve dop853": (odekit_loop, sizes.sample),
             "Python loop of SciPy solve_ivp RK45": (scipy_loop, max(2, sizes.sample // 10))}
    report = {"machine": m, "quick": args.quick, "target_error": TARGET_ERROR, "runs": []}
    rates, tolerances = {}, {}
    print(f"\n  tolerances matched: the loosest rtol (atol = rtol/100) with median relative error <= "
          f"{TARGET_ERROR:g} over {len(sample)} trajectories")
    rows = []
    for name, run in list(solvers.items()) + [(n, r) for n, (r, _) in loops.items()]:
        rtol, err = matched_rtol(run, sample, reference[:len(sample)])
        tolerances[name] = rtol
        rows.append((name, f"{rtol:.0e}", f"{err:.2e}"))
    common.print_table(("solver", "rtol", "median error"), rows)

    table = []
    for count in sizes.counts:
        y0 = y0_all[:count]
        for name, run in solvers.items():
            run(y0[:10], tolerances[name])                          # warm-up: compiles
            seconds, final = common.best_of(lambda: run(y0, tolerances[name]), sizes.timing)
            rates[(name, count)] = count / seconds
            table.append((name, f"{count:,}", f"{seconds:.3f}", f"{count / seconds:,.0f}",
                          f"{median_error(final, reference[:count]):.2e}"))
    for name, (run, size) in loops.items():
        y0 = y0_all[:size]
        run(y0[:2], tolerances[name])
        seconds, final = common.best_of(lambda: run(y0, tolerances[name]), common.Timing(repeats=1))
        rates[(name, None)] = size / seconds
        table.append((name, f"{size:,}", f"{seconds:.3f}", f"{size / seconds:,.0f}",
                      f"{median_error(final, reference[:size]):.2e}"))
    dask_rate = dask_run(y0_all[:biggest], tolerances[f"odekit ensemble {DASK_METHOD}, 1 thread"], sizes, reference,
                         table)
    print()
    common.print_table(("solver", "trajectories", "seconds", "per second", "median error"), table)

    ratios = {}

    def fastest(prefix, threads, count):
        names = [n for n in solvers if n.startswith(prefix) and n.endswith(f", {threads} thread" + "s" * (threads > 1))]
        return max(((rates[(n, count)], n) for n in names), default=(None, None))

    best, best_name = fastest("odekit ensemble", 2, biggest)
    ratios[f"{best_name} / Python loop of odekit.solve"] = best / rates[("Python loop of odekit.solve dop853", None)]
    ratios[f"{best_name} / Python loop of SciPy"] = best / rates[("Python loop of SciPy solve_ivp RK45", None)]
    for count in sizes.counts:
        one, name = fastest("odekit ensemble", 1, count)
        ratios[f"2 threads / 1 thread, {name.split(',')[0]}, {count:,}"] = \
            rates[(name.replace("1 thread", "2 threads"), count)] / one
        for threads in (1, 2):
            mine, _ = fastest("odekit ensemble", threads, count)
            peer, peer_name = fastest("numbalsoda", threads, count)
            if peer:
                ratios[f"fastest odekit / {peer_name}, {count:,}"] = mine / peer
    if batched is not None:
        for count in sizes.counts:
            ratios[f"fastest odekit, 2 threads / diffrax jit(vmap), {count:,}"] = \
                fastest("odekit ensemble", 2, count)[0] / rates[("diffrax Tsit5 jit(vmap), every core", count)]
    if dask_rate:
        one = rates[(f"odekit ensemble {DASK_METHOD}, 1 thread", biggest)]
        ratios[f"Dask LocalCluster (2 workers) / 1 local thread, {DASK_METHOD}, {biggest:,}"] = dask_rate / one
    common.print_ratios("odekit's ensemble against the others (above 1: odekit faster)", ratios)
    report["runs"] = [dict(zip(("solver", "trajectories", "seconds", "per_second", "median_error"), row))
                      for row in table]
    report["ratios"] = ratios
    common.write_json(args.json, report)


def dask_run(y0, rtol, sizes, reference, table):
    """Trajectories per second through a LocalCluster of two worker processes (after a warm-up), or None."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        table.append("Dask: not installed (pip install -e '.[distributed]')")
        return None
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        run = odekit_ensemble(client, DASK_METHOD)
        run(y0[:40], rtol)                     # each worker sets the problem up (compiles) once
        seconds, final = common.best_of(lambda: run(y0, rtol), sizes.timing)
    table.append((f"odekit ensemble {DASK_METHOD}, Dask LocalCluster 2 workers", f"{y0.shape[0]:,}", f"{seconds:.3f}",
                  f"{y0.shape[0] / seconds:,.0f}", f"{median_error(final, reference[:y0.shape[0]]):.2e}"))
    return y0.shape[0] / seconds


if __name__ == "__main__":
    main()
