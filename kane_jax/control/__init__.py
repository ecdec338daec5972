"""Model-based controllers: callables ``u(t, q, q̇)`` for ``kane_jax.simulate(control=...)``."""

from .computed_torque import ComputedTorque as ComputedTorque
from .pd_compensation import PDCompensation as PDCompensation
from .pfbl import CollocatedPFBL as CollocatedPFBL
from .reference import ActuationReference as ActuationReference
from .reference import CubicReference as CubicReference
from .reference import QuinticReference as QuinticReference
from .reference import SetPoint as SetPoint

__all__ = ["ActuationReference", "CollocatedPFBL", "ComputedTorque", "CubicReference", "PDCompensation",
           "QuinticReference", "SetPoint"]
