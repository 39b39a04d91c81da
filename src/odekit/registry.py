"""The method registry: one list that the solver, tests, docs, CLI and shootout read.

A :class:`Method` is data -- coefficients plus what a user needs to choose
it: order, stages, evaluations per step, stability, reference.  Most of the
numbers are derived from the coefficients, so they cannot disagree with
them.  Methods register themselves from :mod:`odekit.catalog`.
"""

from dataclasses import dataclass, field
import difflib
from functools import cached_property

import numpy as np

from . import checks
from .families import FAMILIES, family_of
from .formatting import text_table
from .kernels.velocity import MAX_NEWTON_STATE


@dataclass(frozen=True)
class Method:
    """A registered integrator.

    Attributes
    ----------
    name : str
        Canonical name, e.g. ``"dp54"``.
    title : str
        Human name, e.g. ``"Dormand-Prince 5(4)"``.
    coefficients : ButcherTableau, RosenbrockTableau or SplittingScheme
        The method itself.
    order : int
        Global order of accuracy.
    reference : str
        Where the coefficients come from.
    stability : str
        What is known of its stability (region, A-/L-stability, symplecticity).
    aliases : tuple of str
        Other names accepted by :func:`method`.
    symplectic : bool
        Preserves the symplectic form (true for splitting schemes, except
        ``boris``: volume preserving, not symplectic, in a magnetic field).
    """

    name: str
    title: str
    coefficients: object
    order: int
    reference: str
    stability: str
    aliases: tuple = ()
    symplectic: bool = False
    family: object = field(init=False)

    def __post_init__(self):
        family = family_of(self.coefficients)
        object.__setattr__(self, "family", family)
        if family.symplectic and not getattr(self.coefficients, "magnetic", False):
            object.__setattr__(self, "symplectic", True)

    # --- derived facts: asked of the coefficients and the family -----------------------------
    @property
    def stages(self):
        """Stages of a tableau; kicks of a splitting scheme."""
        return self.coefficients.stages

    @cached_property
    def embedded_order(self):
        """Order of the embedded error estimate, or None (exact arithmetic, computed once)."""
        return self.coefficients.embedded_order()

    @cached_property
    def error_order(self):
        """The order the error estimate behaves as, less one: what the controller's exponent follows.

        The embedded order, except for a pair that blends two estimates
        (DOP853's 5 and 3 behave as one of order 7); see
        :meth:`odekit.tableau.ButcherTableau.error_order`.
        """
        blended = getattr(self.coefficients, "error_order", None)
        return self.embedded_order if blended is None else blended()

    @property
    def interpolation_stages(self):
        """Stages evaluated only for the method's own interpolant, when a step's is used."""
        return getattr(self.coefficients, "interpolation_stages", 0)

    @property
    def adaptive(self):
        """True when the method carries its own error estimate (embedded pair, or BDF's)."""
        return self.family.self_controlled or self.embedded_order is not None

    @property
    def fsal(self):
        """First same as last: the step's last evaluation starts the next step."""
        return self.coefficients.fsal

    @property
    def implicit(self):
        return self.family.implicit

    @property
    def second_order_only(self):
        """Splitting methods and Nystrom pairs integrate ``x'' = a(t, x, v)`` directly and nothing else."""
        return self.family.second_order

    @property
    def velocity_implicit(self):
        """True when, for forces ``a(t, x, v)``, its kicks are made implicit in v.

        Every splitting method of order > 1 (and staggered leapfrog) would
        lose its order with explicit kicks of a velocity-dependent force; it
        runs them as the composition of an explicit and an implicit kick that
        keeps it (see :mod:`odekit.kernels.velocity`).  The two symplectic
        Euler variants are first order either way and keep their explicit kicks.
        """
        return (self.family.implicit_kicks and not getattr(self.coefficients, "magnetic", False)
                and (self.order > 1 or self.coefficients.staggered))

    def solves_newton(self, problem):
        """True when a run of this method on ``problem`` solves Newton systems (and calls its ``jac``, if any).

        Implicit methods; and a splitting method whose kicks are implicit in v
        on a velocity-dependent problem, when the state is small enough for
        its Newton matrix (see :mod:`odekit.kernels.velocity`).
        """
        return self.implicit or (self.kicks_implicitly(problem) and problem.size <= MAX_NEWTON_STATE)

    def kicks_implicitly(self, problem):
        """True when its kicks on ``problem`` are implicit in v: those of a velocity-dependent force.

        They iterate to convergence (see :mod:`odekit.kernels.velocity`), so
        the evaluations a step spends vary, and exceed the declared ones.
        """
        return self.velocity_implicit and problem.second_order and problem.velocity_dependent

    def refusal(self, problem):
        """Why this method cannot run ``problem``, as the sentence of a ValueError; None when it can.

        The one compatibility check: the run, the shootout, the stiffness
        advice and the live page all ask here.
        """
        if self.second_order_only and not problem.second_order:
            kind = ("a splitting method for x'' = a(t, x, v)" if self.family.symplectic
                    else f"a {self.family.title} method")
            return (f"method {self.name!r} is {kind}: give a "
                    "SecondOrderProblem, or choose a method for first-order systems (e.g. 'rk4', 'dp54')")
        if (self.second_order_only and problem.second_order and getattr(problem, "magnetic", None) is not None
                and not getattr(self.coefficients, "magnetic", False)):
            return (f"method {self.name!r} cannot run the magnetic force v x b of the problem's magnetic=: its "
                    "order rests on forces that do not depend on v. Use 'boris', whose kicks rotate v about b "
                    "exactly, or a Runge-Kutta method such as 'rk4' or 'dp54'")
        if self.family.refuses is not None:
            refused = self.family.refuses(self.name, problem)
            if refused:
                return refused
        if getattr(self.coefficients, "magnetic", False) and problem.second_order and problem.velocity_dependent:
            return (f"method {self.name!r} needs forces that do not depend on velocity, but the problem says "
                    "velocity_dependent=True; its kick is Boris's rotation about the field. Declare a magnetic "
                    "force v x b with magnetic= and the rest of accel velocity_dependent=False, or use a "
                    "splitting method (its kicks then implicit in v) or a Runge-Kutta method such as 'rk4'")
        return None

    def applies_to(self, problem):
        """True when this method can run ``problem`` (see :meth:`refusal`)."""
        return self.refusal(problem) is None

    @property
    def evaluations_per_step(self):
        """f (or force) evaluations per step, or None when it varies (Newton).

        Explicit tableaus: stages, minus one when FSAL.  Splitting: force
        evaluations with the remembered force reused.  Rosenbrock: the stages,
        plus a Jacobian and, where the method uses ``df/dt`` and the problem
        is not declared ``autonomous``, two for it.  Diagonally implicit: one per Newton iteration
        per implicit stage, plus a Jacobian -- not a constant.
        """
        return self.coefficients.evaluations_per_step()

    @property
    def dense(self):
        if self.dense_matrix.shape[0] > 0:
            return "own"
        return "hermite"

    @property
    def names(self):
        return (self.name,) + tuple(self.aliases)

    # --- what the kernels run on, built once per method ------------------------------------
    @cached_property
    def _kernel_arrays(self):
        return {}

    def kernel_data(self, velocity_dependent=False):
        """The coefficients as the float arrays of the family's kernel (shared: read-only use)."""
        key = bool(velocity_dependent) and self.family.second_order
        if key not in self._kernel_arrays:
            c = self.coefficients
            if self.family.implicit_kicks:
                self._kernel_arrays[key] = c.kernel_data(key, implicit=self.velocity_implicit)
            else:
                self._kernel_arrays[key] = c.kernel_data(key) if self.family.second_order else c.kernel_data()
        return self._kernel_arrays[key]

    def run_data(self, problem):
        """The kernel's method data for a run of ``problem``: :meth:`kernel_data`, and what the family reads of it."""
        data = self.kernel_data(problem.second_order and problem.velocity_dependent)
        return data if self.family.problem_data is None else data + tuple(self.family.problem_data(problem))

    @cached_property
    def dense_matrix(self):
        """The continuous extension's matrix (see :mod:`odekit.kernels.dense`), or ``0 x 0`` for cubic Hermite."""
        if self.family.own_dense and hasattr(self.coefficients, "dense_matrix"):
            return self.coefficients.dense_matrix()
        return np.zeros((0, 0))

    def summary(self):
        """One line: order, stages, evaluations, FSAL, dense output, reference."""
        evals = self.evaluations_per_step
        parts = [f"order {self.order}"]
        if self.embedded_order is not None:
            parts[0] = f"order {self.order}({self.embedded_order})"
        parts.append(f"{self.stages} {self.family.stage_word}")
        parts.append(f"{evals} f-evals/step" if evals is not None else "Newton: varies")
        if self.fsal:
            parts.append("FSAL")
        parts.append(f"{self.dense} dense output")
        return f"{self.title}: " + ", ".join(parts) + f". {self.reference}"

    def __str__(self):
        return self.summary()

    def _velocity_facts(self):
        """The docs' line on velocity-dependent forces for a method whose kicks are then implicit in v."""
        explicit, implicit = self.coefficients.kick_parts()
        parts = ", ".join(f"({e:.4g}, {i:.4g})" for e, i in zip(explicit, implicit))
        backward = min(implicit)
        stability = ("no implicit part is negative, so no kick's equation is singular for a drag (da/dv <= 0)"
                     if backward >= 0 else
                     f"an implicit part is negative ({backward:.4g}, a kick backwards in time): for a drag "
                     f"da/dv = -c its equation is singular at h c = {-1 / backward:.3g}, and the step amplifies "
                     "near it")
        return ("- **velocity-dependent forces** `a(t, x, v)` (`velocity_dependent=True`): each kick is made "
                f"implicit in v, its (explicit, implicit) parts {parts} of h -- the scheme composed of a first-order "
                "method and its adjoint (velocity Verlet becomes the generalized Stormer-Verlet method, "
                + HLW_VI3 + ") -- so the order is kept and the step stays symmetric; each implicit kick is solved "
                "to round-off by fixed-point iteration, or by Newton's method with da/dv from the problem's jac or "
                "by differences, every evaluation counted in `nfev` (an explicit kick one, an implicit one two or "
                "more; bitwise the plain scheme's numbers for a force that ignores v); " + stability)

    def markdown(self):
        """A section of ``docs/methods.md``: everything a user needs to choose it."""
        evals = self.evaluations_per_step
        facts = [
            f"- **order** {self.order}" + (f", embedded estimate of order {self.embedded_order}"
                                          if self.embedded_order is not None else ""),
            f"- **{self.family.stage_word}** {self.stages}; "
            f"**f-evaluations per step** "
            + (str(evals) if evals is not None else "one per Newton iteration per implicit stage, "
               "plus a Jacobian (user-supplied, or one evaluation per component)")
            + ("; first same as last (FSAL)" if self.fsal else "")
            + (f"; {self.interpolation_stages} more for a step whose interpolant is used (t_eval inside it, "
               "dense output, events)" if self.interpolation_stages else "")
            + (", plus two for df/dt unless the problem is declared `autonomous`"
               if getattr(self.coefficients, "time_derivative", False) else ""),
            f"- **family** {self.family.title}; dense output: "
            + (self.family.interpolant if self.dense == "own" and self.family.interpolant
               else "its own continuous extension" if self.dense == "own" else "cubic Hermite"),
            f"- **stability** {self.stability}",
            f"- **reference** {self.reference}",
        ]
        if self.aliases:
            facts.append("- **aliases** " + ", ".join(f"`{a}`" for a in self.aliases))
        if self.family.solves_damping:
            facts.append("- **damping** linear damping `-c v`, declared as `SecondOrderProblem(..., damping=c)`, "
                         "is solved exactly in each drift: the order is kept, and a step contracts the symplectic "
                         "form by `e^{-c h}` as the true flow does (conformal symplectic: McLachlan & Quispel, "
                         "Acta Numerica 11 (2002); Bhatt, Floyd & Moore, J. Sci. Comput. 66 (2016))")
        if getattr(self.coefficients, "magnetic", False):
            facts.append("- **magnetic** runs `x'' = a(t, x) + v × b(t, x)` declared as `SecondOrderProblem(..., "
                         "magnetic=b)`, with one evaluation of the force and of the field per step: each kick is "
                         "Boris's push (half the force's kick, v rotated about b by θ with tan(θ/2) = h|b|/2, the "
                         "other half), so |v| is kept exactly in a pure magnetic field and, in a uniform one, the "
                         "gyration radius and the E × B drift are exact, the phase off by θ - h|b|; the only "
                         "splitting method that runs a magnetic problem")
        if getattr(self.coefficients, "magnetic", False):
            facts.append("- needs forces that do not depend on velocity besides the magnetic one")
        elif self.velocity_implicit:
            facts.append(self._velocity_facts())
        elif self.family.implicit_kicks:
            facts.append("- **velocity-dependent forces** `a(t, x, v)`: explicit kicks with the current "
                         "velocity; first order, not symplectic")
        return f"### `{self.name}`: {self.title}\n\n" + "\n".join(facts)


HLW_VI3 = "Hairer, Lubich & Wanner, Geometric Numerical Integration (2006), VI.3, eq. (3.4)"


def _velocity_kicks(m):
    """How a splitting method kicks with a velocity-dependent force: "implicit", "explicit"; "" for others."""
    if not m.family.implicit_kicks or getattr(m.coefficients, "magnetic", False):
        return ""                          # boris refuses them: its kick is the rotation about the field
    return "implicit" if m.velocity_implicit else "explicit"


class MethodTable(tuple):
    """The registry as a tuple of :class:`Method` that prints as a table."""

    COLUMNS = ("name", "family", "order", "emb", "stages", "f/step", "FSAL", "symplectic", "a(x, v)", "aliases")

    def rows(self):
        for m in self:
            evals = m.evaluations_per_step
            yield (m.name, m.family.name, str(m.order),
                   "" if m.embedded_order is None else str(m.embedded_order),
                   str(m.stages), "Newton" if evals is None else str(evals),
                   "yes" if m.fsal else "", "yes" if m.symplectic else "",
                   _velocity_kicks(m), ", ".join(m.aliases))

    def __str__(self):
        return text_table(self.rows(), self.COLUMNS)

    def __repr__(self):
        return str(self)

    def markdown(self):
        """The registry as a Markdown table: what the README shows."""
        columns = ("method", "family", "order", "embedded", "stages", "f-evals/step", "FSAL",
                   "symplectic", "kicks for a(x, v)", "aliases", "reference")
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for m, row in zip(self, self.rows()):
            cells = [f"`{row[0]}`", *row[1:-1], ", ".join(f"`{a}`" for a in m.aliases), m.reference]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def names(self):
        return [m.name for m in self]

    def document(self):
        """``docs/methods.md``: the table, then a section per method."""
        sections = "\n\n".join(m.markdown() for m in self)
        return ("# Methods\n\nGenerated from the registry by `odekit methods --markdown`; "
                "a test keeps it current.\n\n" + self.markdown() + "\n\n" + sections + "\n")


#: The eight integrators of the classic comparison odekit grew from: the shootout's
#: default, the live page's first choices, and the first colours of the plots.
CLASSIC = ("euler", "heun", "midpoint", "rk4", "symplectic_euler", "velocity_verlet", "position_verlet",
           "forest_ruth")

_REGISTRY: dict[str, Method] = {}
_LOOKUP: dict[str, Method] = {}


def _key(name):
    return str(name).strip().lower().replace("-", "_").replace(" ", "_")


def register(m):
    """Add a method to the registry; its name and aliases must be new."""
    for n in m.names:
        if _key(n) in _LOOKUP:
            raise ValueError(f"method name {n!r} is already registered")
    _REGISTRY[m.name] = m
    for n in m.names:
        _LOOKUP[_key(n)] = m
    return m


def methods(family=None):
    """All registered methods (optionally of one family), as a printable table."""
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family!r}")
    return MethodTable(m for m in _REGISTRY.values() if family in (None, m.family))


# SciPy's solve_ivp methods without an odekit equivalent, and what to use instead
# (its others are aliases: RK45 = dp54, RK23 = bs32, DOP853 = dop853, Radau = radau5, BDF = bdf)
NOT_PROVIDED = {
    "lsoda": "LSODA switches between Adams (non-stiff) and BDF (stiff) by itself; use 'bdf' "
             "(or 'radau5', 'rodas4') for a stiff problem and 'dp54' for a non-stiff one -- "
             "odekit.analysis.stiffness(problem) tells which",
}


def method(name):
    """The registered method called ``name`` (or one of its aliases).

    A :class:`Method` passes through unchanged.  An unknown name raises a
    ``ValueError`` listing the closest registered names.
    """
    if isinstance(name, Method):
        return name
    if not isinstance(name, str):
        raise checks.fail("method", "a method name (`odekit methods` lists them) or a Method", name)
    found = _LOOKUP.get(_key(name))
    if found is None:
        if _key(name) in NOT_PROVIDED:
            raise ValueError(f"method {name!r} is not in odekit: {NOT_PROVIDED[_key(name)]}. "
                             "`odekit methods` lists them all")
        close = difflib.get_close_matches(_key(name), list(_LOOKUP), n=4, cutoff=0.0)
        raise ValueError(f"unknown method {name!r}; closest: {', '.join(close)}. "
                         "`odekit methods` lists them all")
    return found
