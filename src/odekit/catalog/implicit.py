"""Implicit methods for stiff systems: Newton-solved tableaus and Rosenbrock.

The diagonally implicit ones carry an embedded error estimate, so they run
adaptively by default (filtered through their Newton matrix, see
:mod:`odekit.kernels.implicit_rk`).  Backward Euler and the trapezoid are
written with an explicit first stage ``f(t, y)`` for that: their one-step
formula is unchanged, and the estimate costs one evaluation per step.
"""

from fractions import Fraction as F

from ..registry import Method, register
from ..multistep import NDF_KAPPA, BDFCoefficients
from ..surds import Surd
from ..tableau import ButcherTableau, CollocationTableau, RosenbrockTableau

HW = "Hairer & Wanner, Solving ODEs II (1996)"

register(Method(
    "backward_euler", "implicit (backward) Euler",
    ButcherTableau(c=[0, 1], A=[[], [0, 1]], b=[0, 1], b_hat=[F(1, 2), F(1, 2)]),
    order=1, aliases=("implicit_euler",),
    reference="Euler (1768); " + HW + ", IV.3; error estimate h/2 (f(y1) - f(y0)), "
              "the difference to the trapezoid",
    stability="R(z) = 1/(1 - z): L-stable, |R| <= 1 outside the disk |1 - z| < 1, R(∞) = 0; "
              "damps every mode, including oscillations it should keep"))

register(Method(
    "trapezoid", "implicit trapezoid (Crank-Nicolson)",
    ButcherTableau(c=[0, 1], A=[[], [F(1, 2), F(1, 2)]], b=[F(1, 2), F(1, 2)], b_hat=[1, 0]),
    order=2, aliases=("implicit_trapezoid", "crank_nicolson", "trapezoidal"),
    reference="Crank & Nicolson, Proc. Camb. Phil. Soc. 43 (1947); " + HW + ", IV.3; error estimate "
              "against explicit Euler, so adaptive steps are those of a first-order method (conservative)",
    stability="R(z) = (1 + z/2)/(1 - z/2): A-stable, stable exactly on the left half-plane, "
              "|R| = 1 on the imaginary axis (keeps circles), not L-stable: R(∞) = -1"))

_SQRT2 = Surd.sqrt(2)
_G = 2 - _SQRT2                  # TR-BDF2's gamma: the trapezoid covers [t, t + gamma h]
_D, _W = _G / 2, _SQRT2 / 4

register(Method(
    "trbdf2", "TR-BDF2",
    ButcherTableau(c=[0, _G, 1], A=[[], [_D, _D], [_W, _W, _D]], b=[_W, _W, _D],
                   b_hat=[(1 - _W) / 3, (3 * _W + 1) / 3, _D / 3]),
    order=2, aliases=("tr_bdf2",),
    reference="Bank, Coughran, Fichtner, Grosse, Rose & Smith, IEEE Trans. CAD 4 (1985); as an ESDIRK "
              "with the embedded third-order estimate of Hosea & Shampine, Appl. Numer. Math. 20 (1996)",
    stability="L-stable (R(∞) = 0), stiffly accurate; a trapezoid stage to t + (2 - √2) h, then BDF2; "
              "one LU serves both implicit stages"))

register(Method(
    "kencarp4", "Kennedy-Carpenter ESDIRK 4(3)",
    ButcherTableau(
        c=[0, F(1, 2), F(83, 250), F(31, 50), F(17, 20), 1],
        A=[[],
           [F(1, 4), F(1, 4)],
           [F(8611, 62500), F(-1743, 31250), F(1, 4)],
           [F(5012029, 34652500), F(-654441, 2922500), F(174375, 388108), F(1, 4)],
           [F(15267082809, 155376265600), F(-71443401, 120774400), F(730878875, 902184768),
            F(2285395, 8070912), F(1, 4)],
           [F(82889, 524892), 0, F(15625, 83664), F(69875, 102672), F(-2260, 8211), F(1, 4)]],
        b=[F(82889, 524892), 0, F(15625, 83664), F(69875, 102672), F(-2260, 8211), F(1, 4)],
        b_hat=[F(4586570599, 29645900160), 0, F(178811875, 945068544), F(814220225, 1159782912),
               F(-3700637, 11593932), F(61727, 225920)]),
    order=4, aliases=("esdirk4", "esdirk43", "ark4_esdirk"),
    reference="Kennedy & Carpenter, Appl. Numer. Math. 44 (2003): the implicit part of ARK4(3)6L[2]SA",
    stability="L-stable (R(∞) = 0), stiffly accurate, gamma = 1/4 on the diagonal: one LU per step size"))

_SQRT6 = Surd.sqrt(6)

register(Method(
    "radau5", "Radau IIA of order 5",
    CollocationTableau(
        c=[(4 - _SQRT6) / 10, (4 + _SQRT6) / 10, 1],
        A=[[(88 - 7 * _SQRT6) / 360, (296 - 169 * _SQRT6) / 1800, (-2 + 3 * _SQRT6) / 225],
           [(296 + 169 * _SQRT6) / 1800, (88 + 7 * _SQRT6) / 360, (-2 - 3 * _SQRT6) / 225],
           [(16 - _SQRT6) / 36, (16 + _SQRT6) / 36, F(1, 9)]],
        b=[(16 - _SQRT6) / 36, (16 + _SQRT6) / 36, F(1, 9)],
        error=[(-13 - 7 * _SQRT6) / 3, (-13 + 7 * _SQRT6) / 3, F(-1, 3)],
        estimate_order=3),
    order=5, aliases=("radau", "radau_iia"),
    reference=HW + ", IV.5 (the method) and IV.8 (its implementation RADAU5: decoupled Newton, "
              "error estimate eq. 8.20, and its step control: Gustafsson's predictive controller, "
              "Gustafsson, ACM TOMS 20 (1994), with the safety lowered after slow Newton iterations)",
    stability="L-stable (R(∞) = 0), stiffly accurate; collocation at the Radau points, order 3 "
              "at each stage"))

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

# Hairer & Wanner's RODAS (METH = 1 of rodas.f), as they print it: stage
# couplings a_ij and c_ij of the transformed stages, rounded to 16 digits.
_RODAS_A = [[], ["1.544"],
            ["0.9466785280815826", "0.2557011698983284"],
            ["3.314825187068521", "2.896124015972201", "0.9986419139977817"],
            ["1.221224509226641", "6.019134481288629", "12.53708332932087", "-0.6878860361058950"],
            ["1.221224509226641", "6.019134481288629", "12.53708332932087", "-0.6878860361058950", 1]]
_RODAS_C = [[], ["-5.6688"],
            ["-2.430093356833875", "-0.2063599157091915"],
            ["-0.1073529058151375", "-9.594562251023355", "-20.47028614809616"],
            ["7.496443313967647", "-10.24680431464352", "-33.99990352819905", "11.70890893206160"],
            ["8.083246795921522", "-7.981132988064893", "-31.52159432874371", "16.31930543123136",
             "-6.058818238834054"]]

register(Method(
    "rodas4", "Rodas4 (Rosenbrock, stiffly accurate)",
    RosenbrockTableau.from_transformed(
        gamma=F(1, 4), a=_RODAS_A, c=_RODAS_C,
        m=[*_RODAS_A[4], 1, 1], m_hat=[*_RODAS_A[4], 1, 0], tolerance=F(1, 10 ** 13)),
    order=4, aliases=("rosenbrock", "rodas"),
    reference=HW + ", IV.7 (Table 7.2 and the code RODAS): 6 stages, order 4 with an embedded order 3, "
              "coefficients rounded to 16 digits",
    stability="L-stable (R(∞) = 0), stiffly accurate; one Jacobian and one LU per step, no Newton "
              "iteration (needs the exact Jacobian for its order, and for linear invariants: with "
              "central differences, good to about 1e-12, E5's y2 - y3 - y4 = 0 drifted to 1e-18 by "
              "t = 1e6 instead of 4e-21, 4 tolerance units at rtol 1e-6)"))

# Steinebach's Rodas5P as OrdinaryDiffEq.jl implements it: the transformed couplings a_ij and c_ij of its
# eight stages (17 significant digits); stages 7 and 8 and the solution add u_6, u_7 and u_8 to stage 6's
# argument in turn, and the error estimate is u_8.
_RODAS5P_A6 = ["-7.502846399306121", "2.561846144803919", "-11.627539656261098", "-0.18268767659942256",
               "0.030198172008377946"]
_RODAS5P_A = [[], ["3.0"],
              ["2.849394379747939", "0.45842242204463923"],
              ["-6.954028509809101", "2.489845061869568", "-10.358996098473584"],
              ["2.8029986275628964", "0.5072464736228206", "-0.3988312541770524", "-0.04721187230404641"],
              _RODAS5P_A6, [*_RODAS5P_A6, 1], [*_RODAS5P_A6, 1, 1]]
_RODAS5P_C = [[], ["-14.155112264123755"],
              ["-17.97296035885952", "-2.859693295451294"],
              ["147.12150275711716", "-1.41221402718213", "71.68940251302358"],
              ["165.43517024871676", "-0.4592823456491126", "42.90938336958603", "-5.961986721573306"],
              ["24.854864614690072", "-3.0009227002832186", "47.4931110020768", "5.5814197821558125",
               "-0.6610691825249471"],
              ["30.91273214028599", "-3.1208243349937974", "77.79954646070892", "34.28646028294783",
               "-19.097331116725623", "-28.087943162872662"],
              ["37.80277123390563", "-3.2571969029072276", "112.26918849496327", "66.9347231244047",
               "-40.06618937091002", "-54.66780262877968", "-9.48861652309627"]]

register(Method(
    "rodas5p", "Rodas5P (Rosenbrock, stiffly accurate)",
    RosenbrockTableau.from_transformed(
        gamma="0.21193756319429014", a=_RODAS5P_A, c=_RODAS5P_C,
        m=[*_RODAS5P_A6, 1, 1, 1], m_hat=[*_RODAS5P_A6, 1, 1, 0], tolerance=F(1, 10 ** 13),
        nodes=[0, "0.6358126895828704", "0.4095798393397535", "0.9769306725060716", "0.4288403609558664", 1, 1, 1]),
    order=5,
    reference="Steinebach, Construction of Rosenbrock-Wanner method Rodas5P and numerical benchmarks within "
              "the Julia Differential Equations package, BIT Numer. Math. 63 (2023): 8 stages, order 5 with an "
              "embedded order 4, coefficients of OrdinaryDiffEq.jl's Rodas5P to 17 digits",
    stability="R(∞) = 0 (stiffly accurate), its one pole (of multiplicity 8) at 1/gamma ≈ 4.72, |R(iy)| ≤ 1 "
              "but for the rounding of its 17-digit coefficients (at most 3e-18 above 1, for |y| < 0.03); one "
              "Jacobian and one LU per step, 8 evaluations, no Newton iteration (needs the exact Jacobian for its "
              "order, as rodas4)"))

_BDF_REFERENCE = ("Shampine & Reichelt, SIAM J. Sci. Comput. 18 (1997): quasi-constant step in backward "
                  "differences (Byrne & Hindmarsh, ACM TOMS 1 (1975)), order and step chosen per step, "
                  "as SciPy's BDF; the Newton matrix kept while h / alpha changes by < 30 % as in Hindmarsh's "
                  "LSODE (ODEPACK, 1983), or SciPy's way with MethodControl(newton='scipy'); " + HW +
                  ", III.5 and V.1")

register(Method(
    "bdf", "variable-order BDF (orders 1-5)",
    BDFCoefficients(max_order=5),
    order=5, aliases=("vode_bdf", "gear"),
    reference=_BDF_REFERENCE,
    stability="BDF1-2 A-stable (BDF1 L-stable); BDF3-5 A(alpha)-stable, alpha = 86°, 73°, 52° "
              "(zero-stable up to order 6): weak for oscillatory stiff modes; order 5 at most"))

register(Method(
    "ndf", "variable-order NDF (orders 1-5)",
    BDFCoefficients(max_order=5, kappa=NDF_KAPPA),
    order=5, aliases=("ode15s", "numerical_differentiation"),
    reference="Klopfenstein (1971); Shampine & Reichelt, SIAM J. Sci. Comput. 18 (1997): the NDFs of MATLAB's "
              "ode15s and SciPy's BDF, " + _BDF_REFERENCE.split(": ", 1)[1],
    stability="NDF1-2 A-stable; NDF3-5 A(alpha)-stable, alpha = 80°, 66°, 51°; steps about 26% larger "
              "than BDF's at orders 1-4 for the same error"))
