"""Problems: the system side, a black box to the solver.

Following Witkin & Baraff (*Physically Based Modeling*, SIGGRAPH course
notes, 1997), the solver needs only the size of the state, the state and
time, and the derivative.  :class:`ODEProblem` holds ``y' = f(t, y)``;
:class:`SecondOrderProblem` holds mechanics, ``x'' = a(t, x, v)``, which
splitting methods use directly and every other method sees through the
reduction ``u = [x, v]``, ``u' = [v, a + v x b - c v]`` (``c`` its linear
damping, ``b`` its magnetic field, if any).  :class:`System` is the object
protocol for models that live in objects.
"""

from collections.abc import Mapping
import copy
import itertools
import math
from typing import Protocol, runtime_checkable

import numpy as np
from scipy import sparse

from . import checks
from .events import as_events
from .nbody import as_nbody


def _args(args):
    if isinstance(args, tuple):
        return args
    if isinstance(args, list):
        return tuple(args)
    raise TypeError(f"args must be a tuple of extra arguments, got {type(args).__name__}; "
                    f"for a single argument write args=({args!r},)")


def _callable(name, fun, allow_none=False):
    if fun is None and allow_none:
        return None
    if not callable(fun):
        raise TypeError(f"{name} must be callable, got {type(fun).__name__}")
    return fun


def _matrix(name, jac, n, dtype):
    """A constant Jacobian as a checked dense or sparse matrix; a callable as it is."""
    if jac is None or callable(jac):
        return jac
    if sparse.issparse(jac):
        if jac.dtype.kind == "c" and dtype.kind != "c":
            raise ValueError(f"{name} is a complex scipy.sparse matrix, but the state is real; accepted: real "
                             "entries (or a complex initial state)")
        jac = sparse.csr_matrix(jac, dtype=dtype)
    else:
        jac = np.array(checks.fitting(name, jac, dtype, f"a function {name}(t, y, *args) or a ({n}, {n}) matrix of"),
                       dtype=dtype)
    if jac.shape != (n, n):
        raise ValueError(f"{name} has shape {jac.shape}; expected ({n}, {n}) for a state of {n} values")
    _finite_matrix(name, jac)
    return jac


def _finite_matrix(name, matrix):
    """Refuse a constant Jacobian with inf or nan, naming the first such entry (as ``checks.finite_entries``)."""
    if not sparse.issparse(matrix):
        checks.finite_entries(name, matrix)
        return
    coo = matrix.tocoo()
    bad = np.flatnonzero(~np.isfinite(coo.data))
    if bad.size:
        k = bad[0]
        raise ValueError(f"{name} must be finite, but {name}[{coo.row[k]}, {coo.col[k]}] = {coo.data[k].item()!r}")


def _pattern(pattern, n):
    """A sparsity pattern as a boolean CSC matrix, checked."""
    accepted = f"a ({n}, {n}) array of bools or numbers (nonzero: may be nonzero) or a scipy.sparse matrix"
    if not sparse.issparse(pattern):
        pattern = checks.array("jac_sparsity", pattern, "b" + checks.REAL, accepted) != 0
    if pattern.shape != (n, n):
        raise ValueError(f"jac_sparsity has shape {pattern.shape}; expected ({n}, {n}) for a state of {n} values")
    matrix = sparse.csc_matrix(pattern)
    matrix.eliminate_zeros()
    return matrix.astype(bool)


def _inplace(inplace, name, state):
    if inplace and state.ndim == 0:
        raise ValueError(f"inplace=True needs an array state; a scalar {name} cannot be written in place "
                         f"(give {name} as [{state.item()!r}], or inplace=False)")
    return inplace


def _invariants(invariants):
    if invariants is None:
        return {}
    if not isinstance(invariants, Mapping):
        raise TypeError("invariants must be a mapping name -> function, "
                        f"got {type(invariants).__name__}")
    for key, fun in invariants.items():
        _callable(f"invariants[{key!r}]", fun)
    return dict(invariants)


def _damping(damping, shape, args):
    """Linear damping: None (also for zero), a float, a float array shaped like the positions, or a
    function of the args that returns one (checked at the problem's args)."""
    if callable(damping):
        _damping_value(damping(*args), shape, "damping(*args)")
        return damping
    return _damping_value(damping, shape, "damping")


def _damping_value(damping, shape, name):
    """``c`` checked: None (also for zero), a float, or a float array shaped like the positions."""
    if damping is None:
        return None
    accepted = f"a finite number >= 0, or an array of them shaped like x0 {shape}"
    if name == "damping":
        accepted += ", or a function of the args returning one"
    if checks.is_real(damping):
        c = checks.real(name, damping, accepted, lambda x: x >= 0 and math.isfinite(x))
        return c if c != 0 else None
    c = checks.array(name, damping, checks.REAL, accepted).astype(float)
    if c.shape != shape:
        raise ValueError(f"{name} has shape {c.shape}; accepted: {accepted}")
    bad = ~(np.isfinite(c) & (c >= 0))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}{list(where)} = {c[where].item()!r}; accepted: {accepted}")
    return c if c.any() else None


def _magnetic(magnetic, x0, t0, args):
    """The magnetic field ``magnetic(t, x, *args) -> b``: None, or a function checked at ``(t0, x0)``."""
    if magnetic is None:
        return None
    accepted = "b = (q/m) B shaped like x0"
    if not callable(magnetic):
        raise TypeError(f"magnetic must be callable, a function magnetic(t, x, *args) returning {accepted}; "
                        f"got {type(magnetic).__name__}")
    if x0.ndim == 0 or x0.shape[-1] != 3:
        raise ValueError(f"magnetic needs 3-D positions, x0 of shape (3,) or (N, 3); got x0 of shape {x0.shape}")
    kinds = checks.COMPLEX if x0.dtype.kind == "c" else checks.REAL
    b = checks.array("magnetic(t0, x0, *args)", magnetic(t0, x0, *args), kinds, accepted)
    if b.shape != x0.shape:
        raise ValueError(f"magnetic(t0, x0, *args) returned shape {b.shape}; accepted: {accepted} {x0.shape}")
    checks.finite_entries("magnetic(t0, x0, *args)", b)
    return magnetic


_EDITS = itertools.count(1)


class _Edited:
    """A problem whose attributes, each time one is assigned, get a new number, ``_edit``.

    A start kept for repeated solves (:meth:`odekit.Integrator._started`,
    :mod:`odekit.rerun`) read the problem's attributes: it is the problem's
    as long as this number is the one it was made with.  (Comparing the
    twenty attributes themselves took 0.5 us of a 6 us repeated solve.)
    Caches written into ``__dict__`` do not count.
    """

    __slots__ = ()

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        object.__setattr__(self, "_edit", next(_EDITS))


def _with_span(problem, t_span):
    twin = copy.copy(problem)
    twin.t_span = checks.time_span("t_span", t_span)
    return twin


class ODEProblem(_Edited):
    """A first-order initial value problem ``y' = fun(t, y, *args)``.

    Parameters
    ----------
    fun : callable
        ``fun(t, y, *args)`` returns ``dy/dt`` shaped like ``y``.  With
        ``inplace=True`` it is ``fun(t, y, dydt, *args)`` and writes into
        ``dydt`` (no allocation: the fastest form when compiled).
    t_span : (float, float)
        ``(t0, t_end)``; ``t_end < t0`` integrates backward, ``t_end = t0``
        is refused (see :func:`odekit.solve`).
    y0 : array_like
        Initial state, any shape (a scalar too); real or complex, not empty.
        The solution keeps this shape: ``sol.y[i]`` is shaped like ``y0``.
    args : tuple
        Extra arguments for ``fun``, ``jac`` and friends.
    jac : callable, array_like or scipy.sparse matrix, optional
        ``df/dy`` as a ``(y0.size, y0.size)`` matrix, or ``jac(t, y, *args)``
        returning one.  A sparse matrix (from :mod:`scipy.sparse`) selects a
        sparse linear solver (see ``linear_solver`` of :func:`odekit.solve`).
        Implicit methods use finite differences without it.
    jac_sparsity : array_like or scipy.sparse matrix, optional
        Without ``jac``: which entries of ``df/dy`` may be nonzero.  The
        finite differences then perturb many columns at once (those that
        share no row, Curtis, Powell & Reid 1974) and the linear algebra is
        sparse.
    invariants : mapping, optional
        ``name -> g(t, y)``: quantities that should stay constant (energy,
        momentum); see :meth:`Solution.invariants`.
    exact : callable, optional
        ``exact(t)`` returns the true ``y(t)``, for error measurements.
    name : str, optional
        A label for tables and plots.
    inplace : bool
        Whether ``fun`` writes its result into an output argument.
    autonomous : bool
        Declare that ``fun`` does not depend on ``t``.  Rosenbrock methods
        that use the time derivative ``df/dt`` (``rodas4``) then skip it, two
        evaluations of ``fun`` per step.  Declared wrongly, a time-dependent
        problem costs them their order.
    events : Event or list of them, optional
        Events that belong to the problem (a ball's floor): every run of it
        watches for them, before those given to the run (see
        :class:`odekit.Event`).
    """

    second_order = False
    # a span of zero length and an empty state leave nothing to integrate: refused (solve and
    # Integrator say why), but accepted by solve_ivp's problems, as SciPy accepts them
    _trivial = False

    def __init__(self, fun, t_span, y0, args=(), jac=None, invariants=None, exact=None,
                 name=None, inplace=False, jac_sparsity=None, autonomous=False, events=None):
        self.fun = _callable("fun", fun)
        self.t_span = checks.time_span("t_span", t_span, zero=self._trivial)
        self.y0 = checks.state("y0", y0, empty=self._trivial)
        self.args = _args(args)
        n = self.y0.size
        self.jac = _matrix("jac", jac, n, self.y0.dtype)
        if jac is not None and jac_sparsity is not None:
            raise ValueError("give jac or jac_sparsity, not both: jac_sparsity is for finite differences")
        self.jac_sparsity = None if jac_sparsity is None else _pattern(jac_sparsity, n)
        self.invariants = _invariants(invariants)
        self.exact = _callable("exact", exact, allow_none=True)
        self.name = name or getattr(fun, "__name__", "ode")
        self.inplace = _inplace(checks.flag("inplace", inplace), "y0", self.y0)
        self.autonomous = checks.flag("autonomous", autonomous)
        self.events = as_events(events)

    @property
    def shape(self):
        """Shape of the state ``y``."""
        return self.y0.shape

    @property
    def size(self):
        """Number of scalar unknowns."""
        return self.y0.size

    def initial_state(self):
        """The flat state vector the kernels integrate."""
        return self.y0.ravel().copy()

    def state_arrays(self):
        """The arrays the flat state is read from, in the order of its entries: ``(y0,)``."""
        return (self.y0,)

    def unflatten(self, Y):
        """Rows of flat states -> trajectory shaped ``(m, *shape)``."""
        return Y.reshape((Y.shape[0],) + self.shape)

    def evaluate_invariant(self, g, t, y):
        return g(t, y)

    def call(self, fn, t, u):
        """``fn`` -- ``fun``, ``jac`` or an event's ``g`` -- at ``t`` and the flat state ``u``, with the args."""
        return fn(t, u.reshape(self.shape), *self.args)

    def with_span(self, t_span):
        """The same problem over another span (its functions, and their compiled code, shared)."""
        return _with_span(self, t_span)

    def __repr__(self):
        return f"ODEProblem({self.name!r}, t_span={self.t_span}, y0 shape {self.shape})"

    @classmethod
    def from_system(cls, system, t_end, name=None):
        """Wrap an object following :class:`System` as a problem.

        The derivative is computed by setting the object's state and time and
        asking it for its derivative, so the solver never sees its internals
        (Witkin & Baraff).  Such a function runs on the Python backend.
        """
        if not isinstance(system, System):
            missing = [m for m in ("dim", "get_state", "set_state", "get_time", "set_time", "derivative")
                       if not callable(getattr(system, m, None))]
            raise TypeError(f"system must provide the System methods; missing: {', '.join(missing)}")
        n = int(system.dim())
        y0 = np.asarray(system.get_state(), dtype=float).reshape(n)

        def fun(t, y):
            system.set_time(t)
            system.set_state(y)
            return np.asarray(system.derivative(), dtype=float)

        return cls(fun, (float(system.get_time()), t_end), y0,
                   name=name or type(system).__name__)


@runtime_checkable
class System(Protocol):
    """A model that lives in an object (Witkin & Baraff's particle system).

    ``dim()`` is the length of the state vector; ``get_state()`` /
    ``set_state(y)`` copy it out and in; ``get_time()`` / ``set_time(t)`` the
    same for time; ``derivative()`` returns ``dy/dt`` at the current state.
    Use it with :meth:`ODEProblem.from_system`.
    """

    def dim(self) -> int: ...
    def get_state(self) -> np.ndarray: ...
    def set_state(self, y: np.ndarray) -> None: ...
    def get_time(self) -> float: ...
    def set_time(self, t: float) -> None: ...
    def derivative(self) -> np.ndarray: ...


class SecondOrderProblem(_Edited):
    """Mechanics: ``x'' = accel(t, x, v, *args)``.

    Parameters
    ----------
    accel : callable
        ``accel(t, x, v, *args)`` returns the acceleration shaped like ``x``
        (with ``inplace=True``: ``accel(t, x, v, a, *args)`` writes it).
    t_span : (float, float)
    x0, v0 : array_like
        Initial positions and velocities, the same shape (e.g. ``(N, 3)``).
    args : tuple
    velocity_dependent : bool
        Whether ``accel`` uses ``v`` (drag).  Splitting methods of order > 1
        then make each kick implicit in ``v``, which keeps their order and
        symmetry at the cost of iterations (see :mod:`odekit.kernels.velocity`);
        declare linear damping with ``damping`` instead, which they solve
        exactly without iterating, and a magnetic force with ``magnetic``,
        which ``boris`` rotates exactly.
    damping : float, array_like or callable, optional
        Linear damping ``c >= 0``, one number or one per position (shaped
        like ``x0``), or a function ``damping(*args)`` of the args that
        returns one (so that an ensemble or a sweep over the args varies
        it): the problem is ``x'' = accel(t, x, v) - c v``, with ``-c v``
        left out of ``accel``.  Every method solves the same damped
        problem; splitting methods solve the damping's part exactly
        (conformal symplectic, keeping their order, see
        :mod:`odekit.kernels.splitting`), so a damped problem whose
        ``accel`` ignores ``v`` is ``velocity_dependent=False``.  Stored
        as given (a number as a float, an array as a float array), None
        when absent or zero; :meth:`damping_value` gives ``c``.
    magnetic : callable, optional
        A magnetic force: ``magnetic(t, x, *args)`` returns the gyration
        vector ``b = (q/m) B`` at the positions ``x``, shaped like ``x``
        (3-D positions: ``x0`` of shape ``(3,)`` for one particle or
        ``(N, 3)`` for ``N``, each its own ``b``), and the problem is
        ``x'' = accel(t, x, v) + v x b - c v``, with ``v x b`` left out of
        ``accel`` (which then holds the electric, velocity-independent part:
        ``velocity_dependent=False``).  ``boris`` rotates ``v`` about ``b``
        exactly (see :mod:`odekit.kernels.boris`); the other splitting
        methods refuse it, every other method solves the first-order form.
        Checked at ``t0`` and ``x0``.  A ``jac`` stays that of ``accel``
        alone: an implicit method's Newton iteration then lacks ``v x b``'s
        part (it converges more slowly, to the same solution).
    invariants : mapping, optional
        ``name -> g(t, x, v)``.
    exact : callable, optional
        ``exact(t)`` returns ``(x(t), v(t))``.
    name : str, optional
    inplace : bool
    jac : callable, optional
        ``jac(t, x, v, *args)`` returns ``(A_x, A_v)``, the force Jacobians
        ``da/dx`` and ``da/dv`` over the flattened ``x`` and ``v`` (each
        ``x0.size`` square, dense or :mod:`scipy.sparse`), for implicit
        methods (without the damping's ``-c``, which odekit adds to
        ``A_v``).  Sparse ones are solved by eliminating the position
        correction: ``(I - h A_v - h^2 A_x) dv = r``, symmetric positive
        definite for conservative springs and damping, so conjugate gradients
        apply (Baraff & Witkin, *Large Steps in Cloth Simulation*, 1998).
    autonomous : bool
        Declare that ``accel`` does not depend on ``t`` (as for
        :class:`ODEProblem`: Rosenbrock methods skip ``da/dt``).
    events : Event or list of them, optional
        As for :class:`ODEProblem`; their ``g(t, x, v, *args)`` and
        ``affect(t, x, v, *args)`` take positions and velocities.
    nbody : NBody, optional
        Declares ``N`` bodies of these masses under gravity with this ``G``
        (``x0`` shaped ``(N, d)``, body 0 the central one), ``accel`` being
        their whole acceleration: what the Wisdom--Holman map
        (``"wisdom_holman"``) needs to move each body along its Kepler orbit
        exactly (see :mod:`odekit.nbody`).  Other methods ignore it.
    """

    second_order = True

    def __init__(self, accel, t_span, x0, v0, args=(), velocity_dependent=True,
                 invariants=None, exact=None, name=None, inplace=False, jac=None, autonomous=False,
                 events=None, damping=None, nbody=None, magnetic=None):
        self.accel = _callable("accel", accel)
        self.t_span = checks.time_span("t_span", t_span)
        self.x0 = checks.state("x0", x0)
        self.v0 = checks.state("v0", v0)
        if self.x0.shape != self.v0.shape:
            raise ValueError(f"x0 and v0 must have the same shape, got {self.x0.shape} and {self.v0.shape}")
        if self.x0.dtype != self.v0.dtype:
            dtype = np.result_type(self.x0, self.v0)
            self.x0, self.v0 = self.x0.astype(dtype), self.v0.astype(dtype)
        self.args = _args(args)
        self.velocity_dependent = checks.flag("velocity_dependent", velocity_dependent)
        self.damping = _damping(damping, self.x0.shape, self.args)
        self.magnetic = _magnetic(magnetic, self.x0, self.t_span[0], self.args)
        self.invariants = _invariants(invariants)
        self.exact = _callable("exact", exact, allow_none=True)
        self.name = name or getattr(accel, "__name__", "mechanics")
        self.inplace = _inplace(checks.flag("inplace", inplace), "x0", self.x0)
        self.jac = _callable("jac", jac, allow_none=True)
        self.jac_sparsity = None
        self.autonomous = checks.flag("autonomous", autonomous)
        self.events = as_events(events)
        self.nbody = as_nbody(nbody, self.x0)

    @property
    def shape(self):
        """Shape of ``x`` (and of ``v``)."""
        return self.x0.shape

    @property
    def size(self):
        """Number of scalar unknowns of the first-order form (positions and velocities)."""
        return 2 * self.x0.size

    def initial_state(self):
        return np.concatenate([self.x0.ravel(), self.v0.ravel()])

    def state_arrays(self):
        """The arrays the flat state is read from, in the order of its entries: ``(x0, v0)``."""
        return (self.x0, self.v0)

    def unflatten(self, Y):
        """Rows of flat ``[x, v]`` -> trajectory shaped ``(m, 2, *shape)``."""
        return Y.reshape((Y.shape[0], 2) + self.shape)

    def evaluate_invariant(self, g, t, u):
        return g(t, u[0], u[1])

    def damping_value(self, args=None):
        """The damping ``c`` with ``args`` (default: the problem's): None (none or zero), a float or an array."""
        if callable(self.damping):
            return _damping_value(self.damping(*(self.args if args is None else args)), self.x0.shape,
                                  "damping(*args)")
        return self.damping

    def acceleration(self, t, x, v):
        """``x''`` at ``(t, x, v)``: ``accel`` (with the args), ``v x b`` and the damping ``-c v``, a new array."""
        x, v = np.asarray(x), np.asarray(v)
        if self.inplace:
            a = np.empty_like(x)
            self.accel(t, x, v, a, *self.args)
        else:
            a = np.array(self.accel(t, x, v, *self.args), dtype=x.dtype)
        if self.magnetic is not None:
            a = a + np.cross(v, self.magnetic(t, x, *self.args))
        c = self.damping_value()
        return a if c is None else a - c * v

    def call(self, fn, t, u):
        """``fn`` -- ``accel``, ``jac`` or an event's ``g`` -- at ``t`` and the flat ``[x, v]``, with the args."""
        x, v = self.unflatten(u[None])[0]
        return fn(t, x, v, *self.args)

    def with_span(self, t_span):
        """The same problem over another span (its functions, and their compiled code, shared)."""
        return _with_span(self, t_span)

    def __repr__(self):
        return f"SecondOrderProblem({self.name!r}, t_span={self.t_span}, x0 shape {self.shape})"

