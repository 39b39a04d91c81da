"""Verner's "most efficient" pairs 7(6), 8(7) and 9(8), with their interpolants.

Each pair propagates the higher-order result; its interpolant needs a few
more stages (the first of them ``f(t + h, y_new)``), which a run evaluates
only for the steps whose interpolant it uses.  The coefficients are in
:mod:`.verner_data`: the stages of the steps exact (rationals; Vern9's in
``Q(sqrt 6)``), the interpolation stages and polynomials as Verner's
40-digit decimals.
"""

from fractions import Fraction as F

from ..registry import Method, register
from ..surds import Surd
from ..tableau import ButcherTableau
from . import verner_data

SITE = "Verner's tables, https://www.sfu.ca/~jverner/"


def _number(x):
    """``"p/q"`` or a decimal string as a Fraction; a pair ``(a, b)`` as ``a + b sqrt(6)``."""
    if isinstance(x, tuple):
        return F(x[0]) + F(x[1]) * Surd.sqrt(6)
    return F(x)


def _tableau(data):
    """The ButcherTableau of one of :mod:`.verner_data`'s dicts."""
    A, P = data["A"], data["P"]
    s, n = max(data["e"]), max(i for i, _ in A)
    degree = max(k for _, k in P)
    rows = [[_number(A.get((i, j), 0)) for j in range(1, i)] for i in range(1, n + 1)]
    b = [_number(data["b"].get(i, 0)) for i in range(1, s + 1)]
    return ButcherTableau(
        c=[sum(row, F(0)) for row in rows[:s]], A=rows[:s], b=b,
        b_hat=[x - _number(data["e"].get(i, 0)) for i, x in enumerate(b, start=1)],
        dense=[[_number(P.get((i, k), 0)) for k in range(1, degree + 1)] for i in range(1, n + 1)],
        dense_c=[_number(data["dense_c"][i]) for i in range(s + 1, n + 1)], dense_A=rows[s:],
        tolerance=F(1, 10 ** 30))


register(Method(
    "vern7", "Verner 7(6)", _tableau(verner_data.VERN7), order=7,
    reference="Verner, Numer. Algorithms 53 (2010), 'Numerically optimal Runge-Kutta pairs with interpolants': "
              "the 'most efficient' 7(6) pair and its 16-stage interpolant; " + SITE,
    stability="real interval [-4.640, 0]; slightly unstable (|R| > 1) on the imaginary axis near 0"))

register(Method(
    "vern8", "Verner 8(7)", _tableau(verner_data.VERN8), order=8,
    reference="Verner, Numer. Algorithms 53 (2010): the 'most efficient' 8(7) pair and its 21-stage "
              "interpolant; " + SITE,
    stability="real interval [-5.864, 0]; slightly unstable (|R| > 1) on the imaginary axis near 0"))

register(Method(
    "vern9", "Verner 9(8)", _tableau(verner_data.VERN9), order=9,
    reference="Verner, Numer. Algorithms 53 (2010): the 'most efficient' 9(8) pair and its 26-stage "
              "interpolant; " + SITE,
    stability="real interval [-4.476, 0]; imaginary axis |hω| <= 2.757"))
