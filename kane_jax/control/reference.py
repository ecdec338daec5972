"""References for the controllers: rest-to-rest polynomials and the map to actuation coordinates."""

from __future__ import annotations

import abc
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp

from .._types import Array, Config
from ..algorithms.actuation import work_coordinates
from ..chain import Chain

RefFn = Callable[[Array], tuple[Array, Array, Array]]


class AbstractRestToRest(eqx.Module):
    """Rest-to-rest ``x(t) = start + (goal − start) s(τ)``, ``τ = (t − t0)/duration`` clipped to [0, 1].

    Subclasses give the profile ``s`` with ``s(0) = 0``, ``s(1) = 1``, ``s'(0) = s'(1) = 0``;
    outside ``(t0, t0 + duration)`` the reference holds with zero velocity and acceleration.
    Calling it returns ``(x, ẋ, ẍ)``.

    Raises:
        ValueError: ``start``/``goal`` of different shapes or a non-positive ``duration``.
    """

    start: Array
    goal: Array
    duration: Array
    t0: Array

    def __init__(self, start, goal, duration, t0=0.0):
        self.start = jnp.asarray(start, dtype=float)
        self.goal = jnp.asarray(goal, dtype=float)
        if self.start.shape != self.goal.shape or self.start.ndim != 1:
            raise ValueError(f"`start` and `goal` must be 1-D of the same shape, got {self.start.shape} and "
                             f"{self.goal.shape}.")
        self.duration = jnp.asarray(duration, dtype=float)
        if isinstance(duration, (int, float)) and not duration > 0:
            raise ValueError(f"`duration` must be positive, got {duration}.")
        self.t0 = jnp.asarray(t0, dtype=float)

    @abc.abstractmethod
    def profile(self, tau: Array) -> tuple[Array, Array, Array]:
        """``s(τ)``, ``ds/dτ`` and ``d²s/dτ²``."""

    def __call__(self, t) -> tuple[Array, Array, Array]:
        tau = jnp.clip((t - self.t0) / self.duration, 0.0, 1.0)
        inside = (tau > 0.0) & (tau < 1.0)
        s, ds, dds = self.profile(tau)
        delta = self.goal - self.start
        return (self.start + delta * s, delta * jnp.where(inside, ds / self.duration, 0.0),
                delta * jnp.where(inside, dds / self.duration**2, 0.0))


class QuinticReference(AbstractRestToRest):
    """Quintic ``s = 10τ³ − 15τ⁴ + 6τ⁵``: zero velocity and acceleration at both ends."""

    def profile(self, tau):
        return (tau**3 * (10 - 15 * tau + 6 * tau**2), 30 * tau**2 * (1 - tau) ** 2,
                60 * tau * (1 - tau) * (1 - 2 * tau))


class CubicReference(AbstractRestToRest):
    """Cubic ``s = 3τ² − 2τ³``: zero velocity at both ends (the acceleration jumps there)."""

    def profile(self, tau):
        return tau**2 * (3 - 2 * tau), 6 * tau * (1 - tau), 6 - 12 * tau


def as_reference(reference, size: int, name: str = "reference") -> RefFn:
    """A constant set-point ``(size,)`` or a callable ``t ↦ (x, ẋ, ẍ)`` as a callable."""
    if callable(reference) and not eqx.is_array(reference):
        out = jax.eval_shape(reference, jnp.zeros(()))
        if not (isinstance(out, tuple) and len(out) == 3 and all(o.shape == (size,) for o in out)):
            raise ValueError(f"`{name}` must return (x, xd, xdd), each of shape ({size},), got {out}.")
        return reference
    x = jnp.asarray(reference, dtype=float)
    if x.shape != (size,):
        raise ValueError(f"`{name}` must be a set-point of shape ({size},) or a callable t -> (x, xd, xdd), "
                         f"got shape {x.shape}.")
    return SetPoint(x)


class SetPoint(eqx.Module):
    """A constant reference: ``(x, 0, 0)`` at all times."""

    x: Array

    def __call__(self, t):
        return self.x, jnp.zeros_like(self.x), jnp.zeros_like(self.x)


class ActuationReference(eqx.Module):
    """A configuration reference ``q_d(t)`` mapped to actuation coordinates ``y_d = h(q_d)``.

    ``ẏ_d = J q̇_d`` and ``ÿ_d = J q̈_d + J̇ q̇_d`` with ``J = ∂h/∂q`` by nested ``jvp``, for the
    collocated controllers (:class:`~kane_jax.control.CollocatedPFBL`); with joint motors
    ``h = gains · q[indices]``.
    """

    chain: Chain
    reference: Callable

    def __init__(self, chain: Chain, reference):
        if chain.nu == 0:
            raise ValueError("`chain` must have actuators to define actuation coordinates, got chain.nu == 0.")
        self.chain = chain
        self.reference = as_reference(reference, chain.nq)

    def __call__(self, t):
        q, qd, qdd = self.reference(t)
        return second_order_along(lambda x: work_coordinates(self.chain, x), q, qd, qdd)


def second_order_along(h: Callable, q: Array, qd: Array, qdd: Array | None = None) -> tuple[Array, Array, Array]:
    """``h``, ``ḣ = J q̇`` and ``ḧ = J q̈ + q̇ᵀ (∂²h/∂q²) q̇`` along a path through ``q`` with velocity ``q̇``
    and acceleration ``q̈`` (default 0, which gives ``J̇ q̇``).

    One nested forward-mode trace of the scalar path ``τ ↦ h(q + τ q̇ + τ²/2 q̈)`` at ``τ = 0``: its
    first two τ-derivatives are exactly ``ḣ`` and ``ḧ``, and ``h`` is traced once instead of once for
    ``ḣ``, once for ``J̇ q̇`` and once for ``J q̈``.
    """
    dtype = jnp.result_type(q, qd)
    zero, one = jnp.zeros((), dtype), jnp.ones((), dtype)

    def path(tau):
        x = q + tau * qd
        return h(x if qdd is None else x + 0.5 * tau**2 * qdd)

    (y, yd), (_, ydd) = jax.jvp(lambda tau: jax.jvp(path, (tau,), (one,)), (zero,), (one,))
    return y, yd, ydd


def gains(x, size: int, name: str) -> Array:
    """A scalar or ``(size,)`` vector of non-negative gains as a ``(size,)`` array."""
    arr = jnp.asarray(x, dtype=float)
    if arr.ndim == 0:
        arr = jnp.full((size,), arr)
    if arr.shape != (size,):
        raise ValueError(f"`{name}` must be a scalar or shape ({size},), got shape {arr.shape}.")
    if not isinstance(arr, jax.core.Tracer) and bool(jnp.any(arr < 0)):
        raise ValueError(f"`{name}` must be non-negative, got {arr}.")
    return arr


def split_state(chain: Chain, q: Config, qd: Config) -> tuple[Config, Config]:
    return chain.check_state(q, "q"), chain.check_state(qd, "qd")
