"""Events inside the loop: zeros of ``g`` found on each accepted step, and the state reset there.

A run's events are one vector ``g(t, y)`` of conditions (each
:class:`odekit.Event` contributes one component or several) and one
``affect`` that resets the state for the event that fired.  After a step is
accepted, :func:`search` looks for sign changes of ``g`` along the step's own
interpolant -- at ``samples`` interior points and at the end, not at the ends
alone, so that two crossings inside one step are not missed -- and locates
each by the Illinois method (a regula falsi that halves the stale end's
value, superlinear and always bracketed) to a few ulps of ``t``.  The root is
reported on its *left* side: the state handed to ``affect`` has not yet
crossed, so a state that ``affect`` leaves on the zero (a ball bouncing off
the floor) does not fire again.  A zero at a step's start never fires: it was
either reported at the end of the step before or made by an ``affect``.

Events found in one step are handled earliest first, whatever their order in
the list; those within ``GROUP_ULPS`` of the earliest fire together, in list
order.  An event with an ``affect`` or a terminal one *cuts* the step there:
the driver ends the step at the event and starts the next one from the state
after ``affect``.  Others are logged and the search goes on along the step.

The event state (:class:`~odekit.kernels.interface.EventState`) holds, per
component of ``g``, its event and direction (``spec``), per event its terminal
count, whether it has an affect and its occurrences, the values of ``g`` at
the search's points and the interpolated states (rows of ``Y``), the
components that just fired (or, when the log was full, have yet to), and
the log.
"""

import numpy as np

from . import jitable
from .dense import interpolate
from .layout import (
    BAD_SHAPE, BUFFER_FULL, EV_READY, EVENT, EVENTS_ACCUMULATE, F, FNEW, MAX_EVENTS, NEVENT, NONFINITE, STAGE,
    SUCCESS, T_EVENT, T_FAIL, Y, YNEW,
)
from .primitives import all_finite, copy_row

EPS = float(np.finfo(np.float64).eps)     # constants to Numba, where np.finfo is a call per use
TINY = float(np.finfo(np.float64).tiny)
# spec[c]: the event of component c, its index within that event, its direction
SPEC_EVENT, SPEC_COMPONENT, SPEC_DIRECTION = 0, 1, 2
# kinds[k]: how many occurrences stop the run (0: none), 1 when it has an affect
KIND_TERMINAL, KIND_AFFECT = 0, 1
# conf: interior points searched per step, the most events logged (0: no limit)
CONF_SAMPLES, CONF_MAX = 0, 1
# rows of G: g at the start of the stretch searched, at its end, at a trial point, at a root's right side
G_LEFT, G_RIGHT, G_TRY, G_SIDE = 0, 1, 2, 3
# rows of the event state's Y: a trial state, the state before an event, after it
Y_TRY, Y_BEFORE, Y_AFTER = 0, 1, 2
# Roots this close (in units of eps |t|) are one time: they fire together.  A root is
# located to within ROOT_ULPS; two located roots of the same time lie within twice that.
ROOT_ULPS = 4.0
GROUP_ULPS = 16.0
# Events with an affect that follow each other closer than this (eps |t|) accumulate:
# Zeno behaviour, a ball coming to rest, which would bounce forever.
ZENO_ULPS = 100.0
# A component that is zero where a search starts takes its sign from this far on (see leave_zeros).
PROBE_ULPS = 64.0
# fired[c]: FIRED, it fired where the step was cut and left the state as it was (start_search counts its
# g as zero there); or +-PENDING, located but not logged, since the log was full: the step was cut just
# before it, and its g had the sign given
FIRED, PENDING = 1, 2
ROOT_ITERATIONS = 200        # never reached by the Illinois method on a continuous g; a guard


@jitable
def ulps(count, t, h, theta):
    """``count`` ulps of the time ``t + theta h``, as a fraction of the step ``h``."""
    return count * EPS * max(abs(t + theta * h), 1e-300) / abs(h)


@jitable
def crosses(a, b, direction):
    """Whether ``g`` goes from ``a`` to ``b`` through zero in ``direction`` (0: either).

    A zero at the start does not count (see the module docstring); one at the
    end does -- and is then at the start of the next stretch.
    """
    if a < 0.0 and b >= 0.0:
        return direction >= 0
    if a > 0.0 and b <= 0.0:
        return direction <= 0
    return False


@jitable
def evaluate_g(g, args, P, t, h, theta, W, ev, row, fs):
    """``g`` at ``t + theta h`` on the step's interpolant (or at its end) into ``ev.G[row]``; a status code."""
    G, Ys = ev.G, ev.Y
    if theta == 1.0:
        tt = t + h
        ok = g(tt, W, YNEW, G, row, args)
    else:
        tt = t + theta * h
        interpolate(P, theta, h, W, Y, YNEW, F, FNEW, STAGE, Ys, Y_TRY)
        ok = g(tt, Ys, Y_TRY, G, row, args)
    if ok and all_finite(G, row):
        return SUCCESS
    fs[T_FAIL] = tt
    return BAD_SHAPE if not ok else NONFINITE


@jitable(cold=True)
def leave_zeros(g, args, P, t, h, W, ev, a, b, fs):
    """Components of ``g`` that are zero at ``a``, where a search starts, take the sign they leave with.

    A zero there never fires (the module docstring says why), but the side
    it leaves to decides what follows: a ball that bounced from the floor
    exactly (``g = 0``) rises, and must be seen to land again even when a
    long step holds its whole flight before the first sample.  So ``g`` is
    looked at ``PROBE_ULPS`` ulps of ``t`` on, and a component still zero
    there stays zero.
    """
    G = ev.G
    zeros = False
    for c in range(G.shape[1]):
        zeros = zeros or G[G_LEFT, c] == 0.0
    if not zeros:
        return SUCCESS
    code = evaluate_g(g, args, P, t, h, min(a + ulps(PROBE_ULPS, t, h, a), 0.5 * (a + b)), W, ev, G_TRY, fs)
    if code != SUCCESS:
        return code
    for c in range(G.shape[1]):
        if G[G_LEFT, c] == 0.0:
            G[G_LEFT, c] = G[G_TRY, c]
    return SUCCESS


@jitable(cold=True)
def locate(g, args, P, t, h, W, ev, c, a, b, ga, gb, fs):
    """The root of component ``c`` in ``[a, b]`` (in ``theta``), where ``ga`` and ``gb`` bracket it.

    Illinois: regula falsi, halving the value kept at an end that stayed
    twice -- and a bisection whenever three steps did not halve the bracket:
    on a ``g`` that rises and falls inside it (a ball's flight, from a zero
    at the bounce), the halvings alone took some fifty steps.

    Returns ``(code, left, right)``: the bracket, ``ROOT_ULPS`` ulps of its
    own time wide or less (not of the step's end: a step may be far longer
    than the time of the root), ``left`` on the side of ``a`` (not yet
    crossed; ``g`` is zero there only when the root was hit exactly).
    """
    side = 0
    width = b - a                     # the bracket's width three steps ago
    for i in range(ROOT_ITERATIONS):
        if gb == 0.0:
            return SUCCESS, b, b
        if b - a <= ulps(ROOT_ULPS, t, h, b):
            break
        x = b - gb * (b - a) / (gb - ga)
        if i % 3 == 2:
            if b - a > 0.5 * width:
                x = 0.5 * (a + b)
            width = b - a
        if not (a < x < b):           # rounding at a bracket of a few ulps: bisect
            x = 0.5 * (a + b)
        code = evaluate_g(g, args, P, t, h, x, W, ev, G_TRY, fs)
        if code != SUCCESS:
            return code, a, b
        gx = ev.G[G_TRY, c]
        if gx == 0.0:
            return SUCCESS, x, x
        if (gx < 0.0) == (ga < 0.0):
            a, ga = x, gx
            if side == -1:
                gb *= 0.5
            side = -1
        else:
            b, gb = x, gx
            if side == 1:
                ga *= 0.5
            side = 1
    return SUCCESS, a, b


@jitable(cold=True)
def search(g, affect, args, P, t, h, W, ev, ist, fs):
    """Search the accepted step from ``t`` of ``h`` for events, log them, and apply their affects.

    ``ev.G[G_LEFT]`` must hold ``g`` at the step's start.  Returns ``(code,
    stop, cut, theta)``: a status code (SUCCESS, or why ``g`` or ``affect``
    failed); what stops the run after this step (SUCCESS: nothing; EVENT, a
    terminal event; BUFFER_FULL, a full log; MAX_EVENTS; EVENTS_ACCUMULATE);
    whether the step ends early, at ``t + theta h``, with ``ev.Y[Y_BEFORE]``
    the state there and ``ev.Y[Y_AFTER]`` the state to go on from.  When the
    step is not cut, ``ev.G[G_LEFT]`` ends as ``g`` at its end, for the next.
    """
    spec, G = ev.spec, ev.G
    m = spec.shape[0]
    samples = ev.conf[CONF_SAMPLES]
    a = 0.0
    for i in range(1, samples + 2):
        b = 1.0 if i == samples + 1 else i / (samples + 1.0)
        code = evaluate_g(g, args, P, t, h, b, W, ev, G_RIGHT, fs)
        if code == SUCCESS and i == 1:
            code = leave_zeros(g, args, P, t, h, W, ev, a, b, fs)
        if code != SUCCESS:
            return code, SUCCESS, False, 1.0
        while True:
            # the earliest root in (a, b]: every component that crosses there, located
            first = 2.0
            for c in range(m):
                ev.roots[c, 0] = np.nan
                if crosses(G[G_LEFT, c], G[G_RIGHT, c], spec[c, SPEC_DIRECTION]):
                    code, left, right = locate(g, args, P, t, h, W, ev, c, a, b, G[G_LEFT, c], G[G_RIGHT, c], fs)
                    if code != SUCCESS:
                        return code, SUCCESS, False, 1.0
                    ev.roots[c, 0], ev.roots[c, 1] = left, right
                    first = min(first, left)
            if first > 1.0:
                break
            code, stop, cut, resume = fire(affect, args, P, t, h, W, ev, first, ulps(GROUP_ULPS, t, h, first),
                                           ist, fs)
            if code != SUCCESS or stop != SUCCESS or cut:
                return code, stop, cut, first
            # no state changed: go on along the step from just past the roots that fired
            a = resume
            code = evaluate_g(g, args, P, t, h, a, W, ev, G_LEFT, fs)
            if code == SUCCESS:
                code = leave_zeros(g, args, P, t, h, W, ev, a, b, fs)
            if code != SUCCESS:
                return code, SUCCESS, False, 1.0
        a = b
        copy_row(G, G_LEFT, G, G_RIGHT)
    return SUCCESS, SUCCESS, False, 1.0


@jitable(cold=True)
def fire(affect, args, P, t, h, W, ev, first, within, ist, fs):
    """Log the events whose roots lie within ``within`` of ``first`` and apply their affects, in list order.

    Returns ``(code, stop, cut, resume)``: ``cut`` when the step ends at
    ``first`` (an event with an affect, or one that stops the run); otherwise
    the search resumes at ``resume``, past these roots.  A group that would
    not fit in the log is left unlogged: the step is cut before it.  A jump
    of the state that follows the last one within rounding is Zeno
    behaviour: the run stops there with EVENTS_ACCUMULATE.
    """
    spec, kinds, count, conf, Ys = ev.spec, ev.kinds, ev.count, ev.conf, ev.Y
    te = t + first * h
    interpolate(P, first, h, W, Y, YNEW, F, FNEW, STAGE, Ys, Y_BEFORE)
    copy_row(Ys, Y_AFTER, Ys, Y_BEFORE)
    size = 0
    affects = False
    for c in range(spec.shape[0]):
        if in_group(ev, c, first, within):
            size += 1
            affects = affects or kinds[spec[c, SPEC_EVENT], KIND_AFFECT] != 0
    if ist[NEVENT] + size > ev.log_t.shape[0]:
        # the step ends on the near side of these roots, and the next one must find them at its start
        # (see start_search), where a zero otherwise never fires: they were located, not reported
        for c in range(spec.shape[0]):
            if in_group(ev, c, first, within):
                ev.fired[c] = PENDING if ev.G[G_LEFT, c] > 0.0 else -PENDING
        return SUCCESS, BUFFER_FULL, True, first
    stop = SUCCESS
    resume = first
    for c in range(spec.shape[0]):
        if not in_group(ev, c, first, within):
            continue
        resume = max(resume, ev.roots[c, 1])
        k = spec[c, SPEC_EVENT]
        n = ist[NEVENT]
        ev.log_t[n] = te
        ev.log_i[n, 0] = k
        ev.log_i[n, 1] = spec[c, SPEC_COMPONENT]
        copy_row(ev.log_y, 2 * n, Ys, Y_AFTER)
        if kinds[k, KIND_AFFECT] != 0:
            if not affect(k, spec[c, SPEC_COMPONENT], te, Ys, Y_AFTER, args):
                fs[T_FAIL] = te
                return BAD_SHAPE, SUCCESS, False, first
            if not all_finite(Ys, Y_AFTER):
                fs[T_FAIL] = te
                return NONFINITE, SUCCESS, False, first
        copy_row(ev.log_y, 2 * n + 1, Ys, Y_AFTER)
        ist[NEVENT] += 1
        count[k] += 1
        if kinds[k, KIND_TERMINAL] > 0 and count[k] >= kinds[k, KIND_TERMINAL]:
            stop = EVENT
    if stop == SUCCESS and conf[CONF_MAX] > 0 and ist[NEVENT] >= conf[CONF_MAX]:
        stop = MAX_EVENTS
    cut = affects or stop != SUCCESS
    if not cut:
        return SUCCESS, stop, False, resume
    if same_row(Ys, Y_BEFORE, Y_AFTER):
        # the next step starts on the near side of these roots, the state unchanged: they are
        # a few ulps ahead and must not be found again (see start_search)
        for c in range(spec.shape[0]):
            if in_group(ev, c, first, within):
                ev.fired[c] = FIRED
    else:
        if stop == SUCCESS and abs(te - fs[T_EVENT]) <= ZENO_ULPS * EPS * max(abs(te), 1e-300):
            stop = EVENTS_ACCUMULATE
        fs[T_EVENT] = te
    return SUCCESS, stop, True, first


@jitable
def in_group(ev, c, first, within):
    """Whether component ``c`` has a root within ``within`` of ``first``: it fires with the earliest."""
    return not np.isnan(ev.roots[c, 0]) and ev.roots[c, 0] - first <= within


@jitable
def same_row(A, a, b):
    """Whether rows ``a`` and ``b`` of ``A`` are equal, number for number."""
    for q in range(A.shape[1]):
        if A[a, q] != A[b, q]:
            return False
    return True


@jitable
def prime(g, args, t, W, ev, ist, fs):
    """``g`` at the current state into ``ev.G[G_LEFT]``, where the search of the next step starts.

    Only at the start and after a cut: otherwise the search left ``g`` at the step's end there.
    """
    if ist[EV_READY] != 0:
        return SUCCESS
    return start_search(g, args, t, W, ev, ist, fs)


# Not inlined into the loop: Numba (0.68) drops the writes of a loop inlined into a function that
# unpacked ``ev`` from a tuple, as the loop does, when the loop reads ``ev``'s arrays by attribute.
@jitable(cold=True)
def start_search(g, args, t, W, ev, ist, fs):
    """:func:`prime`'s work: ``g`` at the state, and the components that fired or wait to fire set."""
    ok = g(t, W, Y, ev.G, G_LEFT, args)
    if not (ok and all_finite(ev.G, G_LEFT)):
        fs[T_FAIL] = t
        return BAD_SHAPE if not ok else NONFINITE
    # where an event just fired, g is within ulps of its zero, maybe still on the near side: count
    # it as zero, so that the search takes the side the state leaves to (see leave_zeros); where one
    # is pending, g is within ulps of its zero too, on the near side, on it, or (rounded otherwise
    # here than where it was located) past it: it takes the near side's sign, so that the search
    # finds the crossing at once
    for c in range(ev.fired.shape[0]):
        if ev.fired[c] == FIRED:
            ev.G[G_LEFT, c] = 0.0
        elif ev.fired[c] != 0 and ev.G[G_LEFT, c] * ev.fired[c] <= 0.0:
            ev.G[G_LEFT, c] = TINY * (ev.fired[c] / PENDING)
        ev.fired[c] = 0
    ist[EV_READY] = 1
    return SUCCESS
