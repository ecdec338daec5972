"""Hyperelastic materials and Kelvin–Voigt damping integrated over a body's quadrature nodes.

A soft body whose geometry is ``g(q, s)`` deforms each material neighbourhood by the deformation
gradient ``F = ∂g/∂X`` (``X`` the reference position in metres). With material coordinates ``s``
that are not Cartesian metres (e.g. ``s = (σ, y, z)`` with a normalized arc length ``σ``),
``F = (∂g/∂s)(∂g₀/∂s)⁻¹`` where ``g₀ = g(0, ·)`` is the stress-free reference map.

The strain energy ``U(q) = Σ_k V_k W(F_k(q))`` (``V_k`` reference volumes of the nodes) and the
Rayleigh dissipation ``R(q, q̇) = Σ_k V_k η W_lin(Ė_k)`` (Kelvin–Voigt: viscous stress ``η ℂ : Ė``,
``Ė = sym(Fᵀ Ḟ)`` the Green–Lagrange strain rate) give the generalized internal force

    Q_int(q, q̇) = ∂U/∂q + ∂R/∂q̇

by automatic differentiation (paper ``000_…`` §V-B; paper ``003_…`` §6.2). A body gets them by
deriving from :class:`AbstractMaterialBody` (see ``variable_radius.py`` and ``lvp.py``).

Lamé constants: ``μ = E / (2(1 + ν))``, ``λ = E ν / ((1 + ν)(1 − 2ν))``. (Paper ``000_…`` prints
the two formulas swapped; these are the standard ones.)
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp

from .. import _checks
from .._small import det3
from .._types import Array, Config, Float, Mat3
from ._base import AbstractSoftBody


def lame_parameters(youngs_modulus: Array, poisson_ratio: Array) -> tuple[Array, Array]:
    """``(λ, μ)`` [Pa] from Young's modulus ``E`` [Pa] and Poisson's ratio ``ν`` (``ν < ½``)."""
    e, nu = youngs_modulus, poisson_ratio
    return e * nu / ((1 + nu) * (1 - 2 * nu)), e / (2 * (1 + nu))


def green_lagrange(f: Mat3) -> Mat3:
    """Green–Lagrange strain ``E = ½ (Fᵀ F − I)``."""
    return 0.5 * (f.T @ f - jnp.eye(3, dtype=f.dtype))


def _hooke_density(strain: Mat3, lam: Array, mu: Array) -> Array:
    """``μ E:E + ½ λ tr(E)²``, the energy density of linear isotropic elasticity."""
    tr = jnp.trace(strain)
    return mu * jnp.sum(strain * strain) + 0.5 * lam * tr * tr


class AbstractMaterial(eqx.Module):
    """An isotropic hyperelastic material with Kelvin–Voigt viscosity.

    Subclasses define :meth:`energy_density` ``W(F)`` [J/m³], which must vanish with zero
    gradient at ``F = I``.
    """

    youngs_modulus: eqx.AbstractVar[Float[Array, ""]]
    poisson_ratio: eqx.AbstractVar[Float[Array, ""]]
    viscosity: eqx.AbstractVar[Float[Array, ""]]

    @abc.abstractmethod
    def energy_density(self, f: Mat3) -> Array:
        """Strain energy per unit reference volume ``W(F)`` [J/m³]."""

    def small_strain_lame(self) -> tuple[Array, Array]:
        """``(λ, μ)`` of the material's small-strain (linearized) response."""
        return lame_parameters(self.youngs_modulus, self.poisson_ratio)

    def dissipation_density(self, f: Mat3, f_dot: Mat3) -> Array:
        """Kelvin–Voigt Rayleigh density ``η W_lin(Ė)``, ``Ė = sym(Fᵀ Ḟ)`` [W/m³ · ½].

        Its derivative with respect to ``Ḟ`` is the viscous first Piola stress ``F (η ℂ : Ė)``
        (paper ``000_…`` §V-B: ``f_d = η ∇·Ė``, with ``η`` a relaxation time [s]).
        """
        rate = 0.5 * (f.T @ f_dot + f_dot.T @ f)
        lam, mu = self.small_strain_lame()
        return self.viscosity * _hooke_density(rate, lam, mu)


def _material_params(youngs_modulus, poisson_ratio, viscosity, *, allow_half: bool):
    e = _checks.as_float_array(youngs_modulus, "youngs_modulus", ())
    nu = _checks.as_float_array(poisson_ratio, "poisson_ratio", ())
    eta = _checks.as_float_array(viscosity, "viscosity", ())
    _checks.positive(e, "youngs_modulus")
    _checks.nonnegative(eta, "viscosity")
    if _checks.is_concrete(nu):
        v = float(nu)
        ok = -1.0 < v <= 0.5 if allow_half else -1.0 < v < 0.5
        if not ok:
            bound = "(-1, 0.5]" if allow_half else "(-1, 0.5)"
            raise ValueError(f"`poisson_ratio` must lie in {bound}, got {v}.")
    return e, nu, eta


class LinearElastic(AbstractMaterial):
    """Hooke's law in the Green–Lagrange strain (Saint Venant–Kirchhoff), paper ``000_…`` §V-B.

    ``W(F) = μ E:E + ½ λ tr(E)²`` with ``E = ½(FᵀF − I)``: linear stress–strain, exact under large
    rotations (a rigid rotation stores no energy), the model of paper ``000_…`` Simulation 1.

    Arguments:
        youngs_modulus: ``E`` [Pa] > 0. poisson_ratio: ``ν`` in (−1, ½) (``λ`` is infinite at ½).
        viscosity: Kelvin–Voigt relaxation time ``η`` [s] ≥ 0 (viscous stress ``η ℂ : Ė``).

    Raises:
        ValueError: non-positive ``E``, ``ν`` outside (−1, ½), negative ``η``.
    """

    youngs_modulus: Float[Array, ""]
    poisson_ratio: Float[Array, ""]
    viscosity: Float[Array, ""]

    def __init__(self, youngs_modulus=1e6, poisson_ratio=0.45, viscosity=0.0):
        self.youngs_modulus, self.poisson_ratio, self.viscosity = _material_params(
            youngs_modulus, poisson_ratio, viscosity, allow_half=False)

    def energy_density(self, f: Mat3) -> Array:
        lam, mu = self.small_strain_lame()
        return _hooke_density(green_lagrange(f), lam, mu)


class NeoHookean(AbstractMaterial):
    """Neo-Hookean solid (paper ``003_…`` §6.2).

    Compressible (``ν < ½``): ``W = ½ μ (I₁ − 3) − μ ln J + ½ λ (ln J)²`` with ``I₁ = tr(FᵀF)``,
    ``J = det F``; for small strains it reduces to :class:`LinearElastic` with the same ``E, ν``.
    Incompressible (``ν = ½``, the paper's case): ``W = ½ μ (I₁ − 3)`` with ``μ = E/3``, to be used
    with isochoric kinematics (``J ≡ 1``, e.g. the LVP primitives), which enforce the constraint.
    Finite with finite derivatives of every order at ``F = I`` (``ln J`` is smooth for ``J > 0``).

    Arguments:
        youngs_modulus: ``E`` [Pa] > 0. poisson_ratio: ``ν`` in (−1, ½].
        viscosity: Kelvin–Voigt relaxation time ``η`` [s] ≥ 0. For ``ν = ½`` the viscous stress uses
            the deviatoric part only (``λ`` is dropped, consistent with ``J ≡ 1``).

    Raises:
        ValueError: non-positive ``E``, ``ν`` outside (−1, ½], negative ``η``.
    """

    youngs_modulus: Float[Array, ""]
    poisson_ratio: Float[Array, ""]
    viscosity: Float[Array, ""]
    incompressible: bool = eqx.field(static=True)

    def __init__(self, youngs_modulus=1e6, poisson_ratio=0.5, viscosity=0.0):
        self.youngs_modulus, self.poisson_ratio, self.viscosity = _material_params(
            youngs_modulus, poisson_ratio, viscosity, allow_half=True)
        self.incompressible = bool(_checks.is_concrete(self.poisson_ratio) and float(self.poisson_ratio) == 0.5)

    def small_strain_lame(self) -> tuple[Array, Array]:
        if self.incompressible:
            return jnp.zeros_like(self.youngs_modulus), self.youngs_modulus / 3
        return lame_parameters(self.youngs_modulus, self.poisson_ratio)

    def energy_density(self, f: Mat3) -> Array:
        lam, mu = self.small_strain_lame()
        i1 = jnp.sum(f * f)
        if self.incompressible:
            return 0.5 * mu * (i1 - 3)
        log_j = jnp.log(det3(f))
        return 0.5 * mu * (i1 - 3) - mu * log_j + 0.5 * lam * log_j**2


# --- quadrature over a body --------------------------------------------------------------------


def deformation_gradients(position, q: Config, points: Float[Array, "K 3"],
                          ref_inverse: Array) -> Float[Array, "K 3 3"]:
    """``F_k = (∂g/∂s)(q, s_k) · (∂g₀/∂s)⁻¹`` at every node.

    Arguments:
        position: ``(q, s) -> (3,)`` body geometry. q: ``(n,)``. points: ``(K, 3)`` nodes ``s_k``.
        ref_inverse: ``(3, 3)`` or ``(K, 3, 3)`` inverse of the reference Jacobian ``∂g(0, s)/∂s``
            (``diag(1/L, 1, 1)`` for ``s = (σ, y, z)``).

    Raises:
        ValueError: ``points`` not of shape (K, 3) or ``ref_inverse`` of the wrong shape.
    """
    if points.ndim != 2 or points.shape[1] != 3:
        raise ValueError(f"`points` must have shape (K, 3), got shape {points.shape}.")
    if ref_inverse.shape not in ((3, 3), (points.shape[0], 3, 3)):
        raise ValueError(f"`ref_inverse` must have shape (3, 3) or ({points.shape[0]}, 3, 3), got {ref_inverse.shape}.")
    jac = jax.vmap(lambda s: jax.jacfwd(position, argnums=1)(q, s))(points)  # (K, 3, 3)
    if ref_inverse.ndim == 2:
        return jnp.einsum("kij,jl->kil", jac, ref_inverse)
    return jnp.einsum("kij,kjl->kil", jac, ref_inverse)


def strain_energy(material: AbstractMaterial, position, q: Config, points, volumes, ref_inverse) -> Array:
    """``U(q) = Σ_k V_k W(F_k(q))`` [J] (``volumes``: reference volumes ``V_k`` [m³])."""
    return _energy(material, _gradients_of(position, points, ref_inverse), q, volumes)


def dissipation(material: AbstractMaterial, position, q: Config, qd: Config, points, volumes, ref_inverse) -> Array:
    """Rayleigh function ``R(q, q̇) = Σ_k V_k η W_lin(Ė_k)`` [W/2]; ``∂R/∂q̇`` is the damping force."""
    return _dissipation(material, _gradients_of(position, points, ref_inverse), q, qd, volumes)


def internal_force(material: AbstractMaterial, position, q: Config, qd: Config, points, volumes, ref_inverse) -> Config:
    """``∂U/∂q + ∂R/∂q̇``: elastic plus Kelvin–Voigt generalized force on the body coordinates.

    Both terms are the transposed sensitivity of the deformation gradients applied to a stress,
    ``Q = Σ_k V_k (∂F_k/∂q)ᵀ : (∂W/∂F + ∂D/∂Ḟ)(F_k, Ḟ_k)`` (``Ḟ = (∂F/∂q) q̇``, so
    ``∂Ḟ/∂q̇ = ∂F/∂q``): one linearization of ``F(q)``, pointwise 3×3 stresses and one transpose,
    instead of a reverse pass through ``U`` and another through ``R``.
    """
    return _internal_force(material, _gradients_of(position, points, ref_inverse), q, qd, volumes)


@eqx.filter_jit
def tangent_matrices(material: AbstractMaterial, position, nq: int, points, volumes,
                     ref_inverse) -> tuple[Array, Array]:
    """Stiffness ``∂²U/∂q²`` and damping ``∂²R/∂q̇²`` at the rest configuration ``q = 0``.

    Compiled (``eqx.filter_jit``): evaluated eagerly, the two Hessians would dispatch and compile
    hundreds of single operations (≈ 17 s for a variable-radius body instead of ≈ 1 s).
    """
    return _tangent_matrices(material, _gradients_of(position, points, ref_inverse), nq, volumes)


# the kernels take the deformation gradients as a function ``q -> (K, 3, 3)``, so that a body can
# compute them its own way (LVPBody shares the axial terms of a cross-section)


def _gradients_of(position, points, ref_inverse):
    return lambda x: deformation_gradients(position, x, points, ref_inverse)


def _energy(material: AbstractMaterial, gradients, q: Config, volumes) -> Array:
    return volumes @ jax.vmap(material.energy_density)(gradients(q))


def _dissipation(material: AbstractMaterial, gradients, q: Config, qd: Config, volumes) -> Array:
    f, f_dot = jax.jvp(gradients, (q,), (qd,))
    return volumes @ jax.vmap(material.dissipation_density)(f, f_dot)


def _internal_force(material: AbstractMaterial, gradients, q: Config, qd: Config, volumes) -> Config:
    f, tangent = jax.linearize(gradients, q)
    f_dot = tangent(qd)
    elastic = jax.vmap(jax.grad(material.energy_density))(f)
    viscous = jax.vmap(jax.grad(material.dissipation_density, argnums=1))(f, f_dot)
    (force,) = jax.linear_transpose(tangent, q)(volumes[:, None, None] * (elastic + viscous))
    return force


def _tangent_matrices(material: AbstractMaterial, gradients, nq: int, volumes) -> tuple[Array, Array]:
    z = jnp.zeros((nq,), dtype=volumes.dtype)
    k = jax.hessian(lambda x: _energy(material, gradients, x, volumes))(z)
    d = jax.hessian(lambda v: _dissipation(material, gradients, z, v, volumes))(z)
    return k, d


_tangent_matrices_jit = eqx.filter_jit(_tangent_matrices)


class AbstractMaterialBody(AbstractSoftBody):
    """A soft body whose internal forces come from a material integrated over its volume.

    Subclasses provide ``material``, the reference ``volumes`` of their quadrature ``points`` and
    :meth:`reference_inverse`; ``stiffness``/``damping`` are the tangent matrices at rest.
    """

    material: eqx.AbstractVar[AbstractMaterial]
    volumes: eqx.AbstractVar[Float[Array, " K"]]

    @abc.abstractmethod
    def reference_inverse(self) -> Array:
        """``(∂g₀/∂s)⁻¹``, the inverse reference Jacobian of the material coordinates (3, 3)."""

    def deformation_gradients(self, q: Config) -> Float[Array, "K 3 3"]:
        """``F_k(q)`` at the quadrature points (:func:`deformation_gradients` of :meth:`position`)."""
        return deformation_gradients(self.position, q, self.points, self.reference_inverse())

    def energy(self, q: Config) -> Array:
        return _energy(self.material, self.deformation_gradients, q, self.volumes)

    def internal_force(self, q: Config, qd: Config) -> Config:
        return _internal_force(self.material, self.deformation_gradients, q, qd, self.volumes)

    @property
    def stiffness(self) -> Float[Array, "n n"]:
        """Tangent stiffness ``∂²U/∂q²`` at ``q = 0`` (the forces themselves are nonlinear)."""
        return _tangent_matrices_jit(self.material, self.deformation_gradients, self.nq, self.volumes)[0]

    @property
    def damping(self) -> Float[Array, "n n"]:
        """Kelvin–Voigt damping matrix ``∂²R/∂q̇²`` at ``q = 0``."""
        return _tangent_matrices_jit(self.material, self.deformation_gradients, self.nq, self.volumes)[1]
