"""Stiffness advice: the Jacobian's outer spectrum, and the largest stable step of each explicit method.

The estimate is a short Arnoldi iteration (Saad, *Numerical Methods for
Large Eigenvalue Problems*, 2nd ed. 2011, ch. 6) on Jacobian-vector products
-- forward differences of the right-hand side, or the problem's ``jac`` --
from a fixed pseudo-random start vector: the Krylov space of power iteration,
with the small Hessenberg matrix's eigenvalues (Ritz values) in place of the
power method's ratio.  The Ritz value of largest modulus estimates the
dominant eigenvalue *with its direction* in the complex plane, and a complex
conjugate pair -- which makes plain power iteration rotate without
converging -- is found like any other.  The Jacobian is never formed from
differences and never decomposed: about 20 evaluations of ``f`` and
``O(20^2 n)`` arithmetic, whatever ``n``.  Krylov methods approach the edge of
the spectrum from inside, so on a dense spectrum (a long chain of springs)
the spectral radius comes out slightly low (0.08% for 10,000 masses).

Mechanics with velocity-independent forces, ``x'' = a(t, x)``, is done on the
force Jacobian ``A = da/dx`` (one force evaluation per product): the first-order
Jacobian ``[[0, I], [A, 0]]`` has the eigenvalues ``+-sqrt(mu)`` for the
eigenvalues ``mu`` of ``A``, and a symmetric ``A`` (conservative forces) is
the best case for the iteration.  Otherwise the first-order form ``u = [x,
v]`` is used.
"""

from dataclasses import dataclass, field, fields
import functools
import math
import types
import warnings

import numpy as np

from .. import backend as _backend, checks
from ..formatting import text_table
from ..kernels.evaluation import increment, stiffness_bound
from ..registry import method as _lookup, methods as _methods
from ..problem import ODEProblem, SecondOrderProblem
from .stability import (is_explicit_tableau, is_splitting, max_stable_step, oscillator_step_matrix,
                        stability_function)

ITERATIONS = 20          # Jacobian-vector products by default
SEED = 7                 # the start vector: the same estimate on every call
FOUND = 1e-2             # a Ritz pair whose residual is below FOUND * rho counts as an eigenvalue found
SNAP = 1e-6              # real or imaginary parts below this share of |lambda| (or the residual) are zero
BREAKDOWN = 1e-7         # the Krylov space is invariant below this * rho (difference noise is ~1e-8)
WARN_GROWTH = 1e3        # a fixed step is warned about when the fastest mode would grow this much
STARVING_STEPS = 100     # a run shorter than this is never said to have starved
STEADY = 2.0              # the steps of a run starving under PI control vary within this factor
STEADY_DOUBLING = 10.0    # ... under step doubling
STIFF_RATIO = 100.0       # a starving run's fastest mode is this many times faster than its solution changes
IMPLICIT = "backward_euler, trapezoid or linearized_euler"
NOT_FINITE = "the Jacobian-vector products are not finite (inf or nan from the function or jac, or overflow)"


class StiffnessWarning(UserWarning):
    """A fixed step beyond an explicit method's stability limit for the problem's spectrum at ``t0``."""


class _NoEstimate(Exception):
    """The estimate cannot be made (the function raised, or returned inf/nan or the wrong size)."""


# =====================================================================================
# The result
# =====================================================================================

@dataclass(frozen=True, eq=False)
class StiffnessEstimate:
    """What :func:`stiffness` found: the outer spectrum of ``df/dy`` and each method's stable step.

    Attributes
    ----------
    problem : str
        The problem's name.
    t : float
        Where the Jacobian was taken.
    spectral_radius : float
        ``rho``, the largest ``|lambda|`` of the Jacobian of the first-order
        system (for mechanics ``u = [x, v]``, where ``rho = sqrt(rho(da/dx))``
        when the force ignores ``v``).
    dominant : complex
        The eigenvalue estimate of modulus ``rho``, with ``Im >= 0`` (its
        conjugate is implied).
    kind : str
        ``"real"`` (a decaying mode, ``lambda < 0``), ``"oscillatory"``
        (purely imaginary: an undamped oscillation), ``"complex"`` (a damped
        oscillation), ``"growing"`` (``Re lambda > 0``: the problem itself
        is unstable there, which limits no step) or ``"zero"``.
    eigenvalues : tuple of complex
        The spectrum assumed for the limits: the dominant eigenvalue and every
        other Ritz value found (residual below 1% of ``rho``), one of each
        conjugate pair, with growing parts removed (``Re`` clipped to
        ``<= 0``, since a mode the problem itself grows is no stability limit)
        and real or imaginary parts within the estimate's residual set to zero.
    omega : float or None
        The frequency that limits splitting methods (mechanics only): the
        fastest oscillation ``sqrt(-mu)`` over the eigenvalues ``mu < 0`` of
        ``da/dx`` (``0`` when nothing oscillates); for forces that depend on
        ``v``, the largest ``|lambda|`` of the spectrum assumed.
    limits : mapping
        Method name -> the largest stable fixed step for ``eigenvalues``
        (:func:`~odekit.analysis.max_stable_step`): every explicit
        Runge--Kutta method, and for mechanics every splitting method that
        can run the problem (with ``omega``).  ``0.0`` means unstable at any
        step (explicit Euler on an undamped oscillation), ``inf`` no limit.
    residual : float
        The dominant Ritz pair's residual ``|J x - theta x|`` relative to
        ``|theta|``: for a normal Jacobian a bound on the relative error.
    converged : bool
        ``residual <= 0.01``.
    products : int
        Jacobian-vector products used (the Krylov dimension).
    evaluations : int
        Evaluations of ``fun`` (``accel`` for mechanics) spent; none are
        counted in any solution's statistics.
    source : str
        ``"jac"`` (the problem's Jacobian) or ``"differences"``.
    """

    problem: str
    t: float
    spectral_radius: float
    dominant: complex
    kind: str
    eigenvalues: tuple
    omega: float | None
    limits: types.MappingProxyType = field(repr=False)
    residual: float
    converged: bool
    products: int
    evaluations: int
    source: str

    def limit(self, method):
        """The largest stable fixed step of ``method`` (a name, alias or :class:`Method`)."""
        m = _lookup(method)
        try:
            return self.limits[m.name]
        except KeyError:
            kind = "implicit" if m.implicit else "splitting methods apply to mechanics only; this"
            raise ValueError(f"no stability limit for {m.name!r}: limits are given for explicit methods "
                             f"that can run this problem ({kind} is {m.family})") from None

    def as_dict(self):
        """Every field as a plain dict (``limits`` as a dict, eigenvalues as a list)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["limits"] = dict(self.limits)
        out["eigenvalues"] = list(self.eigenvalues)
        return out

    def __str__(self):
        lines = [f"stiffness of {self.problem} at t={self.t:g}: spectral radius {self.spectral_radius:.4g}, "
                 f"dominant eigenvalue {_complex(self.dominant)} ({self.kind})",
                 f"  from {self.products} Jacobian-vector products ({self.source}, {self.evaluations} "
                 f"evaluations); residual {self.residual:.1e}{'' if self.converged else ' (not converged)'}",
                 "  spectrum assumed: " + (", ".join(_complex(z) for z in self.eigenvalues) or "none")]
        if self.omega is not None:
            lines.append(f"  omega = {self.omega:.4g} (the frequency that limits splitting methods)")
        lines.append("  largest stable fixed step:")
        steps = [(name, "any" if h == math.inf else "none (unstable at every step)" if h == 0 else f"{h:.4g}")
                 for name, h in self.limits.items()]
        lines += text_table(steps, indent="    ").splitlines()
        return "\n".join(lines)


def _complex(z):
    z = complex(z)
    if z.imag == 0:
        return f"{z.real:.4g}"
    if z.real == 0:
        return f"±{z.imag:.4g}i"
    return f"{z.real:.4g} ± {abs(z.imag):.4g}i"


# =====================================================================================
# The public estimate
# =====================================================================================

def stiffness(problem, t=None, y=None, *, iterations=ITERATIONS, backend="python"):
    """Estimate the Jacobian's spectral radius and each explicit method's largest stable step.

    A short Arnoldi iteration on Jacobian-vector products ``J v ~ (f(y + e v)
    - f(y)) / e`` (increment ``e |v|_rms = sqrt(eps max(1e-5, |y|_rms))``, the
    rule of the finite-difference Jacobian of the implicit methods) or ``J v``
    with the problem's ``jac`` (a function or a constant matrix; anything
    with ``@``, so a sparse matrix too).  It never forms or decomposes the
    ``n x n`` Jacobian: about ``iterations`` evaluations of ``f`` (fewer when
    ``n`` is smaller), so it is cheap for large systems.  See the module
    notes for the method and :class:`StiffnessEstimate` for what is returned.

    Parameters
    ----------
    problem : ODEProblem or SecondOrderProblem
    t : float, optional
        Time of the Jacobian; default ``t0``.
    y : array_like, optional
        State there, shaped like ``y0`` (mechanics: ``(x, v)`` stacked, as a
        row of ``sol.y``); default the initial state.
    iterations : int
        Jacobian-vector products at most (default 20).
    backend : {"python", "auto", "numba"}
        How ``f`` is evaluated: ``"python"`` (no compilation), or compiled as
        :func:`odekit.solve` would.

    Returns
    -------
    StiffnessEstimate

    Raises
    ------
    ValueError
        For bad arguments, or when ``f`` (or ``jac``) raises or returns
        non-finite values near ``(t, y)``.

    Examples
    --------
    >>> est = stiffness(odekit.problems.bead_on_wire(k=1000))     # doctest: +SKIP
    >>> est.spectral_radius, est.limit("euler")                    # doctest: +SKIP
    (1000.0..., 0.002...)
    """
    if not isinstance(problem, (ODEProblem, SecondOrderProblem)):
        raise TypeError(f"problem must be an ODEProblem or SecondOrderProblem, got {type(problem).__name__}")
    iterations = checks.count("iterations", iterations)
    if backend not in _backend.BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(_backend.BACKENDS)}, got {backend!r}")
    t = problem.t_span[0] if t is None else checks.real("t", t, "finite and real")
    u = _point(problem, y)
    force = _force_route(problem)
    rhs = _adapter(problem, force, backend)
    try:
        raw = _estimate(problem, rhs, force, t, u, iterations)
    except _NoEstimate as exc:
        raise ValueError(f"cannot estimate the Jacobian of {problem.name!r} at t={t:g}: {exc}") from None
    return _result(problem, t, raw)


def _point(problem, y):
    u0 = problem.initial_state()
    if y is None:
        return u0
    u = checks.fitting("y", y, u0.dtype).astype(u0.dtype)
    expected = problem.unflatten(u0[None])[0].shape
    if u.size != u0.size:
        raise ValueError(f"y must have shape {expected} (or {u0.size} values), got shape {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError("y must be finite")
    return u.ravel()


def _force_route(problem, force_only=False):
    """Mechanics whose force ignores ``v``: estimate ``da/dx`` (half the size, often symmetric).

    With declared damping, only for a splitting kernel (``force_only``), whose
    stability is set by the oscillations of ``da/dx`` (the damping's flow is
    exact and only contracts); other methods see the damping's eigenvalues,
    near ``-c`` when it is strong, so they take the first-order route, as
    they do with a magnetic field (``v x b`` is in their ``f``; Boris's
    rotation is exact for every ``h |b|``).
    """
    return (problem.second_order and not problem.velocity_dependent
            and (force_only or (problem.damping_value() is None and problem.magnetic is None)))


def _with_damping(problem, force_only, v, a):
    """``a - c v``: the velocities' derivative where ``a`` is a splitting kernel's force alone."""
    c = problem.damping_value() if force_only else None
    return a if c is None else a - np.ravel(c) * v


def _adapter(problem, force, backend):
    """The kernel-convention function ``rhs(t, W, src, dst, args)``: the force for the force route."""
    key = _backend._adapter_key(problem, force, needs_jac=False)
    if backend != "python":
        try:
            return _backend.compiled_adapters(problem, key, problem.initial_state().dtype)[0]
        except _backend.NotCompiled as failure:
            if backend == "numba":
                raise failure.error()
            warnings.warn(failure.warning(), _backend.BackendFallbackWarning, stacklevel=_backend.caller_stacklevel())
    return _backend._adapters(*key, "python", None)[0]


# =====================================================================================
# The estimate: Arnoldi on Jacobian-vector products
# =====================================================================================

@dataclass
class _Raw:
    ritz: np.ndarray          # Ritz values of J (or of da/dx on the force route)
    residual: np.ndarray      # their residuals |J x - theta x|
    products: int
    evaluations: int
    source: str
    force: bool


class _Calls:
    """Checked, uncounted calls of a kernel-convention function; returns ``part`` of the result.

    A force writes the second half of its row: ``part = slice(n // 2, None)``.
    """

    def __init__(self, rhs, args, part=slice(None)):
        self.rhs, self.args, self.part = rhs, args, part
        self.count = 0

    def __call__(self, t, u):
        W = np.zeros((2, u.size), dtype=u.dtype)
        W[0] = u
        self.into(t, W, 0, 1)
        return W[1, self.part]       # inf or nan shows in the Hessenberg matrix, checked once

    def into(self, t, W, src, dst, args=None):
        """The call in the kernels' own convention: the state in row ``src`` of ``W``, the result into row ``dst``
        (``args``, which a kernel passes, are this call's own)."""
        self.count += 1
        try:
            ok = self.rhs(t, W, src, dst, self.args)
        except Exception as exc:
            raise _NoEstimate(f"the function raised {type(exc).__name__}: {exc}") from None
        if not ok:
            raise _NoEstimate("the function returned the wrong number of values")
        return True


def _finite(value, what="the function"):
    if not np.all(np.isfinite(value)):
        raise _NoEstimate(f"{what} returned inf or nan")
    return value


def _rms(v):
    # one dot product where the squares neither overflow nor underflow (a tenth of the time), else scaled by
    # the largest
    quick = math.sqrt(abs(np.vdot(v, v)) / v.size) if v.size else 0.0
    if 1e-140 < quick < 1e140:
        return quick
    big = float(np.max(np.abs(v))) if v.size else 0.0
    if big == 0.0 or not math.isfinite(big):
        return big
    return big * float(np.sqrt(np.mean(np.abs(v / big) ** 2)))


def _increment(y):
    """``e`` with ``|e w|_rms = sqrt(eps max(1e-5, |y|_rms))`` for a unit vector ``w`` of ``y``'s size."""
    e = float(increment(_rms(y), False)) * math.sqrt(y.size)     # (stiffness_bound's own, for its rows)
    if not (math.isfinite(e) and e > 0):
        raise _NoEstimate("no usable difference increment")
    return e


def _estimate(problem, rhs, force_only, t, u, iterations, f0=None):
    """Ritz values of the Jacobian at ``(t, u)``.

    ``rhs`` follows the kernel convention: the force ``a(t, [x, v])`` when
    ``force_only`` (splitting kernels), else the whole first-order derivative.
    ``f0``, optional, is the first-order derivative at ``(t, u)`` already
    computed (an Integrator has it): it saves an evaluation.  Raises
    :class:`_NoEstimate` when an evaluation fails or the arithmetic overflows.
    """
    with np.errstate(all="ignore"):
        raw = _estimate_unchecked(problem, rhs, force_only, t, u, iterations, f0)
    if not (np.all(np.isfinite(raw.ritz)) and np.all(np.isfinite(raw.residual))):
        raise _NoEstimate(NOT_FINITE)
    return raw


def _estimate_unchecked(problem, rhs, force_only, t, u, iterations, f0):
    n = u.size
    dtype = u.dtype
    force = _force_route(problem, force_only)
    if problem.second_order:
        half = n // 2
        if force:
            call = _Calls(rhs, problem.args, slice(half, None))
            x = u[:half]
            # (f0 holds a - c v with damping, a + v x b with a field; the force alone is called here)
            alone = problem.damping_value() is None and problem.magnetic is None
            a0 = _finite(f0[half:].copy() if f0 is not None and alone else call(t, u))
            e = _increment(x)
            work = u.copy()

            def matvec(w):
                work[:half] = x + e * w
                return (call(t, work) - a0) / e

            ritz, res, k = _arnoldi(matvec, half, dtype, iterations)
            return _Raw(ritz, res, k, call.count, "differences", True)
        force_call = _Calls(rhs, problem.args, slice(half, None))

        def first_order(t, y):
            return np.concatenate([y[half:], _with_damping(problem, force_only, y[half:], force_call(t, y))])

        call = first_order
        counter = force_call
    else:
        if problem.jac is not None:
            return _with_jacobian(problem, t, u, iterations)
        call = counter = _Calls(rhs, problem.args)
    y0 = u
    base = _finite(f0.copy() if f0 is not None else call(t, y0))
    e = _increment(y0)

    def matvec(w):
        return (call(t, y0 + e * w) - base) / e

    ritz, res, k = _arnoldi(matvec, n, dtype, iterations)
    return _Raw(ritz, res, k, counter.count, "differences", False)


def _with_jacobian(problem, t, u, iterations):
    n = u.size
    try:
        J = problem.jac(t, u.reshape(problem.shape), *problem.args) if callable(problem.jac) else problem.jac
    except Exception as exc:
        raise _NoEstimate(f"jac raised {type(exc).__name__}: {exc}") from None
    if not hasattr(J, "shape") or not hasattr(J, "__matmul__"):
        J = np.asarray(J)
    if J.shape != (n, n):
        raise _NoEstimate(f"jac returned shape {J.shape}; expected ({n}, {n})")

    def matvec(w):
        return np.asarray(J @ w).ravel()

    ritz, res, k = _arnoldi(matvec, n, np.result_type(u.dtype, getattr(J, "dtype", float)), iterations)
    return _Raw(ritz, res, k, 0, "jac", False)


@functools.lru_cache(maxsize=8)
def _start(n):
    """A fixed pseudo-random unit vector (seeded: the same estimate every time; cached: seeding is slow)."""
    v = np.random.default_rng(SEED).standard_normal(n)
    v /= np.linalg.norm(v)
    v.flags.writeable = False
    return v


def _arnoldi(matvec, n, dtype, iterations):
    """Ritz values and residuals after ``min(iterations, n)`` steps of Arnoldi (Gram--Schmidt twice)."""
    m = min(iterations, n)
    dtype = np.result_type(dtype, float)
    real = dtype.kind == "f"
    V = np.empty((m + 1, n), dtype=dtype)
    H = np.zeros((m + 1, m), dtype=dtype)
    V[0] = _start(n)
    k = m
    scale = 0.0
    for j in range(m):
        w = np.asarray(matvec(V[j]), dtype=dtype)
        basis = V[:j + 1]
        conj = basis if real else basis.conj()
        c = conj @ w                             # classical Gram-Schmidt, twice: orthogonal to round-off
        w = w - c @ basis
        c2 = conj @ w
        w -= c2 @ basis
        H[:j + 1, j] = c + c2
        beta = float(np.sqrt(np.abs(np.vdot(w, w))))
        H[j + 1, j] = beta
        if not math.isfinite(beta):
            raise _NoEstimate(NOT_FINITE)
        scale = max(scale, float(np.abs(H[j, j])), beta)
        if beta <= BREAKDOWN * scale:            # an invariant subspace: its Ritz values are eigenvalues
            k = j + 1
            break
        V[j + 1] = w / beta
    if not np.all(np.isfinite(H[:k + 1, :k])):
        raise _NoEstimate(NOT_FINITE)
    theta, S = np.linalg.eig(H[:k, :k])
    residual = abs(H[k, k - 1]) * np.abs(S[-1, :])
    return theta.astype(complex), residual, k


# =====================================================================================
# From Ritz values to the spectrum assumed, and to step limits
# =====================================================================================

def _snap(theta, residual, rho):
    if abs(theta) <= SNAP * rho:
        return 0j
    tol = max(residual, SNAP * abs(theta))
    re = 0.0 if abs(theta.real) <= tol else float(theta.real)
    im = 0.0 if abs(theta.imag) <= tol else abs(float(theta.imag))
    return complex(re, im)


def _canonical(z):
    """Clip growth (``Re <= 0``), take ``Im >= 0``."""
    return complex(min(z.real, 0.0), abs(z.imag))


def _kind(z):
    if z == 0:
        return "zero"
    if z.real > 0:
        return "growing"
    if z.imag == 0:
        return "real"
    return "oscillatory" if z.real == 0 else "complex"


@dataclass
class _Model:
    rho: float
    dominant: complex
    kind: str
    eigenvalues: tuple
    omega: float | None
    residual: float


def _model(problem, raw):
    ritz = raw.ritz
    size = np.abs(ritz)
    top = float(size.max()) if size.size else 0.0
    i = int(np.argmax(size)) if size.size else 0
    residual = float(raw.residual[i] / top) if top > 0 else 0.0
    found = [_snap(complex(z), float(r), top) for j, (z, r) in enumerate(zip(ritz, raw.residual))
             if j == i or r <= FOUND * top]
    dominant = _snap(complex(ritz[i]), float(raw.residual[i]), top) if top > 0 else 0j
    if raw.force:                                # mu of da/dx -> lambda = +-sqrt(mu)
        lams = []
        for mu in found:
            s = complex(np.sqrt(mu))
            lams += [s, -s]
        omega_sq = max((abs(mu) for mu in found if mu.real < 0), default=0.0)
        omega = math.sqrt(omega_sq)
        rho = math.sqrt(top)
        s = complex(np.sqrt(dominant))
        dominant = complex(s.real, abs(s.imag))
    else:
        lams = found
        rho = top
        omega = None
    eigenvalues = []
    for z in lams:
        c = _canonical(z)
        if c != 0 and c not in eigenvalues:
            eigenvalues.append(c)
    if omega is None and problem.second_order:
        omega = max((abs(z) for z in eigenvalues), default=0.0)
    eigenvalues.sort(key=lambda z: -abs(z))
    return _Model(rho, dominant, _kind(dominant), tuple(eigenvalues), omega, residual)


def _applicable(problem, m):
    """A method with a stability theory here that can run ``problem``."""
    return _has_theory(m, problem) and m.applies_to(problem)


def _has_theory(m, problem):
    """Whether this module's linear stability theory covers ``m`` on ``problem``.

    Not a splitting method whose kicks are implicit in v (a velocity-dependent
    force, see :mod:`odekit.kernels.velocity`): its theory on ``x'' =
    -omega^2 x`` says nothing of a force of v, whose implicit part of each
    kick is stable where an explicit kick is not (on ``x'' = -x - 10 v`` the
    theory gave PEFRL h <= 0.3; it runs stably at h = 1).
    """
    if is_splitting(m):
        return not (problem.second_order and problem.velocity_dependent and m.velocity_implicit)
    return is_explicit_tableau(m)


def _limit(m, model):
    if is_splitting(m):
        return max_stable_step(m, model.omega) if model.omega else math.inf
    return max_stable_step(m, list(model.eigenvalues)) if model.eigenvalues else math.inf


_R = {}


def _stability_function(m):
    """:func:`stability_function`, remembered by identity (hashing a Method hashes its tableau)."""
    found = _R.get(id(m))
    if found is None or found[0] is not m:
        found = _R[id(m)] = (m, stability_function(m))
    return found[1]


def _growth(m, h, model):
    """``(g, lambda)``: the largest amplification per step of a mode of the assumed spectrum, and its
    eigenvalue (``g = 1`` when none grows)."""
    if is_splitting(m):
        if not model.omega:
            return 1.0, 0j
        g = float(np.max(np.abs(np.linalg.eigvals(oscillator_step_matrix(m, h * model.omega)))))
        return max(1.0, g), complex(0.0, model.omega)
    if not model.eigenvalues:
        return 1.0, 0j
    lams = np.array(model.eigenvalues)
    g = np.abs(_stability_function(m)(h * lams))
    i = int(np.argmax(g))
    return max(1.0, float(g[i])), complex(lams[i])


def _result(problem, t, raw):
    model = _model(problem, raw)
    limits = {m.name: _limit(m, model) for m in _methods() if _applicable(problem, m)}
    return StiffnessEstimate(
        problem=problem.name, t=float(t), spectral_radius=model.rho, dominant=model.dominant, kind=model.kind,
        eigenvalues=model.eigenvalues, omega=model.omega, limits=types.MappingProxyType(limits),
        residual=model.residual, converged=model.residual <= FOUND, products=raw.products,
        evaluations=raw.evaluations, source=raw.source)


# =====================================================================================
# Hooks of the Integrator: advice before a fixed-step run and after an adaptive one
# =====================================================================================

def _quiet_model(problem, rhs, force_only, t, u, f0):
    try:
        return _model(problem, _estimate(problem, rhs, force_only, t, u, ITERATIONS, f0))
    except (_NoEstimate, np.linalg.LinAlgError):
        return None


# The verdict on a fixed step, by what it depends on: a fixed-step solve repeated (an optimizer's,
# a game's) estimates the spectrum once -- that was three quarters of a small rk4 solve.
_WARNINGS = {}
WARNINGS_KEPT = 64


def _start_key(problem, rhs, force_only, t, u):
    """What the spectrum's estimate at ``(t, u)`` depends on, hashable; None when that cannot be said cheaply.

    ``rhs`` is the prepared function (kept across solves of one problem, see
    :mod:`odekit.backend`); ``args`` must hash, and a constant ``jac`` (an
    array, which may change in place) is not cached.  A function that reads
    state outside its arguments may change its spectrum unseen: the warning
    is advice, and the check is then as old as the first solve.
    """
    if problem.jac is not None and not callable(problem.jac):
        return None
    key = (rhs, problem.jac, problem.args, force_only, _force_route(problem, force_only), t, u.dtype.str,
           u.tobytes())
    try:
        hash(key)
    except TypeError:
        return None
    return key


def fixed_step_warning(problem, method, h, rhs, force_only, t0, u, f0=None):
    """The :class:`StiffnessWarning` text for a fixed step ``h`` of an explicit method, or None.

    Warns when, for the Jacobian's spectrum at ``t0``, ``h`` lies outside the
    method's stability region *and* the fastest mode would grow more than a
    thousandfold over the steps of the span: explicit Euler on an undamped
    oscillation is unstable at every step, but at a small step its growth is
    an accuracy matter, not stiffness.  Silent when no estimate can be made,
    and for a method this module has no stability theory for (a family of
    the user's).  The evaluations are the caller's to not count.  The
    verdict is kept by problem start, method, step and end (see
    :func:`_start_key`): a repeated solve warns again without estimating again.
    """
    key = _start_key(problem, rhs, force_only, t0, u)
    if key is None:
        return _fixed_step_warning(problem, method, h, rhs, force_only, t0, u, f0)
    key += (id(method), h, problem.t_span[1])
    kept = _WARNINGS.get(key)
    if kept is None:
        if len(_WARNINGS) >= WARNINGS_KEPT:
            del _WARNINGS[next(iter(_WARNINGS))]
        # the method is kept with its verdict, so that its id is not another's while the entry lives
        kept = _WARNINGS[key] = (method, _fixed_step_warning(problem, method, h, rhs, force_only, t0, u, f0))
    return kept[1]


def _fixed_step_warning(problem, method, h, rhs, force_only, t0, u, f0):
    if not _has_theory(method, problem):
        return None
    model = _quiet_model(problem, rhs, force_only, t0, u, f0)
    if model is None:
        return None
    growth, lam = _growth(method, h, model)
    if growth <= 1.0:
        return None
    steps = abs(problem.t_span[1] - t0) / h
    if math.isfinite(steps):            # (a span of 1e300 in steps of 1e-9 is not)
        steps = max(1.0, math.ceil(steps * (1 - 1e-9)))
    if steps * math.log(growth) <= math.log(WARN_GROWTH):
        return None
    limit = _limit(method, model)
    name = method.name
    if is_splitting(method):
        what = f"oscillations up to omega ≈ {model.omega:.4g}"
    else:
        what = f"spectral radius ≈ {model.rho:.4g}"
        what += (f", dominant eigenvalue ≈ {_complex(lam)}" if abs(lam) >= model.rho * (1 - 1e-9)
                 else f"; the mode that grows has eigenvalue ≈ {_complex(lam)}")
    per_step = f"×{growth:.3g}" if growth >= 1.1 else f"by a factor 1 + {growth - 1:.2g}"
    total = steps * math.log10(growth)
    grows = (f"the fastest mode grows {per_step} per step (×10^{total:.0f} over the {steps:.0f} "
             "steps of the span)")
    if limit > 0:
        head = (f"h={h:.4g} is beyond the stability limit of {name} for this problem, h ≤ {limit:.4g} "
                f"(the Jacobian at t0={t0:g} has {what}): {grows}")
        fix = f"use h ≤ {limit:.4g}, or"
    else:
        head = (f"{name} is unstable at every step size on this problem (the Jacobian at t0={t0:g} has {what}); "
                f"at h={h:.4g} {grows}")
        fix = "use"
    suggest = f"an implicit method such as {IMPLICIT}, which is stable at this step"
    if problem.second_order and is_explicit_tableau(method) and limit == 0:
        suggest += (", or boris, whose rotation is stable at every step" if problem.magnetic is not None
                    else ", or a symplectic one such as velocity_verlet")
    return f"{head}. {fix[0].upper()}{fix[1:]} {suggest}."


def starving_note(problem, method, rhs, force_only, t, u, stats, steps, states, doubling, spread=None):
    """A sentence for ``Solution.message`` when an explicit adaptive run starved on a stiff problem, or None.

    Decided after the run from what the driver kept -- the last accepted
    step sizes ``steps`` and the states ``states`` they reached (or, when
    only ``t_eval`` was recorded, the mean step, ``None`` and the ``spread``
    of the recent steps, largest over smallest, that the loop keeps: see
    :func:`odekit.kernels.driver.keep_spread`), and the statistics -- and
    one estimate of the spectrum at the final state ``(t, u)``.  The run
    starved when

    * it took at least ``STARVING_STEPS`` (100) steps, its last 100 were nearly constant
      (10th to 90th percentile within a factor 2 under PI control, which
      settles on the stability limit; 10 under step doubling, which chatters
      around it with many rejections; without recorded steps, the
      ``spread`` of the last 64 to 128 within those factors, leaving out
      those after a rejection), and the solution changed by less
      than 15% per step (30% per doubled step) -- cheap filters, before any
      evaluation: a step of at most 4 times a stability limit ``c / rho``
      (``c <= 4`` for the explicit methods here) changes the state by about
      ``16 |f| / rho``, at most ``16/S`` of it with ``S`` below;
    * the problem is stiff there: its fastest mode is at least 100 times
      faster than the solution changes, ``S = rho |u| / |f(u)| >= 100``
      (``STIFF_RATIO``).  Without this, a non-stiff run at a loose
      tolerance, whose accuracy-limited step happens to sit at the
      stability limit, would be called stiff.  A small system is first
      cleared by a bound of ``rho`` (:func:`_derivative_and_ratio`),
      before the estimate;
    * the median step (for step doubling, of the half steps that propagate
      the solution) lies between a third and 4 times the method's
      stability limit for the spectrum there (explicit methods chatter
      around it: a few too large steps grow the stiff mode until a step is
      rejected).

    The evaluations (``n`` for the bound, about 20 for the estimate) are not counted in the run's
    statistics.
    """
    if stats.naccepted < STARVING_STEPS or not (is_explicit_tableau(method) or is_splitting(method)):
        return None
    recorded = states is not None
    last = np.abs(steps[-101:-1] if recorded else steps) / (2.0 if doubling else 1.0)
    if not recorded and not steady(spread, doubling):
        return None
    if recorded:
        if last.size < 20:
            return None
        ordered = np.sort(last)
        lo, hi = ordered[last.size // 10], ordered[(9 * last.size) // 10]
        if not (lo > 0 and steady(hi / lo, doubling)):
            return None
        rows = np.asarray(states)[-102:-1]
        change = np.linalg.norm(np.diff(rows, axis=0), axis=1) / np.maximum(np.linalg.norm(rows[1:], axis=1),
                                                                             np.finfo(float).tiny)
        if not np.median(change) <= (0.3 if doubling else 0.15):
            return None
    try:
        f, ratio = _derivative_and_ratio(problem, rhs, force_only, t, u)
    except _NoEstimate:
        return None
    if bound_clears(ratio):
        return None
    speed = _rms(f)
    model = _quiet_model(problem, rhs, force_only, t, u, f)
    if model is None or model.rho == 0:
        return None
    ratio = model.rho * _rms(u) / speed if speed > 0 else math.inf
    if not ratio >= STIFF_RATIO:
        return None
    limit = _limit(method, model)
    h = float(np.median(last))
    if not (0 < limit < math.inf and limit / 3 <= h <= 4 * limit):
        return None
    half = " (the half steps of step doubling)" if doubling else ""
    seen = f"median of the last {last.size}: {h:.3g}" if recorded else f"mean step {h:.3g}"
    return (f"The problem looks stiff: the steps{half} stayed near {method.name}'s stability limit h ≈ {limit:.3g} "
            f"({seen}; {stats.nrejected} of {stats.nsteps} attempts rejected), "
            f"set by a fast mode (spectral radius ≈ {model.rho:.3g} at t={t:.6g}) about {_times(ratio)} faster "
            f"than the solution changes. An implicit method such as {IMPLICIT} would take far larger steps.")


def steady(spread, doubling):
    """Whether steps whose sizes spread so (largest over smallest; None: not known) may be a starving run's."""
    return spread is None or spread <= (STEADY_DOUBLING if doubling else STEADY)


def _derivative_and_ratio(problem, rhs, force_only, t, u):
    """``(f, ratio)``: ``u'(t, u)`` and an upper bound of the stiffness ratio ``S`` there, for :func:`starving_note`.

    The bound (:func:`odekit.kernels.evaluation.stiffness_bound`) takes the
    Frobenius norm of the Jacobian, by ``n`` differences with the estimate's
    own increment, for the spectral radius: every eigenvalue is at most that
    norm, whichever of them the estimate reports.  A non-stiff problem at a
    tight tolerance (the Lorenz system) takes steps as steady as a starving
    run's; this clears it (:func:`bound_clears`) for ``n + 1`` evaluations,
    instead of an estimate many times its price (benchmarks/README.md,
    *Explicit pairs*).  The ratio is inf where it would cost more
    evaluations than the estimate, or where ``rhs`` is a force alone (a
    splitting kernel's).
    """
    n = u.size
    if not bound_applies(n, problem.second_order and force_only):
        return _first_order(problem, rhs, force_only, t, u), math.inf
    W = np.empty((2, n), dtype=u.dtype)
    W[0] = u
    ratio = stiffness_bound(_Calls(rhs, problem.args).into, problem.args, t, W, 0, 1, -1, -1)
    if ratio != ratio:                       # (an evaluation that did not fit raised in into)
        raise _NoEstimate("the function returned inf or nan")
    return _finite(W[1]), ratio


def bound_applies(n, force_only):
    """Whether a state of ``n`` numbers gets :func:`_derivative_and_ratio`'s bound: fewer evaluations than the
    estimate's, and an ``rhs`` that is not a force alone."""
    return n <= ITERATIONS and not force_only


def bound_clears(ratio):
    """Whether a bound of the stiffness ratio clears a run of the note: below half of ``STIFF_RATIO``, for
    the differences' error."""
    return ratio < STIFF_RATIO / 2


def _times(ratio):
    return "infinitely" if ratio == math.inf else f"{ratio:.2g} times"


def _first_order(problem, rhs, force_only, t, u):
    """``u' = f(t, u)`` (for mechanics ``[v, a]``), one uncounted evaluation."""
    n = u.size
    with np.errstate(all="ignore"):
        if problem.second_order and force_only:
            a = _Calls(rhs, problem.args, slice(n // 2, None))(t, u)
            f = np.concatenate([u[n // 2:], _with_damping(problem, force_only, u[n // 2:], a)])
        else:
            f = _Calls(rhs, problem.args)(t, u)
    return _finite(f)
