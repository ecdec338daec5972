"""Tendons with arbitrary routing through consecutive soft modules (paper ``003_…`` §7.1).

A tendon runs inside one or several consecutive soft bodies at given cross-section offsets and
straight across the joints between them. Its length ``L(q)`` is the arc length of the routed path,
computed by Gauss–Legendre quadrature; with work coordinate ``h = −L`` the tension ``u ≥ 0``
produces ``Q_a = −(∂L/∂q)ᵀ u``, i.e. pulling shortens the tendon (principle of virtual work,
Renda et al. 2022, as used in paper ``003_…`` Sim. 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._types import Array, Config, Float
from ..bodies._base import AbstractSoftBody
from ..bodies.quadrature import gauss_legendre
from ._base import AbstractActuator

if TYPE_CHECKING:
    from ..chain import Chain

Offset = Callable | tuple


def _safe_norm(v: Array) -> Array:
    """``|v|`` with a zero (not NaN) gradient at ``v = 0`` (double-``where``)."""
    sq = v @ v
    tiny = sq < 1e-300
    return jnp.where(tiny, 0.0, jnp.sqrt(jnp.where(tiny, 1.0, sq)))


class Tendon(AbstractActuator):
    """One tendon routed through consecutive soft modules; input ``u`` = tension [N].

    In module ``modules[j]`` the tendon follows the material curve ``σ ↦ s(σ) = (σ, y_j(σ),
    z_j(σ))`` of the body (so bodies must use material coordinates ``(σ, y, z)`` with ``σ ∈ [0, 1]``
    the normalized arc length — as :class:`~kane_jax.PlanarConstantCurvature`,
    :class:`~kane_jax.bodies.variable_radius.VariableRadiusPCC` and
    :class:`~kane_jax.bodies.lvp.LVPBody` do); ``(y_j, z_j)`` [m] is a constant offset or a
    callable ``σ -> (2,)`` (e.g. a helix). It is anchored at ``σ = 0`` of the first module and
    at ``σ = 1`` of the last, and crosses each joint in between as a straight segment from the
    exit point of one body to the entry point of the next. Length:

        L(q) = Σ_j ∫₀¹ |∂g_j(q_Bj, s_j(σ))/∂σ| dσ  +  Σ_j |exit_j − entry_{j+1}|

    (Gauss–Legendre with ``order`` nodes per body; segments in the proximal frame of each joint).
    Work coordinate ``h = −L``: ``Q_a = −(∂L/∂q)ᵀ u``.

    Arguments:
        modules: chain indices of consecutive modules (increasing by 1), an int or a sequence.
        offsets: one offset per module: a pair ``(y, z)`` [m] or a callable ``σ -> (2,)``.
        order: Gauss–Legendre nodes per body for the arc length.

    Raises:
        ValueError: non-consecutive modules, wrong number/shape of offsets, bad order; at use, a
            routed module that is not a soft body or an index out of range.
        TypeError: an offset that is neither a pair nor a callable.
    """

    modules: tuple[int, ...] = eqx.field(static=True)
    offsets: tuple = eqx.field(static=True)
    constant_offsets: tuple = ()
    order: int = eqx.field(static=True, default=8)
    nu: int = eqx.field(static=True, default=1)

    def __init__(self, modules, offsets: Sequence[Offset], *, order: int = 8):
        idx = tuple(int(i) for i in np.atleast_1d(np.asarray(modules)))
        if not idx or any(i < 0 for i in idx) or any(b - a != 1 for a, b in zip(idx[:-1], idx[1:])):
            raise ValueError(f"`modules` must be non-negative consecutive chain indices, got {modules!r}.")
        offsets = list(offsets) if isinstance(offsets, (list, tuple)) else [offsets]
        if len(offsets) == 2 and len(idx) != 2 and all(np.ndim(o) == 0 and not callable(o) for o in offsets):
            offsets = [tuple(offsets)]  # a single (y, z) pair
        if len(offsets) != len(idx):
            raise ValueError(f"`offsets` must have one entry per routed module ({len(idx)}), got {len(offsets)}.")
        fns, consts = [], []
        for j, o in enumerate(offsets):
            if callable(o):
                out = jax.eval_shape(o, jax.ShapeDtypeStruct((), jnp.result_type(float)))
                if getattr(out, "shape", None) != (2,):
                    raise ValueError(f"`offsets[{j}]` must return shape (2,), got {getattr(out, 'shape', out)}.")
                fns.append(o)
                consts.append(jnp.zeros(2))
            else:
                try:
                    arr = jnp.asarray(o, dtype=float)
                except (TypeError, ValueError):
                    raise TypeError(f"`offsets[{j}]` must be a (y, z) pair or a callable, "
                                    f"got {type(o).__name__}.") from None
                if arr.shape != (2,):
                    raise ValueError(f"`offsets[{j}]` must be a (y, z) pair, got shape {arr.shape}.")
                fns.append(None)
                consts.append(arr)
        _checks.count(order, "order")
        self.modules, self.offsets, self.constant_offsets = idx, tuple(fns), tuple(consts)
        self.order, self.nu = int(order), 1

    def _material(self, j: int, sigma: Array) -> Array:
        fn = self.offsets[j]
        yz = fn(sigma) if fn is not None else self.constant_offsets[j].astype(jnp.result_type(sigma))
        return jnp.concatenate([sigma[None], yz])

    def length(self, chain: Chain, q: Config) -> Array:
        """Tendon length ``L(q)`` [m]."""
        if max(self.modules) >= chain.n_modules:
            raise ValueError(f"Tendon `modules` {self.modules} out of range for a chain of {chain.n_modules} modules.")
        return self._length([chain.module(i) for i in self.modules],
                            [q[chain.coordinate_slice(i)] for i in self.modules])

    def _length(self, modules, coordinates) -> Array:
        """``L`` from the routed modules' ``(joint, body)`` and coordinates, in routing order."""
        xs, ws = gauss_legendre(self.order)
        dtype = coordinates[0].dtype
        xs = jnp.asarray(xs, dtype=dtype)
        total = jnp.zeros((), dtype=dtype)
        pose = jnp.eye(4, dtype=dtype)  # current body's proximal frame in the first one's
        exit_point = None
        for j, ((joint, body), qi) in enumerate(zip(modules, coordinates)):
            if not isinstance(body, AbstractSoftBody):
                raise ValueError(f"Tendon routed through module {self.modules[j]}, whose body {type(body).__name__} "
                                 "is not a soft body.")
            qj, qb = qi[: joint.nq], qi[joint.nq:]
            if j > 0:
                pose = pose @ joint.transform(qj)

            def path(sigma, j=j, body=body, qb=qb):
                return body.position(qb, self._material(j, sigma))

            speed = jax.vmap(lambda s: _safe_norm(jax.jvp(path, (s,), (jnp.ones_like(s),))[1]))(xs)
            total = total + jnp.asarray(ws) @ speed
            if len(modules) == 1:  # one body: no segment across a joint
                break
            entry = pose[:3, :3] @ path(jnp.zeros((), dtype)) + pose[:3, 3]
            if exit_point is not None:
                total = total + _safe_norm(entry - exit_point)
            exit_point = pose[:3, :3] @ path(jnp.ones((), dtype)) + pose[:3, 3]
            pose = pose @ body.tip(qb)
        return total

    def work_coordinates(self, chain: Chain, q: Config) -> Float[Array, "1"]:
        return -self.length(chain, q)[None]

    def local_module(self) -> int | None:
        """The routed module when the tendon runs within one body (it then depends on that body only)."""
        return self.modules[0] if len(self.modules) == 1 else None

    def module_work_coordinates(self, joint, body, q_module: Config) -> Float[Array, "1"]:
        return -self._length([(joint, body)], [q_module])[None]
