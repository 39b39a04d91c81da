"""Args of a few floats and ints share one compiled loop per family (odekit.kernels.packing), with the same
numbers."""

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


def _one_past_2_53(t, y, k):
    """-y when ``k`` is the int 2**53 (k + 1 - k is 1); as the float 2**53, k + 1 rounds to k and it is 0."""
    return -(k + 1 - k) * y


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


def test_an_int_is_packed_and_reaches_the_function_as_the_int_it_was():
    whole = odekit.ODEProblem(_one_past_2_53, (0.0, 1.0), [1.0], args=(2 ** 53,))
    k = _kernels(whole)
    assert k.packed and k.drive is _kernels(odekit.ODEProblem(decay, (0.0, 1.0), [1.0])).drive
    sol = odekit.solve(whole, "dp54", rtol=1e-10, atol=1e-12, backend="numba")
    assert sol.backend == "numba" and sol.y[-1, 0] == pytest.approx(np.exp(-1.0), rel=1e-8)


@pytest.mark.parametrize("args", [(2 ** 53 + 1,), (True,), (np.ones(2),), (1.0,) * (packing.SLOTS + 1), ((1.0,),)],
                         ids=["inexact int", "bool", "array", "five floats", "tuple"])
def test_other_args_are_not_packed(args):
    assert packing.layout(args) is None and packing.packed(args) is args


def test_args_not_packed_reach_the_loop_as_they_are():
    five = odekit.ODEProblem(_five, (0.0, 1.0), [1.0], args=(0.1, 0.2, 0.3, 0.4, 0.5))
    k = _kernels(five)
    assert not k.packed and k.args(five.args) is five.args
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
    base = odekit.ODEProblem(_oscillator, (0.0, 3.0), [1.0, 0.0], args=(2.0, 0.1, 0.5, 3))         # an int too
    y0 = np.array([[1.0, 0.0], [0.5, 0.2], [0.0, 1.0]])
    ens = ensemble(base, "dp54", y0=y0, args={"w": np.array([1.0, 1.5, 2.5])}, backend="numba")
    assert ens.backend == "numba"
    for i in range(3):
        alone = odekit.ODEProblem(_oscillator, (0.0, 3.0), y0[i], args=((1.0, 1.5, 2.5)[i], 0.1, 0.5, 3))
        sol = odekit.solve(alone, "dp54", backend="python")          # the same numbers as Python's
        assert (ens[i].y[-1] == sol.y[-1]).all() and ens[i].stats == sol.stats


@pytest.mark.parametrize("kinds", ["", "f", "i", "fi", "if" * (packing.SLOTS // 2)])
def test_unpacking_hands_on_its_entries_each_of_its_kind(kinds):
    args = tuple(j + 1 if kind == "i" else j + 1.5 for j, kind in enumerate(kinds))
    assert packing.layout(args) == kinds
    seen = []
    fn = packing.unpacking(lambda a, b, args: seen.append((a, b, args)), 3, kinds)
    fn("t", "W", packing.pack(args))
    assert seen == [("t", "W", args)] and [type(a) for a in seen[0][2]] == [type(a) for a in args]


def _rate(t, y, k):
    return -k * y


def _half(t, y, k):
    return y[0] - 0.5


def test_a_problems_functions_are_each_compiled_once():
    """Compiled for the args as they are, then again inside the call that unpacks them, a new problem's first
    solve with a cached loop took 0.70-0.75 s instead of 0.49-0.59 (with an event, 1.52-1.64 s instead of
    1.21-1.24).  Here no function is compiled twice for the same types."""
    from numba.core import event

    from odekit import backend

    problem = odekit.ODEProblem(_rate, (0.0, 2.0), [1.0], args=(1.0,))
    with event.install_recorder("numba:compile") as recorder:
        sol = odekit.solve(problem, "dp54", events=odekit.Event(_half, terminal=True), backend="numba",
                           rtol=1e-10, atol=1e-12)
    compiled = [(e.data["dispatcher"].py_func, e.data["args"]) for _, e in recorder.buffer if e.is_start
                and not (e.data["dispatcher"].py_func.__module__ or "").startswith("odekit.kernels.")]  # the loop's
    assert len(compiled) > 4 and len(set(compiled)) == len(compiled)
    assert sol.backend == "numba" and sol.t[-1] == pytest.approx(np.log(2.0), rel=1e-9)

    # the Jacobian of an explicit run, which it never calls, is one for every problem
    another = odekit.ODEProblem(lambda t, y, k: -k * y, (0.0, 1.0), [1.0], args=(2.0,))
    with event.install_recorder("numba:compile") as recorder:
        odekit.solve(another, "dp54", backend="numba")
    assert not [e for _, e in recorder.buffer if e.is_start and e.data["dispatcher"].py_func is backend._no_jacobian]
