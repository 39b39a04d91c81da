"""The run: state, kernels and controller of one integration.

:class:`Integrator` steps a problem in real time -- a game loop, an
interactive page -- with readable and writable time and state (an impulse
such as thrust is a write); :meth:`Integrator.run_frame` is the fixed-timestep
clock of a game loop.  :func:`odekit.solve` is an ``Integrator`` run to
the end of the span with recording switched on.
"""

import contextlib
import copy
import math
import signal
import threading
import time
import warnings

import numpy as np

from . import backend as _backend, checks, diagnosis, runsetup, sparse as _sparse
from .checks import NO_LIMIT
from .clock import FrameClock
from .events import SAMPLES, records
from .controllers import FixedStep, known_by_value
from .kernels import layout as L
from .kernels.driver import forget
from .kernels.interface import MethodData, RunState
from .recording import NoRecording, Recorder, StepRecorder
from .registry import method as lookup_method
from .problem import ODEProblem, SecondOrderProblem
from .solution import Solution, Stats, Status
from .theory.stiffness import STARVING_STEPS, StiffnessWarning, fixed_step_warning, starving_note, steady

# A compiled loop cannot be interrupted, so the kernel runs in slices of steps and
# Python, which raises KeyboardInterrupt between them, gets control every SLICE_SECONDS.
# The first slice has to guess: about FIRST_SLICE_WORK numbers of work arrays
# touched, FIRST_SLICE steps at most (a few hundred microseconds compiled).
SLICE_SECONDS = 0.05
FIRST_SLICE = 1024
FIRST_SLICE_WORK = 2 ** 17


class IntegrationError(RuntimeError):
    """An :class:`Integrator` step failed; the state is that of the last good step.

    Attributes
    ----------
    status : Status
    t, y : ndarray or None
        From :meth:`Integrator.record_steps`: the steps taken before the failure.
    """

    def __init__(self, status, message):
        super().__init__(message)
        self.status = Status(status)
        self.t = self.y = None


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run between two of its steps; what it computed is kept.

    A ``KeyboardInterrupt``, so that Ctrl-C still stops a program (a study
    that loops over runs stops at once, as with SciPy's ``solve_ivp``), but
    one that carries the partial result.  An :class:`Integrator` stays at
    its last step and can go on from there.

    Attributes
    ----------
    solution : Solution or None
        From :func:`odekit.solve`: the steps computed so far, with status
        ``Status.INTERRUPTED``.
    t, y : ndarray or None
        From :meth:`Integrator.record_steps`: the steps taken.
    """

    def __init__(self, message, solution=None, t=None, y=None):
        super().__init__(message)
        self.solution, self.t, self.y = solution, t, y


class Integrator:
    """Step a problem with one method, keeping the state between calls.

    Parameters
    ----------
    problem : ODEProblem or SecondOrderProblem
        With a span of some length and a state of some size: see
        :func:`odekit.solve` for why (:func:`odekit.solve_ivp` takes both
        as SciPy does, and returns the initial state).
    method : str or Method
        Any registered name or alias (see :func:`odekit.methods`).
    h : float, optional
        Fixed step size (positive; the direction follows ``t_span``).  With an
        adaptive controller, the first step.
    rtol, atol : float or array_like
        Error tolerances of adaptive control, per component or scalar; for
        implicit methods they also set Newton's tolerance.
    adaptive : None, bool or "doubling"
        ``None``: fixed when ``h`` is given, else the method's embedded pair.
        ``True``: the embedded pair.  ``"doubling"``: step doubling, for any
        method.  ``False``: fixed (needs ``h``).
    controller : FixedStep, PIController or StepDoubling, optional
        Full control of the step-size controller (instead of ``h``/``adaptive``).
    max_steps : int, optional
        Stop with ``Status.MAX_STEPS`` after this many accepted steps; any
        number from ``2**62`` on means no limit, as ``None`` does.
    backend : {"auto", "numba", "python"}
        ``auto`` compiles the problem's functions when Numba can and falls
        back to Python (with a warning saying why) when it cannot.
    linear_solver : {"auto", "dense", "splu", "cg", "gmres"} or LinearSolver
        How implicit methods solve their Newton systems: dense LU (compiled),
        or sparse LU, conjugate gradients or GMRES from
        :mod:`scipy.sparse.linalg` (on the Python backend; see
        :mod:`odekit.sparse`).  ``auto`` chooses by the Jacobian's type:
        sparse LU for a :mod:`scipy.sparse` Jacobian, a ``jac_sparsity``
        pattern or the force Jacobians of mechanics, dense LU otherwise.
    events : Event, callable or list of them, optional
        Conditions to watch for besides the problem's own (see
        :class:`odekit.Event`); :attr:`event_log` lists those that happened,
        :attr:`last_events` those of the last call.
    event_samples : int
        Points inside each step, besides its end, where the events' ``g``
        are looked at for a sign change.
    max_events : int, optional
        Stop with ``Status.MAX_EVENTS`` after logging this many events.

    Warns
    -----
    StiffnessWarning
        With a fixed ``h`` and an explicit method, when ``h`` is beyond the
        method's stability limit for the Jacobian's spectrum at ``t0`` (see
        :func:`odekit.analysis.stiffness`; about 20 evaluations of the
        problem's function, not counted in :attr:`stats`).
    """

    def __init__(self, problem, method="dp54", *, h=None, rtol=1e-6, atol=1e-9, adaptive=None,
                 controller=None, max_steps=None, backend="auto", linear_solver="auto", events=None,
                 event_samples=SAMPLES, max_events=None):
        if not isinstance(problem, (ODEProblem, SecondOrderProblem)):
            raise TypeError("problem must be an ODEProblem or SecondOrderProblem, "
                            f"got {type(problem).__name__}")
        self.problem = problem
        self.method = lookup_method(method)
        refused = self.method.refusal(problem)
        if refused:
            raise ValueError(refused)
        self.controller = runsetup.controller(self.method, h, adaptive, controller)
        y = problem.initial_state()
        n = y.size
        self._tol = runsetup.tolerances(rtol, atol, n)
        self._ctrl = self.controller.params(self.method)
        self._ctrl[L.C_HAS_JAC] = 0.0 if problem.jac is None else 1.0
        self._ctrl[L.C_AUTONOMOUS] = 1.0 if problem.autonomous else 0.0
        if self._ctrl[L.C_NEWTON] == 0.0:       # the controller left it to the family
            self._ctrl[L.C_NEWTON] = runsetup.newton_tolerance(self.method, self._tol)
        self._P = self.method.dense_matrix
        self._method_data = MethodData(self.method.run_data(problem), self._P, self._ctrl, self._tol)
        self.linear_solver = _sparse.linear_solver(linear_solver, problem, self.method.implicit)
        self._scratch = runsetup.work_arrays(self.method, y, problem, self.linear_solver)
        W = self._scratch[0]
        self._y, self._f = W[L.Y], W[L.F]         # the state and f there: rows of the work matrix
        work = W.size + (n * n if self.method.implicit else 0)     # numbers a step touches, roughly
        self._first_slice = max(1, min(FIRST_SLICE, FIRST_SLICE_WORK // work))
        self._fs = np.zeros(L.FS_SIZE)
        self._ist = np.zeros(L.IST_SIZE, dtype=np.int64)
        self._events, sizes, ev = runsetup.events(problem, events, event_samples, max_events, y)
        self._state = RunState(self._fs, self._ist, ev)
        self._fs[L.T_EVENT] = math.nan
        self.last_events = []
        self.terminated = False
        self._no_recording = NoRecording(y.dtype)
        t0, t1 = problem.t_span
        self._direction = 1.0 if t1 > t0 else -1.0
        self._fs[L.T] = self._fs[L.T0] = t0
        self._ist[L.MAX_ACCEPT] = NO_LIMIT if max_steps is None else checks.steps("max_steps", max_steps)
        self._kernels, code = _backend.prepare(problem, self.method.family, backend,
                                                  (self._method_data, self._scratch),
                                                  lambda kernels: diagnosis.first_evaluation(self, kernels),
                                                  self._events, sizes, self._lazy)
        if code != L.SUCCESS:
            raise ValueError(diagnosis.first_evaluation_error(problem, code, t0))
        self._fns = self._kernels.functions(problem.args)
        self._ist[L.HAVE_F] = 1
        if isinstance(self.controller, FixedStep):
            self._fs[L.H] = self._direction * self.controller.h
        elif self.controller.h0 is not None:
            self._fs[L.H] = self._direction * self.controller.h0
        # else H stays 0: the kernel chooses the first step (Hairer's algorithm)
        self._fs[L.ERR_PREV] = 1.0
        self._warn_if_unstable()

    @property
    def _fixed_explicit(self):
        """Whether the run takes fixed steps of an explicit method: those are judged for stability first."""
        return isinstance(self.controller, FixedStep) and not self.method.implicit

    def _instability(self):
        """Before a fixed-step explicit run: the StiffnessWarning's message when ``h`` is beyond the stability
        limit at the current state, else None (None too for any other run).

        About 20 evaluations of the problem's function at ``t0`` (see
        :func:`odekit.analysis.stiffness`), made outside the run: not counted in
        :attr:`stats`, and the state of the run is not touched.
        """
        if not self._fixed_explicit:
            return None
        return fixed_step_warning(self.problem, self.method, self.controller.h, self._kernels.rhs,
                                  self.method.second_order_only, self.t, self._y.copy(), self._f)

    def _warn_if_unstable(self):
        """A StiffnessWarning with :meth:`_instability`'s message, if it has one."""
        message = self._instability()
        if message:
            warnings.warn(message, StiffnessWarning, stacklevel=_backend.caller_stacklevel())

    def _stiffness_note(self, status, recorder, t_out, y_out):
        """After an explicit adaptive run: a sentence for the message when it starved on a stiff problem.

        Judged from the recorded steps and, only when they look like it, one
        estimate of the spectrum at the final state (uncounted evaluations).
        """
        if (isinstance(self.controller, FixedStep) or self.method.implicit or self._ist[L.NACCEPT] < STARVING_STEPS
                or status not in (L.SUCCESS, L.MAX_STEPS, L.STEP_UNDERFLOW)):
            return None

        spread = None
        if _every_step(recorder):
            steps, states = np.diff(t_out[-102:]), y_out[-102:]
        else:
            steps, states = np.array([(self.t - self.problem.t_span[0]) / max(1, int(self._ist[L.NACCEPT]))]), None
            spread = _recent_spread(self._fs)
        return starving_note(self.problem, self.method, self._kernels.rhs, self.method.second_order_only,
                             self.t, self._y.copy(), self.stats, steps, states, self.controller.kind == L.DOUBLING,
                             spread)

    def _may_have_starved(self, recorder, fs):
        """Whether a run of this start, in the state ``fs``, may get a stiffness note, by what costs nothing:
        a run that kept every step is judged from them, any other by the spread of its recent steps."""
        return _every_step(recorder) or steady(_recent_spread(fs), self.controller.kind == L.DOUBLING)

    # --- a repeated start, copied -------------------------------------------------------
    @classmethod
    def _started(cls, problem, method, options, often=None):
        """``cls(problem, method, **options)``, copied from the last such start when nothing it read has changed.

        A program that solves one problem again and again (an optimizer, a
        sweep, a benchmark) spent about 50 us a solve setting the same run up:
        the method, the controller, the tolerances, the work arrays and the
        kernels, each checked.  Kept from the second start of a problem
        object, method and options on (:data:`STARTS_KEPT` of them; a loop
        over new problems would pay for keeping starts it never copies: 20
        us a solve): a start copies the work arrays and run state as they
        were set up, reads ``y0`` afresh, and evaluates ``f`` there again,
        counted as before.  Only a start that nothing can
        have changed behind it is kept: compiled and not deferred, no events,
        the controller from the options or one of odekit's own (frozen:
        :func:`odekit.controllers.known_by_value`), scalar ``args`` and tolerances, at
        most :data:`STARTS_SIZE` numbers in the work arrays; a problem whose
        attributes were reassigned since is set up anew.  ``often(start)``, if
        given, is called with the start kept each time it is copied from the
        :data:`RERUN_AFTER`-th time on (see :mod:`odekit.rerun`).
        """
        try:
            key = (id(problem), method, tuple(options.items()))
            kept = _STARTS.get(key)
        except TypeError:            # an array of tolerances, events in a list: not kept
            return cls(problem, method, **options)
        again = kept is not None and kept[0] is problem
        if again and kept[2] is not None and same_attributes(problem, kept[1]):
            integ = kept[2]._copy()
            if integ is not None:
                kept[3] += 1
                if kept[3] >= RERUN_AFTER and often is not None:
                    often(kept[2])
                return integ
        integ = cls(problem, method, **options)
        if not again:                   # the first start is noted, the second kept
            if len(_STARTS) >= STARTS_KEPT:
                del _STARTS[next(iter(_STARTS))]
            _STARTS[key] = [problem, None, None, 0]
        elif integ._keepable(options):
            _STARTS[key] = [problem, attributes(problem), integ._copy(evaluate=False), 0]
        return integ

    def _keepable(self, options):
        k, args = self._kernels, self.problem.args
        return (k.backend == "numba" and not k.reason and k.later is None and not self._events
                and sum(a.size for a in self._scratch) <= STARTS_SIZE
                and known_by_value(options.get("controller")) and self.linear_solver is None
                and all(type(a) in (float, int, bool, complex) for a in args))

    def _copy(self, evaluate=True):
        """This run as it started, with arrays of its own; with ``evaluate``, from the problem's ``y0`` as it is
        now, ``f`` evaluated there (None if that fails: the caller sets the run up anew, and reports it)."""
        other = self._with_arrays(tuple(a.copy() for a in self._scratch), self._fs.copy(), self._ist.copy())
        if evaluate:
            p, k, ist = self.problem, self._kernels, other._ist
            other._y[:] = p.initial_state()
            ist[L.NFEV] = 0
            if k.deriv(k.rhs, k.args(p.args), other._fs[L.T], other._scratch[0], L.Y, L.F, ist, other._fs) != L.SUCCESS:
                return None
            other._warn_if_unstable()
        return other

    def _with_arrays(self, scratch, fs, ist):
        """This run (its problem, method, kernels, options) on the work arrays ``scratch`` and run state
        ``fs``, ``ist``, without events, as they stand."""
        other = copy.copy(self)
        other._scratch, other._fs, other._ist = scratch, fs, ist
        other._state = RunState(fs, ist, None)
        other._y, other._f = scratch[0][L.Y], scratch[0][L.F]
        other.last_events = []
        return other

    # An Integrator compiles when it is made, not in the middle of its steps; a solve's run may
    # start on Python while the loop is not compiled (see solve), and odekit serve's page runs
    # on Python while the loop compiles in the background (see odekit.backend.prepare)
    _lazy = False

    def _go_compiled(self):
        """Go on with the compiled kernels that a lazy start put off (see :func:`odekit.backend.prepare`).

        The run's whole state is in its arrays, which both backends share:
        the steps go on as those of one uninterrupted run.
        """
        W = self._scratch[0]
        self._kernels = _backend.go_compiled(
            self._kernels, lambda k: k.rhs(self.t, W.copy(), L.Y, L.F, self.problem.args))
        self._fns = self._kernels.functions(self.problem.args)
        return self._kernels

    # --- state --------------------------------------------------------------------
    @property
    def backend(self):
        """``"numba"`` or ``"python"``: which backend runs."""
        return self._kernels.backend

    @property
    def t(self):
        """Current time; writable (restarts the fixed-step grid there)."""
        return float(self._fs[L.T])

    @t.setter
    def t(self, value):
        value = checks.real("t", value, "finite and real")
        self._fs[L.T] = self._fs[L.T0] = value
        self._ist[L.KSTEP] = 0
        self._invalidate()

    @property
    def y(self):
        """Current state, shaped like ``y0`` (``(2, *x0.shape)`` for mechanics); read-only view.

        Assign to change it: ``integ.y = new_state``.
        """
        view = self.problem.unflatten(self._y[None])[0]
        view.flags.writeable = False
        return view

    @y.setter
    def y(self, value):
        self._write(slice(None), value, "y", self.problem.unflatten(self._y[None])[0].shape)

    @property
    def x(self):
        """Positions (second-order problems); read-only view, assign to change."""
        return self._half(0)

    @x.setter
    def x(self, value):
        self._write(slice(0, self._y.size // 2), value, "x", self._second_order_shape("x"))

    @property
    def v(self):
        """Velocities (second-order problems); read-only view, assign to change (e.g. a kick of thrust)."""
        return self._half(1)

    @v.setter
    def v(self, value):
        self._write(slice(self._y.size // 2, None), value, "v", self._second_order_shape("v"))

    def _second_order_shape(self, what):
        if not self.problem.second_order:
            raise AttributeError(f"{what} exists for a SecondOrderProblem; this problem's state is y")
        return self.problem.shape

    def _half(self, i):
        shape = self._second_order_shape("xv"[i])
        n = self._y.size // 2
        view = self._y[i * n:(i + 1) * n].reshape(shape)
        view.flags.writeable = False
        return view

    def _write(self, where, value, name, shape):
        value = checks.fitting(name, value, self._y.dtype)
        if value.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
        self._y[where] = checks.finite_entries(name, value).ravel()
        self._invalidate()

    def _invalidate(self):
        """The state changed from outside: remembered derivatives (and Jacobians) no longer hold."""
        forget(self._fs, self._ist, True)
        self.method.family.restart(self._fs, self._ist)   # e.g. BDF restarts its history at order 1
        self._writes += 1                  # and interpolate no longer blends across it

    @property
    def h(self):
        """The fixed step, or the next step the adaptive controller will try (signed).

        0 before the first step when the controller chooses that step itself.
        """
        return float(self._fs[L.H])

    @property
    def stats(self):
        """Work so far: :class:`Stats`."""
        return Stats.from_state(self._ist)

    @property
    def event_log(self):
        """Every event so far, in time order: a list of :class:`~odekit.events.EventRecord`."""
        return self._events_since(0)

    # --- stepping -----------------------------------------------------------------
    def step(self, n=1):
        """Take ``n`` accepted steps; return the new time.

        Any ``n`` from ``2**62`` on means: step until a step fails.

        Raises
        ------
        IntegrationError
            If a step fails; the state stays at the last good step.
        Interrupted
            On Ctrl-C; the state is that of the last step taken.
        """
        quick = self._quick
        if quick is not None and n.__class__ is int and 0 < n <= self._first_slice:
            return self._quick_step(quick, n)
        self._advance(self._direction * math.inf, checks.steps("n", n), self._no_recording)
        if not (self._kernels.runs_python or self._events or self.terminated):
            self._quick = _backend.quick_call(self._kernels, (self._fns, self._method_data, self._state,
                                                              self._scratch, self._no_recording.output()),
                                              self.method.family)
        return self.t

    _quick = None      # the loop on the run's bundles while step() may call it directly (see _quick_step)

    def _quick_step(self, call, n):
        """:meth:`step` of ``n`` steps, no more than a first slice, in one call of the compiled loop.

        A game steps once a frame: this is the general path's call with none
        of its Python around it.  It is taken only after a plain
        :meth:`step`, which left the run's target, recording and slice in
        the arrays (any other call clears ``_quick``), with no events to
        collect and a compiled loop, which Ctrl-C cannot stop half-way.
        """
        self._ist[L.PAUSE_AFTER] = n
        try:
            status = call()
        except KeyboardInterrupt:
            status, exc = L.INTERRUPTED, None
        except Exception as error:      # a compiled function may raise, as in the general path
            status, exc = L.FUNCTION_ERROR, error
        else:
            if status == L.PAUSED:
                return float(self._fs[L.T])
            exc = None
        self._quick = None
        self._raise_for(status, self._direction * math.inf, exc)
        return self.t

    def record_steps(self, n):
        """Take ``n`` accepted steps and return them: the times and states of every step.

        For a game loop or a live page that draws a frame per many steps and
        wants what happened in between (a trail, the lowest point of an
        orbit).  The kernel writes each step to an array as it goes, so this
        costs about what :meth:`step` does.

        Returns
        -------
        t : ndarray, shape (n + 1,)
            The current time, then the end of each step.
        y : ndarray
            The states at ``t``, shaped ``(n + 1, *y.shape)``: time-major, like
            :attr:`Solution.y` (``y[:, 0]`` and ``y[:, 1]`` are positions and
            velocities of a second-order problem).

        Raises
        ------
        IntegrationError
            If a step fails, or the steps would not fit in memory; the state
            stays at the last good step, and the error's ``t`` and ``y`` hold
            the steps taken before it.
        Interrupted
            On Ctrl-C, with the steps taken in its ``t`` and ``y``.
        """
        recorder = StepRecorder(self, checks.count("n", n, maximum=NO_LIMIT, accepted="a positive integer up to "
                                                    "2**62 (every step is kept and returned)"))
        status, exc = self._interruptible(self._direction * math.inf, n, recorder)
        t, y = recorder.result()[:2]
        y = self.problem.unflatten(y)
        if status == L.INTERRUPTED:
            raise Interrupted(diagnosis.message(self, status, self._direction * math.inf), t=t, y=y)
        if status not in (L.SUCCESS, L.PAUSED, L.EVENT):
            error = IntegrationError(status, diagnosis.message(self, status, self._direction * math.inf, exc, recorder))
            error.t, error.y = t, y
            raise error from exc
        return t, y

    def advance_to(self, t):
        """Integrate to time ``t`` exactly (the last step is shortened to land there)."""
        t = checks.real("t", t, f"a finite time not behind the current time {self.t} in the direction of "
                        "integration", lambda x: math.isfinite(x) and self._direction * (x - self.t) >= 0)
        self._advance(t, NO_LIMIT, self._no_recording)
        return self.t

    # --- the fixed-timestep clock of a game loop ------------------------------------
    _frames = None       # the FrameClock of run_frame, made at its first call
    _writes = 0          # writes of the state or time from outside, counted

    def run_frame(self, frame_dt, max_substeps=8):
        """Advance by a frame's time in whole fixed steps; return ``alpha`` for :meth:`interpolate`.

        The fixed-timestep loop of games and interactive tools (Glenn
        Fiedler's "Fix your timestep!", Unity's ``FixedUpdate``):
        ``frame_dt`` is added to an :attr:`accumulator`, and the whole steps
        of ``h`` in it are taken, on the grid ``t0 + k h`` -- never the
        shortened step that :meth:`advance_to` ends with.  The rest waits
        for the next frame::

            while running:
                alpha = it.run_frame(seconds_since_last_frame)
                draw(it.interpolate(alpha))

        However the frames fall, ``floor(total frame time / h)`` steps are
        taken or dropped, exactly.  A step that an event cuts (a bounce)
        rejoins the grid and counts as one step.

        Parameters
        ----------
        frame_dt : float
            The time since the last frame, in the problem's time unit: finite and ``>= 0``.
        max_substeps : int
            The most steps one call takes.  A frame that would need more
            drops the whole steps beyond it (reported in :attr:`dropped`
            and :attr:`total_dropped`), so that a slow frame does not make
            the next one slower still (the "spiral of death"); the rest
            below one step stays in the accumulator.

        Returns
        -------
        alpha : float
            The accumulator in steps, in ``[0, 1)``: how far the frame's
            time lies past the last step.  ``0.0`` when a terminal event
            ended the run in this frame: the frame stops at the event
            (:attr:`terminated` is then True, the rest of the frame is not
            stepped, and a further call raises IntegrationError).

        Raises
        ------
        ValueError
            For an adaptive Integrator (``run_frame`` needs a fixed ``h``),
            or a ``frame_dt`` or ``max_substeps`` not accepted.
        IntegrationError, Interrupted
            As :meth:`step`; the steps not taken stay due for the next frame.
        """
        frame_dt = checks.real("frame_dt", frame_dt, "a finite time >= 0 (the time since the last frame)",
                               _finite_and_not_negative)
        if type(max_substeps) is not int or max_substeps < 1:      # (checked fast: a game calls this every frame)
            max_substeps = checks.count("max_substeps", max_substeps)
        frames = self._frames or self._start_frames()
        self._refuse_if_terminated()
        n = frames.add(frame_dt, max_substeps)
        if n:
            self._frame_steps(frames, n)
        else:
            self.last_events = []
        return frames.alpha

    def interpolate(self, alpha):
        """The state to draw at ``alpha`` (from :meth:`run_frame`): ``(1 - alpha) prev + alpha y``.

        ``prev`` is the state before the last step :meth:`run_frame` took
        and ``y`` the current one: what is drawn lags a step behind the
        physics and moves smoothly at any frame rate.  A linear blend rather
        than the method's own interpolant: it evaluates nothing (the
        interpolant needs the last step's stages, or ``f`` at its ends, and
        splitting methods have none), it stays between the two states (a
        ball is not drawn below the floor), and its error, ``O(h^2)``, is
        below what a frame shows.

        A jump in the last step -- an event's affect that changed the state,
        such as a bounce -- is not blended across: before the event's
        place in the step the blend runs from ``prev`` to the state just
        before it, from there on from the state after it to ``y`` (a
        drawn ball then touches the floor).

        Parameters
        ----------
        alpha : float
            In ``[0, 1]``: ``prev`` at 0, ``y`` at 1.

        Returns
        -------
        ndarray
            A new array shaped like :attr:`y`.  The current state itself
            where there is no last step to blend: before the first step of
            :meth:`run_frame`, after a terminal event, or once the state
            was written or stepped by other means since.
        """
        alpha = checks.real("alpha", alpha, "a number in [0, 1] (what run_frame returned)", lambda a: 0 <= a <= 1)
        frames = self._frames
        if frames is None or frames.mark != self._mark():
            state = self._y.copy()
        else:
            state = frames.blend(alpha, self._y)
        return self.problem.unflatten(state[None])[0]

    @property
    def accumulator(self):
        """Frame time :meth:`run_frame` has not stepped yet: ``alpha |h|``, below one step."""
        return 0.0 if self._frames is None else self._frames.alpha * self._frames.h

    @property
    def dropped(self):
        """Time the last :meth:`run_frame` dropped: its whole steps beyond ``max_substeps`` (0.0 if none)."""
        return 0.0 if self._frames is None else self._frames.dropped

    @property
    def total_dropped(self):
        """Time every :meth:`run_frame` so far dropped."""
        return 0.0 if self._frames is None else self._frames.dropped_steps * self._frames.h

    def _start_frames(self):
        """The FrameClock of the first :meth:`run_frame`; refused for an adaptive Integrator."""
        if not isinstance(self.controller, FixedStep):
            raise ValueError(f"run_frame takes whole steps of a fixed h, and this Integrator adapts its steps "
                             f"({type(self.controller).__name__}); accepted: an Integrator made with a fixed "
                             f"step, Integrator(problem, {self.method.name!r}, h=...)")
        self._frames = FrameClock(self.controller.h, self._y)
        return self._frames

    def _mark(self):
        """The run as a step leaves it: changed by any step or write after."""
        return int(self._ist[L.NACCEPT]), self._writes

    def _frame_steps(self, frames, n):
        """Take a frame's ``n`` grid steps, the last one alone, keeping the state before it for :meth:`interpolate`."""
        ist = self._ist
        k, logged = int(ist[L.KSTEP]), int(ist[L.NEVENT])
        try:
            if n > 1:
                self._grid_steps(n - 1)
                if self.terminated:
                    return
            t_prev, first = self.t, int(ist[L.NEVENT])
            frames.start_step(self._y)
            self._grid_steps(1)
            if not self.terminated:
                frames.end_step(t_prev, self.t, self._logged_since(first), self._mark())
        finally:
            if self.terminated:
                frames.stop()
            else:
                frames.refund(n - (int(ist[L.KSTEP]) - k))
            if self._events and n > 1:     # the frame's events, not only those of its last step
                self.last_events = self._events_since(logged)

    def _events_since(self, first):
        """The events logged from entry ``first`` on, as :class:`~odekit.events.EventRecord`."""
        return records(self._state.ev, first, int(self._ist[L.NEVENT]), self.problem) if self._events else []

    def _logged_since(self, first):
        """The (time, state before, state after) of the events logged from entry ``first`` on."""
        last, ev = int(self._ist[L.NEVENT]), self._state.ev
        if last == first:
            return ()
        return zip(ev.log_t[first:last], ev.log_y[2 * first:2 * last:2], ev.log_y[2 * first + 1:2 * last:2])

    def _grid_steps(self, n):
        """Take ``n`` steps of the fixed grid ``t0 + k h``, where events may cut some of them in two."""
        fs, ist = self._fs, self._ist
        t0, k = fs[L.T0], int(ist[L.KSTEP])
        target = t0 + (k + n) * fs[L.H]          # the grid point, computed as the kernel computes it
        try:
            self._advance(target, NO_LIMIT, self._no_recording)
        finally:
            if fs[L.T] == target:   # landing on a target moves the grid's origin there: the grid stays as it was
                fs[L.T0], ist[L.KSTEP] = t0, k + n

    def _advance(self, t_target, pause_after, recorder):
        status, exc = self._interruptible(t_target, pause_after, recorder)
        self._raise_for(status, t_target, exc)

    def _raise_for(self, status, t_target, exc):
        """Interrupted or IntegrationError for a run toward ``t_target`` that ended with ``status``."""
        if status == L.INTERRUPTED:
            raise Interrupted(diagnosis.message(self, status, t_target))
        if status not in (L.SUCCESS, L.PAUSED, L.EVENT):
            raise IntegrationError(status, diagnosis.message(self, status, t_target, exc)) from exc

    def _refuse_if_terminated(self):
        """An IntegrationError once a terminal event ended the run: nothing steps past it."""
        if self.terminated:
            raise IntegrationError(L.EVENT, f"the run ended at t={self.t:.6g} with a terminal event; "
                                   "make a new Integrator to go on")

    _pressed = None      # while a run defers Ctrl-C: the list in which its handler notes them

    def _interruptible(self, t_target, pause_after, recorder):
        """:meth:`_run`, stopped by Ctrl-C between two steps with ``INTERRUPTED``.

        A compiled loop cannot be interrupted: it runs in slices, and Python
        raises the ``KeyboardInterrupt`` as a slice returns, with the run's
        state that of its last step.  Python code can be interrupted
        anywhere, half-way through a step: from its second slice on, a run on
        the Python backend defers a first Ctrl-C to the end of the slice
        (:meth:`_defer_interrupts`); a Ctrl-C before that, or a second one,
        raises a plain ``KeyboardInterrupt`` at once.
        """
        self._refuse_if_terminated()
        logged = int(self._ist[L.NEVENT])
        try:
            status, exc = self._run(t_target, pause_after, recorder)
            self.terminated = status == L.EVENT
            return status, exc
        except KeyboardInterrupt:
            if self._kernels.backend == "python":
                raise
            return L.INTERRUPTED, None
        finally:
            if self._events:
                self.last_events = self._events_since(logged)
            if self._pressed is not None:
                signal.signal(signal.SIGINT, signal.default_int_handler)
                self._pressed = None

    def _defer_interrupts(self):
        """Until the run ends, a first Ctrl-C is only noted (in ``_pressed``); a second one raises.

        Only in the main thread and over Python's own handler: anywhere else
        Ctrl-C goes on as it did.  Not for the first slice, so that short
        runs -- a step per frame of a game -- do not pay for the handler.
        """
        if (self._pressed is not None or threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            return
        pressed = self._pressed = []

        def handler(signum, frame):
            if pressed:
                raise KeyboardInterrupt
            pressed.append(signum)

        signal.signal(signal.SIGINT, handler)

    def _run(self, t_target, pause_after, recorder):
        """Drive the kernel to ``t_target`` or ``pause_after`` steps; return ``(status, exception)``.

        The kernel runs in slices of about ``SLICE_SECONDS``; it keeps all
        its state in the arrays between calls, so the steps are those of one
        uninterrupted call, bit for bit.  The recorder's buffers grow as needed.
        """
        k, ist = self._kernels, self._ist
        self._quick = None                 # the target, recording and slice written here are this run's
        self._aim(t_target, recorder)
        end = int(ist[L.NACCEPT]) + pause_after
        size = self._first_slice
        while True:
            ist[L.PAUSE_AFTER] = min(size, end - int(ist[L.NACCEPT]))
            start = time.perf_counter()
            try:
                # inf and nan are detected and reported by the kernels; as in the
                # compiled backend, NumPy need not warn about them on the way (compiled, it
                # cannot: then the context is skipped, a tenth of a small step() from Python)
                with np.errstate(all="ignore") if k.runs_python else _NOTHING:
                    status = k.drive(self._fns, self._method_data, self._state, self._scratch,
                                     recorder.output())
            except Exception as exc:  # the user's function raised: keep what was computed
                return L.FUNCTION_ERROR, exc
            if self._pressed:
                return L.INTERRUPTED, None
            elapsed = time.perf_counter() - start
            if k.later is not None and k.later.spend(elapsed) and status in (L.PAUSED, L.BUFFER_FULL):
                k = self._go_compiled()
            if status == L.BUFFER_FULL:
                ev = self._state.ev
                if ev is not None and ist[L.NEVENT] + ev.spec.shape[0] > ev.log_t.shape[0]:
                    self._state = self._state._replace(ev=runsetup.larger_log(ev))
                if not recorder.grow(ist):
                    return L.MEMORY_LIMIT, None
            elif status != L.PAUSED or ist[L.NACCEPT] >= end:
                return status, None
            else:
                size = _next_slice(size, elapsed, SLICE_SECONDS)
                if k.backend == "python":
                    self._defer_interrupts()

    # --- solve(): the whole span, recorded ---------------------------------------
    def _aim(self, t_target, recorder):
        """Write the run's target and what ``recorder`` keeps where the loop reads them."""
        self._fs[L.T_END] = t_target
        self._ist[L.RECORD] = recorder.mode
        self._ist[L.SAVE_EVERY] = recorder.every

    def _solve(self, t_eval, dense_output, save_every=1):
        recorder = Recorder(self, t_eval, dense_output, save_every)
        return self._solution(recorder, *self._interruptible(self.problem.t_span[1], NO_LIMIT, recorder))

    def _solution(self, recorder, status, exc):
        """The :class:`Solution` of a run to ``t_end`` that ``recorder`` kept and that ended with ``status``."""
        t1 = self.problem.t_span[1]
        k = self._kernels
        t_out, y_out, dense = recorder.result()
        if status == L.SUCCESS:
            message = f"The solver reached t_end={t1:.6g}."
        else:
            message = diagnosis.message(self, status, t1, exc, recorder)
        note = self._stiffness_note(status, recorder, t_out, y_out)
        if note:
            message = f"{message.rstrip('.')}. {note}"
        sol = Solution(self.problem, self.method, t_out, self.problem.unflatten(y_out),
                       Stats.from_state(self._ist), status, message, k.backend, k.reason, dense, exc,
                       self.last_events, self._events)       # the whole run's, as it ran in one call
        if status == L.INTERRUPTED:
            raise Interrupted(f"{message}; the solution so far is this exception's .solution", solution=sol)
        return sol


def _every_step(recorder):
    """Whether ``recorder`` keeps every step (the stiffness note then reads the steps themselves)."""
    return recorder.mode == L.RECORD_STEPS and recorder.every == 1


def _recent_spread(fs):
    """The spread of a run's recent steps, largest over smallest, from the run state ``fs``: the last whole
    block of steps and the one under way (see :func:`odekit.kernels.driver.keep_spread`); None before a
    whole block."""
    if fs[L.H_HI_DONE] > 0:
        return max(fs[L.H_HI], fs[L.H_HI_DONE]) / min(fs[L.H_LO], fs[L.H_LO_DONE])
    return None


_NOTHING = contextlib.nullcontext()

_STARTS = {}            # (problem's id, method, options) -> [problem, its attributes, the run as it started,
                        # copies made of it], or [problem, None, None, 0] after its first start
STARTS_KEPT = 64        # starts kept, the oldest dropped first
STARTS_SIZE = 2 ** 16   # numbers in the work arrays at most (0.5 MB): a start kept holds a copy of them
# A start copied this often is run by one compiled call from then on (odekit.rerun): that call takes
# Numba a few seconds to compile, once per machine and kind of run, which a problem solved only a few
# times would not win back
RERUN_AFTER = 8


def attributes(problem):
    """What a start read of ``problem``: its attributes as they are now, known by the number of their last
    assignment (see :class:`odekit.problem._Edited`); :func:`same_attributes` compares them."""
    return problem._edit


def same_attributes(problem, kept):
    """Whether no attribute of ``problem`` was assigned since ``kept`` (from :func:`attributes`)."""
    return problem._edit == kept


def _finite_and_not_negative(x):
    return math.isfinite(x) and x >= 0


def _next_slice(size, elapsed, seconds, floor=1):
    """The number of steps in the next slice of a run whose last slice of ``size`` took ``elapsed`` s.

    Aimed at ``seconds``, from ``floor`` up to 64 times the last.
    """
    return int(min(64 * size, max(floor, size * seconds / max(elapsed, 1e-6))))
