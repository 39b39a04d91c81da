"""Bad input, table-driven: what each public entry point refuses, and how it says so.

Each row of ``ROWS`` is a call, the exception it must raise before anything
is computed, and a pattern its message must match: the argument's name, the
value given and what is accepted.  Rows whose call takes a backend run on
both, ``"python"`` and ``"numba"``; the others once.  Every row failed on the
code before :mod:`odekit.checks` -- a raw Python or NumPy message, a value
taken silently (``h="0.1"``, ``velocity_dependent="False"`` read as True, a
masked ``y0`` whose mask was dropped), an overflow -- or pins a good message
that was there already (marked "kept").

After the table: the inputs accepted on purpose (step counts beyond the
kernels' int64 mean "no limit"; SciPy's ``first_step``, ``max_step`` and
``jac_sparsity`` in ``solve_ivp``).
"""

import math
import re
import warnings

import numpy as np
import pytest

import odekit
from odekit import (FixedStep, Integrator, IntegrationError, MethodControl, ODEProblem, PIController,
                    SecondOrderProblem, Status, StepDoubling, StiffnessWarning, analysis, cli, problems, solve,
                    solve_ivp)
from odekit.multistep import BDFCoefficients
from odekit.shootout import shootout
from odekit.sparse import LinearSolver

from conftest import decay, nan_after, spring

BACKENDS = ("python", "numba")


# --- module-level functions (the compiled backend specialises on them) -----------------

def fast_rotation(t, y):
    """y' = 1e6 J y: explicit Euler grows by sqrt(1 + (1e6 h)^2) per step, at every h."""
    return 1e6 * np.array([-y[1], y[0]])


def decay_problem():
    return ODEProblem(decay, (0.0, 1.0), [1.0, 2.0])


def integrator(backend, problem=None):
    return Integrator(problem or decay_problem(), "rk4", h=0.1, backend=backend)


def dense(backend):
    return solve(decay_problem(), "rk4", h=0.25, dense_output=True, backend=backend)


def kepler_run():
    return solve(problems.kepler(), "rk4", h=0.1, backend="python")


def assign(obj, name, value):
    setattr(obj, name, value)


def got(text):
    """The literal text of a message, as a pattern."""
    return re.escape(text)


# --- the table -------------------------------------------------------------------------
# (label, call(backend), exception, pattern); BACKENDS rows first, then rows without one.

H = "h must be a positive finite step size, got "
RTOL2 = "rtol must be a number or have one entry per state component (2), got "
TEVAL = "t_eval must be a real number or a one-dimensional array of them, got "
SPAN = "t_span must be a pair of numbers (t0, t_end), got "
Y0 = "y0 must be an array of real or complex numbers, got "
JAC = "jac must be a function jac(t, y, *args) or a (2, 2) matrix of real numbers (the state is real), got "
Y_REAL = "y must be an array of real numbers (the state is real), got "
ADVANCE = "t must be a finite time not behind the current time 0.0 in the direction of integration, got "
SOL_T = "t must be a real number or a one-dimensional array of them, got "
PROGRESS = "progress must be a callable progress(done, total, label) or None, got int"
KEPLER = problems.kepler()

WITH_BACKEND = [
    # solve: numbers, flags, choices
    ("h str", lambda b: solve(decay_problem(), "rk4", h="0.1", backend=b), ValueError,
     got(H + "'0.1' (str); the direction of integration follows t_span")),
    ("h bool", lambda b: solve(decay_problem(), "rk4", h=True, backend=b), ValueError, got(H + "True (bool)")),
    ("h complex", lambda b: solve(decay_problem(), "rk4", h=0.1j, backend=b), ValueError, got(H + "0.1j")),
    ("rtol str", lambda b: solve(decay_problem(), rtol="1e-6", backend=b), ValueError,
     got(RTOL2 + "'1e-6' (str); its entries are of dtype <U4")),
    ("rtol complex", lambda b: solve(decay_problem(), rtol=1j, backend=b), ValueError, got(RTOL2 + "1j")),
    ("rtol bool", lambda b: solve(decay_problem(), rtol=True, backend=b), ValueError, got(RTOL2 + "True (bool)")),
    ("atol strs", lambda b: solve(decay_problem(), atol=["a", "b"], backend=b), ValueError,
     got("atol must be a number or have one entry per state component (2), got ['a', 'b']")),
    ("atol None", lambda b: solve(decay_problem(), atol=None, backend=b), ValueError,
     got("atol must be a number or have one entry per state component (2), got None")),
    ("rtol zero (kept)", lambda b: solve(decay_problem(), rtol=0, backend=b), ValueError,
     got("rtol must be positive and finite, got 0")),
    ("t_eval strs", lambda b: solve(decay_problem(), "rk4", h=0.1, t_eval=["a"], backend=b), ValueError,
     got(TEVAL + "['a']; its entries are of dtype <U1")),
    ("t_eval complex", lambda b: solve(decay_problem(), "rk4", h=0.1, t_eval=[0.5j], backend=b), ValueError,
     got(TEVAL + "[0.5j]")),
    ("t_eval str", lambda b: solve(decay_problem(), "rk4", h=0.1, t_eval="0.5", backend=b), ValueError,
     got(TEVAL + "'0.5' (str)")),
    ("t_eval nan", lambda b: solve(decay_problem(), "rk4", h=0.1, t_eval=[0.5, math.nan], backend=b), ValueError,
     got("t_eval must be finite, but t_eval[1] = nan")),
    ("dense_output str", lambda b: solve(decay_problem(), "rk4", h=0.1, dense_output="yes", backend=b), ValueError,
     got("dense_output must be True or False, got 'yes' (str)")),
    ("dense_output None", lambda b: solve(decay_problem(), "rk4", h=0.1, dense_output=None, backend=b), ValueError,
     got("dense_output must be True or False, got None")),
    ("max_steps str", lambda b: solve(decay_problem(), "rk4", h=0.1, max_steps="10", backend=b), ValueError,
     got("max_steps must be a positive integer, got '10' (str)")),
    ("linear_solver for an explicit method", lambda b: solve(decay_problem(), "rk4", h=0.1, linear_solver="cg",
                                                              backend=b), ValueError,
     got("linear_solver='cg' is for implicit methods") + ".*explicit.*" + got("Leave linear_solver='auto'")),
    ("LinearSolver for an explicit method", lambda b: solve(decay_problem(), "dp54", linear_solver=LinearSolver("splu"),
                                                             backend=b), ValueError,
     got("linear_solver=LinearSolver(kind='splu'") + ".*is for implicit methods"),
    ("method int", lambda b: solve(decay_problem(), 5, h=0.1, backend=b), ValueError,
     got("method must be a method name (`odekit methods` lists them) or a Method, got 5")),
    ("method None", lambda b: solve(decay_problem(), None, h=0.1, backend=b), ValueError,
     got("method must be a method name (`odekit methods` lists them) or a Method, got None")),
    ("adaptive int (kept)", lambda b: solve(decay_problem(), adaptive=1, backend=b), ValueError,
     got("adaptive must be None, True, False or 'doubling', got 1")),
    ("progress int (kept)", lambda b: solve(decay_problem(), "rk4", h=0.1, progress=5, backend=b), TypeError,
     got(PROGRESS)),
    # solve_ivp: the span, the state, the Jacobian, SciPy's step options
    ("t_span strs", lambda b: solve_ivp(decay, ("0", "1"), [1.0], "rk4", h=0.1, backend=b), ValueError,
     got(SPAN + "('0', '1'); t_span[0] = '0' (str) is not a real number")),
    ("t_span bool", lambda b: solve_ivp(decay, (True, 2), [1.0], "rk4", h=0.1, backend=b), ValueError,
     got(SPAN + "(True, 2); t_span[0] = True (bool) is not a real number")),
    ("t_span complex", lambda b: solve_ivp(decay, (0, 1j), [1.0], backend=b), ValueError,
     got(SPAN + "(0, 1j); t_span[1] = 1j is not a real number")),
    ("t_span overflowing", lambda b: solve_ivp(decay, (-1e308, 1e308), [1.0], "euler", h=1e300, backend=b),
     ValueError, got("t_span=(-1e+308, 1e+308) is longer than the largest float: t_end - t0 overflows; "
                     "accepted: |t_end - t0| <= 1.798e+308")),
    # (solve_ivp accepts these two as SciPy does: test_scipy_ivp.py; a problem for solve refuses them)
    ("t_span zero length (kept)", lambda b: solve(ODEProblem(decay, (1.0, 1.0), [1.0]), backend=b), ValueError,
     got("t_span has zero length: t0 = t_end = 1.0; accepted: t_end != t0")),
    ("y0 empty (kept)", lambda b: solve(ODEProblem(decay, (0.0, 1.0), []), backend=b), ValueError,
     got("y0 is empty; accepted: at least one number")),
    ("y0 masked", lambda b: solve_ivp(decay, (0.0, 1.0), np.ma.masked_array([1.0, 2.0], mask=[0, 1]), backend=b),
     ValueError, got(Y0 + "masked_array(") + ".*" + got("a masked array's mask would be dropped")),
    ("y0 bools", lambda b: solve_ivp(decay, (0.0, 1.0), [True, False], backend=b), ValueError,
     got(Y0 + "[True, False]; its entries are of dtype bool")),
    ("y0 strs", lambda b: solve_ivp(decay, (0.0, 1.0), ["1", "2"], backend=b), ValueError,
     got(Y0 + "['1', '2']; its entries are of dtype <U1")),
    ("y0 ragged", lambda b: solve_ivp(decay, (0.0, 1.0), [[1, 2], [3]], backend=b), ValueError,
     got(Y0 + "[[1, 2], [3]]; its nested lists have unequal lengths")),
    ("jac str", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0, 2.0], "bdf", jac="abc", backend=b), ValueError,
     got(JAC + "'abc' (str)")),
    ("jac ragged", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0, 2.0], "bdf", jac=[[1, 2], [3]], backend=b),
     ValueError, got(JAC + "[[1, 2], [3]]; its nested lists have unequal lengths")),
    ("jac complex for a real state", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0, 2.0], "bdf",
                                                         jac=[[1j, 0], [0, 1]], backend=b), ValueError,
     got(JAC + "[[1j, 0], [0, 1]]; its entries are of dtype complex128")),
    ("jac_sparsity str", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0, 2.0], "bdf", jac_sparsity="x", backend=b),
     ValueError, got("jac_sparsity must be a (2, 2) array of bools or numbers (nonzero: may be nonzero) or a "
                     "scipy.sparse matrix, got 'x' (str)")),
    ("jac_sparsity ragged", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0, 2.0], "bdf", jac_sparsity=[[1, 2], [3]],
                                                backend=b), ValueError,
     got("jac_sparsity must be a (2, 2) array") + ".*unequal lengths"),
    ("first_step zero", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0], first_step=0, backend=b), ValueError,
     got("first_step must be a positive finite step size, got 0")),
    ("first_step beyond the span", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0], first_step=2.0, backend=b),
     ValueError, got("first_step=2.0 is larger than the span |t_end - t0| = 1.0; accepted: 0 < first_step <= 1.0")),
    ("max_step str", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0], max_step="0.1", backend=b), ValueError,
     got("max_step must be a positive number (inf: no limit), got '0.1' (str)")),
    ("max_step zero", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0], max_step=0.0, backend=b), ValueError,
     got("max_step must be a positive number (inf: no limit), got 0.0")),
    ("max_step with h", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0], "rk4", h=0.1, max_step=0.1, backend=b),
     ValueError, got("first_step and max_step set the steps of an adaptive run; give them or h=..., not both")),
    ("first_step with adaptive=False", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0], "rk4", adaptive=False,
                                                           first_step=0.1, backend=b), ValueError,
     got("give them or adaptive=False, not both")),
    ("max_step for a method without a pair", lambda b: solve_ivp(decay, (0.0, 1.0), [1.0], "rk4", max_step=0.1,
                                                                 backend=b), ValueError,
     got("method 'rk4' has no embedded error estimate") + ".*" + got("adaptive='doubling'")),
    # Integrator: its time, state and step counts
    ("Integrator max_steps str", lambda b: Integrator(decay_problem(), "rk4", h=0.1, max_steps="many", backend=b),
     ValueError, got("max_steps must be a positive integer, got 'many' (str)")),
    ("it.t str", lambda b: assign(integrator(b), "t", "x"), ValueError, got("t must be finite and real, got 'x' (str)")),
    ("it.t numeric str", lambda b: assign(integrator(b), "t", "1"), ValueError,
     got("t must be finite and real, got '1' (str)")),
    ("it.t bool", lambda b: assign(integrator(b), "t", True), ValueError, got("t must be finite and real, got True")),
    ("it.t None", lambda b: assign(integrator(b), "t", None), ValueError, got("t must be finite and real, got None")),
    ("it.t nan (kept)", lambda b: assign(integrator(b), "t", math.nan), ValueError, got("t must be finite")),
    ("it.y strs", lambda b: assign(integrator(b), "y", ["a", "b"]), ValueError,
     got(Y_REAL + "['a', 'b']; its entries are of dtype <U1")),
    ("it.y numeric strs", lambda b: assign(integrator(b), "y", ["1", "2"]), ValueError, got(Y_REAL + "['1', '2']")),
    ("it.y complex into a real state", lambda b: assign(integrator(b), "y", [1j, 1]), ValueError,
     got(Y_REAL + "[1j, 1]; its entries are of dtype complex128")),
    ("it.y masked", lambda b: assign(integrator(b), "y", np.ma.masked_array([1.0, 2.0], mask=[0, 1])), ValueError,
     got(Y_REAL + "masked_array(") + ".*mask would be dropped"),
    ("it.y nan", lambda b: assign(integrator(b), "y", [1.0, math.nan]), ValueError,
     got("y must be finite, but y[1] = nan")),
    ("it.v str", lambda b: assign(integrator(b, SecondOrderProblem(spring, (0.0, 1.0), [1.0], [0.0],
                                                                    velocity_dependent=False)), "v", ["fast"]),
     ValueError, got("v must be an array of real numbers (the state is real), got ['fast']")),
    ("advance_to str", lambda b: integrator(b).advance_to("x"), ValueError, got(ADVANCE + "'x' (str)")),
    ("advance_to numeric str", lambda b: integrator(b).advance_to("0.5"), ValueError, got(ADVANCE + "'0.5' (str)")),
    ("advance_to None", lambda b: integrator(b).advance_to(None), ValueError, got(ADVANCE + "None")),
    ("advance_to backward", lambda b: integrator(b).advance_to(-1.0), ValueError, got(ADVANCE + "-1.0")),
    ("step str", lambda b: integrator(b).step("2"), ValueError, got("n must be a positive integer, got '2' (str)")),
    ("step float (kept)", lambda b: integrator(b).step(2.0), ValueError, got("n must be a positive integer, got 2.0")),
    ("record_steps beyond memory", lambda b: integrator(b).record_steps(10 ** 30), ValueError,
     got("n must be a positive integer up to 2**62 (every step is kept and returned), got " + str(10 ** 30))),
    # Solution.__call__
    ("sol(t) two-dimensional", lambda b: dense(b)(np.array([[0.5]])), ValueError, got(SOL_T + "shape (1, 1)")),
    ("sol(t) str", lambda b: dense(b)("x"), ValueError, got(SOL_T + "'x' (str)")),
    ("sol(t) numeric str", lambda b: dense(b)("0.5"), ValueError, got(SOL_T + "'0.5' (str)")),
    ("sol(t) None", lambda b: dense(b)(None), ValueError, got(SOL_T + "None")),
    ("sol(t) complex", lambda b: dense(b)(0.5j), ValueError, got(SOL_T + "0.5j")),
    ("sol(t) nan", lambda b: dense(b)(math.nan), ValueError, got("t must be finite, but t = nan")),
    ("sol(t) outside (kept)", lambda b: dense(b)(1.5), ValueError, got("t must lie within the solved span [0.0, 1.0]")),
    # shootout
    ("shootout problem int", lambda b: shootout(5, backend=b), TypeError,
     got("problem must be the name of a problem in odekit.problems, or an ODEProblem or SecondOrderProblem, "
         "got int")),
    ("shootout methods int", lambda b: shootout("kepler", 5, backend=b), TypeError,
     got("methods must be a method name, a Method or a list of them, got int")),
    ("shootout budget bool", lambda b: shootout("kepler", ["rk4"], budget=True, backend=b), ValueError,
     got("budget must be a number (of evaluations per unit time), got True (bool)")),
    ("shootout budget str", lambda b: shootout("kepler", ["rk4"], budget="100", backend=b), ValueError,
     got("budget must be a number (of evaluations per unit time), got '100' (str)")),
    ("shootout budget zero (kept)", lambda b: shootout("kepler", ["rk4"], budget=0, backend=b), ValueError,
     got("budget must be a positive number of evaluations per unit time, got 0")),
    ("shootout t_end str", lambda b: shootout("kepler", ["rk4"], t_end="x", backend=b), ValueError,
     got("t_end must be a finite number (the end of the run), got 'x' (str)")),
    ("shootout progress int", lambda b: shootout("kepler", ["rk4"], budget=100, backend=b, progress=5), TypeError,
     got(PROGRESS)),
    # the studies
    ("convergence hs strs", lambda b: analysis.convergence(KEPLER, "rk4", ["0.1", "0.05"], backend=b), ValueError,
     got("hs must be a sequence of positive numbers, got ['0.1', '0.05']; its entries are of dtype <U4")),
    ("convergence invariant list", lambda b: analysis.convergence(KEPLER, "rk4", [0.1, 0.05], invariant=["energy"],
                                                                  backend=b), ValueError,
     got("invariant=['energy'] is not an invariant of problem 'kepler'; it has: angular_momentum") + ".*energy"),
    ("convergence progress int", lambda b: analysis.convergence(KEPLER, "rk4", [0.1, 0.05], progress=5, backend=b),
     TypeError, got(PROGRESS)),
    ("convergence rtol str", lambda b: analysis.convergence(KEPLER, "rk4", [0.1, 0.05], rtol="x", backend=b),
     ValueError, got("rtol must be a number or have one entry per state component (4), got 'x' (str)")),
    ("work_precision tolerances strs", lambda b: analysis.work_precision(KEPLER, "dp54", tolerances=["1e-3"],
                                                                         backend=b), ValueError,
     got("tolerances must be a sequence of positive numbers, got ['1e-3']")),
    ("work_precision atol str", lambda b: analysis.work_precision(KEPLER, "dp54", tolerances=[1e-3], atol="1e-3",
                                                                  backend=b), ValueError,
     got("atol must be a positive number or None (= rtol), got '1e-3' (str)")),
    ("work_precision repeat float (kept)", lambda b: analysis.work_precision(KEPLER, "dp54", tolerances=[1e-3],
                                                                             repeat=2.0, backend=b), ValueError,
     got("repeat must be a positive integer (timed runs after the warm-up), got 2.0")),
    ("stiffness t str", lambda b: analysis.stiffness(KEPLER, t="1", backend=b), ValueError,
     got("t must be finite and real, got '1' (str)")),
    ("stiffness t bool", lambda b: analysis.stiffness(KEPLER, t=True, backend=b), ValueError,
     got("t must be finite and real, got True (bool)")),
    ("stiffness y strs", lambda b: analysis.stiffness(KEPLER, y=["a"] * 4, backend=b), ValueError,
     got("y must be an array of real numbers (the state is real), got ['a', 'a', 'a', 'a']")),
    ("stiffness iterations float (kept)", lambda b: analysis.stiffness(KEPLER, iterations=2.0, backend=b),
     ValueError, got("iterations must be a positive integer, got 2.0")),
]

WITHOUT_BACKEND = [
    # problems
    ("velocity_dependent str", lambda: SecondOrderProblem(spring, (0.0, 1.0), [1.0], [0.0],
                                                         velocity_dependent="False"), ValueError,
     got("velocity_dependent must be True or False, got 'False' (str)")),
    ("velocity_dependent int", lambda: SecondOrderProblem(spring, (0.0, 1.0), [1.0], [0.0], velocity_dependent=0),
     ValueError, got("velocity_dependent must be True or False, got 0")),
    ("inplace str", lambda: ODEProblem(decay, (0.0, 1.0), [1.0], inplace="no"), ValueError,
     got("inplace must be True or False, got 'no' (str)")),
    ("autonomous str", lambda: ODEProblem(decay, (0.0, 1.0), [1.0], autonomous="yes"), ValueError,
     got("autonomous must be True or False, got 'yes' (str)")),
    ("x0 masked", lambda: SecondOrderProblem(spring, (0.0, 1.0), np.ma.masked_array([1.0], mask=[1]), [0.0]),
     ValueError, got("x0 must be an array of real or complex numbers, got masked_array(")),
    ("args None (kept)", lambda: ODEProblem(decay, (0.0, 1.0), [1.0], args=None), TypeError,
     got("args must be a tuple of extra arguments, got NoneType")),
    ("zoo parameter bool", lambda: problems.problem("pendulum", g=True), ValueError,
     got("g must be a finite number > 0, got True (bool)")),
    ("zoo vector strs", lambda: problems.problem("lorenz", y0=["1", "2", "3"]), ValueError,
     got("y0 must be 3 real numbers, got ['1', '2', '3']")),
    ("method lookup int", lambda: odekit.method(5), ValueError,
     got("method must be a method name (`odekit methods` lists them) or a Method, got 5")),
    # controllers and linear solvers
    ("FixedStep str", lambda: FixedStep("0.1"), ValueError, got(H + "'0.1' (str)")),
    ("FixedStep bool", lambda: FixedStep(True), ValueError, got(H + "True (bool)")),
    ("h0 str", lambda: PIController(h0="0.1"), ValueError,
     got("h0 must be a positive finite number or None, got '0.1' (str)")),
    ("safety str", lambda: PIController(safety="0.9"), ValueError, got("safety must be in (0, 1], got '0.9' (str)")),
    ("h_min inf", lambda: StepDoubling(h_min=math.inf), ValueError, got("h_min must be >= 0 and finite, got inf")),
    ("h_min above h_max", lambda: PIController(h_min=1.0, h_max=0.5), ValueError,
     got("h_min=1.0 is larger than h_max=0.5; accepted: h_min <= h_max")),
    ("h_max None", lambda: MethodControl(h_max=None), ValueError,
     got("h_max must be a positive number (inf: no limit), got None")),
    ("factor_max inf", lambda: PIController(factor_max=math.inf), ValueError,
     got("factor_max must be greater than 1 and finite, got inf")),
    ("beta1 str", lambda: PIController(beta1="x"), ValueError,
     got("beta1 must be a finite real number or None, got 'x' (str)")),
    ("beta2 nan", lambda: StepDoubling(beta2=math.nan), ValueError,
     got("beta2 must be a finite real number or None, got nan")),
    ("LinearSolver maxiter zero", lambda: LinearSolver("cg", maxiter=0), ValueError,
     got("maxiter must be a positive integer or None (SciPy's default, 10 n), got 0")),
    ("LinearSolver maxiter str", lambda: LinearSolver("cg", maxiter="5"), ValueError,
     got("maxiter must be a positive integer or None (SciPy's default, 10 n), got '5' (str)")),
    ("LinearSolver rtol bool", lambda: LinearSolver("cg", rtol=True), ValueError,
     got("rtol must be a number in (0, 1), got True (bool)")),
    ("BDF max_order bool", lambda: BDFCoefficients(max_order=True), ValueError,
     got("max_order must be 1 to 5 (BDF6 and up are not zero-stable), got True (bool)")),
    ("BDF max_order 6 (kept)", lambda: BDFCoefficients(max_order=6), ValueError,
     got("max_order must be 1 to 5 (BDF6 and up are not zero-stable), got 6")),
    # analysis without a run
    ("drift roundoff inf", lambda: analysis.invariant_drift(kepler_run(), "energy", roundoff=math.inf), ValueError,
     got("roundoff must be a finite number >= 0, got inf")),
    ("drift growth_threshold str", lambda: analysis.invariant_drift(kepler_run(), "energy", growth_threshold="2"),
     ValueError, got("growth_threshold must be a number > 1 (growth of the drift envelope over the second half of "
                     "the run), got '2' (str)")),
    ("max_stable_step strs", lambda: analysis.max_stable_step("rk4", ["1"]), ValueError,
     got("eigenvalues must be numbers (real or complex), got ['1']; its entries are of dtype <U1")),
    ("oscillator_step_matrix str", lambda: analysis.oscillator_step_matrix("leapfrog", "0.5"), ValueError,
     got("h_omega must be a real number or an array of them, got '0.5' (str)")),
    ("stability_region range strs", lambda: analysis.stability_region("rk4", re=("a", 1)), ValueError,
     got("re must be a finite range (lo, hi) of numbers with lo < hi, got 'a' (str)")),
    ("stability_region n float", lambda: analysis.stability_region("rk4", n=(20, 2.5)), ValueError,
     got("n must be an integer >= 2 or a pair (n_re, n_im) of them, got 2.5")),
]


ROWS = ([pytest.param(call, error, pattern, backend, id=f"{label}-{backend}")
         for label, call, error, pattern in WITH_BACKEND for backend in BACKENDS]
        + [pytest.param(lambda _, call=call: call(), error, pattern, None, id=label)
           for label, call, error, pattern in WITHOUT_BACKEND])


@pytest.mark.parametrize("call, error, pattern, backend", ROWS)
def test_bad_input_is_refused_naming_argument_value_and_what_is_accepted(call, error, pattern, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)    # nothing may be computed first, not even a probe
        with pytest.raises(error) as info:
            call(backend)
    assert info.type is error
    assert re.search(pattern, str(info.value)), f"message: {info.value}\npattern: {pattern}"


@pytest.mark.parametrize("argv, message", [
    pytest.param(["convergence", "kepler", "--methods", "rk4", "--hs", "0,abc"],
                 "--hs must be a number or comma-separated numbers, got '0,abc'", id="--hs not numbers"),
    pytest.param(["convergence", "kepler", "--methods", "rk4", "--hs", "0.1,0"],
                 "hs[1] = 0.0; accepted: positive finite numbers", id="--hs zero (kept)"),
    pytest.param(["solve", "kepler", "--h", "nan"], H + "nan", id="--h nan (kept)"),
])
def test_bad_command_line_numbers_are_named(capsys, argv, message):
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("odekit: error: ") and message in err, err


# --- accepted on purpose ---------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("huge", [2 ** 62, 2 ** 63, 10 ** 30])
def test_max_steps_from_2_to_the_62_on_means_no_limit(backend, huge):
    unlimited = solve(decay_problem(), "rk4", h=0.1, backend=backend)
    sol = solve(decay_problem(), "rk4", h=0.1, max_steps=huge, backend=backend)
    assert sol.success and sol.stats.naccepted == 10
    np.testing.assert_array_equal(sol.y, unlimited.y)
    integ = Integrator(decay_problem(), "rk4", h=0.1, max_steps=huge, backend=backend)
    integ.advance_to(1.0)
    np.testing.assert_array_equal(integ.y, unlimited.y[-1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_step_with_a_count_beyond_int64_steps_until_a_step_fails(backend):
    integ = Integrator(ODEProblem(nan_after, (0.0, 1.0), [1.0, 2.0]), "rk4", h=0.1, backend=backend)
    with pytest.raises(IntegrationError) as info:
        integ.step(10 ** 30)
    assert info.value.status == Status.NONFINITE
    assert integ.stats.naccepted == 5 and integ.t == pytest.approx(0.5, abs=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_more_fixed_steps_than_a_float_counts_warn_instead_of_overflowing(backend):
    # 1e300 / 1e-9 steps overflow to inf: the stability check raised OverflowError
    prob = ODEProblem(fast_rotation, (0.0, 1e300), [1.0, 0.0])
    with pytest.warns(StiffnessWarning, match=r"euler is unstable at every step size"):
        integ = Integrator(prob, "euler", h=1e-9, backend=backend)
    assert integ.t == 0.0


# SciPy's names in solve_ivp

def oscillator(t, y):
    return np.array([y[1], -y[0]])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method, options", [("dp54", {}), ("rk4", {"adaptive": "doubling"}), ("bdf", {})])
@pytest.mark.parametrize("first_step", [None, 0.05])
def test_max_step_bounds_every_step_the_first_included(backend, method, options, first_step):
    if backend == "numba" and method == "bdf":
        pytest.skip("one compiled family is enough: h_max is the shared driver's")
    max_step = 0.01
    sol = solve_ivp(oscillator, (0.0, 2.0), [1.0, 0.0], method, max_step=max_step, first_step=first_step,
                    backend=backend, **options)
    assert sol.success
    steps = np.diff(sol.t)
    # t_new - t differs from the step taken by the rounding of t (|t| <= 2)
    assert steps.max() <= max_step + 4 * np.finfo(float).eps * 2.0
    assert steps[0] <= max_step
    assert steps.max() > 0.9 * max_step            # the bound is what limits the steps here


@pytest.mark.parametrize("backend", BACKENDS)
def test_first_and_max_step_are_the_controllers_h0_and_h_max(backend):
    prob = ODEProblem(oscillator, (0.0, 2.0), [1.0, 0.0])
    ours = solve(prob, "dp54", controller=PIController(h0=0.02, h_max=0.1), backend=backend)
    scipys = solve_ivp(oscillator, (0.0, 2.0), [1.0, 0.0], "RK45", first_step=0.02, max_step=0.1, backend=backend)
    assert scipys.t[1] == 0.02
    np.testing.assert_array_equal(scipys.t, ours.t)
    np.testing.assert_array_equal(scipys.y, ours.y)
    assert scipys.stats == ours.stats


def chain(t, y):
    """A diffusion chain: each component couples to its neighbours only."""
    out = -2.0 * y
    out[1:] += y[:-1]
    out[:-1] += y[1:]
    return out


def test_jac_sparsity_reaches_the_problem():
    n = 30
    pattern = np.eye(n) + np.eye(n, k=1) + np.eye(n, k=-1)
    y0 = np.linspace(0.0, 1.0, n)
    direct = solve(ODEProblem(chain, (0.0, 1.0), y0, jac_sparsity=pattern), "bdf", backend="python")
    scipys = solve_ivp(chain, (0.0, 1.0), y0, "BDF", jac_sparsity=pattern, backend="python")
    dense = solve_ivp(chain, (0.0, 1.0), y0, "BDF", backend="python")
    np.testing.assert_array_equal(scipys.y, direct.y)
    assert scipys.stats == direct.stats
    # three groups of columns per Jacobian instead of n: fewer evaluations
    assert scipys.stats.nfev < dense.stats.nfev
