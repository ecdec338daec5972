"""Quadrature rules for the mass points of slender bodies (nodes and volume weights).

Nodes are built with ``jax.numpy`` from (possibly traced) radii and lengths, so masses stay
differentiable with respect to geometry and density. The rules are compiled programs (their sizes
static): a body's constructor runs one of them instead of a dozen eager operations, each of which
XLA would compile on its own (:func:`construction_jit`).
"""

from __future__ import annotations

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._types import Array, Float


def gauss_legendre(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on [0, 1] (exact for polynomials of degree 2·order − 1)."""
    _checks.count(order, "order")
    x, w = np.polynomial.legendre.leggauss(int(order))
    return 0.5 * (x + 1.0), 0.5 * w


def construction_jit(*static: str):
    """``jax.jit`` for a body constructor's arithmetic, with the named (integer or structural)
    arguments static.

    Eagerly, every ``jax.numpy`` operation is dispatched, and compiled on its first use, on its own:
    seven soft bodies built in a new process compiled 172 programs (a PCS rod 58, 1.9 of its 2.7 s)
    before their arithmetic became one program per rule (21 programs). Under a transformation (a body
    built inside ``jax.grad``) the function is traced inline, as the eager code was.

    Raises (of the decorated function):
        TypeError: a static argument that is not hashable (a list for ``order``, say), named.
    """
    def decorate(fn):
        jitted = jax.jit(fn, static_argnames=static)
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            for name, value in signature.bind(*args, **kwargs).arguments.items():
                if name in static:
                    try:
                        hash(value)
                    except TypeError:
                        raise TypeError(f"`{name}` must be an int, a bool or a tuple, got {value!r}.") from None
            return jitted(*args, **kwargs)

        return call

    return decorate


@construction_jit("n_radial", "n_angular")
def disk_rule(radius: Array, n_radial: int = 2, n_angular: int = 4) -> tuple[Float[Array, "M 2"], Float[Array, " M"]]:
    """Nodes ``(y, z)`` and areas on a disk of the given radius.

    Gauss–Legendre in ``r`` (with the ``r dr`` Jacobian) times an equally spaced angular rule:
    exact for the area and for the second moments ``∫ y², ∫ z²`` when ``n_radial ≥ 2`` and
    ``n_angular ≥ 3``. ``n_radial = 0`` gives the backbone only (one node of area ``π r²``).
    """
    radius = jnp.asarray(radius)
    if n_radial == 0:
        return jnp.zeros((1, 2), dtype=radius.dtype), jnp.pi * radius[None] ** 2
    if n_angular < 1:
        raise ValueError(f"`n_angular` must be >= 1, got {n_angular}.")
    xr, wr = gauss_legendre(n_radial)
    ang = 2 * np.pi * (np.arange(n_angular) + 0.5) / n_angular
    r = radius * jnp.asarray(xr)
    area_r = radius**2 * jnp.asarray(wr * xr) * (2 * np.pi / n_angular)  # ∫ r dr dθ
    y = (r[:, None] * jnp.cos(ang)[None, :]).reshape(-1)
    z = (r[:, None] * jnp.sin(ang)[None, :]).reshape(-1)
    area = jnp.repeat(area_r, n_angular)
    return jnp.stack([y, z], axis=1), area


def disk_is_centred(n_radial: int, n_angular: int) -> bool:
    """Whether :func:`disk_rule`'s nodes are symmetric about the centre and the y and z axes, so that
    their first moment and product ``Σ w y z`` vanish for every radius: the backbone alone
    (``n_radial = 0``) or at least two equally spaced angles."""
    return int(n_radial) == 0 or int(n_angular) >= 2


@construction_jit("order", "n_radial", "n_angular")
def rod_rule(
    length: Array, radius: Array, *, order: int = 5, n_radial: int = 2, n_angular: int = 4
) -> tuple[Float[Array, "K 3"], Float[Array, " K"]]:
    """Tensor rule on a cylinder: nodes ``(σ, y, z)`` with ``σ ∈ [0, 1]`` and their volumes.

    ``σ`` is the normalized arc length of the undeformed rod, ``(y, z)`` [m] the position in the
    cross section. Volume weights sum to ``π r² L``.
    """
    xs, ws = gauss_legendre(order)
    sec, area = disk_rule(radius, n_radial, n_angular)
    m = sec.shape[0]
    sigma = jnp.repeat(jnp.asarray(xs, dtype=sec.dtype), m)
    nodes = jnp.concatenate([sigma[:, None], jnp.tile(sec, (order, 1))], axis=1)
    vol = (jnp.asarray(ws)[:, None] * area[None, :]).reshape(-1) * length
    return nodes, vol
