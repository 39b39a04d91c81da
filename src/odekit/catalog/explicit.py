"""Explicit Runge--Kutta methods and embedded pairs, as exact tableaus."""

from fractions import Fraction as F

from ..registry import Method, register
from ..tableau import ButcherTableau

HNW = "Hairer, Nørsett & Wanner, Solving ODEs I (1993)"
DISK = "stable where |R(hλ)| <= 1; unstable for every h on the imaginary axis"

register(Method(
    "euler", "explicit (forward) Euler",
    ButcherTableau(c=[0], A=[[0]], b=[1]),
    order=1, aliases=("explicit_euler", "forward_euler"),
    reference="Euler, Institutionum calculi integralis (1768); " + HNW + ", I.7",
    stability="R(z) = 1 + z: the disk |1 + z| <= 1; real steps h|λ| <= 2 (oscillating above 1); "
              "spirals outward on rotation for every h"))

register(Method(
    "midpoint", "explicit midpoint (modified Euler)",
    ButcherTableau(c=[0, F(1, 2)], A=[[], [F(1, 2)]], b=[0, 1]),
    order=2, aliases=("explicit_midpoint", "rk2"),
    reference="Runge, Math. Ann. 46 (1895); " + HNW + ", II.1",
    stability="R(z) = 1 + z + z²/2; real interval [-2, 0]; " + DISK))

register(Method(
    "heun", "Heun (explicit trapezoid, predictor-corrector)",
    ButcherTableau(c=[0, 1], A=[[], [1]], b=[F(1, 2), F(1, 2)]),
    order=2, aliases=("explicit_trapezoid", "improved_euler", "predictor_corrector"),
    reference="Heun, Z. Math. Phys. 45 (1900); " + HNW + ", II.1",
    stability="R(z) = 1 + z + z²/2 (as midpoint); real interval [-2, 0]; " + DISK))

register(Method(
    "ralston", "Ralston's second-order method",
    ButcherTableau(c=[0, F(2, 3)], A=[[], [F(2, 3)]], b=[F(1, 4), F(3, 4)]),
    order=2,
    reference="Ralston, Math. Comp. 16 (1962): minimum error bound among 2-stage methods",
    stability="R(z) = 1 + z + z²/2 (as midpoint); real interval [-2, 0]; " + DISK))

register(Method(
    "kutta3", "Kutta's third-order method",
    ButcherTableau(c=[0, F(1, 2), 1], A=[[], [F(1, 2)], [-1, 2]], b=[F(1, 6), F(2, 3), F(1, 6)]),
    order=3, aliases=("rk3",),
    reference="Kutta, Z. Math. Phys. 46 (1901); " + HNW + ", II.1",
    stability="R(z) = 1 + z + z²/2 + z³/6; real interval [-2.513, 0], imaginary axis |hω| <= √3"))

register(Method(
    "rk4", "classic Runge-Kutta",
    ButcherTableau(c=[0, F(1, 2), F(1, 2), 1], A=[[], [F(1, 2)], [0, F(1, 2)], [0, 0, 1]],
                   b=[F(1, 6), F(1, 3), F(1, 3), F(1, 6)]),
    order=4, aliases=("classic_rk4", "runge_kutta"),
    reference="Kutta, Z. Math. Phys. 46 (1901); " + HNW + ", II.1",
    stability="R(z) = 1 + z + z²/2 + z³/6 + z⁴/24; real interval [-2.785, 0], "
              "imaginary axis |hω| <= 2√2 ≈ 2.828 (slightly damping inside)"))

register(Method(
    "rk38", "Kutta's 3/8 rule",
    ButcherTableau(c=[0, F(1, 3), F(2, 3), 1], A=[[], [F(1, 3)], [F(-1, 3), 1], [1, -1, 1]],
                   b=[F(1, 8), F(3, 8), F(3, 8), F(1, 8)]),
    order=4, aliases=("three_eighths",),
    reference="Kutta, Z. Math. Phys. 46 (1901); " + HNW + ", II.1",
    stability="R(z) as rk4: real interval [-2.785, 0], imaginary axis |hω| <= 2√2"))

# --- embedded pairs -----------------------------------------------------------------

register(Method(
    "heun_euler", "Heun-Euler 2(1)",
    ButcherTableau(c=[0, 1], A=[[], [1]], b=[F(1, 2), F(1, 2)], b_hat=[1, 0]),
    order=2,
    reference="Heun's method with explicit Euler as the embedded estimate; " + HNW + ", II.4",
    stability="as heun: real interval [-2, 0]; " + DISK))

register(Method(
    "bs32", "Bogacki-Shampine 3(2)",
    ButcherTableau(c=[0, F(1, 2), F(3, 4), 1],
                   A=[[], [F(1, 2)], [0, F(3, 4)], [F(2, 9), F(1, 3), F(4, 9)]],
                   b=[F(2, 9), F(1, 3), F(4, 9), 0],
                   b_hat=[F(7, 24), F(1, 4), F(1, 3), F(1, 8)],
                   dense=[[1, F(-4, 3), F(5, 9)], [0, 1, F(-2, 3)], [0, F(4, 3), F(-8, 9)], [0, -1, 1]]),
    order=3, aliases=("rk23", "ode23"),
    reference="Bogacki & Shampine, Appl. Math. Lett. 2 (1989); the 'ode23' of MATLAB",
    stability="R(z) = 1 + z + z²/2 + z³/6; real interval [-2.513, 0], imaginary axis |hω| <= √3"))

register(Method(
    "rkf45", "Runge-Kutta-Fehlberg 4(5)",
    ButcherTableau(
        c=[0, F(1, 4), F(3, 8), F(12, 13), 1, F(1, 2)],
        A=[[], [F(1, 4)], [F(3, 32), F(9, 32)],
           [F(1932, 2197), F(-7200, 2197), F(7296, 2197)],
           [F(439, 216), -8, F(3680, 513), F(-845, 4104)],
           [F(-8, 27), 2, F(-3544, 2565), F(1859, 4104), F(-11, 40)]],
        b=[F(25, 216), 0, F(1408, 2565), F(2197, 4104), F(-1, 5), 0],
        b_hat=[F(16, 135), 0, F(6656, 12825), F(28561, 56430), F(-9, 50), F(2, 55)]),
    order=4, aliases=("fehlberg", "rkf"),
    reference="Fehlberg, NASA TR R-315 (1969): the fourth-order result is propagated, "
              "the fifth-order one only estimates its error",
    stability="real interval [-3.020, 0]; slightly unstable (|R| > 1) on the imaginary axis near 0"))

register(Method(
    "cash_karp", "Cash-Karp 5(4)",
    ButcherTableau(
        c=[0, F(1, 5), F(3, 10), F(3, 5), 1, F(7, 8)],
        A=[[], [F(1, 5)], [F(3, 40), F(9, 40)], [F(3, 10), F(-9, 10), F(6, 5)],
           [F(-11, 54), F(5, 2), F(-70, 27), F(35, 27)],
           [F(1631, 55296), F(175, 512), F(575, 13824), F(44275, 110592), F(253, 4096)]],
        b=[F(37, 378), 0, F(250, 621), F(125, 594), 0, F(512, 1771)],
        b_hat=[F(2825, 27648), 0, F(18575, 48384), F(13525, 55296), F(277, 14336), F(1, 4)]),
    order=5, aliases=("rkck",),
    reference="Cash & Karp, ACM TOMS 16 (1990); as in Numerical Recipes, the fifth-order result is propagated",
    stability="real interval [-3.734, 0]; slightly unstable (|R| > 1) on the imaginary axis near 0"))

register(Method(
    "dp54", "Dormand-Prince 5(4)",
    ButcherTableau(
        c=[0, F(1, 5), F(3, 10), F(4, 5), F(8, 9), 1, 1],
        A=[[], [F(1, 5)], [F(3, 40), F(9, 40)], [F(44, 45), F(-56, 15), F(32, 9)],
           [F(19372, 6561), F(-25360, 2187), F(64448, 6561), F(-212, 729)],
           [F(9017, 3168), F(-355, 33), F(46732, 5247), F(49, 176), F(-5103, 18656)],
           [F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84)]],
        b=[F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84), 0],
        b_hat=[F(5179, 57600), 0, F(7571, 16695), F(393, 640), F(-92097, 339200), F(187, 2100), F(1, 40)],
        dense=[[1, F(-8048581381, 2820520608), F(8663915743, 2820520608), F(-12715105075, 11282082432)],
               [0, 0, 0, 0],
               [0, F(131558114200, 32700410799), F(-68118460800, 10900136933), F(87487479700, 32700410799)],
               [0, F(-1754552775, 470086768), F(14199869525, 1410260304), F(-10690763975, 1880347072)],
               [0, F(127303824393, 49829197408), F(-318862633887, 49829197408), F(701980252875, 199316789632)],
               [0, F(-282668133, 205662961), F(2019193451, 616988883), F(-1453857185, 822651844)],
               [0, F(40617522, 29380423), F(-110615467, 29380423), F(69997945, 29380423)]]),
    order=5, aliases=("dopri5", "rk45", "ode45", "dormand_prince"),
    reference="Dormand & Prince, J. Comput. Appl. Math. 6 (1980); order-4 dense output of "
              "Shampine, Math. Comp. 46 (1986), as in SciPy's RK45",
    stability="real interval [-3.307, 0]; imaginary axis |hω| <= 0.997"))
