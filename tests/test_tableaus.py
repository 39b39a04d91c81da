"""Methods as data: exact order conditions and the coefficients' self-checks.

The registry (names, aliases, the table, the docs) is tested in test_registry.py.
"""

from fractions import Fraction as F
import numpy as np
import pytest

import odekit
from odekit import order_conditions
from odekit.catalog import implicit
from odekit.splitting import SplittingScheme
from odekit.tableau import ButcherTableau, CollocationTableau, RosenbrockTableau

TABLEAU_METHODS = [m for m in odekit.methods() if not m.second_order_only and m.family != "bdf"]


def test_rooted_tree_counts_match_the_known_sequence():
    # OEIS A000081: 1, 1, 2, 4, 9, 20, 48 rooted trees with 1..7 vertices
    assert [len(order_conditions.rooted_trees(n)) for n in range(1, 8)] == [1, 1, 2, 4, 9, 20, 48]


def test_tree_densities_of_order_four():
    # gamma of the four trees of order 4: bushy 4, mixed 8 and 12, tall 24
    assert sorted(order_conditions.density(t) for t in order_conditions.rooted_trees(4)) == [4, 8, 12, 24]


@pytest.mark.parametrize("m", TABLEAU_METHODS, ids=lambda m: m.name)
def test_tableau_has_exactly_its_declared_order(m):
    """All conditions of the declared order hold in exact arithmetic; not all of the next."""
    c = m.coefficients
    if isinstance(c, ButcherTableau):
        # exact, or within the rounding of published decimals (dop853's 30 digits: 1e-25), and a
        # condition of the next order fails by far more than that rounding
        assert c.tolerance <= F(1, 10 ** 25)
        assert order_conditions.satisfies(c.A, c.b, m.order, c.tolerance)
        assert not order_conditions.satisfies(c.A, c.b, m.order + 1, 10 ** 15 * c.tolerance)
    else:
        # Rosenbrock: exact, or within the rounding of published decimals (rodas4, rodas5p: 1e-13)
        assert c.tolerance <= F(1, 10 ** 13)
        assert all(c.satisfies(q) for q in range(1, m.order + 1))
        assert any(abs(r) > 1000 * c.tolerance for r in c.residuals(m.order + 1))


def test_rodas4_from_hairers_transformed_coefficients_has_his_nodes_and_gammas():
    """The conversion alpha = a Gamma, Gamma = (I/gamma - C)^-1 reproduces the nodes c_i = sum_j alpha_ij
    and the sums gamma_i = sum_j gamma_ij that RODAS lists beside its a and C."""
    c = odekit.method("rodas4").coefficients
    np.testing.assert_allclose([float(x) for x in c.c], [0, 0.386, 0.21, 0.63, 1, 1], rtol=0, atol=1e-14)
    np.testing.assert_allclose([float(sum(row)) for row in c.gamma], [0.25, -0.1043, 0.1035, -0.0362, 0, 0],
                               rtol=0, atol=1e-14)
    assert c.embedded_order() == 3


def _square_floats(rows, s):
    return np.array([[float(F(x)) for x in row] + [0.0] * (s - len(row)) for row in rows])


@pytest.mark.parametrize("name, gamma, a, c, m, m_hat", [
    ("rodas4", "0.25", implicit._RODAS_A, implicit._RODAS_C, [*implicit._RODAS_A[4], 1, 1],
     [*implicit._RODAS_A[4], 1, 0]),
    ("rodas5p", "0.21193756319429014", implicit._RODAS5P_A, implicit._RODAS5P_C, [*implicit._RODAS5P_A6, 1, 1, 1],
     [*implicit._RODAS5P_A6, 1, 1, 0])])
def test_the_rosenbrock_kernels_run_the_published_transformed_coefficients(name, gamma, a, c, m, m_hat):
    """The kernels take Hairer & Wanner's transformed stages u_i = sum_j gamma_ij k_j (no product with J):
    kernel_data turns the tableau (alpha, Gamma, b, made exactly from the published a, C, m) back into a,
    gamma C and m, rounded once.  A C with the wrong sign or scale, or an a not times Gamma^-1, would cost
    the method its order."""
    T, C, _, _, flags = odekit.method(name).coefficients.kernel_data()
    s, g = len(m), float(F(gamma))
    np.testing.assert_allclose(T[:s], _square_floats(a, s), rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(T[s], _square_floats([m], s)[0], rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(T[s + 1], _square_floats([m], s)[0] - _square_floats([m_hat], s)[0], rtol=1e-15,
                               atol=1e-15)
    np.testing.assert_allclose(np.tril(C, -1), g * _square_floats(c, s), rtol=1e-15, atol=1e-14)
    assert np.all(np.diag(C) == g) and np.all(np.triu(C, 1) == 0) and flags[0] == 1


@pytest.mark.parametrize("m", [m for m in TABLEAU_METHODS if m.embedded_order is not None
                               and not isinstance(m.coefficients, CollocationTableau)], ids=lambda m: m.name)
def test_embedded_weights_have_their_declared_order(m):
    # the orders their authors give, for the pairs registered when this was written; a pair
    # added since is held to the order its weights satisfy
    published = {"heun_euler": 1, "bs32": 2, "rkf45": 5, "cash_karp": 4, "dp54": 4,
                 "backward_euler": 2, "trapezoid": 1, "trbdf2": 3, "kencarp4": 3, "rodas4": 3, "rodas5p": 4,
                 "tsit5": 4, "dop853": 5, "vern7": 6, "vern8": 7, "vern9": 8}
    declared = published.get(m.name, m.embedded_order)
    c = m.coefficients
    if isinstance(c, ButcherTableau):
        assert order_conditions.satisfies(c.A, c.b_hat, declared, c.tolerance)
        assert not order_conditions.satisfies(c.A, c.b_hat, declared + 1, 10 ** 15 * c.tolerance)
    else:
        assert c.satisfies(declared, c.b_hat) and not c.satisfies(declared + 1, c.b_hat)
    assert m.embedded_order == declared


def test_fsal_is_derived_from_the_coefficients():
    fsal = {m.name for m in odekit.methods("explicit_rk") if m.fsal}
    assert fsal == {"bs32", "dp54", "tsit5", "dop853"}
    assert odekit.method("dp54").evaluations_per_step == 6
    assert odekit.method("rk4").evaluations_per_step == 4


def test_dense_output_of_dp54_ends_at_the_weights():
    c = odekit.method("dp54").coefficients
    assert [sum(row) for row in c.dense] == list(c.b)


def test_a_row_that_does_not_sum_to_its_node_is_refused():
    with pytest.raises(ValueError, match=r"row 1 of A sums to 1/3, but c\[1\] = 1/2"):
        ButcherTableau(c=[0, F(1, 2)], A=[[], [F(1, 3)]], b=[0, 1])


def test_weights_that_do_not_sum_to_one_are_refused():
    with pytest.raises(ValueError, match="weights b sum to 3/2"):
        ButcherTableau(c=[0, 1], A=[[], [1]], b=[1, F(1, 2)])
    with pytest.raises(ValueError, match="embedded weights b_hat sum to 2"):
        ButcherTableau(c=[0, 1], A=[[], [1]], b=[F(1, 2), F(1, 2)], b_hat=[1, 1])


def test_dense_rows_must_end_at_the_weights():
    with pytest.raises(ValueError, match=r"dense row 0 sums to 1 at theta = 1, not b\[0\] = 1/2"):
        ButcherTableau(c=[0, 1], A=[[], [1]], b=[F(1, 2), F(1, 2)], dense=[[1, 0], [0, F(1, 2)]])


def test_rosenbrock_tableau_checks_its_structure():
    with pytest.raises(ValueError, match="one non-zero value on its diagonal"):
        RosenbrockTableau(alpha=[[0, 0], [1, 0]], gamma=[[1, 0], [0, 2]], b=[F(1, 2), F(1, 2)])
    with pytest.raises(ValueError, match="strictly lower triangular"):
        RosenbrockTableau(alpha=[[1]], gamma=[[1]], b=[1])


def test_splitting_coefficients_must_be_consistent():
    with pytest.raises(ValueError, match="drift coefficients sum to 0.9"):
        SplittingScheme(drift=[0.4, 0.5], kick=[1.0])
    with pytest.raises(ValueError, match="one more drift than kicks"):
        SplittingScheme(drift=[0.5, 0.5], kick=[0.5, 0.5])


def test_forest_ruth_is_the_published_sequence():
    """Forest & Ruth (1990): drifts θ/2, (1-θ)/2, (1-θ)/2, θ/2; kicks θ, 1-2θ, θ."""
    theta = 1 / (2 - 2 ** (1 / 3))
    c = odekit.method("forest_ruth").coefficients
    assert c.drift == pytest.approx([theta / 2, (1 - theta) / 2, (1 - theta) / 2, theta / 2], abs=1e-15)
    assert c.kick == pytest.approx([theta, 1 - 2 * theta, theta], abs=1e-15)


def test_yoshida6_weights_cancel_the_third_and_fifth_powers():
    """A symmetric composition of a second-order method gains order 4 when
    sum w^3 = 0 and needs sum w^5 = 0 for order 6 (Yoshida 1990)."""
    from odekit.catalog.symplectic import YOSHIDA6_W

    w1, w2, w3 = YOSHIDA6_W
    w0 = 1 - 2 * (w1 + w2 + w3)
    weights = [w3, w2, w1, w0, w1, w2, w3]
    assert abs(sum(w ** 3 for w in weights)) < 1e-13
    assert abs(sum(w ** 5 for w in weights)) < 1e-12


@pytest.mark.parametrize("m", odekit.methods("splitting"), ids=lambda m: m.name)
def test_splitting_schemes_of_even_order_are_symmetric(m):
    assert m.coefficients.symmetric == (m.order % 2 == 0)


def forces_per_step(scheme):
    """Force evaluations per step, counted from the drifts: a kick needs a new force when a
    drift has moved the positions since the last one -- for the first kick, this step's first
    drift or the previous step's last."""
    d = scheme.drift
    return int(d[0] != 0 or d[-1] != 0) + sum(1 for x in d[1:-1] if x != 0)


def test_force_evaluations_per_step_follow_from_the_coefficients():
    evaluations = {m.name: m.evaluations_per_step for m in odekit.methods("splitting")}
    assert evaluations == {m.name: forces_per_step(m.coefficients) for m in odekit.methods("splitting")}
    # and the count agrees with one by hand of the schemes registered when this was written
    expected = {"symplectic_euler": 1, "symplectic_euler_b": 1, "velocity_verlet": 1,
                "position_verlet": 1, "leapfrog": 1, "forest_ruth": 3, "pefrl": 4, "yoshida6": 7}
    assert {name: evaluations[name] for name in expected} == expected


def test_radau5_error_estimate_is_of_its_declared_order():
    """RADAU5's estimate (I gamma/h - J)^-1 (f0 + sum E_i Z_i / h) is O(h^4) on a smooth problem:
    halving h divides it by 2^4 (it is no embedded b_hat, so it is measured, not derived)."""
    from odekit.kernels import layout

    def one_step_estimate(h):
        prob = odekit.ODEProblem(lambda t, y: np.array([-y[0] + np.sin(t), y[0] - 2 * y[1]]), (0.0, 1.0),
                                 [1.0, 0.5])
        integ = odekit.Integrator(prob, "radau5", h=h, rtol=1e-12, atol=1e-12, backend="python")
        integ.step()
        return float(np.max(np.abs(integ._scratch[0][layout.ERR])))

    estimates = [one_step_estimate(0.1 / 2 ** k) for k in range(4)]
    slopes = np.diff(np.log2(estimates))
    assert odekit.method("radau5").embedded_order == 3
    np.testing.assert_allclose(slopes, -4.0, atol=0.25)


def _hairer_wanner_table(c, b, order):
    """Hairer & Wanner's Table IV.7.1 (Solving ODEs II), orders 1-4: ``beta`` without its diagonal, the
    diagonal's gamma moved into the right-hand sides. An oracle written apart from the trees."""
    s, g = c.stages, c.gamma[0][0]
    beta = [[c.alpha[i][j] + c.gamma[i][j] if j < i else F(0) for j in range(s)] for i in range(s)]
    bp = [sum(row) for row in beta]
    a = c.c
    ab = [sum(c.alpha[i][k] * bp[k] for k in range(s)) for i in range(s)]
    bb = [sum(beta[i][k] * bp[k] for k in range(s)) for i in range(s)]

    def dot(u, v):
        return sum(x * y for x, y in zip(u, v))

    return {1: [dot(b, [1] * s) - 1],
            2: [dot(b, bp) - (F(1, 2) - g)],
            3: [dot(b, [x * x for x in a]) - F(1, 3), dot(b, bb) - (F(1, 6) - g + g * g)],
            4: [dot(b, [x ** 3 for x in a]) - F(1, 4),
                dot(b, [a[j] * ab[j] for j in range(s)]) - (F(1, 8) - g / 3),
                dot(b, [dot(beta[j], [x * x for x in a]) for j in range(s)]) - (F(1, 12) - g / 3),
                dot(b, [dot(beta[j], bb) for j in range(s)]) - (F(1, 24) - g / 2 + 3 * g * g / 2 - g ** 3)]}[order]


@pytest.mark.parametrize("name, weights, order", [("linearized_euler", "b", 1), ("rodas4", "b_hat", 3),
                                                   ("rodas4", "b", 4), ("rodas5p", "b_hat", 4)])
def test_rosenbrock_conditions_from_trees_are_hairer_and_wanners_table(name, weights, order):
    """The tree conditions (any order) hold exactly where the book's table's do, up to order 4: the weights
    of the declared order satisfy both to it, and both fail at the next (within 1000 times the rounding)."""
    c = odekit.method(name).coefficients
    b = getattr(c, weights)
    for q in range(1, 5):
        table = max(abs(r) for r in _hairer_wanner_table(c, b, q))
        trees = max(abs(r) for r in c.residuals(q, b))
        assert (table <= c.tolerance) == (trees <= c.tolerance) == (q <= order), (q, table, trees)
        if q > order:
            assert table > 1000 * c.tolerance and trees > 1000 * c.tolerance


def test_published_rosenbrock_nodes_are_held_to_alphas_row_sums():
    """rodas5p's rounded couplings sum to 1 + 4e-15 in its last rows: its published nodes put those stages
    at the step's end exactly, and nodes farther from the row sums than the tolerance are refused."""
    from odekit.tableau import RosenbrockTableau
    c = odekit.method("rodas5p").coefficients
    assert c.c[-3:] == (1, 1, 1) and 0 < abs(sum(c.alpha[-1]) - 1) <= c.tolerance
    assert RosenbrockTableau(alpha=[[0, 0], [F(1, 2), 0]], gamma=[[1, 0], [0, 1]], b=[0, 1],
                             nodes=[0, F(1, 2)]).c == (0, F(1, 2))
    with pytest.raises(ValueError, match="nodes must be alpha's row sums"):
        RosenbrockTableau(alpha=[[0, 0], [F(1, 2), 0]], gamma=[[1, 0], [0, 1]], b=[0, 1], nodes=[0, F(1, 3)])
