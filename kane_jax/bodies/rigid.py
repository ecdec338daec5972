"""Rigid body with mass, centre of mass and inertia: closed-form moments (DESIGN §3.3)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._jets import PoseJet, constant_pose_jet
from .._small import mm, mtm, mtv
from .._types import Array, Config, Float, Mat3, Pose, Vec3
from ..lie import make_pose
from ._base import AbstractBody
from ._moments import BodyMoments


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
    tip_rot: Mat3
    tip_trans: Vec3
    nq: int = eqx.field(static=True, default=0)

    def __init__(self, mass, com=(0.0, 0.0, 0.0), inertia=None, tip=None):
        self.mass = _checks.as_float_array(mass, "mass", ())
        _checks.positive(self.mass, "mass")
        self.com = _checks.as_float_array(com, "com", (3,))
        _checks.check_finite(self.com, "com")
        if inertia is None:
            self.inertia = jax.device_put(np.zeros((3, 3)))  # as jnp.zeros((3, 3)), without a program
        else:
            self.inertia = _checks.as_float_array(inertia, "inertia", (3, 3))
            _checks.symmetric_psd(self.inertia, "inertia", definite=True)
            if _checks.is_concrete(self.inertia):
                eig = np.linalg.eigvalsh(np.asarray(self.inertia))  # a check: on the host, no program
                if eig[0] + eig[1] < eig[2] * (1 - 1e-9):
                    raise ValueError(
                        f"`inertia` must satisfy the triangle inequality of principal moments, "
                        f"got principal moments {eig.tolist()}."
                    )
        pose = _checks.rigid_transform(tip, "tip")
        # rotation and translation as two leaves (see AbstractJoint.placement)
        self.tip_rot, self.tip_trans = _checks.pose_parts(pose)
        self.nq = 0

    @property
    def tip_pose(self) -> Pose:
        """The constant 4×4 pose of the distal frame in the proximal frame."""
        return make_pose(self.tip_rot, self.tip_trans)

    def tip(self, q: Config) -> Pose:
        return self.tip_pose

    def points_in_frame(self, q: Config) -> Float[Array, "K 3"]:
        """The proximal origin, the centre of mass and the distal origin (a polyline for plots)."""
        return jnp.stack([jnp.zeros(3, dtype=self.com.dtype), self.com, self.tip_trans])

    def jets(self, q: Config, qd: Config | None) -> tuple[PoseJet, BodyMoments]:
        """Constant distal frame; moments in closed form (DESIGN §3.3): ``first = m c``,
        ``second = m c cᵀ + S_c`` with ``S_c = tr(I_c)/2 · 1 − I_c`` the second moment about the CoM."""
        rot, trans = self.tip_rot, self.tip_trans
        c = mtv(rot, self.com - trans)  # centre of mass in {S_i}
        i_c = mm(mtm(rot, self.inertia), rot)  # element-wise: no dot kernels in a call's program
        eye = jnp.eye(3, dtype=c.dtype)
        second = self.mass * (c[:, None] * c[None, :]) + 0.5 * (i_c[0, 0] + i_c[1, 1] + i_c[2, 2]) * eye - i_c
        z3 = jnp.zeros((3,), c.dtype)
        mom = BodyMoments(mass=self.mass, first=self.mass * c, second=second, jac_first=jnp.zeros((0, 3), c.dtype),
                          jac_second=jnp.zeros((0, 3, 3), c.dtype), gram=jnp.zeros((0, 0), c.dtype),
                          gyro=jnp.zeros((0, 3), c.dtype), curv_first=z3, curv_moment=z3,
                          curv_jac=jnp.zeros((0,), c.dtype))
        return constant_pose_jet(rot, trans, 0), mom

    def internal_force(self, q: Config, qd: Config) -> Config:
        return jnp.zeros_like(q)

    def energy(self, q: Config) -> Array:
        return jnp.zeros((), dtype=self.mass.dtype)
