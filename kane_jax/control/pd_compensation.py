"""PD regulation with cancellation of gravitational and elastic forces (paper ``003_…`` Sim. 2 (ii))."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax

from .._types import Array, Config
from ..algorithms._recursion import inverse_dynamics_kernel
from ..algorithms.actuation import input_matrix, work_coordinates
from ..chain import Chain
from ..statics import solve_input
from .reference import as_reference, gains, split_state


class PDCompensation(eqx.Module):
    """``u = K_p (y_d − y) + K_d (ẏ_d − ẏ) + A(q̄)⁺ᵀ ID(q̄, 0, 0)`` in actuation coordinates.

    ``y = h(q)`` are the actuators' work coordinates (joint angles for joint motors, so the law is
    the classic joint PD), ``ẏ = A(q) q̇``, and the model term ``ID(q̄, 0, 0) = G(q̄) + ∂U/∂q̄``
    cancels gravity and the elastic stress with a single ID call (paper ``003_…`` Sim. 2,
    sub-task (ii)). ``q̄ = q`` (``compensate="current"``, the paper's choice) or ``q̄ = q_d``
    (``"desired"``: constant feed-forward for a set-point, Takegaki–Arimoto style). For
    underactuated chains ``A(q̄)⁺ᵀ`` is the least-squares (QR) pseudo-inverse, which cancels the
    component of the static load that the actuators can reach.

    A callable ``u(t, q, q̇)`` usable as ``control=`` in :func:`kane_jax.simulate`.

    Arguments:
        chain: the model used by the controller.
        reference: configuration set-point ``(nq,)`` or callable ``t ↦ (q_d, q̇_d, q̈_d)``.
        kp, kd: gains in actuation coordinates, scalars or ``(nu,)`` (``(nq,)`` without actuators).
        compensate: ``"current"`` or ``"desired"``.

    Raises:
        ValueError: gains or reference of the wrong shape, unknown ``compensate``.
    """

    chain: Chain
    reference: Callable
    kp: Array
    kd: Array
    compensate: str = eqx.field(static=True)

    def __init__(self, chain: Chain, reference, *, kp=50.0, kd=5.0, compensate="current"):
        if compensate not in ("current", "desired"):
            raise ValueError(f"`compensate` must be 'current' or 'desired', got {compensate!r}.")
        size = chain.nu or chain.nq
        self.chain = chain
        self.reference = as_reference(reference, chain.nq)
        self.kp = gains(kp, size, "kp")
        self.kd = gains(kd, size, "kd")
        self.compensate = compensate

    def __call__(self, t, q: Config, qd: Config) -> Array:
        q, qd = split_state(self.chain, q, qd)
        q_d, qd_d, _ = self.reference(t)
        q_d, qd_d = q_d.astype(q.dtype), qd_d.astype(q.dtype)
        q_bar = q if self.compensate == "current" else q_d
        # G + ∂U/∂q, one ID call at rest (qd=None: configuration-only jets, no velocity terms traced)
        static = inverse_dynamics_kernel(self.chain, q_bar, None, None)
        if self.chain.nu == 0:
            return self.kp * (q_d - q) + self.kd * (qd_d - qd) + static
        h = lambda x: work_coordinates(self.chain, x)
        b = input_matrix(self.chain, q_bar)
        if self.compensate == "current":  # ẏ = A(q) q̇ = B(q)ᵀ q̇ from the B the compensation needs anyway
            y, yd = h(q), b.T @ qd
        else:
            y, yd = jax.jvp(h, (q,), (qd,))
        y_d, yd_d = jax.jvp(h, (q_d,), (qd_d,))
        comp = solve_input(b, static)  # A(q̄)⁺ᵀ ID(q̄, 0, 0)
        return self.kp * (y_d - y) + self.kd * (yd_d - yd) + comp
