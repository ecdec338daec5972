"""Linear-in-parameters identification: regressor by ``jax.jacfwd`` of the ID, then least squares.

The inverse dynamics is exactly linear in the inertial parameters of rigid links (mass, first
moment ``m c``, inertia about the frame origin), in a soft body's density (all mass weights scale
with it), in its elastic and damping moduli, and the actuation force ``A(q)ᵀ u`` in the actuator
gains. With the chain built from such parameters by a user function ``build(params)``, the
residual ``r(p) = ID(q, q̇, q̈; p) − A(q; p)ᵀ u`` is affine in ``p``: ``r = Φ p + r₀`` where the
regressor ``Φ`` is one forward-mode Jacobian (exact, no hand-derived regressor).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from .._types import Array
from ..algorithms._recursion import inverse_dynamics_kernel
from ..algorithms.actuation import input_force
from ..chain import Chain


class Samples(NamedTuple):
    """Measured samples, each ``(S, nq)`` (``u``: ``(S, m)``): configuration, velocity, acceleration, input."""

    q: Array
    qd: Array
    qdd: Array
    u: Array


class LinearFit(NamedTuple):
    """Least-squares estimate and diagnostics.

    ``rank``/``condition``: of the column-scaled regressor (rank < number of parameters means some
    are not identifiable from these data); ``rms``: RMS of the residual at the estimate.
    """

    params: Any
    rms: Array
    rank: int
    condition: float


def id_residual(build: Callable[[Any], Chain], params, q, qd, qdd, u) -> Array:
    """``ID(q, q̇, q̈) − A(q)ᵀ u`` of the chain ``build(params)`` (``u`` generalized forces if no actuators)."""
    chain = build(params)
    force = u if chain.nu == 0 else input_force(chain, q, u)
    return inverse_dynamics_kernel(chain, q, qd, qdd) - force


def _check_samples(data: Samples) -> Samples:
    if not isinstance(data, Samples):
        raise TypeError(f"`data` must be a kane_jax.identification.Samples, got {type(data).__name__}.")
    s = data.q.shape[0]
    for name, x in zip(data._fields, data):
        if x.ndim != 2 or x.shape[0] != s:
            raise ValueError(f"`data.{name}` must have shape (S, ·) with S = {s} samples, got {x.shape}.")
    return data


def regressor(build: Callable[[Any], Chain], params, data: Samples) -> tuple[Array, Array]:
    """Stacked regressor ``Φ`` ``(S·nq, P)`` and offset ``r₀`` with ``r(p) = Φ ravel(p) + r₀``.

    Arguments:
        build: ``params -> Chain``; the ID must be affine in the parameters it reads.
        params: a pytree of arrays (the expansion point; any value works when ``r`` is affine).
        data: :class:`Samples`.
    """
    return _regressor(build, params, _check_samples(data))


# One compiled program per (build, parameter structure, sample shapes): called eagerly, the vmapped
# jacfwd of the recursion ran operation by operation (docs/architecture.md, "Tracing time").
@eqx.filter_jit
def _regressor(build: Callable[[Any], Chain], params, data: Samples) -> tuple[Array, Array]:
    flat, unravel = ravel_pytree(params)

    def r(p, q, qd, qdd, u):
        return id_residual(build, unravel(p), q, qd, qdd, u)

    phi = jax.vmap(jax.jacfwd(r), in_axes=(None, 0, 0, 0, 0))(flat, *data)
    res = jax.vmap(r, in_axes=(None, 0, 0, 0, 0))(flat, *data)
    phi = phi.reshape(-1, flat.shape[0])
    return phi, res.ravel() - phi @ flat


@eqx.filter_jit
def _residuals(build: Callable[[Any], Chain], params, data: Samples) -> Array:
    return jax.vmap(lambda q, qd, qdd, u: id_residual(build, params, q, qd, qdd, u))(*data).ravel()


def linear_least_squares(build: Callable[[Any], Chain], params_guess, data: Samples, *,
                         check_linearity: bool = True, weights=None) -> LinearFit:
    """Estimate parameters from ``ID(q, q̇, q̈; p) = A(q; p)ᵀ u`` by linear least squares.

    The regressor is ``jax.jacfwd`` of the ID w.r.t. the flattened parameter pytree; columns are
    scaled to unit norm before the SVD-based ``lstsq`` so that parameters of very different
    magnitudes (kg m², Pa) are resolved alike.

    Arguments:
        build: ``params -> Chain``. params_guess: pytree giving the structure (values only matter
            if the ID is not exactly affine — see ``check_linearity``).
        data: :class:`Samples`. weights: optional ``(nq,)`` per-coordinate residual weights.
        check_linearity: verify ``r`` at a perturbed point against the affine model and raise if
            the ID is not linear in these parameters.

    Returns:
        :class:`LinearFit` ``(params, rms, rank, condition)``.

    Raises:
        ValueError: bad sample shapes, or (``check_linearity``) parameters the ID is not affine in.
        TypeError: ``data`` is not :class:`Samples`.
    """
    data = _check_samples(data)
    phi, r0 = _regressor(build, params_guess, data)
    flat, unravel = ravel_pytree(params_guess)
    if check_linearity:
        # a nearby point (10 % larger, slightly uneven) keeps physical parameters physical
        probe = flat * (1.1 + 0.02 * jnp.cos(jnp.arange(flat.size) + 1.0))
        direct = _residuals(build, unravel(probe), data)
        mismatch = float(jnp.max(jnp.abs(direct - (phi @ probe + r0))))
        scale = float(jnp.max(jnp.abs(direct))) + 1e-300
        if mismatch > 1e-8 * scale:
            raise ValueError(f"the ID is not affine in `params` (relative mismatch {mismatch / scale:.2e} at a probe "
                             f"point); use kane_jax.identification.fit (gradient-based) for these parameters.")
    if weights is not None:
        w = jnp.tile(jnp.asarray(weights, dtype=phi.dtype), data.q.shape[0])
        phi, r0 = phi * w[:, None], r0 * w
    norms = jnp.linalg.norm(phi, axis=0)
    norms = jnp.where(norms > 0, norms, 1.0)
    sol, _, rank, sv = jnp.linalg.lstsq(phi / norms[None, :], -r0)
    est = sol / norms
    rms = jnp.sqrt(jnp.mean((phi @ est + r0) ** 2))
    sv = np.asarray(sv)
    return LinearFit(unravel(est), rms, int(rank), float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf"))
