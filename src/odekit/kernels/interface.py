"""The compiled loop's interface: its arguments as four named bundles and the work arrays.

Defined here and nowhere else.  A run builds each bundle once; the loop
(:mod:`.driver`) takes them apart at its top, and Numba types them from
the objects themselves (:func:`odekit.kernels.jit.kernel_signatures`), so
nothing else states their fields.  What a new feature needs in the loop --
events, an ensemble's per-trajectory state -- is a field added here and
where the bundle is built, not a parameter threaded through every signature.

    drive(fns, data, run, scratch, out) -> status code

``scratch`` is the family's tuple of work arrays, the work matrix first
(see :class:`odekit.families.Family`).
"""

from collections import namedtuple

import numpy as np

Functions = namedtuple("Functions", "rhs jac args g affect")
Functions.__doc__ = """The problem's functions in the kernel convention (:mod:`.evaluation`) and their ``args``;
the run's event conditions ``g(t, W, row, G, grow, args) -> bool`` (every component into ``G[grow]``)
and ``affect(k, component, t, W, row, args) -> bool`` (event ``k``'s reset of ``W[row]``), see
:mod:`.events`; both None for a run without events."""

MethodData = namedtuple("MethodData", "m P ctrl tol")
MethodData.__doc__ = """The method's coefficients ``m`` (the family's kernel data), its continuous extension
``P`` (``0 x 0`` for Hermite), the controller's parameters ``ctrl`` and the tolerances ``tol`` (``(2, n)``:
rtol, atol)."""

RunState = namedtuple("RunState", "fs ist ev")
RunState.__doc__ = """The run's floats and integers, slots named in :mod:`.layout`: where it is and what it did;
and its events' :class:`EventState`, or None for a run without events (whose loop is compiled without the
search, see :func:`~odekit.kernels.driver.make_drive`: making and unboxing eleven unused arrays and two
unused functions was 5 µs of a small bdf solve's 85)."""

EventState = namedtuple("EventState", "spec kinds count conf G Y roots fired log_t log_i log_y")
EventState.__doc__ = """What the loop knows of the run's events (see :mod:`.events`): per component of ``g``
its event, index and direction (``spec``); per event its terminal count and whether it has an affect
(``kinds``) and its occurrences (``count``); the samples per step and most events (``conf``); the
values of ``g`` (``G``) and states (``Y``) of the search, the roots found (``roots``), the components
whose event ended the last step (``fired``); the log: times
``log_t``, (event, component) ``log_i``, and the states before and after, rows ``2 i`` and ``2 i + 1``
of ``log_y``."""

Output = namedtuple("Output", "t_eval t y dense_t dense_h dense_y dense_f dense_k")
Output.__doc__ = """What the loop records: the requested times ``t_eval``; rows ``t, y`` of output; and for
dense output each step's end ``dense_t``, the length ``dense_h`` of the step its interpolant spans (longer
when an event cut the step; 0 for the jump an event's affect makes), the interpolant's end point
``dense_y, dense_f`` and its stages ``dense_k``."""


def event_state(spec, kinds, conf, n, dtype, capacity):
    """An :class:`EventState` for ``spec`` and ``kinds`` on a state of ``n`` numbers of ``dtype``,
    with room to log ``capacity`` events."""
    m = spec.shape[0]
    return EventState(spec, kinds, np.zeros(kinds.shape[0], dtype=np.int64), conf, np.zeros((4, m)),
                      np.zeros((3, n), dtype=dtype), np.zeros((m, 2)), np.zeros(m, dtype=np.int64), np.zeros(capacity),
                      np.zeros((capacity, 2), dtype=np.int64), np.zeros((2 * capacity, n), dtype=dtype))


def empty_events(dtype):
    """An :class:`EventState` with room for nothing, on a state of ``dtype``: the type of every run's with events."""
    none = np.zeros((0, 3), dtype=np.int64)
    return event_state(none, np.zeros((0, 2), dtype=np.int64), np.zeros(2, dtype=np.int64), 0, dtype, 0)


def no_output(dtype):
    """An :class:`Output` with nothing to record, for a state of ``dtype``."""
    empty, rows = np.zeros(0), np.zeros((0, 0), dtype=dtype)
    return Output(empty, empty, rows, empty, empty, rows, rows, rows)
