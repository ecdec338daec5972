"""Forward dynamics through the inverse dynamics: ABA's counterpart (paper ``000_…`` eq. 56)."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._dispatch import entry_jit
from .._types import Config, Vec3
from ._fd_derivative import forward_dynamics_kernel
from ._recursion import tip_wrench
from .inverse_dynamics import check_gravity


@entry_jit
def _forward_dynamics(chain, q: Config, qd: Config, tau: Config, gravity, tip_force, tip_torque) -> Config:
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    tau = chain.check_state(tau, "tau")
    g = check_gravity(chain, gravity)
    dtype = jnp.result_type(q, qd, tau, g)  # the chain's precision too (its gravity): float32 states of a float64 chain
    return forward_dynamics_kernel(chain, q, qd, tau, gravity=g, tip=tip_wrench(tip_force, tip_torque, dtype))


def forward_dynamics(
    chain, q: Config, qd: Config, tau: Config, *, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None, check: bool = True,
) -> Config:
    """Accelerations ``q̈ = M(q)⁻¹ (τ − ID(q, q̇, 0))`` by a Cholesky solve (ABA's counterpart).

    One pass of per-module terms serves both the bias ``ID(q, q̇, 0)`` and the mass-matrix columns
    (each module's geometry is differentiated once per call; paper ``000_…`` eq. 56). Derivatives
    (``jax.jvp``, ``jax.grad``, with respect to the state, ``tau``, gravity, the tip wrench or the
    chain's parameters) go through the ID at the computed accelerations, ``M dq̈ = dτ − ∂ID``
    (Carpentier and Mansard 2018), not through ``M`` and its factorization.

    Arguments:
        chain: the chain. q, qd: state ``(nq,)``. tau: applied generalized forces ``(nq,)``.
        gravity, tip_force, tip_torque: as in :func:`~kane_jax.inverse_dynamics`.
        check: raise instead of returning non-finite accelerations (default). Called eagerly the
            check runs on the host after the compiled call and costs nothing measurable. Under a
            transformation (``jit``, ``vmap``, ``grad``) it is an ``equinox.error_if`` in the
            program: free for a single call through ``jax.jit`` (a 7-DoF arm's FD 30–34 µs with
            it, 37–39 µs without, XLA:CPU), ≈ 100 µs per call when the program is called as the
            ``Compiled`` object of ``jax.jit(f).lower(…).compile()`` (JAX's Python call path for
            programs with host callbacks: 137–144 µs), and inside a loop it keeps XLA:CPU from
            running the loop as one kernel (the arm's FD in a ``fori_loop`` 1.9–2.1 → 3.7–4.3 µs
            per step; 2026-11-30): pass ``check=False`` in a jitted control loop, where a
            non-positive-definite mass matrix then gives NaN.

    Returns:
        ``(nq,)`` accelerations.

    Raises:
        ValueError: shapes that do not match the chain; (eager, ``check``) non-finite ``q``,
            ``qd`` or ``tau`` (named), or non-finite accelerations from finite inputs (the mass
            matrix is not positive definite).
        equinox.EquinoxRuntimeError: (under a transformation, ``check``, at run time) non-finite
            accelerations.
    """
    qdd = _forward_dynamics(chain, q, qd, tau, gravity, tip_force, tip_torque)
    if not check:
        return qdd
    if isinstance(qdd, jax.core.Tracer):
        return eqx.error_if(qdd, ~jnp.all(jnp.isfinite(qdd)),
                            "forward_dynamics: non-finite accelerations (mass matrix not positive definite, "
                            "or non-finite state/input)")
    values = np.asarray(qdd)
    # one Python sum of the values is cheaper than an element-wise test (0.2 vs 1.3 µs, of a ≈ 30 µs
    # call); a finite vector whose sum overflows is told apart by the element-wise test
    if not math.isfinite(sum(values.ravel().tolist())) and not np.all(np.isfinite(values)):
        for name, x in (("q", q), ("qd", qd), ("tau", tau)):
            if not np.all(np.isfinite(np.asarray(x))):
                raise ValueError(f"forward_dynamics: `{name}` must be finite, got {np.asarray(x)}.")
        raise ValueError("forward_dynamics: non-finite accelerations from a finite state and input: the mass "
                         "matrix is not positive definite at this `q` (check the bodies' masses and inertias).")
    return qdd
