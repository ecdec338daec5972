"""Rigid test robots from the papers: the planar 2R of ``002_…`` §6.1, an iiwa-like 7-DoF arm
(``002_…`` §6.2), the 3-DoF spatial arm of ``001_…`` Table I and the UR10e of ``003_…`` Sim. 2, plus
Denavit–Hartenberg helpers.

Every revolute joint of these robots turns about the z axis of its frame; the body that follows
carries the link's inertial data in the joint's output frame, so the kane_jax coordinates are the
usual joint angles. The UR10e and the iiwa-like arm are read from the URDF files shipped in
``kane_jax/models/urdf/`` (:func:`~kane_jax.from_urdf`), which hold their data and sources.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from ..bodies.rigid import RigidBody
from ..chain import Chain
from ..joints import Revolute
from .urdf_import import from_urdf


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


def _from_package(name: str, gravity) -> Chain:
    """A chain from the URDF file ``kane_jax/models/urdf/<name>.urdf`` shipped with the package."""
    return from_urdf((resources.files(__package__) / "urdf" / f"{name}.urdf").read_text(), gravity=gravity)


def iiwa_like(*, gravity=(0.0, 0.0, -9.81)) -> Chain:
    """A 7-DoF KUKA LBR iiwa 14 R820-like arm for the second-order ID example of ``002_…`` §6.2.

    Built by :func:`~kane_jax.from_urdf` from ``kane_jax/models/urdf/iiwa_like.urdf`` (joints
    ``iiwa_joint_1…7``, links ``iiwa_link_0…7``; limits: :meth:`~kane_jax.JointLimits.from_urdf`).

    Kinematics: modified DH frames of ``002_…`` §6.2 (``R_{i−1,i} = Rx(±π/2)``, ``r_{2,3} = (0, r3, 0)``,
    ``r_{4,5} = (0, −r5, 0)``) with the iiwa 14 R820 offsets ``r3 = 0.42 m``, ``r5 = 0.40 m``; the
    base offset (0.36 m) and the flange are left out as in the paper. Module ``i``'s frames are MDH
    frame ``i``.

    Inertial data: the physically-feasible identified model of Y. R. Stürz, L. M. Affolter,
    R. S. Smith, *Parameter identification of the KUKA LBR iiwa robot including constraints on
    physical feasibility*, IFAC-PapersOnLine 50(1):6863–6868, 2017 — the model ``002_…`` cites as
    [29] for its Table 1 (lost in our copy of the paper). Values are the 5-decimal figures of that
    table as transcribed in public code; the order of the off-diagonal products (taken as
    ``Ixy, Ixz, Iyz``) could not be checked against the original and they are small (≤ 1.1e-3).
    As transcribed, links 2, 4 and 7 break the triangle inequality of principal moments (by 0,
    2.2e-4 and 5.1e-5 kg m²); their smallest principal moment is raised by the deficit plus 1e-6 kg m²
    so that :class:`~kane_jax.RigidBody` accepts them. No motor inertias or friction: this is a
    benchmark/example model, not a calibrated one.

    Arguments:
        gravity: base-frame gravity [m/s²].

    Returns:
        the :class:`~kane_jax.Chain` of seven revolute modules (``nq = 7``).
    """
    return _from_package("iiwa_like", gravity)


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


def ur10e(*, gravity=(0.0, 0.0, -9.81), damping=None) -> Chain:
    """The 6-DoF Universal Robots UR10e (paper ``003_…`` Sim. 2), standard DH, base upright.

    Built by :func:`~kane_jax.from_urdf` from ``kane_jax/models/urdf/ur10e.urdf`` (joints
    ``shoulder_pan_joint`` … ``wrist_3_joint``; tip ``tool0`` = DH frame 6; limits:
    :meth:`~kane_jax.JointLimits.from_urdf`). Module ``i``'s frames are link ``i``'s: DH frame
    ``i−1`` turned by ``q_i``.

    Kinematics, masses and centres of mass: the published table of Universal Robots (support
    article "Parameters for calculations of kinematics and dynamics"; ``d₁ = 0.1807``,
    ``a₂ = −0.6127``, ``a₃ = −0.57155``, ``d₄ = 0.17415``, ``d₅ = 0.11985``, ``d₆ = 0.11655`` m).
    Central inertias: the controller's dynamic model (``urcontrol.conf.UR10e``) as transcribed in
    open-source UR10e models (not published by UR in the article; small off-diagonal terms).
    Coordinates are the DH joint angles (UR's zero configuration: arm stretched horizontally).
    No motor inertias or friction unless ``damping`` (viscous, per joint) is given.

    Arguments:
        gravity: base-frame gravity [m/s²]. damping: optional joint viscous friction [N m s/rad],
            the same for every joint.

    Returns:
        the :class:`~kane_jax.Chain` of six revolute modules (``nq = 6``).
    """
    chain = _from_package("ur10e", gravity)
    if damping is None:
        return chain
    return Chain([(Revolute(j.axis, j.placement, damping=damping), b) for j, b in chain.modules], gravity=gravity)
