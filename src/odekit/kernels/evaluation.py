"""Calling the user's functions from a kernel: counting and checking.

The user's right-hand side reaches the kernels through a small adapter (see
:mod:`odekit.backend`) with the calling convention ``rhs(t, W, src, dst,
args)``: it reads the state in row ``src`` of the work matrix ``W``, writes
the derivative into row ``dst`` and returns False when the user's function
returned what does not fit there (see :func:`store`).  (A force -- the
acceleration of a second-order problem -- fills only the second half of row
``dst``, where the velocity's derivative goes.)  Counting happens here, in
the kernel, so the user's function is never wrapped in Python to count it.
"""

import math

import numpy as np

from . import compiled_as, jitable
from .layout import (BAD_SHAPE, C_HAS_JAC, CARRY_H, CARRY_T, JAC_NONFINITE, JAC_REUSE, LU_HG, NFEV, NJEV, NONFINITE,
                     SUCCESS, T_FAIL)
from .primitives import all_finite, copy_row, difference_column, finite_from

LU_REUSE = 1e-8      # see factors_serve
DROWNED = 100.0 * np.finfo(np.float64).eps      # see drowned


@jitable
def evaluate(rhs, args, t, W, src, dst, ist, fs):
    """Evaluate ``rhs`` at ``(t, W[src])`` into ``W[dst]``, counted; return a status code.

    Checks the size of the result but not its finiteness: an explicit stage
    that is inf or nan reaches ``y_new`` (or the error estimate), which is
    checked once per step.  Values that are used on their own -- forces,
    derivatives for output, Jacobian columns, Newton iterates -- go through
    :func:`evaluate_finite`.
    """
    ist[NFEV] += 1
    if not rhs(t, W, src, dst, args):
        fs[T_FAIL] = t
        return BAD_SHAPE
    return SUCCESS


@jitable
def evaluate_finite(rhs, args, t, W, src, dst, ist, fs, start=0):
    """:func:`evaluate`, and NONFINITE when row ``dst`` holds inf or nan from entry ``start`` on.

    By default the whole row is checked: a kernel that evaluates a force
    keeps the first half of the row finite, or checks from the second half
    (the splitting step, which computes the force into ``f_new``).
    """
    code = evaluate(rhs, args, t, W, src, dst, ist, fs)
    if code == SUCCESS and not finite_from(W, dst, start):
        fs[T_FAIL] = t
        return NONFINITE
    return code


@jitable
def overflowed(W, ynew, fs):
    """NONFINITE when ``W[ynew]`` holds inf or nan although every evaluation was finite.

    ``T_FAIL`` is set to nan to say that no evaluation is to blame.  Each
    stepper ends with this check (or a finer one), so the driver need not.
    """
    if all_finite(W, ynew):
        return SUCCESS
    fs[T_FAIL] = np.nan
    return NONFINITE


@jitable
def continues(fs, t):
    """True when the attempt in ``fs[CARRY_T], fs[CARRY_H]`` ended where this one starts (it was accepted).

    A fixed step's end ``t0 + k h`` and its start plus its length differ in
    their last bits, hence the tolerance.
    """
    h = fs[CARRY_H]
    return h != 0.0 and t != fs[CARRY_T] and abs(t - (fs[CARRY_T] + h)) <= 1e-9 * abs(h)


def _store_loop(W, dst, start, value):
    if value is None:              # a function that returned None on some path (Numba: an optional)
        return False
    r = np.asarray(value)
    if r.size != W.shape[1] - start:
        return False
    for k in range(r.size):
        W[dst, start + k] = r.flat[k]
    return True


@compiled_as(_store_loop)
def store(W, dst, start, value):
    """Copy a user function's result into ``W[dst, start:]``; False if it has the wrong size or kind.

    How every adapter hands a returned array (or scalar) to the kernels.
    None, and complex values for a real state (whose imaginary part would
    be lost), are refused too: compiled, the latter does not even type.
    The compiled loop avoids Numba's broadcasting slice assignment, whose
    error-message machinery lengthens the compilation of every user function;
    it indexes ``r.flat`` (in C order, as ``ravel``), which was faster than
    iterating over ``r.flat``: the copy runs once per evaluation, so on a
    small system it is a visible part of the evaluation's cost.
    """
    if value is None:
        return False
    r = np.asarray(value)
    if r.size != W.shape[1] - start or not keeps_whole(W.dtype, r.dtype):
        return False
    W[dst, start:] = r.ravel()
    return True


@jitable
def store_values(G, row, start, m, value):
    """An event's ``g`` (a number or ``m`` of them) into ``G[row, start:start + m]``; False if it does not fit."""
    if value is None:
        return False
    return store_part(G, row, start, m, value)


@jitable(cold=True)
def store_state(W, row, value):
    """An event's affect result into ``W[row]``: None (it changed the state in place) or the new state.

    Compiled on its own, for each type of ``value``, so that Numba drops the
    branch that does not apply (it prunes ``value is None`` only on a
    function's own arguments).
    """
    if value is None:
        return True
    return store(W, row, 0, value)


@jitable(cold=True)
def store_motion(W, row, value):
    """As :func:`store_state` for a second-order problem, whose affect returns ``(x, v)``.

    Its own function, not a branch of :func:`store_state`: Numba types every
    branch, and a tuple does not type as a state.
    """
    if value is None:
        return True
    n = W.shape[1] // 2
    return store_part(W, row, 0, n, value[0]) and store_part(W, row, n, n, value[1])


def _store_part_loop(W, row, start, m, value):
    r = np.asarray(value)
    if r.size != m:
        return False
    for j in range(m):
        W[row, start + j] = r.flat[j]
    return True


@compiled_as(_store_part_loop, cold=True)
def store_part(W, row, start, m, value):
    """``m`` numbers of ``value`` into ``W[row, start:start + m]``; False if it has another size or kind."""
    r = np.asarray(value)
    if r.size != m or not keeps_whole(W.dtype, r.dtype):
        return False
    W[row, start:start + m] = r.ravel()
    return True


def keeps_whole(target_dtype, value_dtype):
    """Whether an array of ``target_dtype`` keeps values of ``value_dtype`` whole: numbers, no complex into real."""
    return value_dtype.kind in ("biufc" if target_dtype.kind == "c" else "biuf")


def _store_matrix_loop(J, value):
    if value is None:
        return False
    r = np.asarray(value)
    if r.size != J.size:
        return False
    n = J.shape[1]
    for i in range(J.shape[0]):
        for j in range(n):
            J[i, j] = r.flat[i * n + j]
    return True


@compiled_as(_store_matrix_loop)
def store_matrix(J, value):
    """Copy a user's Jacobian (or a constant one) into the matrix ``J``, in C order; False if it does not fit.

    As :func:`store` (None, and complex values for a real ``J``, refused
    too), without making ``J`` a row first: Numba's ``reshape`` calls into
    its C helpers, and with it a 3 x 3 Jacobian cost twice as long to hand
    over.
    """
    if value is None:
        return False
    r = np.asarray(value)
    if r.size != J.size or not keeps_whole(J.dtype, r.dtype):
        return False
    J[...] = r.reshape(J.shape)
    return True


@jitable(cold=True)
def linearise(rhs, jac, args, has_jac, central, tol, need_f, t, W, y, f, have_f, J, ytmp, ftmp, fback, ist, fs):
    """The Jacobian at ``(t, W[y])``, and ``W[f]`` when ``need_f`` or differencing needs it.

    How every (linearly) implicit step starts.  Returns ``(code, have_f)``.
    ``f`` is checked for inf and nan, since a finite-difference Jacobian is
    built from it.  ``central`` asks for central differences (row ``fback``
    is then used too), and ``tol`` (rows rtol, atol) sizes the forward ones' increments,
    see :func:`jacobian`.
    """
    if not have_f and (need_f or not has_jac):
        code = evaluate_finite(rhs, args, t, W, y, f, ist, fs)
        if code != SUCCESS:
            return code, False
        have_f = True
    return jacobian(rhs, jac, args, has_jac, central, tol, t, W, y, f, J, ytmp, ftmp, fback, ist, fs), have_f


@jitable
def newton_start(rhs, jac, args, ctrl, tol, need_f, t, W, y, f, have_f, J, ytmp, ftmp, fback, ist, fs):
    """How a step of simplified Newton begins; returns ``(code, have_f, fresh)``.

    A new Jacobian at ``(t, W[y])`` unless the last one may serve
    (``ist[JAC_REUSE]``; a new one invalidates the LU factors), and ``W[f]``
    when the method needs it.  ``fresh`` tells whether the Jacobian is new.
    """
    fresh = ist[JAC_REUSE] == 0
    if fresh:
        code, have_f = linearise(rhs, jac, args, ctrl[C_HAS_JAC] != 0.0, False, tol, need_f, t, W, y, f, have_f,
                                 J, ytmp, ftmp, fback, ist, fs)
        fs[LU_HG] = 0.0
    elif need_f and not have_f:
        code = evaluate_finite(rhs, args, t, W, y, f, ist, fs)
        have_f = code == SUCCESS
    else:
        code = SUCCESS
    if code != SUCCESS:
        ist[JAC_REUSE] = 0 if fresh else 1
    return code, have_f, fresh


@jitable
def factors_serve(fs, hg, change=LU_REUSE):
    """True when the LU factors of ``I - h' g J`` (``fs[LU_HG] = h' g``) serve ``h g``.

    They do when ``h'`` and ``h`` differ only in their last bits: a step
    that is kept is recomputed as ``t_new - t`` (and a fixed step's length
    varies along its grid ``t0 + k h``), and simplified Newton does not
    need its matrix to that precision.  A method that corrects for the
    difference (BDF's :func:`odekit.kernels.bdf.newton`) may keep them for
    a relative ``change`` of ``h g`` up to ``change``.
    """
    return abs(hg - fs[LU_HG]) <= max(change, LU_REUSE) * abs(hg)


@jitable
def retake_jacobian(rhs, jac, args, ctrl, tol, t, W, y, f, have_f, J, ytmp, ftmp, fback, ist, fs):
    """After Newton failed with an old Jacobian: a new one at ``(t, W[y])``; returns ``(code, have_f)``."""
    code, have_f = linearise(rhs, jac, args, ctrl[C_HAS_JAC] != 0.0, False, tol, False, t, W, y, f, have_f,
                             J, ytmp, ftmp, fback, ist, fs)
    fs[LU_HG] = 0.0
    if code != SUCCESS:
        ist[JAC_REUSE] = 0
    return code, have_f


CBRT_EPS = float(np.cbrt(np.finfo(np.float64).eps))


def _two_thirds_power_loop(x):
    return math.ldexp(1.0, (4 * math.frexp(x)[1] + 1) // 6)


@compiled_as(_two_thirds_power_loop)
def two_thirds_power(x):
    """``x^(2/3)`` for ``x > 0`` (or elementwise) as a power of two, within a factor ``2^(2/3)``: with ``x =
    m 2^e``, ``1/2 <= m < 1``, ``(2/3) log2 x`` lies in ``[2 (e - 1)/3, 2 e/3)``, whose middle, a multiple
    of 1/3, is rounded to the nearest integer, ``(4 e + 1) // 6``."""
    return np.ldexp(1.0, (4 * np.frexp(x)[1] + 1) // 6)


@jitable
def increment(x, central):
    """The step of a finite difference at ``x`` (a number, or elementwise an array in NumPy).

    Forward: Hairer & Wanner's RADAU5 ``sqrt(eps * max(1e-5, |x|))``.
    Central: ``eps^(1/3) * max(1e-5, |x|)^(2/3)``, balancing truncation
    (``delta^2``) against round-off (``eps / delta``) as the forward step does
    for its own; the power of 2/3 taken as a power of two
    (:func:`two_thirds_power`: the balance is flat, and ``pow`` took 11 ns a
    column against 7 -- rodas4 without a Jacobian on Robertson to 1e5 at
    rtol 1e-3 19.4 -> 16.8 us, on HIRES at 1e-4 138 -> 129 us, the same
    steps and errors).  The steps in time, and the central ones in the
    state; a forward one in the state takes :func:`state_increment`.
    """
    scale = np.maximum(1e-5, np.abs(x))
    if central:
        return CBRT_EPS * two_thirds_power(scale)
    return np.sqrt(np.finfo(np.float64).eps * scale)


@jitable
def state_increment(x, atol, central):
    """The step of a difference in a state component ``x`` of absolute tolerance ``atol`` (or elementwise).

    Forward: ``sqrt(eps) * max(|x|, atol)``, as SciPy's ``num_jac`` with
    ``atol`` for its threshold, rounded to what ``x + delta`` represents so
    that the quotient divides by the step taken.  It follows the component,
    and its tolerance where that is larger, so that the column is accurate
    in the weighted norm of Newton's iteration and of the error estimate.
    RADAU5's ``sqrt(eps * max(1e-5, |x|))`` (:func:`increment`) does not
    scale with the component: on Robertson to t = 1e11 at atol 1e-10, where
    ``y2`` ~ 1e-13, its step on ``y2`` was 560 times ``y2``, the entry
    ``2 k2 y2`` came out 280 times too large, and radau5 took 5.5 times the
    evaluations of the analytic Jacobian and ended 1e-3 off instead of 1e-6.
    Central (Rosenbrock methods, whose result rests on ``J`` itself):
    :func:`increment`, which resolves an f whose terms are far larger than
    the component's tolerance (a chain's velocities at 0 under forces of
    order 1: there ``eps^(1/3) atol`` would leave the ``v`` columns to
    rounding).  A forward column lost in f's rounding is taken once more
    with :func:`wider_increment`.  Written with NumPy's functions so that
    the sparse path's grouped differences take the same steps, for every
    column at once.
    """
    if central:
        return increment(x, True)
    delta = np.sqrt(np.finfo(np.float64).eps) * np.maximum(np.abs(x), atol)
    return (x + delta) - x


@jitable
def wider_increment(x, delta):
    """The forward step that takes again a column whose first step ``delta`` drowned (see :func:`drowned`).

    The larger of RADAU5's ``sqrt(eps * max(1e-5, |x|))`` (:func:`increment`)
    and ten times ``delta`` (SciPy's ``NUM_JAC_FACTOR_INCREASE``), rounded as
    in :func:`state_increment`.  RADAU5's floor is what a component at zero
    needs: pulled by a force of 50 with ``atol`` 1e-9, the first step is
    1.5e-17 and moves f by 7.5e-16, below its rounding; ten times that
    (SciPy's retake) is still drowned -- SciPy keeps a factor per column
    and grows it over the Jacobians that follow; odekit keeps none -- while
    RADAU5's 4.7e-11 moves f by 2.4e-9, 2,000 times the ``DROWNED`` level,
    and gives the column to 5e-6 (``tests/test_fd_jacobian.py``).  Its
    truncation error is the old one, but only for a column no smaller step
    resolves.  The factor covers a component above 1, where RADAU5's step
    is the smaller one.  Elementwise on arrays, for the sparse path.
    """
    wide = np.maximum(increment(x, False), 10.0 * delta)
    return (x + wide) - x


@jitable
def drowned(W, fnew, f, i):
    """True when ``W[fnew, i] - W[f, i]`` is lost in the rounding of the f entries it is the difference of.

    Within ``DROWNED`` = 100 eps of the larger of the two (SciPy's
    ``num_jac`` takes eps^0.875, 95 eps, against the f of the row of the
    column's largest difference): such a difference has at most two correct
    digits and may be zero.  A column is drowned when every one of its rows
    is, and is then taken again with :func:`wider_increment`.  A column with
    one row resolved is kept even when another is lost (``x' = v`` beside
    ``v' = -x - c v`` at ``v = 0``, ``x = 1``: ``-c`` comes out 0), as in
    SciPy; a lost entry looks like a zero one, and only the pattern tells
    them apart.  Compared row by row, a trace species beside forces of
    order 1 keeps its own small step.  ``i`` may be an array of rows (the
    sparse path).
    """
    return np.abs(W[fnew, i] - W[f, i]) <= DROWNED * np.maximum(np.abs(W[fnew, i]), np.abs(W[f, i]))


@jitable
def column_drowned(W, fnew, f):
    """True when every entry of the difference ``W[fnew] - W[f]`` is :func:`drowned`."""
    for i in range(W.shape[1]):
        if not drowned(W, fnew, f, i):
            return False
    return True


@jitable
def user_jacobian(jac, args, t, W, row, J, fs):
    """The problem's ``jac`` at ``(t, W[row])`` into ``J``: BAD_SHAPE when it does not fit, JAC_NONFINITE
    when it holds inf or nan, else SUCCESS."""
    if not jac(t, W, row, J, args):
        fs[T_FAIL] = t
        return BAD_SHAPE
    if not matrix_finite(J):
        # jac's own failure, at a state that is finite: the driver stops at once rather
        # than retry smaller steps (most Jacobians are taken at the step's start, which
        # a smaller step does not move; a jac inf or nan there is jac's to mend)
        fs[T_FAIL] = t
        return JAC_NONFINITE
    return SUCCESS


@jitable(cold=True)
def jacobian(rhs, jac, args, has_jac, central, tol, t, W, y, f, J, ytmp, ftmp, fback, ist, fs):
    """Fill ``J`` with df/dy at ``(t, W[y])``; ``W[f]`` must hold f there.

    Uses the user's Jacobian when ``has_jac``, and finite differences
    otherwise (increments of :func:`state_increment`, from each component
    and its atol, row 1 of ``tol``): forward ones (accurate to about
    ``sqrt(eps)``, which Newton's method does not mind), or with ``central``
    the two-sided ones (about ``eps^(2/3)``, twice the evaluations), for
    Rosenbrock methods, whose order rests on the Jacobian itself.  Each
    difference evaluation is counted in ``nfev``; the Jacobian in ``njev``.
    Returns a status code: ``JAC_NONFINITE`` when the user's Jacobian holds
    inf or nan, ``NONFINITE`` when a difference's evaluation of f does.
    """
    ist[NJEV] += 1
    if has_jac:
        return user_jacobian(jac, args, t, W, y, J, fs)
    # Differences fail with NONFINITE when f is inf or nan at a perturbed state: f's failure,
    # near the solution, which a smaller step may get through, as an f failing at a stage
    return differences(rhs, args, central, tol, t, W, y, f, J, ytmp, ftmp, fback, ist, fs)


def _matrix_finite_loop(J):
    for i in range(J.shape[0]):
        if not all_finite(J, i):
            return False
    return True


@compiled_as(_matrix_finite_loop, cold=True)
def matrix_finite(J):
    """True when every entry of the Jacobian ``J`` (dense, or from :mod:`odekit.sparse`) is finite."""
    return bool(np.isfinite(J).all()) if isinstance(J, np.ndarray) else J.finite()


def _differences_loop(rhs, args, central, tol, t, W, y, f, J, ytmp, ftmp, fback, ist, fs):
    copy_row(W, ytmp, W, y)
    for j in range(W.shape[1]):
        yj = W[y, j]
        delta = state_increment(yj, tol[1, j], central)
        W[ytmp, j] = yj + delta
        code = evaluate_finite(rhs, args, t, W, ytmp, ftmp, ist, fs)
        if code != SUCCESS:
            return code
        if central:
            W[ytmp, j] = yj - delta
            code = evaluate_finite(rhs, args, t, W, ytmp, fback, ist, fs)
            if code != SUCCESS:
                return code
            difference_column(J, j, W, ftmp, fback, 2.0 * delta)
        else:
            if column_drowned(W, ftmp, f):
                # lost in f's rounding (a component at 0 with a tiny atol): once more, wider
                delta = wider_increment(yj, delta)
                W[ytmp, j] = yj + delta
                code = evaluate_finite(rhs, args, t, W, ytmp, ftmp, ist, fs)
                if code != SUCCESS:
                    return code
            difference_column(J, j, W, ftmp, f, delta)
        W[ytmp, j] = yj
    return SUCCESS


@compiled_as(_differences_loop, cold=True)
def differences(rhs, args, central, tol, t, W, y, f, J, ytmp, ftmp, fback, ist, fs):
    """Fill ``J`` by finite differences of ``rhs`` around ``W[y]``, column by column; a status code.

    ``tol`` holds rtol and atol per component (rows 0 and 1), see
    :func:`state_increment`.  A sparse Jacobian
    (:class:`odekit.sparse.SparseJacobian`) perturbs whole groups of columns
    at once instead.
    """
    if isinstance(J, np.ndarray):
        return _differences_loop(rhs, args, central, tol, t, W, y, f, J, ytmp, ftmp, fback, ist, fs)
    return J.differences(rhs, args, central, tol, t, W, y, f, ytmp, ftmp, fback, ist, fs)


@jitable
def first_order_derivative(rhs, args, t, W, src, dst, ist, fs):
    """``W[dst] = y'(t)`` for a first-order system: one checked evaluation of ``rhs``."""
    return evaluate_finite(rhs, args, t, W, src, dst, ist, fs)


# --- a bound of the stiffness ratio, for the note after an explicit run --------------

def _row_rms_loop(W, row):
    n = W.shape[1]
    big = 0.0
    for q in range(n):
        big = max(big, abs(W[row, q]))
    if big == 0.0 or not np.isfinite(big):
        return big
    acc = 0.0
    for q in range(n):
        v = W[row, q] / big
        acc += v * v
    return big * np.sqrt(acc / n)


@compiled_as(_row_rms_loop, cold=True)
def row_rms(W, row):
    """Root-mean-square of ``W[row]``, scaled by its largest entry so that no square overflows."""
    v = W[row]
    big = float(np.max(np.abs(v))) if v.size else 0.0
    if big == 0.0 or not np.isfinite(big):
        return big
    s = v / big
    return big * np.sqrt(np.cumsum(s * s)[-1] / v.size)     # cumsum adds left to right, as the loop


def _stiffness_bound_loop(rhs, args, t, W, y, f, probe, column):
    n = W.shape[1]
    size_u = row_rms(W, y)
    e = increment(size_u, False) * np.sqrt(n)
    if not np.isfinite(e) or not rhs(t, W, y, f, args):
        return np.nan
    copy_row(W, probe, W, y)
    total = 0.0
    for j in range(n):
        W[probe, j] = W[y, j] + e
        if not rhs(t, W, probe, column, args):
            return np.nan
        W[probe, j] = W[y, j]
        for q in range(n):
            d = W[column, q] - W[f, q]
            total += d * d
    return _bound_ratio(total, e, size_u, row_rms(W, f))


@compiled_as(_stiffness_bound_loop, cold=True)
def stiffness_bound(rhs, args, t, W, y, f, probe, column):
    """An upper bound of the stiffness ratio ``rho |u| / |f(u)|`` at ``(t, u = W[y])``, and ``W[f] = f(t, u)``.

    ``rho``, the spectral radius of the Jacobian, is bounded by its
    Frobenius norm, here by forward differences from ``n + 1`` evaluations
    (uncounted) with the increment of the Arnoldi estimate of
    :mod:`odekit.theory.stiffness`, ``sqrt(eps max(1e-5, |u|)) sqrt(n)``
    along each axis; the norms are root-mean-square.  nan when an
    evaluation does not fit its row, inf or nan when one is not finite, inf
    when ``f = 0``.  Rows ``probe`` and ``column`` are the compiled loop's
    work (Python makes a matrix of its own).  A kernel: after an explicit
    run the note that it starved on a stiff problem needs the estimate of
    the spectrum only when this bound does not clear it, and a repeated
    solve's one compiled call gets it without a call of ``rhs`` from Python
    (a few microseconds each).
    """
    n = W.shape[1]
    size_u = row_rms(W, y)
    e = increment(size_u, False) * np.sqrt(n)
    if not np.isfinite(e):
        return np.nan
    M = np.empty((2 * n + 2, n), dtype=W.dtype)
    M[:n + 1] = W[y]
    M[np.arange(n), np.arange(n)] += e          # row j < n: u with e added to entry j; row n: u
    for j in range(n + 1):
        if not rhs(t, M, j, n + 1 + j, args):
            return np.nan
    W[f] = M[2 * n + 1]
    with np.errstate(all="ignore"):
        d = (M[n + 1:2 * n + 1] - W[f]).ravel()
        return _bound_ratio(np.cumsum(d * d)[-1] if n else 0.0, e, size_u, row_rms(W, f))


@jitable
def _bound_ratio(total, e, size_u, size_f):
    """``sqrt(total) / e`` (the Frobenius norm) times ``size_u / size_f``; inf when ``size_f`` is 0."""
    if size_f == 0.0:
        return np.inf
    return np.sqrt(total) / e * size_u / size_f
