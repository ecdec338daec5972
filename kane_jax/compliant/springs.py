"""Antagonistic nonlinear springs of VSA joints and the per-joint 2×2 deflection solve (``001_…`` §III).

A spring is any function ``φ ↦ τ_e(φ)`` acting joint by joint (``(n,) → (n,)``, output ``i`` depending
only on input ``i``). Its stiffness ``σ = ∂τ_e/∂φ`` (eq. 9), ``ζ = ∂σ/∂φ`` (eq. 15) and
``η = ∂²σ/∂φ²`` (eq. 16) are not written by hand: because the spring is decoupled, each is one
forward-mode derivative along the all-ones direction.
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


class CubicSpring(eqx.Module):
    """Cubic flexibility torque ``τ_e(φ) = K φ + K_c φ³`` per joint (paper ``001_…`` eq. 24).

    Arguments:
        stiffness: ``K`` [N m/rad], shape ``(n,)`` (or scalar with ``n``), positive.
        cubic: ``K_c`` [N m/rad³], same shape, non-negative.

    Raises:
        ValueError: wrong shapes or non-physical values.
    """

    stiffness: Float[Array, " n"]
    cubic: Float[Array, " n"]

    def __init__(self, stiffness, cubic, n: int | None = None):
        k = _checks.as_float_array(stiffness, "stiffness")
        kc = _checks.as_float_array(cubic, "cubic")
        if n is not None:
            k, kc = jnp.broadcast_to(k, (n,)), jnp.broadcast_to(kc, (n,))
        if k.ndim != 1 or kc.shape != k.shape:
            raise ValueError(
                f"`stiffness` and `cubic` must be vectors of one shape (n,), got {k.shape} and {kc.shape}.")
        _checks.positive(k, "stiffness")
        _checks.nonnegative(kc, "cubic")
        self.stiffness, self.cubic = k, kc

    def __call__(self, phi: Float[Array, " n"]) -> Float[Array, " n"]:
        return self.stiffness * phi + self.cubic * phi**3


def derivative(fn: Callable, phi: Array, order: int = 1) -> Array:
    """``d^k τ/dφ^k`` of a decoupled (elementwise) spring, by nested jvp along ones."""
    f = fn
    for _ in range(order):
        f = (lambda g: lambda x: jax.jvp(g, (x,), (jnp.ones_like(x),))[1])(f)
    return f(phi)


def task_map(springs: tuple[Callable, Callable], phi: Float[Array, "2 n"]) -> Float[Array, "2 n"]:
    """``F(φ1, φ2) = (τ_e1(φ1) + τ_e2(φ2), σ1(φ1) + σ2(φ2))``, the left side of eq. (14)."""
    s1, s2 = springs
    tau = s1(phi[0]) + s2(phi[1])
    sigma = derivative(s1, phi[0]) + derivative(s2, phi[1])
    return jnp.stack([tau, sigma])


def decoupling_matrix(springs: tuple[Callable, Callable], phi: Float[Array, "2 n"]) -> Float[Array, "n 2 2"]:
    """Per-joint blocks ``[[σ1, σ2], [ζ1, ζ2]]`` of the decoupling matrix ``𝒜`` (eq. 19)."""
    s1, s2 = springs
    rows = [[derivative(s1, phi[0], 1), derivative(s2, phi[1], 1)],
            [derivative(s1, phi[0], 2), derivative(s2, phi[1], 2)]]
    return jnp.moveaxis(jnp.array(rows), -1, 0)


def solve2(a: Float[Array, "n 2 2"], r: Float[Array, "2 n"]) -> tuple[Float[Array, "2 n"], Float[Array, " n"]]:
    """Solve the ``n`` 2×2 systems ``a_i x_i = r_i`` (columns of ``r``); also returns ``|det|/(|ad|+|bc|)``."""
    a11, a12, a21, a22 = a[:, 0, 0], a[:, 0, 1], a[:, 1, 0], a[:, 1, 1]
    det = a11 * a22 - a12 * a21
    scale = jnp.abs(a11 * a22) + jnp.abs(a12 * a21)
    ratio = jnp.abs(det) / jnp.where(scale > 0, scale, 1.0)
    safe = jnp.where(det == 0, 1.0, det)
    x = jnp.stack([a22 * r[0] - a12 * r[1], a11 * r[1] - a21 * r[0]]) / safe[None]
    return x, ratio


class Deflections(NamedTuple):
    """Solution of eq. (14) and its diagnostics, per joint."""

    phi: Float[Array, "2 n"]  # (φ1, φ2) [rad]
    residual: Float[Array, " n"]  # max |F(φ) − (τ_e, σ)| scaled by (1 + |target|)
    det_ratio: Float[Array, " n"]  # |det 𝒜_i| / (|σ1 ζ2| + |σ2 ζ1|): 0 means a dynamic singularity
    converged: Array  # bool (n,)
    steps: Array  # Newton steps taken


SINGULAR_RATIO = 1e-8  # det ratio below which a joint is declared singular


def solve_deflections(springs, tau_e, sigma, phi_guess, *, rtol: float = 1e-13, max_steps: int = 40) -> Deflections:
    """Solve ``τ_e1(φ1) + τ_e2(φ2) = τ_e``, ``σ1(φ1) + σ2(φ2) = σ`` for every joint (eq. 14, 61).

    Newton's method on the ``n`` decoupled 2×2 systems at once (vectorized, inside one
    ``lax.while_loop``), started from ``phi_guess`` — in a trajectory the previous instant's solution
    (001_… §III-B: "starting from the result obtained at the previous step ... achieving continuity").

    Returns:
        :class:`Deflections`; ``converged`` is False where no solution was found (the task is not
        attainable by the springs, or the start was too far), ``det_ratio`` tiny where the
        decoupling matrix is singular (e.g. identical springs with ``φ1 = φ2``).
    """
    target = jnp.stack([tau_e, sigma])
    tol = rtol * (1.0 + jnp.abs(target))

    def residual(phi):
        return task_map(springs, phi) - target

    def cond(state):
        _, r, k = state
        return (k < max_steps) & jnp.any(jnp.abs(r) > tol)

    def body(state):
        phi, r, k = state
        step, ratio = solve2(decoupling_matrix(springs, phi), r)
        ok = jnp.isfinite(step) & (ratio > SINGULAR_RATIO)[None]  # no step out of a singular point
        phi = phi - jnp.where(ok, step, 0.0)
        return phi, residual(phi), k + 1

    phi0 = jnp.asarray(phi_guess, dtype=target.dtype)
    phi, r, k = jax.lax.while_loop(cond, body, (phi0, residual(phi0), jnp.zeros((), jnp.int32)))
    _, ratio = solve2(decoupling_matrix(springs, phi), r)
    res = jnp.max(jnp.abs(r) / (1.0 + jnp.abs(target)), axis=0)
    converged = jnp.all(jnp.abs(r) <= tol, axis=0) & jnp.all(jnp.isfinite(phi), axis=0)
    return Deflections(phi, res, ratio, converged, k)


def symmetric_guess(springs, sigma, *, r0: float = 0.5, steps: int = 30) -> Float[Array, "2 n"]:
    """Start ``(r, −r)`` with ``σ1(r) + σ2(−r) = σ`` (antagonistic preload, zero net torque for
    symmetric springs), by a scalar Newton per joint from ``r = r0``."""
    s1, s2 = springs

    def g(r):
        return derivative(s1, r) + derivative(s2, -r) - sigma

    def body(_, r):
        slope = jax.jvp(g, (r,), (jnp.ones_like(r),))[1]
        step = g(r) / jnp.where(slope == 0, 1.0, slope)
        return jnp.clip(r - step, 1e-6, None)

    r = jax.lax.fori_loop(0, steps, body, jnp.full_like(sigma, r0))
    return jnp.stack([r, -r])


class TaskError(ValueError):
    """A VSA stiffness/motion task that the springs cannot realize, or a dynamic singularity."""


def raise_if_failed(sol: Deflections, where: str) -> None:
    """Raise :class:`TaskError` (concrete values) naming the failing joint(s) and the cause."""
    conv = np.asarray(sol.converged)
    ratio = np.asarray(sol.det_ratio)
    singular = ratio < SINGULAR_RATIO
    if np.any(singular):
        idx = np.argwhere(singular)[0]
        raise TaskError(
            f"{where}: the decoupling matrix of joint {idx[-1]} is singular (|det| ratio {ratio[tuple(idx)]:.2e} "
            f"< {SINGULAR_RATIO:.0e}) at the solution φ = {np.asarray(sol.phi)[(slice(None), *idx)].tolist()}: "
            "a dynamic singularity (e.g. identical antagonistic springs with φ1 = φ2); the stiffness/motion "
            "task cannot be tracked there.")
    if not np.all(conv):
        idx = np.argwhere(~conv)[0]
        raise TaskError(
            f"{where}: no solution of eq. (14) for joint {idx[-1]} (scaled residual "
            f"{np.asarray(sol.residual)[tuple(idx)]:.2e}): the desired (τ_e, σ) is not attainable by the "
            "springs (e.g. σ below the minimum stiffness, or |τ_e| too large for σ), or the start was too far.")
