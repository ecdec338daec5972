"""Rigid body with mass, centre of mass and inertia: closed-form moments (DESIGN §3.3)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from .. import _checks
from .._jets import PoseJet, constant_pose_jet
from .._types import Array, Config, Float, Mat3, Pose, Vec3
from ._base import AbstractBody, BodyMoments


class RigidBody(AbstractBody):
    """A rigid link.

    Arguments:
        mass: mass [kg], positive.
        com: centre of mass [m] in the body's proximal frame (the joint's output frame).
        inertia: 3×3 inertia [kg m²] about the centre of mass, axes of the proximal frame;
            symmetric positive definite and satisfying the triangle inequality.
        tip: 4×4 pose of the distal frame ``{S_i}`` (where the next joint attaches) in the
            proximal frame; identity if None.

    Raises:
        ValueError: non-positive mass, wrong shapes, non-physical inertia, non-rigid ``tip``.
    """

    mass: Float[Array, ""]
    com: Vec3
    inertia: Mat3
    tip_pose: Pose
    nq: int = eqx.field(static=True, default=0)

    def __init__(self, mass, com=(0.0, 0.0, 0.0), inertia=None, tip=None):
        self.mass = _checks.as_float_array(mass, "mass", ())
        _checks.positive(self.mass, "mass")
        self.com = _checks.as_float_array(com, "com", (3,))
        _checks.check_finite(self.com, "com")
        if inertia is None:
            inertia = jnp.zeros((3, 3))
            self.inertia = inertia
        else:
            self.inertia = _checks.as_float_array(inertia, "inertia", (3, 3))
            _checks.symmetric_psd(self.inertia, "inertia", definite=True)
            if _checks.is_concrete(self.inertia):
                eig = jnp.linalg.eigvalsh(self.inertia)
                if eig[0] + eig[1] < eig[2] * (1 - 1e-9):
                    raise ValueError(
                        f"`inertia` must satisfy the triangle inequality of principal moments, "
                        f"got principal moments {eig.tolist()}."
                    )
        self.tip_pose = _checks.rigid_transform(tip, "tip")
        self.nq = 0

    def tip(self, q: Config) -> Pose:
        return self.tip_pose

    def points_in_frame(self, q: Config) -> Float[Array, "K 3"]:
        """The proximal origin, the centre of mass and the distal origin (a polyline for plots)."""
        return jnp.stack([jnp.zeros(3, dtype=self.com.dtype), self.com, self.tip_pose[:3, 3]])

    def tip_jet_and_moments(self, q: Config, qd: Config, qdd: Config) -> tuple[PoseJet, BodyMoments]:
        return constant_pose_jet(self.tip_pose, 0), self.moments(q, qd, qdd)

    def moments(self, q: Config, qd: Config, qdd: Config) -> BodyMoments:
        rot, trans = self.tip_pose[:3, :3], self.tip_pose[:3, 3]
        c = rot.T @ (self.com - trans)  # centre of mass in {S_i}
        i_c = rot.T @ self.inertia @ rot
        eye = jnp.eye(3, dtype=c.dtype)
        i_o = i_c + self.mass * (jnp.dot(c, c) * eye - jnp.outer(c, c))  # parallel-axis theorem
        z3 = jnp.zeros(3, dtype=c.dtype)
        z33 = jnp.zeros((3, 3), dtype=c.dtype)
        return BodyMoments(
            mass=self.mass, first=self.mass * c, inertia=i_o, vel_first=z3, acc_first=z3,
            vel_outer=z33, acc_moment=z3, proj_lin=jnp.zeros((0, 3), c.dtype),
            proj_rot=jnp.zeros((0, 3), c.dtype), proj_quad=jnp.zeros((0, 3, 3), c.dtype),
            proj_cor=jnp.zeros((0, 3), c.dtype), proj_acc=jnp.zeros((0,), c.dtype),
        )
