"""Actuation models: joint motors, tendons, pneumatic chambers, pressure-driven actuators.

The chain-level maps ``Q_a = A(q)ᵀ u`` are :func:`kane_jax.actuation_matrix` and
:func:`kane_jax.actuation_force` (``kane_jax/algorithms/actuation.py``).
"""

from ._base import AbstractActuator as AbstractActuator
from ._base import JointMotor as JointMotor
from .godage import GodagePressureActuator as GodagePressureActuator
from .pneumatic import PneumaticChambers as PneumaticChambers
from .tendon import Tendon as Tendon

__all__ = ["AbstractActuator", "GodagePressureActuator", "JointMotor", "PneumaticChambers", "Tendon"]
