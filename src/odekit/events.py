"""Events: conditions a run watches for -- collisions, impacts, thresholds -- and what happens there.

An :class:`Event` is a function ``g`` whose zeros mark the event (a ball's
height, a tank's level minus empty), the direction of crossing that counts,
whether it stops the run, and an ``affect`` that resets the state there (the
bounce).  The compiled loop finds and handles them (see
:mod:`odekit.kernels.events` for how); this module checks what the user
gives and builds the two functions the loop calls: ``g`` of every event as
one vector, and ``affect`` of event ``k``.
"""

from collections import namedtuple
import math
import weakref

import numpy as np

from . import checks
from .kernels.evaluation import store_motion, store_state, store_values

EventRecord = namedtuple("EventRecord", "t index component before after")
EventRecord.__doc__ = """One event of a run: its time ``t``, the ``index`` of its :class:`Event` in the run's
list, the ``component`` of a vector ``g`` that fired (0 for a scalar one), and the states ``before`` and
``after`` its affect (equal without one), shaped like the problem's state."""

DIRECTIONS = (-1, 0, 1)
SAMPLES = 4          # interior points of each step where g is looked at, besides the step's ends


class Event:
    """A condition ``g = 0`` that the run watches for, and what happens there.

    Parameters
    ----------
    g : callable
        ``g(t, y, *args)`` -- ``g(t, x, v, *args)`` for a
        :class:`~odekit.SecondOrderProblem` -- returns a float, or an array
        of them for several conditions that share one ``affect`` (walls of a
        box).  The event happens where a component crosses zero.
    direction : {-1, 0, 1}
        Which crossings count, along the direction of integration: ``1``
        from negative to positive, ``-1`` from positive to negative, ``0``
        both (as SciPy's ``direction``).
    terminal : bool or int
        ``True`` stops the run at the event; an integer ``N`` at its ``N``-th
        occurrence.  The run then ends with ``Status.EVENT``, its last time
        the event's.
    affect : callable, optional
        Resets the state at the event: ``affect(t, y, *args)`` (``affect(t,
        x, v, *args)``; with a vector ``g``, ``affect(t, y, i, *args)`` with
        the index ``i`` of the component that fired) returns the new state
        (``(x, v)``) or changes ``y`` (``x``, ``v``) in place and returns
        None.  It sees the state just before the crossing.  A scalar state
        comes as numbers, as to the right-hand side: return the new one.
    name : str, optional
        For logs and messages; default ``g``'s name.

    Notes
    -----
    Zero crossings are looked for on every accepted step, at its end and at
    ``SAMPLES`` interior points of its interpolant, and located to a few
    ulps of ``t``.  A zero at the start of a step does not fire: it was
    found at the end of the step before, or made by an ``affect``.  Two
    sign changes of one component between neighbouring sample points cancel
    and are not seen; raise ``event_samples`` where that may happen.
    """

    def __init__(self, g, *, direction=0, terminal=False, affect=None, name=None):
        self.g = checks.callable_or_none("g", g, "a function g(t, y, *args) returning a float or an array")
        if self.g is None:
            raise checks.fail("g", "a function g(t, y, *args) returning a float or an array", g)
        self.direction = checks.choice("direction", direction, DIRECTIONS, "-1, 0 or 1")
        if isinstance(terminal, (bool, np.bool_)):
            self.terminal = int(bool(terminal))
        else:
            self.terminal = checks.count("terminal", terminal, accepted="True, False or a positive integer N "
                                                                     "(stop at the N-th occurrence)")
        self.affect = checks.callable_or_none("affect", affect, "a function affect(t, y, *args) or None")
        if name is not None and not isinstance(name, str):
            raise checks.fail("name", "a string or None", name)
        self.name = name or getattr(g, "__name__", "event")

    def __repr__(self):
        parts = [repr(self.name)]
        if self.direction:
            parts.append(f"direction={self.direction}")
        if self.terminal:
            parts.append(f"terminal={self.terminal if self.terminal > 1 else True}")
        if self.affect is not None:
            parts.append(f"affect={getattr(self.affect, '__name__', 'affect')}")
        return f"Event({', '.join(parts)})"


def as_events(events, name="events"):
    """``events`` as a tuple of :class:`Event`: None, one event, or a sequence of them.

    A plain function counts as an event too, with SciPy's attributes
    ``terminal`` and ``direction`` read when it has them.
    """
    if events is None:
        return ()
    if isinstance(events, Event) or callable(events):
        events = [events]
    if isinstance(events, (str, bytes)) or not hasattr(events, "__iter__"):
        raise checks.fail(name, "an Event, a function g(t, y, *args), or a list of them", events)
    out = []
    for i, e in enumerate(events):
        if isinstance(e, Event):
            out.append(e)
        elif callable(e):
            out.append(_wrapped(e))
        else:
            raise checks.fail(f"{name}[{i}]", "an Event or a function g(t, y, *args)", e)
    return tuple(out)


_WRAPPED = weakref.WeakKeyDictionary()     # function -> {(terminal, direction): Event}


def _wrapped(fn):
    """A plain event function as an :class:`Event`, the same one each time it comes with the same
    attributes: the compiled event code is kept per Event, and a loop of solve_ivp calls would
    otherwise compile it again every time."""
    terminal = getattr(fn, "terminal", False)
    direction = _scipy_direction(getattr(fn, "direction", 0))
    key = (terminal if terminal else False, direction)
    try:
        made = _WRAPPED.setdefault(fn, {})
    except TypeError:                  # not weakly referenceable: a new Event each time
        made = {}
    if key not in made:
        made[key] = Event(fn, direction=direction, terminal=key[0])
    return made[key]


def _scipy_direction(value):
    """SciPy takes any number as a direction and uses its sign."""
    value = checks.real("direction", value, "a number (its sign is used, as in SciPy)")
    return int(math.copysign(1, value)) if value else 0


# --- the kernel's view: one g of all events, one affect by index ---------------------------

def layout(events, sizes):
    """The kernels' ``spec`` and ``kinds`` arrays (see :mod:`odekit.kernels.events`) for ``events``,
    whose ``g`` have ``sizes`` components."""
    spec = np.array([(k, j, e.direction) for k, (e, m) in enumerate(zip(events, sizes)) for j in range(m)],
                    dtype=np.int64).reshape(-1, 3)
    kinds = np.array([(e.terminal, e.affect is not None) for e in events], dtype=np.int64).reshape(-1, 2)
    return spec, kinds


def sizes(events, problem, t0, y0):
    """The number of components of each event's ``g`` at ``t0`` and the flat state ``y0``, checked."""
    out = []
    for k, e in enumerate(events):
        try:
            value = problem.call(e.g, t0, y0)
        except Exception as exc:
            exc.add_note(f"odekit: raised by g of event {k} ({e.name!r}) at t0={t0}")
            raise
        what = f"g of event {k} ({e.name!r})"
        if value is None:
            raise ValueError(f"{what} returned None at t0={t0}; expected a float or an array of them "
                             "-- is a return statement missing?")
        array = np.asarray(value)
        if array.dtype.kind not in "biuf" or array.size == 0:
            raise ValueError(f"{what} returned {checks.shown(value)} at t0={t0}; expected a real float or a "
                             "non-empty array of them")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{what} returned non-finite values {checks.shown(value)} at t0={t0}")
        out.append(array.size)
    return out


def adapters(events, sizes, second_order, shape, compile_function):
    """``(g, affect)`` in the kernel convention for ``events``, as plain Python functions.

    Generated source, so that Numba sees a straight sequence of calls to the
    user's functions -- each of its own type -- rather than a loop over them;
    ``compile_function`` prepares each user function for that (Numba's
    ``njit``, or nothing for the Python backend).
    """
    names = {"store_values": store_values, "store": store_motion if second_order else store_state, "shape": shape}
    # a scalar state as numbers, as the force and the right-hand side get it (not 0-d arrays,
    # which Numba's math functions refuse)
    if second_order:
        view = ("x, v = W[row, 0], W[row, 1]" if shape == ()
                else "x, v = W[row, :n].reshape(shape), W[row, n:].reshape(shape)")
        state = "x, v"
    else:
        view, state = ("y = W[row, 0]" if shape == () else "y = W[row].reshape(shape)"), "y"
    # (names no other module uses: Numba pickles the functions its object mode calls, and pickle
    # looks a plain "g" up in every module loaded -- scipy.constants warned on it)
    lines = ["def event_conditions(t, W, row, G, grow, args):", "    n = W.shape[1] // 2", f"    {view}"]
    start = 0
    for k, (e, m) in enumerate(zip(events, sizes)):
        names[f"g{k}"] = compile_function(e.g)
        lines.append(f"    if not store_values(G, grow, {start}, {m}, g{k}(t, {state}, *args)):")
        lines.append("        return False")
        start += m
    lines.append("    return True")
    lines += ["", "def event_affects(k, c, t, W, row, args):", "    n = W.shape[1] // 2", f"    {view}"]
    for k, (e, m) in enumerate(zip(events, sizes)):
        if e.affect is not None:
            names[f"a{k}"] = compile_function(e.affect)
            index = "c, " if m > 1 else ""
            lines.append(f"    if k == {k}:")
            lines.append(f"        return store(W, row, a{k}(t, {state}, {index}*args))")
    lines.append("    return True")
    exec("\n".join(lines), names)     # our own template; the user's functions enter by name
    return names["event_conditions"], names["event_affects"]


def records(ev, start, stop, problem):
    """The log's entries ``start`` to ``stop`` as :class:`EventRecord`, states shaped like the problem's."""
    states = problem.unflatten(ev.log_y[2 * start:2 * stop].copy())
    # whole columns to Python numbers at once: a thousand bounces are logged in a blink, and listed
    # in twice the time when each number is converted on its own
    return [EventRecord(t, k, c, before, after) for t, (k, c), before, after
            in zip(ev.log_t[start:stop].tolist(), ev.log_i[start:stop].tolist(), states[0::2], states[1::2])]


def compared_rows(t, err):
    """The rows at output times ``t`` to compare with a closed form, given each row's error ``err``.

    All but one row of each jump: there the trajectory holds the state
    before and after an event at one time, and the closed form gives one of
    them -- which one depends on the side of its own root the event's time
    falls on, found to rounding.  The row farther from it is left out.
    """
    keep = np.ones(len(t), dtype=bool)
    after = np.flatnonzero(np.diff(t) == 0) + 1
    keep[np.where(err[after] > err[after - 1], after, after - 1)] = False
    return keep
