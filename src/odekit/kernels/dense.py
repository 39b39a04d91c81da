"""Dense output: the state between two accepted steps.

A method with its own continuous extension carries a matrix ``P`` with
``y(t + theta h) = y + h sum_i K_i sum_j P[i, j] theta^(j+1)`` (for example
Dormand--Prince's order-4 interpolant).  Every other method uses the cubic
Hermite interpolant through ``(y0, f0)`` and ``(y1, f1)``, which is third
order and exact at both ends.
"""

from . import jitable
from .primitives import axpy, copy_into


@jitable
def interpolate(P, theta, h, y0, y1, f0, f1, K, out):
    """Write the state at ``t0 + theta * h`` (0 <= theta <= 1) into ``out``."""
    if P.shape[0] > 0:
        copy_into(out, y0)
        for i in range(P.shape[0]):
            weight = 0.0
            power = theta
            for j in range(P.shape[1]):
                weight += P[i, j] * power
                power *= theta
            axpy(out, h * weight, K[i])
        return
    t2 = theta * theta
    t3 = t2 * theta
    out[:] = (2.0 * t3 - 3.0 * t2 + 1.0) * y0 + (-2.0 * t3 + 3.0 * t2) * y1
    axpy(out, h * (t3 - 2.0 * t2 + theta), f0)
    axpy(out, h * (t3 - t2), f1)
