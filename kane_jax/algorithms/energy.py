"""Kinetic and potential energy, nonlinear effects and generalized gravity."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from .._types import Array, Config, Float, Vec3
from ..chain import Chain
from ._terms import chain_terms, gather_modules
from .inverse_dynamics import inverse_dynamics, inverse_dynamics_full
from .kinematics import forward_kinematics


@eqx.filter_jit
def nonlinear_effects(chain: Chain, q: Config, qd: Config) -> Config:
    """``c(q, q̇) + G(q) + ∂U/∂q + D q̇ = ID(q, q̇, 0)``: everything but ``M q̈`` (Pinocchio's ``nle``)."""
    return inverse_dynamics(chain, q, qd, jnp.zeros_like(chain.check_state(qd, "qd")))


@eqx.filter_jit
def generalized_gravity(chain: Chain, q: Config) -> Config:
    """Gravity generalized forces ``G(q) = ∂V_g/∂q`` (no elastic or damping forces)."""
    q = chain.check_state(q, "q")
    z = jnp.zeros_like(q)
    return inverse_dynamics_full(chain, q, z, z, internal=False).tau


@eqx.filter_jit
def kinetic_energy(chain: Chain, q: Config, qd: Config) -> Float[Array, ""]:
    """``T = ½ q̇ᵀ M(q) q̇``, with ``M q̇`` from one inverse-dynamics call (O(N))."""
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    z = jnp.zeros_like(q)
    m_qd = inverse_dynamics_full(chain, q, z, qd, gravity=jnp.zeros(3, dtype=q.dtype), internal=False).tau
    return 0.5 * qd @ m_qd


@eqx.filter_jit
def potential_energy(chain: Chain, q: Config, *, gravity: Vec3 | None = None) -> Float[Array, ""]:
    """Gravitational plus elastic energy ``V = −Σ m_i gᵀ p_CoM,i + Σ U_i(q_i)``.

    Consistent with :func:`inverse_dynamics`: ``∂V/∂q = G(q) + K q`` for linear elastic bodies.
    """
    q = chain.check_state(q, "q")
    g = chain.gravity if gravity is None else jnp.asarray(gravity)
    z = jnp.zeros_like(q)
    terms = chain_terms(chain, q, z, z, internal=False)
    poses = forward_kinematics(chain, q)
    com_world = jnp.einsum("iab,ib->ia", poses[:, :3, :3], terms.moments.first) + (
        terms.moments.mass[:, None] * poses[:, :3, 3])
    v_grav = -jnp.sum(com_world @ g)
    v_el = jnp.zeros((), dtype=v_grav.dtype)
    for (joint, body), (nj, _), qg in zip(chain.groups, chain.layout.group_nq, gather_modules(chain, q)):
        energy = eqx.filter_vmap(lambda j, b, x, nj=nj: j.energy(x[:nj]) + b.energy(x[nj:]))
        v_el = v_el + jnp.sum(energy(joint, body, qg))
    return v_grav + v_el
