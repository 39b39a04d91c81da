"""The checks of the zoo's parameters, shared by every problem's constructor.

Each returns the value as the problem uses it (a float, an int, an array) or
raises a ValueError naming the parameter, the value and what is accepted.
"""

import math

import numpy as np

from .. import checks


def _number(name, value, accepted="a finite real number", ok=lambda v: True):
    """``value`` as a float, or a ValueError naming the parameter, the value and what is accepted."""
    return checks.real(name, value, accepted, lambda v: math.isfinite(v) and ok(v))


def _positive(name, value):
    return _number(name, value, "a finite number > 0", lambda v: v > 0)


def _nonnegative(name, value):
    return _number(name, value, "a finite number >= 0", lambda v: v >= 0)


def _count(name, value, minimum):
    """A whole number >= ``minimum``; ``10.0`` is accepted (the command line passes floats)."""
    accepted = f"a whole number >= {minimum}"
    number = _number(name, value, accepted, lambda v: v == int(v) and v >= minimum)
    return int(number)


def _span_end(t_end, default):
    """``t_end`` (the span starts at 0), or ``default`` when it is None."""
    if t_end is None and default is not None:
        return float(default)
    return _number("t_end", t_end, "a finite number != 0 (the span starts at t = 0)", lambda v: v != 0)


def _vector(name, value, n):
    """A real array of ``n`` finite numbers."""
    array = checks.array(name, value, checks.REAL, f"{n} real numbers").astype(float)
    if array.shape != (n,) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be {n} finite real numbers (shape ({n},)), got {value!r}")
    return array
