"""Planar constant-curvature (CC) soft segment, with and without elongation.

The toy example and Simulation 3 of paper ``003_…`` (Della Santina et al. 2020 kinematics).
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .. import _checks
from .._types import Array, Config, Float
from ._rod import AbstractExponentialRod
from .quadrature import construction_jit, disk_is_centred, rod_rule


class PlanarConstantCurvature(AbstractExponentialRod):
    """Planar CC segment bending in the x–y plane of its proximal frame.

    Coordinates: ``q = [θ]`` or, with ``elongation=True``, ``q = [θ, δ]``: ``θ`` [rad] is the total
    bending angle (curvature ``θ/L``), ``δ`` [-] the axial strain (current length ``L (1 + δ)``).
    Rest configuration ``q = 0``: a straight cylinder along the proximal x-axis.

    Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]`` normalized arc length, ``(y, z)`` [m]
    the position in the rigid circular cross section (``y`` in the bending plane). The backbone
    point at ``σ`` is ``ℓσ (sin φ/φ, (1 − cos φ)/φ, 0)`` with ``φ = θσ`` and ``ℓ = L(1 + δ)``, and
    the section is rotated by ``φ`` about z. The distal frame ``{S_i}`` sits at the tip (σ = 1),
    rotated by ``θ`` about z. All functions use ``sinc`` forms, so values and derivatives of every
    order are finite at ``θ = 0``.

    Arguments:
        length: rest length ``L`` [m]. radius: ``r`` [m]. density: ``ρ`` [kg/m³].
        youngs_modulus: ``E`` [Pa]; bending stiffness ``E I / L`` (``I = π r⁴/4``) and axial
            stiffness ``E A L`` (``A = π r²``).
        damping: Kelvin–Voigt time constant ``η`` [s]: ``D = η K``.
        elongation: add the axial strain coordinate.
        order: Gauss–Legendre nodes along the arc; ``n_radial``/``n_angular``: cross-section rule
            (``n_radial=0`` puts all mass on the backbone).

    Raises:
        ValueError: non-positive length, radius, density or modulus; negative damping.
    """

    length: Float[Array, ""]
    radius: Float[Array, ""]
    points: Float[Array, "K 3"]
    weights: Float[Array, " K"]
    stiffness: Float[Array, "n n"]
    damping: Float[Array, "n n"]
    nq: int = eqx.field(static=True)
    elongation: bool = eqx.field(static=True)
    n_section: int = eqx.field(static=True)
    centred: bool = eqx.field(static=True)
    twist_form: ClassVar[str] = "planar"  # Ω = (0, 0, θ, ℓ, 0, 0): the SE(2) closed form of its jets

    def __init__(self, length=1.0, radius=0.1, density=1000.0, youngs_modulus=1e6, damping=0.0, *,
                 elongation=False, order=5, n_radial=2, n_angular=4):
        names = ("length", "radius", "density", "youngs_modulus")
        vals = [_checks.as_float_array(v, n, ()) for v, n in zip((length, radius, density, youngs_modulus), names)]
        for v, n in zip(vals, names):
            _checks.positive(v, n)
        eta = _checks.as_float_array(damping, "damping", ())
        _checks.nonnegative(eta, "damping")
        length, radius, density, youngs = vals
        self.length, self.radius = length, radius
        self.elongation = bool(elongation)
        self.nq = 2 if self.elongation else 1
        self.points, self.weights, self.stiffness, self.damping = _constants(
            length, radius, density, youngs, eta, elongation=self.elongation, order=order, n_radial=n_radial,
            n_angular=n_angular)
        self.n_section = self.points.shape[0] // int(order)
        self.centred = disk_is_centred(n_radial, n_angular)

    def _arc(self, q: Config) -> tuple[Array, Array]:
        theta = q[0]
        ell = self.length * (1 + q[1]) if self.elongation else self.length
        return theta, ell

    def arc_twist(self, q: Config) -> Float[Array, " 6"]:
        theta, ell = self._arc(q)
        z = jnp.zeros_like(theta)
        return jnp.stack([z, z, theta, ell + z, z, z])

    def twist_columns(self) -> tuple[int, ...]:
        """``θ = q₀`` and ``ℓ = L (1 + q₁)``: components 2 and 3 of the twist."""
        return (2, 3) if self.elongation else (2,)


@construction_jit("elongation", "order", "n_radial", "n_angular")
def _constants(length, radius, density, youngs, eta, *, elongation: bool, order: int, n_radial: int, n_angular: int):
    """Points, point masses, and the bending (``E I / L``) and axial (``E A L``) stiffness with their
    Kelvin–Voigt damping."""
    points, vol = rod_rule(length, radius, order=order, n_radial=n_radial, n_angular=n_angular)
    area = jnp.pi * radius**2
    k_bend = youngs * (jnp.pi * radius**4 / 4) / length
    stiffness = jnp.diag(jnp.stack([k_bend, youngs * area * length]) if elongation else k_bend[None])
    return points, density * vol, stiffness, eta * stiffness
