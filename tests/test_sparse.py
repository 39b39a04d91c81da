"""Sparse Jacobians and linear solvers: the same answers as dense LU, and clear errors.

The kernels are the dense ones; only the linear algebra differs, so the
sparse runs must reproduce the dense runs step for step (to rounding, which
may tip a decision to reuse an LU), and
each solver (sparse LU, conjugate gradients, GMRES) must reproduce the others.
"""

import numpy as np
import pytest
from scipy import sparse

import odekit
from odekit.registry import methods
from odekit.sparse import LinearSolver, column_groups

N = 40
IMPLICIT = [m.name for m in methods() if m.implicit]


# --- a stiff reaction-diffusion line: u' = D u_xx - u^3, tridiagonal Jacobian --------------

def _diffusion(t, y):
    d = -2.0 * y
    d[1:] += y[:-1]
    d[:-1] += y[1:]
    return 400.0 * d - y ** 3


def _diffusion_jac(t, y):
    off = np.full(y.size - 1, 400.0)
    return sparse.diags([off, -800.0 - 3.0 * y ** 2, off], [-1, 0, 1], format="csr")


def _line(**kw):
    y0 = np.sin(np.pi * np.linspace(0.0, 1.0, N)) + 0.3
    return odekit.ODEProblem(_diffusion, (0.0, 0.2), y0, **kw)


def _tridiagonal(n):
    return sparse.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1])


def _kw(name):
    return dict(h=0.01) if odekit.method(name).embedded_order is None and name != "bdf" \
        else dict(rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", IMPLICIT)
def test_sparse_jacobian_gives_the_dense_answer_step_for_step(name):
    dense = odekit.solve(_line(jac=lambda t, y: _diffusion_jac(t, y).toarray()), name, backend="python",
                         **_kw(name))
    sparse_run = odekit.solve(_line(jac=_diffusion_jac), name, backend="python", **_kw(name))
    assert sparse_run.success and sparse_run.stats.nsteps == dense.stats.nsteps
    assert sparse_run.stats.njev == dense.stats.njev
    # Reusing an LU is decided by comparing Newton's contraction rate with a threshold,
    # which rounding can tip either way (62 against 66 for radau5 on one machine); a
    # wrong Jacobian or solve would change far more.  The states agree far inside the
    # tolerances, where a different Newton iteration (its own ~1e-7 error) would show.
    assert abs(sparse_run.stats.nlu - dense.stats.nlu) <= 0.1 * dense.stats.nlu
    np.testing.assert_allclose(sparse_run.y, dense.y, rtol=0, atol=1e-9)


def test_sparse_runs_compile_the_problems_function_and_agree_with_python():
    compiled = odekit.solve(_line(jac=_diffusion_jac), "radau5", rtol=1e-8, atol=1e-10)
    python = odekit.solve(_line(jac=_diffusion_jac), "radau5", rtol=1e-8, atol=1e-10, backend="python")
    assert compiled.backend == "python" and "function is compiled" in compiled.backend_reason
    assert "function is compiled" not in python.backend_reason
    np.testing.assert_allclose(compiled.y[-1], python.y[-1], rtol=0, atol=1e-8)


@pytest.mark.parametrize("name", ["radau5", "bdf", "trbdf2", "rodas4"])
def test_grouped_differences_cost_three_evaluations_on_a_tridiagonal_pattern(name):
    exact = odekit.solve(_line(jac=_diffusion_jac), name, rtol=1e-6, atol=1e-9)
    grouped = odekit.solve(_line(jac_sparsity=_tridiagonal(N)), name, rtol=1e-6, atol=1e-9)
    assert grouped.success
    np.testing.assert_allclose(grouped.y[-1], exact.y[-1], rtol=0, atol=1e-6)
    # each Jacobian costs 3 evaluations (6 with the central differences of Rosenbrock), not N
    per = 6 if name == "rodas4" else 3
    assert grouped.stats.nsteps == exact.stats.nsteps and grouped.stats.njev == exact.stats.njev
    assert grouped.stats.nfev - exact.stats.nfev == per * grouped.stats.njev


def test_grouped_differences_match_the_analytic_jacobian():
    from odekit.sparse import SparseJacobian
    from odekit.kernels.evaluation import differences
    from odekit import backend

    problem = _line(jac_sparsity=_tridiagonal(N))
    rhs, _ = backend._adapters(*backend._adapter_key(problem, False), "python", None, True)
    W = np.zeros((5, N))
    W[0] = problem.y0
    W[1] = _diffusion(0.0, W[0])
    J = SparseJacobian(N, float, problem.jac_sparsity)
    ist, fs = np.zeros(18, dtype=np.int64), np.zeros(12)
    tol = np.array([np.full(N, 1e-6), np.full(N, 1e-9)])
    assert differences(rhs, (), False, tol, 0.0, W, 0, 1, J, 2, 3, 4, ist, fs) == 0
    assert ist[0] == 3                      # one evaluation per group of columns
    exact = _diffusion_jac(0.0, W[0]).toarray()
    np.testing.assert_allclose(J.matrix.toarray(), exact, rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("width", [1, 3, 5, 9])
def test_column_groups_of_a_band_are_its_width_and_share_no_row(width):
    n = 60
    half = width // 2
    band = sparse.diags([np.ones(n - abs(k)) for k in range(-half, half + 1)], range(-half, half + 1))
    groups = column_groups(band)
    assert len(groups) == width
    assert sorted(np.concatenate(groups)) == list(range(n))
    P = sparse.csc_matrix(band)
    for members in groups:
        rows = np.concatenate([P.indices[P.indptr[j]:P.indptr[j + 1]] for j in members])
        assert rows.size == np.unique(rows).size


def test_column_groups_of_a_random_pattern_share_no_row():
    rng = np.random.default_rng(3)
    P = sparse.random(80, 80, density=0.05, random_state=rng, format="csc") + sparse.identity(80)
    P = sparse.csc_matrix(P)
    groups = column_groups(P)
    assert len(groups) < 40
    for members in groups:
        rows = np.concatenate([P.indices[P.indptr[j]:P.indptr[j + 1]] for j in members])
        assert rows.size == np.unique(rows).size


# --- mechanics: force Jacobians, block elimination, conjugate gradients -----------------------

M = 60
_K = sparse.diags([np.full(M - 1, 900.0), np.full(M, -1800.0), np.full(M - 1, 900.0)], [-1, 0, 1], format="csr")


def _chain_accel(t, x, v):
    return _K @ x - 0.3 * v - 0.5 * np.sin(x)


def _chain_jac(t, x, v):
    return _K - sparse.diags(0.5 * np.cos(x)), -0.3 * sparse.identity(M)


def _chain(t_end=0.5, **kw):
    x0 = np.sin(np.linspace(0.0, 3.0, M))
    return odekit.SecondOrderProblem(_chain_accel, (0.0, t_end), x0, np.zeros(M), **kw)


@pytest.mark.parametrize("name", ["backward_euler", "linearized_euler", "trapezoid"])
def test_block_elimination_with_each_solver_matches_dense_lu(name):
    dense = odekit.solve(_chain(), name, h=1 / 60, backend="python")        # dense differences and LU
    for solver in ["splu", "cg", "gmres"]:
        run = odekit.solve(_chain(jac=_chain_jac), name, h=1 / 60, linear_solver=solver, backend="python")
        assert run.success and run.stats.nsteps == dense.stats.nsteps
        np.testing.assert_allclose(run.y, dense.y, rtol=0, atol=1e-6)


def test_adaptive_methods_on_mechanics_agree_across_solvers():
    runs = [odekit.solve(_chain(0.1, jac=_chain_jac), "radau5", rtol=1e-6, atol=1e-9, linear_solver=s,
                         backend="python")
            for s in ["splu", "cg", "gmres"]]
    reference = odekit.solve(_chain(0.1), "radau5", rtol=1e-10, atol=1e-12, backend="python")
    for run in runs:
        assert run.success
        np.testing.assert_allclose(run.y[-1], reference.y[-1], rtol=0, atol=1e-5)
    np.testing.assert_allclose(runs[1].y[-1], runs[0].y[-1], rtol=0, atol=1e-8)


@pytest.mark.parametrize("kind", ["cg", "gmres"])
def test_krylov_tolerance_is_the_linear_error_of_linearized_euler(kind):
    # with the diagonal as preconditioner the first iterates are far from the solution, so
    # the tolerance shows; incomplete LU is near exact here and meets any tolerance at once
    def run(solver):
        return odekit.solve(_chain(jac=_chain_jac), "linearized_euler", h=1 / 60, linear_solver=solver,
                            backend="python")

    loose = run(LinearSolver(kind, rtol=1e-2, preconditioner="jacobi"))
    tight = run(LinearSolver(kind, preconditioner="jacobi"))
    ilu = run(LinearSolver(kind, rtol=1e-2))
    direct = run("splu")
    assert np.abs(tight.y - direct.y).max() < 1e-8 < np.abs(loose.y - direct.y).max()
    assert np.abs(ilu.y - direct.y).max() < 1e-8


def test_incomplete_lu_that_meets_a_zero_pivot_falls_back_to_the_diagonal():
    from odekit.sparse import SparseSystem

    system = SparseSystem(LinearSolver("cg"), 2, float)
    system.matrix = sparse.csc_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]) + 2.0 * np.eye(2))
    assert system.factor() and system._ilu() is not None
    system.matrix = sparse.csc_matrix(np.array([[1.0, 1.0], [1.0, 1.0]]))    # singular: ILU fails
    assert system._ilu() is None and system.factor()
    np.testing.assert_array_equal(system.preconditioner.toarray(), np.eye(2))


# --- bad input ----------------------------------------------------------------------------------

def test_unknown_linear_solver_is_named_with_the_accepted_ones():
    with pytest.raises(ValueError, match=r"linear_solver must be one of .*'cg'.*got 'qr'"):
        odekit.solve(_line(jac=_diffusion_jac), "bdf", linear_solver="qr")


def test_unknown_linear_solver_is_refused_for_explicit_methods_too():
    with pytest.raises(ValueError, match="linear_solver"):
        odekit.solve(_line(), "rk4", h=0.001, linear_solver="lu")


def test_dense_solver_refuses_a_sparse_jacobian():
    with pytest.raises(ValueError, match="linear_solver='dense' needs a dense Jacobian"):
        odekit.solve(_line(jac=_diffusion_jac), "bdf", linear_solver="dense")


def test_numba_backend_refuses_sparse_linear_algebra():
    with pytest.raises(ValueError, match="backend='numba' cannot run sparse"):
        odekit.solve(_line(jac=_diffusion_jac), "bdf", backend="numba")


@pytest.mark.parametrize("kind, rtol, pre", [("lu", 1e-8, "ilu"), ("cg", 0.0, "ilu"), ("cg", 2.0, "ilu"),
                                             ("cg", 1e-8, "amg")])
def test_linear_solver_options_are_checked(kind, rtol, pre):
    with pytest.raises(ValueError, match="kind must be one of|rtol must be|preconditioner must be one of ilu, jacobi"):
        LinearSolver(kind, rtol=rtol, preconditioner=pre)


def test_wrong_shape_of_a_sparse_jacobian_is_named():
    with pytest.raises(ValueError, match=rf"jac returned .*\(39, 39\).*expected a \({N}, {N}\) matrix"):
        odekit.solve(_line(jac=lambda t, y: _diffusion_jac(t, y[1:])), "bdf")


def test_wrong_shape_of_a_dense_jacobian_is_named():
    with pytest.raises(ValueError, match=rf"jac returned 4 values .*expected a \({N}, {N}\) matrix"):
        odekit.solve(_line(jac=lambda t, y: np.eye(2)), "radau5", backend="python")


def test_force_jacobian_that_is_not_a_pair_is_named():
    with pytest.raises(ValueError, match=r"expected a pair \(A_x, A_v\) of \(60, 60\) matrices"):
        odekit.solve(_chain(jac=lambda t, x, v: _K), "backward_euler", h=0.01, backend="python")


def test_constant_jacobian_shape_and_pattern_shape_are_checked_at_construction():
    with pytest.raises(ValueError, match=r"jac has shape \(3, 3\); expected \(40, 40\)"):
        _line(jac=sparse.identity(3))
    with pytest.raises(ValueError, match=r"jac_sparsity has shape \(3, 3\); expected \(40, 40\)"):
        _line(jac_sparsity=np.ones((3, 3)))
    with pytest.raises(ValueError, match="jac or jac_sparsity, not both"):
        _line(jac=_diffusion_jac, jac_sparsity=_tridiagonal(N))


# --- the cloth: Baraff & Witkin's implicit step at a frame's length ---------------------------

def _bounded(problem, sol):
    """Finite, hanging within reach of its pins, and not gaining energy (springs, damping, gravity)."""
    energy = sol.invariants()["energy"]
    x = sol.y[:, 0]
    assert sol.success and np.isfinite(sol.y).all()
    assert np.abs(x[..., :2]).max() < 1.5 and -1.5 < x[..., 2].min() and x[..., 2].max() < 0.05
    assert energy.max() <= energy[0] * (1 + 1e-9)
    return energy


def test_cloth_64_by_64_is_stable_at_a_frame_step_with_linearized_euler_and_cg():
    problem = odekit.problems.cloth(n=64).with_span((0.0, 12 / 60))
    sol = odekit.solve(problem, "linearized_euler", h=1 / 60, linear_solver=LinearSolver("cg", rtol=1e-6))
    assert sol.stats.naccepted == 12 and sol.stats.nlu == 12      # one linear solve per frame
    _bounded(problem, sol)
    assert sol.y[-1, 0, :, 2].min() < -0.1                          # it fell (0.2 m in free fall)
    assert odekit.problems.cloth_stretch(sol.y[-1, 0], *problem.args) < 0.2


def test_cloth_swings_and_settles_at_a_frame_step():
    problem = odekit.problems.cloth(n=16)                          # 2.5 s: the fall, the swing, the decay
    sol = odekit.solve(problem, "linearized_euler", h=1 / 60, linear_solver="cg")
    _bounded(problem, sol)
    speed = np.abs(sol.y[:, 1]).max(axis=(1, 2))
    assert speed[-1] < 0.5 * speed.max()


def test_explicit_methods_at_a_frame_step_are_warned_and_blow_up_on_the_cloth():
    problem = odekit.problems.cloth(n=16).with_span((0.0, 0.5))
    with pytest.warns(odekit.StiffnessWarning, match=r"stability limit.*backward_euler"):
        sol = odekit.solve(problem, "rk4", h=1 / 60)
    assert not sol.success or np.abs(sol.y[-1]).max() > 1e3


def test_backward_euler_newton_failure_at_a_frame_step_is_reported_with_what_was_computed():
    # a sheet turns too far in one frame for Newton from the frame's start (simplified or not):
    # a fixed step cannot shrink, so the run stops and says so
    problem = odekit.problems.cloth(n=12).with_span((0.0, 0.5))
    sol = odekit.solve(problem, "backward_euler", h=1 / 60, linear_solver="cg")
    assert sol.status == odekit.Status.NEWTON_FAILED and not sol.success
    assert "Newton's method did not converge at t=" in sol.message and "smaller h" in sol.message
    assert sol.t[0] == 0.0 and np.isfinite(sol.y).all()
