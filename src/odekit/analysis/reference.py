"""The true solution a study measures its errors against: exact, the user's, or a tight run."""

from collections.abc import Mapping

import numpy as np

from ..integrator import IntegrationError
from ..registry import method as _lookup
from ..solution import Solution
from ..solve import solve

#: Solver options of the reference run used when a problem has no exact solution.
REFERENCE = {"method": "dp54", "rtol": 1e-13, "atol": 1e-13}


class Reference:
    """The true solution of a problem at the output times of a set of runs.

    Parameters
    ----------
    problem : ODEProblem or SecondOrderProblem
    reference : None, "exact", mapping or callable
        ``None``: ``problem.exact`` if there is one, else a reference run
        with :data:`REFERENCE`.  ``"exact"``: ``problem.exact``.  A mapping
        of :func:`odekit.solve` options (``method``, ``rtol``, ``atol``,
        ``h`` ...) updates :data:`REFERENCE` for the reference run, which
        :meth:`prepare` makes after the runs, at all their output times.  A
        callable ``ref(t)`` returns the state at ``t``; a dense
        :class:`Solution` is one (the shootout passes its own, made before
        its runs so that its progress counts it), and is evaluated at all of
        a run's times in one call.
    backend : {"auto", "numba", "python"}
        Of the reference run, unless the mapping names one.

    Attributes
    ----------
    label : str
        What the errors are measured against, for a table's title:
        ``"exact"``, ``"user reference"`` or ``"reference "`` and the run's
        options.
    """

    def __init__(self, problem, reference=None, backend="auto"):
        self.problem = problem
        self.backend = backend
        self.options = None
        self.function = None
        if reference is None:
            reference = "exact" if problem.exact is not None else {}
        if isinstance(reference, str):
            if reference != "exact":
                raise ValueError(f"reference must be None, 'exact', a mapping of solve() options or a callable "
                                 f"ref(t) -> state, got {reference!r}")
            if problem.exact is None:
                raise ValueError(f"reference='exact' but problem {problem.name!r} has no exact solution; "
                                 "leave reference=None for a tight reference run")
            self.function, self.label = problem.exact, "exact"
        elif isinstance(reference, Mapping):
            self.options = dict(REFERENCE)
            self.options.update(reference)
            self.label = "reference " + ", ".join(
                f"{k}={_lookup(v).name if k == 'method' else v}" for k, v in self.options.items())
        elif callable(reference):
            self.function, self.label = reference, "user reference"
        else:
            raise TypeError(f"reference must be None, 'exact', a mapping of solve() options or a callable "
                            f"ref(t) -> state, got {type(reference).__name__}")
        self._cache = {}

    def prepare(self, solutions):
        """Compute the reference run at the union of all output times (if one is needed)."""
        if self.options is None:
            return
        ts = [s.t for s in solutions if len(s.t)]
        direction = 1.0 if self.problem.t_span[1] > self.problem.t_span[0] else -1.0
        union = np.unique(np.concatenate(ts)) if ts else np.array([self.problem.t_span[0]])
        if direction < 0:
            union = union[::-1]
        options = {k: v for k, v in self.options.items() if k != "method"}
        options.setdefault("backend", self.backend)
        ref = solve(self.problem, self.options["method"], t_eval=union, **options)
        if not ref.success:
            raise IntegrationError(ref.status, f"the reference run ({self.label}) failed: {ref.message}; "
                                   "pass reference={...} with other solve() options, e.g. an implicit method "
                                   "for a stiff problem")
        self._cache.update(zip(ref.t.tolist(), ref.y))

    def states(self, t, shape):
        """The reference state at each time in ``t``, shaped ``(len(t), *shape)``."""
        out = np.empty((len(t),) + tuple(shape), dtype=complex if self.problem.initial_state().dtype.kind == "c"
                       else float)
        if isinstance(self.function, Solution):
            # interpolated point by point inside, as one call per time would be; not kept, since
            # the shootout asks at different times for every run and a large state would pile up
            out[:] = _shaped(self.function(t), out.shape, f"{len(t)} times")
            return out
        for i, ti in enumerate(t.tolist()):
            value = self._cache.get(ti)
            if value is None:
                if self.function is None:
                    raise RuntimeError(f"no reference value at t={ti!r}")  # pragma: no cover
                value = _shaped(self.function(ti), shape, f"t={ti!r}")
                self._cache[ti] = value
            out[i] = value
        return out


def _shaped(value, shape, where):
    value = np.asarray(value)
    try:
        return value.reshape(shape)
    except ValueError:
        raise ValueError(f"the reference returned {value.size} values at {where}; expected shape "
                         f"{tuple(shape)}") from None
