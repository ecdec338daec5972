"""kane_jax: differentiable recursive dynamics of serial chains of rigid and soft modules.

Describe each body by its geometry (a pure ``position(q, s)`` and a distal frame ``tip(q)``);
kane_jax derives the recursive Kane inverse dynamics (Pustina et al.), the mass matrix, forward
dynamics, energies and kinematics, all ``jit``/``vmap``/``grad``-compatible.

kane_jax never changes global JAX configuration; enable float64 yourself with
``jax.config.update("jax_enable_x64", True)`` for validation-grade accuracy.
"""

from . import compliant as compliant
from . import control as control
from . import identification as identification
from . import lie as lie
from . import models as models
from . import optimize as optimize
from .actuation import AbstractActuator as AbstractActuator
from .actuation import GodagePressureActuator as GodagePressureActuator
from .actuation import JointMotor as JointMotor
from .actuation import PneumaticChambers as PneumaticChambers
from .actuation import Tendon as Tendon
from .algorithms.actuation import actuation_force as actuation_force
from .algorithms.actuation import actuation_matrix as actuation_matrix
from .algorithms.energy import generalized_gravity as generalized_gravity
from .algorithms.energy import kinetic_energy as kinetic_energy
from .algorithms.energy import nonlinear_effects as nonlinear_effects
from .algorithms.energy import potential_energy as potential_energy
from .algorithms.forward_dynamics import forward_dynamics as forward_dynamics
from .algorithms.inverse_dynamics import InverseDynamicsResult as InverseDynamicsResult
from .algorithms.inverse_dynamics import inverse_dynamics as inverse_dynamics
from .algorithms.inverse_dynamics import inverse_dynamics_full as inverse_dynamics_full
from .algorithms.kinematics import body_points as body_points
from .algorithms.kinematics import forward_kinematics as forward_kinematics
from .algorithms.kinematics import tip_jacobian as tip_jacobian
from .algorithms.kinematics import tip_pose as tip_pose
from .algorithms.mass_matrix import mass_matrix as mass_matrix
from .algorithms.time_derivatives import coriolis_matrix as coriolis_matrix
from .algorithms.time_derivatives import inverse_dynamics_derivatives as inverse_dynamics_derivatives
from .algorithms.time_derivatives import mass_matrix_derivatives as mass_matrix_derivatives
from .batch import batch_mesh as batch_mesh
from .batch import batch_simulate as batch_simulate
from .bodies import AbstractBody as AbstractBody
from .bodies import AbstractSoftBody as AbstractSoftBody
from .bodies import Body as Body
from .bodies import BodyMoments as BodyMoments
from .bodies import ChebyshevBasis as ChebyshevBasis
from .bodies import CosseratGVS as CosseratGVS
from .bodies import CosseratPCS as CosseratPCS
from .bodies import FullBasis as FullBasis
from .bodies import GaussianBasis as GaussianBasis
from .bodies import GodageSection as GodageSection
from .bodies import LearnedBody as LearnedBody
from .bodies import LegendreBasis as LegendreBasis
from .bodies import LinearElastic as LinearElastic
from .bodies import LVPBody as LVPBody
from .bodies import MonomialBasis as MonomialBasis
from .bodies import NeoHookean as NeoHookean
from .bodies import PiecewiseGaussianCurvature as PiecewiseGaussianCurvature
from .bodies import PlanarConstantCurvature as PlanarConstantCurvature
from .bodies import RigidBody as RigidBody
from .bodies import ScalarBasis as ScalarBasis
from .bodies import SpatialConstantCurvature as SpatialConstantCurvature
from .bodies import VariableRadiusPCC as VariableRadiusPCC
from .bodies import frame_from_points as frame_from_points
from .chain import Chain as Chain
from .compilation_cache import enable_compilation_cache as enable_compilation_cache
from .compilation_cache import enable_lowered_store as enable_lowered_store
from .joints import AbstractJoint as AbstractJoint
from .joints import Fixed as Fixed
from .joints import Free as Free
from .joints import Helical as Helical
from .joints import Prismatic as Prismatic
from .joints import Revolute as Revolute
from .joints import Spherical as Spherical
from .joints import Universal as Universal
from .models import godage_arm as godage_arm
from .models.urdf_import import JointLimits as JointLimits
from .models.urdf_import import from_urdf as from_urdf
from .simulation import SimulationError as SimulationError
from .simulation import Trajectory as Trajectory
from .simulation import plotting as plotting
from .simulation import simulate as simulate
from .simulation.plotting import animate as animate
from .simulation.plotting import plot_configuration as plot_configuration
from .simulation.plotting import plot_stroboscopic as plot_stroboscopic
from .simulation.view import view as view
from .statics import Equilibrium as Equilibrium
from .statics import HoldingInput as HoldingInput
from .statics import equilibrium as equilibrium
from .statics import holding_input as holding_input
from .statics import static_residual as static_residual
from .xla_flags import recommended_xla_flags as recommended_xla_flags
from .xla_flags import use_recommended_xla_flags as use_recommended_xla_flags

__version__ = "0.1.0"

__all__ = [
    "Trajectory", "SimulationError", "simulate", "plotting", "animate", "plot_configuration", "plot_stroboscopic",
    "view",
    "control", "identification", "lie", "optimize", "batch_mesh", "batch_simulate", "Equilibrium", "HoldingInput",
    "equilibrium", "holding_input", "static_residual",
    "LVPBody", "LinearElastic", "NeoHookean", "PneumaticChambers", "Tendon", "VariableRadiusPCC",
    "frame_from_points",
    "CosseratGVS", "CosseratPCS", "GodagePressureActuator", "GodageSection", "LearnedBody",
    "SpatialConstantCurvature", "godage_arm", "ChebyshevBasis", "FullBasis", "GaussianBasis", "LegendreBasis",
    "MonomialBasis", "PiecewiseGaussianCurvature", "ScalarBasis",
    "AbstractActuator", "JointMotor", "actuation_force", "actuation_matrix",
    "AbstractBody", "AbstractJoint", "AbstractSoftBody", "Body", "BodyMoments", "Chain", "Fixed", "Free",
    "Helical", "InverseDynamicsResult", "PlanarConstantCurvature", "Prismatic", "Revolute", "RigidBody",
    "Spherical", "Universal", "body_points", "forward_dynamics", "forward_kinematics", "generalized_gravity",
    "inverse_dynamics", "inverse_dynamics_full", "coriolis_matrix", "inverse_dynamics_derivatives",
    "mass_matrix_derivatives", "kinetic_energy", "mass_matrix", "nonlinear_effects",
    "potential_energy", "tip_jacobian", "tip_pose", "JointLimits", "from_urdf",
    "enable_compilation_cache", "enable_lowered_store", "recommended_xla_flags", "use_recommended_xla_flags",
]
