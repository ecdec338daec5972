"""A soft body whose kinematics is learned: ``position(q, s)`` is a small neural network.

The network (an :class:`equinox.nn.MLP`) is an ordinary pytree leaf of the body, so every
algorithm (ID, mass matrix, FD, energies, kinematics) is differentiable with respect to its
weights: fit it to motion-capture data of a soft segment with optax through
:func:`~kane_jax.inverse_dynamics` or a rollout. The distal frame is built from three points of
the (rigid) tip contact area predicted by the same network (paper ``003_…`` Assumption 2,
eqs. 4–7), so no separate pose output is needed.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._types import Array, Config, Float, Pose, Vec3
from ._base import AbstractLinearElastic, AbstractPointBody, mapped_points
from .frames import frame_from_points
from .quadrature import rod_rule


class LearnedBody(AbstractLinearElastic, AbstractPointBody):
    """Soft segment along +x whose deformation is an MLP of the configuration and material point.

    ``g(q, s) = (L σ, y, z) + L σ (N(q, ŝ) − N(0, ŝ))`` with ``ŝ = (σ, y/r, z/r)`` and ``N`` the
    network (input ``nq + 3``, output 3). The ``σ`` factor keeps the base section (the proximal
    contact area) fixed, and subtracting ``N(0, ŝ)`` makes ``q = 0`` exactly the straight rest
    shape.

    Coordinates ``q`` (``nq``, dimensionless or whatever the network was trained on): latent
    shape coordinates. Rest configuration ``q = 0``: straight cylinder of length ``L`` and radius
    ``r`` along the proximal +x axis. Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]``
    normalized arc length, ``(y, z)`` [m] position in the rest cross section. The distal frame is
    :func:`~kane_jax.frame_from_points` of the deformed points ``s = (1, 0, 0)``, ``(1, r, 0)``, ``(1, 0, r)``
    of the tip face (identity rotation, origin ``(L, 0, 0)`` at rest).

    Arguments:
        nq: number of coordinates.
        length: ``L`` [m]; radius: ``r`` [m]; density: ``ρ`` [kg/m³].
        key: a ``jax.random`` key to initialize the network (``width_size``, ``depth``,
            ``activation`` as in :class:`equinox.nn.MLP`); or ``network``: an existing callable
            pytree mapping ``(nq + 3,) -> (3,)`` (e.g. a trained MLP).
        stiffness, damping: optional ``(nq, nq)`` (or scalar/diagonal) matrices for ``K q + D q̇``.
        order, n_radial, n_angular: mass-point rule (see :func:`~kane_jax.bodies.rod_rule`).

    Raises:
        ValueError/TypeError: bad ``nq``, geometry, network output shape, or neither ``key`` nor
            ``network`` given.
    """

    network: eqx.Module
    length: Float[Array, ""]
    radius: Float[Array, ""]
    points: Float[Array, "K 3"]
    weights: Float[Array, " K"]
    stiffness: Float[Array, "n n"]
    damping: Float[Array, "n n"]
    nq: int = eqx.field(static=True)

    def __init__(self, nq, *, length=0.2, radius=0.02, density=1000.0, key=None, network=None, width_size=16,
                 depth=2, activation=jax.nn.tanh, stiffness=None, damping=None, order=4, n_radial=1, n_angular=3):
        if not isinstance(nq, (int, np.integer)) or isinstance(nq, bool) or nq < 1:
            raise ValueError(f"`nq` must be a positive int, got {nq!r}.")
        self.nq = int(nq)
        names = ("length", "radius", "density")
        vals = [_checks.as_float_array(v, n, ()) for v, n in zip((length, radius, density), names)]
        for v, n in zip(vals, names):
            _checks.positive(v, n)
        self.length, self.radius, density = vals
        if network is None:
            if key is None:
                raise TypeError("LearnedBody needs `key` (to initialize the MLP) or `network`, got neither.")
            network = eqx.nn.MLP(self.nq + 3, 3, width_size, depth, activation=activation, key=key)
        elif not callable(network):
            raise TypeError(f"`network` must be callable (nq + 3,) -> (3,), got {type(network).__name__}.")
        out = jax.eval_shape(network, jax.ShapeDtypeStruct((self.nq + 3,), self.length.dtype))
        if getattr(out, "shape", None) != (3,):
            raise ValueError(f"`network` must map shape ({self.nq + 3},) to (3,), got {getattr(out, 'shape', out)}.")
        self.network = network
        self.points, vol = rod_rule(self.length, self.radius, order=order, n_radial=n_radial, n_angular=n_angular)
        self.weights = density * vol
        self.stiffness = _checks.matrix_or_zeros(stiffness, "stiffness", self.nq)
        self.damping = _checks.matrix_or_zeros(damping, "damping", self.nq)

    def _net(self, q: Config, s: Array) -> Vec3:
        feats = jnp.concatenate([q, jnp.stack([s[0], s[1] / self.radius, s[2] / self.radius]).astype(q.dtype)])
        return self.network(feats)

    def position(self, q: Config, s: Array) -> Vec3:
        sigma = s[0]
        rest = jnp.stack([self.length * sigma, s[1], s[2]])
        disp = self._net(q, s) - self._net(jnp.zeros_like(q), s)
        return rest + self.length * sigma * disp

    def _frame_coords(self, dtype) -> Float[Array, "3 3"]:
        one, zero, r = jnp.ones((), dtype), jnp.zeros((), dtype), self.radius.astype(dtype)
        return jnp.stack([jnp.stack([one, zero, zero]), jnp.stack([one, r, zero]), jnp.stack([one, zero, r])])

    def tip(self, q: Config) -> Pose:
        p = mapped_points(self, q, self._frame_coords(q.dtype))
        return frame_from_points(p[0], p[1], p[2])

    def points_and_tip(self, q: Config) -> tuple[Float[Array, "K 3"], Pose]:
        # the quadrature points and the three frame points in one vmapped network evaluation
        x = mapped_points(self, q, jnp.concatenate([self.points.astype(q.dtype), self._frame_coords(q.dtype)]))
        return x[:-3], frame_from_points(x[-3], x[-2], x[-1])
