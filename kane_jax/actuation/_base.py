"""Actuation by virtual work: ``Q_a = A(q)ᵀ u`` with ``A = ∂h/∂q`` (paper ``000_…`` eq. 57).

Every actuator exposes *work coordinates* ``h(q)`` conjugate to its inputs ``u``: the virtual
work of the inputs is ``uᵀ δh``, so the generalized actuation force is ``(∂h/∂q)ᵀ u``. A joint
motor has ``h = q_J`` (``u`` torque/force), a pneumatic chamber ``h = V(q)`` (``u`` pressure), a
tendon ``h = −L(q)`` (``u`` tension, pulling shortens it).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._types import Array, Config, Float

if TYPE_CHECKING:
    from ..chain import Chain


class AbstractActuator(eqx.Module):
    """An actuator of a chain with ``nu`` inputs and work coordinates ``h(q)``."""

    nu: eqx.AbstractVar[int]

    @abc.abstractmethod
    def work_coordinates(self, chain: Chain, q: Config) -> Float[Array, " nu"]:
        """``h(q)``: the quantities whose virtual change times ``u`` is the actuator's virtual work."""


class JointMotor(AbstractActuator):
    """Motors acting directly on coordinates ``indices`` of the chain (``h = q[indices]``).

    Arguments:
        indices: the chain coordinates driven (ints in ``[0, nq)``).
        gains: optional per-input gain (e.g. gear ratio × torque constant), default 1.
    """

    indices: tuple[int, ...] = eqx.field(static=True)
    gains: Float[Array, " nu"]
    nu: int = eqx.field(static=True)

    def __init__(self, indices, gains=None):
        idx = tuple(int(i) for i in np.atleast_1d(np.asarray(indices)))
        if not idx or any(i < 0 for i in idx):
            raise ValueError(f"`indices` must be a non-empty sequence of non-negative ints, got {indices!r}.")
        self.indices = idx
        self.nu = len(idx)
        g = jnp.ones(self.nu) if gains is None else jnp.asarray(gains, dtype=float)
        if g.shape != (self.nu,):
            raise ValueError(f"`gains` must have shape ({self.nu},), got shape {g.shape}.")
        self.gains = g

    def work_coordinates(self, chain: Chain, q: Config) -> Float[Array, " nu"]:
        if max(self.indices) >= chain.nq:
            raise ValueError(f"JointMotor `indices` {self.indices} out of range for a chain with nq={chain.nq}.")
        return self.gains * q[jnp.asarray(self.indices)]


def _groups(actuators) -> list[tuple[list[int], object, list]]:
    """Actuators that differ only in their array leaves (e.g. the tendons of one body, whose
    offsets differ), grouped as ``(positions, static part, array parts)`` so that one vmapped trace
    serves them."""
    groups: dict = {}
    for k, a in enumerate(actuators):
        dyn, static = eqx.partition(a, eqx.is_array)
        leaves, treedef = jax.tree_util.tree_flatten(dyn)
        key = (type(a), treedef, tuple((x.shape, x.dtype) for x in leaves), static)
        try:
            hash(key)
        except TypeError:  # unhashable static data: keep the actuator on its own
            key = ("alone", k)
        ks, _, dyns = groups.setdefault(key, ([], static, []))
        ks.append(k)
        dyns.append(dyn)
    return list(groups.values())


def work_coordinates(chain: Chain, q: Config) -> Float[Array, " nu"]:
    """All actuators' work coordinates, concatenated in the order of ``chain.actuators``.

    Actuators of one type and structure that differ only in their parameters (the three tendons of
    one body, say) are evaluated by one ``vmap``: one trace of the body's geometry instead of one per
    actuator, which keeps the derivatives the controllers take of ``h`` small to compile.
    """
    if not chain.actuators:
        return jnp.zeros((0,), dtype=q.dtype)
    acts = chain.actuators
    parts: list = [None] * len(acts)
    for ks, static, dyns in _groups(acts):
        if len(ks) == 1:
            parts[ks[0]] = acts[ks[0]].work_coordinates(chain, q)
            continue
        dyn = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *dyns)
        out = jax.vmap(lambda d, st=static: eqx.combine(d, st).work_coordinates(chain, q))(dyn)
        for i, k in enumerate(ks):
            parts[k] = out[i]
    return jnp.concatenate(parts)


@eqx.filter_jit
def actuation_matrix(chain: Chain, q: Config) -> Float[Array, "nq nu"]:
    """The matrix ``B(q) = A(q)ᵀ = (∂h/∂q)ᵀ`` mapping inputs to generalized forces, ``Q_a = B u``.

    Arguments:
        chain: a chain built with ``actuators=[...]``. q: configuration ``(nq,)``.

    Returns:
        ``(nq, nu)`` matrix (``nu = chain.nu``).

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    return jax.jacfwd(lambda x: work_coordinates(chain, x))(q).T.reshape(chain.nq, chain.nu)


@eqx.filter_jit
def actuation_force(chain: Chain, q: Config, u: Float[Array, " nu"]) -> Config:
    """Generalized actuation force ``Q_a = A(q)ᵀ u`` by one vector–Jacobian product.

    Raises:
        ValueError: ``q`` or ``u`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    u = jnp.asarray(u)
    if u.shape != (chain.nu,):
        raise ValueError(f"`u` must have shape ({chain.nu},) for this chain's actuators, got shape {u.shape}.")
    _, vjp = jax.vjp(lambda x: work_coordinates(chain, x), q)
    return vjp(u.astype(jnp.result_type(q, u)))[0]
