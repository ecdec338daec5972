"""Model-based controllers: callables ``u(t, q, q̇)`` for ``kane_jax.simulate(control=...)``."""

from .allocation import allocate_tensions as allocate_tensions
from .computed_torque import ComputedTorque as ComputedTorque
from .pd_compensation import PDCompensation as PDCompensation
from .pfbl import CollocatedPFBL as CollocatedPFBL
from .pull_only import PullOnly as PullOnly
from .reference import ActuationReference as ActuationReference
from .reference import CubicReference as CubicReference
from .reference import QuinticReference as QuinticReference
from .reference import SetPoint as SetPoint

__all__ = ["ActuationReference", "allocate_tensions", "CollocatedPFBL", "ComputedTorque", "CubicReference",
           "PDCompensation", "PullOnly", "QuinticReference", "SetPoint"]
