"""The problem zoo (moved whole into orbits.py so that its history follows; split by kind next)."""

from .orbits import *  # noqa: F401,F403
from .orbits import _hires_rhs  # noqa: F401
