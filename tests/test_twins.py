"""In-place twins (odekit.twins): a function returning ``np.array([...])`` or a
tuple runs compiled without allocating, and gives the very same numbers.

Each case is solved three ways: compiled with its twin, compiled along the
ordinary path (the twins switched off, on a copy of the function so that no
cached adapter is reused), and as Python.  Module-level functions, so that
their source is there to rewrite.
"""

import copy
import math
import types
import warnings

import numpy as np
import pytest

import odekit
from odekit import ODEProblem, SecondOrderProblem, Status, backend, solve
from odekit.twins import in_place_matrix_twin, in_place_twin

from conftest import decay_k


def kepler_rhs(t, y, mu):
    r2 = y[0] * y[0] + y[1] * y[1]
    k = -mu / (r2 * math.sqrt(r2))
    return np.array([y[2], y[3], k * y[0], k * y[1]])


def kepler_tuple(t, y, mu):
    r2 = y[0] * y[0] + y[1] * y[1]
    k = -mu / (r2 * math.sqrt(r2))
    return y[2], y[3], k * y[0], k * y[1]


def kepler_accel(t, x, v, mu):
    r3 = (x[0] * x[0] + x[1] * x[1]) ** 1.5
    return np.array((-mu * x[0] / r3, -mu * x[1] / r3))


def pendulum(t, y, g, L):
    return np.array([y[1], -(g / L) * math.sin(y[0])])


def two_level(t, y, w, c):
    """``i y' = H y``, a two-level system with complex amplitudes; integer literal 0 among complex numbers."""
    return np.array([-1j * (w * y[0] + c * y[1]) + 0, -1j * (c * y[0] - w * y[1])])


def damped_wave(t, y, w):
    """A vector expression with NumPy's elementwise functions, complex."""
    return -1j * w * y + 0.1 * np.sin(t) - np.exp(-np.abs(y)) * y + 0.01 * y[0] * y


def bounded_growth(t, y, r):
    return r * y * (1.0 - y) / np.sqrt(1.0 + y * y)


def integer_rates(t, y):
    """Integer elements: NumPy makes an integer array, stored into the float state."""
    return np.array([1, -2, 3])


CASES = {
    "kepler": (ODEProblem(kepler_rhs, (0.0, 6.0), [0.5, 0.0, 0.0, math.sqrt(3.0)], args=(1.0,)), "rk4"),
    "kepler tuple": (ODEProblem(kepler_tuple, (0.0, 6.0), [0.5, 0.0, 0.0, math.sqrt(3.0)], args=(1.0,)), "dp54"),
    "kepler force": (SecondOrderProblem(kepler_accel, (0.0, 6.0), [0.5, 0.0], [0.0, math.sqrt(3.0)], args=(1.0,),
                                        velocity_dependent=False), "velocity_verlet"),
    "kepler force, reduced": (SecondOrderProblem(kepler_accel, (0.0, 6.0), [0.5, 0.0], [0.0, math.sqrt(3.0)],
                                                 args=(1.0,)), "rk4"),
    "kepler force, damped": (SecondOrderProblem(kepler_accel, (0.0, 6.0), [0.5, 0.0], [0.0, math.sqrt(3.0)],
                                                args=(1.0,), velocity_dependent=False, damping=0.1),
                             "velocity_verlet"),
    "lorenz": (odekit.problems.lorenz(t_end=3.0), "rk4"),
    "pendulum": (ODEProblem(pendulum, (0.0, 5.0), [2.0, 0.0], args=(9.8, 1.0)), "rk4"),
    "complex": (ODEProblem(two_level, (0.0, 5.0), np.array([1.0 + 0j, 0.5j]), args=(1.0, 0.3)), "rk4"),
    "integers": (ODEProblem(integer_rates, (0.0, 1.0), [0.0, 0.0, 0.0]), "rk4"),
    "kepler zoo, a vector expression": (odekit.problems.kepler(orbits=1), "rk4"),
    "kepler zoo, splitting": (odekit.problems.kepler(orbits=1), "velocity_verlet"),
    "decay, a vector expression": (ODEProblem(decay_k, (0.0, 1.0), [1.0, 2.0, 3.0], args=(0.5,)), "dp54"),
    "complex vector expression": (ODEProblem(damped_wave, (0.0, 2.0), np.array([1.0 + 0j, 0.5j, -1.0]),
                                             args=(2,)), "rk4"),
    "vector expression, sqrt": (ODEProblem(bounded_growth, (0.0, 2.0), [0.1, 0.5, 2.0], args=(1.5,)), "rk4"),
    "outer solar system, a declared twin": (odekit.problems.outer_solar_system(t_end=6.0), "velocity_verlet"),
    "a cluster, a declared twin by partners": (SecondOrderProblem(
        odekit.problems.outer_solar_system().accel, (0.0, 1.0), np.random.default_rng(5).normal(size=(60, 3)),
        np.random.default_rng(6).normal(size=(60, 3)), args=(np.random.default_rng(7).uniform(0.1, 1.0, 60),),
        velocity_dependent=False), "velocity_verlet"),
}
# NumPy's complex exp and abs round differently from Numba's (the backends agree to about 1e-16 there,
# see test_backends.py): this case is compared with the ordinary compiled path only
NOT_AS_PYTHON = {"complex vector expression"}


def _user(problem):
    return problem.accel if problem.second_order else problem.fun


def _ordinary(problem):
    """The problem with a copy of its function, a new object: adapters are cached per function."""
    fn = _user(problem)
    copied = copy.copy(problem)
    setattr(copied, "accel" if problem.second_order else "fun",
            types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__))
    return copied


def _writes_in_place(problem, method, part=0):
    """Whether the compiled backend's adapter for ``problem`` run by ``method`` calls an in-place twin: the
    right-hand side's (``part`` 0) or the Jacobian's (1)."""
    family = odekit.method(method).family
    dtype = np.dtype(np.float64) if problem.second_order else problem.y0.dtype
    key = backend._adapter_key(problem, family.second_order, family.implicit)
    return getattr(backend.compiled_adapters(problem, key, dtype)[part], "writes_in_place", False)


def _same(a, b):
    assert a.status == b.status == Status.SUCCESS
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)            # bit for bit
    assert a.stats == b.stats


@pytest.mark.parametrize("case", CASES)
def test_the_twin_gives_the_same_states_bit_for_bit(case, monkeypatch):
    problem, method = CASES[case]
    assert in_place_twin(_user(problem), problem.second_order) is not None
    twin = solve(problem, method, h=0.01, backend="numba")
    assert twin.backend == "numba"
    assert _writes_in_place(problem, method)
    python = solve(problem, method, h=0.01, backend="python")
    with monkeypatch.context() as patch:
        patch.setattr(backend, "in_place_twin", lambda *fn: None)
        ordinary_problem = _ordinary(problem)
        ordinary = solve(ordinary_problem, method, h=0.01, backend="numba")
        assert not _writes_in_place(ordinary_problem, method)
    _same(twin, ordinary)
    if case not in NOT_AS_PYTHON:
        _same(twin, python)


@pytest.mark.parametrize("bodies", [1, 2, 5, 6, 9, odekit.problems.orbits.PAIRS_BY_PARTNER - 1,
                                    odekit.problems.orbits.PAIRS_BY_PARTNER, 101])
def test_the_nbody_forces_declared_twin_gives_its_numbers_bit_for_bit(bodies):
    """Both of its loops: the pairs taken once (their 1 / r^3 eight at a time, the count padded: 0, 1, 10,
    15, 36 pairs, and the most its stack space holds), and every body's sum partner by partner."""
    import numba

    from odekit.kernels import jit  # noqa: F401  (registers the kernels' helpers the twin calls)

    orbits = odekit.problems.orbits
    most = (orbits.PAIRS_BY_PARTNER - 1) * (orbits.PAIRS_BY_PARTNER - 2) // 2
    assert most <= orbits.PAIRS_ON_STACK < most + 8 and orbits.PAIRS_ON_STACK % 8 == 0
    accel = odekit.problems.outer_solar_system().accel
    twin = numba.njit(error_model="numpy")(in_place_twin(accel, True, False))
    rng = np.random.default_rng(bodies)
    x, gm = rng.normal(size=(bodies, 3)), rng.uniform(0.1, 1.0, size=bodies)
    W = np.full((2, 6 * bodies), np.nan)
    W[0, :3 * bodies] = x.ravel()
    assert twin(W, 1, 3 * bodies, 0.0, W[0, :3 * bodies], W[0, 3 * bodies:], gm)
    assert np.array_equal(W[1, 3 * bodies:], accel(0.0, x, x, gm).ravel())
    assert not twin(W, 1, 3 * bodies, 0.0, W[0, :3 * bodies], W[0, 3 * bodies:], gm[1:])   # not n bodies


# --- what the rewrite leaves alone ---------------------------------------------------------

def looped(t, y):
    out = np.empty(2)
    for k in range(2):
        out[k] = -y[k]
    return out


def scaled(s):
    def closure(t, y):
        return np.array([-s * y[0], -s * y[1]])
    return closure


def built_elsewhere(t, y):
    a = np.array([-y[0], -y[1]])
    return a


def reshaped(t, y):
    return np.array([[-y[0]], [-y[1]]]).reshape(2)


def two_returns(t, y):
    if t > 1.0:
        return np.array([0.0, 0.0])
    return np.array([-y[0], -y[1]])


def with_dtype(t, y):
    return np.array([-y[0], -y[1]], dtype=np.float64)


ROTATION = np.array([[0.0, -1.0], [1.0, 0.0]])


def matrix_product(t, y):
    return ROTATION @ y


def summed(t, y):
    """Not elementwise: every component depends on all of them."""
    return -np.sum(y) * y


def reversed_state(t, y):
    return -y[::-1]


def rebinds_the_state(t, y):
    y = y[::-1]
    return -y


UNRECOGNISED = [looped, scaled(1.0), built_elsewhere, reshaped, two_returns, with_dtype, matrix_product, summed,
                reversed_state, rebinds_the_state, lambda t, y: np.array([-y[0], -y[1]])]


@pytest.mark.parametrize("fn", UNRECOGNISED, ids=lambda fn: fn.__name__)
def test_a_function_the_rewrite_does_not_recognise_runs_unchanged(fn):
    assert in_place_twin(fn) is None
    problem = ODEProblem(fn, (0.0, 2.0), [1.0, 0.5])
    compiled = solve(problem, "rk4", h=0.1, backend="numba")
    assert not _writes_in_place(problem, "rk4")
    _same(compiled, solve(problem, "rk4", h=0.1, backend="python"))


def halves(t, y):
    """Its elements are arrays: NumPy stacks them into a 2 x 2 array, Numba compiles neither form."""
    return np.array([-y[:2], y[2:]])


def complex_into_real(t, y):
    return np.array([-y[0], 1j * y[1]])


def too_short(t, y):
    return np.array([-y[0]])


def _outcome(problem):
    """What ``backend="auto"`` makes of ``problem``: its error, or its backend, warnings and states."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sol = solve(problem, "rk4", h=0.1)
        except Exception as exc:
            return type(exc), str(exc)
    return sol.backend, sol.status, sol.y.tolist(), [str(w.message) for w in caught]


def scaled_by_an_array(t, y, c):
    """``c`` is an array: the rewrite takes it for a number, and Numba refuses the twin."""
    return -c * y


def test_a_vector_expression_with_an_array_from_args_keeps_the_ordinary_path():
    assert in_place_twin(scaled_by_an_array) is not None
    problem = ODEProblem(scaled_by_an_array, (0.0, 1.0), [1.0, 0.5], args=(np.array([1.0, 2.0]),))
    compiled = solve(problem, "rk4", h=0.1, backend="numba")
    assert compiled.backend == "numba" and not _writes_in_place(problem, "rk4")
    _same(compiled, solve(problem, "rk4", h=0.1, backend="python"))


@pytest.mark.parametrize("fn, y0", [(halves, [1.0, 0.5, 0.25, 2.0]), (complex_into_real, [1.0, 0.5]),
                                    (too_short, [1.0, 0.5])], ids=["halves", "complex_into_real", "too_short"])
def test_a_result_that_does_not_fit_fares_as_without_the_twin(fn, y0, monkeypatch):
    assert in_place_twin(fn) is not None
    problem = ODEProblem(fn, (0.0, 1.0), y0)
    with_twin = _outcome(problem)
    monkeypatch.setattr(backend, "in_place_twin", lambda *fn: None)
    assert with_twin == _outcome(_ordinary(problem))


def test_a_function_whose_source_was_edited_since_it_was_imported_is_not_rewritten(tmp_path, monkeypatch):
    path = tmp_path / "user_rhs.py"
    path.write_text("import numpy as np\n\ndef f(t, y):\n    return np.array([-y[0], -2.0 * y[1]])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import user_rhs
    assert in_place_twin(user_rhs.f) is not None
    fresh = types.FunctionType(user_rhs.f.__code__, user_rhs.f.__globals__, "f")
    path.write_text("import numpy as np\n\ndef f(t, y):\n    return np.array([-y[0], -3.0 * y[1]])\n")
    assert in_place_twin(fresh) is None


# --- a Jacobian returning np.array([[...], ...]): its matrix twin ---------------------------

def van_der_pol(t, y, mu):
    return np.array([y[1], mu * (1.0 - y[0] * y[0]) * y[1] - y[0]])


def van_der_pol_jac(t, y, mu):
    return np.array([[0.0, 1.0], [-2.0 * mu * y[0] * y[1] - 1.0, mu * (1.0 - y[0] * y[0])]])


def jac_of_three_rows(t, y, mu):
    return np.array([[0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]])


def jac_of_complex_entries(t, y, mu):
    return np.array([[0.0, 1j], [-1.0, 0.0]])


def jac_of_uneven_rows(t, y, mu):
    return np.array([[0.0, 1.0], [-1.0]])


def _with_jac(jac, mu=100.0):
    fn = types.FunctionType(jac.__code__, jac.__globals__, jac.__name__)    # a new object: adapters are cached
    return ODEProblem(van_der_pol, (0.0, 2.0), [2.0, 0.0], args=(mu,), jac=fn)


@pytest.mark.parametrize("method", ["rodas4", "radau5", "bdf"])
def test_the_jacobians_matrix_twin_gives_the_same_steps_bit_for_bit(method, monkeypatch):
    """Written into the kernel's matrix, each entry evaluated and converted as before: the same run."""
    assert in_place_matrix_twin(van_der_pol_jac) is not None
    problem = _with_jac(van_der_pol_jac)
    twin = solve(problem, method, rtol=1e-6, backend="numba")
    assert twin.backend == "numba" and twin.stats.njev > 0 and _writes_in_place(problem, method, 1)
    monkeypatch.setattr(backend, "in_place_matrix_twin", lambda fn: None)
    ordinary_problem = _with_jac(van_der_pol_jac)
    ordinary = solve(ordinary_problem, method, rtol=1e-6, backend="numba")
    assert not _writes_in_place(ordinary_problem, method, 1)
    _same(twin, ordinary)


def test_the_matrix_twin_writes_every_entry_and_refuses_another_shape():
    twin = in_place_matrix_twin(van_der_pol_jac)
    y = np.array([2.0, 0.5])
    J = np.full((2, 2), np.nan)
    assert twin(J, 0.0, y, 100.0) is True
    np.testing.assert_array_equal(J, van_der_pol_jac(0.0, y, 100.0))
    other = np.zeros((3, 3))
    assert twin(other, 0.0, y, 100.0) is False and not other.any()
    assert in_place_matrix_twin(jac_of_uneven_rows) is None        # not a matrix: NumPy's own error, as before


@pytest.mark.parametrize("jac", [jac_of_three_rows, jac_of_complex_entries], ids=["three_rows", "complex"])
def test_a_jacobian_that_does_not_fit_fares_as_without_the_twin(jac, monkeypatch):
    """Another shape is refused at the call, a complex entry for a real state when Numba compiles the twin."""
    def outcome(problem):
        try:
            sol = solve(problem, "rodas4", rtol=1e-6, backend="numba")
        except Exception as exc:
            return type(exc), str(exc)
        return sol.status, sol.message
    with_twin = outcome(_with_jac(jac))
    monkeypatch.setattr(backend, "in_place_matrix_twin", lambda fn: None)
    assert with_twin == outcome(_with_jac(jac))


def rotation(t, y, omega):
    return np.array([-omega * y[1], omega * y[0], -y[2]])


def rotation_jac(t, y, omega):
    return np.array([[0, -omega, 0], [omega, 0, 0], [0, 0, -1.0]])


def test_a_jacobian_numba_cannot_make_as_an_array_runs_compiled_through_its_twin():
    """Integers and floats in nested lists: Numba's lowering of ``np.array`` fails on them (an
    AssertionError: test_problem_checks), its entries one by one it compiles."""
    problem = ODEProblem(rotation, (0.0, 1.0), [1.0, 0.0, 0.5], args=(2,), jac=rotation_jac)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # no fallback to Python
        compiled = solve(problem, "radau5", backend="auto")
    assert compiled.backend == "numba" and _writes_in_place(problem, "radau5", 1)
    python = solve(problem, "radau5", backend="python")
    assert compiled.stats == python.stats                    # the same steps, Newton iterations and Jacobians
    # (each backend's LU rounds its own way, and Newton stops within a share of rtol = 1e-3 of the root)
    np.testing.assert_allclose(compiled.y, python.y, rtol=1e-5)
