"""Computed-torque control (feedback linearization) of fully actuated chains."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from .._types import Array, Config
from ..algorithms._recursion import inverse_dynamics_kernel
from ..algorithms.actuation import input_matrix
from ..chain import Chain
from .reference import as_reference, gains, split_state


class ComputedTorque(eqx.Module):
    """Computed torque ``u = A(q)⁻ᵀ ID(q, q̇, q̈_d + K_d (q̇_d − q̇) + K_p (q_d − q))``.

    The inverse-dynamics law of paper ``003_…`` §1 (``τ = ID(q, q̇, v)`` with a control
    acceleration ``v``): one ID call per evaluation. With an exact model the closed loop is the
    linear, decoupled error dynamics ``ë + K_d ė + K_p e = 0`` for ``e = q_d − q``.

    A callable ``u(t, q, q̇)`` (an equinox Module: gains and reference arrays are pytree leaves),
    usable as ``control=`` in :func:`kane_jax.simulate`.

    Arguments:
        chain: the model used by the controller (may differ from the simulated plant). It must be
            fully actuated: ``chain.nu == chain.nq`` with invertible ``A(q)``, or no actuators
            (then ``u`` is the generalized force).
        reference: a set-point ``(nq,)`` or a callable ``t ↦ (q_d, q̇_d, q̈_d)`` (e.g.
            :class:`~kane_jax.control.QuinticReference`).
        kp, kd: proportional [1/s²] and derivative [1/s] gains, scalars or ``(nq,)``.

    Raises:
        ValueError: an underactuated chain (use :class:`~kane_jax.control.CollocatedPFBL`), a
            reference or gains of the wrong shape, negative gains.
    """

    chain: Chain
    reference: Callable
    kp: Array
    kd: Array

    def __init__(self, chain: Chain, reference, *, kp=100.0, kd=20.0):
        if chain.nu not in (0, chain.nq):
            raise ValueError(f"`chain` must be fully actuated for computed torque (chain.nu == chain.nq = "
                             f"{chain.nq}), got chain.nu = {chain.nu}; use CollocatedPFBL for underactuated chains.")
        self.chain = chain
        self.reference = as_reference(reference, chain.nq)
        self.kp = gains(kp, chain.nq, "kp")
        self.kd = gains(kd, chain.nq, "kd")

    def __call__(self, t, q: Config, qd: Config) -> Array:
        q, qd = split_state(self.chain, q, qd)
        q_d, qd_d, qdd_d = self.reference(t)
        v = qdd_d + self.kd * (qd_d - qd) + self.kp * (q_d - q)
        tau = inverse_dynamics_kernel(self.chain, q, qd, v.astype(q.dtype))
        if self.chain.nu == 0:
            return tau
        return jnp.linalg.solve(input_matrix(self.chain, q).T, tau)
