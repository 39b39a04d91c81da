"""Exact numbers a + b sqrt(d): irrational methods checked as exactly as rational ones."""

from decimal import Decimal, localcontext
from fractions import Fraction as F
import math

import pytest

from odekit import analysis
from odekit.registry import Method
from odekit.surds import Surd
from odekit.tableau import ButcherTableau

R2 = Surd.sqrt(2)


def test_field_arithmetic_is_exact():
    g = 2 - R2                                   # TR-BDF2's gamma: a root of g^2 - 4 g + 2
    assert g * g - 4 * g + 2 == 0 and isinstance(g * g - 4 * g + 2, F)
    assert 1 / g == 1 + R2 / 2 and (1 / g) * g == 1
    assert (R2 ** 3) == 2 * R2 and R2 ** -2 == F(1, 2)
    assert F(1, 3) - R2 == -(R2 - F(1, 3))


def test_order_is_exact_where_floats_cannot_tell():
    # Pell convergents p/q of sqrt(2) get within 1/(2 q^2) of it: past 1e-17 floats see equality
    p, q = 1, 1
    while abs(p / q - math.sqrt(2)) > 0 or q < 10**9:
        p, q = p + 2 * q, p + q
    x = F(p, q)
    assert float(x) == float(R2)                 # indistinguishable in double precision
    assert (x > R2) == (p * p > 2 * q * q)       # but the exact order is decided: p^2 - 2 q^2 = +-1
    assert (x < R2) == (p * p < 2 * q * q) and x != R2
    assert sorted([R2, F(7, 5), -R2, F(3, 2)]) == [-R2, F(7, 5), R2, F(3, 2)]


def test_float_is_correctly_rounded():
    with localcontext() as ctx:
        ctx.prec = 60
        exact = float(2 - Decimal(2).sqrt())
    assert float(2 - R2) == exact
    assert 2 - math.sqrt(2) != exact              # what naive float arithmetic would give
    assert float(F(10**20) + R2) == 1e20           # no cancellation trouble either way


def test_bad_radicands_and_mixed_fields_are_refused():
    for d in (1, 4, 12, 0):
        with pytest.raises(ValueError, match="square-free"):
            Surd.sqrt(d)
    with pytest.raises(ValueError, match="share a field"):
        R2 + Surd.sqrt(3)


def test_an_irrational_tableau_is_checked_and_analysed_exactly():
    """Alexander's two-stage SDIRK, gamma = 1 - sqrt(2)/2: order 2 exactly, L-stable."""
    g = 1 - R2 / 2
    tab = ButcherTableau(c=[g, 1], A=[[g], [1 - g, g]], b=[1 - g, g])
    assert tab.order() == 2                       # and not 3: the exact conditions decide
    m = Method("sdirk2_test", "test", tab, order=2, reference="Alexander, SIAM J. Numer. Anal. 14 (1977)",
               stability="L-stable")
    assert analysis.is_a_stable(m) and analysis.is_l_stable(m)
    R = analysis.stability_function(m)
    assert abs(R(-1e12)) < 1e-11
    with pytest.raises(ValueError, match="row 1 of A sums"):
        ButcherTableau(c=[g, 1], A=[[g], [1 - g, g + F(1, 10**30)]], b=[1 - g, g])
