"""Joints: pure functions ``q_J ↦ SE(3)`` composed with a constant placement (DESIGN §2).

A joint's pose in the previous body's distal frame ``{S_{i-1}}`` is ``placement · motion(q_J)``.
Every joint may carry a linear spring and damper on its own coordinates (elastic joints, series
elastic actuators): generalized force ``stiffness (q_J - rest) + damping q̇_J``.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp

from . import _checks
from ._jets import PoseJet, pose_jet, screw_jet
from ._small import mm
from ._types import Array, Config, Mat3, Pose, Vec3
from .lie import compose_poses, make_pose, rot_axis, so3_exp, translation


class AbstractJoint(eqx.Module):
    """A joint: ``nq`` coordinates, a pose function and optional spring/damper.

    Subclasses implement :meth:`motion` and :meth:`screw_axis`; :meth:`transform` prepends the
    constant placement and :meth:`jet` differentiates it (closed form for screw joints).
    """

    placement_rot: eqx.AbstractVar[Mat3]
    placement_trans: eqx.AbstractVar[Vec3]
    stiffness: eqx.AbstractVar[Array]
    damping: eqx.AbstractVar[Array]
    nq: eqx.AbstractClassVar[int]

    @property
    def placement(self) -> Pose:
        """The constant 4×4 placement. Stored as its rotation and translation (two leaves): a
        stack of 4×4 poses is the one buffer of a 7-module arm's program over XLA:CPU's
        512-byte limit for running its kernels on the calling thread (``docs/architecture.md``)."""
        return make_pose(self.placement_rot, self.placement_trans)

    @abc.abstractmethod
    def motion(self, q: Config) -> Pose:
        """Pose of the joint's output frame relative to its placement frame."""

    def transform(self, q: Config) -> Pose:
        """Pose of the joint's output frame in the previous distal frame: ``placement · motion(q)``
        (component-wise, :func:`~kane_jax.lie.compose_poses`)."""
        return compose_poses(self.placement, self.motion(q))

    @abc.abstractmethod
    def screw_axis(self) -> Array | None:
        """Constant unit twist ``(ω, v)`` of a one-coordinate screw joint in its placement frame, else None.

        ``motion(q) = exp(q ξ̂)`` for these joints, so their jet has a closed form (:meth:`jet`).
        """

    def jet(self, q: Config, qd: Config | None) -> PoseJet:
        """Jet of :meth:`transform` along ``q̇`` (:class:`~kane_jax._jets.PoseJet`): closed form for a
        screw joint, autodiff otherwise; ``qd=None`` for the configuration-only jet."""
        screw = self.screw_axis()
        if screw is not None:
            return screw_jet(self.placement_rot, self.placement_trans, screw.astype(jnp.result_type(q, screw)), q, qd)
        return pose_jet(self.transform, q, qd)

    def internal_force(self, q: Config, qd: Config) -> Config:
        """Spring and damper generalized force ``K q + D q̇`` on the joint coordinates."""
        return self.stiffness @ q + self.damping @ qd

    def energy(self, q: Config) -> Array:
        """Elastic energy ``½ qᵀ K q`` stored in the joint spring."""
        return 0.5 * q @ (self.stiffness @ q)


def _joint_init(self, placement, stiffness, damping):
    pose = _checks.rigid_transform(placement, "placement")
    self.placement_rot, self.placement_trans = _checks.pose_parts(pose)
    self.stiffness = _checks.matrix_or_zeros(stiffness, "stiffness", self.nq)
    self.damping = _checks.matrix_or_zeros(damping, "damping", self.nq)


class Revolute(AbstractJoint):
    """Rotation by ``q`` [rad] about the unit ``axis`` through the placement frame's origin."""

    axis: Array
    placement_rot: Mat3
    placement_trans: Vec3
    stiffness: Array
    damping: Array
    nq = 1

    def __init__(self, axis=(0.0, 0.0, 1.0), placement=None, *, stiffness=None, damping=None):
        self.axis = _checks.unit_axis(axis)
        _joint_init(self, placement, stiffness, damping)

    def motion(self, q: Config) -> Pose:
        return make_pose(rot_axis(self.axis, q[0]), jnp.zeros(3, dtype=q.dtype))

    def screw_axis(self) -> Array:
        return jnp.concatenate([self.axis, jnp.zeros_like(self.axis)])


class Prismatic(AbstractJoint):
    """Translation by ``q`` [m] along the unit ``axis``."""

    axis: Array
    placement_rot: Mat3
    placement_trans: Vec3
    stiffness: Array
    damping: Array
    nq = 1

    def __init__(self, axis=(0.0, 0.0, 1.0), placement=None, *, stiffness=None, damping=None):
        self.axis = _checks.unit_axis(axis)
        _joint_init(self, placement, stiffness, damping)

    def motion(self, q: Config) -> Pose:
        return translation(q[0] * self.axis)

    def screw_axis(self) -> Array:
        return jnp.concatenate([jnp.zeros_like(self.axis), self.axis])


class Helical(AbstractJoint):
    """Screw motion: rotation by ``q`` [rad] about ``axis`` and translation ``pitch · q`` [m] along it."""

    axis: Array
    pitch: Array
    placement_rot: Mat3
    placement_trans: Vec3
    stiffness: Array
    damping: Array
    nq = 1

    def __init__(self, axis=(0.0, 0.0, 1.0), pitch=0.0, placement=None, *, stiffness=None, damping=None):
        self.axis = _checks.unit_axis(axis)
        self.pitch = _checks.as_float_array(pitch, "pitch", ())
        _joint_init(self, placement, stiffness, damping)

    def motion(self, q: Config) -> Pose:
        return make_pose(rot_axis(self.axis, q[0]), self.pitch * q[0] * self.axis)

    def screw_axis(self) -> Array:
        return jnp.concatenate([self.axis, self.pitch * self.axis])


class Fixed(AbstractJoint):
    """No motion: the output frame is the placement (zero coordinates)."""

    placement_rot: Mat3
    placement_trans: Vec3
    stiffness: Array
    damping: Array
    nq = 0

    def __init__(self, placement=None):
        _joint_init(self, placement, None, None)

    def motion(self, q: Config) -> Pose:
        return jnp.eye(4, dtype=self.placement_rot.dtype)

    def screw_axis(self) -> None:
        return None


class Universal(AbstractJoint):
    """Rotation by ``q[0]`` about ``axis1`` followed by ``q[1]`` about the rotated ``axis2``."""

    axis1: Array
    axis2: Array
    placement_rot: Mat3
    placement_trans: Vec3
    stiffness: Array
    damping: Array
    nq = 2

    def __init__(self, axis1=(1.0, 0.0, 0.0), axis2=(0.0, 1.0, 0.0), placement=None, *,
                 stiffness=None, damping=None):
        self.axis1 = _checks.unit_axis(axis1, "axis1")
        self.axis2 = _checks.unit_axis(axis2, "axis2")
        _joint_init(self, placement, stiffness, damping)

    def motion(self, q: Config) -> Pose:
        rot = mm(rot_axis(self.axis1, q[0]), rot_axis(self.axis2, q[1]))
        return make_pose(rot, jnp.zeros(3, dtype=rot.dtype))

    def screw_axis(self) -> None:
        return None


class Spherical(AbstractJoint):
    """Ball joint; ``q`` is the rotation vector [rad] (exponential coordinates, smooth at 0)."""

    placement_rot: Mat3
    placement_trans: Vec3
    stiffness: Array
    damping: Array
    nq = 3

    def __init__(self, placement=None, *, stiffness=None, damping=None):
        _joint_init(self, placement, stiffness, damping)

    def motion(self, q: Config) -> Pose:
        rot = so3_exp(q)
        return make_pose(rot, jnp.zeros(3, dtype=rot.dtype))

    def screw_axis(self) -> None:
        return None


class Free(AbstractJoint):
    """Floating base: ``q[:3]`` translation [m] then ``q[3:]`` rotation vector [rad]."""

    placement_rot: Mat3
    placement_trans: Vec3
    stiffness: Array
    damping: Array
    nq = 6

    def __init__(self, placement=None, *, stiffness=None, damping=None):
        _joint_init(self, placement, stiffness, damping)

    def motion(self, q: Config) -> Pose:
        return make_pose(so3_exp(q[3:]), q[:3])

    def screw_axis(self) -> None:
        return None
