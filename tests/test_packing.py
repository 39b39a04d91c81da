"""Args of a few floats share one compiled loop per family (odekit.kernels.packing), with the same numbers."""

import numpy as np
import pytest

import odekit
from odekit.ensemble import ensemble
from odekit.kernels import packing

from conftest import decay, decay_k


def _oscillator(t, y, w, c, f, p):
    return np.array([y[1], -w * w * y[0] - c * y[1] + f * np.cos(p * t)])


def _five(t, y, a, b, c, d, e):
    return -(a + b + c + d + e) * y


def _kernels(problem, method="dp54"):
    return odekit.Integrator(problem, method, backend="numba")._kernels


def test_no_args_one_float_and_four_run_the_same_loop_with_the_same_numbers():
    problems = [odekit.ODEProblem(decay, (0.0, 2.0), [1.0, 0.5]),
                odekit.ODEProblem(decay_k, (0.0, 2.0), [1.0, 0.5], args=(0.7,)),
                odekit.ODEProblem(_oscillator, (0.0, 2.0), [1.0, 0.0], args=(2.0, 0.1, 0.5, 1.3))]
    kernels = [_kernels(p) for p in problems]
    assert all(k.packed for k in kernels)
    assert kernels[0].drive is kernels[1].drive is kernels[2].drive          # one compiled loop
    for p in problems:
        compiled, python = odekit.solve(p, "dp54", backend="numba"), odekit.solve(p, "dp54", backend="python")
        assert compiled.backend == "numba"
        assert (compiled.t == python.t).all() and (compiled.y == python.y).all()
        assert compiled.stats == python.stats


def test_ints_and_five_floats_reach_the_loop_as_they_are():
    five = odekit.ODEProblem(_five, (0.0, 1.0), [1.0], args=(0.1, 0.2, 0.3, 0.4, 0.5))
    whole = odekit.ODEProblem(decay_k, (0.0, 1.0), [1.0], args=(2,))
    for problem in (five, whole):
        k = _kernels(problem)
        assert not k.packed and k.args(problem.args) is problem.args
    sol = odekit.solve(five, "dp54", rtol=1e-10, atol=1e-12, backend="numba")
    assert sol.y[-1, 0] == pytest.approx(np.exp(-1.5), rel=1e-8)


def test_the_functions_take_the_args_from_python_as_given_or_packed():
    problem = odekit.ODEProblem(_oscillator, (0.0, 1.0), [1.0, 0.3], args=(2.0, 0.1, 0.5, 1.3))
    k = _kernels(problem)
    expected = _oscillator(0.2, problem.y0, *problem.args)
    for args in (problem.args, packing.pack(problem.args)):
        W = np.zeros((2, 2))
        W[0] = problem.y0
        assert k.rhs(0.2, W, 0, 1, args)
        assert (W[1] == expected).all()


def test_an_ensemble_with_one_float_per_trajectory_and_three_shared_is_each_trajectorys_solve():
    base = odekit.ODEProblem(_oscillator, (0.0, 3.0), [1.0, 0.0], args=(2.0, 0.1, 0.5, 1.3))
    y0 = np.array([[1.0, 0.0], [0.5, 0.2], [0.0, 1.0]])
    ens = ensemble(base, "dp54", y0=y0, args={"w": np.array([1.0, 1.5, 2.5])}, backend="numba")
    assert ens.backend == "numba"
    for i in range(3):
        alone = odekit.ODEProblem(_oscillator, (0.0, 3.0), y0[i], args=((1.0, 1.5, 2.5)[i], 0.1, 0.5, 1.3))
        sol = odekit.solve(alone, "dp54", backend="python")          # the same numbers as Python's
        assert (ens[i].y[-1] == sol.y[-1]).all() and ens[i].stats == sol.stats


@pytest.mark.parametrize("count", range(packing.SLOTS + 1))
def test_unpacking_hands_on_the_first_count_floats(count):
    seen = []
    fn = packing.unpacking(lambda a, b, args: seen.append((a, b, args)), 3, count)
    fn("t", "W", packing.pack(tuple(float(j + 1) for j in range(count))))
    assert seen == [("t", "W", tuple(float(j + 1) for j in range(count)))]
