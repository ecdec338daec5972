"""Trajectory optimization: single shooting through ``simulate`` and direct transcription with the ID."""

from .collocation import CollocationResult as CollocationResult
from .collocation import Knots as Knots
from .collocation import transcribe as transcribe
from .inputs import InputSequence as InputSequence
from .shooting import ShootingResult as ShootingResult
from .shooting import rollout as rollout
from .shooting import shooting as shooting
from .shooting import tip_reaching_cost as tip_reaching_cost

__all__ = ["CollocationResult", "InputSequence", "Knots", "ShootingResult", "rollout", "shooting",
           "tip_reaching_cost", "transcribe"]
