"""Spatial piecewise constant curvature (PCC) segment with elongation, singularity-free.

The segment is a circular arc whose bending is described by the *rotation vector* of its tip,
``θ = (0, θ_y, θ_z)`` (curvature vector × arc length), instead of the classic
(curvature, bending-plane angle) pair, whose plane angle is undefined when the segment is
straight. In this exponential form the arc is ``g(σ) = exp(σ [θ, ℓ e_x]^)`` and every entry of the
pose is an analytic function of ``(θ_y, θ_z)`` (coefficients of :func:`kane_jax.lie.rotvec_coefficients`),
so values and derivatives of every order are finite at the straight configuration
(Della Santina et al. 2020 reach the same with their Δx, Δy, δL coordinates; ``Δx = r θ_z``-like
linear maps relate the two).
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .. import _checks
from .._types import Array, Config, Float, Mat3, Vec3
from ..lie import rotvec_coefficients, skew
from ._rod import AbstractExponentialRod
from .quadrature import construction_jit, disk_is_centred, rod_rule


def arc_frame(theta_y: Array, theta_z: Array, ell: Array, sigma: Array) -> tuple[Mat3, Vec3]:
    """Pose at normalized arc length ``σ`` of a constant-curvature arc along +x.

    Closed form of ``exp(σ [ω, v]^)`` with ``ω = (0, θ_y, θ_z)``, ``v = (ℓ, 0, 0)``:
    ``R = 1 + a K + b K²`` and ``t = σ ℓ (a, b φ_z, −b φ_y)`` with ``φ = σ θ``, ``K = [φ]×``,
    ``a = sin|φ|/|φ|``, ``b = (1 − cos|φ|)/|φ|²``.

    Arguments:
        theta_y, theta_z: total bending angles [rad] about the proximal y and z axes
            (``θ_z > 0`` bends the arc towards +y, ``θ_y > 0`` towards −z).
        ell: current arc length [m]. sigma: normalized arc length in ``[0, 1]``.

    Returns:
        ``(R, t)``: rotation and position of the arc frame in the proximal frame.
    """
    phi_y, phi_z = sigma * theta_y, sigma * theta_z
    a, b, _ = rotvec_coefficients(phi_y**2 + phi_z**2)
    t2 = phi_y**2 + phi_z**2
    phi = jnp.stack([jnp.zeros_like(phi_y), phi_y, phi_z])
    rot = (1 - b * t2) * jnp.eye(3, dtype=phi.dtype) + a * skew(phi) + b * (phi[:, None] * phi[None, :])
    trans = sigma * ell * jnp.stack([a, b * phi_z, -b * phi_y])
    return rot, trans


class SpatialConstantCurvature(AbstractExponentialRod):
    """Spatial constant-curvature segment (one piece of a PCC arm), with optional elongation.

    Coordinates ``q = [θ_y, θ_z, δL]`` (or ``[θ_y, θ_z]`` with ``elongation=False``):
    ``θ_y, θ_z`` [rad] are the components of the tip rotation vector about the proximal y and z
    axes, i.e. curvature [1/m] times current length (``κ_y ℓ, κ_z ℓ``); the bending angle is
    ``|θ|`` and the bending plane contains x and ``(0, θ_z, −θ_y)``. ``δL`` [m] is the change of
    the backbone length, ``ℓ = L + δL``. There is no twist, and no singularity anywhere: the arc is
    ``exp(σ [(0, θ_y, θ_z), (ℓ, 0, 0)]^)``.

    Rest configuration ``q = 0``: a straight cylinder of length ``L`` along the proximal +x axis.

    Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]`` normalized arc length (material
    points keep their ``σ`` as the segment elongates, so mass is conserved), ``(y, z)`` [m]
    the position in the rigid circular cross section, which stays normal to the backbone. The
    distal frame ``{S_i}`` is the arc frame at the tip (``σ = 1``): origin on the backbone, x
    axis tangent to it.

    Arguments:
        length: rest length ``L`` [m]. radius: ``r`` [m]. density: ``ρ`` [kg/m³].
        youngs_modulus: ``E`` [Pa]: bending stiffness ``E I / L`` on ``θ_y, θ_z``
            (``I = π r⁴/4``) and axial stiffness ``E A / L`` on ``δL`` (``A = π r²``).
        damping: Kelvin–Voigt time constant ``η`` [s]: ``D = η K``.
        elongation: include the coordinate ``δL``.
        order: Gauss–Legendre nodes along the arc; ``n_radial``/``n_angular``: cross-section
            rule (``n_radial=0`` puts all mass on the backbone).

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
    twist_form: ClassVar[str] = "bending"  # Ω = (0, θ_y, θ_z, ℓ, 0, 0): no twist, no shear

    def __init__(self, length=0.2, radius=0.02, density=1000.0, youngs_modulus=1e6, damping=0.0, *,
                 elongation=True, order=5, n_radial=2, n_angular=4):
        names = ("length", "radius", "density", "youngs_modulus")
        vals = [_checks.as_float_array(v, n, ()) for v, n in zip((length, radius, density, youngs_modulus), names)]
        for v, n in zip(vals, names):
            _checks.positive(v, n)
        eta = _checks.as_float_array(damping, "damping", ())
        _checks.nonnegative(eta, "damping")
        length, radius, density, youngs = vals
        self.length, self.radius = length, radius
        self.elongation = bool(elongation)
        self.nq = 3 if self.elongation else 2
        self.points, self.weights, self.stiffness, self.damping = _constants(
            length, radius, density, youngs, eta, elongation=self.elongation, order=order, n_radial=n_radial,
            n_angular=n_angular)
        self.n_section = self.points.shape[0] // int(order)
        self.centred = disk_is_centred(n_radial, n_angular)

    def _params(self, q: Config) -> tuple[Array, Array, Array]:
        ell = self.length + q[2] if self.elongation else self.length + jnp.zeros_like(q[0])
        return q[0], q[1], ell

    def arc_twist(self, q: Config) -> Float[Array, " 6"]:
        theta_y, theta_z, ell = self._params(q)
        z = jnp.zeros_like(theta_y)
        return jnp.stack([z, theta_y, theta_z, ell + z, z, z])

    def twist_columns(self) -> tuple[int, ...]:
        """``θ_y = q₀``, ``θ_z = q₁`` and ``ℓ = L + q₂``: components 1, 2 and 3 of the twist."""
        return (1, 2, 3) if self.elongation else (1, 2)


@construction_jit("elongation", "order", "n_radial", "n_angular")
def _constants(length, radius, density, youngs, eta, *, elongation: bool, order: int, n_radial: int, n_angular: int):
    """Points, point masses, and the bending (``E I / L``, both planes) and axial (``E A / L``)
    stiffness with their Kelvin–Voigt damping."""
    points, vol = rod_rule(length, radius, order=order, n_radial=n_radial, n_angular=n_angular)
    k_bend = youngs * (jnp.pi * radius**4 / 4) / length
    diag = [k_bend, k_bend] + ([youngs * jnp.pi * radius**2 / length] if elongation else [])
    stiffness = jnp.diag(jnp.stack(diag))
    return points, density * vol, stiffness, eta * stiffness
