"""The SE(3) right Jacobian ``T(Ω)`` in closed form, for :func:`~kane_jax._exp_jets.exp_jet`.

From the four smooth coefficients of :func:`~kane_jax._series.right_jacobian_coefficients`: ``T``'s
3×3 blocks (for the generators), ``T η`` in vector form (for the body velocity and, by one
forward-mode pass, its rate) and the pose ``exp(Ω)`` itself (``se3_exp``'s coefficients are
combinations of the same four: one series for the whole jet).
"""

from __future__ import annotations

import jax.numpy as jnp

from ._series import right_jacobian_coefficients
from ._small import cross, dot, sum_small
from ._types import Array
from .lie import skew


def se3_coefficients(omega: Array) -> tuple[Array, Array, Array, Array]:
    """``c1 … c4`` of :func:`~kane_jax._series.right_jacobian_coefficients` at ``θ² = |ω|²`` of the
    twists ``omega`` ``(…, 6)``: four ``(…,)`` arrays, smooth with all derivatives at ``θ = 0``."""
    w = omega[..., :3]
    return right_jacobian_coefficients(jnp.sum(w * w, axis=-1))


def right_jacobian_blocks(coef, omega: Array) -> Array:
    """The blocks of the right Jacobian ``T(Ω) = [[A, 0], [Q, A]]`` stacked as ``(…, 2, 3, 3)``.

    From ``T = 1 − c1 ad + c2 ad² − c3 ad³ + c4 ad⁴`` (:func:`~kane_jax.lie.se3_right_jacobian`) with
    ``ad_Ω = [[W, 0], [V, W]]``, ``W = [ω]×``, ``V = [v]×``, ``W³ = −θ² W`` and
    ``[a]×[b]× = b aᵀ − (a·b) 1``: with ``d = ω·v``, ``a1 = c1 − θ² c3``, ``a2 = c2 − θ² c4``,
    ``A = 1 − a1 W + a2 W²``, ``Q = −a1 V + a2 (v ωᵀ + ω vᵀ − 2d 1) + 2d (c3 W − c4 W²)``,
    ``W² = ω ωᵀ − θ² 1``. Each block entry is a few products of per-section scalars, against four
    ``ad`` applications per generator in the vector form.
    """
    c1, c2, c3, c4 = coef
    w, v = omega[..., :3], omega[..., 3:]
    t2, d = jnp.sum(w * w, axis=-1), jnp.sum(w * v, axis=-1)
    a1, a2 = c1 - t2 * c3, c2 - t2 * c4
    eye = jnp.broadcast_to(jnp.eye(3, dtype=omega.dtype), w.shape[:-1] + (3, 3))
    ww = w[..., :, None] * w[..., None, :]
    w2 = ww - t2[..., None, None] * eye
    sw, sv = skew(w), skew(v)
    s = lambda x: x[..., None, None]  # noqa: E731
    a = eye - s(a1) * sw + s(a2) * w2
    vw = v[..., :, None] * w[..., None, :]
    q = (-s(a1) * sv + s(a2) * (vw + jnp.swapaxes(vw, -1, -2) - 2 * s(d) * eye)
         + 2 * s(d) * (s(c3) * sw - s(c4) * w2))
    return jnp.stack([a, q], axis=-3)


def apply_blocks(blocks: Array, eta: Array) -> Array:
    """``T η`` for ``T = [[A, 0], [Q, A]]`` (``blocks`` ``(…, 2, 3, 3)``, ``η`` ``(…, 6)``)."""
    a, q = blocks[..., 0, :, :], blocks[..., 1, :, :]
    e_w, e_v = eta[..., None, :3], eta[..., None, 3:]
    return jnp.concatenate([sum_small(a * e_w, -1), sum_small(q * e_w + a * e_v, -1)], -1)


def block_columns(blocks: Array, d_omega: Array, columns: tuple[int, ...]) -> Array:
    """``T ∂_k Ω`` for ``∂_k Ω = d_omega[…, k, c_k] e_{c_k}``: column ``c_k`` of ``T = [[A, 0], [Q, A]]``
    scaled (``blocks`` ``(…, 2, 3, 3)``, ``d_omega`` ``(…, n, 6)``, ``columns`` ``n`` static indices).

    Six multiplications per generator instead of :func:`apply_blocks`' ≈ 51 operations on a
    one-hot ``∂_k Ω`` (each coordinate of a PCS rod moves one strain).
    """
    a, q = blocks[..., 0, :, :], blocks[..., 1, :, :]
    zero = jnp.zeros_like(a[..., :, 0])
    cols = [jnp.concatenate([a[..., :, c], q[..., :, c]] if c < 3 else [zero, a[..., :, c - 3]], -1)
            for c in columns]
    scale = jnp.stack([d_omega[..., k, c] for k, c in enumerate(columns)], -1)
    return jnp.stack(cols, -2) * scale[..., None]


def generators(blocks: Array, d_omega: Array, columns: tuple[int, ...] | None) -> Array:
    """``T ∂_k Ω`` for every coordinate: :func:`block_columns` where ``columns`` names them, else the product."""
    if columns is None:
        return apply_blocks(blocks[..., None, :, :, :], d_omega)
    if len(columns) != d_omega.shape[-2] or not all(0 <= c < 6 for c in columns):
        raise ValueError(f"columns: expected {d_omega.shape[-2]} twist components in 0..5, got {columns!r}")
    return block_columns(blocks, d_omega, columns)


def se3_rate(coef, omega: Array, eta: Array) -> Array:
    """``T(Ω) η`` (the right Jacobian of :func:`right_jacobian_blocks`) in vector form, for the rate.

    ``A x = x − a1 ω × x + a2 W² x`` and ``Q x = −a1 v × x + a2 (v (ω·x) + ω (v·x) − 2d x)
    + 2d (c3 ω × x − c4 W² x)`` with ``W² x = ω (ω·x) − θ² x``: its tangent along ``(ċ, Ω̇)`` at
    fixed ``η = Ω̇`` is the rate ``Ṫ Ω̇`` without forming ``Ṫ``'s 18 block entries.

    Arguments:
        coef: :func:`se3_coefficients` of ``omega``. omega: ``(…, 6)`` twists. eta: ``(…, 6)``.

    Returns:
        ``T(Ω) η``, ``(…, 6)`` (equal to the blocks applied to rounding, ``tests/bodies/test_closed_form_jets.py``).
    """
    c1, c2, c3, c4 = coef
    w, v = omega[..., :3], omega[..., 3:]
    x, y = eta[..., :3], eta[..., 3:]
    t2, d = dot(w, w)[..., None], dot(w, v)[..., None]
    a1, a2 = (c1 - t2[..., 0] * c3)[..., None], (c2 - t2[..., 0] * c4)[..., None]
    wx, w2x = cross(w, x), w * dot(w, x)[..., None] - t2 * x
    ax = x - a1 * wx + a2 * w2x
    ay = y - a1 * cross(w, y) + a2 * (w * dot(w, y)[..., None] - t2 * y)
    qx = (-a1 * cross(v, x) + a2 * (v * dot(w, x)[..., None] + w * dot(v, x)[..., None] - 2 * d * x)
          + 2 * d * (c3[..., None] * wx - c4[..., None] * w2x))
    return jnp.concatenate([ax, qx + ay], -1)


def se3_pose(coef, omega: Array) -> tuple[Array, Array]:
    """``exp(Ω)`` from the right Jacobian's coefficients: ``b = c1 − θ² c3 = (1 − cos θ)/θ²``,
    ``c = c2 − θ² c4 = (θ − sin θ)/θ³``, ``a = 1 − θ² c = sin θ/θ`` (:func:`~kane_jax.lie.se3_exp`'s
    coefficients, without a second series).

    Arguments:
        coef: :func:`se3_coefficients` of ``omega``. omega: ``(…, 6)`` twists.

    Returns:
        ``(R, t)``: rotations ``(…, 3, 3)`` and translations ``(…, 3)`` (``se3_exp`` to 1e-14 with its
        first derivatives to 1e-12, ``tests/bodies/test_closed_form_jets.py``).
    """
    c1, c2, c3, c4 = coef
    w, v = omega[..., :3], omega[..., 3:]
    t2 = dot(w, w)
    b, c = c1 - t2 * c3, c2 - t2 * c4
    s = lambda x: x[..., None, None]  # noqa: E731
    eye = jnp.broadcast_to(jnp.eye(3, dtype=omega.dtype), w.shape[:-1] + (3, 3))
    rot = s(1 - b * t2) * eye + s(1 - t2 * c) * skew(w) + s(b) * (w[..., :, None] * w[..., None, :])
    trans = v + b[..., None] * cross(w, v) + c[..., None] * (w * dot(w, v)[..., None] - t2[..., None] * v)
    return rot, trans
