"""Per-module terms of the recursion (DESIGN §3.1): no recursion, all modules in parallel.

For module ``i`` with ``q_i = (q_J, q_B)``: the relative pose ``X_i = X_J(q_J) h(q_B)`` of
``{S_i}`` in ``{S_{i-1}}`` with its body-frame generators (the projectors ``Pω``, ``Pv`` expressed
in ``{S_i}``) and curvature along ``q̇``, from the joint's jet (closed form for screw joints) and
the body's jet composed by the Leibniz rule; the body's mass moments; the internal forces. Rows
are padded to the largest module size so that modules stack and scan.

One call serves a whole forward dynamics: the configuration-dependent part feeds the mass-matrix
columns, the velocity-dependent part the bias (``003_…`` §5.2: the mass matrix alongside the ID).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._jets import compose, place, velocity
from .._modules import chain_block_diagonal, has_body_coordinates, map_modules, n_rows, pad_rows
from .._small import mtv, sum_small
from .._types import Array, Config, Float, Mat3, Vec3
from ..bodies._moments import BodyMoments


class ModuleTerms(NamedTuple):
    """Local terms of one module, in ``{S_i}`` unless said; rows are the module's padded coordinates."""

    rot: Mat3  # R_i: orientation of {S_i} in {S_{i-1}}
    trans: Vec3  # t_i: origin of {S_i} in {S_{i-1}}, in {S_{i-1}}
    trans_local: Vec3  # R_iᵀ t_i
    gen: Float[Array, "n 6"]  # rows (Pω, Pv): vee(R_iᵀ ∂_k R_i), R_iᵀ ∂_k t_i
    vel: Float[Array, " 6"]  # genᵀ q̇: relative angular and linear velocity
    curv: Float[Array, " 6"]  # (vee(R_iᵀ R_i''), R_iᵀ t_i''), '' = D²[q̇, q̇]
    body: BodyMoments  # own-coordinate fields None when no body of the chain has coordinates
    inertia: Mat3  # Σ w (|p|² 1 − p pᵀ) about the origin of {S_i}
    jac_rot: Float[Array, "n 3"] | None  # Σ w ∂_j p × p (None: no body coordinates in the chain)
    vel_first: Vec3 | None  # Σ w ṗ (None: as jac_rot)
    vel_outer: Mat3 | None  # Σ w ṗ pᵀ (None: as jac_rot)
    internal: Float[Array, " n"]  # joint and body internal generalized forces


# the moments that sum over a body's own coordinates (None in a chain whose bodies have none)
_OWN_MOMENTS = ("jac_first", "jac_second", "gram", "gyro", "curv_first", "curv_moment", "curv_jac")


def _cross_of(g: Array) -> Array:
    return jnp.stack([g[..., 1, 2] - g[..., 2, 1], g[..., 2, 0] - g[..., 0, 2], g[..., 0, 1] - g[..., 1, 0]], -1)


def _pad_moments(m: BodyMoments, front: int, total: int) -> BodyMoments:
    return m._replace(jac_first=pad_rows(m.jac_first, front, total), jac_second=pad_rows(m.jac_second, front, total),
                      gram=pad_rows(m.gram, front, total, (0, 1)), gyro=pad_rows(m.gyro, front, total),
                      curv_jac=pad_rows(m.curv_jac, front, total))


def module_terms(joint, body, q: Config, qd: Config | None, n_max: int, *, internal: bool = True,
                 own: bool = True) -> ModuleTerms:
    """Local terms of one module for the state ``(q, q̇)`` of its coordinates (``qd=None``: configuration
    only, for ``q̇ = 0``: no velocity or curvature terms are traced, and the internal forces are those at rest
    velocity, the statics' elastic forces).

    Rigid bodies contribute closed-form moments and a constant distal frame; soft bodies their jets
    (:meth:`~kane_jax.bodies.AbstractBody.jets`). Fixed joints place the body's jet by a constant
    pose, screw joints compose their closed-form jet, other joints their autodiff jet. With
    ``own=False`` (no body of the chain has coordinates, :func:`~kane_jax._modules.has_body_coordinates`)
    the own-coordinate moments, structurally zero, are None and the kernels skip their terms.
    """
    nj = joint.nq
    qj, qb = q[:nj], q[nj:]
    qdj, qdb = (None, None) if qd is None else (qd[:nj], qd[nj:])
    tip, mom = body.jets(qb, qdb)
    if nj == 0:
        pose = joint.transform(qj)
        rel = place(pose[:3, :3], pose[:3, 3], tip)
    else:
        rel = compose(joint.jet(qj, qdj), qdj, tip, qdb)
    n = q.shape[0]
    dtype = rel.rot.dtype
    gen = pad_rows(rel.gen, 0, n_max)
    p = mom.second
    inertia = (p[0, 0] + p[1, 1] + p[2, 2]) * jnp.eye(3, dtype=dtype) - p
    vel = jnp.zeros((6,), dtype) if qd is None or not n else velocity(rel, qd)
    if not own:
        mom = mom._replace(**dict.fromkeys(_OWN_MOMENTS))
        jac_rot = vel_first = vel_outer = None
    else:
        mom = _pad_moments(mom, nj, n_max)
        jac_rot = _cross_of(mom.jac_second)
        if qd is None:
            vel_first, vel_outer = jnp.zeros((3,), dtype), jnp.zeros((3, 3), dtype)
        else:
            qd_rows = pad_rows(qd, 0, n_max)
            vel_first = sum_small(mom.jac_first * qd_rows[:, None], 0)
            vel_outer = sum_small(mom.jac_second * qd_rows[:, None, None], 0)
    if internal:
        vj, vb = (jnp.zeros_like(qj), jnp.zeros_like(qb)) if qd is None else (qdj, qdb)
        force = pad_rows(jnp.concatenate([joint.internal_force(qj, vj), body.internal_force(qb, vb)]), 0, n_max)
    else:
        force = jnp.zeros((n_max,), dtype)
    return ModuleTerms(rel.rot, rel.trans, mtv(rel.rot, rel.trans), gen, vel, rel.curv, mom,
                       inertia, jac_rot, vel_first, vel_outer, force)


def chain_terms(chain, q: Config, qd: Config | None, *, internal: bool = True) -> ModuleTerms:
    """Local terms of every module, stacked in chain order (leading axis N)."""
    n_max = n_rows(chain)
    own = has_body_coordinates(chain)
    return map_modules(chain, lambda j, b, x, v: module_terms(j, b, x, v, n_max, internal=internal, own=own), q, qd)


def internal_forces(chain, q: Config, qd: Config) -> Float[Array, "N n_max"]:
    """Elastic and dissipative generalized forces of joints and bodies, per module rows (the stiff part)."""
    n_max = n_rows(chain)

    def one(joint, body, x, v):
        nj = joint.nq
        force = jnp.concatenate([joint.internal_force(x[:nj], v[:nj]), body.internal_force(x[nj:], v[nj:])])
        return pad_rows(force, 0, n_max)

    return map_modules(chain, one, q, qd)


def internal_force_derivatives(chain, q: Config, qd: Config) -> tuple[Float[Array, "nq nq"], Float[Array, "nq nq"]]:
    """``∂Q_int/∂q`` and ``∂Q_int/∂q̇``, block diagonal: each module's forces depend on its own
    coordinates only, so each block is one forward-mode Jacobian per group of identical modules."""
    n_max = n_rows(chain)

    def one(joint, body, x, v):
        nj = joint.nq

        def force(x, v):
            return pad_rows(jnp.concatenate([joint.internal_force(x[:nj], v[:nj]),
                                             body.internal_force(x[nj:], v[nj:])]), 0, n_max)

        k, d = jax.jacfwd(force, argnums=(0, 1))(x, v)
        return pad_rows(k, 0, n_max, axes=(1,)), pad_rows(d, 0, n_max, axes=(1,))

    k, d = map_modules(chain, one, q, qd)
    return chain_block_diagonal(chain, k), chain_block_diagonal(chain, d)


def relative_poses(chain, q: Config) -> tuple[Float[Array, "N 3 3"], Float[Array, "N 3"]]:
    """Rotations and origins of ``{S_i}`` in ``{S_{i-1}}``, chain order, without derivatives."""

    def one(joint, body, x):
        pose = joint.transform(x[: joint.nq]) @ body.tip(x[joint.nq:])
        return pose[:3, :3], pose[:3, 3]

    return map_modules(chain, one, q)
