"""Feedback linearization of VSA robots (paper ``001_…`` §III-C) and closed-loop simulation.

No root finding: from the measured state ``(q, θ1, θ2, q̇, θ̇1, θ̇2)`` the spring model gives
``τ_e, σ`` (eqs. 6, 11) and ``τ̇_e, σ̇`` (eqs. 17–18); ``q̈`` and ``q⃛`` follow from the link
dynamics (eqs. 34–35); the outer loop (eqs. 32a–b) sets ``q⁗ = v_q`` and ``σ̈ = v_σ``, and the
motor torques come from the same algebra as the inverse dynamics. With an exact model the closed
loop is linear: ``e_q⁗ + K3 e_q⃛ + K2 ë_q + K1 ė_q + K0 e_q = 0`` and ``ë_σ + Kσ1 ė_σ + Kσ0 e_σ = 0``.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .. import _checks
from ..algorithms._fd_derivative import forward_dynamics_kernel
from ..algorithms._recursion import mass_matrix_kernel
from ..algorithms.time_derivatives import id_derivatives
from . import springs as sp
from ._integrate import integrate
from .vsa import VSARobot, _motor_side, split_state, vsa_dynamics


def _gains(k, name: str, m: int, n: int):
    arr = _checks.as_float_array(k, name)
    if arr.shape == (m,):
        arr = jnp.broadcast_to(arr[:, None], (m, n))
    if arr.shape != (m, n):
        raise ValueError(f"`{name}` must have shape ({m},) or ({m}, {n}) (K_0 first), got {arr.shape}.")
    return arr


def link_jerk(robot: VSARobot, q, qd, qdd, tau_e_dot):
    """``q⃛ = M⁻¹ (τ̇_e − (Ṁ q̈ + ṅ))`` (eq. 35): the jerk-free part of ``τ̇`` by one jvp of the ID."""
    zero = jnp.zeros_like(q)
    rest = id_derivatives(robot.chain, (q, qd, qdd, zero), 1)[1]
    factor = jsl.cho_factor(mass_matrix_kernel(robot.chain, q), lower=True)
    return jsl.cho_solve(factor, tau_e_dot - rest)


def vsa_feedback_linearization(robot: VSARobot, state, q_ref, sigma_ref, *, gains_q, gains_sigma):
    """Motor torques ``(τ_1, τ_2)`` of the feedback-linearizing tracking controller (§III-C).

    Arguments:
        robot: the :class:`~kane_jax.compliant.VSARobot`.
        state: measured ``(q, θ1, θ2, q̇, θ̇1, θ̇2)``, shape ``(6n,)``.
        q_ref: ``(q_d, q̇_d, q̈_d, q⃛_d, q⁗_d)``, shape ``(5, n)``. sigma_ref: ``(σ_d, σ̇_d, σ̈_d)``, ``(3, n)``.
        gains_q: ``(K_0, K_1, K_2, K_3)`` of eq. (32a), shape ``(4,)`` or ``(4, n)``; ``p_q(s)`` of
            eq. (33a) must be Hurwitz (see :func:`~kane_jax.compliant.hurwitz_gains`).
        gains_sigma: ``(K_σ0, K_σ1)`` of eq. (32b), shape ``(2,)`` or ``(2, n)``.

    Returns:
        ``(τ_1, τ_2)``, each ``(n,)``. Singular decoupling matrices give non-finite torques.

    Raises:
        ValueError: wrong shapes.
    """
    n = robot.n
    q, theta, qd, theta_d = split_state(robot, state)
    q_ref = _checks.as_float_array(q_ref, "q_ref", (5, n))
    sigma_ref = _checks.as_float_array(sigma_ref, "sigma_ref", (3, n))
    kq = _gains(gains_q, "gains_q", 4, n)
    ks = _gains(gains_sigma, "gains_sigma", 2, n)
    phi, phi_d = theta - q[None], theta_d - qd[None]
    y, y_d = jax.jvp(lambda x: sp.task_map(robot.springs, x), (phi,), (phi_d,))  # eqs. 6, 11, 17, 18
    qdd = forward_dynamics_kernel(robot.chain, q, qd, y[0])  # eq. 34
    q3 = link_jerk(robot, q, qd, qdd, y_d[0])  # eq. 35
    actual = (q, qd, qdd, q3)
    v_q = q_ref[4] + sum(kq[i] * (q_ref[i] - actual[i]) for i in range(4))  # eq. 32a
    v_s = sigma_ref[2] + ks[1] * (sigma_ref[1] - y_d[1]) + ks[0] * (sigma_ref[0] - y[1])  # eq. 32b
    tau_e_ddot = id_derivatives(robot.chain, (q, qd, qdd, q3, v_q), 2)[2]
    torque = _motor_side(robot, phi, phi_d, (q, qd, qdd), jnp.stack([tau_e_ddot, v_s]))[0]
    return torque[0], torque[1]


def vsa_output_derivatives(robot: VSARobot, state):
    """Actual ``(q, q̇, q̈, q⃛)`` ``(4, n)`` and ``(σ, σ̇)`` ``(2, n)`` implied by a state (eqs. 17–18, 34–35)."""
    q, theta, qd, theta_d = split_state(robot, state)
    phi, phi_d = theta - q[None], theta_d - qd[None]
    y, y_d = jax.jvp(lambda x: sp.task_map(robot.springs, x), (phi,), (phi_d,))
    qdd = forward_dynamics_kernel(robot.chain, q, qd, y[0])
    q3 = link_jerk(robot, q, qd, qdd, y_d[0])
    return jnp.stack([q, qd, qdd, q3]), jnp.stack([y[1], y_d[1]])


def simulate_vsa(robot: VSARobot, controller: Callable, y0, ts, *, rtol: float = 1e-10, atol: float = 1e-12,
                 solver=None, max_steps: int = 200_000):
    """Simulate the ``6n``-state VSA robot (eqs. 5a–5c) under ``controller(t, y) -> (τ_1, τ_2)``.

    Returns:
        ``(ys, num_steps)`` as :func:`~kane_jax.compliant.integrate`.
    """
    y0 = _checks.as_float_array(y0, "y0")
    split_state(robot, y0)
    return integrate(lambda t, y: vsa_dynamics(robot, y, *controller(t, y)), y0, ts, rtol=rtol, atol=atol,
                     solver=solver, max_steps=max_steps)
