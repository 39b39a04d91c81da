"""Backward differentiation formulas as data: the orders, and the NDF modification.

Variable-order BDF is run by :mod:`odekit.kernels.bdf` from four
coefficient vectors indexed by the order ``k``: ``gamma_k = sum_{j<=k}
1/j``, ``alpha_k = (1 - kappa_k) gamma_k``, and the error constants
``C_{k+1} = kappa_k gamma_k + 1/(k + 1)`` (Shampine & Reichelt, SIAM J. Sci.
Comput. 18 (1997), section 2).  ``kappa = 0`` gives the classical BDFs;
Klopfenstein and Shampine's ``kappa`` the NDFs, which take steps about 26%
larger at orders 1-4 for the same error, at a small cost in stability.
"""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import checks

NDF_KAPPA = (0, Fraction(-37, 200), Fraction(-1, 9), Fraction(-823, 10000), Fraction(-83, 2000), 0)


@dataclass(frozen=True)
class BDFCoefficients:
    """Variable-order BDF up to ``max_order`` (1 to 5), optionally NDF (``kappa``)."""

    max_order: int = 5
    kappa: tuple = (0, 0, 0, 0, 0, 0)

    def __post_init__(self):
        checks.count("max_order", self.max_order, 1, 5, "1 to 5 (BDF6 and up are not zero-stable)")
        if len(self.kappa) != 6:
            raise ValueError("kappa needs one value per order 0..5")
        object.__setattr__(self, "kappa", tuple(Fraction(k) for k in self.kappa))

    @property
    def stages(self):
        return 1

    fsal = False

    def evaluations_per_step(self):
        """None: one per Newton iteration, which varies."""
        return None

    def order(self):
        return self.max_order

    def embedded_order(self):
        return None

    def dense_matrix(self):
        """No columns, five rows: the dense output's "stages" are the differences ``D_1 .. D_5``
        (see :mod:`odekit.kernels.dense`)."""
        return np.zeros((5, 0))

    def kernel_data(self):
        """``(gamma, alpha, C, G, limits)`` for orders 0..6, ``G = gamma[1:]`` as a row, ``limits = [max_order]``."""
        kappa = [float(k) for k in self.kappa] + [0.0]
        gamma = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, 7))])
        alpha = (1 - np.array(kappa)) * gamma
        error = np.array(kappa) * gamma + 1.0 / np.arange(1, 8)
        return (gamma, alpha, error, np.ascontiguousarray(gamma[1:][None]),
                np.array([self.max_order], dtype=np.int64))
