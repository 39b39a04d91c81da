"""Order conditions of Runge--Kutta methods, in exact arithmetic.

A Runge--Kutta method has order ``p`` when, for every rooted tree ``t`` with
at most ``p`` vertices, its elementary weight equals ``1 / gamma(t)``
(Butcher; Hairer, Nørsett & Wanner, *Solving ODEs I*, Theorem II.2.13):

    sum_i b_i Phi_i(t) = 1 / gamma(t),

where ``Phi_i(leaf) = 1``, ``Phi_i([t_1, ..., t_m]) = prod_k (A Phi(t_k))_i``
and ``gamma([t_1, ..., t_m]) = |t| * prod_k gamma(t_k)``.  With the
coefficients held as :class:`fractions.Fraction`, each condition holds or
fails exactly; for coefficients published as rounded decimals, within a
``tolerance`` far below the residuals of the conditions that fail.

A continuous extension ``b_i(theta) = sum_j P[i][j] theta^(j+1)`` has order
``p`` when ``sum_i b_i(theta) Phi_i(t) = theta^|t| / gamma(t)`` for every
``theta`` and every tree with at most ``p`` vertices (*Solving ODEs I*,
II.6): one condition per tree and power of ``theta``.
"""

from fractions import Fraction
from functools import lru_cache
from math import prod


@lru_cache(maxsize=None)
def rooted_trees(order):
    """All rooted trees with ``order`` vertices, each a sorted tuple of subtrees.

    The leaf is ``()``.  There are 1, 1, 2, 4, 9, 20, 48 trees of order 1..7.
    """
    if order == 1:
        return ((),)
    return tuple(sorted(set(_forests(order - 1, order - 1))))


def _forests(total, largest):
    """Sorted tuples of trees whose orders sum to ``total``, each <= ``largest``."""
    if total == 0:
        yield ()
        return
    for size in range(min(total, largest), 0, -1):
        for tree in rooted_trees(size):
            for rest in _forests(total - size, size):
                # keep children in non-increasing (size, tree) order: one form per multiset
                if rest and (size, tree) < (_size(rest[0]), rest[0]):
                    continue
                yield (tree,) + rest


@lru_cache(maxsize=None)
def _size(tree):
    return 1 + sum(_size(child) for child in tree)


@lru_cache(maxsize=None)
def density(tree):
    """``gamma(t)``: the tree's order times the densities of its subtrees."""
    return _size(tree) * prod(density(child) for child in tree)


class _Weights:
    """``Phi_i(t)`` of one stage matrix, each tree's computed once: subtrees repeat across trees.

    The arithmetic of exact (or 80-digit) coefficients is what costs, so
    ``(A Phi(t))_i`` is kept too; hashing a matrix of Fractions to find its
    memo would cost as much, so the memos are found by the matrix's identity
    (a few kept, each with its matrix).  ``single``, when given, is the
    matrix of a vertex with one subtree, ``Phi_i([t]) = (single Phi(t))_i``:
    a Rosenbrock method's ``alpha + Gamma`` (see
    :meth:`odekit.tableau.RosenbrockTableau.residuals`); without it, ``A``.
    """

    def __init__(self, A, single=None):
        self.A, self.single = A, single
        self.s = len(A)
        self.phi, self.a_phi, self.single_phi = {}, {}, {}

    def __call__(self, tree):
        if tree not in self.phi:
            if len(tree) == 1 and self.single is not None:
                self.phi[tree] = self._times(self.single, self.single_phi, tree[0])
            else:
                out = [Fraction(1)] * self.s
                for child in tree:
                    row = self._times(self.A, self.a_phi, child)
                    out = [x * y for x, y in zip(out, row)]
                self.phi[tree] = out
        return self.phi[tree]

    def _times(self, M, memo, tree):
        """``(M Phi(tree))_i``, kept in ``memo``."""
        if tree not in memo:
            inner = self(tree)
            memo[tree] = [sum(a * x for a, x in zip(row, inner) if a) for row in M]
        return memo[tree]


_MEMOS = {}


def _internal_weights(A, tree, single=None):
    """``Phi_i(t)`` for each stage ``i`` (``single``: see :class:`_Weights`)."""
    key = (id(A), id(single))
    memo = _MEMOS.get(key)
    if memo is None or memo.A is not A or memo.single is not single:
        if len(_MEMOS) >= 16:
            _MEMOS.pop(next(iter(_MEMOS)))
        memo = _MEMOS[key] = _Weights(A, single)
    return memo(tree)


def residual(A, b, tree, single=None):
    """``sum_i b_i Phi_i(t) - 1/gamma(t)``: zero when the condition holds (``single``: see :class:`_Weights`)."""
    phi = _internal_weights(A, tree, single)
    return sum(bi * pi for bi, pi in zip(b, phi)) - Fraction(1, density(tree))


def satisfies(A, b, order, tolerance=0):
    """True when ``(A, b)`` satisfies every condition of orders ``1..order`` (within ``tolerance``)."""
    return all(abs(residual(A, b, tree)) <= tolerance
               for q in range(1, order + 1) for tree in rooted_trees(q))


def order_of(A, b, max_order=8, tolerance=0):
    """The largest ``p <= max_order`` whose conditions all hold (within ``tolerance``)."""
    p = 0
    while p < max_order and all(abs(residual(A, b, t)) <= tolerance for t in rooted_trees(p + 1)):
        p += 1
    return p


def dense_residuals(A, P, tree):
    """The residuals of a continuous extension's conditions for ``tree``, one per power of ``theta``.

    ``A`` holds every stage the extension combines (interpolation stages
    included), ``P`` its rows.  A tree of more vertices than ``P`` has
    columns asks for a power of ``theta`` that ``P`` lacks: its ``1/gamma``
    is a residual too.
    """
    phi = _internal_weights(A, tree)
    q, degree = _size(tree), len(P[0])
    target = Fraction(1, density(tree))
    out = [sum(row[j] * p for row, p in zip(P, phi)) - (target if j + 1 == q else 0) for j in range(degree)]
    return out + ([-target] if q > degree else [])


def dense_order_of(A, P, max_order=8, tolerance=0):
    """The largest ``p <= max_order`` for which the extension ``P`` has order ``p`` at every ``theta``."""
    p = 0
    while p < max_order and all(abs(r) <= tolerance for t in rooted_trees(p + 1)
                                for r in dense_residuals(A, P, t)):
        p += 1
    return p
