"""Butcher and Rosenbrock tableaus: methods as exact, self-checking data.

Coefficients are written as :class:`fractions.Fraction` (rational methods)
or :class:`~odekit.surds.Surd` (``a + b sqrt(d)``, e.g. TR-BDF2, Radau IIA) and
checked at construction, so a mistyped coefficient fails on import, not
in a user's simulation.  ``kernel_data()`` gives the float arrays the kernels
run on.
"""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import order_conditions
from .surds import exact


_exact = exact      # Fractions, or Surds a + b sqrt(d) for irrational methods


def _vector(name, values, s):
    values = tuple(_exact(v) for v in values)
    if len(values) != s:
        raise ValueError(f"{name} has {len(values)} entries; the tableau has {s} stages")
    return values


def _weights(tableau, tolerance=0):
    """Make ``b`` and ``b_hat`` exact and check that each sums to one (within ``tolerance``); return the stages."""
    s = len(tableau.b)
    object.__setattr__(tableau, "b", _vector("b", tableau.b, s))
    if abs(sum(tableau.b) - 1) > tolerance:
        raise ValueError(f"the weights b sum to {sum(tableau.b)}, not 1")
    if tableau.b_hat is not None:
        object.__setattr__(tableau, "b_hat", _vector("b_hat", tableau.b_hat, s))
        if abs(sum(tableau.b_hat) - 1) > tolerance:
            raise ValueError(f"the embedded weights b_hat sum to {sum(tableau.b_hat)}, not 1")
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
        dense[i][j] theta^(j+1)``.  Must give ``b`` at ``theta = 1``.

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

    def __post_init__(self):
        s = _weights(self)
        set_ = object.__setattr__
        set_(self, "c", _vector("c", self.c, s))
        set_(self, "A", _square("A", self.A, s))
        if self.dense is not None:
            rows = tuple(tuple(_exact(v) for v in row) for row in self.dense)
            if len(rows) != s:
                raise ValueError(f"dense has {len(rows)} rows; the tableau has {s} stages")
            set_(self, "dense", rows)
        for i, (ci, row) in enumerate(zip(self.c, self.A)):
            if sum(row) != ci:
                raise ValueError(f"row {i} of A sums to {sum(row)}, but c[{i}] = {ci}")
        if self.dense is not None:
            for i, row in enumerate(self.dense):
                if sum(row) != self.b[i]:
                    raise ValueError(f"dense row {i} sums to {sum(row)} at theta = 1, not b[{i}] = {self.b[i]}")

    @property
    def stages(self):
        return len(self.b)

    @property
    def explicit(self):
        """True when ``A`` is strictly lower triangular."""
        return all(self.A[i][j] == 0 for i in range(self.stages) for j in range(i, self.stages))

    @property
    def diagonally_implicit(self):
        """True when ``A`` is lower triangular (each stage solved on its own)."""
        return all(self.A[i][j] == 0 for i in range(self.stages) for j in range(i + 1, self.stages))

    @property
    def fsal(self):
        """First same as last: the last stage is f(t + h, y_new) and starts the next step."""
        return self.explicit and self.c[-1] == 1 and self.A[-1] == self.b

    def evaluations_per_step(self):
        """Stages, less one when FSAL; None for implicit stages (Newton's iterations vary)."""
        return self.stages - self.fsal if self.explicit else None

    def order(self, max_order=8):
        """The order of ``(A, b)`` from the exact order conditions."""
        return order_conditions.order_of(self.A, self.b, max_order)

    def embedded_order(self, max_order=8):
        """The order of the embedded method ``(A, b_hat)``, or None."""
        if self.b_hat is None:
            return None
        return order_conditions.order_of(self.A, self.b_hat, max_order)

    def kernel_data(self):
        """``(T, c, flags)`` for the kernels: ``T`` stacks ``A``, ``b`` and ``e = b - b_hat``.

        ``e`` is a row of zeros without an embedded pair; ``flags = [fsal,
        estimate, one_diagonal]``, the last when the implicit stages share one
        diagonal value (an SDIRK: the error estimate can be filtered by its
        Newton matrix).
        """
        diagonal = {self.A[i][i] for i in range(self.stages)} - {0}
        return (_stacked(self.A, self.b, self.b_hat), np.array(self.c, dtype=float),
                np.array([self.fsal, self.b_hat is not None, len(diagonal) == 1], dtype=np.int64))

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
    conditions then hold to within it rather than exactly.
    """

    alpha: tuple
    gamma: tuple
    b: tuple
    b_hat: tuple | None = None
    time_derivative: bool = True
    tolerance: Fraction = Fraction(0)

    @classmethod
    def from_transformed(cls, gamma, a, c, m, m_hat=None, tolerance=0, time_derivative=True):
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
        # Gamma^-1 = I/gamma - C is lower triangular: invert by forward substitution
        inv = [[(1 / g if i == j else -C[i][j]) for j in range(s)] for i in range(s)]
        G = [[Fraction(0)] * s for _ in range(s)]
        for j in range(s):
            for i in range(j, s):
                rhs = Fraction(1 if i == j else 0) - sum(inv[i][k] * G[k][j] for k in range(j, i))
                G[i][j] = rhs / inv[i][i]

        def times_gamma(row):
            return [sum(row[k] * G[k][j] for k in range(s)) for j in range(s)]

        return cls(alpha=[times_gamma(row) for row in A], gamma=G, b=times_gamma(_vector("m", m, s)),
                   b_hat=None if m_hat is None else times_gamma(_vector("m_hat", m_hat, s)),
                   time_derivative=time_derivative, tolerance=_exact(tolerance))

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

    @property
    def stages(self):
        return len(self.b)

    @property
    def c(self):
        return tuple(sum(row) for row in self.alpha)

    fsal = False

    def evaluations_per_step(self):
        """One per stage (plus a Jacobian, and two for df/dt unless the problem is autonomous)."""
        return self.stages

    def residuals(self, order, weights=None):
        """Residuals of the order-``order`` conditions (exact; zero when they hold).

        From Hairer & Wanner, *Solving ODEs II*, Table IV.7.1, with
        ``beta = alpha + gamma`` off the diagonal, ``beta'_i = sum_j beta_ij``
        and ``a_i = sum_j alpha_ij``; implemented for orders 1 to 4.
        """
        b = self.b if weights is None else weights
        s, g = self.stages, self.gamma[0][0]
        beta = [[self.alpha[i][j] + self.gamma[i][j] if j < i else Fraction(0)
                 for j in range(s)] for i in range(s)]
        bp = [sum(row) for row in beta]
        a = self.c
        ab = [sum(self.alpha[i][k] * bp[k] for k in range(s)) for i in range(s)]
        bb = [sum(beta[i][k] * bp[k] for k in range(s)) for i in range(s)]

        def dot(u, v):
            return sum(x * y for x, y in zip(u, v))

        def bdot(v):
            return dot(b, v)

        table = {
            1: [bdot([1] * s) - 1],
            2: [bdot(bp) - (Fraction(1, 2) - g)],
            3: [bdot([x * x for x in a]) - Fraction(1, 3),
                bdot(bb) - (Fraction(1, 6) - g + g * g)],
            4: [bdot([x ** 3 for x in a]) - Fraction(1, 4),
                bdot([a[j] * ab[j] for j in range(s)]) - (Fraction(1, 8) - g / 3),
                bdot([dot(beta[j], [x * x for x in a]) for j in range(s)]) - (Fraction(1, 12) - g / 3),
                bdot([dot(beta[j], bb) for j in range(s)]) - (Fraction(1, 24) - g / 2 + 3 * g * g / 2 - g ** 3)],
        }
        if order not in table:
            raise ValueError(f"Rosenbrock order conditions are implemented for orders 1-4, not {order}")
        return table[order]

    def satisfies(self, order, weights=None):
        """True when the conditions of ``order`` hold (within ``tolerance``)."""
        return all(abs(r) <= self.tolerance for r in self.residuals(order, weights))

    def order(self, max_order=4):
        p = 0
        while p < max_order and self.satisfies(p + 1):
            p += 1
        return p

    def embedded_order(self, max_order=4):
        if self.b_hat is None:
            return None
        p = 0
        while p < max_order and self.satisfies(p + 1, self.b_hat):
            p += 1
        return p

    def kernel_data(self):
        """``(T, gamma, c, d, flags)`` for the kernels: ``T`` stacks ``alpha``, ``b`` and ``e = b - b_hat``.

        ``flags = [estimate, time_derivative]``.
        """
        gamma = np.array(self.gamma, dtype=float)
        d = gamma.sum(axis=1) if self.time_derivative else np.zeros(self.stages)
        return (_stacked(self.alpha, self.b, self.b_hat), gamma, np.array(self.c, dtype=float), d,
                np.array([self.b_hat is not None, self.time_derivative], dtype=np.int64))


def _stacked(A, b, b_hat):
    """The kernels' coefficient matrix: the rows of ``A``, then ``b``, then ``b - b_hat`` (or zeros)."""
    e = [0] * len(b) if b_hat is None else [x - y for x, y in zip(b, b_hat)]
    return np.array([*A, b, e], dtype=float)
