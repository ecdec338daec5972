"""Input sequences ``u(t)`` parameterized by knot values: the decision variables of shooting."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from .._types import Array, Float


class InputSequence(eqx.Module):
    """``u(t)`` on ``[0, t1]`` from ``K`` knot values: zero-order hold or piecewise linear.

    ``kind="zoh"``: ``u(t) = values[k]`` on ``[k h, (k+1) h)`` with ``h = t1 / K`` (piecewise
    constant; integrate with fixed steps that divide ``h``). ``kind="linear"``: ``K`` knots at
    ``t = k t1 / (K − 1)`` linearly interpolated (continuous, fine for adaptive steps). Beyond the
    ends the end values hold. ``values`` is an array leaf, so ``jax.grad``/optax reach it.

    Arguments:
        values: ``(K, nu)`` knot values. t1: horizon [s]. kind: ``"zoh"`` or ``"linear"``.

    Raises:
        ValueError: ``values`` not 2-D (or fewer than 2 knots for ``"linear"``), unknown ``kind``,
            non-positive ``t1``.
    """

    values: Float[Array, "K nu"]
    t1: float = eqx.field(static=True)
    kind: str = eqx.field(static=True)

    def __init__(self, values, t1: float, kind: str = "zoh"):
        values = jnp.asarray(values, dtype=float)
        if values.ndim != 2:
            raise ValueError(f"`values` must have shape (K, nu), got shape {values.shape}.")
        if kind not in ("zoh", "linear"):
            raise ValueError(f"`kind` must be 'zoh' or 'linear', got {kind!r}.")
        if kind == "linear" and values.shape[0] < 2:
            raise ValueError(f"`values` needs at least 2 knots for kind='linear', got {values.shape[0]}.")
        if not float(t1) > 0:
            raise ValueError(f"`t1` must be positive, got {t1}.")
        self.values, self.t1, self.kind = values, float(t1), kind

    @property
    def n_knots(self) -> int:
        return self.values.shape[0]

    @property
    def n_intervals(self) -> int:
        """Input intervals on ``[0, t1]``: ``K`` for a zero-order hold, ``K − 1`` for linear."""
        return self.n_knots if self.kind == "zoh" else self.n_knots - 1

    @property
    def jump_times(self) -> Float[Array, " J"]:
        """Interior knot times, where ``u`` jumps (zoh) or kinks (linear): ``jump_ts`` for adaptive solves."""
        m = self.n_intervals
        return self.t1 * jnp.arange(1, m, dtype=self.values.dtype) / m

    def __call__(self, t) -> Array:
        k = self.values.shape[0]
        if self.kind == "zoh":
            idx = jnp.clip(jnp.floor(t / self.t1 * k).astype(int), 0, k - 1)
            return self.values[idx]
        x = jnp.clip(t / self.t1 * (k - 1), 0.0, k - 1.0)
        i = jnp.clip(jnp.floor(x).astype(int), 0, k - 2)
        w = x - i
        return (1 - w) * self.values[i] + w * self.values[i + 1]
