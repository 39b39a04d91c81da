"""Butcher and Rosenbrock tableaus: methods as exact, self-checking data.

Coefficients are written as :class:`fractions.Fraction` (rational methods)
or :class:`~odekit.surds.Surd` (``a + b sqrt(d)``, e.g. TR-BDF2, Radau IIA) and
checked at construction, so a mistyped coefficient fails on import, not
in a user's simulation.  ``kernel_data()`` gives the float arrays the kernels
run on.
"""

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from . import order_conditions
from .surds import exact


_exact = exact      # Fractions, or Surds a + b sqrt(d) for irrational methods


def _vector(name, values, s):
    values = tuple(_exact(v) for v in values)
    if len(values) != s:
        raise ValueError(f"{name} has {len(values)} entries; the tableau has {s} stages")
    return values


def _weights(tableau, tolerance=0, names=("b_hat",)):
    """Make ``b`` and the embedded weights ``names`` exact and check that each sums to one (within
    ``tolerance``); return the stages."""
    s = len(tableau.b)
    object.__setattr__(tableau, "b", _vector("b", tableau.b, s))
    if abs(sum(tableau.b) - 1) > tolerance:
        raise ValueError(f"the weights b sum to {sum(tableau.b)}, not 1")
    for name in names:
        if getattr(tableau, name) is not None:
            object.__setattr__(tableau, name, _vector(name, getattr(tableau, name), s))
            if abs(sum(getattr(tableau, name)) - 1) > tolerance:
                raise ValueError(f"the embedded weights {name} sum to {sum(getattr(tableau, name))}, not 1")
    return s


def _square(name, rows, s):
    """A ``s x s`` matrix; short rows (lower-triangular shorthand) are zero-padded."""
    rows = tuple(tuple(_exact(v) for v in row) for row in rows)
    if len(rows) != s or any(len(row) > s for row in rows):
        raise ValueError(f"{name} must be {s} x {s} (rows may be shortened on the right)")
    return tuple(row + (Fraction(0),) * (s - len(row)) for row in rows)


@dataclass(frozen=True)
class ButcherTableau:
    """A Runge--Kutta method ``(c, A, b)``, optionally with an embedded ``b_hat``.

    Parameters
    ----------
    c, A, b : sequences of numbers (exact ``Fraction`` where rational)
        Nodes, stage matrix (rows may be written lower-triangular and short),
        weights.
    b_hat : sequence, optional
        Weights of the embedded method; ``y_new - y_hat`` estimates the error.
    dense : sequence of rows, optional
        Continuous extension: ``y(t + theta h) = y + h sum_i K_i sum_j
        dense[i][j] theta^(j+1)``.  Must give ``b`` at ``theta = 1``; one
        row per stage, the interpolation stages included.
    b_hat2 : sequence, optional
        A second, lower-order embedded method (DOP853's third-order one).
        With it the step's error is Hairer's blend of the two estimates
        ``e = b - b_hat`` and ``e2 = b - b_hat2``: ``|e|^2 / sqrt(|e|^2 +
        0.01 |e2|^2)`` in the error norm, which behaves as ``h^(2 q - q2 + 1)``
        for embedded orders ``q > q2`` (``h^8`` for DOP853's 5 and 3) and
        keeps the order-``q`` estimate from being too optimistic where
        ``e`` happens to be small (Hairer, Nørsett & Wanner, *Solving ODEs I*,
        II.10).
    dense_c, dense_A : sequences, optional
        Interpolation stages: stage ``s + k`` is ``f(t + dense_c[k] h, y + h
        sum_j dense_A[k][j] K_j)`` over the step's stages and the
        interpolation stages before it.  The run evaluates them only for a
        step whose interpolant is used (``t_eval`` inside it, dense output,
        events), after the step was accepted.
    tolerance : Fraction, optional
        For coefficients published as rounded decimals (write them as
        strings: ``"0.0526001519587677318785587544488"`` is that decimal
        exactly): the row sums, the weights' sums and the order conditions
        then hold to within it rather than exactly.

    Raises
    ------
    ValueError
        If a row of ``A`` does not sum to its node ``c_i``, or ``b``,
        ``b_hat`` do not sum to one, or ``dense`` does not end at ``b``.
    """

    c: tuple
    A: tuple
    b: tuple
    b_hat: tuple | None = None
    dense: tuple | None = None
    b_hat2: tuple | None = None
    dense_c: tuple = ()
    dense_A: tuple = ()
    tolerance: Fraction = Fraction(0)

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "tolerance", _exact(self.tolerance))
        s = _weights(self, self.tolerance, ("b_hat", "b_hat2"))
        set_(self, "c", _vector("c", self.c, s))
        set_(self, "A", _square("A", self.A, s))
        extra = len(self.dense_c)
        set_(self, "dense_c", _vector("dense_c", self.dense_c, extra))
        if len(self.dense_A) != extra or any(len(row) > s + k for k, row in enumerate(self.dense_A)):
            raise ValueError(f"dense_A must have one row per interpolation stage ({extra}), row k of at most "
                             f"{s} + k entries")
        set_(self, "dense_A", tuple(tuple(_exact(v) for v in row) + (Fraction(0),) * (s + extra - len(row))
                                    for row in self.dense_A))
        if extra and self.dense is None:
            raise ValueError("interpolation stages (dense_c, dense_A) need a continuous extension (dense)")
        if self.b_hat2 is not None and self.b_hat is None:
            raise ValueError("b_hat2 blends with the estimate of b_hat: give b_hat too")
        if self.dense is not None:
            rows = tuple(tuple(_exact(v) for v in row) for row in self.dense)
            if len(rows) != s + extra:
                raise ValueError(f"dense has {len(rows)} rows; the tableau has {s + extra} stages")
            set_(self, "dense", rows)
        for i, (ci, row) in enumerate(zip(self.c + self.dense_c, self.A + self.dense_A)):
            if abs(sum(row) - ci) > self.tolerance:
                name = "A" if i < s else "dense_A"
                raise ValueError(f"row {i if i < s else i - s} of {name} sums to {sum(row)}, but "
                                 f"{'c' if i < s else 'dense_c'}[{i if i < s else i - s}] = {ci}")
        if self.dense is not None:
            for i, (row, bi) in enumerate(zip(self.dense, self.b + (0,) * extra)):
                if abs(sum(row) - bi) > self.tolerance:
                    raise ValueError(f"dense row {i} sums to {sum(row)} at theta = 1, not b[{i}] = {bi}")
            # sum_i b_i(theta) = theta, which the kernels' interpolation relies on (kernels.dense)
            for j, column in enumerate(zip(*self.dense)):
                if abs(sum(column) - (j == 0)) > self.tolerance:
                    raise ValueError(f"the weights of the continuous extension sum to {sum(column)} times "
                                     f"theta^{j + 1}, not {int(j == 0)}: it is not even of order 1")

    @property
    def stages(self):
        return len(self.b)

    @cached_property
    def explicit(self):
        """True when ``A`` is strictly lower triangular (asked by every run: computed once)."""
        return all(self.A[i][j] == 0 for i in range(self.stages) for j in range(i, self.stages))

    @property
    def diagonally_implicit(self):
        """True when ``A`` is lower triangular (each stage solved on its own)."""
        return all(self.A[i][j] == 0 for i in range(self.stages) for j in range(i + 1, self.stages))

    @property
    def fsal(self):
        """First same as last: the last stage is f(t + h, y_new) and starts the next step."""
        return self.explicit and self.c[-1] == 1 and self.A[-1] == self.b

    @property
    def interpolation_stages(self):
        """Stages evaluated only for the continuous extension (``dense_c``)."""
        return len(self.dense_c)

    def evaluations_per_step(self):
        """Stages, less one when FSAL; None for implicit stages (Newton's iterations vary).

        The interpolation stages are not counted: a step pays for them only
        when its interpolant is used.
        """
        return self.stages - self.fsal if self.explicit else None

    def order(self, max_order=8):
        """The order of ``(A, b)`` from the order conditions (exact, or within ``tolerance``)."""
        return order_conditions.order_of(self.A, self.b, max_order, self.tolerance)

    def embedded_order(self, max_order=8):
        """The order of the embedded method ``(A, b_hat)``, or None."""
        if self.b_hat is None:
            return None
        return order_conditions.order_of(self.A, self.b_hat, max_order, self.tolerance)

    def error_order(self):
        """The order the error estimate behaves as, less one (the controller's ``k - 1``): the
        embedded order, or with a second estimate ``b_hat2`` of order ``q2`` Hairer's blend,
        ``O(h^(2 q - q2 + 1))``, capped at the method's order."""
        q = self.embedded_order()
        if q is None or self.b_hat2 is None:
            return q
        q2 = order_conditions.order_of(self.A, self.b_hat2, q, self.tolerance)
        return min(2 * q - q2, self.order())

    @cached_property
    def all_stages(self):
        """The stage matrix of the step's stages and the interpolation stages: what ``dense`` combines."""
        n = self.stages + self.interpolation_stages
        return tuple(row + (Fraction(0),) * (n - len(row)) for row in self.A) + self.dense_A

    def dense_order(self, max_order=8):
        """The order of the continuous extension at every ``theta`` (None without one)."""
        if self.dense is None:
            return None
        return order_conditions.dense_order_of(self.all_stages, self.dense, max_order, self.tolerance)

    def kernel_data(self):
        """``(T, c, flags)`` for the kernels: ``T`` stacks ``A``, ``b`` and ``e = b - b_hat``.

        ``e`` is a row of zeros without an embedded pair; ``flags = [fsal,
        estimate, one_diagonal, extra, blend]``: ``one_diagonal`` when the
        implicit stages share one diagonal value (an SDIRK: the error estimate
        can be filtered by its Newton matrix), ``extra`` the number of
        interpolation stages and ``blend`` when there is a second estimate.
        With either of the last two, ``T`` goes on with ``e2 = b - b_hat2``
        (zeros without it) and the rows of ``dense_A``; ``c`` holds the
        nodes of the step's stages, then ``dense_c``.
        """
        diagonal = {self.A[i][i] for i in range(self.stages)} - {0}
        flags = np.array([self.fsal, self.b_hat is not None, len(diagonal) == 1, self.interpolation_stages,
                          self.b_hat2 is not None], dtype=np.int64)
        T = _stacked(self.A, self.b, self.b_hat)
        if self.interpolation_stages or self.b_hat2 is not None:
            e2 = _stacked([], self.b, self.b_hat2)[-1:]
            T = np.vstack([np.pad(np.vstack([T, e2]), ((0, 0), (0, self.interpolation_stages))),
                           np.array(self.dense_A, dtype=float).reshape(-1, T.shape[1] + self.interpolation_stages)])
        return T, np.array(self.c + self.dense_c, dtype=float), flags

    def dense_matrix(self):
        """The continuous extension as a float array (``0 x 0`` when absent)."""
        return np.zeros((0, 0)) if self.dense is None else np.array(self.dense, dtype=float)


@dataclass(frozen=True)
class CollocationTableau(ButcherTableau):
    """A fully implicit Runge--Kutta method (Radau IIA), solved as Hairer & Wanner's RADAU5 does.

    The stage system is decoupled by the eigenvectors of ``A^-1`` (one real
    eigenvalue ``gamma`` and a complex pair for three stages) into one real
    and one complex linear system per Newton iteration (*Solving ODEs II*,
    IV.8).  The error is estimated as ``(gamma/h I - J)^-1 (f(t, y) + sum_i
    error_i Z_i / h)`` with ``Z_i`` the stage increments: an estimate of
    order ``estimate_order`` filtered for stiff components (eq. IV.8.20).
    """

    error: tuple = ()
    estimate_order: int = 0

    def __post_init__(self):
        super().__post_init__()
        if self.stages != 3 or len(self.error) != 3:
            raise ValueError("the Radau kernel solves three stages with three error weights")
        object.__setattr__(self, "error", _vector("error", self.error, 3))

    def embedded_order(self, max_order=8):
        return self.estimate_order

    def kernel_data(self):
        """``(T, TI, c, E, lam)``: the eigenvector basis of ``A^-1`` and its inverse, the nodes,
        the error weights (1 x 3) and the eigenvalues ``[gamma, alpha, beta]`` (``alpha +- i beta``).

        With ``T = [u, p, q]`` for ``A^-1 u = gamma u`` and ``A^-1 (p + i q) =
        (alpha + i beta)(p + i q)``: ``T^-1 A^-1 T = [[gamma, 0, 0], [0, alpha,
        beta], [0, -beta, alpha]]``.
        """
        w, V = np.linalg.eig(np.linalg.inv(np.array(self.A, dtype=float)))
        real, pair = int(np.argmin(np.abs(w.imag))), int(np.argmax(w.imag))
        T = np.column_stack([V[:, real].real, V[:, pair].real, V[:, pair].imag])
        lam = np.array([w[real].real, w[pair].real, w[pair].imag])
        return (np.ascontiguousarray(T), np.linalg.inv(T), np.array(self.c, dtype=float),
                np.array([self.error], dtype=float), lam)


@dataclass(frozen=True)
class RosenbrockTableau:
    """A Rosenbrock method ``(alpha, gamma, b)`` with one diagonal value ``gamma``.

    Stage ``i`` solves ``(I - h gamma J) k_i = h f(t + c_i h, y + sum_j alpha_ij
    k_j) + h J sum_j gamma_ij k_j + h^2 d_i f_t``, ``y_new = y + sum b_i k_i``
    (Hairer & Wanner, *Solving ODEs II*, IV.7).  ``alpha`` is strictly lower
    triangular, ``gamma`` lower triangular with a constant diagonal.
    ``time_derivative=False`` drops the ``f_t`` term (as Baraff & Witkin's
    linearised Euler does), which is exact for autonomous problems.

    ``tolerance`` is for coefficients published as rounded decimals (most
    Rosenbrock methods, found numerically): the weights and the order
    conditions then hold to within it rather than exactly.  ``nodes`` are
    then the published ``c_i`` (within ``tolerance`` of ``alpha``'s row
    sums), where the row sums of the rounded ``alpha`` would miss them: a
    last stage at ``c = 1 + 4e-15`` evaluates ``f`` past the step's end,
    and past ``t_end``.
    """

    alpha: tuple
    gamma: tuple
    b: tuple
    b_hat: tuple | None = None
    time_derivative: bool = True
    tolerance: Fraction = Fraction(0)
    nodes: tuple | None = None

    @classmethod
    def from_transformed(cls, gamma, a, c, m, m_hat=None, tolerance=0, time_derivative=True, nodes=None):
        """From the coefficients as implemented by Hairer & Wanner (their RODAS code).

        Their stages are ``u_i = sum_j gamma_ij k_j``, which removes the
        matrix-vector products (*Solving ODEs II*, IV.7, eq. 7.17--7.18):
        ``a = alpha Gamma^-1``, ``C = diag(1/gamma) - Gamma^-1``, ``m = b
        Gamma^-1``.  So ``Gamma = (I/gamma - C)^-1``, ``alpha = a Gamma``,
        ``b = m Gamma``, ``b_hat = m_hat Gamma``, all in exact arithmetic (give
        decimals as strings: ``"0.9466785280815826"`` is that decimal exactly).
        """
        g = _exact(gamma)
        s = len(m)
        A, C = _square("a", a, s), _square("c", c, s)
        G = _lower_inverse([[(1 / g if i == j else -C[i][j]) for j in range(s)] for i in range(s)])  # I/gamma - C
        return cls(alpha=[_times(row, G) for row in A], gamma=G, b=_times(_vector("m", m, s), G),
                   b_hat=None if m_hat is None else _times(_vector("m_hat", m_hat, s), G),
                   time_derivative=time_derivative, tolerance=_exact(tolerance), nodes=nodes)

    def __post_init__(self):
        s = _weights(self, self.tolerance)
        set_ = object.__setattr__
        set_(self, "alpha", _square("alpha", self.alpha, s))
        set_(self, "gamma", _square("gamma", self.gamma, s))
        if any(self.alpha[i][j] != 0 for i in range(s) for j in range(i, s)):
            raise ValueError("alpha must be strictly lower triangular")
        if any(self.gamma[i][j] != 0 for i in range(s) for j in range(i + 1, s)):
            raise ValueError("gamma must be lower triangular")
        if len({self.gamma[i][i] for i in range(s)}) != 1 or self.gamma[0][0] == 0:
            raise ValueError("gamma must have one non-zero value on its diagonal")
        if self.nodes is not None:
            set_(self, "nodes", _vector("nodes", self.nodes, s))
            sums = [sum(row) for row in self.alpha]
            if any(abs(c - r) > self.tolerance for c, r in zip(self.nodes, sums)):
                raise ValueError(f"nodes must be alpha's row sums within tolerance {float(self.tolerance):.1e}")

    @property
    def stages(self):
        return len(self.b)

    @property
    def c(self):
        return self.nodes if self.nodes is not None else tuple(sum(row) for row in self.alpha)

    fsal = False

    def evaluations_per_step(self):
        """One per stage (plus a Jacobian, and two for df/dt unless the problem is autonomous)."""
        return self.stages

    def residuals(self, order, weights=None):
        """Residuals of the order-``order`` conditions (exact; zero when they hold), one per rooted tree.

        The method's B-series, as Butcher's for Runge--Kutta methods
        (:mod:`odekit.order_conditions`; Hairer & Wanner, *Solving ODEs II*,
        IV.7): ``sum_i b_i Phi_i(t) = 1/gamma(t)``, with ``Phi_i`` of a leaf
        1, of a vertex with several subtrees ``prod_k (alpha Phi(t_k))_i``,
        and of a vertex with one subtree ``(beta Phi(t_1))_i``, ``beta =
        alpha + Gamma`` with its diagonal: a single subtree is where ``J``
        acts, through ``f``'s derivative in the stage and through the terms
        ``gamma_ij J k_j``.  To order 4 these are the conditions of their
        Table IV.7.1 (there ``beta`` leaves out the diagonal, moved into the
        right-hand sides as powers of ``gamma``).
        """
        b = self.b if weights is None else weights
        return [order_conditions.residual(self.alpha, b, tree, single=self._beta)
                for tree in order_conditions.rooted_trees(order)]

    @cached_property
    def _beta(self):
        """``alpha + Gamma``, its diagonal included: the matrix of a vertex with one subtree."""
        return tuple(tuple(a + g for a, g in zip(ra, rg)) for ra, rg in zip(self.alpha, self.gamma))

    def satisfies(self, order, weights=None):
        """True when the conditions of ``order`` hold (within ``tolerance``)."""
        return all(abs(r) <= self.tolerance for r in self.residuals(order, weights))

    def order(self, max_order=6):
        p = 0
        while p < max_order and self.satisfies(p + 1):
            p += 1
        return p

    def embedded_order(self, max_order=6):
        if self.b_hat is None:
            return None
        p = 0
        while p < max_order and self.satisfies(p + 1, self.b_hat):
            p += 1
        return p

    def kernel_data(self):
        """``(T, C, c, d, flags)`` for the kernels, in Hairer & Wanner's transformed variables.

        With ``u_i = sum_j gamma_ij k_j`` (*Solving ODEs II*, IV.7, eqs.
        7.17-7.18; their RODAS code) the stages need no product with ``J``:
        ``T`` stacks ``a = alpha Gamma^-1``, ``m = b Gamma^-1`` and ``m -
        m_hat``; ``C``, below its diagonal ``gamma (diag(1/gamma) - Gamma^-1)``
        (their C times ``gamma``, for the matrix ``I - h gamma J``), on it
        ``gamma``; ``c`` the nodes, ``d`` the row sums of ``Gamma`` (zero
        without the time derivative), ``flags = [estimate, time_derivative]``.
        All in exact arithmetic, rounded once.
        """
        s, g = self.stages, self.gamma[0][0]
        inverse = _lower_inverse(self.gamma)
        C = [[g if i == j else -g * inverse[i][j] for j in range(s)] for i in range(s)]
        d = [sum(row) for row in self.gamma] if self.time_derivative else [0] * s
        return (_stacked([_times(row, inverse) for row in self.alpha], _times(self.b, inverse),
                         None if self.b_hat is None else _times(self.b_hat, inverse)),
                np.array(C, dtype=float), np.array(self.c, dtype=float), np.array(d, dtype=float),
                np.array([self.b_hat is not None, self.time_derivative], dtype=np.int64))


def _times(row, M):
    """The row vector ``row`` times the square matrix ``M`` (exact entries)."""
    return [sum(row[k] * M[k][j] for k in range(len(row))) for j in range(len(row))]


def _lower_inverse(L):
    """The inverse of the lower triangular matrix ``L`` (exact entries), by forward substitution."""
    s = len(L)
    inverse = [[Fraction(0)] * s for _ in range(s)]
    for j in range(s):
        for i in range(j, s):
            rhs = Fraction(1 if i == j else 0) - sum(L[i][k] * inverse[k][j] for k in range(j, i))
            inverse[i][j] = rhs / L[i][i]
    return inverse


def _stacked(A, b, b_hat):
    """The kernels' coefficient matrix: the rows of ``A``, then ``b``, then ``b - b_hat`` (or zeros)."""
    e = [0] * len(b) if b_hat is None else [x - y for x, y in zip(b, b_hat)]
    return np.array([*A, b, e], dtype=float)
