"""Method families: one descriptor each, the only place a family is known by name.

A :class:`Family` says how a kind of method runs: which coefficients it
takes, the kernel stepper and derivative it is run by, the work rows and
arrays a run needs, and the few facts the run set-up, the controllers and
the backends ask about it (implicit? chooses its own steps? integrates
``x'' = a`` directly?).  A method's family is found from its coefficients;
nothing outside this table tests a family's name.

Adding a family -- an IMEX scheme, an exponential integrator, a two-step
Adams method for a course -- is a coefficients class, a stepper written in
the kernels' Numba subset and marked ``@jitable``, and one
:func:`register_family` call; the loop, the controllers, recording, both
backends and the registry-driven tests then apply as they are.

The stepper's contract (see :mod:`odekit.kernels.explicit_rk` for the
simplest one)::

    step(rhs, jac, args, m, ctrl, tol, scratch, t, h, y, f, have_f, ynew, fnew, ist, fs)
        -> (code, have_f, have_fnew)

one attempt of size ``h`` from row ``y`` of the work matrix ``scratch[0]``
into row ``ynew``, with ``m`` the family's method data (the coefficients'
``kernel_data()``) and the error estimate in row ``ERR``.
"""

from dataclasses import dataclass
from functools import cached_property

from .controllers import loose_newton_tolerance, radau5_newton_tolerance, tight_newton_tolerance
from .kernels.bdf import WORK_ROWS as BDF_ROWS, bdf_extend, bdf_restart, bdf_step, history_matrix
from .kernels.driver import extends_nothing, keeps_nothing, make_drive
from .kernels.evaluation import first_order_derivative
from .kernels.explicit_rk import explicit_rk_step, extend_stages
from .kernels.implicit_rk import implicit_rk_step
from .kernels.kepler import kepler_splitting_step
from .kernels.layout import FAMILY_ROWS, STAGE
from .kernels.nystrom import nystrom_dense_rows, nystrom_derivative, nystrom_step
from .kernels.radau import WORK_ROWS as RADAU_ROWS, radau_step
from .kernels.rosenbrock import rosenbrock_step
from .kernels.splitting import second_order_derivative
from .kernels.velocity import splitting_or_implicit_step
from .multistep import BDFCoefficients
from .nbody import KeplerSplitting, problem_data as nbody_data, refusal as nbody_refusal
from .nystrom import NystromTableau, refusal as nystrom_refusal
from .splitting import SplittingScheme
from .tableau import ButcherTableau, CollocationTableau, RosenbrockTableau


def _no_arrays(system, n):
    return ()


@dataclass(frozen=True, eq=False)
class Family:
    """How the methods of one family run.

    A family compares equal to its name (``method.family == "bdf"``) and
    prints as it, so code that names families keeps working; inside
    odekit, only this module does.

    Parameters
    ----------
    name, title : str
        ``"explicit_rk"``; ``"explicit Runge-Kutta"``.
    coefficients : type
        The class of the coefficients it runs (first match in the table wins).
    step : function
        The kernel stepper (``@jitable``), contract in the module docstring.
    deriv : function
        The derivative at one row: ``first_order_derivative`` for ``y' =
        f``, ``second_order_derivative`` for a force ``x'' = a``.
    accepts : function, optional
        ``accepts(coefficients) -> bool`` where the class alone does not
        decide (explicit against diagonally implicit tableaus).
    implicit : bool
        Solves with Jacobians and LU factors (the run allocates them).
    self_controlled : bool
        Chooses its own step (and order); run by ``MethodControl``.  Its
        stepper leaves the factor for the next step in ``fs[STEP_FACTOR]``
        and the attempt's error norm in ``fs[STEP_ERR]``, which the loop
        takes instead of measuring the error row again.
    second_order : bool
        Integrates ``x'' = a(t, x, v)`` directly, and nothing else.
    symplectic : bool
        Its methods preserve the symplectic form (for forces ``a(t, x)``).
    own_dense : bool
        Keeps its stages for the coefficients' continuous extension, when
        they have one (otherwise output is cubic Hermite).
    hold : float
        The controller keeps ``h`` when it would grow by a factor in
        ``[1, hold]``: worth it where a new ``h`` costs a new LU.
    scale_by_new : bool
        Measures a step's error against ``atol + rtol |y_new|`` instead of
        ``atol + rtol max(|y|, |y_new|)`` (the latter lets a component that
        falls steeply within the step keep the tolerance of its old size).
    predictive : bool
        :class:`~odekit.PIController` bounds the growth of ``h`` by
        Gustafsson's prediction for it by default (True for every family:
        measured for each that has embedded pairs, see
        :class:`~odekit.PIController`).
    integral : bool
        :class:`~odekit.PIController`'s default gains are integral ones,
        ``beta1 = 1/k, beta2 = 0`` (radau5's: with the bound, RADAU5's own
        controller), instead of PI gains.
    newton_tolerance : function
        ``newton_tolerance(rtol) -> float``: Newton's iteration stops when
        its estimated error is below this fraction of the error tolerance,
        at the run's smallest ``rtol`` (the choices and their references are
        in :mod:`odekit.controllers`; unused by families that do not iterate).
    rows : int or None
        Rows of the work matrix; ``None``: the stages plus ``FAMILY_ROWS``.
    arrays : function
        ``arrays(system, n) -> tuple``: work arrays after ``(W, J, LU,
        piv)``; ``system(size)`` makes a Newton system ``(LU, piv)`` of the
        run's kind, dense or sparse.
    restart : function
        ``restart(fs, ist)`` (``@jitable``): forget the family's private
        memory after the state was changed from outside.
    extend : function
        ``extend(rhs, args, m, scratch, t, h, y, ist, fs) -> code``
        (``@jitable``): evaluate what its own interpolant needs beyond the
        step's stages, for an accepted step whose interpolant is used (see
        :func:`~odekit.kernels.driver.make_drive`).
    stage_word : str
        What its stages are called in tables ("stages", "kicks").
    interpolant : str or None
        How its own dense output is made, for the docs (default: "its own
        continuous extension").
    solves_damping : bool
        A second-order family that solves declared linear damping exactly
        (see :mod:`odekit.splitting`), as the docs say of its methods.
    refuses : function, optional
        ``refuses(name, problem) -> str or None``: why the family's method
        ``name`` cannot run ``problem``, beyond what every method checks
        (see :meth:`odekit.registry.Method.refusal`).
    problem_data : function, optional
        ``problem_data(problem) -> tuple``: arrays the family's kernel reads
        of the problem (an N-body system's masses), appended to the method's
        kernel data of each run.
    implicit_kicks : bool
        A kick-drift family whose methods of order > 1 make their kicks
        implicit in v for velocity-dependent forces, which keeps their order
        (see :mod:`odekit.kernels.velocity`); its coefficients' ``kernel_data``
        takes ``implicit=``.
    plain_reruns : bool
        A repeated solve's call (:mod:`odekit.rerun`) runs the family's
        plain loop (no step doubling, no dense output: see
        :func:`odekit.kernels.driver.make_drive`), where measured faster:
        explicit Runge-Kutta (the prepared call of three steps of Kepler's
        orbit 2.52 -> 2.33 us).  The Rosenbrock family's plain loop ran
        40-65 % slower (``rodas5p`` on Van der Pol at ``rtol`` 1e-3 71.5 ->
        118 us, at 1e-8 477 -> 672), for a reason not found yet; the others
        were not measured.
    """

    name: str
    title: str
    coefficients: type
    step: object
    deriv: object = first_order_derivative
    accepts: object = None
    implicit: bool = False
    self_controlled: bool = False
    second_order: bool = False
    symplectic: bool = False
    own_dense: bool = False
    hold: float = 1.0
    scale_by_new: bool = False
    predictive: bool = True
    integral: bool = False
    newton_tolerance: object = tight_newton_tolerance
    rows: int | None = None
    arrays: object = _no_arrays
    restart: object = keeps_nothing
    extend: object = extends_nothing
    stage_word: str = "stages"
    interpolant: str | None = None
    solves_damping: bool = False
    refuses: object = None
    problem_data: object = None
    implicit_kicks: bool = False
    plain_reruns: bool = False

    def __str__(self):
        return self.name

    def __format__(self, spec):
        return format(self.name, spec)

    def __eq__(self, other):
        if isinstance(other, str):
            return self.name == other
        return self is other

    def __hash__(self):
        return hash(self.name)

    def runs(self, coefficients):
        """True when this family runs ``coefficients``."""
        return isinstance(coefficients, self.coefficients) and (self.accepts is None or self.accepts(coefficients))

    def work_rows(self, stages):
        return STAGE + stages + FAMILY_ROWS if self.rows is None else self.rows

    def drive(self, events, plain=False):
        """The family's integration loop (its stepper inlined) for runs with ``events`` or without; ``plain``,
        without events, for runs that neither double their steps nor keep interpolants (see
        :func:`odekit.kernels.driver.make_drive`)."""
        return self._drives[2 if plain else int(bool(events))]

    @cached_property
    def _drives(self):
        # three loops, each made once: one without the event search compiles faster, a plain one starts sooner
        return tuple(make_drive(self.step, self.deriv, self.restart, self.scale_by_new, events, self.extend,
                                self.self_controlled, plain, hold=self.implicit)
                     for events, plain in ((False, False), (True, False), (False, True)))

    @property
    def builtin(self):
        """A family of odekit's own: its compiled loop may be kept in the disk cache."""
        return self.step.__module__.startswith("odekit.")


FAMILIES = {}


def register_family(family):
    """Add ``family`` to the table; its name must be new.  Returns it."""
    if not isinstance(family, Family):
        raise TypeError(f"family must be a Family, got {type(family).__name__}")
    if family.name in FAMILIES:
        raise ValueError(f"family {family.name!r} is already registered")
    FAMILIES[family.name] = family
    return family


def family_of(coefficients):
    """The family that runs ``coefficients``; a ValueError naming the families if none does."""
    for family in FAMILIES.values():
        if family.runs(coefficients):
            return family
    if isinstance(coefficients, ButcherTableau):
        raise ValueError("only explicit and diagonally implicit tableaus (and Radau IIA collocation) "
                         "have a kernel; this tableau is fully implicit")
    known = ", ".join(f"{f.name} ({f.coefficients.__name__})" for f in FAMILIES.values())
    raise TypeError(f"no family runs coefficients of type {type(coefficients).__name__}; "
                    f"the families and what they run: {known}")


def _radau_arrays(system, n):
    return system(2 * n)            # the complex pair of eigenvalues as one real block of size 2n


def _bdf_arrays(system, n):
    return (history_matrix(),)


register_family(Family(
    "bdf", "variable-order backward differentiation (multistep, Newton)", BDFCoefficients, bdf_step,
    implicit=True, self_controlled=True, own_dense=True, scale_by_new=True, rows=BDF_ROWS, arrays=_bdf_arrays,
    restart=bdf_restart, extend=bdf_extend, newton_tolerance=loose_newton_tolerance,
    interpolant="the polynomial through its last steps, from its backward differences"))
register_family(Family(
    "radau", "fully implicit collocation (Radau IIA, Newton on decoupled stages)", CollocationTableau,
    radau_step, implicit=True, hold=1.2, integral=True, newton_tolerance=radau5_newton_tolerance,
    rows=RADAU_ROWS, arrays=_radau_arrays))
register_family(Family(
    "explicit_rk", "explicit Runge-Kutta", ButcherTableau, explicit_rk_step,
    accepts=lambda c: c.explicit, own_dense=True, extend=extend_stages, plain_reruns=True))
register_family(Family(
    "implicit_rk", "diagonally implicit Runge-Kutta (Newton)", ButcherTableau, implicit_rk_step,
    accepts=lambda c: c.diagonally_implicit and not c.explicit, implicit=True, hold=1.2,
    newton_tolerance=tight_newton_tolerance))
register_family(Family(
    "rosenbrock", "Rosenbrock (linearly implicit)", RosenbrockTableau, rosenbrock_step, implicit=True))
register_family(Family(
    "splitting", "kick-drift splitting (symplectic)", SplittingScheme, splitting_or_implicit_step,
    deriv=second_order_derivative, second_order=True, symplectic=True, stage_word="kicks", solves_damping=True,
    implicit_kicks=True))
register_family(Family(
    "kepler_splitting",
    "Kepler drift and interaction kick in Jacobi coordinates (N bodies declared with nbody=NBody(masses, G))",
    KeplerSplitting, kepler_splitting_step, deriv=second_order_derivative, second_order=True, symplectic=True,
    stage_word="kicks", refuses=nbody_refusal, problem_data=nbody_data))


@dataclass(frozen=True, eq=False)
class _NystromFamily(Family):
    """The Nystrom pairs' family: its interpolant combines ``2 s + 2`` rows laid out from the ``s`` stages."""

    def work_rows(self, stages):
        return STAGE + 2 * stages + 2


register_family(_NystromFamily(
    "nystrom", "Runge-Kutta-Nystrom (x'' = a(t, x))", NystromTableau, nystrom_step,
    deriv=nystrom_derivative, second_order=True, own_dense=True, extend=nystrom_dense_rows,
    refuses=nystrom_refusal, interpolant="its own continuous extension of x and v"))
