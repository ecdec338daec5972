"""Closed-form poses ``exp(Ω)`` for the special twist forms of :mod:`kane_jax._exp_jets`.

The pose part of :func:`~kane_jax._exp_jets.planar_exp_jet` and :func:`~kane_jax._exp_jets.bending_exp_jet`,
shared by those jets and by the rods' frames at arbitrary arc lengths (:meth:`AbstractExponentialRod.frame`:
the tendons' routing points, the tip), where the general :func:`~kane_jax.lie.se3_exp` spends its 3-D
cross and outer products on components that are zero. With ``A = sin θ/θ``, ``B = (1 − cos θ)/θ²``
(:func:`~kane_jax.lie.rotvec_coefficients`):

- planar ``Ω = (0, 0, θ, v_x, v_y, 0)``: ``R = R_z(θ)``, ``t = (A v_x − θ B v_y, θ B v_x + A v_y, 0)``;
- bending ``Ω = (0, p, r, ℓ, 0, 0)``: ``R = I + A [ω]× + B [ω]×²``, ``t = ℓ (A, B r, −B p)``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ._types import Array, Pose
from .lie import make_pose, rotvec_coefficients, se3_exp


def planar_coefficients(omega: Array) -> tuple[Array, Array, Array]:
    """``A, B, C`` of :func:`~kane_jax.lie.rotvec_coefficients` at ``θ² = Ω_z²`` (planar twists)."""
    return rotvec_coefficients(omega[..., 2] * omega[..., 2])


def bending_coefficients(omega: Array) -> tuple[Array, Array, Array]:
    """``A, B, C`` at ``θ² = Ω_y² + Ω_z²`` (bending twists)."""
    return rotvec_coefficients(omega[..., 1] * omega[..., 1] + omega[..., 2] * omega[..., 2])


def planar_pose(omega: Array, a: Array, b: Array) -> tuple[Array, Array]:
    """``(R, t)`` of ``exp(Ω)`` for planar twists (``(…, 6)``), given ``A`` and ``B`` at ``θ² = Ω_z²``."""
    th, vx, vy = omega[..., 2], omega[..., 3], omega[..., 4]
    co, si, tb = 1 - b * th * th, a * th, th * b
    z, one = jnp.zeros_like(th), jnp.ones_like(th)
    rot = jnp.stack([jnp.stack([co, -si, z], -1), jnp.stack([si, co, z], -1), jnp.stack([z, z, one], -1)], -2)
    return rot, jnp.stack([a * vx - tb * vy, tb * vx + a * vy, z], -1)


def bending_pose(omega: Array, a: Array, b: Array) -> tuple[Array, Array]:
    """``(R, t)`` of ``exp(Ω)`` for bending twists (``(…, 6)``), given ``A`` and ``B`` at ``θ² = Ω_y² + Ω_z²``."""
    p, r, ell = omega[..., 1], omega[..., 2], omega[..., 3]
    ap, ar, bp, br = a * p, a * r, b * p, b * r
    rot = jnp.stack([jnp.stack([1 - b * (p * p + r * r), -ar, ap], -1),
                     jnp.stack([ar, 1 - br * r, bp * r], -1),
                     jnp.stack([-ap, bp * r, 1 - bp * p], -1)], -2)
    return rot, jnp.stack([ell * a, ell * br, -ell * bp], -1)


@functools.partial(jax.jit, static_argnums=0)
def exp_pose(form: str, omega: Array) -> Pose:
    """``exp(Ω)`` as a ``(…, 4, 4)`` pose by the closed form of ``form`` (``"se3"``, ``"planar"``, ``"bending"``).

    The special forms read only their nonzero components (``tests/bodies/test_closed_form_jets.py``: the
    same poses as :func:`~kane_jax.lie.se3_exp` to rounding, at random twists and at zero).
    """
    if form == "se3":
        return se3_exp(omega)
    if form == "planar":
        a, b, _ = planar_coefficients(omega)
        return make_pose(*planar_pose(omega, a, b))
    if form == "bending":
        a, b, _ = bending_coefficients(omega)
        return make_pose(*bending_pose(omega, a, b))
    raise ValueError(f"`form` must be 'se3', 'planar' or 'bending', got {form!r}.")
