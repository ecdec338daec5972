"""Simulation with diffrax, plotting helpers (matplotlib)."""

from .simulate import SOLVERS as SOLVERS
from .simulate import SimulationError as SimulationError
from .simulate import Trajectory as Trajectory
from .simulate import simulate as simulate
