"""Forward kinematics: world poses of the distal frames and world positions of material points."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._dispatch import entry_jit
from .._modules import module_coordinates, scan_modules
from .._small import mm, mv
from .._types import Array, Config, Float
from ..lie import make_pose
from ._terms import relative_poses


def world_poses(chain, q: Config) -> tuple[Float[Array, "N 3 3"], Float[Array, "N 3"]]:
    """Kernel of :func:`forward_kinematics`: world rotations and origins of ``{S_1} … {S_N}``."""
    rots, origins = relative_poses(chain, q)

    def step(x, rel):
        rot, trans = mm(x[0], rel[0]), mv(x[0], rel[1]) + x[1]
        return (rot, trans), (rot, trans)

    init = (jnp.eye(3, dtype=rots.dtype), jnp.zeros((3,), rots.dtype))
    return scan_modules(step, init, (rots, origins))[1]


@entry_jit
def forward_kinematics(chain, q: Config) -> Float[Array, "N 4 4"]:
    """World (base-frame) poses of the distal frames ``{S_1} … {S_N}``.

    ``T_0i = X_1 X_2 ⋯ X_i`` (paper ``003_…`` eqs. 9–10), a ``lax.scan`` over modules.

    Arguments:
        chain: the chain. q: configuration ``(nq,)``.

    Returns:
        ``(N, 4, 4)`` homogeneous transforms; the last one is the tip.

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    return make_pose(*world_poses(chain, q))


def body_points(chain, q: Config) -> list[Float[Array, "K 3"]]:
    """World positions of each module's material points (rigid bodies: joint, CoM and tip).

    For plotting and post-processing; one ``(K_i, 3)`` array per module, chain order.

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    poses = forward_kinematics(chain, q)
    out = []
    for i, (joint, body) in enumerate(chain.modules):
        qi = module_coordinates(chain, i, q)
        qj, qb = qi[: joint.nq], qi[joint.nq:]
        prev = jnp.eye(4, dtype=poses.dtype) if i == 0 else poses[i - 1]
        proximal = prev @ joint.transform(qj)
        pts = body.points_in_frame(qb)
        out.append(pts @ proximal[:3, :3].T + proximal[None, :3, 3])
    return out


@entry_jit
def tip_pose(chain, q: Config) -> Float[Array, "4 4"]:
    """World pose of the tip frame ``{S_N}``."""
    return forward_kinematics(chain, q)[-1]


@entry_jit
def tip_jacobian(chain, q: Config) -> Float[Array, "6 nq"]:
    """Geometric Jacobian of the tip: rows (linear velocity, angular velocity) in the base frame."""
    q = chain.check_state(q, "q")

    def pose(x):
        rots, origins = world_poses(chain, x)
        return origins[-1], rots[-1]

    _, r = pose(q)
    jp, jr = jax.jacfwd(pose)(q)
    ang = jnp.einsum("abn,cb->acn", jr, r)  # dR Rᵀ
    omega = 0.5 * jnp.stack([ang[2, 1] - ang[1, 2], ang[0, 2] - ang[2, 0], ang[1, 0] - ang[0, 1]])
    return jnp.concatenate([jp, omega], axis=0)
