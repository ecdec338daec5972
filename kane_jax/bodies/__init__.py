"""Body models: rigid, generic (user geometry) and the soft-body library."""

from ._base import AbstractBody as AbstractBody
from ._base import AbstractSoftBody as AbstractSoftBody
from ._base import BodyMoments as BodyMoments
from .constant_curvature import PlanarConstantCurvature as PlanarConstantCurvature
from .generic import Body as Body
from .quadrature import disk_rule as disk_rule
from .quadrature import gauss_legendre as gauss_legendre
from .quadrature import rod_rule as rod_rule
from .rigid import RigidBody as RigidBody
