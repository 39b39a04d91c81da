"""Shared by the test files: a closed form and the right-hand sides many of them use.

The right-hand sides are module-level functions, defined once for the whole
session, so that the compiled backend compiles each kernel once for them
rather than once per test file.  Test files import what they use::

    from conftest import decay, rk4_factor
"""

import os

import numpy as np

from odekit import backend

# backend="auto" compiles at once in the tests, as it did before a first solve could start on Python
# while its loop was not in the cache (odekit.backend.FIRST_RUN_SECONDS): whether a test runs compiled
# must not depend on what earlier tests left in the cache.  test_first_run.py tests that start.
# Set here, not only in the environment (for the odekit processes tests start): pytest has imported
# odekit already, to read the warning categories of pyproject.toml's filterwarnings.
os.environ["ODEKIT_FIRST_RUN_SECONDS"] = "0"
backend.FIRST_RUN_SECONDS = 0.0


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


def gravity(t, x, v, gm):
    """Newtonian gravity of the bodies in the rows of ``x`` (``gm[i] = G m_i``): an N-body problem's force."""
    a = np.zeros_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if i != j:
                r2 = 0.0
                for c in range(x.shape[1]):
                    r2 += (x[j, c] - x[i, c]) ** 2
                s = gm[j] / (r2 * np.sqrt(r2))
                for c in range(x.shape[1]):
                    a[i, c] += s * (x[j, c] - x[i, c])
    return a


def planets(t_end, masses=(1.0, 1e-3, 3e-4), x0=((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (-1.6, 0.1, 0.05)),
            v0=((0.0, 0.0, 0.0), (0.0, 1.05, 0.02), (0.02, -0.78, 0.0)), G=1.0):
    """A star and two planets (G = 1, the inner period about 2 pi), declared an N-body problem, with its energy."""
    import odekit

    gm = G * np.array(masses)

    def energy(t, x, v):
        return odekit.problems.nbody_energy(x, v, masses, G)

    return odekit.SecondOrderProblem(gravity, (0.0, t_end), np.array(x0), np.array(v0), args=(gm,),
                                     velocity_dependent=False, nbody=odekit.NBody(masses, G),
                                     invariants={"energy": energy}, name="planets")
