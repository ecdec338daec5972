"""Distal frames of position-only body models from three points of a rigid contact area.

Paper ``003_…`` eqs. 4–7 (Assumption 2): when a model gives only positions ``g(q, s)`` (LVP
primitives, reduced FEM, learned kinematics), the pose of the distal frame is built from the pivot
``p0`` and two further points ``p1``, ``p2`` of the contact area with ``(p1 − p0) ⟂ (p2 − p0)``.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._types import Pose, Vec3
from ..lie import make_pose


def frame_from_points(p0: Vec3, p1: Vec3, p2: Vec3) -> Pose:
    """Pose with origin ``p0``, y axis along ``p1 − p0``, z axis along ``p2 − p0``, x = y × z.

    kane_jax's convention puts a body's backbone along +x, so with ``p1``/``p2`` on the contact area
    at ``±y``/``±z`` offsets the x axis is the contact area's outward normal (paper ``003_…`` eq. 6
    names it ``z``; only the labelling differs). The z axis is Gram–Schmidt-orthogonalized against
    y, so the result is a proper rigid transform even if the area deforms slightly; when the two
    directions are orthogonal (Assumption 2) this equals eqs. 6–7 exactly. Smooth wherever the
    three points are distinct and not collinear.

    Arguments:
        p0, p1, p2: ``(3,)`` points in the body's proximal frame.

    Returns:
        ``(4, 4)`` homogeneous transform.

    Raises:
        ValueError: inputs not of shape (3,).
    """
    for name, p in (("p0", p0), ("p1", p1), ("p2", p2)):
        if jnp.shape(p) != (3,):
            raise ValueError(f"`{name}` must have shape (3,), got shape {jnp.shape(p)}.")
    ey = p1 - p0
    ey = ey / jnp.linalg.norm(ey)
    v = p2 - p0
    ez = v - (v @ ey) * ey
    ez = ez / jnp.linalg.norm(ez)
    ex = jnp.cross(ey, ez)
    return make_pose(jnp.stack([ex, ey, ez], axis=1), p0)
