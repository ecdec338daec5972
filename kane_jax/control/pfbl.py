"""Collocated partial feedback linearization of underactuated chains (Spong 1994; ``003_…`` Sims. 1–2)."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from .._modules import map_grouped
from .._types import Array, Config
from ..algorithms._recursion import dynamics_terms, solve_chain_mass, tip_wrench
from ..algorithms.actuation import input_matrix, work_coordinates
from ..chain import Chain
from .reference import ActuationReference, gains, second_order_along, split_state


class CollocatedPFBL(eqx.Module):
    """Partial feedback linearization of the actuation coordinates ``y = h(q)`` (collocated).

    With ``M q̈ + n = Jᵀ u`` (``J = ∂h/∂q = A(q)``, ``n = ID(q, q̇, 0)``) the actuation coordinates
    obey ``ÿ = J M⁻¹ Jᵀ u − J M⁻¹ n + J̇ q̇``. The law

        ``u = Λ (v + J M⁻¹ n − J̇ q̇)``,  ``Λ = (J M⁻¹ Jᵀ)⁻¹``,  ``v = ÿ_d + K_d (ẏ_d − ẏ) + K_p (y_d − y)``

    makes ``ÿ = v`` exactly, i.e. ``ë + K_d ė + K_p e = 0`` for ``e = y_d − y``, while the
    unactuated (soft) coordinates follow their zero dynamics — stable for damped elastic bodies
    (paper ``003_…`` Sims. 1–2, decoupling coordinates of Pustina et al.). For joint motors on
    coordinates ``q_a`` this is Spong's collocated PFBL in joint space. Model terms: one
    :func:`~kane_jax.mass_matrix` and one :func:`~kane_jax.inverse_dynamics` call.

    Arguments:
        chain: the model used by the controller; needs actuators (``1 ≤ nu ≤ nq``) with
            ``J M⁻¹ Jᵀ`` invertible.
        reference: callable ``t ↦ (y_d, ẏ_d, ÿ_d)`` in actuation coordinates ``(nu,)``, or a
            constant ``(nu,)``; map a configuration reference with
            :class:`~kane_jax.control.ActuationReference`.
        kp, kd: gains, scalars or ``(nu,)``.

    Raises:
        ValueError: a chain without actuators or with more inputs than coordinates; reference or
            gains of the wrong shape.
    """

    chain: Chain
    reference: Callable
    kp: Array
    kd: Array

    def __init__(self, chain: Chain, reference, *, kp=100.0, kd=20.0):
        if not 1 <= chain.nu <= chain.nq:
            raise ValueError(f"`chain` must have 1 <= nu <= nq actuator inputs for collocated PFBL, got nu = "
                             f"{chain.nu}, nq = {chain.nq}.")
        from .reference import as_reference

        self.chain = chain
        self.reference = as_reference(reference, chain.nu)
        self.kp = gains(kp, chain.nu, "kp")
        self.kd = gains(kd, chain.nu, "kd")

    def __call__(self, t, q: Config, qd: Config) -> Array:
        q, qd = split_state(self.chain, q, qd)
        (y_d, yd_d, ydd_d), (y, yd, jdot_qd) = self._jets(t, q, qd)
        v = ydd_d + self.kd * (yd_d - yd) + self.kp * (y_d - y)
        jac = input_matrix(self.chain, q).T  # (nu, nq)
        mass, n = dynamics_terms(self.chain, q, qd, gravity=self.chain.gravity.astype(q.dtype),
                                 tip=tip_wrench(None, None, q.dtype))  # one terms pass for M and the bias
        minv_jt = solve_chain_mass(self.chain, mass, jac.T)  # M⁻¹ Jᵀ
        lam_inv = jac @ minv_jt  # J M⁻¹ Jᵀ (the inverse actuation-space inertia)
        rhs = v + minv_jt.T @ n - jdot_qd  # J M⁻¹ n (M symmetric)
        return jnp.linalg.solve(lam_inv, rhs)

    def _jets(self, t, q: Config, qd: Config):
        """``(y_d, ẏ_d, ÿ_d)`` of the reference and ``(y, ẏ, J̇ q̇)`` at the state.

        An :class:`~kane_jax.control.ActuationReference` maps its configuration reference through
        ``h`` as well: the two jets go through the door into the modules (``map_grouped``), one
        ``vmap`` over the two points when the two chains have the same structure (``h`` traced and
        compiled once, not twice), with the same numbers (the state's path has ``q̈ = 0``)."""
        ref = self.reference
        if not isinstance(ref, ActuationReference):
            return ref(t), second_order_along(lambda x: work_coordinates(self.chain, x), q, qd)  # J̇ q̇
        q_d, qd_d, qdd_d = ref.reference(t)
        dtype = jnp.result_type(q, qd, q_d)

        def jet(item):
            chain, x, v, a = item
            return jnp.stack(second_order_along(lambda z: work_coordinates(chain, z), x, v, a))

        at_ref, at_state = map_grouped([(ref.chain, q_d.astype(dtype), qd_d.astype(dtype), qdd_d.astype(dtype)),
                                        (self.chain, q.astype(dtype), qd.astype(dtype), jnp.zeros_like(q, dtype))],
                                       jet)
        return tuple(at_ref), tuple(at_state)
