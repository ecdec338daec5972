"""Actuation models: joint motors, tendons, pneumatic chambers, pressure-driven actuators."""

from ._base import AbstractActuator as AbstractActuator
from ._base import JointMotor as JointMotor
from ._base import actuation_force as actuation_force
from ._base import actuation_matrix as actuation_matrix
from ._base import work_coordinates as work_coordinates
from .godage import GodagePressureActuator as GodagePressureActuator
from .pneumatic import PneumaticChambers as PneumaticChambers
from .tendon import Tendon as Tendon
