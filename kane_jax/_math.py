"""Small SO(3)/SE(3) helpers whose values and derivatives of every order are finite at zero.

The straight configuration of a soft body (zero curvature, zero rotation vector) is where
simulations start, so every ratio such as ``sin(x)/x`` is written with ``jnp.sinc`` (which has
correct derivatives of all orders at 0) or with a Taylor series behind the double-``where`` trick
(DESIGN §3.5).
"""

from __future__ import annotations

import jax.numpy as jnp

from ._types import Array, Mat3, Pose, Vec3, Vec6


def skew(v: Vec3) -> Mat3:
    """The 3×3 matrix ``[v]×`` with ``[v]× w = v × w``."""
    z = jnp.zeros_like(v[0])
    return jnp.stack(
        [
            jnp.stack([z, -v[2], v[1]]),
            jnp.stack([v[2], z, -v[0]]),
            jnp.stack([-v[1], v[0], z]),
        ]
    )


def vee(a: Mat3) -> Vec3:
    """Inverse of :func:`skew`, using the skew-symmetric part of ``a`` (robust to round-off)."""
    return 0.5 * jnp.stack([a[2, 1] - a[1, 2], a[0, 2] - a[2, 0], a[1, 0] - a[0, 1]])


def _even_series(x: Array, exact, coeffs, threshold: float = 1e-2) -> Array:
    """An even function of ``x`` with a Taylor series in ``x²`` where ``x² < threshold`` (double-where).

    ``jnp.sinc`` alone is not enough: its derivatives are exact at 0 but garbage just off it
    (``d²/dx² sinc`` ≈ 4e28 at x = 1e-22), which blows up simulations leaving the straight shape.
    With threshold 1e-2 the series below (to x¹⁰) are accurate to ~1e-15 up to third derivatives.
    """
    x2 = x * x
    small = x2 < threshold
    safe = jnp.where(small, jnp.ones_like(x), x)
    series = sum(c * x2**k for k, c in enumerate(coeffs))
    return jnp.where(small, series, exact(safe))


def sin_over_x(x: Array) -> Array:
    """``sin(x)/x``, smooth at 0 to every order (values and derivatives accurate near 0)."""
    return _even_series(x, lambda y: jnp.sin(y) / y, (1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800))


def one_minus_cos_over_x2(x: Array) -> Array:
    """``(1 - cos x)/x²``, smooth at 0 to every order (``= 2 sin²(x/2)/x²`` away from 0)."""
    return _even_series(x, lambda y: 2 * jnp.sin(0.5 * y) ** 2 / (y * y),
                        (0.5, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800, -1 / 479001600))


def one_minus_cos_over_x(x: Array) -> Array:
    """``(1 - cos x)/x``, smooth at 0 to every order."""
    return x * one_minus_cos_over_x2(x)


def _series_in_sq(theta2: Array, exact, coeffs, threshold: float = 1e-2) -> Array:
    """Evaluate an even function of θ given θ², with a Taylor series where θ² < threshold (double-where)."""
    small = theta2 < threshold
    safe = jnp.where(small, jnp.ones_like(theta2), theta2)
    series = sum(c * theta2**k for k, c in enumerate(coeffs))
    return jnp.where(small, series, exact(safe))


def rotvec_coefficients(theta2: Array) -> tuple[Array, Array, Array]:
    """Coefficients ``a = sinθ/θ``, ``b = (1-cosθ)/θ²``, ``c = (θ - sinθ)/θ³`` as functions of θ².

    Finite with finite, accurate derivatives of every order at θ = 0: Taylor series to θ¹⁰ where
    θ² < 1e-2 (truncation below 1e-20), the closed forms beyond (cancellation error below 1e-13).
    """
    fact = [1.0]
    for k in range(1, 16):
        fact.append(fact[-1] * k)
    a = _series_in_sq(theta2, lambda t2: jnp.sin(jnp.sqrt(t2)) / jnp.sqrt(t2),
                      [(-1) ** k / fact[2 * k + 1] for k in range(6)])
    b = _series_in_sq(theta2, lambda t2: (1 - jnp.cos(jnp.sqrt(t2))) / t2,
                      [(-1) ** k / fact[2 * k + 2] for k in range(6)])
    c = _series_in_sq(theta2, lambda t2: (jnp.sqrt(t2) - jnp.sin(jnp.sqrt(t2))) / (t2 * jnp.sqrt(t2)),
                      [(-1) ** k / fact[2 * k + 3] for k in range(6)])
    return a, b, c


def so3_exp(phi: Vec3) -> Mat3:
    """Rotation matrix of the rotation vector ``phi`` (Rodrigues), smooth at ``phi = 0``."""
    a, b, _ = rotvec_coefficients(jnp.dot(phi, phi))
    k = skew(phi)
    return jnp.eye(3, dtype=k.dtype) + a * k + b * (k @ k)


def se3_exp(xi: Vec6) -> Pose:
    """Pose ``exp([xi]^)`` of a twist ``xi = (ω, v)`` (angular first), smooth at ``ω = 0``."""
    w, v = xi[:3], xi[3:]
    a, b, c = rotvec_coefficients(jnp.dot(w, w))
    k = skew(w)
    k2 = k @ k
    eye = jnp.eye(3, dtype=k.dtype)
    rot = eye + a * k + b * k2
    trans = (eye + b * k + c * k2) @ v
    return make_pose(rot, trans)



def rot_axis(axis: Vec3, angle: Array) -> Mat3:
    """Rotation by ``angle`` about the unit vector ``axis``."""
    k = skew(axis)
    return jnp.eye(3, dtype=k.dtype) + jnp.sin(angle) * k + (1 - jnp.cos(angle)) * (k @ k)


def make_pose(rot: Mat3, trans: Vec3) -> Pose:
    """The 4×4 homogeneous transform with rotation ``rot`` and translation ``trans``."""
    top = jnp.concatenate([rot, trans[:, None]], axis=1)
    bottom = jnp.zeros((1, 4), dtype=top.dtype).at[0, 3].set(1)
    return jnp.concatenate([top, bottom], axis=0)


def translation(trans: Vec3) -> Pose:
    """Pure translation as a 4×4 transform."""
    return make_pose(jnp.eye(3, dtype=jnp.result_type(trans)), trans)


def inverse_pose(x: Pose) -> Pose:
    """Inverse of a rigid transform."""
    rot, trans = x[:3, :3], x[:3, 3]
    return make_pose(rot.T, -rot.T @ trans)
