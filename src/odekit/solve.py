"""``solve`` and ``solve_ivp``: integrate a problem over its whole span."""

import dataclasses
import functools
import math
import time

import numpy as np

from . import checks, rerun, sparse as _sparse
from .backend import BACKENDS
from .controllers import FixedStep, known_by_value
from .events import SAMPLES
from .integrator import IntegrationError, Integrator, _next_slice, attributes, same_attributes
from .recording import check_t_eval, step_floor
from .runsetup import controller as _controller, events as _events, step_size as _step_size
from .kernels.layout import INTERRUPTED, IST_SIZE, PAUSED
from .kernels.packing import EXACT
from .registry import method as lookup_method
from .problem import ODEProblem
from .reversible import ReversibleSteps
from .solution import DenseOutput, Solution, Stats, Status

ADAPTIVE_MAX_STEPS = 1_000_000
PROGRESS = "a callable progress(done, total, label)"


def solve(problem, method="dp54", *, h=None, rtol=1e-6, atol=1e-9, adaptive=None, controller=None,
          t_eval=None, dense_output=False, save_every=1, max_steps=None, backend="auto", linear_solver="auto",
          progress=None, events=None, event_samples=SAMPLES, max_events=None, step_control=None):
    """Integrate ``problem`` over its ``t_span`` with ``method``.

    Parameters
    ----------
    problem : ODEProblem or SecondOrderProblem
        Its span has a length and its state at least one number: a problem
        refuses ``t_end == t0`` and an empty state, which in a simulation are
        nearly always a set-up mistake -- an end time never set, an empty
        particle list -- that a "success" would hide (and a span of zero
        length has no direction).  :func:`solve_ivp` accepts both, as SciPy
        does, and returns the initial state.
    method : str or Method
        A registered name or alias; ``odekit.methods()`` lists them.
    h : float, optional
        Fixed step size (positive, at most the length of the span).  With
        ``adaptive`` set, the first step instead.
    rtol, atol : float or array_like
        Tolerances of adaptive control (and of Newton's method for implicit
        methods).  The error of a step is measured against
        ``atol + rtol * |y|``, component-wise, in the RMS norm.
    adaptive : None, bool or "doubling"
        ``None``: fixed steps when ``h`` is given, otherwise the method's
        embedded pair with PI control.  ``"doubling"``: step doubling
        (Richardson), for any method.
    controller : FixedStep, PIController or StepDoubling, optional
        A controller with all its options, instead of ``h``/``adaptive``.
    t_eval : array_like, optional
        Times at which to store the solution (interpolated); by default every
        accepted step is stored.
    dense_output : bool
        Keep what ``sol(t)`` needs to interpolate anywhere in the span (every
        step's data, whatever ``save_every`` says).
    save_every : int
        Store every ``save_every``-th accepted step, and the last: the same
        states as the full run's, in a fraction of its memory.  Not with
        ``t_eval``.
    max_steps : int, optional
        Accepted steps allowed; default unlimited for fixed steps and
        1,000,000 for adaptive ones; any number from ``2**62`` on means
        unlimited.  Reaching it returns the partial solution with
        ``Status.MAX_STEPS``.
    backend : {"auto", "numba", "python"}
        ``auto`` compiles the problem's functions and the whole loop with
        Numba when it can, and otherwise runs the same kernels as Python.
    linear_solver : {"auto", "dense", "splu", "cg", "gmres"} or odekit.sparse.LinearSolver
        How implicit methods solve Newton's linear systems: dense LU
        (compiled); sparse LU, conjugate gradients or GMRES from
        :mod:`scipy.sparse.linalg` (Python backend).  ``auto`` takes sparse
        LU when the Jacobian is sparse (a :mod:`scipy.sparse` ``jac``, a
        ``jac_sparsity`` pattern, force Jacobians of mechanics).
    progress : callable, optional
        ``progress(done, total, label)``, e.g. an
        :class:`odekit.progress.Progress` bar: called about ten times a
        second with the simulated time covered, ``done = |t - t0|`` of
        ``total = |t_end - t0|``, and ``label = "t"``.  The run is the same,
        bit for bit, as without it: the loop pauses between its steps, with
        all its state (step size, controller memory, carried forces) kept.
    events : Event, callable or list of them, optional
        Conditions to watch for (collisions, thresholds), besides the
        problem's own: see :class:`odekit.Event`.  SciPy's event functions,
        with attributes ``terminal`` and ``direction``, are taken as they are.
        The solution's ``events``, ``t_events`` and ``y_events`` say what
        happened; a terminal event ends the run with ``Status.EVENT``.
    event_samples : int
        Points inside each step, besides its end, at which the events' ``g``
        are looked at: a component that changes sign twice between two of
        them is not seen.
    max_events : int, optional
        Stop with ``Status.MAX_EVENTS`` after this many events.
    step_control : ReversibleSteps, optional
        Time-reversible adaptive steps ``h / rho`` for a symmetric splitting
        method (:class:`odekit.reversible.ReversibleSteps`): the energy error
        stays bounded as with fixed steps.  With ``h``, ``max_steps``,
        ``save_every`` and ``backend``.

    Returns
    -------
    Solution
        Always returned, also when the run stops early: ``status``,
        ``success`` and ``message`` say why, and the trajectory computed so
        far is kept.  When an explicit adaptive run starved at its stability
        limit on a stiff problem, the message says so.  The output grows as
        the run goes; one that would take more than half the free memory
        stops with ``Status.MEMORY_LIMIT``, naming ``save_every`` and ``t_eval``.

    Warns
    -----
    StiffnessWarning
        Before a fixed-step run of an explicit method whose ``h`` is beyond
        its stability limit at ``t0``, naming the limit and implicit methods.

    Raises
    ------
    ValueError, TypeError
        For bad input, before anything is computed: the message names the
        argument, its value and what is accepted.  A fixed step too small to
        advance ``t`` across ``t_span`` in floating point is bad input.
    Interrupted
        On Ctrl-C, within about 0.1 s (after the step under way): a
        ``KeyboardInterrupt``, so that a program stops as usual, whose
        ``solution`` holds the steps computed so far (status
        ``Status.INTERRUPTED``).  On the Python backend a Ctrl-C in the
        first slice of a run (its first thousand steps or so), or a second
        one, raises a plain ``KeyboardInterrupt`` at once.

    Notes
    -----
    A problem solved again -- the same problem object, method and options,
    its attributes not reassigned -- is not set up again: its second solve
    keeps its start, the next ones copy it, and after
    :data:`~odekit.integrator.RERUN_AFTER` copies one compiled call
    restores the run as it started, reads ``y0`` afresh, evaluates ``f``
    there and runs the loop (:mod:`odekit.rerun`), with the numbers of a
    first solve, bit for bit.  Not with ``progress``, ``events``, a
    controller of a class other than odekit's own, ``dense_output`` or
    arrays of tolerances.
    """
    solve_key = None
    if progress is None and events is None and known_by_value(controller) and step_control is None and \
            dense_output is False:
        # solved again with the same arguments: one compiled call (see odekit.rerun)
        solve_key = rerun.key(problem, method, t_eval, backend, linear_solver, h, rtol, atol, adaptive, save_every,
                              max_steps, event_samples, max_events, controller)
        sol = rerun.rerun(solve_key, problem)
        if sol is not None:
            return sol
    if step_control is not None:
        return _reversible(problem, method, step_control, h, max_steps, save_every, backend,
                           dict(adaptive=(adaptive, None), controller=(controller, None), t_eval=(t_eval, None),
                                dense_output=(dense_output, False), progress=(progress, None), events=(events, None),
                                rtol=(rtol, 1e-6), atol=(atol, 1e-9), linear_solver=(linear_solver, "auto"),
                                event_samples=(event_samples, SAMPLES), max_events=(max_events, None)))
    save_every = checks.count("save_every", save_every)
    if save_every > 1 and t_eval is not None:
        raise ValueError(f"save_every={save_every} thins the stored steps, and t_eval stores chosen times "
                         "instead of steps: give one or the other")
    checks.callable_or_none("progress", progress, PROGRESS)
    dense_output = checks.flag("dense_output", dense_output)
    options = run_options(problem, h=h, rtol=rtol, atol=atol, adaptive=adaptive, controller=controller,
                          backend=backend, linear_solver=linear_solver, events=events, event_samples=event_samples,
                          max_events=max_events, max_steps=max_steps)
    if isinstance(problem, _Trivial):
        return _nothing_to_integrate(problem, method, t_eval, dense_output, **options)
    if progress is not None:
        return _Reporting(problem, method, progress, **options)._solve(t_eval, dense_output, save_every)
    often = None if solve_key is None else functools.partial(rerun.keep, solve_key, t_eval=t_eval,
                                                             save_every=save_every)
    return _Run._started(problem, method, options, often)._solve(t_eval, dense_output, save_every)


def prepare(problem, method="dp54", *, h=None, rtol=1e-6, atol=1e-9, adaptive=None, controller=None, t_eval=None,
            save_every=1, max_steps=None, backend="auto", linear_solver="auto"):
    """A solve of ``problem`` with ``method`` made once, as a call that returns ``(t, y)``.

    For a program that solves one small problem thousands of times -- an
    optimizer, a fit, a controller's model -- and wants only the numbers:
    each call, ``run()``, ``run(y0)`` or ``run(y0, args)``, solves from the
    problem's state and with its ``args`` as they are then (``y0`` is
    written into ``problem.y0``, or ``x0`` and ``v0``, in place first;
    ``args`` become ``problem.args``) and returns what :func:`solve` would
    hold in ``Solution.t`` and ``Solution.y``, bit for bit.  A compiled run
    that simply succeeds is one call of compiled code with no
    :class:`Solution` made around it: over three steps of Kepler's orbit
    2.3 us against :func:`solve`'s 3.8 (see benchmarks/README.md, *A small
    solve*).

    Parameters
    ----------
    problem, method, h, rtol, atol, adaptive, controller, t_eval, save_every, max_steps, backend, linear_solver
        As for :func:`solve`, and checked as it checks them: ``prepare``
        solves once.

    Returns
    -------
    Prepared
        ``run()``, ``run(y0)``, ``run(y0, args)`` and ``run(args=args)``
        return ``(t, y)``.  A run that fails raises
        :class:`IntegrationError` (its ``status`` and message, and in ``t``
        and ``y`` what was computed before the failure); Ctrl-C raises
        :class:`Interrupted`, as :func:`solve` does (its ``solution`` holds
        what was computed).

    Notes
    -----
    The one-call path needs what :func:`solve`'s repeated solves need (the
    compiled backend, odekit's controllers, scalar tolerances, numbers for
    ``args``, a small system, and a problem whose attributes are not
    reassigned after ``prepare`` -- arrays written in place are read at each
    call); otherwise, and for a run that warns, notes stiffness, fails or
    goes on past its loop's first slice (thousands of steps, where a call's
    fixed cost no longer shows), a call solves as :func:`solve` does.
    """
    options = dict(h=h, rtol=rtol, atol=atol, adaptive=adaptive, controller=controller, t_eval=t_eval,
                   save_every=save_every, max_steps=max_steps, backend=backend, linear_solver=linear_solver)
    solve(problem, method, **options)                       # every argument checked, as solve() checks it
    return Prepared(problem, method, options)


class Prepared(functools.partial):
    """A solve made once and run by each call; see :func:`prepare`.

    ``run(y0=None, args=None)`` returns ``(t, y)``.  ``y0`` has the shape of
    one state (``Solution.y[0]``: ``(2, *x0.shape)`` for a second-order
    problem) or is that state flat; it is written into the problem's state
    arrays first.  Checking and writing it adds about 2 us to a call; a
    program that writes the problem's arrays itself does not pay that.
    ``args``, as many numbers as the problem's ``args`` and of their kinds,
    become its ``args`` (assigned): the first call given them compiles a
    call that reads them from arrays (once per machine and family,
    announced), and every call from then on runs that one.

    A partial of one function: the compiled run's call
    (:meth:`odekit.rerun.Rerun.caller`), or without one a solve each call.
    Python calls a class's ``__call__`` through a method it binds at each
    call: as such a class, with the run's call a method of its own, a
    prepared call of three steps of Kepler's orbit took 2.84 us; as a
    partial (called by C) of one function that reads each attribute once,
    2.51 (alternating, best of three).
    """

    def __new__(cls, problem, method, options):
        plan = _Plan(problem, method, options)
        self = super().__new__(cls, plan.call)
        self._plan = plan
        return self

    problem = property(lambda self: self._plan.problem, doc="The problem solved (its state and args as at each call).")
    method = property(lambda self: self._plan.method, doc="The method, as given to :func:`prepare`.")
    _rerun = property(lambda self: self._plan.rerun)

    def __repr__(self):
        fast = "one compiled call" if self._rerun is not None else "solve() each call"
        name = getattr(self.problem, "name", None) or type(self.problem).__name__
        return f"Prepared({name}, {self.method!r}: {fast})"

    def __reduce__(self):
        raise TypeError("a Prepared solve holds compiled code and cannot be pickled; prepare it again where needed")


class _Plan:
    """What a :class:`Prepared` solve holds: the problem, method and options, the run it repeats (a
    :class:`~odekit.rerun.Rerun`, or None) and the call made of it."""

    def __init__(self, problem, method, options):
        self.problem, self.method, self._options = problem, method, options
        run = {name: value for name, value in options.items() if name not in ("t_eval", "save_every")}
        run = run_options(problem, **run)
        start = Integrator(problem, method, **run)             # compiled now, not at the first call
        self.rerun = (rerun.Rerun.made(start, options["t_eval"], checks.count("save_every", options["save_every"]))
                      if start._keepable(run) else None)
        self.call = self.otherwise if self.rerun is None else self.rerun.caller(self.otherwise)

    def otherwise(self, y0=None, args=None):
        """A call that the compiled run does not make alone (see :class:`Prepared`): ``y0`` or ``args`` given
        (written, then run), a run that does not simply succeed, or none compiled: a solve, whose failure
        raises."""
        if y0 is not None or args is not None:
            if y0 is not None:
                self._write(y0)
            if args is not None:
                self._assign(args)
            if self.rerun is not None:
                return self.call()
        sol = solve(self.problem, self.method, **self._options)
        if not sol.success:
            error = IntegrationError(sol.status, sol.message)
            error.t, error.y = sol.t, sol.y
            raise error
        return sol.t, sol.y

    def _assign(self, args):
        """``args`` as the problem's ``args``, and into the arrays the compiled call reads them from."""
        problem, old = self.problem, self.problem.args
        new = tuple(args) if isinstance(args, (tuple, list)) else None
        if new is None or len(new) != len(old) or not all(map(_fits, new, old)):
            kinds = ", ".join(type(a).__name__ for a in old)
            raise ValueError(f"args must be {len(old)} numbers of the kinds of the problem's args ({kinds}) in a "
                             f"tuple or list, an int within +-2**53; got {args!r}")
        made, before = self.rerun, attributes(problem)
        # the call may take the new args only if nothing else was assigned since it was made (else solve() runs)
        current = made is not None and not made.judged and same_attributes(problem, made.attributes)
        problem.args = tuple([type(o)(n) for n, o in zip(new, old)])   # the problem's own types, as compiled
        if self._layout[0] == before:               # (the state's layout, which args do not change)
            self._layout = attributes(problem), self._layout[1]
        if not current:
            return
        if made.args_in is None:                    # the first call given args: a call that reads them
            made.read_args()                        # (from problem.args as they are now)
            return
        for array, value in zip(made.args_in, problem.args):
            array[0] = value
        made.attributes = attributes(problem)       # the call reads these args: still the problem's own

    _layout = (None, None)      # (the problem's attributes, and its state arrays, state shape and size)

    def _write(self, y0):
        """``y0`` into the problem's own state arrays, in place (as a user may write them)."""
        edit, layout = self._layout
        if edit is None or not same_attributes(self.problem, edit):   # (kept: made anew, 0.4 of a 1.9 us write)
            arrays = self.problem.state_arrays()
            size = sum(a.size for a in arrays)
            layout = arrays, self.problem.unflatten(np.empty((1, size)))[0].shape, size
            self._layout = attributes(self.problem), layout
        arrays, state, size = layout
        value = y0 if type(y0) is np.ndarray else np.asarray(y0)
        dtype = arrays[0].dtype
        if (value.shape != state and value.shape != (size,)) or (value.dtype is not dtype and
                                                                  not np.can_cast(value.dtype, dtype, "same_kind")):
            raise ValueError(f"y0 must be one state of the problem, shaped {state} as Solution.y[0] or its "
                             f"{size} numbers flat, of {dtype}; got {value.dtype} of shape {value.shape}")
        flat = value.reshape(size)
        # (for a few real numbers math.isfinite on a list takes 0.3 us, NumPy's isfinite and all 1.25)
        if not (all(map(math.isfinite, flat.tolist())) if size <= 64 and flat.dtype.kind != "c"
                else np.isfinite(flat).all()):
            bad = np.flatnonzero(~np.isfinite(flat))
            raise ValueError(f"y0 must be finite; its entry {int(bad[0])} (flat) is {flat[bad[0]]}")
        k = 0
        for a in arrays:
            if a.ndim == 1:
                a[:] = flat[k:k + a.size]
            else:
                a[...] = flat[k:k + a.size].reshape(a.shape)
            k += a.size


# the numbers that may stand for an arg of each type (converted to it: the compiled code's type)
_STAND_FOR = {int: (int, np.integer), float: (int, float, np.integer, np.floating),
              complex: (int, float, complex, np.number), bool: (bool, np.bool_)}


def _fits(new, old):
    """Whether the number ``new`` may stand for the arg ``old``: of its kind, an int no larger than a float
    holds exactly (as the compiled loop may take it, see :mod:`odekit.kernels.packing`)."""
    if isinstance(new, (bool, np.bool_)) and type(old) is not bool:
        return False
    return isinstance(new, _STAND_FOR.get(type(old), ())) and (type(old) is not int or abs(int(new)) <= EXACT)


def _reversible(problem, method, step_control, h, max_steps, save_every, backend, others):
    """A run of :class:`~odekit.reversible.ReversibleSteps`, the options it cannot take refused."""
    if not isinstance(step_control, ReversibleSteps):
        raise checks.fail("step_control", "a ReversibleSteps or None", step_control)
    for name, (value, default) in others.items():   # (what was given, the default that means "not given")
        if not (value is default or (isinstance(value, (int, float, str)) and value == default)):
            raise ValueError(f"{name}={value!r} cannot be given with step_control=ReversibleSteps(...), which "
                             "takes h, max_steps, save_every and backend")
    if h is None:
        raise ValueError("step_control=ReversibleSteps(...) needs h, the step where its control variable is 1")
    return step_control.solve(problem, method, h, max_steps=max_steps, save_every=save_every, backend=backend)


def run_options(problem, *, h=None, adaptive=None, controller=None, max_steps=None, **options):
    """The :class:`Integrator` options of a run over ``problem``'s whole span, its step checked against the span.

    A fixed step (or first step) may not exceed the span, nor be too small
    to advance ``t`` across it in floating point; ``max_steps`` defaults to
    unlimited for fixed steps and ``ADAPTIVE_MAX_STEPS`` for adaptive ones.
    The other options are passed on as they are.
    """
    step, name = (controller.h, "controller.h") if isinstance(controller, FixedStep) else (h, "h")
    if step is not None and hasattr(problem, "t_span"):
        _within_span(step, name, problem)
        floor = step_floor(problem.t_span)
        if _fixed(h, adaptive, controller) and _step_size(step, name) <= floor:
            t_span = tuple(map(float, problem.t_span))
            raise ValueError(f"{name}={float(step)!r} is too small to advance t in floating point across "
                             f"t_span={t_span}: a step there must exceed 10 eps max(|t0|, |t_end|) = "
                             f"{floor:.3g}; accepted: {name} > {floor:.3g}")
    return dict(options, h=h, adaptive=adaptive, controller=controller,
                max_steps=_default_max_steps(max_steps, h, adaptive, controller))


class _Run(Integrator):
    """A solve's :class:`Integrator`: with ``backend="auto"``, a first run whose loop is not compiled yet
    starts on Python (see :func:`odekit.backend.prepare`), so that a short one does not wait for Numba."""

    _lazy = True


class _Reporting(_Run):
    """An :class:`Integrator` whose recorded run pauses now and then to report progress.

    The kernel stops with ``PAUSED`` after a requested number of accepted
    steps, leaving the run's whole state in its arrays, and the next call
    goes on from there: the steps taken are those of one uninterrupted call.
    The number of steps between reports adapts so that a report comes about
    every ``INTERVAL`` seconds -- a pause costs one return from the compiled
    loop and one call back into it, nothing next to an interval's steps.
    """

    FIRST_CHUNK = 256
    INTERVAL = 0.1

    def __init__(self, problem, method, progress, **options):
        super().__init__(problem, method, **options)
        self._progress = progress

    def _run(self, t_target, pause_after, recorder):
        t0 = self.problem.t_span[0]
        total = abs(t_target - t0)
        chunk = self.FIRST_CHUNK
        while True:
            start = time.perf_counter()
            status, exc = super()._run(t_target, min(chunk, pause_after), recorder)
            if self.backend == "python":
                # from the first report on, as Integrator._run does from its second slice:
                # a chunk of slow steps may be a single slice, which would never defer Ctrl-C
                self._defer_interrupts()
            self._progress(min(abs(self.t - t0), total), total, "t")
            if self._pressed:                   # Ctrl-C while the progress was reported
                return INTERRUPTED, None
            if status != PAUSED or pause_after <= chunk:
                return status, exc
            pause_after -= chunk
            chunk = _next_slice(chunk, time.perf_counter() - start, self.INTERVAL, self.FIRST_CHUNK)


def _within_span(step, name, problem):
    """Refuse a step (``h``, ``controller.h``, ``first_step``) longer than the problem's span.

    A span of zero length (solve_ivp's, with nothing to integrate) takes no
    step, and so none is too long for it.
    """
    span = abs(problem.t_span[1] - problem.t_span[0])
    if _step_size(step, name) > span > 0:
        raise ValueError(f"{name}={step!r} is larger than the span |t_end - t0| = {span!r}; "
                         f"accepted: 0 < {name} <= {span!r}")


def _default_max_steps(max_steps, h, adaptive, controller):
    if max_steps is not None:
        return max_steps
    return None if _fixed(h, adaptive, controller) else ADAPTIVE_MAX_STEPS


def _fixed(h, adaptive, controller):
    """Whether these options ask for a fixed step."""
    return isinstance(controller, FixedStep) or (controller is None and h is not None and not adaptive)


def solve_ivp(fun, t_span, y0, method="dp54", *, args=(), jac=None, jac_sparsity=None, first_step=None,
              max_step=math.inf, **options):
    """SciPy-style entry point: ``solve_ivp(fun, t_span, y0, method, ...)``.

    Builds an :class:`ODEProblem` from ``fun(t, y, *args)`` (with ``jac`` or
    ``jac_sparsity``) and calls :func:`solve` with the remaining options
    (``h``, ``rtol``, ``atol``, ``t_eval``, ``dense_output``,
    ``linear_solver``, ...).  SciPy's method names are aliases: ``"RK45"`` is
    ``dp54``, ``"RK23"`` is ``bs32``, ``"DOP853"`` is ``dop853``, ``"Radau"``
    is ``radau5``, ``"BDF"`` is ``bdf``; ``"LSODA"`` has no equivalent and is
    refused with advice.

    ``first_step`` and ``max_step`` are SciPy's names for the first step and
    the largest step of the adaptive controller (``h0`` and ``h_max`` of
    :class:`PIController`, :class:`StepDoubling` or :class:`MethodControl`):
    no step, the first included, is longer than ``max_step``.  They apply to
    adaptive runs only, so they cannot be given with ``h``, ``controller``
    or ``adaptive=False``.

    The result is odekit's :class:`Solution`, not SciPy's: ``sol.y`` is
    time-major, so the final state is ``sol.y[-1]`` (SciPy: ``sol.y[:,
    -1]``), and the counts are in ``sol.stats`` (``sol.stats.nfev``).

    With nothing to integrate -- a span of zero length (``t_end == t0``) or
    an empty ``y0`` -- the result is SciPy's trivial success: ``t = [t0,
    t_end]`` with ``y0`` at both (``sol.y`` of shape ``(2, 0)`` for an empty
    state), or ``t = t_eval`` with ``y0`` at each time (where SciPy returns
    no point on a span of zero length), and ``sol(t)`` gives ``y0`` within
    the span.  The options are checked as for a run, but nothing is
    evaluated: ``nfev`` is 0 (SciPy's solvers evaluate ``fun`` once as they
    start).  :func:`solve` and :class:`Integrator` refuse both inputs; see
    :func:`solve` for why.
    """
    problem = _problem(fun, t_span, y0, args=args, jac=jac, jac_sparsity=jac_sparsity)
    max_step = checks.real("max_step", max_step, "a positive number (inf: no limit)", lambda x: x > 0)
    if first_step is not None or max_step < math.inf:
        options = _adaptive_steps(problem, lookup_method(method), first_step, max_step, options)
    return solve(problem, method, **options)


def _adaptive_steps(problem, method, first_step, max_step, options):
    """SciPy's ``first_step`` and ``max_step`` as odekit's adaptive controller, in ``options``."""
    given = [name for name in ("h", "controller") if options.get(name) is not None]
    if given or options.get("adaptive") is False:
        clash = f"{given[0]}=..." if given else "adaptive=False"
        raise ValueError(f"first_step and max_step set the steps of an adaptive run; give them or {clash}, "
                         "not both")
    if first_step is not None:
        _within_span(first_step, "first_step", problem)
    adaptive = options.pop("adaptive", None)
    controller = _controller(method, first_step, True if adaptive is None else adaptive, None)
    return dict(options, controller=dataclasses.replace(controller, h_max=max_step))


# --- solve_ivp with nothing to integrate, as SciPy allows -----------------------------

class _Trivial(ODEProblem):
    """solve_ivp's problem with nothing to integrate: a span of zero length or an empty ``y0``."""

    _trivial = True


def _problem(fun, t_span, y0, **options):
    """solve_ivp's problem: an :class:`ODEProblem`, or a :class:`_Trivial` one with nothing to integrate."""
    problem = _Trivial(fun, t_span, y0, **options)           # every check but those two
    if problem.t_span[0] != problem.t_span[1] and problem.size:
        return ODEProblem(fun, t_span, y0, **options)
    return problem


def _nothing_to_integrate(problem, method, t_eval, dense_output, *, h, rtol, atol, adaptive, controller,
                          max_steps, backend, linear_solver, events, event_samples, max_events):
    """SciPy's trivial success: ``y0`` at both ends of the span, or at each of ``t_eval``.

    The options are checked as :class:`Integrator` checks them (the events'
    functions called once at ``t0``, as SciPy calls them); nothing is
    integrated and nothing compiled.
    """
    m = lookup_method(method)
    refused = m.refusal(problem)
    if refused:
        raise ValueError(refused)
    _controller(m, h, adaptive, controller)
    checks.tolerance("rtol", rtol, problem.size)
    checks.tolerance("atol", atol, problem.size)
    if max_steps is not None:
        checks.count("max_steps", max_steps)
    checks.choice("backend", backend, BACKENDS, f"one of {', '.join(BACKENDS)}")
    _sparse.linear_solver(linear_solver, problem, m.implicit)
    run_events = _events(problem, events, event_samples, max_events, problem.initial_state())[0]
    t0, t1 = problem.t_span
    t = np.array([t0, t1]) if t_eval is None else check_t_eval(t_eval, t0, t1, 1.0 if t1 >= t0 else -1.0)
    ends = np.repeat(problem.initial_state()[None], 2, axis=0)
    # one step without stages (Hermite's): it has no values, or no length and interpolates y0 alone
    dense = DenseOutput(np.array([t0, t1]), ends, np.zeros_like(ends), np.zeros((1, 0, problem.size)),
                        np.zeros((0, 0))) if dense_output else None
    why = "the span has zero length" if t0 == t1 else "the state is empty"
    return Solution(problem, m, t, problem.unflatten(np.repeat(ends[:1], len(t), axis=0)),
                    Stats.from_state(np.zeros(IST_SIZE, dtype=np.int64)), Status.SUCCESS,
                    f"The solver reached t_end={t1:.6g}: nothing to integrate, {why}.", "python",
                    "" if backend == "python" else f"nothing was run: {why}", dense, event_list=run_events)
