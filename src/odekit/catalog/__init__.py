"""The catalog: importing it registers every built-in method, in display order."""

from . import explicit, implicit, symplectic  # noqa: F401
