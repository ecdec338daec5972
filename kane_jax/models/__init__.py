"""Ready-made robots: rigid test arms, the UR10e and iiwa-like arm from shipped URDF files, the VSA robot of
``001_…`` Table I, Godage's multisection arm (``004_…``), and the URDF importer."""

from .godage import godage_arm as godage_arm
from .robots import dh_module as dh_module
from .robots import iiwa_like as iiwa_like
from .robots import mdh_module as mdh_module
from .robots import planar_2r as planar_2r
from .robots import ur10e as ur10e
from .robots import vsa_3dof as vsa_3dof
from .robots import vsa_3dof_links as vsa_3dof_links

__all__ = ["godage_arm", "dh_module", "iiwa_like", "mdh_module", "planar_2r", "ur10e", "vsa_3dof", "vsa_3dof_links"]
