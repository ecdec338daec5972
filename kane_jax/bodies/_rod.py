"""Rods: soft bodies whose cross-sections stay rigid, and the material shared by the Cosserat bodies.

:class:`AbstractRod` is the family of the constant-curvature, Cosserat (PCS, GVS) and Godage
bodies: a backbone frame ``(R, t)(q, σ)`` carries rigid cross-sections, so the mass moments need
the jets of the section frames at the arc nodes only (DESIGN §3.3 "Rigid cross-sections"), not of
every material point. Also here: strain naming and order, the rest strain, the linear visco-elastic
moduli ``H(σ)`` of :mod:`kane_jax.bodies.cosserat`, and the arc-major quadrature rule on a rod.
"""

from __future__ import annotations

import abc
import functools
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._exp_jets import bending_exp_jet, exp_jet, planar_exp_jet
from .._exp_poses import exp_pose
from .._jets import PoseJet
from .._types import Array, Config, Float, Mat3, Pose, Vec3
from ._base import AbstractLinearElastic, AbstractSoftBody
from ._moments import ElementRule, section_rule
from .quadrature import construction_jit, disk_rule, gauss_legendre
from .strain_bases import _strain_basis

STRAIN_NAMES = ("twist", "bend_y", "bend_z", "stretch", "shear_y", "shear_z")
_REST = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_C1, _C2 = 0.5 - np.sqrt(3) / 6, 0.5 + np.sqrt(3) / 6  # 2-point Gauss nodes on [0, 1]


def strain_mask(strains) -> tuple[bool, ...]:
    """Normalize a strain selection to a 6-tuple of bools in the order of :data:`STRAIN_NAMES`.

    Accepts a length-6 mask of bools/0-1 ints, or a sequence of names from :data:`STRAIN_NAMES`.
    """
    items = list(strains)
    if items and all(isinstance(x, str) for x in items):
        bad = [x for x in items if x not in STRAIN_NAMES]
        if bad:
            raise ValueError(f"`strains` names must be among {STRAIN_NAMES}, got {bad}.")
        mask = tuple(n in items for n in STRAIN_NAMES)
    else:
        if len(items) != 6 or any(x not in (0, 1, True, False) for x in items):
            raise ValueError(f"`strains` must be a length-6 mask of bools or a sequence of names "
                             f"from {STRAIN_NAMES}, got {strains!r}.")
        mask = tuple(bool(x) for x in items)
    if not any(mask):
        raise ValueError(f"`strains` must activate at least one strain, got {strains!r}.")
    return mask


def section_properties(radius: Array) -> tuple[Array, Array, Array]:
    """Area ``π r²``, second moment ``π r⁴/4`` and polar moment ``π r⁴/2`` of a disk."""
    return jnp.pi * radius**2, jnp.pi * radius**4 / 4, jnp.pi * radius**4 / 2


class _Material(NamedTuple):
    """Validated geometry and material of a (possibly conical) circular rod."""

    length: Array
    radius: Array
    tip_radius: Array
    density: Array
    youngs: Array
    shear: Array
    eta: Array


def _material(length, radius, tip_radius, density, youngs_modulus, poisson_ratio, shear_modulus, damping):
    names = ("length", "radius", "density", "youngs_modulus")
    vals = [_checks.as_float_array(v, n, ()) for v, n in zip((length, radius, density, youngs_modulus), names)]
    for v, n in zip(vals, names):
        _checks.positive(v, n)
    length, radius, density, youngs = vals
    if tip_radius is None:
        tip = radius
    else:
        tip = _checks.as_float_array(tip_radius, "tip_radius", ())
        _checks.positive(tip, "tip_radius")
    if shear_modulus is None:
        nu = _checks.as_float_array(poisson_ratio, "poisson_ratio", ())
        if _checks.is_concrete(nu) and not (-1.0 < float(nu) <= 0.5):
            raise ValueError(f"`poisson_ratio` must lie in (-1, 0.5], got {float(nu)}.")
        shear = youngs / (2 * (1 + nu))
    else:
        shear = _checks.as_float_array(shear_modulus, "shear_modulus", ())
        _checks.positive(shear, "shear_modulus")
    eta = _checks.as_float_array(damping, "damping", ())
    _checks.nonnegative(eta, "damping")
    return _Material(length, radius, tip, density, youngs, shear, eta)


def _radius_at(mat: _Material, sigma):
    return mat.radius + (mat.tip_radius - mat.radius) * sigma


def _moduli(mat: _Material, sigma) -> Float[Array, " 6"]:
    """``diag H(σ) = (G J, E I, E I, E A, G A, G A)`` at normalized arc length σ."""
    area, second, polar = section_properties(_radius_at(mat, sigma))
    e, g = mat.youngs, mat.shear
    return jnp.stack([g * polar, e * second, e * second, e * area, g * area, g * area])


@construction_jit("strains")
def _pcs_constants(mat: _Material, vol: Float[Array, " K"], *, strains: tuple[bool, ...]):
    """Point masses and the diagonal stiffness and Kelvin–Voigt damping of a piecewise-constant-strain
    rod: ``L`` times the mean of ``H(σ)`` over the rod (``r⁴`` is quartic in ``σ``: 4 Gauss nodes
    integrate it exactly)."""
    xs, ws = gauss_legendre(4)
    h_mean = jnp.asarray(ws) @ jax.vmap(lambda x: _moduli(mat, x))(jnp.asarray(xs, dtype=vol.dtype))
    stiffness = jnp.diag(mat.length * h_mean[np.asarray(strains)])
    return mat.density * vol, stiffness, mat.eta * stiffness


@construction_jit("basis", "strains", "nq", "stiffness_order")
def _gvs_constants(mat: _Material, vol: Float[Array, " K"], *, basis, strains: tuple[bool, ...], nq: int,
                   stiffness_order: int):
    """Point masses and the stiffness ``K = L ∫ Φᵀ H Φ dσ`` (Gauss rule of ``stiffness_order``
    nodes) and Kelvin–Voigt damping of a GVS rod with strain basis ``Φ(σ)`` (6, nq)."""
    xs, ws = gauss_legendre(stiffness_order)

    def integrand(x):
        phi = _strain_basis(basis, strains, nq, x)
        return phi.T @ (_moduli(mat, x)[:, None] * phi)

    terms = jax.vmap(integrand)(jnp.asarray(xs, dtype=vol.dtype))
    stiffness = mat.length * jnp.einsum("k,kij->ij", jnp.asarray(ws, dtype=vol.dtype), terms)
    return mat.density * vol, stiffness, mat.eta * stiffness


def _rod_points(mat: _Material, order: int, n_radial: int, n_angular: int):
    """Arc-major tensor rule ``(σ, y, z)`` on a conical rod, the rest volumes ``dV = A(σ) L dσ`` and
    the number of points per cross-section."""
    points, vol = _conical_rule(mat, order=order, n_radial=n_radial, n_angular=n_angular)
    return points, vol, points.shape[0] // int(order)


@construction_jit("order", "n_radial", "n_angular")
def _conical_rule(mat: _Material, *, order: int, n_radial: int, n_angular: int):
    xs, ws = gauss_legendre(order)
    unit, unit_area = disk_rule(jnp.ones((), dtype=mat.radius.dtype), n_radial, n_angular)
    r = _radius_at(mat, jnp.asarray(xs, dtype=mat.radius.dtype))  # (order,)
    m = unit.shape[0]
    yz = (r[:, None, None] * unit[None]).reshape(-1, 2)
    sigma = jnp.repeat(jnp.asarray(xs, dtype=yz.dtype), m)
    points = jnp.concatenate([sigma[:, None], yz], axis=1)
    vol = (jnp.asarray(ws)[:, None] * r[:, None] ** 2 * unit_area[None, :]).reshape(-1) * mat.length
    return points, vol


def _check_order(order, name="order"):
    _checks.count(order, name)
    return int(order)


def _rest_strain(rest_strain):
    return _checks.as_float_array(_REST if rest_strain is None else rest_strain, "rest_strain", (6,))




class AbstractRod(AbstractLinearElastic, AbstractSoftBody):
    """A linear visco-elastic soft body with rigid circular cross-sections along a backbone.

    Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]`` normalized rest arc length, ``(y, z)``
    [m] in the cross-section spanned by the y and z axes of the backbone frame ``(R, t)(q, σ)``.
    ``points`` are arc-major: ``n_section`` points per arc node.

    Subclasses implement :meth:`frame` (the backbone frame at any ``σ``), :meth:`tip`,
    :meth:`frames_and_tip` (the frames at the arc nodes and the distal frame, sharing work) and
    :meth:`element_jets` (a closed form, or :func:`~kane_jax.bodies._moments.distal_section_jets`).
    """

    n_section: eqx.AbstractVar[int]
    centred: eqx.AbstractVar[bool]  # sections from disk_rule symmetric about their centre (disk_is_centred)

    def centred_sections(self) -> bool:
        return self.centred

    @abc.abstractmethod
    def frame(self, q: Config, sigma: Array) -> tuple[Mat3, Vec3]:
        """Backbone frame ``(R, t)`` at normalized arc length ``σ``, in the proximal frame."""

    @abc.abstractmethod
    def frames_and_tip(self, q: Config) -> tuple[Float[Array, "K 3 3"], Float[Array, "K 3"], Pose]:
        """Frames at the arc nodes (``(K, 3, 3)``, ``(K, 3)``) and the distal frame ``(4, 4)``."""

    def arc_nodes(self) -> Float[Array, " K"]:
        """Normalized arc length of each cross-section."""
        return self.points[:: self.n_section, 0]

    def position(self, q: Config, s: Array) -> Vec3:
        rot, trans = self.frame(q, s[0])
        return trans + rot[:, 1] * s[1] + rot[:, 2] * s[2]

    def points_in_frame(self, q: Config) -> Float[Array, "K 3"]:
        rots, origins, _ = self.frames_and_tip(q)
        yz = self.points[:, 1:].reshape(origins.shape[0], self.n_section, 2).astype(origins.dtype)
        pts = origins[:, None] + rots[:, None, :, 1] * yz[..., :1] + rots[:, None, :, 2] * yz[..., 1:]
        return pts.reshape(-1, 3)

    def element_rule(self) -> ElementRule:
        k = self.points.shape[0] // self.n_section
        return section_rule(self.points[:, 1:].reshape(k, self.n_section, 2), self.weights.reshape(k, self.n_section))


def frames_at(rod: AbstractRod, q: Config, sigmas: Array) -> tuple[Float[Array, "K 3 3"], Float[Array, "K 3"]]:
    """:meth:`AbstractRod.frame` at several arc lengths (one vmap)."""
    return jax.vmap(lambda x: rod.frame(q, x))(sigmas.astype(q.dtype))


_EXP_JETS = {"se3": exp_jet, "planar": planar_exp_jet, "bending": bending_exp_jet}


class AbstractExponentialRod(AbstractRod):
    """A rod of constant strain: ``g(σ) = exp(σ Ω(q))`` with the arc twist ``Ω`` affine in ``q``.

    Constant-curvature segments (planar, spatial, Godage's section) and one-piece PCS Cosserat rods.
    The frames and their jets have closed forms (:func:`~kane_jax._exp_jets.exp_jet`): seen from the
    distal frame the section at ``σ`` is ``exp(−(1 − σ) Ω)``, whose generators are the right Jacobian
    applied to ``−(1 − σ) ∂Ω/∂q`` — five section jets per rod instead of one autodiff jet per point.
    Subclasses implement :meth:`arc_twist` and say in ``twist_form`` which closed form fits every
    twist they produce: ``"se3"`` (any twist: :func:`~kane_jax._exp_jets.exp_jet`), ``"planar"``
    (rotation about z, translation in the xy plane: :func:`~kane_jax._exp_jets.planar_exp_jet`) or
    ``"bending"`` (rotation vector normal to the backbone, translation along it:
    :func:`~kane_jax._exp_jets.bending_exp_jet`); the special forms are smaller programs.
    """

    twist_form: eqx.AbstractClassVar[str]

    @abc.abstractmethod
    def arc_twist(self, q: Config) -> Float[Array, " 6"]:
        """``Ω(q) = (ω, v)``: the backbone twist over the whole rod (``g(1) = exp(Ω)``), affine in ``q``."""

    def twist_columns(self) -> tuple[int, ...] | None:
        """The component of ``Ω`` that each coordinate moves, when each moves one (``∂Ω/∂q_k`` a
        multiple of ``e_{c_k}``; static): the ``"se3"`` jets then take their generators as columns
        of the right Jacobian, and the section moments leave out the rotation terms of the
        coordinates that only translate (:meth:`rotating_coordinates`). None (the default): general.
        A subclass that changes :meth:`arc_twist` must keep this true, or return None."""
        return None

    def rotating_coordinates(self) -> int | None:
        """With ``twist_columns`` ordered rotations first: the coordinates that move a rotation
        component. A translation's generator has ``ω = 0`` in every closed form:
        ``T e_c = (0, A e_{c−3})`` (``"se3"``), ``η = ℓ e_4`` gives ``k = m = 0`` in
        :func:`~kane_jax._exp_jets.bending_exp_jet`'s rate and ``η_θ = 0`` in
        :func:`~kane_jax._exp_jets.planar_exp_jet`'s."""
        cols = self.twist_columns()
        if cols is None:
            return None
        r = sum(c < 3 for c in cols)
        return r if r and all(c < 3 for c in cols[:r]) else None  # (no rotation at all: the general path)

    def frame(self, q: Config, sigma: Array) -> tuple[Mat3, Vec3]:
        g = exp_pose(self.twist_form, sigma * self.arc_twist(q))
        return g[:3, :3], g[:3, 3]

    def tip(self, q: Config) -> Pose:
        return exp_pose(self.twist_form, self.arc_twist(q))

    def frames_and_tip(self, q: Config) -> tuple[Float[Array, "K 3 3"], Float[Array, "K 3"], Pose]:
        omega = self.arc_twist(q)
        g = exp_pose(self.twist_form, self.arc_nodes().astype(omega.dtype)[:, None] * omega[None])
        return g[:, :3, :3], g[:, :3, 3], exp_pose(self.twist_form, omega)

    def element_jets(self, q: Config, qd: Config | None) -> tuple[PoseJet, PoseJet]:
        omega = self.arc_twist(q)
        d_omega = jax.jacfwd(self.arc_twist)(q).T  # (n, 6), constant: Ω is affine
        back = (1 - self.arc_nodes().astype(omega.dtype))[:, None]
        jet = _EXP_JETS[self.twist_form]
        if self.twist_form != "se3":
            return jet(omega, d_omega, qd), jet(-back * omega[None], -back[:, :, None] * d_omega[None], qd)
        # the general SE(3) form: the tip exp(Ω) and the sections exp(−(1 − σ_k) Ω) as one batch of K + 1
        # twists (scales −1 and 1 − σ_k), the same operations row by row: one six-strain PCS rod's
        # batched FD 2 % faster, its compile 3.6–4.4 → 3.0–3.6 s; three such rods no slower. The
        # smaller planar and bending forms stay two calls (one bend + stretch rod 5 % and three planar
        # CC segments 5 % slower batched as one call; *One jet for an SE(3) rod's tip and sections*)
        jet = functools.partial(jet, columns=self.twist_columns())
        scale = jnp.concatenate([-jnp.ones((1, 1), omega.dtype), back])
        both = jet(-scale * omega[None], -scale[:, :, None] * d_omega[None], qd)
        return jax.tree.map(lambda x: x[0], both), jax.tree.map(lambda x: x[1:], both)
