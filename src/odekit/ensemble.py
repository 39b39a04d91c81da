"""Ensembles: many trajectories of one problem, on every core and on a cluster.

:func:`ensemble` integrates one problem from many initial states or with
many parameter values -- a sweep, a Monte Carlo sample, a basin of
attraction.  Each trajectory is its own run (its own steps, controller
memory and status) and gives the numbers :func:`odekit.solve` gives for it
alone, bit for bit, however the work is split.

How it runs (see :mod:`odekit.kernels.ensemble`): the problem is set up
once, as for its first trajectory (checks, compilation, the first
evaluation); then a compiled loop runs chunks of trajectories, each chunk a
call without the GIL, in as many threads as asked -- no Python per
trajectory and no allocation.  On a cluster (``workers=`` a
``dask.distributed.Client`` or any :class:`concurrent.futures.Executor`)
each chunk is one task; each worker process sets the problem up once (the
set-up is kept by a digest of the problem and options) and runs the same
compiled loop on every chunk it receives.
"""

from collections.abc import Mapping
import concurrent.futures
import copy
import hashlib
import inspect
import os
import pickle
import threading
import time

import numpy as np

from . import checks
from .checks import NO_LIMIT
from .events import as_events, records as event_records
from .integrator import Interrupted, Integrator, _next_slice
from .kernels import layout as L
from .kernels.ensemble import (COUNTED, RUNNING, Records, Trajectories, freshener, keep_run_state, make_chunk,
                               picker)
from .kernels.interface import empty_events, no_output
from .memory import available_memory
from .problem import ODEProblem, SecondOrderProblem
from .recording import check_t_eval
from .registry import method as lookup_method
from .runsetup import work_arrays
from .solution import Solution, Stats, Status
from .solve import PROGRESS, run_options

SAVES = ("final", "t_eval", "steps")
FIRST_STEP_ROWS = 64          # rows kept per trajectory of save="steps" until the first trajectory tells
SLICE_SECONDS = 0.05          # a serial run returns to Python this often (Ctrl-C, progress)
FIRST_CHUNK, LAST_CHUNK = 256, 16   # trajectories a lane takes at once, at first and at the end (Work.lanes)
_COLUMN = {k: j for j, k in enumerate(COUNTED)}     # a run-state index -> its column of Result.counts
OPTIONS = ("h", "rtol", "atol", "adaptive", "controller", "max_steps", "backend", "linear_solver", "events",
           "event_samples", "max_events")


def ensemble(problem, method="dp54", *, y0=None, args=None, n=None, save=None, t_eval=None, workers=None,
             chunk=None, progress=None, **options):
    """Integrate many trajectories of ``problem`` with ``method``, each as :func:`odekit.solve` would.

    Parameters
    ----------
    problem : ODEProblem or SecondOrderProblem
        The functions, span and events every trajectory shares, and the
        initial state and ``args`` of those not given per trajectory.
    method : str or Method
    y0 : array_like, optional
        Initial states, the trajectory first: shape ``(N, *y0.shape)``, or
        ``(N, 2, *x0.shape)`` (positions, then velocities) for a
        :class:`SecondOrderProblem`.  Default: the problem's, for every one.
    args : list of tuples, mapping or tuple, optional
        Per trajectory: a list of ``N`` argument tuples (each replacing the
        problem's ``args``), or a mapping from the name (or position) of an
        argument of ``fun`` / ``accel`` to ``N`` values -- ``{"B":
        np.linspace(0, 1, 50)}`` for the pendulum's damping -- the others
        kept; a structured array is taken as such a mapping of its fields.
        A tuple is one ``args`` shared by all.  Default: the problem's.
    n : int, optional
        The number of trajectories, when neither ``y0`` nor ``args`` says.
    save : {"final", "t_eval", "steps"}, optional
        What is kept of each trajectory: its final state (the default), its
        states at ``t_eval`` (the default when ``t_eval`` is given), or
        every accepted step.
    t_eval : array_like, optional
        Times within the span at which to keep each state (interpolated).
    workers : None, int, Executor or dask.distributed.Client
        ``None``: a thread per core of this machine; an int: that many
        threads (``1``: serial); an :class:`~concurrent.futures.Executor`
        (a ``ProcessPoolExecutor``, Dask's ``client.get_executor()``) or a
        ``dask.distributed.Client``: chunks of trajectories as tasks, on
        other processes or machines.  The problem's functions must then be
        picklable -- module-level functions are; a lambda or a function
        defined in ``__main__`` is when ``cloudpickle`` is installed (it
        comes with Dask) -- and one that is not is named in a TypeError.
    chunk : int, optional
        Trajectories per chunk (per task on a cluster).  By default a
        fraction of the ensemble per thread or worker, so that the work
        stays balanced when some trajectories cost more than others.
    progress : callable, optional
        ``progress(done, total, "trajectories")``, e.g. an
        :class:`odekit.progress.Progress` bar, called as chunks finish.
    **options
        What :func:`odekit.solve` takes: ``h``, ``rtol``, ``atol``,
        ``adaptive``, ``controller``, ``max_steps``, ``backend``,
        ``linear_solver`` (dense only), ``events``, ``event_samples``,
        ``max_events``.

    Returns
    -------
    EnsembleSolution
        Every trajectory's result and status: one that fails (non-finite
        values, Newton's failure, ``max_steps``) keeps what it computed, and
        the others are not affected.

    Raises
    ------
    ValueError, TypeError
        For bad input, naming the argument, before anything is run.
    Interrupted
        On Ctrl-C, after the trajectories under way: its ``solution`` is the
        :class:`EnsembleSolution` so far, those not run with status
        ``Status.INTERRUPTED``.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        solve_only = {"dense_output": "the interpolant of every step", "save_every": "every k-th step"}
        why = "; ".join(f"{k} ({solve_only[k]}) is kept by solve() alone" for k in unknown if k in solve_only)
        raise TypeError(f"ensemble() got unexpected option(s) {', '.join(unknown)}"
                        + (f": {why}; an ensemble keeps save='final', 't_eval' or 'steps'" if why else "")
                        + f"; accepted: {', '.join(OPTIONS)}")
    if not isinstance(problem, (ODEProblem, SecondOrderProblem)):
        raise TypeError(f"problem must be an ODEProblem or SecondOrderProblem, got {type(problem).__name__}")
    save = _save(save, t_eval)
    checks.callable_or_none("progress", progress, PROGRESS)
    inputs = Inputs.of(problem, y0, args, n)
    options = run_options(problem, **options)
    spec = Spec(inputs.problem(0), method, options, save,
                None if t_eval is None else check_t_eval(t_eval, *problem.t_span, _direction(problem)),
                inputs.stacked)
    chunk = None if chunk is None else checks.count("chunk", chunk)
    if _is_distributed(workers):
        return _distributed(spec, inputs, workers, chunk, progress)
    threads = _threads(workers)
    try:
        result = Runner(spec).run(inputs.y0, inputs.args, threads, chunk, progress)
    except Interrupted as stop:
        solution = EnsembleSolution(spec, inputs, stop.result)
        raise Interrupted(f"interrupted by Ctrl-C: {solution.message}; the ensemble so far is this exception's "
                          ".solution", solution=solution) from None
    return EnsembleSolution(spec, inputs, result)


def _save(save, t_eval):
    if save is None:
        return "final" if t_eval is None else "t_eval"
    save = checks.choice("save", save, SAVES, "one of 'final', 't_eval', 'steps'")
    if (save == "t_eval") != (t_eval is not None):
        raise ValueError("save='t_eval' keeps the states at t_eval: give both, or neither "
                         f"(got save={save!r} and t_eval {'given' if t_eval is not None else 'None'})")
    return save


def _direction(problem):
    t0, t1 = problem.t_span
    return 1.0 if t1 > t0 else -1.0


def _threads(workers):
    if workers is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)):
        raise TypeError(f"workers must be None (every core), a number of threads, a concurrent.futures.Executor "
                        f"or a dask.distributed.Client; got {checks.shown(workers)}")
    return checks.count("workers", workers)


# --- the trajectories' inputs ---------------------------------------------------------

class Inputs:
    """An ensemble's per-trajectory initial states and ``args``, checked and stacked.

    ``y0`` is ``(N, size)``, flat as the kernels keep states; ``args`` a tuple
    whose entries are either shared or stacked along a first axis of ``N``
    (``stacked[j]`` says which).
    """

    def __init__(self, problem, y0, args, stacked):
        self.base, self.y0, self.args, self.stacked = problem, y0, tuple(args), tuple(stacked)

    @property
    def count(self):
        return self.y0.shape[0]

    @classmethod
    def of(cls, problem, y0, args, n):
        args, stacked, n_args = _args(problem, args)
        counts = {name: c for name, c in (("n", None if n is None else checks.count("n", n)),
                                         ("y0", None if y0 is None else _leading(y0)), ("args", n_args))
                  if c is not None}
        if len(set(counts.values())) > 1:
            said = ", ".join(f"{name} {c}" for name, c in counts.items())
            raise ValueError(f"the number of trajectories must agree: {said}")
        if not counts:
            raise ValueError("give the trajectories: y0 of shape (N, ...), per-trajectory args, or n")
        count = next(iter(counts.values()))
        return cls(problem, _states(problem, y0, count), args, stacked)

    def slice(self, lo, hi):
        """The inputs of trajectories ``lo`` to ``hi``."""
        return self.y0[lo:hi], taken(self.args, self.stacked, slice(lo, hi))

    def problem(self, i):
        """Trajectory ``i`` as a problem of its own (its functions shared)."""
        return trajectory_problem(self.base, self.y0[i], self.args, self.stacked, i)


def taken(args, stacked, which):
    """The ``args`` of trajectories ``which`` (an index, a slice or an index array): stacked entries indexed,
    shared ones as they are (the Python twin of :func:`odekit.kernels.ensemble.picker`'s ``pick``)."""
    return tuple(a[which] if s else a for a, s in zip(args, stacked))


def trajectory_problem(base, state, args, stacked, i):
    """``base`` with initial state ``state`` (flat) and the ``args`` of trajectory ``i``."""
    p = copy.copy(base)
    p.args = taken(args, stacked, i)
    if base.second_order:
        x, v = base.unflatten(state[None])[0]
        p.x0, p.v0 = x.copy(), v.copy()
    else:
        p.y0 = state.reshape(base.shape).copy()
    return p


def _leading(value):
    shape = np.shape(value)
    if not shape:
        raise ValueError(f"y0 must have the trajectory as its first axis, shape (N, ...); got {checks.shown(value)}")
    return shape[0]


def _states(problem, y0, count):
    """The initial states, flat: ``(count, size)``."""
    start = problem.initial_state()
    if y0 is None:
        return np.repeat(start[None], count, axis=0)
    shape = (2,) + problem.shape if problem.second_order else problem.shape
    values = checks.finite_entries("y0", checks.fitting("y0", y0, start.dtype))
    if values.shape[1:] != shape:
        what = "(N, 2, *x0.shape): positions, then velocities" if problem.second_order else "(N, *y0.shape)"
        raise ValueError(f"y0 must have shape {(count,) + shape}, {what}; got {values.shape}")
    return np.ascontiguousarray(values.reshape(count, -1), dtype=start.dtype)


def _args(problem, args):
    """``(args, stacked, count)``: the ensemble's args, which entries are per trajectory, and how many there are."""
    base = problem.args
    if args is None:
        return base, (False,) * len(base), None
    if isinstance(args, np.ndarray) and args.dtype.names:
        args = {name: args[name] for name in args.dtype.names}
    if isinstance(args, Mapping):
        return _named_args(problem, args)
    if isinstance(args, tuple) and not all(isinstance(a, tuple) for a in args):
        return args, (False,) * len(args), None                        # one args, shared
    if isinstance(args, (list, tuple)) and args and all(isinstance(a, (tuple, list)) for a in args):
        sizes = {len(a) for a in args}
        if len(sizes) > 1:
            raise ValueError(f"args must hold one tuple per trajectory, all of one length; got lengths {sorted(sizes)}")
        columns = [_column(f"args[:][{j}]", [a[j] for a in args]) for j in range(sizes.pop())]
        return tuple(columns), (True,) * len(columns), len(args)
    raise TypeError("args must be a list of per-trajectory tuples, a mapping name -> values (one per "
                    f"trajectory), a structured array or one tuple shared by all; got {checks.shown(args)}")


def _named_args(problem, values):
    """A mapping ``name or position -> values`` over the problem's ``args``."""
    names = _arg_names(problem)
    args, stacked, counts = list(problem.args), [False] * len(problem.args), set()
    for key, column in values.items():
        j = key if isinstance(key, int) and not isinstance(key, bool) else names.get(key)
        if j is None or not 0 <= j < len(args):
            known = ", ".join(repr(k) for k in names) or "none"
            raise ValueError(f"args has no entry {key!r}: the problem's function takes {len(args)} args "
                             f"(by name: {known})")
        args[j], stacked[j] = _column(f"args[{key!r}]", column), True
        counts.add(args[j].shape[0])
    if len(counts) > 1:
        raise ValueError(f"every entry of args must have one value per trajectory; got counts {sorted(counts)}")
    return tuple(args), tuple(stacked), counts.pop() if counts else None


def _arg_names(problem):
    """The names of the problem's ``args`` in its function's signature: ``{name: position}``."""
    fn = problem.accel if problem.second_order else problem.fun
    try:
        params = list(inspect.signature(getattr(fn, "py_func", fn)).parameters.values())
    except (TypeError, ValueError):
        return {}
    skip = (3 if problem.second_order else 2) + (1 if problem.inplace else 0)
    named = [p.name for p in params[skip:] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return {name: j for j, name in enumerate(named[:len(problem.args)])}


def _column(name, values):
    """One argument's per-trajectory values, stacked: numbers into a 1-d array, arrays along a first axis."""
    try:
        column = np.asarray(values)
    except ValueError as exc:
        raise ValueError(f"{name} must be values of one shape, one per trajectory: {exc}") from None
    if column.ndim == 0 or column.dtype.kind not in "biufc":
        raise ValueError(f"{name} must be numbers or arrays of numbers, one per trajectory; got "
                         f"{checks.shown(values)}")
    return np.ascontiguousarray(column)


# --- the set-up: what every worker makes once -----------------------------------------

class Spec:
    """What defines an ensemble's set-up: the first trajectory's problem, the method, the options, what is kept.

    The whole of what a worker of a cluster receives to set the problem up
    (besides the chunks' inputs); pickled once, and known by its digest.
    """

    def __init__(self, problem, method, options, save, t_eval, stacked):
        self.problem, self.method, self.options = problem, method, options
        self.save, self.t_eval, self.stacked = save, t_eval, tuple(stacked)


class Runner:
    """An ensemble's set-up -- the first trajectory's run, its compiled loop, the chunk loop -- and its runs."""

    def __init__(self, spec):
        self.spec = spec
        # the first trajectory as solve() starts it: every check, the compilation, its first evaluation
        proto = self.proto = Integrator(spec.problem, spec.method, **spec.options)
        if not isinstance(proto._scratch[1], np.ndarray):
            raise ValueError(f"linear_solver={spec.options.get('linear_solver')!r}: an ensemble runs dense "
                             "linear algebra (its lanes reuse their arrays); solve large sparse systems one by one "
                             "with odekit.solve")
        k = proto._kernels
        self.backend, self.reason = k.backend, k.reason
        self.events = bool(proto._events)
        compiled = k.backend == "numba"
        self._family_loop = (k.drive.first_class, k.deriv.first_class) if compiled else (k.drive, k.deriv)
        fresh = freshener(tuple(a.ndim for a in proto._scratch), self.events)
        loop = make_chunk(picker(spec.stacked, k.packed), fresh, self.events)
        self.fs0, self.ist0 = self._templates()
        self.blank = no_output(proto._y.dtype)
        self.log_rows = 2 * proto._state.ev.spec.shape[0] + 2 if self.events else 0
        self._loop = loop
        self._compiled = compiled
        self._cached = proto.method.family.builtin     # a user's family's edits are not in the cache's stamp
        self._chunk = None

    def _templates(self):
        """The rows ``fs``, ``ist`` of a trajectory before its first evaluation, as solve() sets them up."""
        proto, save = self.proto, self.spec.save
        fs, ist = proto._fs.copy(), proto._ist.copy()
        ist[L.HAVE_F] = ist[L.NFEV] = 0
        fs[L.T_END] = proto.problem.t_span[1]
        ist[L.RECORD] = {"final": L.RECORD_NONE, "t_eval": L.RECORD_TEVAL, "steps": L.RECORD_STEPS}[save]
        ist[L.SAVE_EVERY] = 1
        ist[L.PAUSE_AFTER] = NO_LIMIT
        starts = save == "steps" or (save == "t_eval" and self.spec.t_eval.size and
                                     self.spec.t_eval[0] == proto.problem.t_span[0])
        ist[L.NOUT] = 1 if starts else 0                      # row 0: the initial state (see _records)
        ist[L.TEVAL_NEXT] = 1 if starts and save == "t_eval" else 0
        ist[L.SINCE_SAVE] = 0
        return fs, ist

    # --- one run over a batch of trajectories --------------------------------------------
    def run(self, y0, args, threads=1, chunk=None, progress=None):
        """Run every trajectory of ``y0`` (flat, ``(N, size)``) with ``args`` (see :class:`Inputs`): a :class:`Result`.

        ``save="steps"`` and event logs keep a number of rows per trajectory
        chosen from the first trajectory's needs (it runs first, alone); a
        trajectory that needs more is run again with room for it -- the same
        numbers, since a run is deterministic -- until every one fits.
        """
        count = y0.shape[0]
        result = Result(count, self.spec.save, self.spec.t_eval)
        result.backend, result.reason = self.backend, self.reason
        try:
            return self._passes(result, y0, args, threads, chunk, progress)
        except Interrupted as stop:
            stop.result = result
            raise

    def _passes(self, result, y0, args, threads, chunk, progress):
        count = y0.shape[0]
        pending, room = np.arange(count), (FIRST_STEP_ROWS, self.log_rows)
        if (self.spec.save == "steps" or self.events) and count > 1:
            first = pending[:1]
            while first.size:
                first = self._pass(result, first, y0, args, room, 1, None, None)
                room = room if not first.size else (4 * room[0], 4 * room[1])
            rows, events = result.kept(0)
            room = (max(16, 2 * rows + 8), max(room[1], 2 * events + self.log_rows))
            pending = pending[1:]
        while pending.size:
            pending = self._pass(result, pending, y0, args, room, threads, chunk, progress)
            room = (4 * room[0], 4 * room[1])
        return result

    def _pass(self, result, index, y0, args, room, threads, chunk, progress):
        """Run trajectories ``index`` with ``room`` rows (steps, events); return those that needed more."""
        whole = index.size == y0.shape[0]
        rows = self._rows(y0 if whole else y0[index], args if whole else taken(args, self.spec.stacked, index))
        records = self._records(rows, *room)
        work = Work(self, rows, records, chunk)
        try:
            self._run_lanes(work, threads, progress, result.done)
        finally:
            result.keep(index, rows, records, work.errors)
        return index[rows.codes == L.BUFFER_FULL]

    def _rows(self, y0, args):
        count = y0.shape[0]
        return Trajectories(tuple(args), y0, self.fs0, self.ist0, y0.copy(), np.zeros(count),
                            np.zeros((count, len(COUNTED)), dtype=np.int64), np.full(count, RUNNING, dtype=np.int64))

    def _records(self, rows, steps, logs):
        """Output buffers for ``rows``' trajectories, the initial states written where kept."""
        count, n, dtype = rows.y0.shape[0], rows.y0.shape[1], rows.y0.dtype
        save, t_eval = self.spec.save, self.spec.t_eval
        width = {"final": 0, "t_eval": 0 if t_eval is None else t_eval.size, "steps": steps}[save]
        _check_memory(count, width, logs, n, dtype)
        out_t = np.zeros((count, width))
        out_y = np.full((count, width, n), np.nan, dtype=dtype)     # nan: not reached (a failed trajectory)
        if self.ist0[L.NOUT]:
            out_t[:, 0] = self.proto.problem.t_span[0]
            out_y[:, 0] = rows.y0
        return Records(np.zeros(0) if t_eval is None else t_eval, out_t, out_y, np.zeros((count, logs)),
                       np.zeros((count, logs, 2), dtype=np.int64), np.zeros((count, 2 * logs, n), dtype=dtype))

    def _lane(self):
        """Work arrays and an event state of one's own, the work arrays as a run starts them, and run state."""
        proto = self.proto
        scratch, start = (work_arrays(proto.method, proto._y, proto.problem, None) for _ in range(2))
        fs, ist = self.fs0.copy(), self.ist0.copy()
        if not self.events:
            return scratch, None, start, fs, ist
        model, blank = proto._state.ev, empty_events(proto._y.dtype)
        ev = model._replace(count=np.zeros_like(model.count), G=np.zeros_like(model.G), Y=np.zeros_like(model.Y),
                            roots=np.zeros_like(model.roots), fired=np.zeros_like(model.fired),
                            log_t=blank.log_t, log_i=blank.log_i, log_y=blank.log_y)
        return scratch, ev, start, fs, ist

    def chunk(self, rows, records, lane, lo, hi, stop):
        """Run trajectories ``lo`` to ``hi`` of ``rows`` in ``lane``; return where it stopped."""
        args = (self.proto._fns, self.proto._method_data, rows, records, lane, self.blank, lo, hi, stop,
                *self._family_loop)
        if self._chunk is None:       # (made before any lane starts: see _run_lanes)
            self._chunk = _compiled_chunk(self._loop, args, self._cached) if self._compiled else self._loop
        return self._chunk(*args)

    def _run_lanes(self, work, threads, progress, offset):
        """Every chunk of ``work``: in ``threads`` lanes at once, or serially in this thread."""
        count = work.count
        report = None if progress is None else lambda done: progress(offset + done, offset + count, "trajectories")
        lanes = 1 if self.backend == "python" else max(1, min(threads, count))
        if lanes == 1:
            work.serial(self._lane(), report)
            return
        arrays = [self._lane() for _ in range(lanes)]
        self.chunk(work.rows, work.records, arrays[0], 0, 0, work.stop)     # compiled once, before the threads
        futures = [lane_threads(lanes).submit(work.lanes, lane, lanes) for lane in arrays]
        try:
            while concurrent.futures.wait(futures, timeout=0.1).not_done:
                if report is not None:
                    report(work.done)
        except KeyboardInterrupt:
            work.stop[0] = 1                 # each lane stops after its trajectory under way
            concurrent.futures.wait(futures)
            raise Interrupted("interrupted by Ctrl-C") from None
        for f in futures:
            f.result()          # a failure of odekit's own, not of a trajectory (those are statuses)
        if report is not None:
            report(count)


_THREADS = {}       # (process, lanes) -> the threads that run the lanes of every ensemble of this process
_THREADS_LOCK = threading.Lock()


def lane_threads(lanes):
    """The threads that run ``lanes`` lanes at once: made once per process and kept.

    Starting and joining two threads took 0.45 ms an ensemble, 1.2% of 10,000
    Lorenz trajectories on two threads.  Keyed by the process too: a forked
    child inherits the pool but not its threads, and would wait on them for
    ever.  Ensembles run from several threads at once share the pool, their
    lanes queued; a lane that starts late finds its share taken and returns.
    """
    key = (os.getpid(), lanes)
    with _THREADS_LOCK:
        if key not in _THREADS:
            _THREADS[key] = concurrent.futures.ThreadPoolExecutor(lanes, thread_name_prefix=f"odekit-{lanes}-lanes")
        return _THREADS[key]


def _compiled_chunk(loop, sample, cache):
    from .kernels import jit

    return jit.chunk_kernel(loop, sample, cache)


def _check_memory(count, width, logs, n, dtype):
    """Refuse records that would take more than half the free memory, naming what to change."""
    itemsize = np.dtype(dtype).itemsize
    need = count * (width * (8 + n * itemsize) + logs * (24 + 2 * n * itemsize))
    # (asked only past the floor: reading what is free takes half a millisecond, 1% of a short ensemble)
    if need > 2 ** 26 and need > available_memory() // 2:
        raise MemoryError(f"keeping {width} rows and {logs} events for each of {count:,} trajectories needs "
                          f"{need / 2 ** 30:.1f} GiB, more than half the free memory: keep less (save='final', "
                          "or fewer t_eval), or run the ensemble in parts")


class Work:
    """The chunks of one pass, handed out in order to the lanes; what they did."""

    def __init__(self, runner, rows, records, size):
        self.runner, self.rows, self.records = runner, rows, records
        self.count = rows.y0.shape[0]
        self.size = size
        self.stop = np.zeros(1, dtype=np.int64)
        self.done = 0
        self.errors = {}                 # trajectory -> what its function raised
        self._next = 0
        self._lock = threading.Lock()

    def lanes(self, lane, lanes):
        """Take chunks until none is left (or Ctrl-C): the loop of one of ``lanes`` threads."""
        while not self.stop[0]:
            with self._lock:
                lo = self._next
                # by default a quarter of each lane's share of what is left, from 256 down to 16
                # trajectories: the lanes end together (256 Lorenz trajectories are 1.8 ms, a
                # twentieth of a 10,000-trajectory run on two threads), a call costs little
                size = self.size or max(LAST_CHUNK, min(FIRST_CHUNK, (self.count - lo) // (4 * lanes)))
                hi = self._next = min(lo + size, self.count)
            if lo >= self.count:
                return
            self.run(lane, lo, hi)

    def serial(self, lane, report):
        """Every chunk in this thread, sized to return to Python about every ``SLICE_SECONDS`` (Ctrl-C, progress)."""
        lo, size, last = 0, self.size or 1, time.perf_counter()
        try:
            while lo < self.count:
                start = time.perf_counter()
                hi = min(lo + size, self.count)
                self.run(lane, lo, hi)
                lo = hi
                if not self.size:
                    size = _next_slice(size, time.perf_counter() - start, SLICE_SECONDS)
                if report is not None and (time.perf_counter() - last > 0.1 or lo == self.count):
                    report(lo)
                    last = time.perf_counter()
        except KeyboardInterrupt:
            raise Interrupted("interrupted by Ctrl-C") from None

    def run(self, lane, lo, hi):
        """Trajectories ``lo`` to ``hi``; one whose function raised gets ``FUNCTION_ERROR`` and the rest go on."""
        start = lo
        while lo < hi and not self.stop[0]:
            try:
                lo = self.runner.chunk(self.rows, self.records, lane, lo, hi, self.stop)
            except Exception as exc:  # the user's function raised, in trajectory i
                i = lo + int(np.flatnonzero(self.rows.codes[lo:hi] == RUNNING)[0])
                self.rows.codes[i] = L.FUNCTION_ERROR
                self.rows.y_end[i] = lane[0][0][L.Y]        # the last state it reached
                keep_run_state(self.rows, i, lane[3], lane[4])
                self.errors[i] = exc
                lo = i + 1
        with self._lock:
            self.done += lo - start


# --- results ------------------------------------------------------------------------------

class Result:
    """Every trajectory's run state and final state, and the records of the pass that ran it last.

    A trajectory run again with more room (see :meth:`Runner.run`) has its
    records in a later pass: ``where[i]`` is its pass, ``row[i]`` its row there.
    """

    def __init__(self, count, save, t_eval):
        self.save, self.t_eval, self.count = save, t_eval, count
        self.y_end = self.codes = self.t_end = self.counts = None  # the first pass's own, or made when partial
        self.where = np.zeros(count, dtype=np.int64)
        self.row = np.arange(count)
        self.passes = []
        self.errors = {}
        self.done = 0
        self.info = []                  # per chunk of a cluster's run: where and how it ran

    def keep(self, index, rows, records, errors):
        """Take a pass's rows for trajectories ``index`` (the pass's own arrays when it ran them all)."""
        if self.codes is None and index.size == self.count:
            self.y_end, self.codes, self.t_end, self.counts = rows.y_end, rows.codes, rows.t_end, rows.counts
        else:
            if self.codes is None:
                self.y_end, self.t_end, self.counts = (np.zeros((self.count,) + a.shape[1:], dtype=a.dtype)
                                                       for a in (rows.y_end, rows.t_end, rows.counts))
                self.codes = np.full(self.count, RUNNING, dtype=np.int64)
            self.y_end[index], self.codes[index] = rows.y_end, rows.codes
            self.t_end[index], self.counts[index] = rows.t_end, rows.counts
        self.where[index], self.row[index] = len(self.passes), np.arange(index.size)
        self.passes.append(records)
        self.errors.update({int(index[i]): exc for i, exc in errors.items()})
        self.done = int(np.count_nonzero((self.codes != RUNNING) & (self.codes != L.BUFFER_FULL)))

    def kept(self, i):
        """``(rows, events)``: how many output rows trajectory ``i`` wrote, and how many events it logged."""
        return int(self.counts[i, _COLUMN[L.NOUT]]), int(self.counts[i, _COLUMN[L.NEVENT]])

    def records(self, i):
        """``(records, row)`` of trajectory ``i``."""
        return self.passes[self.where[i]], self.row[i]

    def stacked(self):
        """Every trajectory's output rows at ``t_eval``, ``(N, len(t_eval), size)``."""
        if len(self.passes) == 1:
            return self.passes[0].y
        first = self.passes[0].y
        out = np.empty((self.codes.size,) + first.shape[1:], dtype=first.dtype)
        for p, records in enumerate(self.passes):
            mine = self.where == p
            out[mine] = records.y[self.row[mine]]
        return out

    @classmethod
    def joined(cls, parts):
        """The results of consecutive chunks, as one."""
        first = parts[0]
        whole = cls(sum(p.count for p in parts), first.save, first.t_eval)
        whole.y_end = np.concatenate([p.y_end for p in parts])
        whole.codes = np.concatenate([p.codes for p in parts])
        whole.t_end = np.concatenate([p.t_end for p in parts])
        whole.counts = np.concatenate([p.counts for p in parts])
        whole.where = np.concatenate([p.where + sum(len(q.passes) for q in parts[:k]) for k, p in enumerate(parts)])
        whole.row = np.concatenate([p.row for p in parts])
        offsets = np.cumsum([0] + [p.codes.size for p in parts])
        for part, offset in zip(parts, offsets):
            whole.passes += part.passes
            whole.errors.update({offset + i: exc for i, exc in part.errors.items()})
            whole.info += part.info
        whole.done = sum(p.done for p in parts)
        return whole


class EnsembleSolution:
    """The result of :func:`ensemble`: every trajectory's final state, kept states and status.

    Attributes
    ----------
    y : ndarray
        ``save="final"``: the final states, ``(N, *y0.shape)`` (``(N, 2,
        *x0.shape)`` for mechanics); ``save="t_eval"``: the states at
        ``t``, ``(N, len(t_eval), ...)``, nan where a trajectory that failed
        did not get to.  ``save="steps"`` keeps trajectories of different
        lengths: iterate over the ensemble for each one's :class:`Solution`.
    y_final, t_final : ndarray
        Where each trajectory ended: its last state and time (``t_end``
        unless it failed or a terminal event stopped it).
    t : ndarray or None
        ``t_eval`` (``save="t_eval"``).
    status : ndarray of int
        Each trajectory's :class:`~odekit.Status`.
    success : ndarray of bool
    failed : ndarray of int
        The trajectories that did not succeed.
    stats : EnsembleStats
        Work per trajectory, and in total (``stats.total``).
    events : list of list of EventRecord
        Each trajectory's events (with events to watch).
    message : str
        How the trajectories ended, counted by status.

    ``sol[i]`` is trajectory ``i`` as a :class:`Solution` (all it kept);
    ``sol.problem(i)`` its problem, which :func:`odekit.solve` solves to the
    same numbers -- with the full diagnosis of a failure in its message.
    """

    def __init__(self, spec, inputs, result):
        self._spec, self._inputs, self._result = spec, inputs, result
        self.method = lookup_method(spec.method)
        self.save = spec.save
        self.t = spec.t_eval
        base = inputs.base
        codes = result.codes.copy()
        codes[(codes == RUNNING) | (codes == L.BUFFER_FULL)] = L.INTERRUPTED
        self.status = codes
        self.y_final = _unflatten(base, result.y_end)
        self.t_final = result.t_end.copy()
        self.stats = EnsembleStats.from_counts(result.counts)
        self.backend, self.backend_reason = result.backend, result.reason
        self.exceptions = dict(result.errors)
        self.chunks = list(result.info)

    def __len__(self):
        return self.status.size

    @property
    def success(self):
        return (self.status == Status.SUCCESS) | (self.status == Status.EVENT)

    @property
    def failed(self):
        return np.flatnonzero(~self.success)

    @property
    def y(self):
        if self.save == "final":
            return self.y_final
        if self.save == "t_eval":
            flat = self._result.stacked()
            return self._inputs.base.unflatten(flat.reshape(-1, flat.shape[-1])).reshape(
                (len(self), self.t.size) + self.y_final.shape[1:])
        raise AttributeError("save='steps' keeps trajectories of different lengths: iterate over the ensemble "
                             "(sol[i].t, sol[i].y), or use sol.y_final")

    @property
    def message(self):
        names = {int(s): Status(s).name for s in np.unique(self.status)}
        counts = ", ".join(f"{np.count_nonzero(self.status == s):,} {names[s]}" for s in sorted(names, reverse=True))
        return f"{len(self):,} trajectories: {counts}"

    @property
    def events(self):
        return [self[i].events for i in range(len(self))]

    def problem(self, i):
        """Trajectory ``i`` as a problem of its own: ``odekit.solve(sol.problem(i), method)`` repeats it."""
        return self._inputs.problem(self._index(i))

    def _index(self, i):
        i = checks.count("i", i, minimum=-len(self), maximum=len(self) - 1)
        return i + len(self) if i < 0 else i

    def __getitem__(self, i):
        """Trajectory ``i`` as a :class:`Solution`: what it kept, its statistics and status."""
        i = self._index(i)
        result, base = self._result, self._inputs.base
        records, row = result.records(i)
        nout, logged = result.kept(i)
        if self.save == "final":
            t, y = self.t_final[i:i + 1], result.y_end[i:i + 1]
        else:
            t = self.t[:nout] if self.save == "t_eval" else records.t[row, :nout]
            y = records.y[row, :nout]
        run_events = self._spec.problem.events + as_events(self._spec.options.get("events"))
        logged = logged if run_events else 0
        log = Records(None, None, None, records.log_t[row], records.log_i[row], records.log_y[row])
        problem = self.problem(i)
        status = Status(self.status[i])
        return Solution(problem, self.method, t.copy(), base.unflatten(y.copy()), self.stats[i], status,
                        _trajectory_message(status, self.t_final[i], self.exceptions.get(i)), self.backend,
                        self.backend_reason, None, self.exceptions.get(i),
                        event_records(log, 0, logged, problem) if logged else [], run_events)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def plot(self, path=None):
        """The final states (``save="final"``) or the spread of the trajectories against time: a Figure."""
        from . import plot

        return plot.ensemble(self, path)

    def __repr__(self):
        return (f"EnsembleSolution({self._inputs.base.name!r}, method={self.method.name!r}, {self.message}, "
                f"save={self.save!r}, backend={self.backend!r})")


def _unflatten(problem, flat):
    return problem.unflatten(flat) if flat.size else flat.reshape((flat.shape[0],) + (
        ((2,) if problem.second_order else ()) + problem.shape))


def _trajectory_message(status, t, exc):
    """A short account of how one trajectory ended; solving it alone gives the full diagnosis."""
    if status == Status.SUCCESS:
        return f"The solver reached t_end={t:.6g}."
    if status == Status.FUNCTION_ERROR and exc is not None:
        return f"The problem's function raised {type(exc).__name__}: {exc} (at t={t:.6g})."
    return (f"The run stopped at t={t:.6g} with {status}; odekit.solve(ensemble.problem(i), method) repeats it "
            "with the full diagnosis.")


class EnsembleStats:
    """Work per trajectory: arrays ``nfev``, ``njev``, ``nlu``, ``nsteps``, ``naccepted``, ``nrejected``.

    ``total`` is their sum as one :class:`~odekit.Stats`.
    """

    def __init__(self, **arrays):
        self.__dict__.update(arrays)

    @classmethod
    def from_counts(cls, counts):
        """From the :data:`~odekit.kernels.ensemble.COUNTED` columns of every trajectory's run state."""
        nfev, njev, nlu, naccepted, nrejected = (counts[:, _COLUMN[k]].copy()
                                                 for k in (L.NFEV, L.NJEV, L.NLU, L.NACCEPT, L.NREJECT))
        return cls(nfev=nfev, njev=njev, nlu=nlu, nsteps=naccepted + nrejected, naccepted=naccepted,
                   nrejected=nrejected)

    @property
    def total(self):
        return Stats(**{name: int(values.sum()) for name, values in self.__dict__.items()})

    def __getitem__(self, i):
        return Stats(**{name: int(values[i]) for name, values in self.__dict__.items()})

    def __str__(self):
        return f"total {self.total}"


# --- on a cluster ----------------------------------------------------------------------

def _is_distributed(workers):
    return isinstance(workers, concurrent.futures.Executor) or _is_dask_client(workers)


def _is_dask_client(workers):
    # (by name: Dask is an optional extra, not imported to ask)
    return type(workers).__module__.startswith("distributed") and hasattr(workers, "scheduler_info")


def _distributed(spec, inputs, workers, chunk, progress):
    """Chunks of the ensemble as tasks of ``workers`` (an Executor or a Dask client), gathered in order."""
    payload = shipped(spec, inputs)
    digest = hashlib.sha256(payload).hexdigest()
    count = inputs.count
    size = chunk or max(1, -(-count // (4 * _worker_count(workers))))
    bounds = [(lo, min(lo + size, count)) for lo in range(0, count, size)]
    dask = _is_dask_client(workers)
    submit = (lambda *a: workers.submit(run_chunk, *a, pure=False, retries=2)) if dask else \
        (lambda *a: workers.submit(run_chunk, *a))
    futures = [submit(payload, digest, *inputs.slice(lo, hi)) for lo, hi in bounds]
    parts = [None] * len(futures)
    order = {f: k for k, f in enumerate(futures)}
    done = 0
    try:
        for future in _as_completed(futures, dask):
            k = order[future]
            parts[k] = future.result()
            parts[k].info[0].update(trajectories=bounds[k])
            done += bounds[k][1] - bounds[k][0]
            if progress is not None:
                progress(done, count, "trajectories")
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        raise Interrupted("interrupted by Ctrl-C; the ensemble's chunks were cancelled") from None
    result = Result.joined(parts)
    result.backend, result.reason = parts[0].backend, parts[0].reason
    return EnsembleSolution(spec, inputs, result)


def _as_completed(futures, dask):
    if dask:
        from distributed import as_completed

        return as_completed(futures)
    return concurrent.futures.as_completed(futures)


def _worker_count(workers):
    if _is_dask_client(workers):
        return max(1, len(workers.scheduler_info().get("workers", ())))
    return getattr(workers, "_max_workers", None) or os.cpu_count() or 1


def shipped(spec, inputs):
    """The set-up as bytes for the workers; a TypeError naming the function that cannot be sent.

    ``cloudpickle`` (Dask's) sends lambdas and functions of ``__main__`` by
    value; plain :mod:`pickle` only by reference to an importable module.
    The problem goes without its closed form and invariants, which no worker uses.
    """
    dumps = _dumps()
    problem = copy.copy(spec.problem)
    problem.exact, problem.invariants = None, {}
    problem.__dict__.pop("_constant_jacobian", None)
    light = Spec(problem, spec.method, spec.options, spec.save, spec.t_eval, spec.stacked)
    try:
        return dumps(light)
    except Exception as exc:
        for role, fn in _functions(problem, spec.options):
            try:
                dumps(fn)
            except Exception as why:
                raise TypeError(f"the ensemble's {role} cannot be sent to the workers ({type(why).__name__}: "
                                f"{why}); define it at module level in a module the workers can import"
                                + ("" if _has_cloudpickle() else ", or install cloudpickle (which sends "
                                   "lambdas and functions of __main__)")) from exc
        raise TypeError(f"the ensemble's problem or options cannot be sent to the workers: {exc}") from exc


def _functions(problem, options):
    """``(role, function)`` of everything a worker calls."""
    main = "accel" if problem.second_order else "fun"
    fn = problem.accel if problem.second_order else problem.fun
    found = [(f"{main} {getattr(fn, '__name__', '')!r}", fn)]
    if callable(problem.jac):
        found.append(("jac", problem.jac))
    for e in problem.events + as_events(options.get("events")):
        found.append((f"g of event {e.name!r}", e.g))
        if e.affect is not None:
            found.append((f"affect of event {e.name!r}", e.affect))
    return found


def _has_cloudpickle():
    try:
        import cloudpickle  # noqa: F401
    except ImportError:
        return False
    return True


def _dumps():
    if _has_cloudpickle():
        import cloudpickle

        return cloudpickle.dumps
    return pickle.dumps


_SET_UP = {}                 # on a worker: digest of the set-up -> its Runner
_SET_UP_LOCK = threading.Lock()


def run_chunk(payload, digest, y0, args):
    """On a worker: run one chunk of an ensemble; the set-up is made once per process and kept.

    Returns the chunk's :class:`Result`, whose ``info`` says where it ran,
    whether this call made the set-up, how long it and the run took and
    how many functions Numba compiled meanwhile.
    """
    from .kernels import jit

    start = time.perf_counter()
    with jit.compilations() as compiled:
        with _SET_UP_LOCK:
            runner = _SET_UP.get(digest)
            made = runner is None
            if made:
                runner = _SET_UP[digest] = Runner(pickle.loads(payload))
        ready = time.perf_counter()
        result = runner.run(y0, args)
        compilations = compiled()
    result.info = [dict(pid=os.getpid(), host=os.uname().nodename, set_up=made, set_up_seconds=ready - start,
                        run_seconds=time.perf_counter() - ready, compilations=compilations)]
    return result
