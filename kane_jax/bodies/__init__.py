"""Body models: rigid, generic (user geometry) and the soft-body library."""

from ._base import AbstractBody as AbstractBody
from ._base import AbstractSoftBody as AbstractSoftBody
from ._base import BodyMoments as BodyMoments
from .constant_curvature import PlanarConstantCurvature as PlanarConstantCurvature
from .frames import frame_from_points as frame_from_points
from .generic import Body as Body
from .lvp import LVPBody as LVPBody
from .lvp import tube_rule as tube_rule
from .lvp_primitives import AbstractPrimitive as AbstractPrimitive
from .lvp_primitives import Bend as Bend
from .lvp_primitives import Cavity as Cavity
from .lvp_primitives import Shear as Shear
from .lvp_primitives import Source as Source
from .lvp_primitives import Stretch as Stretch
from .lvp_primitives import Twist as Twist
from .materials import AbstractMaterial as AbstractMaterial
from .materials import LinearElastic as LinearElastic
from .materials import NeoHookean as NeoHookean
from .quadrature import disk_rule as disk_rule
from .quadrature import gauss_legendre as gauss_legendre
from .quadrature import rod_rule as rod_rule
from .rigid import RigidBody as RigidBody
from .variable_radius import VariableRadiusPCC as VariableRadiusPCC
