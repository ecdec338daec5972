"""Forward dynamics through the inverse dynamics: ABA's counterpart (paper ``000_…`` eq. 56)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .._types import Config, Vec3
from ..chain import Chain
from .inverse_dynamics import inverse_dynamics
from .mass_matrix import mass_matrix


@eqx.filter_jit
def forward_dynamics(
    chain: Chain, q: Config, qd: Config, tau: Config, *, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None,
) -> Config:
    """Accelerations ``q̈ = M(q)⁻¹ (τ − ID(q, q̇, 0))`` by a Cholesky solve.

    Arguments:
        chain: the chain. q, qd: state ``(nq,)``. tau: applied generalized forces ``(nq,)``.
        gravity, tip_force, tip_torque: as in :func:`~kane_jax.inverse_dynamics`.

    Returns:
        ``(nq,)`` accelerations.

    Raises:
        ValueError: shapes that do not match the chain.
        equinox.EquinoxRuntimeError: (at run time) when ``M`` is not positive definite or the
            state is not finite, instead of returning NaN.
    """
    tau = chain.check_state(tau, "tau")
    bias = inverse_dynamics(chain, q, qd, jnp.zeros_like(qd), gravity=gravity, tip_force=tip_force,
                            tip_torque=tip_torque)
    factor = jsl.cho_factor(mass_matrix(chain, q), lower=True)
    qdd = jsl.cho_solve(factor, tau - bias)
    return eqx.error_if(qdd, ~jnp.all(jnp.isfinite(qdd)),
                        "forward_dynamics: non-finite accelerations (mass matrix not positive definite, "
                        "or non-finite state/input)")
