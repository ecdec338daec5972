"""Recursive inverse dynamics of a chain of rigid and soft modules: RNEA's counterpart.

Paper ``003_…`` Algorithm 2 / ``000_…`` Theorem 1 and Alg. 2 (eqs. 36–45, 50–55), in the form of
DESIGN §3: per-module terms in parallel, a forward ``lax.scan`` for frame velocities and
accelerations, body sums from mass moments, a backward ``lax.scan`` for the propagated wrenches,
and a projection on each module's coordinates. O(N).
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from .._scan import scan_modules
from .._types import Array, Config, Float, Vec3
from ..bodies._base import BodyMoments
from ..chain import Chain
from ._terms import ModuleTerms, chain_terms, scatter_modules


class FrameMotion(NamedTuple):
    """Angular velocity, angular acceleration and linear acceleration of ``{S_i}``, in ``{S_i}``."""

    omega: Vec3
    domega: Vec3
    acc: Vec3


class Wrench(NamedTuple):
    """Force and torque (about the frame origin) in one frame."""

    force: Vec3
    torque: Vec3


class InverseDynamicsResult(NamedTuple):
    """Generalized forces and the intermediate quantities of the recursion."""

    tau: Config  # generalized forces, shape (nq,)
    motion: FrameMotion  # per module, leading axis N
    wrench: Wrench  # F_i, T_i transmitted through each joint, in {S_i}
    base_wrench: Wrench  # what the chain exerts on the base, in {S_0}


def _forward_step(prev: FrameMotion, x: ModuleTerms) -> tuple[FrameMotion, FrameMotion]:
    # forward pass: frame velocities and accelerations (DESIGN §3.2, 000_… eqs. 8–19)
    w, dw, a = prev
    rt = x.rot.T
    t = x.trans
    omega = rt @ (w + x.omega_rel)
    domega = rt @ (dw + jnp.cross(w, x.omega_rel) + x.domega_rel)
    acc = rt @ (a + jnp.cross(dw, t) + jnp.cross(w, jnp.cross(w, t)) + 2 * jnp.cross(w, x.v_rel) + x.a_rel)
    out = FrameMotion(omega, domega, acc)
    return out, out


def _body_sums(m: BodyMoments, mo: FrameMotion) -> tuple[Vec3, Vec3, Float[Array, " n"]]:
    # body sums from mass moments (DESIGN §3.3): f_i, τ_i, π_i
    w, dw, a = mo
    c = m.first
    f = m.mass * a + jnp.cross(dw, c) + jnp.cross(w, jnp.cross(w, c)) + 2 * jnp.cross(w, m.vel_first) + m.acc_first
    iw = m.inertia @ w
    h = m.vel_outer
    tau = (jnp.cross(c, a) + m.inertia @ dw + jnp.cross(w, iw) + 2 * (jnp.trace(h) * w - h @ w) + m.acc_moment)
    ww = jnp.outer(w, w) - jnp.dot(w, w) * jnp.eye(3, dtype=w.dtype)
    pi = (m.proj_lin @ a - m.proj_rot @ dw + jnp.einsum("nab,ab->n", m.proj_quad, ww) - 2 * m.proj_cor @ w
          + m.proj_acc)
    return f, tau, pi


def _backward_step(distal: Wrench, x) -> tuple[Wrench, Wrench]:
    # backward pass: wrenches transmitted through each joint (DESIGN §3.4, 000_… Theorem 1)
    f, tau, rot, trans = x
    force = f + distal.force
    torque = tau + distal.torque
    rf = rot @ force
    return Wrench(rf, rot @ torque + jnp.cross(trans, rf)), Wrench(force, torque)


def recursion(chain: Chain, terms: ModuleTerms, base_acc: Vec3, tip_wrench: Wrench) -> InverseDynamicsResult:
    """Run the two passes on precomputed module terms (shared by every dynamics algorithm)."""
    dtype = terms.rot.dtype
    z = jnp.zeros(3, dtype=dtype)
    _, motion = scan_modules(_forward_step, FrameMotion(z, z, base_acc.astype(dtype)), terms)
    f, tau, pi = jax.vmap(_body_sums)(terms.moments, motion)
    base, wrench = scan_modules(_backward_step, tip_wrench, (f, tau, terms.rot, terms.trans), reverse=True)
    gen = (pi + jnp.einsum("inc,ic->in", terms.proj_v, wrench.force)
           + jnp.einsum("inc,ic->in", terms.proj_w, wrench.torque) + terms.internal)
    return InverseDynamicsResult(scatter_modules(chain, gen), motion, wrench, base)


def _tip_wrench(tip_force, tip_torque, dtype) -> Wrench:
    z = jnp.zeros(3, dtype=dtype)
    f = z if tip_force is None else -jnp.asarray(tip_force, dtype=dtype).reshape(3)
    t = z if tip_torque is None else -jnp.asarray(tip_torque, dtype=dtype).reshape(3)
    return Wrench(f, t)


@eqx.filter_jit
def inverse_dynamics_full(
    chain: Chain, q: Config, qd: Config, qdd: Config, *, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None, internal: bool = True,
) -> InverseDynamicsResult:
    """Like :func:`inverse_dynamics` but also returns frame motions and joint wrenches."""
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    qdd = chain.check_state(qdd, "qdd")
    g = chain.gravity if gravity is None else jnp.asarray(gravity)
    if g.shape != (3,):
        raise ValueError(f"`gravity` must have shape (3,), got shape {g.shape}.")
    terms = chain_terms(chain, q, qd, qdd, internal=internal)
    return recursion(chain, terms, -g, _tip_wrench(tip_force, tip_torque, terms.rot.dtype))


@eqx.filter_jit
def inverse_dynamics(
    chain: Chain, q: Config, qd: Config, qdd: Config, *, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None,
) -> Config:
    """Generalized forces ``τ = M(q) q̈ + c(q, q̇) + G(q) + ∂U/∂q + D q̇`` (RNEA's counterpart).

    The model-agnostic recursive Kane inverse dynamics (paper ``003_…`` Alg. 2, ``000_…`` Alg. 2,
    eqs. 36–45 and 50–55) as two ``lax.scan``s over modules.

    Arguments:
        chain: the :class:`~kane_jax.Chain`.
        q, qd, qdd: configuration, velocity and acceleration, each of shape ``(nq,)``.
        gravity: overrides ``chain.gravity`` (base-frame 3-vector; zeros turn gravity off).
        tip_force, tip_torque: external force [N] and torque [N m] applied *to* the tip, in the
            tip frame ``{S_N}``, torque about its origin; ``τ`` is what the actuators must supply
            on top of them.

    Returns:
        ``(nq,)`` generalized forces.

    Raises:
        ValueError: arrays whose shapes do not match the chain.
    """
    return inverse_dynamics_full(chain, q, qd, qdd, gravity=gravity, tip_force=tip_force,
                                 tip_torque=tip_torque).tau
