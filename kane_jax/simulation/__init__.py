"""Simulation with diffrax, plotting helpers (matplotlib)."""

from .rosenbrock import Ros34PW2 as Ros34PW2
from .simulate import SOLVERS as SOLVERS
from .simulate import simulate as simulate
from .spectral import spectral_radius as spectral_radius
from .spectral import stable_step as stable_step
from .stabilized import StabilizedRK3 as StabilizedRK3
from .stabilized import StabilizedRK4 as StabilizedRK4
from .stiffness import StiffnessReport as StiffnessReport
from .stiffness import choose_solver as choose_solver
from .stiffness import stiffness as stiffness
from .trajectory import SimulationError as SimulationError
from .trajectory import Trajectory as Trajectory
from .trajectory import join as join
