"""Implicit methods for stiff systems: Newton-solved tableaus and Rosenbrock."""

from fractions import Fraction as F

from ..methods import Method, register
from ..tableau import ButcherTableau, RosenbrockTableau

HW = "Hairer & Wanner, Solving ODEs II (1996)"

register(Method(
    "backward_euler", "implicit (backward) Euler",
    ButcherTableau(c=[1], A=[[1]], b=[1]),
    order=1, aliases=("implicit_euler",),
    reference="Euler (1768); " + HW + ", IV.3",
    stability="R(z) = 1/(1 - z): L-stable, |R| <= 1 outside the disk |1 - z| < 1, R(∞) = 0; "
              "damps every mode, including oscillations it should keep"))

register(Method(
    "trapezoid", "implicit trapezoid (Crank-Nicolson)",
    ButcherTableau(c=[0, 1], A=[[], [F(1, 2), F(1, 2)]], b=[F(1, 2), F(1, 2)]),
    order=2, aliases=("implicit_trapezoid", "crank_nicolson", "trapezoidal"),
    reference="Crank & Nicolson, Proc. Camb. Phil. Soc. 43 (1947); " + HW + ", IV.3",
    stability="R(z) = (1 + z/2)/(1 - z/2): A-stable, stable exactly on the left half-plane, "
              "|R| = 1 on the imaginary axis (keeps circles), not L-stable: R(∞) = -1"))

register(Method(
    "implicit_midpoint", "implicit midpoint",
    ButcherTableau(c=[F(1, 2)], A=[[F(1, 2)]], b=[1]),
    order=2, aliases=("gauss2",),
    symplectic=True,
    reference="Gauss-Legendre collocation with one stage; " + HW + ", IV.3; "
              "Hairer, Lubich & Wanner, Geometric Numerical Integration (2006), VI.3",
    stability="R(z) = (1 + z/2)/(1 - z/2): A-stable, |R| = 1 on the imaginary axis; "
              "symplectic, conserves quadratic invariants"))

register(Method(
    "linearized_euler", "linearised backward Euler",
    RosenbrockTableau(alpha=[[0]], gamma=[[1]], b=[1], time_derivative=False),
    order=1, aliases=("linearised_euler", "semi_implicit_backward_euler", "rosenbrock_euler"),
    reference="Baraff & Witkin, Large Steps in Cloth Simulation, SIGGRAPH 1998: "
              "one Newton step of backward Euler, Δy = (I/h - J)⁻¹ f(y₀)",
    stability="R(z) = 1/(1 - z) as backward Euler (exact Jacobian): L-stable"))
