"""The integration loop shared by every family and controller.

``make_drive(step, deriv, scale_by_new)`` returns the loop for one family: its
stepper ``step`` and derivative ``deriv`` are fixed when the loop is made, so
the compiled loop calls them directly (Numba inlines them) and only the user's
functions are called through a pointer.  The loop advances the run held in
``fs``, ``ist`` and the work matrix ``W`` (rows in :mod:`.layout`) until
``fs[T_END]``, a step limit, a full output buffer or a failure, writing its
progress into those arrays at every accepted step, and returns a status code.
"""

import numpy as np

from . import borrowed, held, jitable
from .control import accepted, initial_step, rejected
from .dense import interpolate
from .events import EPS, Y_AFTER, Y_BEFORE, prime, same_row, search
from .layout import (
    BAD_SHAPE, BUFFER_FULL, C_EXPONENT, C_FMAX, C_HMAX, C_HMIN, C_KIND, C_ORDER,
    CARRY_H, DOUBLING, ERR, EV_READY, F, FHALF, FIXED, FNEW, H, H_HI, H_HI_DONE, H_LO, H_LO_DONE, HAVE_F,
    JAC_NONFINITE, JAC_REUSE, KSTEP,
    LAST_FAIL, LU_HG,
    MAX_ACCEPT, MAX_STEPS, NACCEPT, NDENSE, NONFINITE, NOUT, NREJECT, PAUSE_AFTER,
    PAUSED, RECORD, RECORD_STEPS, RECORD_TEVAL, SAVE_EVERY, SINCE_SAVE, STAGE, STEP_ERR, STEP_UNDERFLOW,
    SUCCESS, T, T0,
    T_END, TEVAL_NEXT, Y, YFULL, YHALF, YNEW,
)
from .primitives import copy_row, error_norm, scaled_difference, zero_row

SHRINK_ON_FAILURE = 0.25     # step factor after a non-finite value or a Newton failure
ROUNDING_ULPS = 10.0         # two times this many ulps apart (of the larger) differ by rounding alone


@jitable
def within_rounding(a, b):
    """Whether the times ``a`` and ``b`` differ by rounding alone: ``ROUNDING_ULPS`` ulps of the larger."""
    return abs(a - b) <= ROUNDING_ULPS * EPS * max(abs(a), abs(b))


@jitable
def forget(fs, ist, jumped):
    """Drop what holds only where the run was: f there, the events' g, what a step carries to the next.

    After an event cut a step short, and (from Python) after the state was
    written from outside.  ``jumped``: the state itself changed, so the
    Jacobian and its factors no longer hold either.  A family's own memory
    is its ``restart``'s to drop.
    """
    ist[HAVE_F] = 0
    ist[EV_READY] = 0
    fs[CARRY_H] = 0.0
    if jumped:
        ist[JAC_REUSE] = 0
        fs[LU_HG] = 0.0


SPREAD_BLOCK = 64           # accepted steps per block of keep_spread
SPREAD_START = 16           # ... the first of which, where the controller grows its first guess, are left out


@jitable
def keep_spread(fs, count, h, counted):
    """Keep the range of the accepted step sizes, by blocks of ``SPREAD_BLOCK``: the ``count``-th step, of size
    ``h``; ``counted`` False leaves a step out of the range (one cut to t_end, one after a rejection), as
    are a run's first ``SPREAD_START``.

    What a run with only ``t_eval`` kept tells about its recent steps: an
    explicit method starving on a stiff problem takes steps of nearly one
    size, and a run whose steps spread widely needs no estimate of its
    spectrum to be cleared (:func:`odekit.theory.stiffness.starving_note`).
    A compare and two bounds a step.
    """
    if count % SPREAD_BLOCK == 0:
        fs[H_LO_DONE] = fs[H_LO]
        fs[H_HI_DONE] = fs[H_HI]
        fs[H_LO] = np.inf
        fs[H_HI] = 0.0
    if counted and count >= SPREAD_START:
        a = abs(h)
        fs[H_LO] = min(fs[H_LO], a)
        fs[H_HI] = max(fs[H_HI], a)


@jitable
def keeps_nothing(fs, ist):
    """The ``restart`` of a family without private memory beyond the shared slots."""


@jitable
def extends_nothing(rhs, args, m, scratch, t, h, y, ist, fs):
    """The ``extend`` of a family whose interpolant needs no evaluations beyond its step's."""
    return SUCCESS


def make_drive(step, deriv, restart, scale_by_new=False, events=False, extend=extends_nothing, measures_error=False,
               plain=False, hold=False):
    """The integration loop of the family whose stepper is ``step`` (and ``restart`` its memory's reset).

    ``extend(rhs, args, m, scratch, t, h, y, ist, fs) -> code`` evaluates
    what the method's own interpolant needs beyond the step's stages (the
    interpolation stages of DOP853), once the step is accepted and only when
    its interpolant is used.

    A step's error is measured against ``atol + rtol max(|y|, |y_new|)``, or
    with ``scale_by_new`` against ``atol + rtol |y_new|`` (see
    :class:`odekit.families.Family`).  ``events``: the loop searches the
    run's events.  A constant of the closure, so that Numba prunes the search
    from the loops of runs without events before it types them: compiled
    into every loop, it made a first compile a third to a half longer
    (CPU seconds, empty cache: dp54 13.5 without it, 20.2 with it; rodas4
    27.4 and 37.2).  ``measures_error``: the stepper leaves the attempt's
    error norm in ``fs[STEP_ERR]`` (a self-controlled family, which measured
    it for its own choice), and the loop does not measure it again; a
    constant too -- as a branch on the controller's kind, compiled into
    every loop, it made the explicit pairs' loop 15 % slower.  ``plain``:
    the loop of runs that neither double their steps nor keep interpolants
    (dense output), both pruned, as a repeated solve's call runs them
    (:mod:`odekit.rerun`): a constant too, whose smaller loop starts a short
    run sooner (Kepler over three steps of ``dp54``, the prepared call:
    2.52 -> 2.33 us) -- for the families that run it
    (``Family.plain_reruns``: the Rosenbrock family's ran slower).
    ``hold``: the work matrix's fields are :func:`~odekit.kernels.held` by
    the loop (the implicit families': with the Newton and Rosenbrock
    solves' substitution reordered, ``bdf`` on HIRES at rtol 7.5e-10 423 ->
    384 us, ``rodas4`` at 1e-3 66 -> 59, ``radau5`` at 1e-7 711 -> 660,
    alternating; held in the explicit pairs' loop too, a small solve took
    3 % longer).
    """
    scale = YNEW if scale_by_new else Y

    def drive(fns, data, run, scratch, out):
        """Integrate until ``fs[T_END]`` or an earlier stop; return a status code.

        The arguments are the bundles of :mod:`.interface`.  Output goes to
        ``out.t, out.y`` as ``ist[RECORD]`` asks: nothing, every
        ``ist[SAVE_EVERY]``-th accepted step, or the interpolated state at each
        ``out.t_eval``.  With ``out.dense_t`` non-empty, every step's end point
        (and, for a method with its own interpolant, its stages, row
        ``(d - 1) * stages + i`` of ``dense_k``) is kept for ``Solution.sol``.
        Events (``run.ev``, see :mod:`.events`) are searched on each accepted
        step; one whose affect changes the state, or that stops the run, ends
        the step there.  A run without events passes None for ``run.ev`` and
        for the functions ``g`` and ``affect``, which its loop never names
        outside code pruned with ``events``.
        """
        # The caller keeps every array alive for the whole call: borrowed, they
        # cost no reference counting in the loop (see kernels.borrowed).
        scratch = borrowed(scratch)              # each family's own work arrays; W first
        if hold:
            scratch = (held(scratch[0]),) + scratch[1:]
        W = scratch[0]
        rhs, jac, args, g, affect = fns
        # the user's args too: an array among them was counted at every call of rhs, about 50 ns a
        # velocity_verlet step of the zoo's N-body force (108 against 60 ns with a force that writes zeros)
        args = borrowed(args)
        m, P, ctrl, tol = borrowed(data)
        fs, ist, ev = borrowed(run)
        t_eval, out_t, out_y, dense_t, dense_h, dense_y, dense_f, dense_k = borrowed(out)
        kind = int(ctrl[C_KIND])
        t_end = fs[T_END]
        direction = 1.0 if t_end > fs[T] else -1.0
        end_finite = np.isfinite(t_end)          # Integrator.step runs towards +-inf
        record_steps = ist[RECORD] == RECORD_STEPS
        record_teval = ist[RECORD] == RECORD_TEVAL
        dense = not plain and dense_t.shape[0] > 0
        doubling = not plain and kind == DOUBLING
        own = P.shape[0] > 0 and not doubling
        Pused = P if own else P[:0]
        stages = Pused.shape[0]
        doubling_scale = 1.0 / (2.0 ** ctrl[C_ORDER] - 1.0)
        taken = 0
        after_reject = False
        jumps = 1 if events else 0               # rows an event's cut may add to a buffer
        if kind != FIXED and fs[H] == 0.0:      # no first step given: choose it
            if ist[HAVE_F] == 0:
                code = deriv(rhs, args, fs[T], W, Y, F, ist, fs)
                if code != SUCCESS:
                    return code
                ist[HAVE_F] = 1
            h0 = initial_step(deriv, rhs, args, fs[T], t_end, ctrl[C_HMAX], W, Y, F, YNEW, FNEW, direction,
                              ctrl[C_EXPONENT], tol, ist, fs)
            fs[H] = direction * min(h0, ctrl[C_HMAX])
        while True:
            t = fs[T]
            if direction * (t_end - t) <= 0.0:
                return SUCCESS
            if ist[NACCEPT] >= ist[MAX_ACCEPT]:
                return MAX_STEPS
            if taken >= ist[PAUSE_AFTER]:
                return PAUSED
            # (a full buffer stops the loop only before a step that writes to it, so a thinned
            # run needs no spare rows; SAVE_EVERY is read here, not kept in a local across the
            # loop: that cost 3% of an RK4 step, even in runs that record nothing)
            if ((record_steps and ist[NOUT] + jumps >= out_t.shape[0]
                 and (ist[SINCE_SAVE] + 1 >= ist[SAVE_EVERY] or events))
                    or (dense and ist[NDENSE] + jumps >= dense_t.shape[0])):
                return BUFFER_FULL
            if events:
                code = prime(g, args, t, W, ev, ist, fs)
                if code != SUCCESS:
                    return code
            have_f = ist[HAVE_F] != 0

            # --- the step to try
            clipped = False
            if kind == FIXED:
                t_new = fs[T0] + (ist[KSTEP] + 1) * fs[H]
                # a grid point short of t_end by rounding ends there too: past t = 8192 with h = 0.001
                # an ulp of t is more than 1e-9 h, and the sliver left failed the underflow test below
                # (an Integrator stopped mid-run, then advanced by 0.01, failed one time in ten)
                if direction * (t_new - t_end) >= -1e-9 * abs(fs[H]) or (end_finite and within_rounding(t_new, t_end)):
                    t_new = t_end
                    clipped = True
            else:
                h = fs[H]
                if abs(h) > ctrl[C_HMAX]:
                    h = direction * ctrl[C_HMAX]
                t_new = t + h
                # landing short of t_end by rounding (steps of h_max that sum to the span) would
                # leave a sliver that fails the underflow test below: end there instead
                if direction * (t_new - t_end) >= 0.0 or (end_finite and within_rounding(t_new, t_end)):
                    t_new = t_end
                    clipped = True
                elif abs(h) < ctrl[C_HMIN]:
                    return STEP_UNDERFLOW
            h = t_new - t
            if within_rounding(t, t_new):
                return STEP_UNDERFLOW

            # --- attempt it: one step of h, or for step doubling one step of h
            # and two of h/2 (Richardson).  One call site, so that the compiled
            # loop holds one copy of the inlined stepper.
            code = SUCCESS
            have_fnew = have_fhalf = False
            for sub in range(3 if doubling else 1):
                if sub == 0:
                    ts, hs, src, fsrc, have, dst = t, h, Y, F, have_f, YFULL if doubling else YNEW
                elif sub == 1:
                    ts, hs, src, fsrc, have, dst = t, 0.5 * h, Y, F, have_f, YHALF
                else:
                    ts, hs, src, fsrc, have, dst = t + 0.5 * h, 0.5 * h, YHALF, FHALF, have_fhalf, YNEW
                if doubling and sub < 2:
                    fs[CARRY_H] = 0.0       # what a stepper carries between steps holds only from half to half
                fdst = FHALF if sub == 1 else FNEW
                code, have, have_dst = step(rhs, jac, args, m, ctrl, tol, scratch, ts, hs,
                                            src, fsrc, have, dst, fdst, ist, fs)
                if sub < 2:
                    have_f = have
                if sub == 1:
                    have_fhalf = have_dst
                else:
                    have_fnew = have_dst
                if code != SUCCESS:
                    break
            if doubling and code == SUCCESS:
                scaled_difference(W, ERR, YNEW, YFULL, doubling_scale)
            ist[HAVE_F] = 1 if have_f else 0

            # --- the error of an adaptive step
            en = 0.0
            if code == SUCCESS and kind != FIXED:
                if measures_error:
                    en = fs[STEP_ERR]
                else:
                    en = error_norm(W, ERR, scale, YNEW, tol)
                if not np.isfinite(en):
                    code = NONFINITE

            # --- what the interpolant needs beyond the step, only once the step passed, and
            # for t_eval only when a requested time falls in it: for Hermite output the
            # derivatives at both ends (implicit stages do not give f_new for free, a step
            # that drifts first not even f), for an own interpolant its extra stages, if any
            if code == SUCCESS and en <= 1.0 and (dense or events or (
                    record_teval and ist[TEVAL_NEXT] < t_eval.shape[0]
                    and direction * (t_eval[ist[TEVAL_NEXT]] - t_new) <= 0.0)):
                if own:
                    code = extend(rhs, args, m, scratch, t, h, Y, ist, fs)
                else:
                    if not have_f:
                        code = deriv(rhs, args, t, W, Y, F, ist, fs)
                    if code == SUCCESS and not have_fnew:
                        code = deriv(rhs, args, t_new, W, YNEW, FNEW, ist, fs)
                        have_fnew = True

            # --- accept or reject
            if code != SUCCESS:
                if code == JAC_NONFINITE:      # no smaller step cures it (see evaluation.jacobian)
                    return NONFINITE
                if kind == FIXED or code == BAD_SHAPE:
                    return code
                ist[LAST_FAIL] = code
                ist[NREJECT] += 1
                fs[H] = h * SHRINK_ON_FAILURE
                after_reject = True
                continue
            factor = 1.0
            if kind != FIXED:
                if en > 1.0:
                    ist[NREJECT] += 1
                    fs[H] = h * rejected(ctrl, en, fs)
                    after_reject = True
                    continue
                factor = accepted(ctrl, en, h, fs, after_reject)
                keep_spread(fs, ist[NACCEPT], h, not (clipped or after_reject))
            after_reject = False

            # --- events, on the accepted step: one that changes the state or stops the run cuts it
            stop = SUCCESS
            cut = jump = False
            t_stop = t_new
            if events:
                code, stop, cut, theta = search(g, affect, args, Pused, t, h, W, ev, ist, fs)
                if code != SUCCESS:
                    return code
                if cut:
                    t_stop = t + theta * h
                    jump = not same_row(ev.Y, Y_BEFORE, Y_AFTER)
                    if clipped and within_rounding(t_stop, t_new):
                        t_stop = t_new      # at t_end within rounding: what is left is no step at all

            # --- output
            if record_steps:
                ist[SINCE_SAVE] += 1
                if ist[SINCE_SAVE] >= ist[SAVE_EVERY] or cut:
                    out_t[ist[NOUT]] = t_stop
                    if events and cut:
                        copy_row(out_y, ist[NOUT], ev.Y, Y_BEFORE)
                    else:
                        copy_row(out_y, ist[NOUT], W, YNEW)
                    ist[NOUT] += 1
                    ist[SINCE_SAVE] = 0
                if events and jump:             # the state after the event, at the same time
                    out_t[ist[NOUT]] = t_stop
                    copy_row(out_y, ist[NOUT], ev.Y, Y_AFTER)
                    ist[NOUT] += 1
            elif record_teval:
                while ist[TEVAL_NEXT] < t_eval.shape[0]:
                    te = t_eval[ist[TEVAL_NEXT]]
                    if direction * (te - t_stop) > 0.0:
                        break
                    interpolate(Pused, (te - t) / h, h, W, Y, YNEW, F, FNEW, STAGE, out_y, ist[NOUT])
                    out_t[ist[NOUT]] = te
                    ist[NOUT] += 1
                    ist[TEVAL_NEXT] += 1
            if dense:                           # the step's interpolant, also when an event cut it
                d = ist[NDENSE]
                dense_t[d] = t_stop
                dense_h[d] = h
                copy_row(dense_y, d, W, YNEW)
                copy_row(dense_f, d, W, FNEW)
                for i in range(stages):
                    copy_row(dense_k, (d - 1) * stages + i, W, STAGE + i)
                ist[NDENSE] += 1

            # --- commit (``events and``: pruned with the search from a loop without events)
            if events and cut:
                # the step ends at the event: what the stepper carries from its end no longer holds
                copy_row(W, Y, ev.Y, Y_AFTER)
                fs[T] = t_stop
                forget(fs, ist, jump)
                restart(fs, ist)
                ist[NACCEPT] += 1
                taken += 1
                if kind == FIXED:
                    # back onto the grid t0 + k h: the next step ends where this one would have
                    if direction * (fs[T0] + (ist[KSTEP] + 1) * fs[H] - t_stop) <= 1e-9 * abs(fs[H]):
                        ist[KSTEP] += 1
                elif t_stop != t:
                    # the controller's next step, grown at most as it may grow the part of the step
                    # taken: a step that ran far past the event (a ball's parabola, whose error
                    # estimate is nil) must not set the size of the next one
                    fs[H] = direction * min(abs(h * factor), abs(t_stop - t) * ctrl[C_FMAX])
                if dense and (jump or stop == BUFFER_FULL):   # a break: no interpolant spans the cut
                    code = deriv(rhs, args, t_stop, W, Y, F, ist, fs)
                    if code != SUCCESS:
                        return code
                    ist[HAVE_F] = 1
                    d = ist[NDENSE]
                    dense_t[d] = t_stop
                    dense_h[d] = 0.0
                    copy_row(dense_y, d, W, Y)
                    copy_row(dense_f, d, W, F)
                    for i in range(stages):
                        zero_row(dense_k, (d - 1) * stages + i)
                    ist[NDENSE] += 1
                if stop != SUCCESS:
                    return stop
                continue
            copy_row(W, Y, W, YNEW)
            if have_fnew:
                copy_row(W, F, W, FNEW)
            ist[HAVE_F] = 1 if have_fnew else 0
            fs[T] = t_new
            ist[NACCEPT] += 1
            taken += 1
            if kind == FIXED:
                if clipped:
                    fs[T0] = t_new
                    ist[KSTEP] = 0
                else:
                    ist[KSTEP] += 1
            elif not clipped:
                fs[H] = h * factor

    return drive
