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

    def local_module(self) -> int | None:
        """The one module whose coordinates alone determine ``h``, or ``None`` (the default).

        An actuator that names one (a chamber in a body, a tendon within one body) also gives
        :meth:`module_work_coordinates`; the chain then evaluates such actuators on identical
        modules (the three chambers of three equal sections) as one ``vmap``, one trace of the
        body's geometry instead of one per module.
        """
        return None

    def module_work_coordinates(self, joint, body, q_module: Config) -> Float[Array, " nu"]:
        """``h`` from the coordinates ``q_module`` (joint's, then body's) of :meth:`local_module`."""
        raise NotImplementedError(f"{type(self).__name__} names a local module but gives no module_work_coordinates.")


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
