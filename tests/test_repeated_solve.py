"""A solve repeated on the same problem copies its set-up (Integrator._started, from the third start on: the
first is noted, the second kept): the same numbers as a first solve, and whatever changed since -- the initial
state in place, an attribute reassigned -- is read again."""

import dataclasses
import pickle

import numpy as np
import pytest

import odekit
from odekit import integrator, rerun
from odekit.integrator import Integrator, _recent_spread
from odekit.theory import stiffness as stiffness_theory
from odekit.theory.stiffness import STARVING_STEPS, steady


def _decay(t, y, k):
    return -k * y


def fresh_solve(problem, method, **options):
    """solve() with nothing kept from an earlier start."""
    integrator._STARTS.clear()
    rerun._RERUNS.clear()
    return odekit.solve(problem, method, **options)


def kept(problem, method, **options):
    """Solve twice: the next solve of ``problem`` with these options copies the start kept."""
    for _ in range(2):
        odekit.solve(problem, method, **options)
    assert any(entry[0] is problem and entry[2] is not None for entry in integrator._STARTS.values())


def often(problem, method, **options):
    """Solve until the next solve of ``problem`` with these options is run by one compiled call."""
    kept(problem, method, **options)
    for _ in range(integrator.RERUN_AFTER):
        odekit.solve(problem, method, **options)


def assert_same(a, b):
    assert a.status == b.status and a.stats == b.stats and a.message == b.message
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("method,options", [("dop853", dict(rtol=1e-8)), ("rk4", dict(h=0.01)),
                                            ("rodas4", dict(rtol=1e-6, atol=1e-10)), ("bdf", dict(rtol=1e-6))])
def test_a_repeated_solve_is_a_first_solve_bit_for_bit(method, options):
    problem = odekit.problems.van_der_pol(mu=5.0, t_end=3.0)
    first = fresh_solve(problem, method, **options)
    kept(problem, method, **options)                    # compiled, no events, scalar args
    for _ in range(2):
        assert_same(odekit.solve(problem, method, **options), first)


def test_an_initial_state_changed_in_place_is_read_again():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(0.5,))
    kept(problem, "dp54")
    problem.y0[:] = [3.0, -1.0]
    again = odekit.solve(problem, "dp54")
    np.testing.assert_allclose(again.y[-1], np.array([3.0, -1.0]) * np.exp(-0.5), rtol=1e-5)
    assert_same(again, fresh_solve(odekit.ODEProblem(_decay, (0.0, 1.0), [3.0, -1.0], args=(0.5,)), "dp54"))


def test_an_attribute_reassigned_is_a_new_start():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(0.5,))
    kept(problem, "dp54")
    problem.args = (2.0,)
    np.testing.assert_allclose(odekit.solve(problem, "dp54").y[-1], [np.exp(-2.0)], rtol=1e-5)
    problem.t_span = (0.0, 2.0)
    again = odekit.solve(problem, "dp54")
    assert again.t[-1] == 2.0 and again.y[-1, 0] == pytest.approx(np.exp(-4.0), rel=1e-5)


def test_a_repeated_start_whose_f_fails_is_refused_as_a_first_one():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(0.5,))
    kept(problem, "dp54")
    problem.y0[:] = np.nan
    with pytest.raises(ValueError, match="non-finite values .* at t0=0.0 for the initial state"):
        odekit.solve(problem, "dp54")


def test_a_repeated_fixed_step_beyond_stability_is_warned_each_time():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(50.0,))
    for _ in range(3):
        with pytest.warns(odekit.StiffnessWarning):
            odekit.solve(problem, "rk4", h=0.1)


def test_starts_are_kept_for_a_bounded_number_of_problems_and_not_with_events():
    integrator._STARTS.clear()
    for k in range(integrator.STARTS_KEPT + 10):
        problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(1.0 + k,))
        for _ in range(2):
            odekit.solve(problem, "dp54")
    assert len(integrator._STARTS) == integrator.STARTS_KEPT
    integrator._STARTS.clear()
    ball, lorenz = odekit.problems.bouncing_ball(), odekit.problems.lorenz()
    for _ in range(2):
        odekit.solve(ball, "dp54")                                       # events: set up every time
        odekit.solve(lorenz, "dp54", atol=[1e-9, 1e-9, 1e-8])            # tolerances per component
    assert all(entry[2] is None for entry in integrator._STARTS.values())


def test_a_started_integrator_is_its_own():
    problem = odekit.problems.kepler(e=0.5)
    for _ in range(2):
        Integrator._started(problem, "rk4", dict(h=0.01))
    one = Integrator._started(problem, "rk4", dict(h=0.01))
    two = Integrator._started(problem, "rk4", dict(h=0.01))
    one.step(10)
    assert two.t == 0.0 and two.stats.naccepted == 0
    np.testing.assert_array_equal(two.y, problem.initial_state().reshape(two.y.shape))


# --- a problem solved often: one compiled call (odekit.rerun) ------------------------------

def _rerun_of(problem):
    (found,) = [r for r in rerun._RERUNS.values() if r is not None and r.problem is problem]
    return found


def _spring(t, x, v, k):
    return -k * x


@pytest.mark.parametrize("method,options", [
    ("dp54", dict()), ("dp54", dict(t_eval=[0.0, 0.25, 1.0])), ("dp54", dict(t_eval=np.linspace(0.1, 1.0, 7))),
    ("dp54", dict(save_every=3)), ("rk4", dict(h=0.01, save_every=7)), ("radau5", dict(rtol=1e-7)),
    ("bdf", dict(t_eval=[0.5, 1.0]))])
def test_a_solve_again_runs_in_one_call_to_the_numbers_of_a_first_solve(method, options):
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(3.0,))
    first = fresh_solve(problem, method, **options)
    often(problem, method, **options)
    plan = _rerun_of(problem)
    before = plan.runs
    for k in range(3):
        assert_same(odekit.solve(problem, method, **options), first)
        assert plan.runs == before + k + 1
    # the last row of a thinned run is the state at t_end, as a first solve keeps it
    assert first.t[-1] == 1.0


@pytest.mark.parametrize("method,controller", [
    ("dp54", odekit.PIController(safety=0.8, factor_max=5.0)), ("rk4", odekit.FixedStep(h=0.02)),
    ("dp54", odekit.StepDoubling(safety=0.85)), ("bdf", odekit.MethodControl(newton="scipy"))])
def test_a_solve_with_a_controller_of_odekits_own_runs_again_in_one_call(method, controller):
    """odekit's controllers are frozen: a solve given one is known by it (one equal to it is the same
    solve) and run again in one call, to the numbers of a first solve; another controller is another
    solve."""
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(3.0,))
    first = fresh_solve(problem, method, controller=controller)
    often(problem, method, controller=controller)
    plan = _rerun_of(problem)
    before = plan.runs
    equal = type(controller)(**{f.name: getattr(controller, f.name) for f in dataclasses.fields(controller)})
    for k, given in enumerate((controller, equal)):
        assert_same(odekit.solve(problem, method, controller=given), first)
        assert plan.runs == before + k + 1
    other = dataclasses.replace(controller, h=0.01) if method == "rk4" else dataclasses.replace(controller,
                                                                                              safety=0.5)
    assert odekit.solve(problem, method, controller=other).stats != first.stats
    assert plan.runs == before + 2


def test_a_solve_again_runs_its_familys_plain_loop_unless_it_doubles_its_steps(monkeypatch):
    """The call runs the family's loop without step doubling and dense output (smaller, it starts a short
    run sooner), to the numbers of a first solve, where the family runs it (Family.plain_reruns: explicit
    Runge-Kutta); a run that doubles its steps, or of another family, runs the whole loop."""
    asked = []
    plain = rerun.plain_drive
    monkeypatch.setattr(rerun, "plain_drive", lambda family, *rest: asked.append(family.name) or plain(family, *rest))
    for method, controller in (("dp54", odekit.PIController(safety=0.8)), ("dp54", odekit.StepDoubling(safety=0.8)),
                               ("rodas4", odekit.PIController(safety=0.8))):
        problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(3.0,))
        first = fresh_solve(problem, method, controller=controller)
        often(problem, method, controller=controller)
        assert_same(odekit.solve(problem, method, controller=controller), first)
        assert _rerun_of(problem).runs >= 1
    assert asked == ["explicit_rk"]


class _Mine(odekit.PIController):
    pass


def test_a_solve_with_a_controller_of_another_class_is_set_up_each_time():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(3.0,))
    first = fresh_solve(problem, "dp54", controller=_Mine())
    for _ in range(integrator.RERUN_AFTER + 3):
        assert_same(odekit.solve(problem, "dp54", controller=_Mine()), first)
    assert not any(entry[0] is problem and entry[2] is not None for entry in integrator._STARTS.values())
    assert not any(r is not None and r.problem is problem for r in rerun._RERUNS.values())


def test_a_second_order_problem_is_solved_again_in_one_call_with_its_shape():
    problem = odekit.SecondOrderProblem(_spring, (0.0, 2.0), np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]),
                                        args=(4.0,))
    first = fresh_solve(problem, "velocity_verlet", h=0.01)
    often(problem, "velocity_verlet", h=0.01)
    before = _rerun_of(problem).runs
    again = odekit.solve(problem, "velocity_verlet", h=0.01)
    assert _rerun_of(problem).runs == before + 1 and again.y.shape == (201, 2, 1, 2)
    assert_same(again, first)


@pytest.mark.parametrize("method,options", [("dp54", dict()), ("rk4", dict(h=0.01))])
def test_a_second_order_problem_solved_often_reads_x0_and_v0_afresh_and_an_attribute_assigned_is_a_new_start(
        method, options):
    # the call reads the problem's own x0 and v0 (a fixed step only from the state it was judged at: from
    # another, a first solve's way runs it); any attribute assigned since, even to an equal value, is a new
    # start, and solved often again, a new call
    def spring(k, x0, v0):
        return odekit.SecondOrderProblem(_spring, (0.0, 0.5), np.array(x0), np.array(v0), args=(k,))
    moved, pushed = (((0.5, -2.0),), ((0.0, 3.0),)), (((0.5, -2.0),), ((1.0, 3.0),))
    expected = {(4.0, moved): fresh_solve(spring(4.0, *moved), method, **options),
                (9.0, moved): fresh_solve(spring(9.0, *moved), method, **options),
                (9.0, pushed): fresh_solve(spring(9.0, *pushed), method, **options)}
    problem = spring(4.0, [[1.0, 0.0]], [[0.0, 1.0]])
    often(problem, method, **options)
    plan = _rerun_of(problem)
    problem.x0[:] = moved[0]
    problem.v0[0, 1] = 3.0
    again = odekit.solve(problem, method, **options)
    assert again.y.shape[1:] == (2, 1, 2) and plan.runs == (0 if method == "rk4" else 1)
    assert_same(again, expected[4.0, moved])
    problem.args = (9.0,)
    before = plan.runs
    assert_same(odekit.solve(problem, method, **options), expected[9.0, moved])
    assert plan.runs == before
    often(problem, method, **options)
    assert _rerun_of(problem) is not plan
    plan = _rerun_of(problem)
    before = plan.runs
    assert_same(odekit.solve(problem, method, **options), expected[9.0, moved])
    assert plan.runs == before + 1
    problem.v0 = problem.v0.copy()
    problem.v0[0, 0] = 1.0                 # (a call that read the array it was made with would miss this)
    assert_same(odekit.solve(problem, method, **options), expected[9.0, pushed])
    assert plan.runs == before + 1


def test_a_solve_again_whose_output_has_another_number_of_rows_gets_all_of_them():
    # the call writes into arrays as long as the last run's output: a run from another y0 takes other steps
    large, small = (1.0, 2.0), (1e-8, 2e-8)
    firsts = {y0: fresh_solve(odekit.ODEProblem(_decay, (0.0, 2.0), y0, args=(3.0,)), "dp54") for y0 in (large, small)}
    assert firsts[large].t.size != firsts[small].t.size
    problem = odekit.ODEProblem(_decay, (0.0, 2.0), large, args=(3.0,))
    often(problem, "dp54")
    plan = _rerun_of(problem)
    before = plan.runs
    for y0 in (large, small, small, large):
        problem.y0[:] = y0
        assert_same(odekit.solve(problem, "dp54"), firsts[y0])
    assert plan.runs == before + 4


def test_a_run_longer_than_the_call_goes_on_where_it_left_off():
    # more steps than the first slice and rows than the first buffer: handed to an Integrator, which
    # goes on; the stiffness of its steps judged as a first solve's are
    problem = odekit.problems.lorenz(t_end=30.0)
    first = fresh_solve(problem, "dp54", rtol=1e-9)
    assert first.stats.naccepted > integrator.FIRST_SLICE
    often(problem, "dp54", rtol=1e-9)
    before = _rerun_of(problem).runs
    assert_same(odekit.solve(problem, "dp54", rtol=1e-9), first)
    assert _rerun_of(problem).runs == before + 1


@pytest.mark.parametrize("t_end,options", [(1.0, dict()), (1.0, dict(t_eval=[0.5, 1.0])),
                                            (10.0, dict(max_steps=3000))])
def test_a_stiff_run_solved_again_says_it_starved_as_a_first_one(t_end, options):
    # in the call (a few hundred steps, judged from them), and handed on (thousands, stopped at max_steps)
    problem = odekit.problems.robertson(t_end=t_end)
    first = fresh_solve(problem, "dp54", **options)
    assert "looks stiff" in first.message
    often(problem, "dp54", **options)
    before = _rerun_of(problem).runs
    assert_same(odekit.solve(problem, "dp54", **options), first)
    assert _rerun_of(problem).runs == before + 1


def test_a_run_its_steps_clear_of_stiffness_is_solved_again_without_judging_it(monkeypatch):
    # Arenstorf at rtol 1e-10 with t_eval (140 steps, spread widely) in the one call alone; Lorenz with vern8 at
    # rtol 1e-4 and t_eval (steps as steady as a starving run's without the prediction's bound) too: the call
    # bounds its stiffness ratio, as a first solve's note does in Python, and the bound clears it
    adopted, ratios = [], []
    original, clears = rerun.Rerun._adopted, rerun.bound_clears
    monkeypatch.setattr(rerun.Rerun, "_adopted", lambda self, lane: adopted.append(1) or original(self, lane))
    monkeypatch.setattr(rerun, "bound_clears", lambda ratio: ratios.append(ratio) or clears(ratio))
    orbit = odekit.problems.arenstorf()
    options = dict(rtol=1e-10, t_eval=list(orbit.t_span))
    first = fresh_solve(orbit, "vern8", **options)
    assert first.stats.naccepted >= STARVING_STEPS
    often(orbit, "vern8", **options)
    assert_same(odekit.solve(orbit, "vern8", **options), first)
    assert adopted == []
    lorenz = odekit.problems.lorenz()
    options = dict(rtol=1e-4, atol=1e-7, t_eval=list(lorenz.t_span), controller=odekit.PIController(predictive=False))
    first = fresh_solve(lorenz, "vern8", **options)
    often(lorenz, "vern8", **options)
    plan = _rerun_of(lorenz)
    adopted.clear()
    ratios.clear()
    assert_same(odekit.solve(lorenz, "vern8", **options), first)
    assert adopted == []
    assert steady(_recent_spread(plan._lane[2][3]), False)            # its spread alone would not clear it
    u = first.y[-1]
    rhs = odekit.Integrator(lorenz, "vern8", backend="python")._kernels.rhs
    expected = stiffness_theory._derivative_and_ratio(lorenz, rhs, False, lorenz.t_span[1], u)[1]
    assert len(ratios) == 1 and ratios[0] == pytest.approx(expected, rel=1e-9) and clears(ratios[0])


def test_a_run_that_fails_solved_again_fails_as_a_first_one():
    blowup = odekit.ODEProblem(lambda t, y: y * y, (0.0, 2.0), [1.0])      # y = 1 / (1 - t): infinite at t = 1
    first = fresh_solve(blowup, "dp54")
    assert not first.success
    often(blowup, "dp54")
    assert_same(odekit.solve(blowup, "dp54"), first)
    short = odekit.ODEProblem(_decay, (0.0, 10.0), [1.0], args=(1.0,))
    first = fresh_solve(short, "dp54", max_steps=5)
    often(short, "dp54", max_steps=5)
    assert_same(odekit.solve(short, "dp54", max_steps=5), first)
    assert first.status == odekit.Status.MAX_STEPS


def test_an_argument_of_another_type_is_checked_as_in_a_first_solve():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(0.5,))
    often(problem, "dp54", save_every=2)
    with pytest.raises((TypeError, ValueError), match="save_every"):
        odekit.solve(problem, "dp54", save_every=2.0)


def test_a_fixed_step_from_a_state_changed_in_place_is_judged_and_run_from_it():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0], args=(5.0,))
    often(problem, "rk4", h=0.1)
    problem.y0[:] = 2.0
    again = odekit.solve(problem, "rk4", h=0.1)
    assert_same(again, fresh_solve(odekit.ODEProblem(_decay, (0.0, 1.0), [2.0], args=(5.0,)), "rk4", h=0.1))


def test_a_ctrl_c_during_the_call_raises_interrupted_with_what_it_computed():
    problem = odekit.problems.lorenz(t_end=30.0)
    first = fresh_solve(problem, "dp54", rtol=1e-9)
    often(problem, "dp54", rtol=1e-9)
    plan = _rerun_of(problem)
    call, records, lane = plan._lane or plan._new_lane()       # (the last run took its lane on)

    def pressed(*arguments):       # Python raises a Ctrl-C as the compiled call returns
        call(*arguments)
        raise KeyboardInterrupt
    plan._lane = (pressed, records, lane)
    with pytest.raises(odekit.Interrupted) as stop:
        odekit.solve(problem, "dp54", rtol=1e-9)
    part = stop.value.solution
    assert part.status == odekit.Status.INTERRUPTED and 1 < part.t.size < first.t.size
    np.testing.assert_array_equal(part.y, first.y[:part.t.size])        # the first slice's steps, as they were


@pytest.mark.parametrize("options", [dict(), dict(t_eval=np.linspace(0.0, 30.0, 50))])
def test_a_solution_keeps_its_numbers_when_the_problem_is_solved_again(options):
    # the call's buffers go on to the next solve: a Solution may not be a view of them
    problem = odekit.problems.lorenz(t_end=30.0)
    often(problem, "dp54", rtol=1e-9, **options)
    one = odekit.solve(problem, "dp54", rtol=1e-9, **options)
    y0 = problem.y0.copy()
    problem.y0[:] = [1.0, 1.0, 1.0]
    two = odekit.solve(problem, "dp54", rtol=1e-9, **options)
    assert not np.array_equal(one.y[-1], two.y[-1])
    assert_same(one, fresh_solve(odekit.problems.lorenz(y0=tuple(y0), t_end=30.0), "dp54", rtol=1e-9, **options))


def test_solves_that_differ_in_what_they_keep_each_get_their_call_and_a_large_output_none():
    # t_eval and save_every are not part of a start: one start, copied for both kinds of solve
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(3.0,))
    firsts = [fresh_solve(problem, "dp54", t_eval=t_eval) for t_eval in ([0.5, 1.0], [0.25, 0.75])]
    for _ in range(integrator.RERUN_AFTER + 2):
        for t_eval in ([0.5, 1.0], [0.25, 0.75]):
            odekit.solve(problem, "dp54", t_eval=t_eval)
    runs = [r for r in rerun._RERUNS.values() if r is not None and r.problem is problem]
    assert len(runs) == 2 and all(r.runs > 0 for r in runs)
    for t_eval, first in zip(([0.5, 1.0], [0.25, 0.75]), firsts):
        assert_same(odekit.solve(problem, "dp54", t_eval=t_eval), first)
    # every step of a long fixed-step run: more rows than a call keeps, so none is made, once
    long = odekit.ODEProblem(_decay, (0.0, 100.0), [1.0], args=(0.01,))
    first = fresh_solve(long, "rk4", h=0.001)
    often(long, "rk4", h=0.001)
    assert [k for k, r in rerun._RERUNS.items() if k[0] == id(long)] and \
        all(r is None for k, r in rerun._RERUNS.items() if k[0] == id(long))
    assert_same(odekit.solve(long, "rk4", h=0.001), first)


# --- odekit.prepare: the one compiled call, returning (t, y) ------------------------------

@pytest.mark.parametrize("method,options", [("dp54", dict()), ("dop853", dict(rtol=1e-8, t_eval=[0.5, 1.0])),
                                            ("rk4", dict(h=0.01)), ("rodas4", dict(rtol=1e-6, atol=1e-10))])
def test_a_prepared_solve_returns_a_first_solves_numbers_in_one_compiled_call(method, options):
    problem = odekit.problems.van_der_pol(mu=5.0, t_end=1.0)
    first = fresh_solve(problem, method, **options)
    run = odekit.prepare(problem, method, **options)
    made = run._rerun
    assert made is not None and "one compiled call" in repr(run)
    for calls in range(1, 3):
        t, y = run()
        np.testing.assert_array_equal(t, first.t)
        np.testing.assert_array_equal(y, first.y)
        assert made.runs == calls                       # each call ran the compiled call, not solve()


def test_a_prepared_solve_reads_the_state_written_in_place_and_keeps_the_shape_of_second_order_states():
    problem = odekit.problems.kepler(e=0.5, orbits=0.1)
    run = odekit.prepare(problem, "dp54")
    rows = set()
    for x0, v0 in (([0.4, 0.1], [0.0, 1.9]), ([0.9, 0.0], [0.0, 1.1])):   # the second orbit takes other steps
        problem.x0[:], problem.v0[:] = x0, v0
        t, y = run()
        other = odekit.problems.kepler(e=0.5, orbits=0.1)
        other.x0[:], other.v0[:] = x0, v0
        expected = fresh_solve(other, "dp54")
        assert y.shape == expected.y.shape and y.shape[1:] == (2, 2)
        np.testing.assert_array_equal(t, expected.t)
        np.testing.assert_array_equal(y, expected.y)
        rows.add(t.size)
    assert len(rows) == 2


def test_a_prepared_solve_that_fails_raises_with_what_it_computed():
    short = odekit.ODEProblem(_decay, (0.0, 10.0), [1.0], args=(1.0,))
    first = fresh_solve(short, "dp54", max_steps=5)
    run = odekit.prepare(short, "dp54", max_steps=5)
    for _ in range(2):
        with pytest.raises(odekit.IntegrationError, match="max_steps|steps") as failed:
            run()
        assert failed.value.status == odekit.Status.MAX_STEPS == first.status
        np.testing.assert_array_equal(failed.value.t, first.t)
        np.testing.assert_array_equal(failed.value.y, first.y)


def test_a_prepared_solve_checks_its_arguments_as_solve_does_and_runs_solve_where_one_call_cannot():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(0.5,))
    with pytest.raises(ValueError, match="rtol"):
        odekit.prepare(problem, "dp54", rtol=-1.0)
    with pytest.raises((TypeError, ValueError), match="save_every"):
        odekit.prepare(problem, "dp54", save_every=2.0)
    run = odekit.prepare(problem, "dp54", backend="python")         # no compiled call: solve() each time
    assert run._rerun is None and "solve() each call" in repr(run)
    t, y = run()
    expected = fresh_solve(problem, "dp54", backend="python")
    np.testing.assert_array_equal(t, expected.t)
    np.testing.assert_array_equal(y, expected.y)
    with pytest.raises(TypeError, match="cannot be pickled; prepare it again"):
        pickle.dumps(odekit.prepare(problem, "dp54"))


def test_a_prepared_solve_of_a_problem_with_events_solves_each_call_as_solve_does():
    # a start with events is never repeated in one call: prepare makes no call of it (it once built one, and
    # Numba refused the events' run state)
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(3.0,),
                                events=[odekit.Event(lambda t, y, k: y[0] - 0.5)])
    run = odekit.prepare(problem, "dp54")
    assert run._rerun is None and "solve() each call" in repr(run)
    expected = fresh_solve(problem, "dp54")
    t, y = run()
    np.testing.assert_array_equal(t, expected.t)
    np.testing.assert_array_equal(y, expected.y)


def test_a_ctrl_c_during_a_prepared_call_raises_interrupted_with_what_it_computed():
    problem = odekit.problems.lorenz(t_end=30.0)
    first = fresh_solve(problem, "dp54", rtol=1e-9)
    run = odekit.prepare(problem, "dp54", rtol=1e-9)
    made = run._rerun
    call, records, lane = made._lane or made._new_lane()

    def pressed(*arguments):       # Python raises a Ctrl-C as the compiled call returns
        call(*arguments)
        raise KeyboardInterrupt
    made._lane = (pressed, records, lane)
    with pytest.raises(odekit.Interrupted) as stop:
        run()
    part = stop.value.solution
    assert part.status == odekit.Status.INTERRUPTED and 1 < part.t.size < first.t.size
    np.testing.assert_array_equal(part.y, first.y[:part.t.size])
    t, y = run()                   # the next call runs on a lane of its own, to the end
    np.testing.assert_array_equal(y, first.y)



def test_a_prepared_solve_given_y0_starts_there_in_either_shape_and_refuses_another_with_a_clear_error():
    problem = odekit.problems.kepler(e=0.5, orbits=0.1)
    run = odekit.prepare(problem, "dp54")
    other = odekit.problems.kepler(e=0.5, orbits=0.1)
    other.x0[:], other.v0[:] = [0.4, 0.1], [0.0, 1.9]
    expected = fresh_solve(other, "dp54")
    for y0 in ([[0.4, 0.1], [0.0, 1.9]], np.array([0.4, 0.1, 0.0, 1.9])):       # one state, or flat
        problem.x0[:], problem.v0[:] = [0.5, 0.0], [0.0, 1.7]
        t, y = run(y0)
        np.testing.assert_array_equal(t, expected.t)
        np.testing.assert_array_equal(y, expected.y)
        np.testing.assert_array_equal(problem.x0, [0.4, 0.1])                  # written into the problem
    with pytest.raises(ValueError, match=r"y0 must be one state of the problem, shaped \(2, 2\).*\(3,\)"):
        run([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"y0 must be finite; its entry 2 \(flat\) is nan"):
        run([0.4, 0.1, np.nan, 1.9])
    np.testing.assert_array_equal(problem.v0, [0.0, 1.9])                      # a refused y0 writes nothing


def test_a_prepared_solve_of_a_problem_whose_attribute_was_reassigned_solves_it_as_it_is_now():
    problem = odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(0.5,))
    run = odekit.prepare(problem, "dp54")
    runs = run._rerun.runs
    problem.args = (2.0,)                                 # the compiled call's args are the old ones
    t, y = run()
    expected = fresh_solve(odekit.ODEProblem(_decay, (0.0, 1.0), [1.0, 2.0], args=(2.0,)), "dp54")
    np.testing.assert_array_equal(y, expected.y)
    np.testing.assert_array_equal(t, expected.t)
    assert run._rerun.runs == runs                        # solved by solve(), not by the stale call


def _decay_to(t, y, k, c):
    return -k * y + c


def test_a_prepared_solve_given_args_runs_them_in_one_compiled_call_as_the_problems_own():
    problem = odekit.ODEProblem(_decay_to, (0.0, 1.0), [1.0, 2.0], args=(0.5, 1))
    run = odekit.prepare(problem, "dp54")
    for k, c in ((2.0, 3), (0.25, -1), (2, 3)):           # an int for a float arg stands for that float
        t, y = run(args=(k, c))
        assert problem.args == (float(k), c) and type(problem.args[0]) is float and type(problem.args[1]) is int
        expected = fresh_solve(odekit.ODEProblem(_decay_to, (0.0, 1.0), [1.0, 2.0], args=(float(k), c)), "dp54")
        np.testing.assert_array_equal(t, expected.t)
        np.testing.assert_array_equal(y, expected.y)
    made = run._rerun
    assert made.args_in is not None and made.runs == 3          # each call ran the call reading args from arrays
    t, y = run()                                                # the last args, without giving them again
    np.testing.assert_array_equal(y, expected.y)
    assert made.runs == 4


def test_a_prepared_solve_refuses_args_of_another_count_or_kind_and_solves_a_problem_changed_besides():
    problem = odekit.ODEProblem(_decay_to, (0.0, 1.0), [1.0, 2.0], args=(0.5, 1))
    run = odekit.prepare(problem, "dp54")
    for bad in ((1.0,), (1.0, 2.5), ("a", 1), (True, 1), (1.0, 2 ** 60), 3.0):
        with pytest.raises(ValueError, match=r"args must be 2 numbers of the kinds of the problem's args "
                                             r"\(float, int\)"):
            run(args=bad)
    assert problem.args == (0.5, 1)                              # a refused args assigns nothing
    run(args=(2.0, 0))
    problem.t_span = (0.0, 0.5)                                  # changed besides: solve() runs it as it is
    t, y = run(args=(1.0, 0))
    expected = fresh_solve(odekit.ODEProblem(_decay_to, (0.0, 0.5), [1.0, 2.0], args=(1.0, 0)), "dp54")
    np.testing.assert_array_equal(t, expected.t)
    np.testing.assert_array_equal(y, expected.y)
