"""What the problem's functions give is checked, and every failure names the function to blame.

Issue #13, items 2, 3, 7, 9 and 18, and their kin: Numba failing on a
user's function in any way falls back to Python with a warning naming the
function (``backend="auto"``) or raises clearly (``"numba"``); complex states
run with sparse Jacobians; a non-finite Jacobian is blamed on ``jac``; a force
declared velocity-independent that is not, a complex result for a real
state and an in-place function that writes nothing are refused up front; a
function returning None says so, on both backends alike.

Compiled runs are tested where the compiled path is the point; the checks
made at the first evaluation run the same code on both backends.
"""

import warnings

import numpy as np
import pytest
from scipy import sparse

from odekit import (BackendFallbackWarning, IntegrationError, Integrator, ODEProblem, SecondOrderProblem, Status,
                    method as odekit_method, solve)
from odekit.analysis import stiffness

from conftest import decay, rk4_factor, spring
from test_errors_fun import named_time

BACKENDS = ["numba", "python"]


# --- module-level functions (compiled once each by the numba backend) -------------------

def rotation(t, y, omega):
    return np.array([-omega * y[1], omega * y[0], -y[2]])


def rotation_jac(t, y, omega):
    # integers and a float in nested lists: Numba's lowering fails with a bare AssertionError (the matrix
    # named before it is returned, so that no in-place twin writes its entries one by one instead)
    J = np.array([[0, -omega, 0], [omega, 0, 0], [0, 0, -1.0]])
    return J


def transposed_decay(t, y):
    # reshaping a transposed (non-contiguous) array: Numba raises NotImplementedError when it runs
    m = np.outer(y, np.ones(2))
    return -m.T.reshape(4)[:2]


def none_after_half(t, y):
    if t > 0.5:
        return None
    return -y


def forgets_return(t, y):
    -y  # noqa: B018 - the missing return is the point


def accel_forgets_return(t, x, v):
    -x  # noqa: B018


def rotating_phase(t, y):
    return 1j * y


def writes_nothing(t, y, dydt):
    pass


def writes_half(t, y, dydt):
    dydt[0] = -y[0]


def returns_instead(t, y, dydt):
    return -y


def writes_complex(t, y, dydt):
    dydt[:] = 1j * y


def accel_writes_nothing(t, x, v, a):
    pass


def damped(t, x, v):
    return -x - 2.0 * v


A2 = np.array([[-1.0, 0.5], [0.0, -3.0]])


def cubic(t, y):
    return A2 @ y - y ** 3


def cubic_jac(t, y):
    return A2 - np.diag(3.0 * y ** 2)


def jac_nan_at_start(t, y):
    return np.array([[np.nan, 0.0], [0.0, -3.0]])


def jac_nan_late(t, y):
    if t > 0.45:
        return np.array([[np.nan, 0.0], [0.0, -3.0]])
    return A2 - np.diag(3.0 * y ** 2)


def jac_shape_late(t, y):
    if t > 0.45:
        return np.zeros((3, 3))
    return A2 - np.diag(3.0 * y ** 2)


def jac_none_late(t, y):
    if t > 0.45:
        return None
    return A2 - np.diag(3.0 * y ** 2)


# --- item 2: whatever Numba raises, auto falls back naming the function --------------------

def test_jac_that_numba_fails_on_with_an_assertion_error_falls_back_to_python_naming_jac():
    prob = ODEProblem(rotation, (0.0, 1.0), [1.0, 0.0, 0.5], args=(2,), jac=rotation_jac)
    with pytest.warns(BackendFallbackWarning, match=r"jac 'rotation_jac'.*AssertionError") as caught:
        sol = solve(prob, "radau5", backend="auto")
    assert caught[0].filename == __file__
    python = solve(prob, "radau5", backend="python")
    assert sol.success and sol.backend == "python" and "jac 'rotation_jac'" in sol.backend_reason
    np.testing.assert_array_equal(sol.y, python.y)
    assert sol.stats == python.stats


def test_jac_that_numba_fails_on_is_a_clear_error_under_backend_numba():
    prob = ODEProblem(rotation, (0.0, 1.0), [1.0, 0.0, 0.5], args=(2,), jac=rotation_jac)
    with pytest.raises(RuntimeError, match=r"jac 'rotation_jac'.*AssertionError.*backend='auto'") as info:
        solve(prob, "radau5", backend="numba")
    assert isinstance(info.value.__cause__, AssertionError)


def test_a_compiled_function_that_fails_at_its_first_call_falls_back_to_python():
    prob = ODEProblem(transposed_decay, (0.0, 1.0), [1.0, 2.0])
    with pytest.warns(BackendFallbackWarning,
                      match=r"fun 'transposed_decay', compiled by Numba, failed.*NotImplementedError"):
        sol = solve(prob, "rk4", h=0.1, backend="auto")
    assert sol.success and sol.backend == "python"
    np.testing.assert_allclose(sol.y[-1], np.array([1.0, 2.0]) * rk4_factor(-0.1) ** 10, rtol=1e-14)
    # the failed compiled try is not counted: 4 evaluations a step and the first one
    assert sol.stats.nfev == solve(prob, "rk4", h=0.1, backend="python").stats.nfev
    with pytest.raises(RuntimeError, match=r"transposed_decay.*NotImplementedError"):
        solve(prob, "rk4", h=0.1, backend="numba")


@pytest.mark.parametrize("error", [AssertionError(), KeyError("typeof"), NotImplementedError("lowering"),
                                   TypeError("unhashable"), RecursionError("deep"), IndexError("stack")],
                         ids=lambda e: type(e).__name__)
def test_any_exception_numba_raises_while_compiling_falls_back_with_a_warning(monkeypatch, error):
    from odekit.kernels import jit

    def broken(fn, signature=None):
        raise error

    monkeypatch.setattr(jit, "compile_function", broken)
    prob = ODEProblem(lambda t, y: -y, (0.0, 1.0), [1.0, 2.0], name="fresh")   # a new function: no cache
    with pytest.warns(BackendFallbackWarning, match=rf"Numba failed while compiling fun.*{type(error).__name__}"):
        sol = solve(prob, "rk4", h=0.1, backend="auto")
    assert sol.success and sol.backend == "python"
    with pytest.raises(RuntimeError, match=rf"fun.*{type(error).__name__}.*backend='numba' cannot run it"):
        solve(prob, "rk4", h=0.1, backend="numba")


def test_stiffness_estimate_falls_back_whatever_numba_raises(monkeypatch):
    from odekit.kernels import jit

    def broken(fn, signature=None):
        raise AssertionError()

    monkeypatch.setattr(jit, "compile_function", broken)
    prob = ODEProblem(lambda t, y: -3.0 * y, (0.0, 1.0), [1.0, 2.0])
    with pytest.warns(BackendFallbackWarning, match=r"fun.*AssertionError"):
        estimate = stiffness(prob, backend="auto")
    assert estimate.spectral_radius == pytest.approx(3.0, rel=1e-6)
    with pytest.raises(RuntimeError, match=r"fun.*AssertionError"):
        stiffness(prob, backend="numba")


def test_a_defect_the_python_version_shares_is_reported_without_a_fallback_warning():
    # compiled, a complex result for a real state does not even type; in Python it is refused
    with warnings.catch_warnings():
        warnings.simplefilter("error", BackendFallbackWarning)
        for backend in ("auto", "numba"):
            with pytest.raises(ValueError, match=r"fun returned complex values"):
                solve(ODEProblem(rotating_phase, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend=backend)


# --- item 3: complex states with sparse Jacobians -------------------------------------------

SPARSE_METHODS = ["bdf", "radau5", "rodas4", "kencarp4", "trbdf2", "backward_euler"]
M = 12
WAVE = (1.0 + 2.0j) * 50.0 * sparse.diags([np.ones(M - 1), -2.0 * np.ones(M), np.ones(M - 1)], [-1, 0, 1],
                                          format="csr")


def complex_wave(t, y):
    return WAVE @ y - y ** 3


def complex_wave_jac(t, y):
    return WAVE - sparse.diags(3.0 * y ** 2)


def _complex_problem(jac):
    y0 = np.exp(1j * np.linspace(0.0, 3.0, M)) * 0.5
    return ODEProblem(complex_wave if callable(jac) else lambda t, y: WAVE @ y, (0.0, 0.1), y0, jac=jac)


def _options(name):
    return dict(h=0.005) if name == "backward_euler" else dict(rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", SPARSE_METHODS)
@pytest.mark.parametrize("kind", ["function", "constant"])
def test_complex_state_with_a_sparse_jacobian_gives_the_dense_answer(name, kind):
    if kind == "function":
        sparse_jac, dense_jac = complex_wave_jac, lambda t, y: complex_wave_jac(t, y).toarray()
    else:
        sparse_jac, dense_jac = WAVE, WAVE.toarray()
    dense = solve(_complex_problem(dense_jac), name, backend="python", **_options(name))
    run = solve(_complex_problem(sparse_jac), name, backend="python", **_options(name))
    assert dense.success and run.success, run.message
    assert np.iscomplexobj(run.y) and np.abs(run.y[-1].imag).max() > 0.1
    assert run.stats.nsteps == dense.stats.nsteps
    np.testing.assert_allclose(run.y, dense.y, rtol=0, atol=1e-9)


@pytest.mark.parametrize("solver", ["gmres", "cg"])
def test_complex_state_with_krylov_solvers_and_a_sparsity_pattern(solver):
    pattern = sparse.diags([np.ones(M - 1), np.ones(M), np.ones(M - 1)], [-1, 0, 1])
    y0 = _complex_problem(complex_wave_jac).y0
    exact = solve(_complex_problem(complex_wave_jac), "radau5", backend="python", rtol=1e-8, atol=1e-10)
    grouped = solve(ODEProblem(complex_wave, (0.0, 0.1), y0, jac_sparsity=pattern), "radau5",
                    backend="python", rtol=1e-8, atol=1e-10, linear_solver=solver)
    assert grouped.success, grouped.message
    np.testing.assert_allclose(grouped.y[-1], exact.y[-1], rtol=0, atol=1e-7)


def test_complex_mechanics_with_force_jacobians_gives_the_dense_answer():
    k = 4.0 + 1.0j
    prob = dict(accel=lambda t, x, v: -k * x - 0.5 * v, t_span=(0.0, 1.0), x0=[1.0 + 0.5j, 0.2j], v0=[0.0, 1.0])
    eye = sparse.identity(2, format="csr")
    with_jac = solve(SecondOrderProblem(**prob, jac=lambda t, x, v: (-k * eye, -0.5 * eye)), "radau5",
                     backend="python", rtol=1e-8, atol=1e-10)
    dense = solve(SecondOrderProblem(**prob), "radau5", backend="python", rtol=1e-8, atol=1e-10)
    assert with_jac.success, with_jac.message
    np.testing.assert_allclose(with_jac.y[-1], dense.y[-1], rtol=0, atol=1e-7)


def test_complex_jacobian_function_for_a_real_state_is_refused_naming_jac():
    prob = ODEProblem(decay, (0.0, 1.0), [1.0, 2.0], jac=lambda t, y: sparse.identity(2, format="csr") * 1j)
    with pytest.raises(ValueError, match=r"jac returned complex values at t=0.*complex y0"):
        solve(prob, "radau5", backend="python")


# --- item 7: a non-finite Jacobian is blamed on jac -------------------------------------------

@pytest.mark.parametrize("matrix", [np.array([[-1.0, 0.0], [np.inf, -2.0]]),
                                    sparse.csr_matrix(np.array([[-1.0, 0.0], [np.inf, -2.0]]))],
                         ids=["dense", "sparse"])
def test_constant_jacobian_with_inf_is_refused_at_construction(matrix):
    with pytest.raises(ValueError, match=r"jac must be finite, but jac\[1, 0\] = inf"):
        ODEProblem(decay, (0.0, 1.0), [1.0, 2.0], jac=matrix)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobian_nonfinite_at_t0_is_an_error_naming_jac(backend):
    with pytest.raises(ValueError, match=r"^jac returned non-finite values .*t0=0"):
        solve(ODEProblem(cubic, (0.0, 1.0), [1.0, 2.0], jac=jac_nan_at_start), "radau5", backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobian_nonfinite_mid_run_is_blamed_on_jac(backend):
    prob = ODEProblem(cubic, (0.0, 1.0), [1.0, 2.0], jac=jac_nan_late)
    fixed = solve(prob, "rodas4", h=0.1, backend=backend)
    assert fixed.status == Status.NONFINITE
    assert fixed.message.startswith("jac returned non-finite values") and named_time(fixed.message) == 0.5
    adaptive = solve(prob, "rodas4", backend=backend)
    assert adaptive.status == Status.NONFINITE           # at once: no smaller step cures jac
    assert adaptive.message.startswith("jac returned non-finite values") and "fun" not in adaptive.message
    assert named_time(adaptive.message) == float(f"{adaptive.t[-1]:.6g}") and adaptive.t[-1] > 0.45


IMPLICIT = ["backward_euler", "trapezoid", "trbdf2", "kencarp4", "radau5", "implicit_midpoint",
            "linearized_euler", "rodas4", "bdf", "ndf"]
ONE_PER_FAMILY = ["trbdf2", "radau5", "rodas4", "bdf"]


@pytest.mark.parametrize("backend, name", [("python", name) for name in IMPLICIT]
                         + [("numba", name) for name in ONE_PER_FAMILY])
def test_a_jacobian_nonfinite_mid_run_stops_adaptive_runs_at_once_naming_jac(backend, name):
    # a written time (or state) takes a fresh Jacobian in the next step, at t = 0.5, where it is nan
    integ = Integrator(ODEProblem(cubic, (0.0, 1.0), [1.0, 2.0], jac=jac_nan_late), name,
                       adaptive=None if odekit_method(name).adaptive else "doubling", backend=backend)
    integ.advance_to(0.25)
    before = integ.stats
    integ.t = 0.5
    with pytest.raises(IntegrationError) as caught:
        integ.step()
    assert caught.value.status == Status.NONFINITE
    message = str(caught.value)
    assert message.startswith("jac returned non-finite values (inf or nan) at t=0.5, in the step from t=0.5")
    after = integ.stats      # one Jacobian, no step retried smaller
    assert (after.njev, after.nsteps, integ.t) == (before.njev + 1, before.nsteps, 0.5)


def test_the_kernels_codes_are_distinct():
    from odekit.kernels import layout

    codes = {name: getattr(layout, name) for name in ("SUCCESS", "MAX_STEPS", "STEP_UNDERFLOW", "NONFINITE",
             "BAD_SHAPE", "NEWTON_FAILED", "FUNCTION_ERROR", "MEMORY_LIMIT", "INTERRUPTED", "EVENTS_ACCUMULATE",
             "MAX_EVENTS", "EVENT", "PAUSED", "BUFFER_FULL", "JAC_NONFINITE")}
    assert len(set(codes.values())) == len(codes), codes
    assert layout.JAC_NONFINITE not in set(Status)         # internal: never a run's status


def f_nan_above_one(t, y):
    # finite at y0 = (1, 2), nan at the state a forward difference perturbs it to
    return np.where(y[0] > 1.0, np.nan, -y)


def test_a_difference_jacobian_nonfinite_since_f_is_retried_with_smaller_steps():
    # f's failure, as at a stage: a smaller step may get past it, so the run shrinks the step
    sol = solve(ODEProblem(f_nan_above_one, (0.0, 1.0), [1.0, 2.0]), "radau5", backend="python")
    assert sol.status == Status.STEP_UNDERFLOW and sol.stats.nrejected > 10
    assert "; fun returned non-finite values at t=0" in sol.message


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_jacobian_of_the_wrong_shape_or_none_mid_run_is_blamed_on_jac(backend):
    shape = solve(ODEProblem(cubic, (0.0, 1.0), [1.0, 2.0], jac=jac_shape_late), "rodas4", h=0.1, backend=backend)
    assert shape.status == Status.BAD_SHAPE
    assert shape.message.startswith("jac returned 9 values (shape (3, 3)) at t=0.5; expected a (2, 2) matrix")
    none = solve(ODEProblem(cubic, (0.0, 1.0), [1.0, 2.0], jac=jac_none_late), "rodas4", h=0.1, backend=backend)
    assert none.status == Status.BAD_SHAPE
    assert none.message.startswith("jac returned None") and named_time(none.message) == 0.5


def test_jac_raising_mid_run_is_named_and_odekit_failing_is_not_blamed_on_fun(monkeypatch):
    def jac(t, y):
        if t > 0.45:
            raise KeyError("no table entry")
        return A2 - np.diag(3.0 * y ** 2)

    sol = solve(ODEProblem(cubic, (0.0, 1.0), [1.0, 2.0], jac=jac), "rodas4", h=0.1, backend="python")
    assert sol.status == Status.FUNCTION_ERROR and sol.message.startswith("jac raised KeyError")

    from odekit.sparse import SparseSystem

    def failing_solve(self, b):
        raise ValueError("b is of incompatible size")

    monkeypatch.setattr(SparseSystem, "solve", failing_solve)
    sol = solve(_complex_problem(complex_wave_jac), "bdf", backend="python")
    assert sol.status == Status.FUNCTION_ERROR
    # the innermost frame of odekit's is named (the replaced solve is this file's)
    assert sol.message.startswith("odekit (lu_solve), not fun, raised ValueError"), sol.message


# --- item 9: checks made at the first evaluation -----------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["velocity_verlet", "rk4"])
def test_force_declared_velocity_independent_that_is_not_is_refused(backend, name):
    prob = SecondOrderProblem(damped, (0.0, 1.0), [1.0], [0.0], velocity_dependent=False)
    with pytest.raises(ValueError, match=r"accel depends on the velocity.*velocity_dependent=False.*"
                                         r"a\[0\] = -1.0 for v0.*velocity_dependent=True"):
        solve(prob, name, h=0.01, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_velocity_probe_counts_nothing_and_changes_nothing(backend):
    prob = SecondOrderProblem(spring, (0.0, 1.0), [1.0], [0.5], velocity_dependent=False)
    integ = Integrator(prob, "velocity_verlet", h=0.1, backend=backend)
    assert integ.stats.nfev == 1
    np.testing.assert_array_equal(integ.y, [[1.0], [0.5]])
    # velocity Verlet on x'' = -x: each step is the same linear map, exactly
    h = 0.1
    step = np.array([[1 - h * h / 2, h], [-h + h ** 3 / 4, 1 - h * h / 2]])
    sol = solve(prob, "velocity_verlet", h=h, backend=backend)
    np.testing.assert_allclose(sol.y[-1, :, 0], np.linalg.matrix_power(step, 10) @ [1.0, 0.5], rtol=1e-13)
    assert sol.stats.nfev == 11


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_result_for_a_real_state_is_refused_naming_fun(backend):
    with pytest.raises(ValueError, match=r"fun returned complex values at t0=0.0; .*give a complex y0"):
        solve(ODEProblem(rotating_phase, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend=backend)
    with pytest.raises(ValueError, match=r"accel returned complex values .*give a complex x0 and v0"):
        solve(SecondOrderProblem(lambda t, x, v: 1j * x, (0.0, 1.0), [1.0], [0.0]), "rk4", h=0.1,
              backend="python")


def test_complex_result_mid_run_stops_naming_fun():
    def turns_complex(t, y):
        return -y if t < 0.5 else -1j * y

    sol = solve(ODEProblem(turns_complex, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend="python")
    assert sol.status == Status.BAD_SHAPE and np.isrealobj(sol.y)
    assert sol.message.startswith("fun returned complex values at t=0.5")
    np.testing.assert_allclose(sol.y[-1], np.array([1.0, 2.0]) * rk4_factor(-0.1) ** 4, rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fun, what", [(writes_nothing, "wrote nothing into its output argument"),
                                       (returns_instead, "wrote nothing into its output argument"),
                                       (writes_half, r"left 1 of 2 entries .*unwritten \(the first at flat index 1\)")],
                         ids=["nothing", "returns", "half"])
def test_inplace_function_that_does_not_fill_its_output_is_refused(backend, fun, what):
    with pytest.raises(ValueError, match=rf"fun \(inplace=True\) {what} at t0=0.0"):
        solve(ODEProblem(fun, (0.0, 1.0), [1.0, 2.0], inplace=True), "rk4", h=0.1, backend=backend)


def test_inplace_accel_that_writes_nothing_and_inplace_complex_writes_are_refused():
    prob = SecondOrderProblem(accel_writes_nothing, (0.0, 1.0), [1.0, 2.0], [0.0, 0.0], inplace=True,
                              velocity_dependent=False)
    for name in ("velocity_verlet", "rk4"):
        with pytest.raises(ValueError, match=r"accel \(inplace=True\) wrote nothing"):
            solve(prob, name, h=0.1, backend="python")
    with pytest.raises(ValueError, match=r"fun \(inplace=True\) wrote complex values .*complex y0"):
        solve(ODEProblem(writes_complex, (0.0, 1.0), [1.0, 2.0], inplace=True), "rk4", h=0.1, backend="python")


def test_inplace_with_a_scalar_state_is_refused_at_construction():
    with pytest.raises(ValueError, match=r"inplace=True needs an array state.*y0 as \[1.0\]"):
        ODEProblem(writes_nothing, (0.0, 1.0), 1.0, inplace=True)
    with pytest.raises(ValueError, match=r"inplace=True needs an array state.*x0"):
        SecondOrderProblem(accel_writes_nothing, (0.0, 1.0), 1.0, 0.0, inplace=True)


# --- item 18: a function returning None --------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_none_mid_run_is_the_same_status_and_message_on_both_backends(backend):
    y0 = np.array([1.0, 2.0])
    sol = solve(ODEProblem(none_after_half, (0.0, 1.0), y0), "rk4", h=0.1, backend=backend)
    assert sol.backend == backend
    assert sol.status == Status.BAD_SHAPE
    assert sol.message.startswith("fun returned None at t=0.55")
    np.testing.assert_allclose(sol.y[-1], y0 * rk4_factor(-0.1) ** 5, rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_without_return_is_named_as_returning_none_without_other_warnings(backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"^fun returned None at t0=0.0; .*return statement missing"):
            solve(ODEProblem(forgets_return, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend=backend)
        with pytest.raises(ValueError, match=r"^accel returned None at t0=0.0"):
            solve(SecondOrderProblem(accel_forgets_return, (0.0, 1.0), [1.0], [0.0], velocity_dependent=False),
                  "velocity_verlet", h=0.1, backend=backend)
