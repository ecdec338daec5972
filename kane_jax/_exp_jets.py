"""Closed-form jets of exponentials ``q ↦ exp(Ω(q))`` for twists ``Ω`` affine in ``q`` (exponential rods).

:func:`exp_jet` is the SE(3) form through the right Jacobian (:func:`~kane_jax.lie.se3_right_jacobian`);
:func:`planar_exp_jet` the SE(2) form for planar twists (rotation about z, translation in the xy
plane: planar constant-curvature rods), the same jet from three smooth coefficients of ``θ``;
:func:`bending_exp_jet` the form for bending-and-stretch twists (rotation vector normal to the
backbone, translation along it: spatial constant-curvature and Godage sections, PCS rods without
twist or shear), from the same three coefficients of ``θ²``. All give :class:`~kane_jax._jets.PoseJet`s,
batched over leading axes (the rod's sections).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._exp_poses import bending_coefficients, bending_pose, planar_coefficients, planar_pose
from ._jets import PoseJet, compose
from ._kernel_jit import kernel_jit
from ._right_jacobian import (
    apply_blocks,
    generators,
    right_jacobian_blocks,
    se3_coefficients,
    se3_pose,
    se3_rate,
)
from ._small import cross, materialize
from ._types import Array, Config


def _se3_curvature(vel: Array, dvel: Array) -> Array:
    """``(ω̇, ν̇ + ω × ν)`` for ``V = (ω, ν)``: ``Rᵀ R''`` has vee part ``ω̇``, ``Rᵀ t'' = ν̇ + ω × ν`` (``t' = R ν``)."""
    return dvel + jnp.concatenate([jnp.zeros_like(vel[..., :3]), cross(vel[..., :3], vel[..., 3:])], -1)


def _generators_and_curvature(rate, coefficients, omega: Array, d_omega: Array, qd: Config | None, *,
                              curvature=_se3_curvature):
    """The smooth coefficients ``c = coefficients(Ω)`` (a tuple of ``(…,)`` arrays), the generators
    ``gen_k = rate(c, Ω, ∂_k Ω)`` and the curvature ``curvature(V, V̇)`` of the body velocity
    ``V = rate(c, Ω, Ω̇)`` along ``Ω̇ = Σ_k ∂_k Ω q̇_k`` (zero for ``qd=None``).

    The coefficients' series are evaluated once, with their tangent along ``Ω̇`` when ``qd`` is given,
    and ``rate`` is a polynomial in them: one forward-mode pass through it gives ``V̇`` (twists affine
    in ``q``: ``Ω̈ = 0``).
    """
    if qd is None:
        coef, d_coef = coefficients(omega), None
    else:
        odot = jnp.sum(d_omega * qd.reshape((1,) * (d_omega.ndim - 2) + (-1, 1)), axis=-2)
        coef, d_coef = jax.jvp(coefficients, (omega,), (odot,))
    gen = rate(tuple(c[..., None] for c in coef), omega[..., None, :], d_omega)
    if qd is None:
        return coef, gen, jnp.zeros(omega.shape, omega.dtype)
    vel, dvel = jax.jvp(lambda c, o: rate(c, o, odot), (coef, omega), (d_coef, odot))
    return coef, gen, curvature(vel, dvel)


@kernel_jit(static_argnames=("columns", "buffered"))
def exp_jet(omega: Array, d_omega: Array, qd: Config | None, dd_omega: Array | None = None, *,
            columns: tuple[int, ...] | None = None, buffered: bool = True) -> PoseJet:
    """Closed-form jet of ``exp(Ω(q))`` for a twist ``Ω`` of ``q`` (batched over leading axes).

    ``gen_k = T(Ω) ∂_k Ω`` with ``T`` the right Jacobian (:func:`~kane_jax.lie.se3_right_jacobian`);
    the body acceleration along ``q + t q̇`` is ``V̇ = d/dt [T(Ω)] Ω̇ + T(Ω) Ω̈`` with
    ``Ω̇ = Σ_k ∂_k Ω q̇_k`` (one forward-mode pass through the closed-form ``T``; ``Ω̈ = 0`` for ``Ω``
    affine in ``q``), and the curvature is ``(ω̇, ν̇ + ω × ν)`` with ``V = (ω, ν)`` (``t' = R ν``
    gives ``Rᵀ t'' = ν̇ + ω × ν``). ``T`` is formed once per twist as its 3×3 blocks
    (:func:`~kane_jax._right_jacobian.right_jacobian_blocks`, in a buffer of their own) and applied
    to the ``n`` generators: ≈ 27 multiply-adds per generator instead of four ``ad`` applications
    (≈ 96 multiplies). ``V`` and ``V̇`` are one forward-mode pass through ``T Ω̇`` in vector form
    (:func:`~kane_jax._right_jacobian.se3_rate`), and the pose comes from the same four coefficients
    (:func:`~kane_jax._right_jacobian.se3_pose`): the rate's 18 block entries and ``se3_exp``'s own
    series are not formed (2026-11-30: six twists' jet 8.1k → 6.4k flops; one six-strain PCS
    segment's batched FD 3.78–3.83 → 3.53–3.63 µs per state, three segments' 17.5 → 16.2 µs).

    Arguments:
        omega: ``(…, 6)`` twist. d_omega: ``(…, n, 6)`` its derivatives. qd: ``(n,)`` or None.
        dd_omega: ``(…, 6)`` second derivative ``Ω̈`` along ``q + t q̇`` (None: ``Ω`` affine in ``q``).
        columns: when each ``∂_k Ω`` has one nonzero component, its index ``c_k`` (static, one per
            coordinate; the caller guarantees the others are zero, they are not read): the generators
            are then columns of ``T`` (:func:`~kane_jax._right_jacobian.block_columns`). None: ``d_omega`` is general.
        buffered: write the pose (and curvature) to one buffer of their own (``materialize``): an
            exponential rod's moments read them directly, and without the buffer XLA:CPU fused the
            rate into each reader (one six-strain PCS rod's batched FD 3.53–3.63 → 4.04–4.22 µs per
            state). :func:`product_jets` passes False: its scans read each factor once, and with the
            buffer a GVS chain's batched FD ran 6 % slower (``000-sim2``'s two PGC bodies, 2026-11-30:
            17.3–17.6 against 18.3–19.0 µs per state).

    Returns:
        The :class:`~kane_jax._jets.PoseJet` of ``exp(Ω)``: rotation ``(…, 3, 3)``, translation
        ``(…, 3)``, generators ``(…, n, 6)`` and curvature ``(…, 6)`` (zero for ``qd=None``), DESIGN §3.1.
    """
    if qd is None:
        coef = se3_coefficients(omega)
        curv = jnp.zeros(omega.shape, omega.dtype)
    else:
        odot = jnp.sum(d_omega * qd.reshape((1,) * (d_omega.ndim - 2) + (-1, 1)), axis=-2)
        coef, d_coef = jax.jvp(se3_coefficients, (omega,), (odot,))
    blocks = materialize(right_jacobian_blocks(coef, omega))
    gen = generators(blocks, d_omega, columns)
    if qd is not None:
        vel, dvel = jax.jvp(lambda c, o: se3_rate(c, o, odot), (coef, omega), (d_coef, odot))
        if dd_omega is not None:
            dvel = dvel + apply_blocks(blocks, dd_omega)
        curv = _se3_curvature(vel, dvel)
    rot, trans = se3_pose(coef, omega)
    if buffered:  # the pose (and the curvature) in one buffer
        both = materialize(jnp.concatenate([rot.reshape(rot.shape[:-2] + (9,)), trans]
                                           + ([] if qd is None else [curv]), -1))
        rot, trans = both[..., :9].reshape(rot.shape), both[..., 9:12]
        curv = curv if qd is None else both[..., 12:]
    return PoseJet(rot, trans, gen, curv)


def _compose_shared(a: PoseJet, b: PoseJet, qd: Config | None) -> PoseJet:
    """Jet of ``X_a(q) X_b(q)`` (both factors of the same coordinates): the Leibniz rule of
    :func:`~kane_jax._jets.compose` along the one motion ``q + t q̇``, the two rows of each
    coordinate added (``gen = Ad(X_b⁻¹) gen_a + gen_b``)."""
    jet = compose(a, qd, b, qd)
    n = a.gen.shape[-2]
    return jet._replace(gen=jet.gen[:n] + jet.gen[n:])


@kernel_jit
def product_jets(omega: Array, d_omega: Array, qd: Config | None, dd_omega: Array | None) -> tuple[PoseJet, PoseJet]:
    """Closed-form jets of a product of exponentials ``X_h = exp(Ω₀) exp(Ω₁) ⋯ exp(Ω_K)`` (a Magnus
    integration of a rod's backbone over ``K + 1`` steps, all twists functions of the same ``q``)
    and of the frames at the ``K`` inner nodes seen from ``X_h``:
    ``S_k = X_h⁻¹ exp(Ω₀) ⋯ exp(Ω_{k−1}) = exp(−Ω_K) ⋯ exp(−Ω_k)``, ``k = 1 … K``.

    One batched :func:`exp_jet` of the ``2 (K + 1)`` factors ``exp(±Ω_j)``, then the Leibniz rule
    along the product (two ``lax.scan``s: the program does not grow with ``K``).

    Arguments:
        omega: ``(K + 1, 6)`` step twists. d_omega: ``(K + 1, n, 6)`` their derivatives.
        qd: ``(n,)`` or None. dd_omega: ``(K + 1, 6)`` their second derivatives along ``q + t q̇``
            (None with ``qd`` None, or for twists affine in ``q``).

    Returns:
        ``(X_h's jet, the sections' jets)``: generators ``(n, 6)`` and ``(K, n, 6)`` in body form, as
        :func:`~kane_jax.bodies._moments.distal_section_jets` gives them.
    """
    dd = None if dd_omega is None else jnp.concatenate([dd_omega, -dd_omega])
    jets = exp_jet(jnp.concatenate([omega, -omega]), jnp.concatenate([d_omega, -d_omega]), qd, dd, buffered=False)
    k1 = omega.shape[0]
    fwd = jax.tree.map(lambda x: x[:k1], jets)
    bwd = jax.tree.map(lambda x: x[k1:], jets)

    def forward(acc, factor):
        return _compose_shared(acc, factor, qd), None

    def backward(acc, factor):
        acc = _compose_shared(acc, factor, qd)
        return acc, acc

    first = jax.tree.map(lambda x: x[0], fwd)
    tip, _ = jax.lax.scan(forward, first, jax.tree.map(lambda x: x[1:], fwd))
    last = jax.tree.map(lambda x: x[-1], bwd)  # S_K = exp(−Ω_K)
    _, inner = jax.lax.scan(backward, last, jax.tree.map(lambda x: x[1:-1], bwd), reverse=True)  # S_{K−1} … S_1
    sections = jax.tree.map(lambda a, b: jnp.concatenate([a, b[None]]), inner, last)
    return tip, sections


def _planar_curvature(vel: Array, dvel: Array) -> Array:
    """:func:`_se3_curvature` with ``ω = (0, 0, θ̇)``: ``ω × ν = (−θ̇ ν_y, θ̇ ν_x, 0)``."""
    w = vel[..., 2]
    z = jnp.zeros_like(w)
    return dvel + jnp.stack([z, z, z, -w * vel[..., 4], w * vel[..., 3], z], -1)


def _planar_rate(coef, omega: Array, eta: Array) -> Array:
    """``T(Ω) η`` (the right Jacobian) for planar twists ``Ω``, ``η`` (rotation about z, motion in xy):
    ``(0, 0, η_θ, V(−θ) η_v + W(θ) v η_θ)`` with ``V(θ) = [[A, −θB], [θB, A]]``,
    ``W(θ) = [[θC, −B], [B, θC]]``, ``A, B, C = sin θ/θ, (1 − cos θ)/θ², (θ − sin θ)/θ³``."""
    th, vx, vy = omega[..., 2], omega[..., 3], omega[..., 4]
    a, b, c = coef
    e_th, e_x, e_y = eta[..., 2], eta[..., 3], eta[..., 4]
    nx = a * e_x + th * b * e_y + (th * c * vx - b * vy) * e_th
    ny = a * e_y - th * b * e_x + (b * vx + th * c * vy) * e_th
    z = jnp.zeros_like(nx)
    return jnp.stack([z, z, e_th, nx, ny, z], -1)


@kernel_jit
def planar_exp_jet(omega: Array, d_omega: Array, qd: Config | None) -> PoseJet:
    """:func:`exp_jet` for planar twists ``Ω = (0, 0, θ, v_x, v_y, 0)`` (SE(2) inside SE(3)).

    The same jet in closed form with three smooth coefficients of ``θ`` instead of the SE(3) right
    Jacobian's cross products (planar constant-curvature rods: the ID's program is ≈ 2× smaller).
    ``R = R_z(θ)``, ``t = V(θ) v``; generators and curvature as in :func:`exp_jet`.

    Arguments:
        omega: ``(…, 6)`` planar twist. d_omega: ``(…, n, 6)`` its derivatives (planar). qd: ``(n,)`` or None.
            Components outside the plane (``ω_x, ω_y, v_z``) must be zero: they are not read.

    Returns:
        As :func:`exp_jet` (the same numbers to rounding, ``tests/bodies/test_closed_form_jets.py``).
    """
    (a, b, _), gen, curv = _generators_and_curvature(_planar_rate, planar_coefficients, omega, d_omega, qd,
                                                     curvature=_planar_curvature)
    return PoseJet(*planar_pose(omega, a, b), gen, curv)


def _bending_rate(coef, omega: Array, eta: Array) -> Array:
    """``T(Ω) η`` (the right Jacobian) for bending twists ``Ω = (0, p, r, ℓ, 0, 0)`` and ``η`` alike:
    with ``k = p η_r − r η_p``, ``m = p η_p + r η_r`` and ``A, B, C`` of :func:`planar_exp_jet` in ``θ² = p² + r²``,
    ``ω_b = (−B k, A η_p + C p m, A η_r + C r m)``, ``ν_b = (A η_ℓ + C ℓ m, B (ℓ η_r − r η_ℓ), B (p η_ℓ − ℓ η_p))``
    (``Rᵀ ṫ`` of ``t = ℓ (A, B r, −B p)``, simplified by ``2 cos θ B' − 2 A A' = B²`` and
    ``2 cos θ A' + 2 θ² A B' + A B = C``, primes in ``θ²``)."""
    p, r, ell = omega[..., 1], omega[..., 2], omega[..., 3]
    a, b, c = coef
    e_p, e_r, e_l = eta[..., 1], eta[..., 2], eta[..., 3]
    k, m = p * e_r - r * e_p, p * e_p + r * e_r
    return jnp.stack([-b * k, a * e_p + c * p * m, a * e_r + c * r * m,
                      a * e_l + c * ell * m, b * (ell * e_r - r * e_l), b * (p * e_l - ell * e_p)], -1)


@kernel_jit
def bending_exp_jet(omega: Array, d_omega: Array, qd: Config | None) -> PoseJet:
    """:func:`exp_jet` for bending-and-stretch twists ``Ω = (0, ω_y, ω_z, ℓ, 0, 0)``.

    The rotation vector is normal to the backbone (no twist) and the translation runs along it (no
    shear): spatial constant-curvature rods, Godage's sections and PCS rods with strains among
    ``bend_y``, ``bend_z``, ``stretch``. With ``θ² = ω_y² + ω_z²`` and ``A, B, C`` as in
    :func:`planar_exp_jet`: ``R = I + A [ω]× + B [ω]×²``, ``t = ℓ (A, B ω_z, −B ω_y)``; generators and
    curvature as in :func:`exp_jet`, every product written out on the three nonzero components.

    Arguments:
        omega: ``(…, 6)`` bending twist. d_omega: ``(…, n, 6)`` its derivatives (bending twists too).
            qd: ``(n,)`` or None. The components ``ω_x, v_y, v_z`` must be zero: they are not read.

    Returns:
        As :func:`exp_jet` (the same numbers to rounding, ``tests/bodies/test_closed_form_jets.py``).
    """
    (a, b, _), gen, curv = _generators_and_curvature(_bending_rate, bending_coefficients, omega, d_omega, qd)
    return PoseJet(*bending_pose(omega, a, b), gen, curv)
