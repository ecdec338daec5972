"""Robots with antagonistic variable-stiffness actuation (VSA): inverse dynamics from desired link
and stiffness trajectories, feedback linearization, and the 3N-DoF dynamics (paper ``001_…``).

Model (eqs. 5a–5c): ``M(q) q̈ + n(q, q̇) = τ_e1(φ1) + τ_e2(φ2)`` with ``φ_k = θ_k − q`` and, per motor,
``B_k θ̈_k + D_mk θ̇_k + τ_ek(φ_k) = τ_k``. The link side is any kane_jax chain whose every coordinate
is driven by one VSA (``n = chain.nq``); its ``n(q, q̇)`` is the chain's inverse dynamics at zero
acceleration (gravity, Coriolis, joint damping, internal forces). The VSA-NEA of the paper
(eqs. 36–74, Newton–Euler "up to the fourth differential order") becomes: ``τ_e, τ̇_e, τ̈_e`` from
:func:`~kane_jax.inverse_dynamics_derivatives`, then the per-joint 2×2 algebra of eqs. 14–23
(:mod:`~kane_jax.compliant.springs`), with the spring derivatives by autodiff.

State vector (length ``6n``): ``y = (q, θ1, θ2, q̇, θ̇1, θ̇2)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._types import Array, Float
from ..algorithms._fd_derivative import forward_dynamics_kernel
from ..algorithms.time_derivatives import check_derivatives, id_derivatives
from ..chain import Chain
from . import springs as sp


def _per_joint(x, name: str, n: int, *, positive: bool) -> Array:
    arr = _checks.as_float_array(x, name)
    if arr.ndim == 0 or arr.shape == (n,):
        arr = jnp.broadcast_to(arr, (2, n))
    elif arr.shape != (2, n):
        raise ValueError(f"`{name}` must be a scalar, shape ({n},) (both motors) or (2, {n}), got shape {arr.shape}.")
    (_checks.positive if positive else _checks.nonnegative)(arr, name)
    return arr


def _check_spring(fn, name: str, n: int) -> None:
    if not callable(fn):
        raise TypeError(f"`{name}` must be a callable φ ↦ τ_e(φ) of shape ({n},) → ({n},), got {type(fn).__name__}.")
    try:
        out = jax.eval_shape(fn, jax.ShapeDtypeStruct((n,), jnp.float32))
    except Exception as err:  # noqa: BLE001
        raise ValueError(f"`{name}` failed on φ of shape ({n},): {type(err).__name__}: {err}") from None
    if getattr(out, "shape", None) != (n,):
        raise ValueError(f"`{name}` must map shape ({n},) to ({n},), got {getattr(out, 'shape', out)}.")
    phi = jnp.asarray(np.random.default_rng(0).uniform(-0.2, 0.2, n))
    jac = np.asarray(jax.jacfwd(fn)(phi))
    if np.any(np.abs(jac - np.diag(np.diag(jac))) > 1e-12 * (1 + np.abs(jac).max())):
        raise ValueError(
            f"`{name}` must act joint by joint (output i depends on φ_i only); its Jacobian is not diagonal.")


class VSARobot(eqx.Module):
    """A serial chain with one antagonistic VSA (two motors, two springs) per coordinate.

    Arguments:
        chain: link side (``001_…`` eq. 5a); masses are those of the *augmented* links.
        motor_inertia: ``B_1, B_2`` [kg m²]: scalar, ``(n,)`` (same for both motors) or ``(2, n)``.
        motor_damping: ``D_m1, D_m2`` [N m s/rad], same shapes, default 0.
        spring1, spring2: flexibility torques ``τ_e1(φ1)``, ``τ_e2(φ2)``: callables ``(n,) → (n,)``
            acting joint by joint (e.g. :class:`~kane_jax.compliant.CubicSpring`). ``spring2``
            defaults to ``spring1`` (identical springs, as in the paper).

    Raises:
        ValueError/TypeError: shapes, non-positive inertias, springs that are not decoupled.
    """

    chain: Chain
    motor_inertia: Float[Array, "2 n"]
    motor_damping: Float[Array, "2 n"]
    spring1: Callable
    spring2: Callable

    def __init__(self, chain, motor_inertia, motor_damping=0.0, spring1=None, spring2=None):
        if not isinstance(chain, Chain):
            raise TypeError(f"`chain` must be a kane_jax Chain, got {type(chain).__name__}.")
        n = chain.nq
        self.chain = chain
        self.motor_inertia = _per_joint(motor_inertia, "motor_inertia", n, positive=True)
        self.motor_damping = _per_joint(motor_damping, "motor_damping", n, positive=False)
        if spring1 is None:
            raise TypeError("`spring1` is required (e.g. kane_jax.compliant.CubicSpring(K, K_c, n)).")
        spring2 = spring1 if spring2 is None else spring2
        _check_spring(spring1, "spring1", n)
        _check_spring(spring2, "spring2", n)
        self.spring1, self.spring2 = spring1, spring2

    @property
    def n(self) -> int:
        """Number of VSA joints (= link coordinates)."""
        return self.chain.nq

    @property
    def springs(self) -> tuple[Callable, Callable]:
        return (self.spring1, self.spring2)


class VSAInverseDynamics(NamedTuple):
    """Motor torques and everything the inverse dynamics computed along the way (``(n,)`` each)."""

    tau1: Array  # motor torques τ_1, τ_2 (eqs. 73–74)
    tau2: Array
    theta: Array  # (2, n) motor positions θ_1, θ_2
    theta_d: Array  # (2, n)
    theta_dd: Array  # (2, n)
    phi: Array  # (2, n) deflections φ_k = θ_k − q
    phi_d: Array  # (2, n)
    tau_e: Array  # (3, n): τ_e, τ̇_e, τ̈_e (eqs. 7, 12, 13)
    converged: Array  # (n,) bool: eq. (14) solved
    det_ratio: Array  # (n,) conditioning of the decoupling matrix (0: singular)


# Newton search of eq. (14): tolerance (relative to 1 + |target|) and step limit
NEWTON_RTOL, NEWTON_STEPS = 1e-13, 40


def _motor_side(robot, phi, phi_d, q_derivs, y_dd):
    """Eqs. 21–23 and 73–74 by autodiff: ``φ̈ = 𝒜⁻¹ (ÿ − D²F[φ̇, φ̇])``, then the motor torques."""
    springs = robot.springs
    a = sp.decoupling_matrix(springs, phi)
    curv = jax.jvp(lambda s: jax.jvp(lambda x: sp.task_map(springs, x), (phi + s * phi_d,), (phi_d,))[1],
                   (jnp.zeros((), phi.dtype),), (jnp.ones((), phi.dtype),))[1]  # D²F[φ̇, φ̇]
    phi_dd, _ = sp.solve2(a, y_dd - curv)
    q, qd, qdd = q_derivs
    theta, theta_d, theta_dd = phi + q[None], phi_d + qd[None], phi_dd + qdd[None]
    tau_e = jnp.stack([robot.spring1(phi[0]), robot.spring2(phi[1])])
    torque = robot.motor_inertia * theta_dd + robot.motor_damping * theta_d + tau_e
    return torque, theta, theta_d, theta_dd


def vsa_inverse_dynamics(robot: VSARobot, q_derivs, sigma_derivs, *, phi_guess=None, check: bool = True,
                         rtol: float = NEWTON_RTOL, max_steps: int = NEWTON_STEPS) -> VSAInverseDynamics:
    """Motor torques ``(τ_1, τ_2)`` that realize desired link and stiffness trajectories (VSA-NEA).

    Paper ``001_…`` §III-B and Alg. §IV: ``τ_e, τ̇_e, τ̈_e`` of the link side (eqs. 7, 12, 13 — here
    the second-order inverse dynamics of the chain), the deflections from eq. (14) by Newton, then
    ``φ̇`` (eq. 20), ``θ̈`` (eqs. 21–23) and the torques (eqs. 5b–5c / 73–74).

    Arguments:
        robot: the :class:`VSARobot`.
        q_derivs: ``(q, q̇, q̈, q⃛, q⁗)`` of the desired link trajectory at this instant.
        sigma_derivs: ``(σ, σ̇, σ̈)`` of the desired joint stiffness [N m/rad].
        phi_guess: ``(2, n)`` start of the Newton search (the previous instant's ``phi``); default
            the antagonistic guess of :func:`~kane_jax.compliant.springs.symmetric_guess`.
        check: raise :class:`~kane_jax.compliant.springs.TaskError` (a ``ValueError``) when eq. (14)
            has no solution or the decoupling matrix is singular; inside ``jit`` the check becomes an
            ``equinox`` runtime error. Pass ``False`` to get the diagnostics in the result instead.

    Returns:
        :class:`VSAInverseDynamics`.

    Raises:
        ValueError: wrong shapes or too few derivatives; ``TaskError`` as above.
    """
    n = robot.n
    qd = check_derivatives(robot.chain, q_derivs, 5, "vsa_inverse_dynamics (link trajectory)")
    sig = [_checks.as_float_array(s, f"sigma_derivs[{i}]") for i, s in enumerate(list(sigma_derivs)[:3])]
    if len(sig) < 3 or any(s.shape != (n,) for s in sig):
        raise ValueError(f"`sigma_derivs` must hold (σ, σ̇, σ̈), each of shape ({n},), got "
                         f"{[tuple(s.shape) for s in sig]}.")
    guess = None if phi_guess is None else _checks.as_float_array(phi_guess, "phi_guess")
    if guess is not None and guess.shape != (2, n):
        raise ValueError(f"`phi_guess` must have shape (2, {n}), got {guess.shape}.")
    out, sol = _vsa_inverse_dynamics(robot, tuple(qd), tuple(sig), guess, rtol=rtol, max_steps=max_steps)
    if check:
        if _checks.is_concrete(sol.converged):
            sp.raise_if_failed(sol, "vsa_inverse_dynamics")
        else:
            bad = ~jnp.all(sol.converged) | jnp.any(sol.det_ratio < sp.SINGULAR_RATIO)
            out = out._replace(tau1=eqx.error_if(out.tau1, bad, "vsa_inverse_dynamics: eq. (14) has no solution "
                                                 "or the decoupling matrix is singular (task not attainable)"))
    return out


@eqx.filter_jit
def _vsa_inverse_dynamics(robot, qd, sig, guess, *, rtol: float, max_steps: int):
    """The VSA-NEA on validated input, one compiled program (run eagerly, its Newton loop, nested
    ``jvp``s and 2×2 algebra went operation by operation: 0.35 s of a 0.4 s call on the VSA 3-DoF
    robot, 2026-11-25). Returns the result and the :class:`~kane_jax.compliant.springs.Deflections`."""
    tau_e = jnp.stack(id_derivatives(robot.chain, qd, 2))
    guess = sp.symmetric_guess(robot.springs, sig[0]) if guess is None else guess
    sol = sp.solve_deflections(robot.springs, tau_e[0], sig[0], guess, rtol=rtol, max_steps=max_steps)
    a = sp.decoupling_matrix(robot.springs, sol.phi)
    phi_d, _ = sp.solve2(a, jnp.stack([tau_e[1], sig[1]]))  # eq. (20)
    torque, theta, theta_d, theta_dd = _motor_side(robot, sol.phi, phi_d, qd[:3], jnp.stack([tau_e[2], sig[2]]))
    out = VSAInverseDynamics(torque[0], torque[1], theta, theta_d, theta_dd, sol.phi, phi_d, tau_e,
                             sol.converged, sol.det_ratio)
    return out, sol


@eqx.filter_jit
def _trajectory(robot, q_derivs, sigma_derivs, phi0):
    def step(phi, x):  # shapes validated by the caller; failures reported from converged/det_ratio
        out, _ = _vsa_inverse_dynamics(robot, tuple(x[0]), tuple(x[1]), phi, rtol=NEWTON_RTOL, max_steps=NEWTON_STEPS)
        return out.phi, out

    return jax.lax.scan(step, phi0, (q_derivs, sigma_derivs))[1]


def vsa_inverse_dynamics_trajectory(robot: VSARobot, q_derivs, sigma_derivs, *, phi0=None) -> VSAInverseDynamics:
    """:func:`vsa_inverse_dynamics` over a time grid, each Newton search warm-started from the
    previous instant's solution (one jitted ``lax.scan``).

    Arguments:
        q_derivs: ``(T, 5, n)`` link derivatives per instant. sigma_derivs: ``(T, 3, n)``.
        phi0: ``(2, n)`` start at the first instant (default: antagonistic guess).

    Returns:
        :class:`VSAInverseDynamics` with a leading time axis.

    Raises:
        TaskError (a ValueError): at the first instant where eq. (14) fails or is singular.
    """
    n = robot.n
    qd = _checks.as_float_array(q_derivs, "q_derivs")
    sd = _checks.as_float_array(sigma_derivs, "sigma_derivs")
    if qd.ndim != 3 or qd.shape[1:] != (5, n):
        raise ValueError(f"`q_derivs` must have shape (T, 5, {n}), got {qd.shape}.")
    if sd.shape != (qd.shape[0], 3, n):
        raise ValueError(f"`sigma_derivs` must have shape ({qd.shape[0]}, 3, {n}), got {sd.shape}.")
    if phi0 is None:
        phi0 = sp.symmetric_guess(robot.springs, sd[0, 0])
    out = _trajectory(robot, qd, sd, jnp.asarray(phi0, dtype=qd.dtype))
    bad = ~np.asarray(out.converged) | (np.asarray(out.det_ratio) < sp.SINGULAR_RATIO)
    if np.any(bad):
        k = int(np.argwhere(bad)[0, 0])
        sol = sp.Deflections(out.phi[k], jnp.full(n, jnp.nan), out.det_ratio[k], out.converged[k], None)
        sp.raise_if_failed(sol, f"vsa_inverse_dynamics_trajectory (instant {k})")
    return out


def hurwitz_gains(poles) -> Float[Array, " m"]:
    """Gains ``(K_0, …, K_{m−1})`` with ``s^m + K_{m−1} s^{m−1} + … + K_0 = Π (s − p_i)`` (eq. 33).

    Raises:
        ValueError: a pole with non-negative real part, or complex poles without their conjugates.
    """
    p = np.atleast_1d(np.asarray(poles, dtype=complex))
    if p.ndim != 1 or p.size == 0 or np.any(p.real >= 0):
        raise ValueError(f"`poles` must be a non-empty list with negative real parts (Hurwitz), got {p.tolist()}.")
    coeffs = np.poly(p)
    if np.max(np.abs(coeffs.imag)) > 1e-9 * np.max(np.abs(coeffs)):
        raise ValueError(f"`poles` must come in conjugate pairs (real gains), got {p.tolist()}.")
    return jnp.asarray(coeffs.real[1:][::-1].copy())


def split_state(robot: VSARobot, y):
    """``(q, θ (2, n), q̇, θ̇ (2, n))`` from the ``6n`` state vector."""
    n = robot.n
    y = jnp.asarray(y)
    if y.shape != (6 * n,):
        raise ValueError(f"`state` must have shape ({6 * n},) = (q, θ1, θ2, q̇, θ̇1, θ̇2), got {y.shape}.")
    return y[:n], y[n:3 * n].reshape(2, n), y[3 * n:4 * n], y[4 * n:].reshape(2, n)


def vsa_state(q, theta, qd, theta_d):
    """Pack ``(q, θ (2, n), q̇, θ̇ (2, n))`` into the ``6n`` state vector."""
    return jnp.concatenate([q, theta.reshape(-1), qd, theta_d.reshape(-1)])


def vsa_dynamics(robot: VSARobot, y, tau1, tau2):
    """Time derivative of the ``6n`` state under motor torques ``τ_1, τ_2`` (eqs. 5a–5c)."""
    q, theta, qd, theta_d = split_state(robot, y)
    phi = theta - q[None]
    tau_e = jnp.stack([robot.spring1(phi[0]), robot.spring2(phi[1])])
    qdd = forward_dynamics_kernel(robot.chain, q, qd, tau_e[0] + tau_e[1])
    theta_dd = (jnp.stack([tau1, tau2]) - robot.motor_damping * theta_d - tau_e) / robot.motor_inertia
    return vsa_state(qd, theta_d, qdd, theta_dd)
