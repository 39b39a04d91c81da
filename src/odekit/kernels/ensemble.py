"""The loop over an ensemble's trajectories: each one a whole run of its family's loop.

``make_chunk(pick, fresh, events)`` returns the loop that runs
trajectories ``lo`` to ``hi`` of an ensemble, one after another, in one set
of work arrays (a *lane*), with the family loop it is given.  Each
trajectory starts as
:class:`odekit.Integrator` starts a run -- work arrays as
:func:`odekit.runsetup.work_arrays` makes them, ``f`` at the initial state
evaluated and counted -- and is then the family's own loop, so that its
numbers are those of :func:`odekit.solve`, bit for bit.  Nothing is
allocated per trajectory: the lane is reset in place, and the inputs and
results are rows of the ensemble's arrays (:class:`Trajectories`).

Compiled with ``nogil``, the loop runs in several threads at once, each
with its own lane; the Python side hands out the chunks.  ``pick`` and
``fresh`` are made for the structure of a run's ``args`` and work arrays
by :func:`picker` and :func:`freshener`.  A repeated :func:`odekit.solve`
is one such trajectory, run by a call of its own (:func:`make_one_run`).
"""

from collections import namedtuple
import functools

import numpy as np

from . import borrowed, jitable, packing
from .evaluation import stiffness_bound
from .interface import EventState, Functions, Output, RunState
from .layout import (F, FHALF, HAVE_F, NACCEPT, NEVENT, NFEV, NJEV, NLU, NOUT, NREJECT, RECORD, RECORD_STEPS,
                     SINCE_SAVE, SUCCESS, T, Y, YFULL, YHALF)
from .primitives import copy_row

RUNNING = 99             # the code of a trajectory under way: the one holding it when its chunk raised raised it
OTHER_START = 98         # a repeated solve's call not run: its state is not the one it may start from (one_run)

Trajectories = namedtuple("Trajectories", "args y0 fs0 ist0 y_end t_end counts codes")
Trajectories.__doc__ = """An ensemble's per-trajectory rows, the trajectory the first axis of each: the ``args``
(a tuple whose per-trajectory entries are stacked, see :func:`picker`), initial states ``y0``, the run state
every trajectory starts from, ``fs0`` and ``ist0`` (as :class:`odekit.Integrator` sets up its own; shared),
and what each run leaves: its final state ``y_end``, time ``t_end``, the ``counts`` of ``ist`` named in
:data:`COUNTED` and status code ``codes``."""

# what a solution reads of a trajectory's integer run state (its Stats, the rows and events it kept): a run
# works in its lane's fs and ist, and leaves these with its final time (keep_run_state) -- 8 numbers, not 45
COUNTED = (NFEV, NJEV, NLU, NACCEPT, NREJECT, NOUT, NEVENT)

Records = namedtuple("Records", "t_eval t y log_t log_i log_y")
Records.__doc__ = """What an ensemble keeps per trajectory besides its final state: the requested times
``t_eval`` (shared), rows ``t[i], y[i]`` of output (no columns when nothing is kept), and its event log
``log_t[i], log_i[i], log_y[i]`` (see :class:`~.interface.EventState`)."""


@functools.lru_cache(maxsize=None)
def make_trajectory(pick, fresh, events):
    """The run of one trajectory of an ensemble (with ``events`` or without), for the chunk loop and a
    repeated solve's call alike; made once for each."""

    @jitable
    def trajectory(fns, data, rows, records, lane, blank, i, drive, deriv):
        """Run trajectory ``i`` on ``lane`` from its row of ``rows``, and leave what it made there.

        ``lane`` is ``(scratch, ev, start, fs, ist)``: the work arrays and
        the event state the caller owns (``ev`` None without events), the
        work arrays as a run starts with them, and the run state it works
        in; ``blank`` an :class:`~.interface.Output` with empty dense-output
        buffers.  ``drive`` and ``deriv`` are the family's loop and
        derivative: compiled, first-class functions, called through their
        addresses -- linked, Numba generated the whole family loop again for
        each caller (2.6 s to compile one, against 1.5).
        """
        scratch, ev, start, fs, ist = lane
        W = scratch[0]
        rhs, jac, shared, g, affect = fns
        # the work arrays as work_arrays made them (zeros, and what a family loads, such as a
        # splitting method's damping): odekit's families write the rest before they read it (the
        # tests pass without this), a user's family need not; the event state starts at zero
        fresh(lane)
        restore_items(fs, rows.fs0)
        restore_items(ist, rows.ist0)
        copy_row(W, Y, rows.y0, i)
        args = pick(rows.args, i)
        rows.codes[i] = RUNNING
        code = deriv(rhs, args, fs[T], W, Y, F, ist, fs)       # the first evaluation, counted
        if code == SUCCESS:
            ist[HAVE_F] = 1
            out = Output(records.t_eval, records.t[i], records.y[i], blank.dense_t, blank.dense_h,
                         blank.dense_y, blank.dense_f, blank.dense_k)
            if events:
                run = RunState(fs, ist, EventState(ev.spec, ev.kinds, ev.count, ev.conf, ev.G, ev.Y, ev.roots,
                                                   ev.fired, records.log_t[i], records.log_i[i],
                                                   records.log_y[i]))
                code = drive(Functions(rhs, jac, args, g, affect), data, run, scratch, out)
            else:
                code = drive(Functions(rhs, jac, args, g, affect), data, RunState(fs, ist, None), scratch, out)
        copy_row(rows.y_end, i, W, Y)
        keep_run_state(rows, i, fs, ist)
        rows.codes[i] = code

    return trajectory


@functools.lru_cache(maxsize=None)
def make_chunk(pick, fresh, events):
    """The loop over a chunk of trajectories (with ``events`` or without); made once for each (so that Numba
    compiles it once)."""
    trajectory = make_trajectory(pick, fresh, events)

    def chunk(fns, data, rows, records, lane, blank, lo, hi, stop, drive, deriv):
        """Run trajectories ``lo`` to ``hi`` (see :func:`make_trajectory`) one after another on ``lane``;
        return where it stopped (``hi``, or earlier when ``stop[0]``)."""
        # borrowed: the caller holds every array for the whole call; counted, their references passed on to
        # each trajectory took a quarter of a short one (Kepler, dp54, three steps: 1.40 against 1.05 us)
        fns, data, rows, records, lane, blank = borrowed((fns, data, rows, records, lane, blank))
        for i in range(lo, hi):
            if stop[0] != 0:                     # Ctrl-C: the Python side asked the lanes to stop
                return i
            trajectory(fns, data, rows, records, lane, blank, i, drive, deriv)
        return hi

    return chunk


@functools.lru_cache(maxsize=None)
def make_one_run(pick, fresh):
    """A repeated solve's call (see :mod:`odekit.rerun`) for runs whose args ``pick`` takes and whose work
    arrays ``fresh`` restores; made once for each."""
    trajectory = make_trajectory(pick, fresh, False)

    def one_run(bundle, t, y, run):
        """Trajectory 0 (see :func:`make_trajectory`) on the bundle's arguments, started from the state that
        one holds; its output written into ``t`` and ``y`` when they have as many rows (``y`` C-contiguous,
        a state in each row of whatever shape the caller wants them in).

        The bundle holds ``fns, data, rows, records, lane, blank, drive,
        deriv`` as the chunk loop takes them, and ``(judged, bound_after,
        first, second)``, held by the bundle: Numba makes a reference of its
        own for each array passed from Python (0.05-0.1 us for two).  The
        trajectory is run here, not by a chunk loop called through its
        address: that call took the bundles by value, and the compiled call
        over three steps of Kepler's orbit (dp54) took 2.0-2.1 us against
        1.7 (the chunk loop was also one more function to compile: 4.6
        against 4.1 s CPU for both).  The state is
        ``first`` followed by ``second``, flat views of the problem's own
        arrays, read afresh: ``x0`` and ``v0`` of a second-order problem,
        ``y0`` and nothing of another (reading them here, not concatenating
        them in Python, took 0.1 against 0.8 us; two vectors, whatever the
        problem, are one structure to compile).  With ``judged``, a run
        starts only from the state it started from before (a fixed-step run
        warned, or not, for that state: see :class:`odekit.rerun.Rerun`).  A
        run that succeeds after at least ``bound_after`` accepted steps ends
        with a bound of the stiffness ratio at its final state
        (:func:`.evaluation.stiffness_bound`, uncounted, in rows ``YHALF`` to
        ``YFULL``, which no run carries from a step to the next): it clears
        most runs of the note that they starved on a stiff problem without a
        call of the function from Python.  Without ``run``, nothing is run:
        the output of the last run is written.

        Returns its code -- :data:`OTHER_START` when it did not start: the
        state not of the run's length or, ``judged``, another -- the number
        of rows of its output, the times and flat states it kept (and the
        last state, when the run ended between two saved steps, as
        :class:`odekit.recording.Recorder` adds it), its counts ``nfev,
        njev, nlu, naccepted, nrejected``: what a Solution needs; and the
        bound (nan when there is none).  The caller makes the output arrays:
        two arrays made by Numba and returned took 0.9 us, two made by NumPy
        and passed in 0.5.
        """
        # borrowed: the bundle holds every array for the whole call; counting their references took 1 of 4.3 us
        fns, data, rows, records, lane, blank, drive, deriv, start = borrowed(bundle.args)
        judged, bound_after, first, second = start
        t, y = borrowed((t, y))                # (the caller holds them)
        y = y.reshape((y.shape[0], -1))
        y0 = rows.y0[0]
        fs, ist, W = lane[3], lane[4], lane[0][0]
        ratio = np.nan
        if run:
            n, k = y0.shape[0], first.shape[0]
            if k + second.shape[0] != n or (judged and not (_same(y0, 0, first) and _same(y0, k, second))):
                return OTHER_START, 0, 0, 0, 0, 0, 0, ratio
            for j in range(k):
                y0[j] = first[j]
            for j in range(n - k):
                y0[k + j] = second[j]
            if rows.ist0[NOUT] == 1:           # row 0 of the output is the initial state
                restore_items(records.y[0, 0], y0)
            trajectory(fns, data, rows, records, lane, blank, 0, drive, deriv)
            if rows.codes[0] == SUCCESS and ist[NACCEPT] >= bound_after:
                # (the run's args as its Functions hold them: rows.args may be arrays the call reads them
                # from, see odekit.rerun, whose runs are then not bounded here)
                ratio = stiffness_bound(fns[0], fns[2], fs[T], W, Y, YFULL, YHALF, FHALF)
        m = ist[NOUT]
        last = 1 if ist[RECORD] == RECORD_STEPS and ist[SINCE_SAVE] > 0 else 0
        if t.shape[0] == m + last:
            for r in range(m):
                t[r] = records.t[0, r]
                copy_row(y, r, records.y[0], r)
            if last:
                t[m] = fs[T]
                copy_row(y, m, W, Y)
        return rows.codes[0], m + last, ist[NFEV], ist[NJEV], ist[NLU], ist[NACCEPT], ist[NREJECT], ratio

    return one_run


@jitable
def _same(y, k, part):
    """Whether ``y[k:k + len(part)]`` holds ``part``'s numbers."""
    for j in range(part.shape[0]):
        if part[j] != y[k + j]:
            return False
    return True


@jitable
def keep_run_state(rows, i, fs, ist):
    """What trajectory ``i``'s run leaves of its run state ``fs``, ``ist``: its final time and :data:`COUNTED`."""
    rows.t_end[i] = fs[T]
    for k in range(len(COUNTED)):
        rows.counts[i, k] = ist[COUNTED[k]]


# --- the two helpers made for a run's structure -----------------------------------------
# A tuple of arrays of different types cannot be looped over in compiled code, so these
# are written out for the tuple at hand: a line per entry.

_MADE = {}


def _made(source, name):
    """The ``@jitable`` function ``name`` defined by ``source``, made once per source."""
    if source not in _MADE:
        namespace = {"restore_rows": restore_rows, "restore_items": restore_items}
        exec(compile(source, f"<odekit.kernels.ensemble {name}>", "exec"), namespace)
        _MADE[source] = jitable(namespace[name])
    return _MADE[source]


def picker(per_trajectory, packed=False):
    """``pick(args, i)``: the ``args`` tuple of trajectory ``i``.

    ``per_trajectory[j]`` says whether entry ``j`` of the ensemble's ``args``
    is stacked (``args[j][i]`` is trajectory ``i``'s) or shared (``args[j]``);
    ``packed``: as floats padded with zeros, as the family loop takes them (see :mod:`.packing`).
    """
    items = [f"args[{j}][i]" if stacked else f"args[{j}]" for j, stacked in enumerate(per_trajectory)]
    if packed:
        items = [f"float({item})" for item in items] + ["0.0"] * (packing.SLOTS - len(items))
    value = "()" if not items else f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return _made(f"def pick(args, i):\n    return {value}\n", "pick")


@jitable
def restore_rows(D, S):
    """``D[:] = S`` for two arrays of one shape, a row at a time.

    Numba compiles a slice assignment with the shape checks of broadcasting,
    whose error messages are formatted strings: in ``fresh`` they took 11 of
    the 20 s the chunk loop took to compile.
    """
    for r in range(S.shape[0]):
        copy_row(D, r, S, r)


@jitable
def restore_items(D, S):
    """``D[:] = S`` for two vectors of one length (see :func:`restore_rows`)."""
    for k in range(S.shape[0]):
        D[k] = S[k]


def freshener(ndims, events):
    """``fresh(lane)``: a lane's work arrays (of ``ndims`` dimensions each), and with ``events`` its event
    state, as a run starts them."""
    how = {1: "restore_items({0}, {1})", 2: "restore_rows({0}, {1})"}
    lines = ["    " + how.get(ndim, "{0}[:] = {1}").format(f"lane[0][{j}]", f"lane[2][{j}]")
             for j, ndim in enumerate(ndims)]
    lines += [f"    lane[1].{name}.fill(0)" for name in ("count", "G", "Y", "roots", "fired") if events]
    return _made("def fresh(lane):\n" + "\n".join(lines or ["    return"]) + "\n", "fresh")
