"""The UR10e and iiwa-like arms as they were built by hand before the URDF files (test oracle).

The DH/MDH tables and builders of ``kane_jax/models/robots.py`` as they were, so that the shipped
``kane_jax/models/urdf/*.urdf`` files are checked against the published tables they were written
from, not only against Pinocchio reading the same files.
"""

from __future__ import annotations

import numpy as np

from kane_jax import Chain
from kane_jax.models import dh_module, mdh_module

# KUKA LBR iiwa 14 R820, modified DH (002_… §6.2, frames of Stürz et al. 2017, their Fig. 2).
_IIWA_ALPHA = (0.0, np.pi / 2, -np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2)
_IIWA_D = (0.0, 0.0, 0.42, 0.0, 0.4, 0.0, 0.0)
_IIWA_MASS = (3.94781, 4.50275, 2.45520, 2.61155, 3.41000, 3.38795, 0.35432)
_IIWA_COM = (
    (-0.00351, 0.00160, -0.03139), (-0.00767, 0.16669, -0.00355), (-0.00225, -0.03492, -0.02652),
    (0.00020, -0.05268, 0.03818), (0.00005, -0.00237, -0.21134), (0.00049, 0.02019, -0.02750),
    (-0.03466, -0.02324, 0.07138),
)
# (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) about the CoM, link-frame axes [kg m²]
_IIWA_INERTIA = (
    (0.00455, 0.00454, 0.00029, 0.0, 0.0, 0.0), (0.00032, 0.00010, 0.00042, 0.0, 0.0, 0.0),
    (0.00223, 0.00219, 0.00073, -0.00005, 0.00007, 0.00007),
    (0.03844, 0.01144, 0.04988, 0.00088, -0.00112, -0.00011),
    (0.00277, 0.00284, 0.00012, -0.00001, 0.00001, 0.00001),
    (0.00050, 0.00281, 0.00232, -0.00005, -0.00003, -0.00004),
    (0.00795, 0.01089, 0.00294, -0.00022, -0.00029, -0.00029),
)


def _feasible_inertia(row) -> np.ndarray:
    """Symmetric inertia from a 6-row; nudged onto the triangle inequality if rounding broke it."""
    xx, yy, zz, xy, xz, yz = row
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    eig, vec = np.linalg.eigh(inertia)
    deficit = eig[2] - eig[0] - eig[1]
    if deficit > -1e-7:  # on/over the boundary after 5-digit rounding: move 1e-6 kg m² inside
        eig = eig + np.array([deficit + 1e-6, 0.0, 0.0])
        inertia = vec @ np.diag(eig) @ vec.T
    return inertia


def iiwa_like(*, gravity=(0.0, 0.0, -9.81)) -> Chain:
    """The iiwa-like arm from its MDH table (the library's builder before the URDF file)."""
    mods = []
    for i in range(7):
        mods.append(mdh_module(_IIWA_ALPHA[i], 0.0, _IIWA_D[i], _IIWA_MASS[i], _IIWA_COM[i],
                               _feasible_inertia(_IIWA_INERTIA[i])))
    return Chain(mods, gravity=gravity)


# Universal Robots UR10e, standard DH (Universal Robots, "Parameters for calculations of kinematics
# and dynamics", support article 45257, e-Series software 5.1): a, d, α, link masses and centres of
# mass in the DH frame of each link.
UR10E_DH = {"a": (0.0, -0.6127, -0.57155, 0.0, 0.0, 0.0), "d": (0.1807, 0.0, 0.0, 0.17415, 0.11985, 0.11655),
            "alpha": (np.pi / 2, 0.0, 0.0, np.pi / 2, -np.pi / 2, 0.0)}
UR10E_MASS = (7.369, 13.051, 3.989, 2.100, 1.980, 0.615)
UR10E_COM = ((0.021, 0.000, 0.027), (0.380, 0.000, 0.158), (0.240, 0.000, 0.068), (0.000, 0.007, 0.018),
             (0.000, 0.007, 0.018), (0.000, 0.000, -0.026))
# (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) about the CoM, DH-frame axes [kg m²]: the inertia matrices of the
# e-Series controller's dynamic model (urcontrol.conf.UR10e), as commonly used in open UR10e models
UR10E_INERTIA = (
    (0.03408, 0.03529, 0.02156, 2e-05, -0.00425, 8e-05), (0.02814, 0.77068, 0.76943, 5e-05, -0.01561, 2e-05),
    (0.01014, 0.30928, 0.30646, 8e-05, 0.00916, 0.0), (0.00296, 0.00222, 0.00258, -1e-05, 0.0, -0.00024),
    (0.00296, 0.00222, 0.00258, -1e-05, 0.0, -0.00024), (0.00040, 0.00041, 0.00034, 0.0, 0.0, 0.0),
)


def ur10e(*, gravity=(0.0, 0.0, -9.81), damping=None) -> Chain:
    """The UR10e from its DH table (the library's builder before the URDF file)."""
    mods = []
    for i in range(6):
        mods.append(dh_module(UR10E_DH["d"][i], UR10E_DH["a"][i], UR10E_DH["alpha"][i], UR10E_MASS[i], UR10E_COM[i],
                              _feasible_inertia(UR10E_INERTIA[i]), damping=damping))
    return Chain(mods, gravity=gravity)
