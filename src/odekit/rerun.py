"""A solve repeated with the same problem, method and options, run by one compiled call.

An optimizer, a sweep or a benchmark solves one problem thousands of times.
Set up in Python, every such solve paid about 36 us before its first step
(checks, work arrays, tolerances, recording, a :class:`~odekit.Solution`);
numbalsoda's whole call costs 2 us.  Once a start has been copied
:data:`~odekit.integrator.RERUN_AFTER` times (see
:meth:`odekit.Integrator._started`), :func:`odekit.solve` hands the run to a
:class:`Rerun`: the run of an ensemble's trajectory (:func:`odekit.kernels.
ensemble.make_trajectory`), made for one -- the work arrays and run
state restored as the run started them, the initial state read afresh from
the problem's own arrays, ``f`` evaluated there and counted, the family's
loop, the output written into arrays made in Python -- in one compiled call
whose arguments are bundled into one (:func:`odekit.kernels.jit.bundled`).
The numbers are those of a first solve, bit for bit.

The call runs the first slice of the run, as a solve's first call of its loop
does (see :data:`odekit.integrator.SLICE_SECONDS`).  A run that ends there
successfully, short enough not to be judged for stiffness, becomes its
Solution at once; any other -- one that goes on, fills its buffers or fails
-- is handed to an :class:`~odekit.Integrator` that adopts its arrays and goes
on, or reports, as a solve does.
"""

import copy
import warnings

import numpy as np

from .backend import CompilationNotice, caller_stacklevel, plain_drive
from .checks import NO_LIMIT
from .controllers import FixedStep
from .integrator import STARTS_KEPT, STARTS_SIZE, attributes, same_attributes
from .kernels import layout as L
from .kernels.ensemble import COUNTED, RUNNING, Records, Trajectories, freshener, make_one_run, picker
from .kernels.interface import no_output
from .recording import Recorder
from .solution import Solution, Stats, Status
from .theory.stiffness import STARVING_STEPS, StiffnessWarning, bound_applies, bound_clears

_SUCCESS = Status.SUCCESS
NEVER = 2 ** 62     # a count of steps no run reaches
_RERUNS = {}        # key of solve()'s arguments (see key) -> its Rerun, or None: it cannot be one


def key(problem, method, t_eval, backend, linear_solver, h, rtol, atol, adaptive, save_every, max_steps,
        event_samples, max_events, controller=None):
    """What a solve's plain arguments are known by (unhashable when one of them is: an array of tolerances):
    the numbers and flags kept with their types (``save_every=1.0``, which a first solve refuses, equals
    ``1``).  One flat tuple, the types written out: a nested one, with ``tuple(map(type, ...))``, took 0.9
    of a repeated small solve's 6 us, this 0.5."""
    if t_eval is not None:
        t_eval = ((t_eval.shape, t_eval.dtype.str, t_eval.tobytes()) if isinstance(t_eval, np.ndarray)
                  else tuple(t_eval) if isinstance(t_eval, (list, tuple)) else [])
    return (id(problem), method, t_eval, backend, linear_solver, h, rtol, atol, adaptive, save_every, max_steps,
            event_samples, max_events, controller, type(h), type(rtol), type(atol), type(adaptive),
            type(save_every), type(max_steps), type(event_samples), type(max_events), type(controller))


def rerun(solve_key, problem):
    """The Solution of a solve known by ``solve_key``, run again on ``problem``; None when it cannot be (the
    caller then solves as a first solve does)."""
    try:
        found = _RERUNS.get(solve_key)
    except TypeError:               # not a key
        return None
    return None if found is None else found.solve(problem)


def keep(solve_key, start, t_eval, save_every):
    """Keep a :class:`Rerun` of ``start`` (a start copied often, see :meth:`odekit.Integrator._started`) for
    ``solve_key``, or None when its run cannot be one: asked once per key, and again when the problem's
    attributes were assigned since its Rerun was made (which then runs nothing).  (The start is shared by
    solves whose ``t_eval`` or ``save_every`` differ, each known by its own key.)"""
    try:
        found = _RERUNS.get(solve_key, False)
    except TypeError:            # not a key: a t_eval of lists
        return
    if found is None or (found and same_attributes(start.problem, found.attributes)):
        return
    _RERUNS.pop(solve_key, None)         # (a stale one: replaced, not counted against the others kept)
    try:
        made = Rerun.made(start, t_eval, save_every)
    except Exception:            # noqa: BLE001 - e.g. Numba failing on the chunk loop: solves go on as they are
        made = None
    if len(_RERUNS) >= STARTS_KEPT:
        del _RERUNS[next(iter(_RERUNS))]
    _RERUNS[solve_key] = made


class Rerun:
    """A start of :func:`odekit.solve` and the compiled call that runs it again; see the module's docstring."""

    @classmethod
    def made(cls, start, t_eval, save_every):
        """A Rerun of ``start``, or None when its output would not be small or its loop not compiled."""
        start = start._copy(evaluate=False)              # its arrays, written below, are the Rerun's own
        recorder = Recorder(start, t_eval, False, save_every)
        k = start._kernels
        if k.backend != "numba" or k.reason or sum(a.size for a in start._scratch) + recorder.out_y.size > STARTS_SIZE:
            return None
        if any(not (a.flags.c_contiguous and a.dtype == start._y.dtype) for a in start.problem.state_arrays()):
            return None                  # (assigned so since the problem was made: a flat view would be a copy)
        return cls(start, recorder)

    def __init__(self, start, recorder):
        self.start, self.recorder, self.method = start, recorder, start.method
        problem = self.problem = start.problem
        self.args_in = None                             # (see read_args)
        self.attributes = attributes(problem)
        t1 = problem.t_span[1]
        self.message = f"The solver reached t_end={t1:.6g}."
        # the run state as solve()'s first call of the loop finds it (see Integrator._run), before f is evaluated
        start._aim(t1, recorder)
        fs0, ist0 = start._fs.copy(), start._ist.copy()
        ist0[L.PAUSE_AFTER] = start._first_slice
        ist0[L.HAVE_F] = ist0[L.NFEV] = 0
        self.fs0, self.ist0 = fs0, ist0
        # a fixed-step explicit run warns when h is beyond the stability limit at y0: judged here, and
        # again (by a first solve's way) from another y0, which the call does not start from
        self.judged = bool(start._fixed_explicit)
        self.warning = start._instability()
        self.stiffness = not (start.method.implicit or isinstance(start.controller, FixedStep))
        self.note_after = STARVING_STEPS if self.stiffness else NEVER      # (no shorter run is noted)
        # the call bounds the stiffness of a run that may be noted, where the bound applies (see _noted)
        force_only = problem.second_order and start.method.second_order_only
        self.bound_after = (STARVING_STEPS if self.stiffness and bound_applies(start._y.size, force_only)
                            else NEVER)
        # what the call reads: flat views of the problem's own arrays (the same objects as long as its
        # attributes are), and nothing after y0; and the shape of its states
        parts = tuple(a.reshape(-1) for a in problem.state_arrays())
        self.parts = parts + (np.empty(0, dtype=start._y.dtype),) * (2 - len(parts))
        # The call writes a first-order problem's states flat, a second-order problem's as (2, k): the shape
        # of its Solution.y when x0 is a vector, which reshaping here cost 60 ns of a 2.3 us prepared call
        # (90 of a 3.9 us solve) -- two structures to compile per family, both of which odekit warmup
        # compiles.  Other shapes are reshaped here.
        shape = problem.unflatten(start._y[None]).shape[1:]
        out = (2, start._y.size // 2) if problem.second_order else (start._y.size,)
        self.shape = None if shape == out else (-1,) + shape
        self.size, self.dtype = (0,) + out, start._y.dtype     # the last run's output, and its Stats
        self.last = None, None
        self.runs = 0                                   # solves it ran (from their start on)
        self._lane = self._new_lane()                   # compiled (or loaded) now, not in a later solve

    def _new_lane(self):
        """``(call, records, lane)``: a lane of its own (see :mod:`odekit.kernels.ensemble`) and the
        compiled call of the run on it (the last one went on with an interrupted run, or another thread)."""
        s = self.start
        n, dtype = s._y.size, s._y.dtype
        lane = (tuple(a.copy() for a in s._scratch), None, s._scratch, self.fs0.copy(), self.ist0.copy())
        rows = Trajectories(s._kernels.args(s.problem.args) if self.args_in is None else self.args_in,
                            s._y[None].copy(), self.fs0, self.ist0,
                            np.empty((1, n), dtype=dtype), np.zeros(1), np.zeros((1, len(COUNTED)), dtype=np.int64),
                            np.full(1, RUNNING, dtype=np.int64))
        r = self.recorder
        records = Records(r.t_eval, r.out_t.copy()[None], r.out_y.copy()[None], np.zeros((1, 0)),
                          np.zeros((1, 0, 2), dtype=np.int64), np.zeros((1, 0, n), dtype=dtype))
        args = (s._fns, s._method_data, rows, records, lane, no_output(dtype))
        state = (self.judged, self.bound_after) + self.parts
        return _compiled(s, args, state, self.size[1:], self.args_in is not None), records, lane

    def solve(self, problem):
        """The Solution of a run on ``problem`` (``self.problem``, its attributes as they were), or None."""
        if problem is not self.problem or not same_attributes(problem, self.attributes):
            return None
        taken, self._lane = self._lane or self._new_lane(), None    # a solve from another thread makes its own
        size = self.size                   # the last run's output: (rows, *the shape the call writes)
        t, y = np.empty(size[0]), np.empty(size, dtype=self.dtype)
        try:
            code, rows, nfev, njev, nlu, accepted, rejected, ratio = taken[0](t, y, True)
        except KeyboardInterrupt:          # Ctrl-C during the call: what it computed, with status INTERRUPTED
            return self._handed_on(*taken[1:], L.INTERRUPTED)
        except Exception:                  # noqa: BLE001 - the user's f raised: a first solve's way says how
            self._lane = taken
            return None
        counts, last = (nfev, njev, nlu, accepted, rejected), self.last
        if counts == last[0]:              # a Stats is frozen: the last run's is shared when the counts are its
            stats = last[1]
        else:
            stats = Stats.of(*counts)
            self.last = counts, stats      # (one tuple: another thread reads both or neither)
        if code or rows != size[0] or self.warning or self._noted(accepted, taken[2], ratio):
            return self._otherwise(problem, taken, code, rows, t, y, stats, ratio)
        self.runs += 1
        self._lane = taken
        return Solution(problem, self.method, t, y if self.shape is None else y.reshape(self.shape), stats,
                        _SUCCESS, self.message, "numba")

    def read_args(self):
        """From now on, run with the args written into ``self.args_in`` (arrays of one entry each, made from the
        problem's args as they are now), which :func:`odekit.prepare` writes new args into: a call of its own,
        compiled once per machine and family.  Its runs are not bounded for stiffness in the call: the bound
        takes the args the start was made with."""
        self.args_in = tuple(np.array([a]) for a in self.problem.args)
        self.bound_after = NEVER
        self.attributes = attributes(self.problem)
        self._lane = self._new_lane()

    def caller(self, otherwise):
        """``call(y0=None, args=None)``: ``(t, y)`` of a run on the problem as it is that simply succeeds, as
        its Solution would hold them (see :func:`odekit.prepare`); ``otherwise(y0, args)`` for any other call:
        ``y0`` or ``args`` given, a problem reassigned since, a run that warns, fails or may be noted for
        stiffness (it runs again: rare, and costing more than its run).

        One function for the whole call, which :class:`odekit.solve.Prepared` calls from C: each level of
        Python calls took 0.07-0.17 of a 2.5 us call (three steps of Kepler's orbit), each attribute read
        0.03.  The call as :meth:`solve` makes it, written out again: a helper shared by both added 0.1 us
        to each (a repeated solve 4.48 -> 4.59 us, a prepared call 3.20 -> 3.30, alternating, best of three).
        """
        problem, empty, dtype, note_after, warned = self.problem, np.empty, self.dtype, self.note_after, self.warning
        shape = self.shape

        def call(y0=None, args=None):
            # (same_attributes written out: its call was 30 ns of the 2.3)
            if y0 is not None or args is not None or warned or problem._edit != self.attributes:
                return otherwise(y0, args)
            taken, self._lane = self._lane or self._new_lane(), None    # (Ctrl-C: the next call makes a new lane)
            size = self.size
            t, y = empty(size[0]), empty(size, dtype)
            try:
                code, rows, _, _, _, accepted, _, ratio = taken[0](t, y, True)
            except KeyboardInterrupt:      # Interrupted, with what the call computed, as solve() raises it
                self._handed_on(*taken[1:], L.INTERRUPTED)
                raise
            except Exception:              # noqa: BLE001 - the user's f raised: a first solve's way says how
                self._lane = taken
                return otherwise(None, None)
            self._lane = taken
            if code or (accepted >= note_after and self._noted(accepted, taken[2], ratio)):
                return otherwise(None, None)
            if rows != size[0]:
                t, y = self._resized(taken[0], rows, y)
            self.runs += 1
            return t, y if shape is None else y.reshape(shape)

        return call

    def _resized(self, call, rows, y):
        """New ``t`` and ``y`` of ``rows`` rows, the last run's output written into them by ``call`` (it
        wrote nothing into arrays of another length); the next call makes arrays of this size."""
        self.size = (rows,) + y.shape[1:]
        t, y = np.empty(rows), np.empty(self.size, dtype=self.dtype)
        call(t, y, False)
        return t, y

    def _otherwise(self, problem, taken, code, rows, t, y, stats, ratio):
        """:meth:`solve`'s Solution after a call that did not simply succeed (returned ``code``, not 0), whose
        output has another number of ``rows`` than ``t`` and ``y``, or that warns or may say that the run
        starved; None when the call did not run."""
        if code not in (L.SUCCESS, L.PAUSED, L.BUFFER_FULL):
            # another start (OTHER_START), or failed from f at y0 on (which a first solve refuses with
            # ValueError): a first solve's way, which says why, runs it again -- at most a first slice
            self._lane = taken
            return None
        if self.warning:
            warnings.warn(self.warning, StiffnessWarning, stacklevel=caller_stacklevel())
        self.runs += 1
        call, records, lane = taken
        if code != L.SUCCESS:
            sol = self._handed_on(records, lane)
            self._lane = taken             # (the Solution's arrays are its own: see _handed_on)
            return sol
        if rows != t.size:
            t, y = self._resized(call, rows, y)
        self._lane = taken
        message = self.message
        if self._noted(stats.naccepted, lane, ratio):    # judged from its steps, as a first solve's
            note = self._adopted(lane)._stiffness_note(code, self.recorder, t, y.reshape(len(y), -1))
            message = f"{message.rstrip('.')}. {note}" if note else message
        return Solution(problem, self.method, t, y if self.shape is None else y.reshape(self.shape), stats,
                        _SUCCESS, message, "numba")

    def _noted(self, accepted, lane, ratio):
        """Whether a run of ``accepted`` steps on ``lane`` may end with a stiffness note: judged then, on an
        Integrator made for it, which a run cleared by its steps' spread or by the call's bound of its
        stiffness ``ratio`` does not pay for."""
        return (self.stiffness and accepted >= STARVING_STEPS and not bound_clears(ratio)
                and self.start._may_have_starved(self.recorder, lane[3]))

    def _adopted(self, lane):
        """The run as an :class:`~odekit.Integrator` whose arrays are ``lane``'s, where the call left it."""
        return self.start._with_arrays(lane[0], lane[3], lane[4])

    def _handed_on(self, records, lane, stopped=None):
        """The run an :class:`~odekit.Integrator` goes on with from where the call left it, and its Solution
        (that of a run ``stopped`` with that status, if given)."""
        integ = self._adopted(lane)
        recorder = copy.copy(self.recorder)
        recorder._integ, recorder.out_t, recorder.out_y = integ, records.t[0], records.y[0]
        if stopped is not None:
            return integ._solution(recorder, stopped, None)
        # on from a pause or a full buffer
        sol = integ._solution(recorder, *integ._interruptible(self.problem.t_span[1], NO_LIMIT, recorder))
        # the lane goes on to the next solve (making another took 1 ms): the Solution keeps no view of its buffers
        if np.may_share_memory(sol.t, records.t):
            sol.t = sol.t.copy()
        if np.may_share_memory(sol.y, records.y):
            sol.y = sol.y.copy()
        return sol


def _compiled(start, args, state, out, args_in_arrays=False):
    """The run of an ensemble's trajectory on ``args`` from ``state`` (see
    :func:`odekit.kernels.ensemble.make_one_run`), as a call of the output arrays and whether to run; compiled, or
    loaded from the disk cache, once per structure of arguments; ``out`` is the shape it writes each state in.
    ``args_in_arrays``: the problem's args are read from arrays of one entry each, as an ensemble's stacked args
    are.  The family's loop is its plain one (no step doubling, no dense output: see
    :func:`odekit.kernels.driver.make_drive`) where the family runs it for repeated solves
    (``Family.plain_reruns``), unless the run doubles its steps."""
    from .kernels import jit

    family = start.method.family

    def announce():
        warnings.warn(f"odekit: compiling the one-call solve of the {family.title} loop ({family.name}) that "
                      "odekit.solve makes when it solves a problem again, with Numba: a few seconds, once per "
                      "machine", CompilationNotice, stacklevel=caller_stacklevel())
    k = start._kernels
    y = start._y
    drive = (plain_drive(family, start._fns, (start._method_data, start._scratch), y.dtype)
             if family.plain_reruns and start.controller.kind != L.DOUBLING else k.drive)
    args = args + (drive.first_class, k.deriv.first_class)
    pick = (picker((True,) * len(start.problem.args), k.packed) if args_in_arrays else
            picker((False,) * len(k.args(start.problem.args))))       # the args, as the loop takes them
    call = make_one_run(pick, freshener(tuple(a.ndim for a in start._scratch), False))
    return jit.bundled(None, args + (state,), family.builtin, announce, call,
                       (np.empty(0), np.empty((0,) + out, dtype=y.dtype), True))
