"""Sparse Jacobians and the linear solvers of Newton's method for large systems.

The implicit kernels speak to their Jacobian ``J`` and Newton matrix
``M = I - s J`` through a handful of primitives (see
:mod:`odekit.kernels.primitives`): ``shifted_identity``, ``lu_factor``,
``lu_solve``, Radau's ``complex_block``, and the Jacobian's
finite differences.  On the compiled path they are dense loops.  Here they
are objects with the same verbs, which those primitives hand the work to
when they run as plain Python -- so the kernels solve a 25,000-unknown
cloth with the very code that solves a 3-species reaction, and never know
which.  Sparse systems run on the Python backend: a sparse factorisation or
a Krylov solve costs orders of magnitude more than the Python around a step,
which therefore does not show.

Solvers (``linear_solver`` of :func:`odekit.solve`):

``"splu"``
    SuperLU (:func:`scipy.sparse.linalg.splu`): direct, robust, fill-in grows
    with the bandwidth.
``"cg"``
    Conjugate gradients: for symmetric positive definite Newton matrices --
    a mechanical system with conservative springs and damping after
    eliminating the positions, ``I - s A_v - s^2 A_x`` (Baraff & Witkin
    1998).
``"gmres"``
    Restarted GMRES, for any nonsingular matrix.

Both are preconditioned by an incomplete LU factorisation (``spilu``, drop
tolerance 1e-5; for CG without pivoting and with a symmetric ordering, so
that it stays close to symmetric), or with ``preconditioner="jacobi"`` by the
diagonal, which keeps memory at ``O(nnz)``.  ILU costs a factorisation per
Newton matrix but few iterations, whatever the stiffness; the diagonal of a
cloth is nearly uniform, so Jacobi helps little and its iterations grow with
the springs' stiffness.  So on ``problems.cloth`` Jacobi-CG is a little
faster with the default springs, having no factorisation to build, while
with stiff ones (``k_stretch=1e5``) ILU-CG is several times faster, and
faster than sparse LU: ILU is the default because it degrades least
(benchmarks/README.md, ``bench_cloth.py``, has the figures).  An ILU that
meets a zero pivot falls back to the diagonal.

An inexact linear solve slows Newton's convergence but not its limit; for
the one-solve ``linearized_euler`` the Krylov tolerance is part of the step's
error, hence the tight default.
"""

from dataclasses import dataclass
import warnings

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as splinalg

from . import checks
from .kernels.layout import SUCCESS

LINEAR_SOLVERS = ("auto", "dense", "splu", "cg", "gmres")
PRECONDITIONERS = ("ilu", "jacobi")
ILU_DROP = 1e-5          # 1e-4 let CG stall on the cloth; 1e-3 made it diverge


@dataclass(frozen=True)
class LinearSolver:
    """How Newton's linear systems are solved.

    Parameters
    ----------
    kind : {"splu", "cg", "gmres"}
        See the module's description.
    rtol : float
        Relative residual at which a Krylov solve stops.
    maxiter : int, optional
        Iteration limit of a Krylov solve (default: SciPy's, ``10 n``).
    preconditioner : {"ilu", "jacobi"}
        Of a Krylov solve: incomplete LU, or the diagonal (see the module's
        description).
    """

    kind: str
    rtol: float = 1e-10
    maxiter: int = None
    preconditioner: str = "ilu"

    def __post_init__(self):
        if self.kind not in LINEAR_SOLVERS[2:]:
            raise ValueError(f"LinearSolver kind must be one of {', '.join(LINEAR_SOLVERS[2:])}, "
                             f"got {self.kind!r}")
        if self.preconditioner not in PRECONDITIONERS:
            raise ValueError(f"LinearSolver preconditioner must be one of {', '.join(PRECONDITIONERS)}, "
                             f"got {self.preconditioner!r}")
        checks.real("rtol", self.rtol, "a number in (0, 1)", lambda x: 0 < x < 1)
        if self.maxiter is not None:
            checks.count("maxiter", self.maxiter, accepted="a positive integer or None (SciPy's default, 10 n)")


def linear_solver(spec, problem, implicit=True):
    """The :class:`LinearSolver` for ``spec`` (a name, an instance or ``"auto"``), or None for dense LU.

    ``"auto"`` follows the problem's Jacobian: sparse (a :mod:`scipy.sparse`
    matrix, a function returning one, a ``jac_sparsity`` pattern, or the
    force Jacobians of mechanics) gets ``splu``; anything else dense LU.
    Explicit methods (``implicit=False``) solve nothing: None, and any
    ``spec`` but ``"auto"`` is refused rather than ignored.
    """
    if isinstance(spec, LinearSolver):
        solver = spec
    elif spec in LINEAR_SOLVERS:
        solver = None if spec == "dense" else spec
    else:
        raise ValueError(f"linear_solver must be one of {', '.join(map(repr, LINEAR_SOLVERS))} "
                         f"or a LinearSolver, got {spec!r}")
    if not implicit:
        if not (isinstance(spec, str) and spec == "auto"):
            raise ValueError(f"linear_solver={spec!r} is for implicit methods, which solve Newton's linear "
                             "systems; this method is explicit and solves none. Leave linear_solver='auto', or "
                             "choose an implicit method such as 'bdf', 'radau5' or 'backward_euler'")
        return None
    is_sparse = jacobian_is_sparse(problem)
    if solver == "auto":
        solver = "splu" if is_sparse else None
    elif solver is None and is_sparse:
        raise ValueError("linear_solver='dense' needs a dense Jacobian; this problem's is sparse "
                         "(use 'splu', 'cg' or 'gmres', or give jac as an array)")
    return LinearSolver(solver) if isinstance(solver, str) else solver


def jacobian_is_sparse(problem):
    """Whether the problem's Jacobian is sparse; a ``jac`` function is called once at ``t0`` to see.

    The force Jacobians of a mechanical problem always take the sparse path,
    whose block elimination is what makes them worth giving.
    """
    if problem.second_order:
        return problem.jac is not None
    if problem.jac_sparsity is not None or sparse.issparse(problem.jac):
        return True
    if not callable(problem.jac):
        return False
    memo = problem.__dict__.setdefault("_jac_sparse", {})
    if problem.jac not in memo:
        t0 = problem.t_span[0]
        memo[problem.jac] = sparse.issparse(problem.jac(t0, problem.y0, *problem.args))
    return memo[problem.jac]


# =====================================================================================
# Jacobians
# =====================================================================================

class SparseJacobian:
    """``df/dy`` of a first-order system as a sparse matrix.

    Filled by :meth:`set` from the user's ``jac``, or by :meth:`differences`
    from the sparsity ``pattern`` (a boolean CSC matrix).
    """

    def __init__(self, n, dtype, pattern=None):
        self.shape = (n, n)
        self.dtype = dtype
        self.matrix = sparse.csr_matrix(self.shape, dtype=dtype)
        if pattern is not None:
            self.pattern = pattern
            self.rows = pattern.indices
            self.cols = np.repeat(np.arange(n), np.diff(pattern.indptr))
            self.groups = column_groups(pattern)
            group_of = np.empty(n, dtype=np.int64)
            for g, members in enumerate(self.groups):
                group_of[members] = g
            order = np.argsort(group_of[self.cols], kind="stable")
            cuts = np.searchsorted(group_of[self.cols][order], np.arange(len(self.groups) + 1))
            self.entries = [order[cuts[g]:cuts[g + 1]] for g in range(len(self.groups))]

    def set(self, value):
        """Store the user's Jacobian; False when it has the wrong shape or is complex for a real state."""
        if np.shape(value) != self.shape or not _fits(value, self.dtype):
            return False
        self.matrix = sparse.csr_matrix(value, dtype=self.dtype)
        return True

    def finite(self):
        return bool(np.isfinite(self.matrix.data).all())

    def full(self):
        """The whole first-order Jacobian, CSR."""
        return self.matrix

    def differences(self, rhs, args, central, tol, t, W, y, f, ytmp, ftmp, fback, ist, fs):
        """Fill the pattern's entries by differences, one evaluation per group of columns.

        Columns in a group share no row, so one perturbed evaluation gives
        each of them its own entries (Curtis, Powell & Reid 1974).  The
        increments are those of the dense differences (see
        :func:`odekit.kernels.evaluation.state_increment`), and so is the
        second, wider evaluation for the group's drowned columns (see
        :func:`odekit.kernels.evaluation.drowned`).  Returns a status code.
        """
        from .kernels.evaluation import drowned, evaluate_finite, state_increment, wider_increment

        yv = W[y].copy()
        delta = state_increment(yv, tol[1], central)
        data = np.empty(self.rows.size, dtype=W.dtype)
        for members, entries in zip(self.groups, self.entries):
            rows = self.rows[entries]
            W[ytmp] = yv
            W[ytmp, members] += delta[members]
            code = evaluate_finite(rhs, args, t, W, ytmp, ftmp, ist, fs)
            if code != SUCCESS:
                return code
            if central:
                W[ytmp, members] = yv[members] - delta[members]
                code = evaluate_finite(rhs, args, t, W, ytmp, fback, ist, fs)
                if code != SUCCESS:
                    return code
                data[entries] = (W[ftmp, rows] - W[fback, rows]) / (2.0 * delta[self.cols[entries]])
            else:
                # the members with entries none of which stands above f's rounding, as the dense loop
                lost = np.setdiff1d(self.cols[entries], self.cols[entries][~drowned(W, ftmp, f, rows)])
                if lost.size:
                    delta[lost] = wider_increment(yv[lost], delta[lost])
                    W[ytmp, lost] = yv[lost] + delta[lost]
                    code = evaluate_finite(rhs, args, t, W, ytmp, ftmp, ist, fs)
                    if code != SUCCESS:
                        return code
                data[entries] = (W[ftmp, rows] - W[f, rows]) / delta[self.cols[entries]]
        self.matrix = sparse.csc_matrix((data, self.pattern.indices, self.pattern.indptr),
                                        shape=self.shape).tocsr()
        return SUCCESS


class MechanicalJacobian:
    """The Jacobian ``[[0, I], [A_x, A_v]]`` of ``x' = v, v' = a(t, x, v)``, kept as its blocks.

    ``A_x = da/dx`` and ``A_v = da/dv`` come from the problem's ``jac``.
    """

    def __init__(self, n, dtype):
        self.shape = (2 * n, 2 * n)
        self.n = n
        self.dtype = dtype
        self.A_x = self.A_v = sparse.csr_matrix((n, n), dtype=dtype)

    def set(self, value):
        """Store ``(A_x, A_v)``; False when it is not a pair of ``n x n`` matrices of the state's kind."""
        if not (isinstance(value, tuple) and len(value) == 2
                and all(np.shape(a) == (self.n, self.n) and _fits(a, self.dtype) for a in value)):
            return False
        self.A_x, self.A_v = (sparse.csr_matrix(a, dtype=self.dtype) for a in value)
        return True

    def finite(self):
        return bool(np.isfinite(self.A_x.data).all() and np.isfinite(self.A_v.data).all())

    def full(self):
        eye = sparse.identity(self.n, dtype=self.dtype, format="csr")
        return sparse.bmat([[None, eye], [self.A_x, self.A_v]], format="csr")


def _fits(matrix, dtype):
    """False for a complex matrix given for a real state: its imaginary part would be lost."""
    from .kernels.evaluation import keeps_whole

    return keeps_whole(np.dtype(dtype), matrix.dtype if sparse.issparse(matrix) else np.asarray(matrix).dtype)


def column_groups(pattern):
    """Columns of a sparsity pattern in groups that share no row: greedy colouring.

    Each column takes the first group none of its neighbours (columns with
    a common row) is in, visiting the columns with the most entries first
    (Curtis, Powell & Reid 1974; Coleman & Moré 1983).  A banded pattern of
    width ``w`` gives ``w`` groups, whatever ``n``.
    """
    P = sparse.csc_matrix(pattern, dtype=np.int8)
    P.data[:] = 1
    neighbours = (P.T @ P).tocsr()
    n = P.shape[1]
    colour = np.full(n, -1, dtype=np.int64)
    for j in np.argsort(-np.diff(P.indptr), kind="stable"):
        taken = colour[neighbours.indices[neighbours.indptr[j]:neighbours.indptr[j + 1]]]
        used = np.zeros(taken.max(initial=-1) + 2, dtype=bool)
        used[taken[taken >= 0]] = True
        colour[j] = int(np.argmin(used))
    return [np.flatnonzero(colour == g) for g in range(colour.max(initial=-1) + 1)]


# =====================================================================================
# Newton matrices
# =====================================================================================

class SparseSystem:
    """A Newton matrix ``I - s J`` (or Radau's complex ``(a - ib) I - J``) and its solver.

    Stands where the dense kernels keep their LU factors: :meth:`shifted_identity`
    and :meth:`complex_block` assemble, :meth:`factor` factors (or builds the
    preconditioner), :meth:`solve` solves.  For a :class:`MechanicalJacobian`
    the real system is reduced to the velocity correction,

        (I - s A_v - s^2 A_x) dv = r_v + s A_x r_x,   dx = r_x + s dv,

    half the size and symmetric positive definite for conservative springs
    and damping -- what conjugate gradients need.  A Krylov solve starts
    from the previous solution when that is closer than zero.
    """

    def __init__(self, solver, n, dtype):
        self.solver = solver
        self.shape = (n, n)
        self.dtype = dtype
        self.matrix = None
        self.blocks = None     # (s, A_x) of a reduced mechanical system
        self.last = None       # the last Krylov solution, a start for the next

    def shifted_identity(self, J, s):
        if isinstance(J, MechanicalJacobian):
            eye = sparse.identity(J.n, dtype=self.dtype, format="csr")
            self.matrix = (eye - s * J.A_v - (s * s) * J.A_x).tocsc()
            self.blocks = (s, J.A_x)
        else:
            eye = sparse.identity(J.shape[0], dtype=self.dtype, format="csr")
            self.matrix = (eye - s * J.full()).tocsc()
            self.blocks = None

    def complex_block(self, J, a, b):
        """``(a - ib) I - J``, solved in complex arithmetic for the real form of the dense kernel.

        A complex state has no real form to fold: it gets the dense kernel's
        own block matrix ``[[a I - J, b I], [-b I, a I - J]]``.
        """
        eye = sparse.identity(J.shape[0], format="csr")
        if self._complex_state:
            diagonal = a * eye - J.full()
            self.matrix = sparse.bmat([[diagonal, b * eye], [-b * eye, diagonal]], format="csc")
        else:
            self.matrix = ((a - 1j * b) * eye - J.full()).tocsc()
        self.blocks = None

    @property
    def _complex_state(self):
        return np.dtype(self.dtype).kind == "c"

    def factor(self):
        """Factor (``splu``) or precondition (Krylov); False when the matrix is singular or not finite."""
        if not np.isfinite(self.matrix.data).all():
            return False
        if self.solver.kind == "splu":
            try:
                self.lu = splinalg.splu(self.matrix)
            except RuntimeError:             # SuperLU: "Factor is exactly singular"
                return False
            return True
        diagonal = self.matrix.diagonal()
        if self._conjugate_gradients and np.any(diagonal.real <= 0):
            return False                     # not positive definite
        self.preconditioner = None
        if self.solver.preconditioner == "ilu":
            self.preconditioner = self._ilu()
        if self.preconditioner is None:
            if np.any(diagonal == 0):
                return False
            self.preconditioner = sparse.diags(1.0 / diagonal)
        return True

    @property
    def _conjugate_gradients(self):
        return self.solver.kind == "cg" and not np.iscomplexobj(self.matrix)

    def _ilu(self):
        """Incomplete LU as a preconditioner, or None when it meets a zero pivot."""
        # for CG: no pivoting and a symmetric ordering, so that L U stays near symmetric
        options = dict(diag_pivot_thresh=0.0, permc_spec="MMD_AT_PLUS_A") if self._conjugate_gradients else {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", sparse.SparseEfficiencyWarning)
                ilu = splinalg.spilu(self.matrix, drop_tol=ILU_DROP, fill_factor=10, **options)
        except RuntimeError:                 # "Factor is exactly singular"
            return None
        return splinalg.LinearOperator(self.matrix.shape, ilu.solve, dtype=self.matrix.dtype)

    def solve(self, b):
        """The solution of the system for the right-hand side ``b`` (a row of the work matrix)."""
        if self.matrix.dtype.kind == "c" and not self._complex_state:      # Radau's folded block
            half = b.size // 2
            z = self._solve(b[:half] + 1j * b[half:])
            return np.concatenate([z.real, z.imag])
        if self.blocks is None:
            return self._solve(b)
        s, A_x = self.blocks
        half = b.size // 2
        dv = self._solve(b[half:] + s * (A_x @ b[:half]))
        return np.concatenate([b[:half] + s * dv, dv])

    def _solve(self, b):
        if self.solver.kind == "splu":
            return self.lu.solve(b)
        method = splinalg.cg if self._conjugate_gradients else splinalg.gmres
        # start from the last solution when it is closer than zero: successive steps of a
        # simulation ask for similar corrections, and a Krylov solve's cost is log(r0 / r)
        x0 = self.last if self.last is not None and self.last.shape == b.shape else None
        if x0 is not None and np.linalg.norm(b - self.matrix @ x0) >= np.linalg.norm(b):
            x0 = None
        x, info = method(self.matrix, b, x0=x0, rtol=self.solver.rtol, atol=0.0, maxiter=self.solver.maxiter,
                         M=self.preconditioner)
        self.last = x
        # not converged: nan, which Newton's method takes for a failure (and the step is shrunk)
        return x if info == 0 else np.full_like(x, np.nan)


def jacobian(problem, n, dtype):
    """The Jacobian object of the sparse path for a state of size ``n``."""
    if problem.second_order and problem.jac is not None:
        return MechanicalJacobian(n // 2, dtype)
    pattern = problem.jac_sparsity
    if pattern is None and problem.jac is None:     # differences of every column, as dense
        pattern = sparse.csc_matrix(np.ones((n, n), dtype=bool))
    return SparseJacobian(n, dtype, pattern)


def newton_system(solver, size, dtype):
    """``(M, piv)`` for the sparse path: a Newton system of ``size`` unknowns and an empty pivot array."""
    return SparseSystem(solver, size, dtype), np.zeros(0, dtype=np.int64)
