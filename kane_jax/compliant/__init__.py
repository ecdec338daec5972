"""Compliant actuation: elastic-joint robots (Spong) and antagonistic VSA robots (paper ``001_…``)."""

from ._integrate import integrate as integrate
from .elastic_joint import ElasticJointInverseDynamics as ElasticJointInverseDynamics
from .elastic_joint import ElasticJointRobot as ElasticJointRobot
from .elastic_joint import elastic_joint_dynamics as elastic_joint_dynamics
from .elastic_joint import elastic_joint_inverse_dynamics as elastic_joint_inverse_dynamics
from .elastic_joint import simulate_elastic_joint as simulate_elastic_joint
from .springs import CubicSpring as CubicSpring
from .springs import Deflections as Deflections
from .springs import TaskError as TaskError
from .springs import decoupling_matrix as decoupling_matrix
from .springs import solve_deflections as solve_deflections
from .vsa import VSAInverseDynamics as VSAInverseDynamics
from .vsa import VSARobot as VSARobot
from .vsa import hurwitz_gains as hurwitz_gains
from .vsa import split_state as split_state
from .vsa import vsa_dynamics as vsa_dynamics
from .vsa import vsa_inverse_dynamics as vsa_inverse_dynamics
from .vsa import vsa_inverse_dynamics_trajectory as vsa_inverse_dynamics_trajectory
from .vsa import vsa_state as vsa_state
from .vsa_control import simulate_vsa as simulate_vsa
from .vsa_control import vsa_feedback_linearization as vsa_feedback_linearization
from .vsa_control import vsa_output_derivatives as vsa_output_derivatives

__all__ = [
    "CubicSpring", "Deflections", "ElasticJointInverseDynamics", "ElasticJointRobot", "TaskError",
    "VSAInverseDynamics", "VSARobot", "decoupling_matrix", "elastic_joint_dynamics",
    "elastic_joint_inverse_dynamics", "hurwitz_gains", "integrate", "simulate_elastic_joint", "simulate_vsa",
    "solve_deflections", "split_state", "vsa_dynamics", "vsa_feedback_linearization", "vsa_inverse_dynamics",
    "vsa_inverse_dynamics_trajectory", "vsa_output_derivatives", "vsa_state",
]
