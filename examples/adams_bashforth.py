"""A method family from outside odekit: the two-step Adams-Bashforth method.

Everything a new family needs, in one file, through odekit's public seams:

1. its coefficients, as data that answers the registry's questions
   (stages, FSAL, embedded order, evaluations per step, kernel data);
2. a stepper in the kernels' Numba subset, marked ``@jitable``, with the
   contract of :mod:`odekit.families` (one attempt from row ``y`` of the
   work matrix into row ``ynew``);
3. a :class:`odekit.Family` and a :class:`odekit.Method`, registered.

The loop, the controllers, recording, dense output, both backends,
``odekit methods`` and the registry-driven tests then apply unchanged::

    python examples/adams_bashforth.py        # order 2 on y' = -y + t, both backends

AB2 with a variable step (Hairer, Nørsett & Wanner, *Solving ODEs I*,
III.5): ``y_{n+1} = y_n + h ((1 + w/2) f_n - (w/2) f_{n-1})``, ``w = h /
h_{n-1}``; order 2, one evaluation per step.  The step after a start (or
after the state was changed) has no ``f_{n-1}`` and is Heun's, of the same
order, at two evaluations.
"""

from dataclasses import dataclass

import numpy as np

import odekit
from odekit.kernels import jitable
from odekit.kernels.evaluation import continues, evaluate_finite, overflowed
from odekit.kernels.layout import CARRY_H, CARRY_T, STAGE, SUCCESS

PREVIOUS = STAGE + 1     # f at the start of the last attempt: f_{n-1} once it was accepted


@dataclass(frozen=True)
class AdamsBashforth2:
    """The coefficients: none beyond the formula, so the kernel data is empty."""

    stages = 1
    fsal = False

    def embedded_order(self):
        return None

    def evaluations_per_step(self):
        return 1

    def kernel_data(self):
        return (np.zeros(0),)


@jitable
def ab2_step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs):
    """One attempt of size ``h`` from row ``y`` into row ``ynew``; returns ``(code, have_f, have_fnew)``."""
    W = scratch[0]
    n = W.shape[1]
    if not have_f:
        code = evaluate_finite(rhs, args, t, W, y, f, ist, fs)
        if code != SUCCESS:
            return code, False, False
        have_f = True
    if continues(fs, t):                      # f_{n-1} is from the accepted step that ended at t
        w = h / fs[CARRY_H]
        for i in range(n):
            W[ynew, i] = W[y, i] + h * ((1.0 + 0.5 * w) * W[f, i] - 0.5 * w * W[PREVIOUS, i])
    else:                                     # no history: Heun's step
        for i in range(n):
            W[ynew, i] = W[y, i] + h * W[f, i]
        code = evaluate_finite(rhs, args, t + h, W, ynew, STAGE, ist, fs)
        if code != SUCCESS:
            return code, have_f, False
        for i in range(n):
            W[ynew, i] = W[y, i] + 0.5 * h * (W[f, i] + W[STAGE, i])
    for i in range(n):
        W[PREVIOUS, i] = W[f, i]
    fs[CARRY_T] = t
    fs[CARRY_H] = h
    return overflowed(W, ynew, fs), have_f, False


FAMILY = odekit.register_family(odekit.Family(
    "adams_bashforth", "explicit Adams-Bashforth (multistep, variable step)", AdamsBashforth2, ab2_step))

AB2 = odekit.register(odekit.Method(
    name="ab2", title="Adams-Bashforth 2 (variable step)", coefficients=AdamsBashforth2(), order=2,
    reference="Bashforth & Adams (1883); Hairer, Nørsett & Wanner, Solving ODEs I (1993), III.1 and III.5",
    stability="explicit multistep: zero-stable; its region is the small lens of AB2 around [-1, 0]"))


if __name__ == "__main__":
    prob = odekit.ODEProblem(lambda t, y: -y + t, (0.0, 2.0), 1.0)
    exact = 1.0 + 2.0 * np.exp(-2.0)
    for backend in ("python", "numba"):
        errors = [abs(float(odekit.solve(prob, "ab2", h=2.0 / n, backend=backend).y[-1]) - exact)
                  for n in (40, 80, 160, 320)]
        slopes = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
        print(f"{backend}: errors {', '.join(f'{e:.2e}' for e in errors)}; observed order {slopes.mean():.2f}")
