"""odekit: time integrators for physics-based simulation.

Every classic integrator behind one interface, the tools to see how they
differ, and compiled speed::

    import odekit
    prob = odekit.problems.kepler(e=0.5, orbits=10)
    sol = odekit.solve(prob, "velocity_verlet", h=0.01)
    sol.invariants()["energy"]

``odekit.methods()`` prints the registry (:mod:`odekit.registry`; a method
of your own goes in with ``odekit.register``, a family of your own with
``odekit.register_family``, as ``examples/adams_bashforth.py`` shows);
``odekit.shootout("kepler")``
compares methods at an equal budget of derivative evaluations;
:mod:`odekit.analysis` measures orders, stability and drift, and
:mod:`odekit.plot` draws it all.
"""

from . import catalog  # noqa: F401  (registers the built-in methods)
from . import problems
from . import analysis  # noqa: F401  (odekit.analysis: order, stability, drift, work-precision)
from .controllers import FixedStep, MethodControl, PIController, StepDoubling
from .events import Event, EventRecord
from .integrator import IntegrationError, Integrator, Interrupted
from .families import Family, register_family
from .registry import Method, method, methods, register
from .nbody import NBody
from .problem import ODEProblem, SecondOrderProblem, System
from .reversible import ReversibleSteps, distance_control
from .backend import BackendFallbackWarning, CompilationNotice
from .theory.stiffness import StiffnessWarning
from .solution import Solution, Stats, Status
from .solve import prepare, solve, solve_ivp
from .ensemble import EnsembleSolution, ensemble
from .shootout import ShootoutResult, shootout  # the function shadows the module's name, as solve does
from .splitting import SplittingScheme
from .tableau import ButcherTableau, RosenbrockTableau

__version__ = "0.1.0"

__all__ = [
    "BackendFallbackWarning", "ButcherTableau", "CompilationNotice", "EnsembleSolution", "Event", "EventRecord",
    "Family", "FixedStep", "IntegrationError", "Integrator", "Interrupted",
    "Method", "MethodControl", "NBody", "ODEProblem", "PIController", "ReversibleSteps", "RosenbrockTableau",
    "SecondOrderProblem", "Solution",
    "ShootoutResult", "SplittingScheme", "Stats", "Status", "StepDoubling", "StiffnessWarning", "System",
    "analysis", "distance_control", "ensemble", "method",
    "methods", "prepare", "problems", "register", "register_family", "shootout", "solve", "solve_ivp",
]
