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

Functions = namedtuple("Functions", "rhs jac args")
Functions.__doc__ = """The problem's functions in the kernel convention (:mod:`.evaluation`) and their ``args``."""

MethodData = namedtuple("MethodData", "m P ctrl tol")
MethodData.__doc__ = """The method's coefficients ``m`` (the family's kernel data), its continuous extension
``P`` (``0 x 0`` for Hermite), the controller's parameters ``ctrl`` and the tolerances ``tol`` (``(2, n)``:
rtol, atol)."""

RunState = namedtuple("RunState", "fs ist")
RunState.__doc__ = """The run's floats and integers, slots named in :mod:`.layout`: where it is and what it did."""

Output = namedtuple("Output", "t_eval t y dense_t dense_y dense_f dense_k")
Output.__doc__ = """What the loop records: the requested times ``t_eval``; rows ``t, y`` of output; and for
dense output each step's end ``dense_t, dense_y, dense_f`` and its stages ``dense_k``."""


def no_output(dtype):
    """An :class:`Output` with nothing to record, for a state of ``dtype``."""
    empty, rows = np.zeros(0), np.zeros((0, 0), dtype=dtype)
    return Output(empty, empty, rows, empty, rows, rows, rows)
