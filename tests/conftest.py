"""Shared by the test files: a closed form and the right-hand sides many of them use.

The right-hand sides are module-level functions, defined once for the whole
session, so that the compiled backend compiles each kernel once for them
rather than once per test file.  Test files import what they use::

    from conftest import decay, rk4_factor
"""

import numpy as np


def rk4_factor(z):
    """Stability function of classic RK4: one step on y' = lambda y multiplies y by R(h lambda)."""
    return 1 + z + z ** 2 / 2 + z ** 3 / 6 + z ** 4 / 24


def decay(t, y):
    return -y


def decay_k(t, y, k):
    return -k * y


def nan_after(t, y):
    """-y, until t = 0.55, then nan."""
    if t < 0.55:
        return -y
    return np.full_like(y, np.nan)


def spring(t, x, v):
    return -x


def oscillator(t, x, v, w):
    return -w * w * x
