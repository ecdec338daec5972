"""Planar PCC segment with variable cross-section radius driven by two pneumatic chambers.

Paper ``000_…`` Simulation 1 ("PCC with variable radius"): 4 DoF per body — curvature and
elongation of a constant-curvature backbone, and the radius changes of two antagonistic chambers
shaped by the paper's multivariate bump function. Elastic and viscous forces come from a strain
energy integrated over a volumetric quadrature (:mod:`kane_jax.bodies.materials`).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._series import sincos
from .._small import det3
from .._types import Array, Config, Float, Pose, Vec3
from ..lie import make_pose, one_minus_cos_over_x, rot_axis, sin_over_x
from . import materials as mat
from ._base import AbstractPointBody, mapped_points
from .quadrature import construction_jit, gauss_legendre, rod_rule

_EXP_CUTOFF = 700.0  # exp(-700) ~ 1e-304: the bump is set to 0 beyond, keeping it C∞ in practice


def bump(x: Array, scale: Array) -> Array:
    """``exp(−1/(scale·x))`` for ``x > 0``, else 0; finite with finite derivatives of every order."""
    arg = scale * x
    inside = arg > 1.0 / _EXP_CUTOFF
    return jnp.where(inside, jnp.exp(-1.0 / jnp.where(inside, arg, 1.0)), 0.0)


def _axial_bump(sigma: Array, length: Array) -> Array:
    """Paper's ``exp(−L0 / (L0²/4 − (s₁ − L0/2)²))`` with ``s₁ = L0 σ``, normalized to peak 1 at σ = ½."""
    return bump(sigma * (1 - sigma), length) * jnp.exp(4.0 / length)


def _angular_bump(psi: Array) -> Array:
    """Paper's ``exp(−1/(π²/4 − (s₂ − π/2)²)) = exp(−1/(ψ(π − ψ)))``, normalized to peak 1 at ψ = π/2."""
    return bump(psi * (jnp.pi - psi), 1.0) * jnp.exp(4.0 / jnp.pi**2)


def _chamber_section_rule(outer: Array, offset: Array, n_across: int, n_along: int):
    """Nodes ``(y, z)`` and areas of chamber 1's section ``{y ≥ d, y² + z² ≤ R_c²}`` (``R_c = R0 − d``).

    ``y = R_c cos β`` with ``β ∈ [0, β₀]``, ``cos β₀ = d/R_c``, and ``z = R_c sin β (2t − 1)``,
    ``t ∈ [0, 1]``: the area element ``2 R_c² sin²β dβ dt`` is entire in ``(β, t)``, so the
    Gauss–Legendre rule converges exponentially (a polar rule about the centre converges slowly
    because of the ``1/sin²`` pole of its inner boundary).
    """
    rc = outer - offset
    beta0 = jnp.arccos(offset / rc)
    xb, wb = gauss_legendre(n_across)
    xt, wt = gauss_legendre(n_along)
    beta = beta0 * jnp.asarray(xb)  # (B,)
    half = rc * jnp.sin(beta)  # half chord
    y = jnp.repeat(rc * jnp.cos(beta), n_along)
    z = (half[:, None] * (2 * jnp.asarray(xt)[None, :] - 1)).reshape(-1)
    area = (beta0 * jnp.asarray(wb) * half)[:, None] * (2 * half[:, None] * jnp.asarray(wt)[None, :])
    return jnp.stack([y, z], axis=1), area.reshape(-1)


@construction_jit("order", "across", "along")
def _chamber_rule(length, radius, offset, *, order: int, across: int, along: int):
    """Nodes ``(σ, y, z)`` and volumes of one chamber: Gauss–Legendre in ``σ`` between the septum
    offsets ``σ ∈ [d_c/L, 1 − d_c/L]`` times :func:`_chamber_section_rule`."""
    xs, ws = gauss_legendre(order)
    s_c = offset / length
    sigma = s_c + (1 - 2 * s_c) * jnp.asarray(xs)
    sec, area = _chamber_section_rule(radius, offset, across, along)
    m = sec.shape[0]
    points = jnp.concatenate([jnp.repeat(sigma, m)[:, None], jnp.tile(sec, (order, 1))], axis=1)
    return points, ((1 - 2 * s_c) * length * jnp.asarray(ws)[:, None] * area[None, :]).reshape(-1)


class VariableRadiusPCC(mat.AbstractMaterialBody, AbstractPointBody):
    """Planar constant-curvature segment whose radius bulges where two pneumatic chambers inflate.

    Coordinates ``q = (θ, δL, δR₁, δR₂)`` (paper ``000_…`` Sim. 1): ``θ`` [rad] total bending angle
    in the proximal x–y plane (curvature ``κ = θ/L0``), ``δL`` [m] elongation of the backbone
    (length ``L0 + δL``, stretch ``1 + δL/L0``), ``δR₁``, ``δR₂`` [m] radius change at the middle of
    chamber 1 (the ``y > 0`` half, on the side toward which ``θ > 0`` bends) and chamber 2
    (``y < 0``). Rest configuration ``q = 0``: a straight cylinder of length ``L0`` and radius ``R0``
    along the proximal +x axis.

    Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]`` normalized arc length, ``(y, z)`` [m] the
    reference position in the circular section. With ``ψ`` the section angle from +z toward +y
    (``ψ ∈ (0, π)`` on chamber 1's side), the radius change is
    ``δR(σ, ψ) = b(σ) b_ψ(ψ) δR₁`` on ``y > 0`` and ``b(σ) b_ψ(ψ − π) δR₂`` on ``y < 0``, with the
    paper's bump ``b(s₁, s₂) = exp(−L0/(L0²/4 − (s₁ − L0/2)²)) exp(−1/(π²/4 − (s₂ − π/2)²))``
    (``s₁ = L0 σ`` in metres, as printed) **normalized to peak 1** so that ``δR₁, δR₂`` are the
    radius changes at the chamber centre (the printed form peaks at ``e^{−4/L0 − 4/π²}``, 1e-9 for
    ``L0 = 0.2``). The section point moves radially, ``(y, z) ↦ (y, z)(1 + δR/R0)``, and is carried
    by the backbone frame at ``σ``. The bump vanishes with all derivatives at ``σ ∈ {0, 1}``, so
    both contact areas stay rigid and the distal frame ``{S_i}`` is the backbone frame at ``σ = 1``.

    Chambers (for :class:`kane_jax.actuation.PneumaticChambers`): chamber 1 is the material region
    at distance ≥ ``d_c`` from the outer wall, from the septum ``y = 0`` and from both end caps;
    chamber 2 its mirror image. :meth:`chamber_volumes` integrates ``det F`` over them, so
    ``p δV`` is the exact virtual work of the pressure on the deforming chamber walls (eq. 57).

    Internal forces: strain energy of ``material`` (default :class:`LinearElastic`, paper §V-B)
    over the body volume, plus its Kelvin–Voigt damping. Paper values: ``E = 1.06 MPa``,
    ``η = 0.1 s``, ``ρ = 1062 kg/m³``, ``L0 = 0.2 m``, ``R0 = 0.02 m``, ``d_c = 0.004 m``; the paper's
    ``ν = 0.5`` makes ``λ`` infinite in the linear model, so the default is ``ν = 0.45``.

    Arguments:
        length: ``L0`` [m]. radius: ``R0`` [m]. density: ``ρ`` [kg/m³].
        material: an :class:`~kane_jax.bodies.materials.AbstractMaterial` (default
            ``LinearElastic(1.06e6, 0.45, 0.1)``).
        chamber_offset: ``d_c`` [m], with ``0 < d_c < R0/2`` and ``2 d_c < L0``.
        order, n_radial, n_angular: body quadrature (Gauss–Legendre along σ × disk rule).
        chamber_order, chamber_across, chamber_along: chamber quadrature (nodes along σ, across the
            chamber section normal to the septum, and along its chords).

    Raises:
        ValueError: non-positive sizes or density, chamber offset out of range, ``n_radial < 1``.
        TypeError: ``material`` not an ``AbstractMaterial``.
    """

    length: Float[Array, ""]
    radius: Float[Array, ""]
    chamber_offset: Float[Array, ""]
    material: mat.AbstractMaterial
    points: Float[Array, "K 3"]
    volumes: Float[Array, " K"]
    weights: Float[Array, " K"]
    chamber_points: Float[Array, "C 3"]
    chamber_weights: Float[Array, " C"]
    nq: int = eqx.field(static=True)

    def __init__(self, length=0.2, radius=0.02, density=1062.0, material=None, chamber_offset=0.004, *,
                 order=8, n_radial=2, n_angular=8, chamber_order=8, chamber_across=4, chamber_along=4):
        names = ("length", "radius", "density", "chamber_offset")
        vals = [_checks.as_float_array(v, n, ()) for v, n in zip((length, radius, density, chamber_offset), names)]
        for v, n in zip(vals, names):
            _checks.positive(v, n)
        length, radius, density, offset = vals
        if _checks.is_concrete(offset) and _checks.is_concrete(radius) and _checks.is_concrete(length):
            if not (float(offset) < float(radius) / 2 and 2 * float(offset) < float(length)):
                raise ValueError(
                    f"`chamber_offset` must satisfy 0 < d_c < radius/2 and 2 d_c < length, got d_c={float(offset)}"
                    f" with radius={float(radius)}, length={float(length)}.")
        if material is None:
            material = mat.LinearElastic(1.06e6, 0.45, 0.1)
        if not isinstance(material, mat.AbstractMaterial):
            raise TypeError(f"`material` must be a kane_jax AbstractMaterial, got {type(material).__name__}.")
        if int(n_radial) < 1:
            raise ValueError(f"`n_radial` must be >= 1 (volumetric quadrature), got {n_radial}.")
        self.length, self.radius, self.chamber_offset, self.material = length, radius, offset, material
        self.nq = 4
        self.points, self.volumes = rod_rule(length, radius, order=order, n_radial=n_radial, n_angular=n_angular)
        self.weights = density * self.volumes
        self.chamber_points, self.chamber_weights = _chamber_rule(
            length, radius, offset, order=chamber_order, across=chamber_across, along=chamber_along)

    # --- geometry ------------------------------------------------------------------------------

    def radius_change(self, q: Config, s: Array) -> Array:
        """``δR(σ, y, z)`` [m] at material point ``s`` (zero on the axis and at both ends)."""
        sigma, y, z = s[0], s[1], s[2]
        axial = _axial_bump(sigma, self.length)
        pos, neg = y > 0, y < 0
        psi1 = jnp.arctan2(jnp.where(pos, y, 1.0), jnp.where(pos, z, 0.0))  # in (0, π) for y > 0
        psi2 = jnp.arctan2(jnp.where(neg, -y, 1.0), jnp.where(neg, -z, 0.0))
        b1 = jnp.where(pos, _angular_bump(psi1), 0.0)
        b2 = jnp.where(neg, _angular_bump(psi2), 0.0)
        return axial * (b1 * q[2] + b2 * q[3])

    def position(self, q: Config, s: Array) -> Vec3:
        theta, ell = q[0], self.length + q[1]
        sigma = s[0]
        scale = 1 + self.radius_change(q, s) / self.radius
        y, z = s[1] * scale, s[2] * scale
        phi = theta * sigma
        bx = ell * sigma * sin_over_x(phi)
        by = ell * sigma * one_minus_cos_over_x(phi)
        sp, cp = sincos(phi)  # once, in one buffer, for every kernel of the jets that reads them
        return jnp.stack([bx - y * sp, by + y * cp, z])

    def tip(self, q: Config) -> Pose:
        theta, ell = q[0], self.length + q[1]
        trans = jnp.stack([ell * sin_over_x(theta), ell * one_minus_cos_over_x(theta), jnp.zeros_like(theta)])
        return make_pose(rot_axis(jnp.array([0.0, 0.0, 1.0], dtype=trans.dtype), theta), trans)

    def reference_inverse(self) -> Array:
        return jnp.diag(jnp.stack([1 / self.length, jnp.ones_like(self.length), jnp.ones_like(self.length)]))

    def chamber_volumes(self, q: Config) -> Float[Array, "2"]:
        """Current volumes ``(V₁, V₂)`` [m³] of the two chambers, ``∫ det F dV₀`` over each region."""
        mirror = jnp.array([1.0, -1.0, 1.0], dtype=self.chamber_points.dtype)
        ref_inv = self.reference_inverse()

        pts = jnp.concatenate([self.chamber_points, self.chamber_points * mirror[None, :]])
        dets = det3(mat.deformation_gradients(self.position, q, pts, ref_inv)).reshape(2, -1)
        return jnp.sum(self.chamber_weights[None, :] * dets, axis=1)

    def points_and_tip(self, q: Config) -> tuple[Float[Array, "K 3"], Pose]:
        return mapped_points(self, q), self.tip(q)


def chamber_segment_area(radius: float, offset: float) -> float:
    """Closed-form area of one chamber section (circular segment of ``R_c = R0 − d`` at distance ``d``)."""
    rc = radius - offset
    return float(rc**2 * np.arccos(offset / rc) - offset * np.sqrt(rc**2 - offset**2))
