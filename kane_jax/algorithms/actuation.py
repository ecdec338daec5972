"""Actuation by virtual work at the chain level: ``Q_a = A(q)ᵀ u`` with ``A = ∂h/∂q`` (paper ``000_…`` eq. 57).

Every actuator (:mod:`kane_jax.actuation`) exposes work coordinates ``h(q)`` conjugate to its
inputs; the chain's are concatenated in the order of ``chain.actuators``. Kernels
(:func:`work_coordinates`, :func:`input_matrix`, :func:`input_force`, :func:`generalized_input`)
serve the controllers, the statics and the simulation; :func:`actuation_matrix` and
:func:`actuation_force` are the validated entry points.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._dispatch import entry_jit
from .._modules import map_grouped
from .._types import Array, Config, Float


def work_coordinates(chain, q: Config) -> Float[Array, " nu"]:
    """All actuators' work coordinates ``h(q)``, concatenated in the order of ``chain.actuators``.

    Actuators that differ only in their parameters (the three tendons of one body, say) are
    evaluated by one ``vmap``: one trace of the body's geometry instead of one per actuator.
    """
    if not chain.actuators:
        return jnp.zeros((0,), dtype=q.dtype)
    return jnp.concatenate(map_grouped(list(chain.actuators), lambda a: a.work_coordinates(chain, q)))


def input_matrix(chain, q: Config) -> Float[Array, "nq nu"]:
    """``B(q) = A(q)ᵀ = (∂h/∂q)ᵀ`` (kernel of :func:`actuation_matrix`)."""
    return jax.jacfwd(lambda x: work_coordinates(chain, x))(q).T.reshape(chain.nq, chain.nu)


def input_force(chain, q: Config, u: Float[Array, " nu"]) -> Config:
    """``Q_a = A(q)ᵀ u`` by one vector–Jacobian product (kernel of :func:`actuation_force`)."""
    _, vjp = jax.vjp(lambda x: work_coordinates(chain, x), q)
    return vjp(u.astype(jnp.result_type(q, u)))[0]


def generalized_input(chain, q: Config, u: Array) -> Config:
    """``Q_a = A(q)ᵀ u`` through the chain's actuators, ``u`` itself when ``chain.nu == 0``, zeros for no input."""
    if u.shape == (0,):
        return jnp.zeros_like(q)
    if chain.nu == 0:
        return u
    return input_force(chain, q, u)


@entry_jit
def actuation_matrix(chain, q: Config) -> Float[Array, "nq nu"]:
    """The matrix ``B(q) = A(q)ᵀ = (∂h/∂q)ᵀ`` mapping inputs to generalized forces, ``Q_a = B u``.

    Arguments:
        chain: a chain built with ``actuators=[...]``. q: configuration ``(nq,)``.

    Returns:
        ``(nq, nu)`` matrix (``nu = chain.nu``).

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    return input_matrix(chain, chain.check_state(q, "q"))


@entry_jit
def actuation_force(chain, q: Config, u: Float[Array, " nu"]) -> Config:
    """Generalized actuation force ``Q_a = A(q)ᵀ u`` (paper ``000_…`` eq. 57).

    Arguments:
        chain: a chain with actuators. q: configuration ``(nq,)``. u: inputs ``(nu,)``.

    Returns:
        ``(nq,)`` generalized force.

    Raises:
        ValueError: ``q`` or ``u`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    u = jnp.asarray(u)
    if u.shape != (chain.nu,):
        raise ValueError(f"`u` must have shape ({chain.nu},) for this chain's actuators, got shape {u.shape}.")
    return input_force(chain, q, u)
