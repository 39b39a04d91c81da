"""Dense output: the state between two accepted steps.

A method with its own continuous extension carries a matrix ``P`` with
``y(t + theta h) = y + h sum_i K_i sum_j P[i, j] theta^(j+1)`` (for example
Dormand--Prince's order-4 interpolant), evaluated from the nearer end of the
step (from ``y1`` with ``theta^(j+1) - 1``): the same polynomial, but exactly
``y1`` at ``theta = 1`` where large coefficients (DOP853's reach 500) would
leave a rounding error of many ulps.  And as ``theta K_1 + sum_i w_i(theta)
(K_i - K_1)``, the weights summing to ``theta`` (the extension's first-order
condition): the large weights (Verner's 8(7) reaches 1.4e6) then multiply
differences of order ``h``, and their rounding, 1e-10 of ``h f`` in the
plain sum, becomes one of ``h^2 f'``.  A ``P`` with rows but no columns
says that the "stages" ``K_1, K_2, ...`` are backward differences of the
solution at spacing ``h`` ending at ``y1`` (BDF's history): the
interpolant is then their Newton form,
``y1 + sum_j K_j prod_{i<j} (theta - 1 + i) / (i + 1)``, written from the
nearer end so that it is exact at both.  Every other method uses the cubic
Hermite interpolant through ``(y0, f0)`` and ``(y1, f1)``, which is third
order and exact at both ends.
"""

from . import compiled_as, jitable
from .primitives import axpy, axpy_difference, copy_row


def _hermite_loop(out, row, W, y0, y1, f0, f1, c):
    for q in range(W.shape[1]):
        out[row, q] = (c[0] * W[y0, q] + c[1] * W[y1, q]) + c[2] * W[f0, q] + c[3] * W[f1, q]


@compiled_as(_hermite_loop)
def hermite(out, row, W, y0, y1, f0, f1, c):
    """``out[row] = c0 W[y0] + c1 W[y1] + c2 W[f0] + c3 W[f1]``."""
    out[row] = (c[0] * W[y0] + c[1] * W[y1]) + c[2] * W[f0] + c[3] * W[f1]


@jitable(cold=True)
def interpolate(P, theta, h, W, y0, y1, f0, f1, k0, out, row):
    """Write the state at ``t0 + theta * h`` (0 <= theta <= 1) into ``out[row]``.

    ``W`` holds the end points ``y0, y1``, their derivatives ``f0, f1`` and,
    for a method with its own interpolant, the stages from row ``k0`` on.
    """
    if P.shape[0] > 0 and P.shape[1] == 0:       # backward differences, from the nearer end
        start = theta < 0.5                        # y0 = y1 - K_1: the same polynomial, exact at theta = 0
        copy_row(out, row, W, y0 if start else y1)
        weight = 1.0
        for j in range(P.shape[0]):
            weight *= (theta - 1.0 + j) / (j + 1.0)
            axpy(out, row, theta if start and j == 0 else weight, W, k0 + j)
        return
    if P.shape[0] > 0:                           # from the nearer end, too: exact at both
        start = theta < 0.5
        copy_row(out, row, W, y0 if start else y1)
        end = 0.0 if start else 1.0               # y1 = y0 + h sum_i K_i sum_j P[i, j]
        # the weights sum to theta - end: K_1 takes that, the others their differences from it
        axpy(out, row, h * (theta - end), W, k0)
        for i in range(1, P.shape[0]):
            weight = 0.0
            power = theta
            for j in range(P.shape[1]):
                weight += P[i, j] * (power - end)
                power *= theta
            axpy_difference(out, row, h * weight, W, k0 + i, k0)
        return
    t2 = theta * theta
    t3 = t2 * theta
    hermite(out, row, W, y0, y1, f0, f1,
            (2.0 * t3 - 3.0 * t2 + 1.0, -2.0 * t3 + 3.0 * t2, h * (t3 - 2.0 * t2 + theta), h * (t3 - t2)))
