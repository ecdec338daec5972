"""Second-order jets along a motion, and the product rules that compose them (DESIGN §3.1).

The recursion needs, for every module, a configuration-dependent quantity ``f(q)`` (a pose, the
material points of a body), its Jacobian ``∂f/∂q`` (the projectors) and its second time derivative
along the motion, ``f̈ = D²f[q̇, q̇] + (∂f/∂q) q̈``. A :class:`Jet` holds the first two and the
*curvature* ``D²f[q̇, q̇]``; it is taken once by autodiff (:func:`jet`), and every quantity built
from jets by products (a pose composed with a pose, points seen from a moving frame) gets its jet
by the Leibniz rule instead of a second, deeper autodiff pass. This keeps the traced program of a
soft module about half as large as differentiating each composite function on its own, which is
what the compile time of everything downstream (Jacobians, Hessians, simulations) scales with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ._types import Array, Config, Float, Mat3, Pose, Vec3


class Jet(NamedTuple):
    """``f(q)``, ``∂f/∂q`` (coordinate axis last) and ``D²f[q̇, q̇]``, leaf by leaf."""

    value: Any
    jac: Any
    curv: Any


def jet(fn: Callable[[Config], Any], q: Config, qd: Config) -> Jet:
    """The jet of ``fn`` at ``q`` along ``q̇`` (``jax.jacfwd`` and a nested ``jax.jvp``).

    Arguments:
        fn: ``q -> pytree of arrays``, smooth. q, qd: ``(n,)`` configuration and velocity.

    Returns:
        :class:`Jet` with ``jac`` leaves of shape ``leaf.shape + (n,)``.
    """
    (value, _), (_, curv) = jax.jvp(lambda x: jax.jvp(fn, (x,), (qd,)), (q,), (qd,))
    return Jet(value, jax.jacfwd(fn)(q), curv)


def along(jac: Array, qd: Config) -> Array:
    """First derivative along the motion, ``(∂f/∂q) q̇``."""
    return jac @ qd


class PoseJet(NamedTuple):
    """Jet of a pose ``(R, t)``; Jacobians have the coordinate axis last."""

    rot: Mat3
    trans: Vec3
    rot_jac: Float[Array, "3 3 n"]
    trans_jac: Float[Array, "3 n"]
    rot_curv: Mat3
    trans_curv: Vec3


def pose_jet(fn: Callable[[Config], Pose], q: Config, qd: Config) -> PoseJet:
    """:func:`jet` of a pose-valued function, split into rotation and translation."""
    def split(x):
        pose = fn(x)
        return pose[:3, :3], pose[:3, 3]

    out = jet(split, q, qd)
    return PoseJet(out.value[0], out.value[1], out.jac[0], out.jac[1], out.curv[0], out.curv[1])


def constant_pose_jet(pose: Pose, n: int) -> PoseJet:
    """The jet of a pose that does not depend on ``q`` (``n`` coordinates)."""
    return PoseJet(pose[:3, :3], pose[:3, 3], jnp.zeros((3, 3, n), pose.dtype), jnp.zeros((3, n), pose.dtype),
                   jnp.zeros((3, 3), pose.dtype), jnp.zeros((3,), pose.dtype))


def compose(a: PoseJet, qd_a: Config, b: PoseJet, qd_b: Config) -> PoseJet:
    """Jet of ``X_a(q_a) X_b(q_b)`` in the stacked coordinates ``(q_a, q_b)``.

    ``R = R_a R_b``, ``t = R_a t_b + t_a``; the curvature by Leibniz,
    ``R'' = R_a'' R_b + 2 R_a' R_b' + R_a R_b''`` (``'`` the derivative along the motion).
    """
    ra_d, rb_d = along(a.rot_jac, qd_a), along(b.rot_jac, qd_b)
    tb_d = along(b.trans_jac, qd_b)
    rot = a.rot @ b.rot
    trans = a.rot @ b.trans + a.trans
    rot_jac = jnp.concatenate([jnp.einsum("ijk,jl->ilk", a.rot_jac, b.rot),
                               jnp.einsum("ij,jlk->ilk", a.rot, b.rot_jac)], axis=-1)
    trans_jac = jnp.concatenate([jnp.einsum("ijk,j->ik", a.rot_jac, b.trans) + a.trans_jac, a.rot @ b.trans_jac],
                                axis=-1)
    rot_curv = a.rot_curv @ b.rot + 2 * ra_d @ rb_d + a.rot @ b.rot_curv
    trans_curv = a.rot_curv @ b.trans + 2 * ra_d @ tb_d + a.rot @ b.trans_curv + a.trans_curv
    return PoseJet(rot, trans, rot_jac, trans_jac, rot_curv, trans_curv)


def points_in_moving_frame(x: Jet, frame: PoseJet, qd: Config) -> Jet:
    """Jet of ``p_k = Rᵀ (x_k − t)``: points ``x`` (``(K, 3)`` jet) seen from the moving ``frame``.

    Both jets are in the same coordinates; ``p'' = R''ᵀ d + 2 R'ᵀ d' + Rᵀ d''`` with ``d = x − t``.
    """
    d = x.value - frame.trans[None]
    d_jac = x.jac - frame.trans_jac[None]
    d_curv = x.curv - frame.trans_curv[None]
    rot_d = along(frame.rot_jac, qd)
    value = d @ frame.rot
    jac = jnp.einsum("kan,ab->kbn", d_jac, frame.rot) + jnp.einsum("ka,abn->kbn", d, frame.rot_jac)
    curv = d @ frame.rot_curv + 2 * along(d_jac, qd) @ rot_d + d_curv @ frame.rot
    return Jet(value, jac, curv)
