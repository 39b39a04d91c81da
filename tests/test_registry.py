"""The registry: every method registered once, found by its name or an alias
(SciPy's included), refused with the closest names when unknown, printed as
a table and documented from its own data."""

import re

import pytest

import odekit
from odekit import ODEProblem, solve, solve_ivp

from conftest import decay


ISSUE_METHODS = [
    "euler", "midpoint", "heun", "ralston", "kutta3", "rk4", "rk38",
    "heun_euler", "bs32", "rkf45", "cash_karp", "dp54",
    "backward_euler", "trapezoid", "implicit_midpoint", "linearized_euler",
    "symplectic_euler", "symplectic_euler_b", "velocity_verlet", "position_verlet", "leapfrog",
    "forest_ruth", "pefrl", "yoshida6",
]


# --- names and aliases ----------------------------------------------------------------

@pytest.mark.parametrize("alias, name", [("semi_implicit_euler", "symplectic_euler"), ("RK45", "dp54"),
                                         ("rk45", "dp54"), ("Rk45", "dp54"), ("ode45", "dp54"),
                                         ("RK23", "bs32"), ("forward_euler", "euler"),
                                         ("explicit_euler", "euler"), ("Velocity-Verlet", "velocity_verlet"),
                                         ("crank_nicolson", "trapezoid"), ("implicit_euler", "backward_euler"),
                                         ("  dp54 ", "dp54")])
def test_method_lookup_by_alias(alias, name):
    m = odekit.method(alias)
    assert m.name == name
    assert m is odekit.method(name)
    assert odekit.method(m) is m


def test_names_and_aliases_are_unique_and_resolve():
    seen = set()
    for m in odekit.methods():
        for name in m.names:
            assert name not in seen
            seen.add(name)
            assert odekit.method(name) is m
            assert odekit.method(name.upper().replace("_", "-")) is m


@pytest.mark.parametrize("scipy_name, ours", [("RK45", "dp54"), ("RK23", "bs32"), ("DOP853", "dop853"),
                                              ("Radau", "radau5"), ("BDF", "bdf")])
def test_scipy_method_names_are_aliases(scipy_name, ours):
    assert odekit.method(scipy_name) is odekit.method(ours)


# --- unknown names --------------------------------------------------------------------

@pytest.mark.parametrize("wrong, close", [("velocity_verlett", "velocity_verlet"), ("rk5", "rk45"),
                                          ("dp45", "dp54"), ("backwards_euler", "backward_euler")])
def test_unknown_method_lists_close_names(wrong, close):
    with pytest.raises(ValueError, match=rf"unknown method '{wrong}'; closest: .*\b{close}\b"):
        solve(ODEProblem(decay, (0.0, 1.0), [1.0]), wrong, h=0.1, backend="python")


def test_unknown_method_from_odekit_method_too():
    with pytest.raises(ValueError, match=r"unknown method 'leap_frog'; closest: .*leapfrog"):
        odekit.method("leap_frog")


def test_unknown_method_far_from_every_name_still_lists_some():
    with pytest.raises(ValueError, match=r"unknown method 'zzzz'; closest: \w+, \w+, \w+, \w+\. `odekit methods`"):
        odekit.method("zzzz")


@pytest.mark.parametrize("scipy_name, advice", [("LSODA", r"use 'bdf'.*stiff.*'dp54'.*non-stiff")])
def test_scipy_methods_odekit_lacks_are_refused_with_advice(scipy_name, advice):
    # a SciPy user's solve_ivp(..., method="LSODA") must not get edit-distance guesses like 'rodas'
    with pytest.raises(ValueError, match=rf"method '{scipy_name}' is not in odekit: .*{advice}"):
        solve_ivp(decay, (0.0, 1.0), [1.0], scipy_name, backend="python")


def test_unknown_method_lists_the_closest_names():
    with pytest.raises(ValueError, match=r"unknown method 'verlett'; closest: verlet"):
        odekit.method("verlett")


# --- what is registered ---------------------------------------------------------------

def test_every_method_of_the_issue_is_registered():
    names = odekit.methods().names()
    assert set(ISSUE_METHODS) <= set(names)
    assert len(names) == len(set(names))


def test_issue_method_list_is_registered():
    wanted = ["euler", "midpoint", "heun", "ralston", "kutta3", "rk4", "rk38", "heun_euler", "bs32",
              "rkf45", "cash_karp", "dp54", "tsit5", "dop853", "vern7", "vern8", "vern9", "backward_euler",
              "trapezoid", "trbdf2", "kencarp4", "radau5", "implicit_midpoint", "linearized_euler", "rodas4",
              "rodas5p", "bdf", "ndf", "symplectic_euler", "symplectic_euler_b", "velocity_verlet",
              "position_verlet", "leapfrog", "forest_ruth", "pefrl", "yoshida6", "boris", "wisdom_holman",
              "dprkn6", "dprkn8", "dprkn12"]
    assert odekit.methods().names() == wanted
    assert odekit.method("explicit_euler") is odekit.method("forward_euler") is odekit.method("euler")
    assert odekit.method("semi_implicit_euler") is odekit.method("symplectic_euler")


def test_methods_by_family():
    splitting = odekit.methods("splitting")
    assert {m.name for m in splitting} == {"symplectic_euler", "symplectic_euler_b", "velocity_verlet",
                                           "position_verlet", "leapfrog", "forest_ruth", "pefrl", "yoshida6",
                                           "boris"}
    with pytest.raises(ValueError, match=r"family must be one of"):
        odekit.methods("multistep_typo")


# --- the table and the docs -----------------------------------------------------------

def test_methods_prints_a_table_with_one_row_per_method():
    table = odekit.methods()
    text = str(table)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["name", "family", "order"]
    rows = [line.split()[0] for line in lines[2:]]
    assert rows == [m.name for m in table]
    assert set(ISSUE_METHODS) <= set(rows)
    assert repr(table) == text
    for m in table:
        for alias in m.aliases:
            assert re.search(rf"\b{re.escape(alias)}\b", text)


def test_registry_prints_as_a_table_with_every_method():
    table = str(odekit.methods())
    for m in odekit.methods():
        assert m.name in table
    assert table.splitlines()[0].split()[:3] == ["name", "family", "order"]


def test_every_method_is_documented():
    for m in odekit.methods():
        assert m.reference and m.stability and m.title, m.name
        assert m.order >= 1
        text = m.summary()
        assert f"order {m.order}" in text and m.reference in text


def test_docs_are_generated_from_the_registry():
    """docs/methods.md and the README's table are the registry's own output, not copies."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    assert (root / "docs" / "methods.md").read_text() == odekit.methods().document(), \
        "regenerate with: odekit methods --markdown > docs/methods.md"
    assert odekit.methods().markdown() in (root / "README.md").read_text(), \
        "paste `odekit methods --markdown`'s table into the README"
