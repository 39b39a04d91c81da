"""The run: state, kernels and controller of one integration.

:class:`Integrator` steps a problem in real time -- a game loop, an
interactive page -- with readable and writable time and state (an impulse
such as thrust is a write).  :func:`odekit.solve` is an ``Integrator`` run to
the end of the span with recording switched on.
"""

import contextlib
import copy
import inspect
import math
import os
import signal
import threading
import time
import warnings

import numpy as np

from . import backend as _backend, checks, sparse as _sparse
from .controllers import FixedStep, MethodControl, PIController, StepDoubling
from .kernels import layout as L
from .kernels.evaluation import matrix_finite, store_matrix
from .kernels.interface import MethodData, Output, RunState, no_output
from .registry import method as lookup_method
from .problem import ODEProblem, SecondOrderProblem
from .solution import DenseOutput, Solution, Stats, Status
from .theory.stiffness import STARVING_STEPS, StiffnessWarning, fixed_step_warning, starving_note

NO_LIMIT = 2 ** 62
EPS = np.finfo(float).eps
# A compiled loop cannot be interrupted, so the kernel runs in slices of steps and
# Python, which raises KeyboardInterrupt between them, gets control every SLICE_SECONDS.
# The first slice has to guess: about FIRST_SLICE_WORK numbers of work arrays
# touched, FIRST_SLICE steps at most (a few hundred microseconds compiled).
SLICE_SECONDS = 0.05
FIRST_SLICE = 1024
FIRST_SLICE_WORK = 2 ** 17
# Output buffers of an adaptive run start with START_ROWS rows and double when full;
# any buffer beyond SMALL_BYTES is allocated only while it leaves half the memory free.
START_ROWS = 1025
SMALL_BYTES = 2 ** 26


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

    Warns
    -----
    StiffnessWarning
        With a fixed ``h`` and an explicit method, when ``h`` is beyond the
        method's stability limit for the Jacobian's spectrum at ``t0`` (see
        :func:`odekit.analysis.stiffness`; about 20 evaluations of the
        problem's function, not counted in :attr:`stats`).
    """

    def __init__(self, problem, method="dp54", *, h=None, rtol=1e-6, atol=1e-9, adaptive=None,
                 controller=None, max_steps=None, backend="auto", linear_solver="auto"):
        if not isinstance(problem, (ODEProblem, SecondOrderProblem)):
            raise TypeError("problem must be an ODEProblem or SecondOrderProblem, "
                            f"got {type(problem).__name__}")
        self.problem = problem
        self.method = lookup_method(method)
        refused = self.method.refusal(problem)
        if refused:
            raise ValueError(refused)
        self.controller = _controller(self.method, h, adaptive, controller)
        y = problem.initial_state()
        n = y.size
        self._tol = _tolerances(rtol, atol, n)
        self._ctrl = self.controller.params(self.method)
        self._ctrl[L.C_HAS_JAC] = 0.0 if problem.jac is None else 1.0
        self._ctrl[L.C_AUTONOMOUS] = 1.0 if problem.autonomous else 0.0
        self._ctrl[L.C_NEWTON] = max(1e-3, 20 * EPS / float(self._tol[0].min()))
        self._P = self.method.dense_matrix
        self._method_data = MethodData(self.method.kernel_data(problem.second_order and problem.velocity_dependent),
                                       self._P, self._ctrl, self._tol)
        self.linear_solver = _sparse.linear_solver(linear_solver, problem, self.method.implicit)
        self._scratch = _scratch(self.method, y, problem, self.linear_solver)
        W = self._scratch[0]
        self._y, self._f = W[L.Y], W[L.F]         # the state and f there: rows of the work matrix
        work = W.size + (n * n if self.method.implicit else 0)     # numbers a step touches, roughly
        self._first_slice = max(1, min(FIRST_SLICE, FIRST_SLICE_WORK // work))
        self._fs = np.zeros(L.FS_SIZE)
        self._ist = np.zeros(L.IST_SIZE, dtype=np.int64)
        self._state = RunState(self._fs, self._ist)
        self._no_output = no_output(y.dtype)
        t0, t1 = problem.t_span
        self._direction = 1.0 if t1 > t0 else -1.0
        self._fs[L.T] = self._fs[L.T0] = t0
        self._ist[L.MAX_ACCEPT] = NO_LIMIT if max_steps is None else _at_most_no_limit("max_steps", max_steps)
        self._kernels, code = _backend.prepare(problem, self.method.family, backend,
                                                  (self._method_data, self._scratch), self._first_evaluation)
        if code != L.SUCCESS:
            raise ValueError(_first_evaluation_error(problem, code, t0))
        self._fns = self._kernels.functions(problem.args)
        self._ist[L.HAVE_F] = 1
        if isinstance(self.controller, FixedStep):
            self._fs[L.H] = self._direction * self.controller.h
        elif self.controller.h0 is not None:
            self._fs[L.H] = self._direction * self.controller.h0
        # else H stays 0: the kernel chooses the first step (Hairer's algorithm)
        self._fs[L.ERR_PREV] = 1.0
        if isinstance(self.controller, FixedStep) and not self.method.implicit:
            self._warn_if_unstable()

    def _first_evaluation(self, kernels):
        """f at the initial state (counted), and checks of what the problem's functions give there.

        The checks count no evaluation and leave the run's numbers as they
        are: an in-place function's output starts as a marker it must
        overwrite, and may not receive complex values for a real state; the
        Jacobian, where the method uses it, must fit and be finite; a force
        declared velocity-independent is evaluated once more, uncounted, at
        another velocity (:meth:`_check_velocity_independent`).
        """
        p, t0 = self.problem, self._fs[L.T]
        W, J = self._scratch[0], self._scratch[1]
        self._ist[L.NFEV] = 0        # a second try, on the Python backend, counts afresh
        if p.inplace:
            W[L.F].view(np.uint64)[:] = _UNWRITTEN
        with _refusing_complex_writes(p, W, t0):
            code = kernels.deriv(kernels.rhs, p.args, t0, W, L.Y, L.F, self._ist, self._fs)
        if code == L.NONFINITE and p.inplace and np.any(W[L.F].view(np.uint64) == _UNWRITTEN):
            raise ValueError(_unwritten_error(p, W[L.F], t0))
        if code != L.SUCCESS:
            return code
        if p.jac is not None and self.method.implicit:
            if not kernels.jac(t0, W, L.Y, J, p.args):
                raise ValueError(_jac_shape_error(p, _jac_value(p, t0, W[L.Y]), f"t={t0}"))
            if not matrix_finite(J):
                raise ValueError(f"jac returned non-finite values (inf or nan) at t0={t0} for the initial state")
        if p.second_order and not p.velocity_dependent:
            self._check_velocity_independent(kernels, t0)
        return code

    def _check_velocity_independent(self, kernels, t0):
        """Refuse a force declared velocity-independent that changes with ``v``.

        Splitting methods take such a force at its word and silently drop to
        first order (``a = -x - 2v`` by velocity Verlet at ``h = 0.01``: an
        error of 1.2e-3).  A force that ignores ``v`` returns the very same
        numbers at another velocity; ``2 v0 + pi/3`` differs from ``v0`` in
        every component (and from ``-v0`` unless ``v0 = -pi/9``).  One
        evaluation on a copy of the state: not counted, nothing of the run
        touched.
        """
        W = self._scratch[0]
        n = W.shape[1] // 2
        probe = W[[L.Y, L.F]]
        probe[0, n:] = 2.0 * probe[0, n:] + math.pi / 3
        try:
            fits = kernels.rhs(t0, probe, 0, 1, self.problem.args)
        except Exception as exc:
            exc.add_note("odekit: raised by accel at another velocity, called to check velocity_dependent=False")
            raise
        a0, a1 = W[L.F, n:], probe[1, n:]
        if fits and np.array_equal(a0, a1):
            return
        i = int(np.flatnonzero(a0 != a1)[0]) if fits else 0
        raise ValueError(
            "accel depends on the velocity v, but the problem says velocity_dependent=False: at t0 and x0 it "
            f"gave a[{i}] = {a0[i].item()!r} for v0 and {a1[i].item()!r} for another v (or it is not a "
            "deterministic function of t and x). Declare velocity_dependent=True -- splitting methods that "
            "need velocity-independent forces would lose their order silently")

    def _warn_if_unstable(self):
        """Before a fixed-step explicit run: a StiffnessWarning when ``h`` is beyond the stability limit.

        About 20 evaluations of the problem's function at ``t0`` (see
        :func:`odekit.analysis.stiffness`), made outside the run: not counted in
        :attr:`stats`, and the state of the run is not touched.
        """
        message = fixed_step_warning(self.problem, self.method, self.controller.h, self._kernels.rhs,
                                     self.method.second_order_only, self.t, self._y.copy(), self._f)
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

        if recorder.mode == L.RECORD_STEPS and recorder.every == 1:
            steps, states = np.diff(t_out[-102:]), y_out[-102:]
        else:
            steps, states = np.array([(self.t - self.problem.t_span[0]) / max(1, int(self._ist[L.NACCEPT]))]), None
        return starving_note(self.problem, self.method, self._kernels.rhs, self.method.second_order_only,
                             self.t, self._y.copy(), self.stats, steps, states, self.controller.kind == L.DOUBLING)

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
        self._ist[L.HAVE_F] = 0
        self._ist[L.JAC_REUSE] = 0
        self._fs[L.CARRY_H] = 0.0
        self._fs[L.LU_HG] = 0.0
        self.method.family.restart(self._fs, self._ist)   # e.g. BDF restarts its history at order 1

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
        self._advance(self._direction * math.inf, _at_most_no_limit("n", n), _NoRecording)
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
        recorder = _StepRecorder(self, checks.count("n", n, maximum=NO_LIMIT, accepted="a positive integer up to "
                                                    "2**62 (every step is kept and returned)"))
        status, exc = self._interruptible(self._direction * math.inf, n, recorder)
        t, y = recorder.result()[:2]
        y = self.problem.unflatten(y)
        if status == L.INTERRUPTED:
            raise Interrupted(self._message(status, self._direction * math.inf), t=t, y=y)
        if status not in (L.SUCCESS, L.PAUSED):
            error = IntegrationError(status, self._message(status, self._direction * math.inf, exc, recorder))
            error.t, error.y = t, y
            raise error from exc
        return t, y

    def advance_to(self, t):
        """Integrate to time ``t`` exactly (the last step is shortened to land there)."""
        t = checks.real("t", t, f"a finite time not behind the current time {self.t} in the direction of "
                        "integration", lambda x: math.isfinite(x) and self._direction * (x - self.t) >= 0)
        self._advance(t, NO_LIMIT, _NoRecording)
        return self.t

    def _advance(self, t_target, pause_after, recorder):
        status, exc = self._interruptible(t_target, pause_after, recorder)
        if status == L.INTERRUPTED:
            raise Interrupted(self._message(status, t_target))
        if status not in (L.SUCCESS, L.PAUSED):
            raise IntegrationError(status, self._message(status, t_target, exc)) from exc

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
        try:
            return self._run(t_target, pause_after, recorder)
        except KeyboardInterrupt:
            if self._kernels.backend == "python":
                raise
            return L.INTERRUPTED, None
        finally:
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
        k, fs, ist = self._kernels, self._fs, self._ist
        fs[L.T_END] = t_target
        ist[L.RECORD] = recorder.mode
        ist[L.SAVE_EVERY] = recorder.every
        end = int(ist[L.NACCEPT]) + pause_after
        size = self._first_slice
        while True:
            ist[L.PAUSE_AFTER] = min(size, end - int(ist[L.NACCEPT]))
            start = time.perf_counter()
            try:
                # inf and nan are detected and reported by the kernels; as in the
                # compiled backend, NumPy need not warn about them on the way
                with np.errstate(all="ignore"):
                    status = k.drive(self._fns, self._method_data, self._state, self._scratch,
                                     recorder.output(self._no_output))
            except Exception as exc:  # the user's function raised: keep what was computed
                return L.FUNCTION_ERROR, exc
            if self._pressed:
                return L.INTERRUPTED, None
            if status == L.BUFFER_FULL:
                if not recorder.grow(ist):
                    return L.MEMORY_LIMIT, None
            elif status != L.PAUSED or ist[L.NACCEPT] >= end:
                return status, None
            else:
                size = _next_slice(size, time.perf_counter() - start, SLICE_SECONDS)
                if k.backend == "python":
                    self._defer_interrupts()

    def _message(self, status, t_target, exc=None, recorder=None):
        t, fs, ist = self.t, self._fs, self._ist
        where = f"t={fs[L.T_FAIL]:.6g}"
        what = "the force accel" if self.problem.second_order else "fun"
        if status == L.SUCCESS:
            return f"reached t={t:.6g}"
        if status == L.MAX_STEPS:
            return (f"max_steps={int(ist[L.MAX_ACCEPT])} reached at t={t:.6g} before t_end={t_target:.6g}; "
                    "raise max_steps, loosen the tolerances or use a larger h")
        if status == L.NONFINITE:
            if math.isnan(fs[L.T_FAIL]):
                return (f"the state overflowed to inf or nan in the step from t={t:.6g} with h={self.h:.3g}, "
                        "although every evaluation was finite; the solution may be growing without bound")
            source = self._nonfinite_source(what)
            advice = "check it there" if source == "jac" else "a smaller h or an adaptive method may get through"
            return (f"{source} returned non-finite values (inf or nan) at {where}, in the step from t={t:.6g} "
                    f"with h={self.h:.3g}; {advice}")
        if status == L.BAD_SHAPE:
            return self._bad_return_message(what, where)
        if status == L.NEWTON_FAILED:
            return (f"Newton's method did not converge at {where} (step from t={t:.6g} with "
                    f"h={self.h:.3g}); use a smaller h, adaptive stepping, or supply the exact Jacobian")
        if status == L.FUNCTION_ERROR:
            return f"{self._raiser(exc, what)} raised {type(exc).__name__}: {exc} (in the step from t={t:.6g})"
        if status == L.INTERRUPTED:
            return f"interrupted by Ctrl-C at t={t:.6g} after {int(ist[L.NACCEPT]):,} steps"
        if status == L.MEMORY_LIMIT:
            return recorder.memory_message(t, t_target)
        if status == L.STEP_UNDERFLOW:
            why = {L.NONFINITE: f"; {self._nonfinite_source(what)} returned non-finite values at {where}",
                   L.NEWTON_FAILED: f"; Newton's method failed to converge at {where}"}.get(int(ist[L.LAST_FAIL]), "")
            floor = (f"h_min={self._ctrl[L.C_HMIN]:g}" if self._ctrl[L.C_HMIN] > 0
                     else "the resolution of floating point")
            return (f"step size underflow at t={t:.6g}: the step needed fell below {floor}{why}. "
                    "The solution may be singular there, or the problem stiff (try an implicit method)")
        return f"stopped with status {status}"

    def _nonfinite_source(self, what):
        """Who returned inf or nan: ``jac`` when the Jacobian holds some, else ``what``.

        The kernels check the user's Jacobian as soon as it is taken, so one
        left in ``J`` with inf or nan is what failed.
        """
        jac_used = self.problem.jac is not None and self.method.implicit
        return "jac" if jac_used and not matrix_finite(self._scratch[1]) else what

    def _bad_return_message(self, what, where):
        """The message of BAD_SHAPE: which function returned what, found by calling it once more.

        The kernels only know that a value did not fit.  The problem's
        function is called at the failure's time and the last good state,
        then (if that looks right) ``jac``, which the kernels take at a
        step's start; a call that fails or looks right tells nothing.
        """
        p, t = self.problem, self._fs[L.T_FAIL]
        found = None if p.inplace else self._call_again(p.accel if p.second_order else p.fun, t)
        if found is None and callable(p.jac) and self.method.implicit:
            value = self._call_again(p.jac, t, raw=True)
            if value is not _FAILED and not self._jac_takes(value):
                return _jac_shape_error(p, value, where)
        expected = f"expected an array of shape {p.shape}"
        if found is None:
            return f"{what} returned the wrong number of values at {where}; {expected}"
        kind, phrase, advice = found
        if kind == "shape":
            return f"{what} returned the wrong number of values ({phrase}) at {where}; {expected}"
        return f"{what} returned {phrase} at {where}; {advice}"

    def _jac_takes(self, value):
        """Whether the kernels take ``value`` as the Jacobian: tried on a copy of the run's own."""
        J = self._scratch[1]
        if isinstance(J, np.ndarray):
            return store_matrix(np.empty_like(J), value)
        return copy.copy(J).set(tuple(value) if isinstance(value, list) else value)

    def _call_again(self, fn, t, raw=False):
        """What is wrong with what ``fn`` -- the problem's function or jac -- returns at ``t`` and the current state.

        See :func:`_returned`; None when the call fails or the value is right.
        ``raw``: the value itself, or ``_FAILED``.
        """
        try:
            value = _call(self.problem, fn, t, self._y)
        except Exception:
            return _FAILED if raw else None
        return value if raw else _returned(value, self.problem)

    def _raiser(self, exc, what):
        """Who raised ``exc`` in a run -- the problem's function, ``jac`` or odekit -- from its traceback.

        Compiled functions leave no frame: then it is ``what``, or "``what``
        or jac" when the method calls a jac function too.
        """
        p = self.problem
        jac = p.jac if callable(p.jac) and self.method.implicit else None
        roles = {_code_of(p.accel if p.second_order else p.fun): what}
        if jac is not None:
            roles[_code_of(jac)] = "jac"
        frames = list(_frames(exc.__traceback__))
        for frame in frames:
            if frame.f_code in roles:
                return roles[frame.f_code]
        compiled = not (inspect.isfunction(self._kernels.rhs) and inspect.isfunction(self._kernels.jac))
        if compiled or None in roles:
            return f"{what} or jac" if jac is not None else what
        own = [f.f_code for f in frames if f.f_code.co_filename.startswith(_backend._PACKAGE)]
        return f"odekit ({own[-1].co_qualname}), not {what}," if own else what

    # --- solve(): the whole span, recorded ---------------------------------------
    def _solve(self, t_eval, dense_output, save_every=1):
        t0, t1 = self.problem.t_span
        recorder = _Recorder(self, t_eval, dense_output, save_every)
        status, exc = self._interruptible(t1, NO_LIMIT, recorder)
        k = self._kernels
        t_out, y_out, dense = recorder.result()
        message = self._message(status, t1, exc, recorder)
        if status == L.SUCCESS:
            message = f"The solver reached t_end={t1:.6g}."
        note = self._stiffness_note(status, recorder, t_out, y_out)
        if note:
            message = f"{message.rstrip('.')}. {note}"
        sol = Solution(self.problem, self.method, t_out, self.problem.unflatten(y_out),
                       Stats.from_state(self._ist), status, message, k.backend, k.reason, dense, exc)
        if status == L.INTERRUPTED:
            raise Interrupted(f"{message}; the solution so far is this exception's .solution", solution=sol)
        return sol


# --- recording -----------------------------------------------------------------------

class _NoRecording:
    mode = L.RECORD_NONE
    every = 1

    @staticmethod
    def output(nothing):
        return nothing


class _Recorder:
    """Output buffers that the kernel fills and that grow when full.

    ``rows`` and ``dense_rows`` are the most rows the run can fill (its
    ``max_steps``, and for a fixed step the grid to ``t_end``, bound them).
    A buffer of a fixed-step run is that size from the start when it is
    small enough (:func:`_fits`), and then ends exactly full; the others
    start at ``START_ROWS`` and double, up to that size, while memory lasts.
    """

    def __init__(self, integ, t_eval, dense_output, save_every=1):
        t0, t1 = integ.problem.t_span
        steps = _steps_allowed(integ, NO_LIMIT)
        self.every = save_every
        if t_eval is None:
            self.mode = L.RECORD_STEPS
            self.t_eval = np.zeros(0)
            self.rows = 1 + steps // save_every        # the initial state, then every save_every-th step
        else:
            self.mode = L.RECORD_TEVAL
            self.t_eval = _check_t_eval(t_eval, t0, t1, integ._direction)
            self.rows = max(1, self.t_eval.size)     # written without a check of the size: exact
        own = integ._P.shape[0] > 0 and integ.controller.kind != L.DOUBLING
        self.stages = integ._P.shape[0] if own else 0
        self.dense_rows = 1 + steps if dense_output else 0
        exact = isinstance(integ.controller, FixedStep)
        self._allocate(integ, self.rows if exact or t_eval is not None else min(self.rows, START_ROWS),
                       self.dense_rows if exact else min(self.dense_rows, START_ROWS))
        if self.mode == L.RECORD_STEPS or (self.t_eval.size and self.t_eval[0] == t0):
            self.out_t[0] = t0
            self.out_y[0] = integ._y
            integ._ist[L.NOUT] = 1
            integ._ist[L.TEVAL_NEXT] = 1 if self.mode == L.RECORD_TEVAL else 0
        integ._ist[L.SINCE_SAVE] = 0
        if dense_output:
            self.dense_t[0], self.dense_y[0], self.dense_f[0] = t0, integ._y, integ._f
            integ._ist[L.NDENSE] = 1

    def _allocate(self, integ, cap, dcap):
        """Empty buffers of ``cap`` output and ``dcap`` dense rows; smaller ones if those would not fit."""
        self._integ = integ
        if not _fits(self._bytes(cap, dcap)):         # start small; those that can will grow
            dcap = min(dcap, START_ROWS)
            cap = min(cap, START_ROWS) if self.mode == L.RECORD_STEPS else cap
        n, dtype = integ._y.size, integ._y.dtype
        self.out_t = np.empty(cap)
        self.out_y = np.empty((cap, n), dtype=dtype)
        self.dense_t = np.empty(dcap)
        self.dense_y = np.empty((dcap, n), dtype=dtype)
        self.dense_f = np.empty((dcap, n), dtype=dtype)
        # the stages of step d (from 1) are rows (d - 1) * stages + i
        self.dense_k = np.empty((dcap * self.stages, n), dtype=dtype)

    def _bytes(self, cap, dcap):
        """Bytes of buffers of ``cap`` output and ``dcap`` dense rows."""
        y = self._integ._y
        row = y.size * y.itemsize
        return cap * (8 + row) + dcap * (8 + (2 + self.stages) * row)

    def output(self, nothing=None):
        """The buffers as the loop's :class:`~odekit.kernels.interface.Output` bundle."""
        return Output(self.t_eval, self.out_t, self.out_y, self.dense_t, self.dense_y, self.dense_f, self.dense_k)

    def grow(self, ist):
        """Double whichever buffer is full, keeping its contents; False when memory would not allow it."""
        cap, dcap = self.out_t.shape[0], self.dense_t.shape[0]
        out = self.mode == L.RECORD_STEPS and ist[L.NOUT] >= cap
        dense = dcap and ist[L.NDENSE] >= dcap
        cap = _larger(cap, self.rows) if out else cap
        dcap = _larger(dcap, self.dense_rows) if dense else dcap
        if not _fits(self._bytes(cap, dcap)):
            return False
        try:
            if out:
                self.out_t, self.out_y = _resized_rows(self.out_t, cap), _resized_rows(self.out_y, cap)
            if dense:
                self.dense_t, self.dense_y = _resized_rows(self.dense_t, dcap), _resized_rows(self.dense_y, dcap)
                self.dense_f = _resized_rows(self.dense_f, dcap)
                self.dense_k = _resized_rows(self.dense_k, dcap * self.stages)
        except MemoryError:
            return False
        return True

    ADVICE = "keep every k-th step with save_every=k, or only the states at chosen times with t_eval"

    def memory_message(self, t, t_end):
        """Why the run stopped when its buffers could not grow."""
        size = self._bytes(self.out_t.shape[0], self.dense_t.shape[0]) / 2 ** 20
        dense = "; dense_output keeps every step, whatever save_every says" if self.dense_t.shape[0] else ""
        return (f"the output outgrew the memory at t={t:.6g} before t_end={t_end:.6g}: its buffers hold "
                f"{size:,.0f} MiB ({int(self._integ._ist[L.NOUT]):,} states), and doubling them would leave "
                f"less than half the memory free; {self.ADVICE}{dense}")

    def result(self):
        """``(t, y, dense)``: the recorded rows, and the last state when the run ended between two saved ones."""
        integ = self._integ
        ist = integ._ist
        last = (integ.t, integ._y) if self.mode == L.RECORD_STEPS and ist[L.SINCE_SAVE] else None
        m = int(ist[L.NOUT])
        t = _trimmed(self.out_t, m, None if last is None else last[0])
        y = _trimmed(self.out_y, m, None if last is None else last[1])
        dense = None
        if self.dense_t.shape[0]:
            d = int(ist[L.NDENSE])
            n = self.dense_y.shape[1]
            k = self.dense_k[:max(d - 1, 0) * self.stages].reshape(max(d - 1, 0), self.stages, n)
            dense = DenseOutput(self.dense_t[:d], self.dense_y[:d], self.dense_f[:d], k,
                                integ._P if self.stages else np.zeros((0, 0)))
        return t, y, dense


class _StepRecorder(_Recorder):
    """Every step of a run of ``n`` steps from the current state (no dense output)."""

    ADVICE = "record fewer steps per call"

    def __init__(self, integ, n):
        self.mode = L.RECORD_STEPS
        self.every = 1
        self.t_eval = np.zeros(0)
        self.rows = 1 + _steps_allowed(integ, n)
        self.stages = self.dense_rows = 0
        self._allocate(integ, self.rows, 0)
        self.out_t[0], self.out_y[0] = integ.t, integ._y
        integ._ist[L.NOUT] = 1
        integ._ist[L.SINCE_SAVE] = 0


def _steps_allowed(integ, n):
    """The most steps a run of at most ``n`` can take: ``max_steps``, and a fixed step's grid to ``t_end``.

    The grid counts for a run to ``t_end`` (``n`` is ``NO_LIMIT``) only.
    """
    steps = min(n, int(integ._ist[L.MAX_ACCEPT] - integ._ist[L.NACCEPT]))
    if n == NO_LIMIT and isinstance(integ.controller, FixedStep):
        steps = min(steps, _expected_steps(integ))
    return steps


def _fits(nbytes):
    """Whether output buffers of ``nbytes`` may be allocated: small ones always, others within half the free memory."""
    return nbytes <= SMALL_BYTES or nbytes <= _available_memory() // 2


def _available_memory():
    """Bytes of memory available to new allocations: Linux's MemAvailable, else the physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return NO_LIMIT          # unknown: only a MemoryError stops the growth


def _larger(cap, rows):
    """The next size of a buffer of ``cap`` rows that the run fills to at most ``rows``."""
    return max(cap + 1, min(2 * cap, rows))


def _resized_rows(a, rows):
    """``a`` with ``rows`` rows, the first ones copied."""
    bigger = np.empty((rows,) + a.shape[1:], dtype=a.dtype)
    bigger[:a.shape[0]] = a
    return bigger


def _trimmed(buffer, m, last=None):
    """The first ``m`` rows, then ``last`` if given: a view of the buffer while it has room.

    A view, not a copy: a long run's result comes at once (Ctrl-C answers
    fast), and the buffer's unwritten rows cost no memory -- a large array's
    pages are only mapped when first written to.
    """
    if last is None:
        return buffer[:m]
    if m == buffer.shape[0]:
        buffer = _resized_rows(buffer, m + 1)
    buffer[m] = last
    return buffer[:m + 1]


def _next_slice(size, elapsed, seconds, floor=1):
    """The number of steps in the next slice of a run whose last slice of ``size`` took ``elapsed`` s.

    Aimed at ``seconds``, from ``floor`` up to 64 times the last.
    """
    return int(min(64 * size, max(floor, size * seconds / max(elapsed, 1e-6))))


def _expected_steps(integ):
    """Steps of a fixed-step run from ``t0`` to ``t_end``: the kernel's grid, exactly.

    Needs a step that the grid resolves across the span (``h`` above
    :func:`step_floor`, as :func:`odekit.solve` checks): below it
    ``t0 + k h`` stops changing with ``k`` and the search would not end.
    """
    t0, t1 = integ.problem.t_span
    # the kernel's grid: step k ends at t0 + k h, and the step within 1e-9 h of t1 ends there
    h = integ._direction * integ.controller.h

    def lands(k):
        return integ._direction * ((t0 + k * h) - t1) >= -1e-9 * abs(h)

    k = max(1, int(math.ceil(abs(t1 - t0) / abs(h) * (1 - 1e-9))))
    while not lands(k):
        k += 1
    while k > 1 and lands(k - 1):
        k -= 1
    return k


def step_floor(t_span):
    """The fixed steps a grid across ``t_span`` cannot resolve: those up to this size.

    The kernels stop with ``STEP_UNDERFLOW`` at a step no longer than
    ``10 eps |t|``: near the far end of the span such a step no longer
    tells ``t + h`` from ``t``.
    """
    return 10 * EPS * max(abs(t_span[0]), abs(t_span[1]))


def _check_t_eval(t_eval, t0, t1, direction):
    t_eval = checks.times("t_eval", t_eval)
    if t_eval.ndim != 1:
        raise ValueError(f"t_eval must be one-dimensional, got shape {t_eval.shape}")
    lo, hi = min(t0, t1), max(t0, t1)
    outside = t_eval[(t_eval < lo) | (t_eval > hi)]
    if outside.size:
        raise ValueError(f"t_eval must lie within t_span [{lo}, {hi}]; {outside[0]!r} does not")
    if t_eval.size > 1 and np.any(direction * np.diff(t_eval) < 0):
        order = "increasing" if direction > 0 else "decreasing"
        raise ValueError(f"t_eval must be sorted in the direction of integration ({order})")
    return t_eval


# --- set-up checks -------------------------------------------------------------------

def _controller(method, h, adaptive, controller):
    if controller is not None:
        if h is not None or adaptive is not None:
            raise ValueError("give either controller=... or h/adaptive, not both")
        if not isinstance(controller, (FixedStep, PIController, StepDoubling, MethodControl)):
            raise TypeError("controller must be FixedStep, PIController, StepDoubling or MethodControl, "
                            f"got {type(controller).__name__}")
        self_controlled = method.family.self_controlled
        if isinstance(controller, (PIController, StepDoubling)) and self_controlled:
            raise ValueError(f"method {method.name!r} chooses its own steps and order: use "
                             "controller=MethodControl(...) (or adaptive=True), or a fixed step h")
        if isinstance(controller, MethodControl) and not self_controlled:
            raise ValueError(f"MethodControl is for methods that choose their own steps (bdf, ndf), not "
                             f"{method.name!r}: use PIController or StepDoubling")
        if isinstance(controller, PIController):
            controller.exponent(method)  # raises if the method has no embedded pair
        return controller
    if h is not None:
        h = _step_size(h)
    if adaptive is None:
        adaptive = h is None
    if adaptive is False:
        if h is None:
            raise ValueError("fixed steps need h: give h=... (a positive step size)")
        return FixedStep(h)
    if method.family.self_controlled:
        if adaptive is True:
            return MethodControl(h0=h)
        raise ValueError(f"method {method.name!r} chooses its own steps and order: adaptive must be None, "
                         f"True or False, got {adaptive!r}")
    if adaptive == "doubling":
        return StepDoubling(h0=h)
    if adaptive is True or adaptive == "embedded":
        if not method.adaptive:
            raise ValueError(f"method {method.name!r} has no embedded error estimate to adapt its step: "
                             "give a fixed step h=..., or adaptive='doubling' for step doubling, "
                             "or choose an embedded pair such as 'dp54'")
        return PIController(h0=h)
    raise ValueError(f"adaptive must be None, True, False or 'doubling', got {adaptive!r}")


def _step_size(h, name="h"):
    """A fixed step or first step: positive and finite (its sign follows ``t_span``)."""
    return checks.positive(name, h, "a positive finite step size", "the direction of integration follows t_span")


def _at_most_no_limit(name, n):
    """A count of steps; from ``NO_LIMIT`` on, as good as unlimited (and kept within int64)."""
    return min(checks.count(name, n), NO_LIMIT)


def _tolerances(rtol, atol, n):
    tol = np.empty((2, n))
    tol[0], tol[1] = checks.tolerance("rtol", rtol, n), checks.tolerance("atol", atol, n)
    floor = 100 * EPS
    if tol[0].min() < floor:
        warnings.warn(f"rtol below {floor:.1e} cannot be met in double precision; using {floor:.1e}",
                      stacklevel=_backend.caller_stacklevel())
        tol[0] = np.maximum(tol[0], floor)
    return tol


def _scratch(method, y, problem, solver):
    """The family's work arrays: ``(W, J, LU, piv)``, and what the family needs besides.

    ``W`` is the work matrix, holding ``y`` in row ``Y``; the Jacobian and
    the LU factors exist for implicit methods only -- as objects of
    :mod:`odekit.sparse` when a sparse ``solver`` is chosen.  The family
    adds its own (see :class:`odekit.families.Family`): Radau a second,
    complex, Newton system, BDF a small matrix for rescaling its history.
    """
    n, dtype = y.size, y.dtype
    family = method.family
    W = np.zeros((family.work_rows(method.stages), n), dtype=dtype)
    W[L.Y] = y
    if solver is not None:
        def system(size):
            return _sparse.newton_system(solver, size, dtype)
        J = _sparse.jacobian(problem, n, dtype)
    else:
        def system(size):
            size = size if family.implicit else 0
            return np.zeros((size, size), dtype=dtype), np.zeros(size, dtype=np.int64)
        m = n if family.implicit else 0
        J = np.zeros((m, m), dtype=dtype)
    return (W, J) + system(n) + family.arrays(system, n)


def _first_evaluation_error(problem, code, t0):
    name = "accel" if problem.second_order else "fun"
    if code == L.BAD_SHAPE:
        value = _call(problem, problem.accel if problem.second_order else problem.fun, t0, problem.initial_state())
        _, phrase, advice = _returned(value, problem) or (
            None, "the wrong number of values", f"expected the shape of the state, {problem.shape}")
        return f"{name} returned {phrase} at t0={t0}; {advice}"
    return f"{name} returned non-finite values (inf or nan) at t0={t0} for the initial state"


_FAILED = object()


def _call(problem, fn, t, u):
    """``fn`` -- the problem's function or jac -- at ``t`` and the flat state ``u``, as the kernels call it."""
    if problem.second_order:
        x, v = problem.unflatten(u[None])[0]
        return fn(t, x, v, *problem.args)
    return fn(t, u.reshape(problem.shape), *problem.args)


def _returned(value, problem):
    """What is wrong with a value the problem's function returned: ``(kind, phrase, advice)``, or None.

    The kernels refuse (see :func:`odekit.kernels.evaluation.store`) None,
    the wrong number of values, and complex values for a real state.
    """
    expected = f"expected an array of shape {problem.shape}"
    if value is None:
        return "none", "None", f"{expected} -- is a return statement missing?"
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return "sequence", f"a {type(value).__name__} that makes no array of numbers", expected
    if array.dtype.kind == "c" and _real_state(problem):
        return "complex", "complex values", _complex_advice(problem)
    if array.dtype.kind not in "biufc":
        return "dtype", f"values of dtype {array.dtype}", f"{expected} of numbers"
    if array.size != math.prod(problem.shape):
        return "shape", f"an array of shape {array.shape}", f"expected the shape of the state, {problem.shape}"
    return None


def _real_state(problem):
    return (problem.x0 if problem.second_order else problem.y0).dtype.kind != "c"


def _complex_advice(problem):
    start = "x0 and v0" if problem.second_order else "y0"
    return (f"a real state ({start} real) would lose their imaginary part: give a complex {start} to "
            "integrate in complex numbers, or keep only the real part")


def _is_complex(value):
    """Whether ``value`` (an array, a sparse matrix or a sequence of them) holds complex numbers."""
    if isinstance(value, (tuple, list)) and any(hasattr(a, "dtype") for a in value):
        return any(_is_complex(a) for a in value)
    try:
        return (value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype).kind == "c"
    except (TypeError, ValueError):
        return False


def _jac_value(problem, t, u):
    """The problem's Jacobian at ``t`` and the flat state ``u``: called, or the constant itself."""
    return _call(problem, problem.jac, t, u) if callable(problem.jac) else problem.jac


def _jac_shape_error(problem, value, where):
    """What is wrong with the Jacobian ``value`` the problem gave at ``where`` (``t=...``)."""
    if value is not None and _is_complex(value) and _real_state(problem):
        return f"jac returned complex values at {where}; {_complex_advice(problem)}"
    if problem.second_order:
        n = problem.x0.size
        expected = f"a pair (A_x, A_v) of ({n}, {n}) matrices, the force Jacobians da/dx and da/dv"
        got = [np.shape(a) for a in value] if isinstance(value, (tuple, list)) else np.shape(value)
    else:
        n = problem.y0.size
        expected = f"a ({n}, {n}) matrix"
        got = f"{np.size(value)} values (shape {np.shape(value)})"
    if value is None:
        got = "None (is a return statement missing?)"
    return f"jac returned {got} at {where}; expected {expected}"


# An in-place function's output starts as this quiet NaN, whose payload no arithmetic makes:
# what still holds it was never written (or was read before it was).
_UNWRITTEN = np.uint64(0x7FF8_0DD0_0BAD_F00D)


def _unwritten_error(problem, row, t0):
    """The message for an in-place function that left entries of its output (``row``) unwritten."""
    name = "accel" if problem.second_order else "fun"
    words = row.view(np.uint64).reshape(row.size, -1)         # two words per complex entry
    unwritten = (words == _UNWRITTEN).any(axis=1)[row.size // 2 if problem.second_order else 0:]
    if unwritten.all():
        what = "wrote nothing into its output argument"
    else:
        what = (f"left {int(unwritten.sum())} of {unwritten.size} entries of its output argument unwritten "
                f"(the first at flat index {int(np.flatnonzero(unwritten)[0])})")
    return (f"{name} (inplace=True) {what} at t0={t0}; it must fill every entry in place (out[:] = ...): "
            "a returned result or a rebound name is not stored, and the output's old values are not to be read")


@contextlib.contextmanager
def _refusing_complex_writes(problem, W, t0):
    """An in-place function that writes complex values into a real state: an error, not a lost imaginary part.

    NumPy drops the imaginary part with only a ComplexWarning (compiled, the
    write does not type, and the Python backend runs it).
    """
    if not problem.inplace or W.dtype.kind == "c":
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            yield
        except np.exceptions.ComplexWarning as exc:
            name = "accel" if problem.second_order else "fun"
            raise ValueError(f"{name} (inplace=True) wrote complex values into its output at t0={t0}; "
                             f"{_complex_advice(problem)}") from exc


def _code_of(fn):
    """The code object that a call of ``fn`` runs as Python, or None (compiled, or not found)."""
    if hasattr(fn, "py_func"):        # a Numba dispatcher: no Python frame
        return None
    fn = getattr(fn, "func", fn)      # functools.partial
    code = getattr(fn, "__code__", None)
    return code if code is not None else getattr(getattr(type(fn), "__call__", None), "__code__", None)


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next
