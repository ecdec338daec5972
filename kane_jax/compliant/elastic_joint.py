"""Robots with elastic joints, Spong's reduced model (paper ``001_…`` eqs. 4a–4b; its ref. [15]).

    ``M(q) q̈ + n(q, q̇) = K (θ − q)``        (link side: any kane_jax chain, ``n`` = ID at q̈ = 0)
    ``B θ̈ + D_m θ̇ + K (θ − q) = τ``          (motor side: decoupled inertias, springs, viscous friction)

Every chain coordinate is driven through its own spring (``n = chain.nq``); a soft body's
coordinate may be driven too (e.g. a tendon-bent segment with a compliant transmission). The
inverse dynamics needs the link trajectory four times differentiable: with ``τ_e = K (θ − q)`` the
link ID and its first two time derivatives give ``θ = q + K⁻¹ τ_e``, ``θ̇``, ``θ̈`` and then ``τ``.
State vector (``4n``): ``y = (q, θ, q̇, θ̇)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp

from .. import _checks
from .._types import Array, Float
from ..algorithms._fd_derivative import forward_dynamics_kernel
from ..algorithms.time_derivatives import check_derivatives, id_derivatives
from ..chain import Chain
from ._integrate import integrate


def _vec(x, name: str, n: int, *, positive: bool) -> Array:
    arr = _checks.as_float_array(x, name)
    if arr.ndim == 0:
        arr = jnp.broadcast_to(arr, (n,))
    if arr.shape != (n,):
        raise ValueError(f"`{name}` must be a scalar or shape ({n},), got shape {arr.shape}.")
    (_checks.positive if positive else _checks.nonnegative)(arr, name)
    return arr


class ElasticJointRobot(eqx.Module):
    """A kane_jax chain driven through linear springs by motors with inertia and friction.

    Arguments:
        chain: link side (eq. 4a). motor_inertia: ``B`` [kg m²] (reflected through the gears),
            scalar or ``(n,)``, positive. stiffness: joint stiffness ``Σ`` [N m/rad], positive.
        motor_damping: ``D_m`` [N m s/rad], non-negative (default 0).

    Raises:
        TypeError/ValueError: a chain that is not a Chain, wrong shapes, non-physical values.
    """

    chain: Chain
    motor_inertia: Float[Array, " n"]
    stiffness: Float[Array, " n"]
    motor_damping: Float[Array, " n"]

    def __init__(self, chain, motor_inertia, stiffness, motor_damping=0.0):
        if not isinstance(chain, Chain):
            raise TypeError(f"`chain` must be a kane_jax Chain, got {type(chain).__name__}.")
        n = chain.nq
        self.chain = chain
        self.motor_inertia = _vec(motor_inertia, "motor_inertia", n, positive=True)
        self.stiffness = _vec(stiffness, "stiffness", n, positive=True)
        self.motor_damping = _vec(motor_damping, "motor_damping", n, positive=False)

    @property
    def n(self) -> int:
        return self.chain.nq


class ElasticJointInverseDynamics(NamedTuple):
    """Motor torque and the motor trajectory that realize a link trajectory (each ``(n,)``)."""

    tau: Array  # motor torque τ (eq. 4b)
    theta: Array  # θ, θ̇, θ̈
    theta_d: Array
    theta_dd: Array
    tau_e: Array  # (3, n): elastic torque τ_e and its first two time derivatives


def elastic_joint_inverse_dynamics(robot: ElasticJointRobot, q_derivs) -> ElasticJointInverseDynamics:
    """Motor torques for a desired link trajectory (EJ-NEA of ``001_…`` ref. [15], eqs. 4a–4b).

    ``τ_e = ID(q, q̇, q̈)``, ``θ = q + Σ⁻¹ τ_e``, ``θ̇ = q̇ + Σ⁻¹ τ̇_e``, ``θ̈ = q̈ + Σ⁻¹ τ̈_e`` and
    ``τ = B θ̈ + D_m θ̇ + τ_e``, with ``τ̇_e, τ̈_e`` from :func:`~kane_jax.inverse_dynamics_derivatives`.

    Arguments:
        q_derivs: ``(q, q̇, q̈, q⃛, q⁗)`` of the link trajectory at this instant.

    Returns:
        :class:`ElasticJointInverseDynamics`.

    Raises:
        ValueError: wrong shapes or fewer than five derivatives.
    """
    d = check_derivatives(robot.chain, q_derivs, 5, "elastic_joint_inverse_dynamics")
    return _elastic_joint_inverse_dynamics(robot, tuple(d))


@eqx.filter_jit
def _elastic_joint_inverse_dynamics(robot: ElasticJointRobot, d) -> ElasticJointInverseDynamics:
    """The EJ-NEA on validated derivatives, one compiled program (eager nested ``jvp``s of the
    recursion would run operation by operation)."""
    tau_e = jnp.stack(id_derivatives(robot.chain, d, 2))
    theta, theta_d, theta_dd = (d[i] + tau_e[i] / robot.stiffness for i in range(3))
    tau = robot.motor_inertia * theta_dd + robot.motor_damping * theta_d + tau_e[0]
    return ElasticJointInverseDynamics(tau, theta, theta_d, theta_dd, tau_e)


def elastic_joint_dynamics(robot: ElasticJointRobot, y, tau):
    """Time derivative of the state ``(q, θ, q̇, θ̇)`` under motor torque ``τ`` (eqs. 4a–4b)."""
    n = robot.n
    y = jnp.asarray(y)
    if y.shape != (4 * n,):
        raise ValueError(f"`y` must have shape ({4 * n},) = (q, θ, q̇, θ̇), got {y.shape}.")
    q, theta, qd, theta_d = y[:n], y[n:2 * n], y[2 * n:3 * n], y[3 * n:]
    tau_e = robot.stiffness * (theta - q)
    qdd = forward_dynamics_kernel(robot.chain, q, qd, tau_e)
    theta_dd = (tau - robot.motor_damping * theta_d - tau_e) / robot.motor_inertia
    return jnp.concatenate([qd, theta_d, qdd, theta_dd])


def simulate_elastic_joint(robot: ElasticJointRobot, controller: Callable, y0, ts, *, rtol: float = 1e-10,
                           atol: float = 1e-12, solver=None, max_steps: int = 200_000):
    """Simulate the ``4n``-state elastic-joint robot under ``controller(t, y) -> τ``.

    Returns:
        ``(ys, num_steps)`` as :func:`~kane_jax.compliant.integrate`.
    """
    return integrate(lambda t, y: elastic_joint_dynamics(robot, y, controller(t, y)), y0, ts, rtol=rtol,
                     atol=atol, solver=solver, max_steps=max_steps)
