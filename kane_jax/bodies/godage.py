"""Godage's variable-length continuum section driven by three actuators (paper ``004_…``).

Three extending actuators (PMAs) sit ``2π/3`` apart at distance ``r`` from the neutral axis; their
length changes ``q = (l₁, l₂, l₃)`` bend the section into a circular arc or extend it (equal
changes). Godage et al. write the arc with curve parameters (radius ``λ``, angle ``φ``, plane
``θ``), singular when the section is straight, and replace them by a 13th-order Taylor
polynomial. Here the same arc is written *exactly* without any singularity: the fibre at
cross-section offset ``(y, z)`` of an arc with tip rotation vector ``(0, θ_y, θ_z)`` and backbone
length ``ℓ`` has length ``ℓ + θ_y z − θ_z y``, so requiring the actuator lengths to be ``L + l_j``
gives the *linear* map

    ℓ = L + (l₁ + l₂ + l₃)/3,   θ_y = 2/(3r) Σ_j l_j sin α_j,   θ_z = −2/(3r) Σ_j l_j cos α_j,

(``α_j = 2π(j−1)/3``), and the pose is the exponential-form arc of
:func:`kane_jax.bodies.spatial_cc.arc_frame`, analytic everywhere. The bending angle is
``|θ| = 2 √(l₁² + l₂² + l₃² − l₁l₂ − l₁l₃ − l₂l₃) / (3r)``, Godage's ``φ``.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._types import Array, Config, Float
from ._rod import AbstractExponentialRod
from .quadrature import disk_is_centred, rod_rule

ACTUATOR_ANGLES = tuple(2 * np.pi * j / 3 for j in range(3))  # α_j, from +y towards +z
_S = np.sqrt(3.0) / 3.0  # (2/3)·(√3/2)
_BEND = np.array([[0.0, _S, -_S], [-2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]])  # (2/3)(sin α_j, −cos α_j); θ = _BEND q / r


class GodageSection(AbstractExponentialRod):
    """One variable-length continuum section with three actuators (Godage et al. 2019).

    Coordinates ``q = (l₁, l₂, l₃)`` [m]: length changes of the three actuators from their
    unactuated length ``L``; actuator ``j`` runs parallel to the backbone at
    ``(y, z) = r (cos α_j, sin α_j)`` of the cross section, ``α_j = 2π(j−1)/3``. Equal changes
    extend the straight section to ``L + l``; unequal ones bend it into a circular arc (towards
    the shorter actuators). Smooth to every order everywhere, including ``q = 0`` and equal
    lengths.

    Rest configuration ``q = 0``: straight, length ``L``, along the proximal +x axis.

    Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]`` normalized arc length, ``(y, z)`` [m] the
    position in the rigid circular cross section of radius ``r``. Mass ``m`` is uniform along the
    backbone (and, with ``n_radial > 0``, uniform over each disc, so the discs' rotational inertia
    is included, as in the paper's integral model). The distal frame ``{S_i}`` is the arc frame at
    the tip: origin at the centre of the end plate, x along the tangent.

    Arguments:
        length: unactuated length ``L`` [m] (paper prototype: 0.15).
        radius: actuator distance from the axis ``r`` [m], also the disc radius (0.0125).
        mass: section mass ``m`` [kg] (0.1).
        stiffness, damping: optional ``(3, 3)`` matrices, ``(3,)`` diagonals or scalars
            [N/m, N s/m] for ``K q + D q̇`` (the paper identifies ``K_e``, ``D`` experimentally).
        order: Gauss nodes along the arc; ``n_radial``/``n_angular``: disc rule (0: backbone only).

    Raises:
        ValueError: non-positive length, radius or mass; bad stiffness/damping shapes.
    """

    length: Float[Array, ""]
    radius: Float[Array, ""]
    points: Float[Array, "K 3"]
    weights: Float[Array, " K"]
    stiffness: Float[Array, "3 3"]
    damping: Float[Array, "3 3"]
    nq: int = eqx.field(static=True)
    n_section: int = eqx.field(static=True)
    centred: bool = eqx.field(static=True)
    twist_form: ClassVar[str] = "bending"  # Ω = (0, θ_y, θ_z, ℓ, 0, 0): no twist, no shear

    def __init__(self, length=0.15, radius=0.0125, mass=0.1, *, stiffness=None, damping=None, order=5,
                 n_radial=2, n_angular=4):
        names = ("length", "radius", "mass")
        vals = [_checks.as_float_array(v, n, ()) for v, n in zip((length, radius, mass), names)]
        for v, n in zip(vals, names):
            _checks.positive(v, n)
        self.length, self.radius, mass = vals
        self.nq = 3
        self.points, vol = rod_rule(self.length, self.radius, order=order, n_radial=n_radial, n_angular=n_angular)
        self.weights = mass * vol / jnp.sum(vol)
        self.n_section = self.points.shape[0] // int(order)
        self.centred = disk_is_centred(n_radial, n_angular)
        self.stiffness = _checks.matrix_or_zeros(stiffness, "stiffness", 3)
        self.damping = _checks.matrix_or_zeros(damping, "damping", 3)

    def arc_parameters(self, q: Config) -> tuple[Array, Array, Array]:
        """``(θ_y, θ_z, ℓ)``: tip rotation vector components [rad] and backbone length [m]."""
        # = _BEND @ q / r, written so that equal lengths cancel exactly (θ = 0 to the last bit)
        theta_y = _S * (q[1] - q[2]) / self.radius
        theta_z = ((q[1] + q[2]) - 2 * q[0]) / (3 * self.radius)
        return theta_y, theta_z, self.length + jnp.mean(q)

    def actuator_lengths(self, q: Config) -> Float[Array, " 3"]:
        """Current actuator lengths ``L + l_j`` [m] (also the fibre lengths of the arc at the actuators)."""
        return self.length + q

    def arc_twist(self, q: Config) -> Float[Array, " 6"]:
        theta_y, theta_z, ell = self.arc_parameters(q)
        z = jnp.zeros_like(theta_y)
        return jnp.stack([z, theta_y, theta_z, ell + z, z, z])
