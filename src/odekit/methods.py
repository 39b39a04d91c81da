"""The method registry: one list that the solver, tests, docs and CLI read.

A :class:`Method` is data -- coefficients plus what a user needs to choose
it: order, stages, evaluations per step, stability, reference.  Most of the
numbers are derived from the coefficients, so they cannot disagree with
them.  Methods register themselves from :mod:`odekit.catalog`.
"""

from dataclasses import dataclass, field
import difflib
from functools import cached_property

import numpy as np

from .multistep import BDFCoefficients
from .splitting import SplittingScheme
from .tableau import ButcherTableau, CollocationTableau, RosenbrockTableau

FAMILIES = {
    "explicit_rk": "explicit Runge-Kutta",
    "implicit_rk": "diagonally implicit Runge-Kutta (Newton)",
    "radau": "fully implicit collocation (Radau IIA, Newton on decoupled stages)",
    "bdf": "variable-order backward differentiation (multistep, Newton)",
    "rosenbrock": "Rosenbrock (linearly implicit)",
    "splitting": "kick-drift splitting (symplectic)",
}


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
        Preserves the symplectic form (always true for splitting schemes).
    """

    name: str
    title: str
    coefficients: object
    order: int
    reference: str
    stability: str
    aliases: tuple = ()
    symplectic: bool = False
    family: str = field(init=False)

    def __post_init__(self):
        c = self.coefficients
        if isinstance(c, BDFCoefficients):
            family = "bdf"
        elif isinstance(c, CollocationTableau):
            family = "radau"
        elif isinstance(c, ButcherTableau):
            if not c.diagonally_implicit:
                raise ValueError(f"{self.name}: only explicit and diagonally implicit tableaus have a kernel")
            family = "explicit_rk" if c.explicit else "implicit_rk"
        elif isinstance(c, RosenbrockTableau):
            family = "rosenbrock"
        elif isinstance(c, SplittingScheme):
            family = "splitting"
        else:
            raise TypeError(f"{self.name}: unknown coefficient type {type(c).__name__}")
        object.__setattr__(self, "family", family)
        if family == "splitting":
            object.__setattr__(self, "symplectic", True)

    # --- derived facts ----------------------------------------------------------
    @property
    def stages(self):
        """Stages of a tableau; kicks of a splitting scheme."""
        c = self.coefficients
        return len(c.kick) if self.family == "splitting" else c.stages

    @cached_property
    def embedded_order(self):
        """Order of the embedded error estimate, or None (exact arithmetic, computed once)."""
        return None if self.family == "splitting" else self.coefficients.embedded_order()

    @property
    def adaptive(self):
        """True when the method carries its own error estimate (embedded pair, or BDF's)."""
        return self.family == "bdf" or self.embedded_order is not None

    @property
    def fsal(self):
        if self.family == "splitting":
            return self.coefficients.force_evaluations() < len(self.coefficients.kick)
        return self.family == "explicit_rk" and self.coefficients.fsal

    @property
    def implicit(self):
        return self.family in ("implicit_rk", "radau", "rosenbrock", "bdf")

    @property
    def second_order_only(self):
        """Splitting methods integrate ``x'' = a(t, x, v)`` directly and nothing else."""
        return self.family == "splitting"

    @property
    def needs_velocity_independent(self):
        """True when the order (and symplecticity) needs ``a = a(t, x)`` only.

        The two symplectic Euler variants stay first order with ``a(t, x, v)``
        (each kick uses the current velocity); every higher-order splitting
        method loses its order, so odekit refuses the combination.
        """
        return self.family == "splitting" and (self.order > 1 or self.coefficients.staggered)

    @property
    def evaluations_per_step(self):
        """f (or force) evaluations per step, or None when it varies (Newton).

        Explicit tableaus: stages, minus one when FSAL.  Splitting: force
        evaluations with the remembered force reused.  Rosenbrock: the stages,
        plus a Jacobian and, where the method uses ``df/dt`` and the problem
        is not declared ``autonomous``, two for it.  Diagonally implicit: one per Newton iteration
        per implicit stage, plus a Jacobian -- not a constant.
        """
        if self.family == "explicit_rk":
            return self.stages - (1 if self.fsal else 0)
        if self.family == "splitting":
            return self.coefficients.force_evaluations()
        if self.family == "rosenbrock":
            return self.stages
        return None

    @property
    def dense(self):
        if self.family == "bdf" or (self.family == "explicit_rk" and self.coefficients.dense is not None):
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
        key = bool(velocity_dependent) and self.family == "splitting"
        if key not in self._kernel_arrays:
            c = self.coefficients
            self._kernel_arrays[key] = c.kernel_data(key) if self.family == "splitting" else c.kernel_data()
        return self._kernel_arrays[key]

    @cached_property
    def dense_matrix(self):
        """The continuous extension's matrix, or ``0 x 0`` for cubic Hermite."""
        return self.coefficients.dense_matrix() if self.dense == "own" else np.zeros((0, 0))

    def summary(self):
        """One line: order, stages, evaluations, FSAL, dense output, reference."""
        evals = self.evaluations_per_step
        parts = [f"order {self.order}"]
        if self.embedded_order is not None:
            parts[0] = f"order {self.order}({self.embedded_order})"
        parts.append(f"{self.stages} {'kicks' if self.family == 'splitting' else 'stages'}")
        parts.append(f"{evals} f-evals/step" if evals is not None else "Newton: varies")
        if self.fsal:
            parts.append("FSAL")
        parts.append(f"{self.dense} dense output")
        return f"{self.title}: " + ", ".join(parts) + f". {self.reference}"

    def __str__(self):
        return self.summary()

    def markdown(self):
        """A section of ``docs/methods.md``: everything a user needs to choose it."""
        evals = self.evaluations_per_step
        facts = [
            f"- **order** {self.order}" + (f", embedded estimate of order {self.embedded_order}"
                                          if self.embedded_order is not None else ""),
            f"- **{'kicks' if self.family == 'splitting' else 'stages'}** {self.stages}; "
            f"**f-evaluations per step** "
            + (str(evals) if evals is not None else "one per Newton iteration per implicit stage, "
               "plus a Jacobian (user-supplied, or one evaluation per component)")
            + ("; first same as last (FSAL)" if self.fsal else "")
            + (", plus two for df/dt unless the problem is declared `autonomous`"
               if self.family == "rosenbrock" and self.coefficients.time_derivative else ""),
            f"- **family** {FAMILIES[self.family]}; dense output: "
            + ("the polynomial through its last steps, from its backward differences" if self.family == "bdf"
               else "its own continuous extension" if self.dense == "own" else "cubic Hermite"),
            f"- **stability** {self.stability}",
            f"- **reference** {self.reference}",
        ]
        if self.aliases:
            facts.append("- **aliases** " + ", ".join(f"`{a}`" for a in self.aliases))
        if self.needs_velocity_independent:
            facts.append("- needs forces that do not depend on velocity")
        return f"### `{self.name}`: {self.title}\n\n" + "\n".join(facts)


class MethodTable(tuple):
    """The registry as a tuple of :class:`Method` that prints as a table."""

    COLUMNS = ("name", "family", "order", "emb", "stages", "f/step", "FSAL", "symplectic", "a(x) only", "aliases")

    def rows(self):
        for m in self:
            evals = m.evaluations_per_step
            yield (m.name, m.family, str(m.order),
                   "" if m.embedded_order is None else str(m.embedded_order),
                   str(m.stages), "Newton" if evals is None else str(evals),
                   "yes" if m.fsal else "", "yes" if m.symplectic else "",
                   "yes" if m.needs_velocity_independent else "", ", ".join(m.aliases))

    def __str__(self):
        rows = [self.COLUMNS] + list(self.rows())
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.COLUMNS))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def __repr__(self):
        return str(self)

    def markdown(self):
        """The registry as a Markdown table: what the README shows."""
        columns = ("method", "family", "order", "embedded", "stages", "f-evals/step", "FSAL",
                   "symplectic", "forces a(x) only", "aliases", "reference")
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
# (its others are aliases: RK45 = dp54, RK23 = bs32, Radau = radau5, BDF = bdf)
NOT_PROVIDED = {
    "lsoda": "LSODA switches between Adams (non-stiff) and BDF (stiff) by itself; use 'bdf' "
             "(or 'radau5', 'rodas4') for a stiff problem and 'dp54' for a non-stiff one -- "
             "odekit.analysis.stiffness(problem) tells which",
    "dop853": "Dormand & Prince's 8(5,3) pair is not implemented; the embedded pairs go up to order 5 "
              "('dp54'), and 'yoshida6' is of order 6 for mechanics",
}


def method(name):
    """The registered method called ``name`` (or one of its aliases).

    A :class:`Method` passes through unchanged.  An unknown name raises a
    ``ValueError`` listing the closest registered names.
    """
    if isinstance(name, Method):
        return name
    found = _LOOKUP.get(_key(name))
    if found is None:
        if _key(name) in NOT_PROVIDED:
            raise ValueError(f"method {name!r} is not in odekit: {NOT_PROVIDED[_key(name)]}. "
                             "`odekit methods` lists them all")
        close = difflib.get_close_matches(_key(name), list(_LOOKUP), n=4, cutoff=0.0)
        raise ValueError(f"unknown method {name!r}; closest: {', '.join(close)}. "
                         "`odekit methods` lists them all")
    return found
