"""Forward dynamics through the inverse dynamics: ABA's counterpart (paper ``000_…`` eq. 56)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from .._types import Config, Vec3
from ._recursion import forward_dynamics_kernel, tip_wrench
from .inverse_dynamics import check_gravity


@eqx.filter_jit
def forward_dynamics(
    chain, q: Config, qd: Config, tau: Config, *, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None,
) -> Config:
    """Accelerations ``q̈ = M(q)⁻¹ (τ − ID(q, q̇, 0))`` by a Cholesky solve.

    One pass of per-module terms serves both the bias ``ID(q, q̇, 0)`` and the mass-matrix columns
    (each module's geometry is differentiated once per call).

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
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    tau = chain.check_state(tau, "tau")
    g = check_gravity(chain, gravity)
    dtype = jnp.result_type(q, qd, tau)
    qdd = forward_dynamics_kernel(chain, q, qd, tau, gravity=g, tip=tip_wrench(tip_force, tip_torque, dtype))
    return eqx.error_if(qdd, ~jnp.all(jnp.isfinite(qdd)),
                        "forward_dynamics: non-finite accelerations (mass matrix not positive definite, "
                        "or non-finite state/input)")
