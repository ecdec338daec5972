"""Rigid test robots from the papers: the planar 2R of ``002_…`` §6.1, an iiwa-like 7-DoF arm
(``002_…`` §6.2), the 3-DoF spatial arm of ``001_…`` Table I and the UR10e of ``003_…`` Sim. 2, plus
Denavit–Hartenberg helpers.

Every revolute joint of these robots turns about the z axis of its frame; the body that follows
carries the link's inertial data in the joint's output frame, so the kane_jax coordinates are the
usual joint angles.
"""

from __future__ import annotations

import numpy as np

from ..bodies.rigid import RigidBody
from ..chain import Chain
from ..joints import Revolute


def _rot_x(alpha: float) -> np.ndarray:
    c, s = np.cos(alpha), np.sin(alpha)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def _pose(rot: np.ndarray, trans) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = rot
    out[:3, 3] = trans
    return out


def dh_module(d, a, alpha, mass, com, inertia, *, damping=None, stiffness=None):
    """A revolute module in the *standard* DH convention (``001_…`` §IV).

    Link frame ``i`` is reached from frame ``i−1`` by ``Rz(q) Tz(d) Tx(a) Rx(α)``; the joint turns
    about ``z_{i−1}`` and the body's distal frame is frame ``i``.

    Arguments:
        d, a, alpha: DH parameters [m, m, rad]. mass [kg].
        com: centre of mass in frame ``i`` [m]. inertia: 3×3 central inertia in frame ``i`` [kg m²].
        damping, stiffness: optional viscous friction / spring of the joint (link side).

    Returns:
        A ``(Revolute, RigidBody)`` pair.
    """
    tip = _pose(np.eye(3), (0.0, 0.0, d)) @ _pose(np.eye(3), (a, 0.0, 0.0)) @ _pose(_rot_x(alpha), (0.0, 0.0, 0.0))
    rot = tip[:3, :3]
    com_proximal = tip[:3, :3] @ np.asarray(com, dtype=float) + tip[:3, 3]
    inertia_proximal = rot @ np.asarray(inertia, dtype=float) @ rot.T
    joint = Revolute((0.0, 0.0, 1.0), damping=damping, stiffness=stiffness)
    return joint, RigidBody(mass, com_proximal, inertia_proximal, tip=tip)


def mdh_module(alpha_prev, a_prev, d, mass, com, inertia, *, damping=None):
    """A revolute module in the *modified* (Craig) DH convention (``002_…`` §6.2).

    Link frame ``i`` is ``Rx(α_{i−1}) Tx(a_{i−1}) Rz(q) Tz(d)`` in frame ``i−1``; since ``Rz`` and
    ``Tz`` commute, the joint's placement is ``Rx(α_{i−1}) Tx(a_{i−1}) Tz(d)`` and its output frame
    *is* link frame ``i``, where the inertial data are given (body tip = identity).
    """
    placement = _pose(_rot_x(alpha_prev), (a_prev, 0.0, 0.0)) @ _pose(np.eye(3), (0.0, 0.0, d))
    joint = Revolute((0.0, 0.0, 1.0), placement=placement, damping=damping)
    return joint, RigidBody(mass, com, inertia)


def planar_2r(L1=1.0, L2=1.0, m1=1.0, m2=1.0, g=9.81) -> Chain:
    """The planar 2R robot of paper ``002_…`` §6.1 (its Fig. 1).

    Point masses ``m1``, ``m2`` at the link ends (lengths ``L1``, ``L2``), joints about z, links along
    x at ``q = 0`` and gravity ``g`` along −y, so that the closed-form ``τ``, ``τ̇``, ``τ̈`` of §6.1
    hold (e.g. ``τ2 = L2 m2 (L1 sin q2 q̇1² + L2 (q̈1 + q̈2) + g cos(q1 + q2) + L1 q̈1 cos q2)``).

    Raises:
        ValueError: non-positive lengths or masses.
    """
    for name, v in (("L1", L1), ("L2", L2), ("m1", m1), ("m2", m2)):
        if not np.isfinite(v) or v <= 0:
            raise ValueError(f"`{name}` must be positive and finite, got {v!r}.")
    mods = []
    for length, mass in ((L1, m1), (L2, m2)):
        tip = _pose(np.eye(3), (length, 0.0, 0.0))
        mods.append((Revolute((0.0, 0.0, 1.0)), RigidBody(mass, (length, 0.0, 0.0), None, tip=tip)))
    return Chain(mods, gravity=(0.0, -float(g), 0.0))


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
    """A 7-DoF KUKA LBR iiwa 14 R820-like arm for the second-order ID example of ``002_…`` §6.2.

    Kinematics: modified DH frames of ``002_…`` §6.2 (``R_{i−1,i} = Rx(±π/2)``, ``r_{2,3} = (0, r3, 0)``,
    ``r_{4,5} = (0, −r5, 0)``) with the iiwa 14 R820 offsets ``r3 = 0.42 m``, ``r5 = 0.40 m``; the
    base offset (0.36 m) and the flange are left out as in the paper.

    Inertial data: the physically-feasible identified model of Y. R. Stürz, L. M. Affolter,
    R. S. Smith, *Parameter identification of the KUKA LBR iiwa robot including constraints on
    physical feasibility*, IFAC-PapersOnLine 50(1):6863–6868, 2017 — the model ``002_…`` cites as
    [29] for its Table 1 (lost in our copy of the paper). Values are the 5-decimal figures of that
    table as transcribed in public code; the order of the off-diagonal products (taken as
    ``Ixy, Ixz, Iyz``) could not be checked against the original and they are small (≤ 1.1e-3).
    Links 2 and 4 lie on the triangle-inequality boundary after rounding; their smallest principal
    moment is raised by ~1e-6 kg m² so that :class:`~kane_jax.RigidBody` accepts them.
    No motor inertias or friction: this is a benchmark/example model, not a calibrated one.
    """
    mods = []
    for i in range(7):
        mods.append(mdh_module(_IIWA_ALPHA[i], 0.0, _IIWA_D[i], _IIWA_MASS[i], _IIWA_COM[i],
                               _feasible_inertia(_IIWA_INERTIA[i])))
    return Chain(mods, gravity=gravity)


# Buondonno & De Luca 2016 (001_…), Table I: standard DH, masses of the augmented links, inertias.
VSA3_DH = {"alpha": (np.pi / 2, 0.0, 0.0), "a": (0.0, 0.30, 0.30), "d": (0.0, 0.0, 0.0)}
VSA3_MASS = (9.0478, 6.7858, 5.0894)
VSA3_COM = ((0.0, 0.0, 0.0), (-0.15, 0.0, 0.0), (-0.15, 0.0, 0.0))
VSA3_INERTIA = ((0.1299, 0.0185, 0.1299), (0.0139, 0.0578, 0.0578), (0.0104, 0.0434, 0.0434))
VSA3_LINK_DAMPING = 1e-5  # D_i [N m s/rad]
VSA3_MOTOR_INERTIA = (3.20, 3.05, 1.98)  # B_{k,i} [kg m²], same for both motors k = 1, 2
VSA3_MOTOR_DAMPING = 1e-4  # D_{mk,i} [N m s/rad]
VSA3_K, VSA3_KC = 400.0, 2000.0  # cubic springs K φ + K_c φ³ [N m/rad], [N m/rad³]


def vsa_3dof_links(*, gravity=(0.0, 0.0, -9.81)) -> Chain:
    """Link side of the 3-DoF spatial VSA robot of ``001_…`` Table I (standard DH).

    Joint 1 turns about the vertical base axis, so gravity (−z) acts on links 2 and 3 only, as in
    the paper. The link viscous friction ``D_i = 1e-5`` is the joints' damping.
    """
    mods = []
    for i in range(3):
        mods.append(dh_module(VSA3_DH["d"][i], VSA3_DH["a"][i], VSA3_DH["alpha"][i], VSA3_MASS[i], VSA3_COM[i],
                              np.diag(VSA3_INERTIA[i]), damping=VSA3_LINK_DAMPING))
    return Chain(mods, gravity=gravity)


def vsa_3dof(*, gravity=(0.0, 0.0, -9.81)):
    """The 3-DoF spatial VSA robot of ``001_…`` §V / Table I as a :class:`~kane_jax.compliant.VSARobot`.

    Link side :func:`vsa_3dof_links`; two motors per joint with ``B_{k,i} = (3.20, 3.05, 1.98)`` kg m²
    and ``D_{mk,i} = 1e-4`` N m s/rad; identical cubic springs ``τ_ek = K φ_k + K_c φ_k³`` with
    ``K = 400`` N m/rad, ``K_c = 2000`` N m/rad³ (minimum stiffness ``2K = 800`` N m/rad).
    """
    from ..compliant import CubicSpring, VSARobot

    spring = CubicSpring(VSA3_K, VSA3_KC, n=3)
    return VSARobot(vsa_3dof_links(gravity=gravity), VSA3_MOTOR_INERTIA, VSA3_MOTOR_DAMPING, spring)


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
    """The 6-DoF Universal Robots UR10e (paper ``003_…`` Sim. 2), standard DH, base upright.

    Kinematics, masses and centres of mass: the published table of Universal Robots (support
    article "Parameters for calculations of kinematics and dynamics"; ``d₁ = 0.1807``,
    ``a₂ = −0.6127``, ``a₃ = −0.57155``, ``d₄ = 0.17415``, ``d₅ = 0.11985``, ``d₆ = 0.11655`` m).
    Central inertias: the controller's dynamic model (``urcontrol.conf.UR10e``) as transcribed in
    open-source UR10e models (not published by UR in the article; small off-diagonal terms).
    Coordinates are the DH joint angles (UR's zero configuration: arm stretched horizontally).
    No motor inertias or friction unless ``damping`` (viscous, per joint) is given.

    Arguments:
        gravity: base-frame gravity [m/s²]. damping: optional joint viscous friction [N m s/rad].

    Returns:
        the :class:`~kane_jax.Chain` of six revolute modules (``nq = 6``).
    """
    mods = []
    for i in range(6):
        mods.append(dh_module(UR10E_DH["d"][i], UR10E_DH["a"][i], UR10E_DH["alpha"][i], UR10E_MASS[i], UR10E_COM[i],
                              _feasible_inertia(UR10E_INERTIA[i]), damping=damping))
    return Chain(mods, gravity=gravity)
