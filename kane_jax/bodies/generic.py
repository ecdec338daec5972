"""The model-agnostic soft body: a user's ``position(q, s)`` and ``tip(q)`` (paper ``003_…`` eq. 2)."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._types import Array, Config, Float, Pose, Vec3
from ._base import AbstractLinearElastic, AbstractPointBody, mapped_points


@eqx.filter_jit
def _sensitivities(position, tip, points, q):
    """``∂g(q, s_k)/∂q`` and ``∂h/∂q``, compiled: eager autodiff would dispatch hundreds of ops."""
    dp = jax.jacfwd(lambda x: jax.vmap(lambda s: position(x, s))(points))(q)
    return dp, jax.jacfwd(tip)(q)


def _probe_geometry(position, tip, nq: int, points: Array) -> None:
    """Check the shapes returned by ``position``/``tip`` and that ``nq`` matches their use of ``q``."""
    s0 = points[0]
    try:
        out_p = jax.eval_shape(position, jax.ShapeDtypeStruct((nq,), points.dtype), s0)
        out_t = jax.eval_shape(tip, jax.ShapeDtypeStruct((nq,), points.dtype))
    except Exception as err:  # the user's function failed on a q of length nq
        raise ValueError(
            f"`position(q, s)`/`tip(q)` failed on q of shape ({nq},) and s of shape {s0.shape} "
            f"(is `nq`={nq} right?): {type(err).__name__}: {err}"
        ) from None
    if getattr(out_p, "shape", None) != (3,):
        raise ValueError(f"`position(q, s)` must return shape (3,), got {getattr(out_p, 'shape', out_p)}.")
    if getattr(out_t, "shape", None) != (4, 4):
        raise ValueError(f"`tip(q)` must return shape (4, 4), got {getattr(out_t, 'shape', out_t)}.")
    if not _checks.is_concrete(points):
        return
    # JAX clamps out-of-range indices; a NumPy probe raises instead, catching `nq` too small.
    try:
        position(np.zeros(nq), np.asarray(s0))
        tip(np.zeros(nq))
    except IndexError as err:
        raise ValueError(
            f"`nq`={nq} does not match `position`/`tip`: they index q beyond its length ({err})."
        ) from None
    except Exception:  # noqa: BLE001 - functions that need JAX arrays are checked below only
        pass
    # Every coordinate must move some mass point or the distal frame, or M is singular.
    if nq:
        q = jnp.asarray(np.random.default_rng(0).uniform(-0.3, 0.3, nq), dtype=points.dtype)
        dp, dt = _sensitivities(position, tip, points, q)
        moved = np.any(np.abs(np.asarray(dp)) > 0, axis=(0, 1)) | np.any(np.abs(np.asarray(dt)) > 0, axis=(0, 1))
        if not np.all(moved):
            unused = np.flatnonzero(~moved).tolist()
            raise ValueError(
                f"`nq`={nq} does not match `position`/`tip`: coordinates {unused} move no point and "
                "not the distal frame (the mass matrix would be singular)."
            )


class Body(AbstractLinearElastic, AbstractPointBody):
    """Generic soft body from its geometry alone.

    Arguments:
        position: pure function ``(q, s) -> (3,)``, position of material point ``s`` in the body's
            proximal frame (the joint's output frame). May be an ``equinox.Module`` holding array
            parameters, so that gradients reach them (e.g. a neural network).
        tip: pure function ``q -> (4, 4)``, the distal frame ``{S_i}`` in the proximal frame.
        nq: number of body coordinates.
        points: ``(K, d)`` material coordinates of the quadrature nodes.
        weights: ``(K,)`` their masses [kg].
        stiffness, damping: optional ``(nq, nq)`` matrices (or scalar/diagonal) for ``K q + D q̇``.

    Raises:
        ValueError: shapes that do not match, non-positive weights, ``nq`` inconsistent with
            ``position``/``tip``.
        TypeError: non-callable ``position``/``tip`` or non-numeric arrays.

    Reuse the same ``position``/``tip`` objects for identical bodies: modules with the same
    functions are evaluated together by ``vmap`` and compile once.
    """

    position_fn: Callable
    tip_fn: Callable
    points: Float[Array, "K d"]
    weights: Float[Array, " K"]
    stiffness: Float[Array, "n n"]
    damping: Float[Array, "n n"]
    nq: int = eqx.field(static=True)

    def __init__(self, position, tip, nq, points, weights, stiffness=None, damping=None, *, check=True):
        if not callable(position):
            raise TypeError(f"`position` must be a callable (q, s) -> (3,), got {type(position).__name__}.")
        if not callable(tip):
            raise TypeError(f"`tip` must be a callable q -> (4, 4), got {type(tip).__name__}.")
        if not isinstance(nq, (int, np.integer)) or isinstance(nq, bool) or nq < 0:
            raise TypeError(f"`nq` must be a non-negative int, got {nq!r}.")
        points = _checks.as_float_array(points, "points")
        if points.ndim == 1:
            points = points[:, None]
        if points.ndim != 2 or points.shape[0] == 0:
            raise ValueError(f"`points` must have shape (K, d) with K >= 1, got shape {points.shape}.")
        weights = _checks.as_float_array(weights, "weights")
        if weights.shape != (points.shape[0],):
            raise ValueError(
                f"`weights` must have shape ({points.shape[0]},) to match `points`, got shape {weights.shape}."
            )
        _checks.positive(weights, "weights")
        self.position_fn = position
        self.tip_fn = tip
        self.nq = int(nq)
        self.points = points
        self.weights = weights
        self.stiffness = _checks.matrix_or_zeros(stiffness, "stiffness", self.nq)
        self.damping = _checks.matrix_or_zeros(damping, "damping", self.nq)
        if check:
            _probe_geometry(position, tip, self.nq, points)

    def position(self, q: Config, s: Array) -> Vec3:
        return self.position_fn(q, s)

    def tip(self, q: Config) -> Pose:
        return self.tip_fn(q)

    def points_and_tip(self, q: Config) -> tuple[Float[Array, "K 3"], Pose]:
        return mapped_points(self, q), self.tip_fn(q)
