"""Kinetic and potential energy, nonlinear effects and generalized gravity."""

from __future__ import annotations

import jax.numpy as jnp

from .._dispatch import entry_jit
from .._modules import map_modules
from .._small import mv
from .._types import Array, Config, Float, Vec3
from ._recursion import inverse_dynamics_kernel
from ._terms import chain_terms
from .inverse_dynamics import check_gravity
from .kinematics import world_poses


@entry_jit
def nonlinear_effects(chain, q: Config, qd: Config) -> Config:
    """``c(q, q̇) + G(q) + ∂U/∂q + D q̇ = ID(q, q̇, 0)``: everything but ``M q̈`` (Pinocchio's ``nle``).

    Raises:
        ValueError: ``q`` or ``qd`` of the wrong shape.
    """
    return inverse_dynamics_kernel(chain, chain.check_state(q, "q"), chain.check_state(qd, "qd"), None)


@entry_jit
def generalized_gravity(chain, q: Config) -> Config:
    """Gravity generalized forces ``G(q) = ∂V_g/∂q`` (no elastic or damping forces).

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    return inverse_dynamics_kernel(chain, q, None, None, internal=False)  # at rest: no velocity terms


@entry_jit
def kinetic_energy(chain, q: Config, qd: Config) -> Float[Array, ""]:
    """``T = ½ q̇ᵀ M(q) q̇``, with ``M q̇ = ID(q, 0, q̇)`` (no gravity, no internal forces) in O(N).

    Raises:
        ValueError: ``q`` or ``qd`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    m_qd = inverse_dynamics_kernel(chain, q, None, qd, gravity=jnp.zeros(3, dtype=q.dtype), internal=False)
    return 0.5 * qd @ m_qd


@entry_jit
def potential_energy(chain, q: Config, *, gravity: Vec3 | None = None) -> Float[Array, ""]:
    """Gravitational plus elastic energy ``V = −Σ m_i gᵀ p_CoM,i + Σ U_i(q_i)``.

    Consistent with :func:`~kane_jax.inverse_dynamics`: ``∂V/∂q = G(q) + K q`` for linear elastic bodies.

    Raises:
        ValueError: ``q`` of the wrong shape, ``gravity`` not a 3-vector.
    """
    q = chain.check_state(q, "q")
    g = check_gravity(chain, gravity)
    terms = chain_terms(chain, q, None, internal=False)
    rots, origins = world_poses(chain, q)
    com_world = mv(rots, terms.body.first) + terms.body.mass[:, None] * origins
    v_grav = -jnp.sum(com_world @ g)
    elastic = map_modules(chain, lambda j, b, x: j.energy(x[: j.nq]) + b.energy(x[j.nq:]), q)
    return v_grav + jnp.sum(elastic)
