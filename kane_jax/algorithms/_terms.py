"""Per-module terms of the recursion (DESIGN §3.1): no recursion, all modules in parallel.

For module ``i`` with ``q_i = (q_J, q_B)`` this computes the relative pose ``X_i = X_J(q_J) h(q_B)``
of ``{S_i}`` in ``{S_{i-1}}``, its velocities and accelerations along the motion (nested
``jax.jvp``), the projectors ``Pv_i``, ``Pω_i`` (``jax.jacfwd``), the body's mass moments and the
internal forces, padded to the largest module size so that they can be stacked and scanned.
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from .._jets import PoseJet, compose, constant_pose_jet, pose_jet
from .._math import vee
from .._types import Array, Config, Float, Mat3, Vec3
from ..bodies._base import AbstractBody, BodyMoments
from ..chain import Chain
from ..joints import AbstractJoint


class ModuleTerms(NamedTuple):
    """Local terms of one module; rows of the projectors are the module's (padded) coordinates."""

    rot: Mat3  # R_i: orientation of {S_i} in {S_{i-1}}
    trans: Vec3  # t_i: origin of {S_i} in {S_{i-1}}
    omega_rel: Vec3  # vee(Ṙ Rᵀ), in {S_{i-1}}
    domega_rel: Vec3  # vee(R̈ Rᵀ + Ṙ Ṙᵀ)
    v_rel: Vec3  # ṫ
    a_rel: Vec3  # ẗ
    proj_v: Float[Array, "n 3"]  # Pv_i = (∂t_i/∂q_i)ᵀ R_i
    proj_w: Float[Array, "n 3"]  # rows vee((∂R_i/∂q_ik) R_iᵀ)ᵀ R_i
    moments: BodyMoments
    internal: Float[Array, " n"]  # joint and body internal generalized forces


def _pad_rows(x: Array, front: int, total: int) -> Array:
    pad = [(front, total - front - x.shape[0])] + [(0, 0)] * (x.ndim - 1)
    return jnp.pad(x, pad)


class _RelativeMotion(NamedTuple):
    """Pose of ``{S_i}`` in ``{S_{i-1}}``, its motion along ``(q̇, q̈)`` and the projectors (DESIGN §3.1)."""

    rot: Mat3
    trans: Vec3
    omega_rel: Vec3
    domega_rel: Vec3
    v_rel: Vec3
    a_rel: Vec3
    proj_v: Float[Array, "n 3"]
    proj_w: Float[Array, "n 3"]


def _screw_motion(joint: AbstractJoint, screw, body: AbstractBody, q: Config, qd: Config,
                  qdd: Config) -> _RelativeMotion:
    """Closed-form relative motion of a rigid module on a one-coordinate screw joint.

    ``X(q) = P exp(q ξ̂) T`` with constant ``P``, ``ξ = (ω_a, v_a)``, ``T``: in ``{S_{i-1}}`` the
    joint twist is ``S = Ad_P ξ = (ω, v)`` with ``ω = R_P ω_a``, ``v = R_P v_a + p_P × ω``, and
    ``Ẋ X⁻¹ = Ŝ q̇``, hence ``ω_rel = ω q̇``, ``ω̇_rel = ω q̈``, ``ṫ = s q̇`` with ``s = ω × t + v``,
    ``ẗ = s q̈ + ω × s q̇²``, ``Pv = sᵀ R``, ``Pω = ωᵀ R`` (DESIGN §3.1 without autodiff).
    """
    pose = joint.transform(q) @ body.tip(q[1:])
    rot, trans = pose[:3, :3], pose[:3, 3]
    rp, pp = joint.placement[:3, :3], joint.placement[:3, 3]
    w = rp @ screw[:3]
    v = rp @ screw[3:] + jnp.cross(pp, w)
    s = jnp.cross(w, trans) + v
    qd1, qdd1 = qd[0], qdd[0]
    return _RelativeMotion(rot, trans, w * qd1, w * qdd1, s * qd1, s * qdd1 + jnp.cross(w, s) * qd1**2,
                           (s @ rot)[None], (w @ rot)[None])


def _jet_motion(pose: PoseJet, qd: Config, qdd: Config) -> _RelativeMotion:
    """Relative motion from the jet of ``X_i = X_J(q_J) h(q_B)`` (DESIGN §3.1)."""
    rot = pose.rot
    rot_d, trans_d = pose.rot_jac @ qd, pose.trans_jac @ qd
    rot_dd, trans_dd = pose.rot_curv + pose.rot_jac @ qdd, pose.trans_curv + pose.trans_jac @ qdd
    proj_w = jax.vmap(lambda dr: vee(dr @ rot.T))(jnp.moveaxis(pose.rot_jac, -1, 0)).reshape(-1, 3) @ rot
    return _RelativeMotion(rot, pose.trans, vee(rot_d @ rot.T), vee(rot_dd @ rot.T + rot_d @ rot_d.T), trans_d,
                           trans_dd, pose.trans_jac.T @ rot, proj_w)


def module_terms(
    joint: AbstractJoint, body: AbstractBody, q: Config, qd: Config, qdd: Config, n_max: int,
    *, internal: bool = True,
) -> ModuleTerms:
    """Local terms of one module for the motion ``(q, q̇, q̈)`` of its coordinates.

    Rigid modules on one-coordinate screw joints (revolute, prismatic, helical) take the closed
    form of :func:`_screw_motion`. Every other module composes the jet of the joint's transform
    (autodiff; constant for a fixed joint) with the jet of the body's distal frame, which the body
    returns together with its moments from one jet of its geometry
    (:meth:`~kane_jax.bodies.AbstractBody.tip_jet_and_moments`, :func:`kane_jax._jets.compose`).
    """
    nj = joint.nq
    qj, qb = q[:nj], q[nj:]
    screw = joint.screw_axis() if (nj == 1 and body.nq == 0) else None
    if screw is not None:
        rel = _screw_motion(joint, screw, body, q, qd, qdd)
        mom = body.moments(qb, qd[nj:], qdd[nj:])
    else:
        tip, mom = body.tip_jet_and_moments(qb, qd[nj:], qdd[nj:])
        joint_jet = pose_jet(joint.transform, qj, qd[:nj]) if nj else constant_pose_jet(joint.transform(qj), 0)
        rel = _jet_motion(compose(joint_jet, qd[:nj], tip, qd[nj:]), qd, qdd)
    n = q.shape[0]
    mom = mom._replace(**{f: _pad_rows(getattr(mom, f), nj, n_max) for f in
                          ("proj_lin", "proj_rot", "proj_quad", "proj_cor", "proj_acc")})
    if internal:
        force = jnp.concatenate([joint.internal_force(qj, qd[:nj]), body.internal_force(qb, qd[nj:])])
    else:
        force = jnp.zeros((n,), dtype=rel.rot.dtype)
    return ModuleTerms(
        rot=rel.rot, trans=rel.trans, omega_rel=rel.omega_rel, domega_rel=rel.domega_rel, v_rel=rel.v_rel,
        a_rel=rel.a_rel, proj_v=_pad_rows(rel.proj_v, 0, n_max), proj_w=_pad_rows(rel.proj_w, 0, n_max),
        moments=mom, internal=_pad_rows(force, 0, n_max),
    )


def gather_modules(chain: Chain, x: Config) -> list[Array]:
    """Split a chain vector into one ``(G, n_g)`` array per group."""
    return [x[chain.layout.group_index(g)] for g in range(len(chain.groups))]


def scatter_modules(chain: Chain, padded: Float[Array, "N n_max"]) -> Config:
    """Inverse of the padding: ``(N, n_max)`` per-module rows back to the ``(nq,)`` chain vector."""
    return padded.reshape(-1)[chain.layout.flat_index()]


def chain_terms(chain: Chain, q: Config, qd: Config, qdd: Config, *, internal: bool = True) -> ModuleTerms:
    """Local terms of every module, stacked in chain order (leading axis N)."""
    lay = chain.layout
    parts = []
    for (joint, body), qg, qdg, qddg in zip(chain.groups, gather_modules(chain, q), gather_modules(chain, qd),
                                           gather_modules(chain, qdd)):
        fn = lambda j, b, a, v, c: module_terms(j, b, a, v, c, lay.n_max, internal=internal)  # noqa: E731
        parts.append(eqx.filter_vmap(fn)(joint, body, qg, qdg, qddg))
    if len(parts) == 1:
        return parts[0]
    stacked = jax.tree.map(lambda *xs: jnp.concatenate(xs), *parts)
    order = jnp.asarray(lay.order)
    return jax.tree.map(lambda x: x[order], stacked)


def relative_poses(chain: Chain, q: Config) -> Float[Array, "N 4 4"]:
    """Poses ``X_i(q_i)`` of ``{S_i}`` in ``{S_{i-1}}``, chain order, without derivatives."""
    parts = []
    for (joint, body), (nj, _), qg in zip(chain.groups, chain.layout.group_nq, gather_modules(chain, q)):
        fn = lambda j, b, x, nj=nj: j.transform(x[:nj]) @ b.tip(x[nj:])  # noqa: E731
        parts.append(eqx.filter_vmap(fn)(joint, body, qg))
    if len(parts) == 1:
        return parts[0]
    return jnp.concatenate(parts)[jnp.asarray(chain.layout.order)]
