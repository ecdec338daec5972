"""Distal frames of position-only body models from three points of a rigid contact area.

Paper ``003_…`` eqs. 4–7 (Assumption 2): when a model gives only positions ``g(q, s)`` (LVP
primitives, reduced FEM, learned kinematics), the pose of the distal frame is built from the pivot
``p0`` and two further points ``p1``, ``p2`` of the contact area with ``(p1 − p0) ⟂ (p2 − p0)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._types import Array, Pose, Vec3
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
    ey, _ = _unit(p1 - p0)
    v = p2 - p0
    ez, _ = _unit(v - (v @ ey) * ey)
    ex = jnp.cross(ey, ez)
    return make_pose(jnp.stack([ex, ey, ez], axis=1), p0)


@jax.custom_jvp
def _unit(v: Vec3) -> tuple[Vec3, Array]:
    """``u = v / |v|`` and ``r = 1 / |v|``, with the JVP ``du = r (dv − u (u·dv))``, ``dr = −r² (u·dv)``.

    The rule is written in ``u`` and ``r`` themselves, so every higher derivative (the distal frame
    of an LVP body is differentiated to fourth order in the tests' q-Hessians) reuses them instead of
    differentiating the square root and the quotient again: the two normalizations took 5.5k of the
    58.0k optimized HLO instructions of an LVP body's ID/M/FD Hessian program (55.0k with the rule).
    """
    r = 1 / jnp.sqrt(jnp.sum(v * v))  # no dot: XLA:CPU lays out batched dots by copies
    return v * r, r


@_unit.defjvp
def _unit_jvp(primals, tangents):
    (v,), (dv,) = primals, tangents
    u, r = _unit(v)
    along = jnp.sum(u * dv)
    return (u, r), (r * (dv - u * along), -r * r * along)
