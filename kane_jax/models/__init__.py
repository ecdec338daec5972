"""Ready-made robots from the papers (rigid test arms, the VSA robot of ``001_…`` Table I, Godage's arm)."""

from .godage import godage_arm as godage_arm
from .robots import dh_module as dh_module
from .robots import iiwa_like as iiwa_like
from .robots import mdh_module as mdh_module
from .robots import planar_2r as planar_2r
from .robots import vsa_3dof as vsa_3dof
from .robots import vsa_3dof_links as vsa_3dof_links

__all__ = ["godage_arm", "dh_module", "iiwa_like", "mdh_module", "planar_2r", "vsa_3dof", "vsa_3dof_links"]
