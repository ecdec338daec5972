"""Cosserat rods: Piecewise Constant Strain (PCS) and Geometric Variable Strain (GVS) bodies.

Strain ``ξ = (κ_x, κ_y, κ_z, v_x, v_y, v_z)`` per unit *rest* arc length — angular strains first
(twist, bending about y, bending about z [1/m]), then linear strains (stretch, shear y, shear z
[-]) — the twist convention of :func:`kane_jax.lie.se3_exp` and of SoRoSim. The backbone pose
``g(X) ∈ SE(3)`` solves ``g' = g ξ̂`` from ``g(0) = 1``; the straight, unstretched rest shape along
+x has ``ξ* = (0, 0, 0, 1, 0, 0)``.

- PCS (Renda et al. 2018): ``ξ = B q + ξ*`` constant along the rod, ``B`` selects the active strains
  (a static mask), so ``g(X) = exp(X ξ̂)`` exactly.
- GVS (Boyer et al. 2021): ``ξ(σ) = Φ(σ) q + ξ*`` with a strain basis (``strain_bases.py``); the
  poses at the Gauss nodes along the arc are a cumulative product of 4th-order Magnus (Zanna)
  steps, ``Ω = h/2 (ξ₁ + ξ₂) + √3 h²/12 [ξ₁, ξ₂]`` with ``ξ₁,₂`` at the two Gauss points of each
  step (exact for constant strain).

Linear visco-elastic Cosserat law (Kelvin–Voigt): the stress resultant is
``H(X) (ξ − ξ*) + η H(X) ξ̇`` with ``H = diag(G J, E I_y, E I_z, E A, G A, G A)``, so
``K = ∫₀ᴸ Φᵀ H Φ dX`` and ``D = η K`` (``J = π r⁴/2``, ``I = π r⁴/4``, ``A = π r²``; no shear
correction factor). Cross sections are circular, with a radius that may taper linearly from base
to tip (conical rods); mass points are a Gauss rule on each section.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._exp_jets import product_jets
from .._jets import PoseJet
from .._small import contract
from .._static_index import spread_static, take_static
from .._types import Array, Config, Float, Mat3, Pose, Vec3, Vec6
from ..lie import compose_poses, se3_bracket, se3_exp
from ._rod import (  # noqa: F401  (STRAIN_NAMES, strain_mask, section_properties: public here too)
    _C1,
    _C2,
    STRAIN_NAMES,
    AbstractExponentialRod,
    AbstractRod,
    _check_order,
    _gvs_constants,
    _material,
    _pcs_constants,
    _rest_strain,
    _rod_points,
    frames_at,
    section_properties,
    strain_mask,
)
from .quadrature import disk_is_centred, gauss_legendre
from .strain_bases import AbstractFullBasis, AbstractStrainBasis, _strain_basis

_TWIST_SHEAR = (0, 4, 5)  # strains a bending rod has none of


class CosseratPCS(AbstractExponentialRod):
    """Piecewise Constant Strain Cosserat rod (one piece): strain constant along the rod.

    Coordinates ``q`` [1/m for κ, - for v]: the deviations from the rest strain of the *active*
    strains, in the order ``(κ_x, κ_y, κ_z, v_x, v_y, v_z)`` restricted to ``strains``:
    ``ξ = B q + ξ*`` (``B`` the selection matrix). The pose at rest arc length ``X = σ L`` is
    ``g(X) = exp(X ξ̂)``, exact. With bending and stretch only, the rod is the spatial
    constant-curvature arc of :class:`~kane_jax.SpatialConstantCurvature` with
    ``θ_y = L κ_y``, ``θ_z = L κ_z``, ``δL = L v_x``.

    Rest configuration ``q = 0``: strain ``ξ*`` (default ``(0, 0, 0, 1, 0, 0)``: straight,
    unstretched, along the proximal +x axis).

    A rod built with strains among ``bend_y``, ``bend_z``, ``stretch`` and a rest strain without
    twist or shear (the default) is a *bending rod* (``twist_form == "bending"``): its twist stays
    normal to the backbone, and its jets take the smaller closed form
    :func:`~kane_jax._exp_jets.bending_exp_jet`. Its rest twist and shear are then zero by
    construction: ``rest_strain[0]``, ``[4]``, ``[5]`` are not read (a rod that needs them, or
    their gradients, is built with them nonzero or with those strains active).

    Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]`` normalized rest arc length, ``(y, z)``
    [m] position in the rigid cross section (spanned by the y, z axes of ``g``). The distal frame
    ``{S_i}`` is ``g(L)``, the backbone frame at the tip.

    Arguments:
        length: rest length ``L`` [m]. radius: base radius [m]; ``tip_radius``: tip radius [m]
            (default: ``radius``; linear taper = conical rod). density: ``ρ`` [kg/m³].
        youngs_modulus: ``E`` [Pa]; ``poisson_ratio`` ``ν`` (``G = E / 2(1 + ν)``) or
            ``shear_modulus`` ``G`` [Pa]. damping: Kelvin–Voigt time constant ``η`` [s], ``D = η K``.
        strains: active strains, a length-6 mask or names from ``STRAIN_NAMES``
            (default: all six). rest_strain: ``ξ*`` (6,).
        order: Gauss–Legendre nodes along the arc; ``n_radial``/``n_angular``: section rule
            (``n_radial=0``: mass on the backbone).

    Raises:
        ValueError: non-positive geometry or moduli, ``ν`` outside (−1, 0.5], bad ``strains``,
            ``rest_strain`` not of shape (6,).
    """

    length: Float[Array, ""]
    radius: Float[Array, ""]
    tip_radius: Float[Array, ""]
    rest_strain: Float[Array, " 6"]
    points: Float[Array, "K 3"]
    weights: Float[Array, " K"]
    stiffness: Float[Array, "n n"]
    damping: Float[Array, "n n"]
    nq: int = eqx.field(static=True)
    strains: tuple[bool, ...] = eqx.field(static=True)
    n_section: int = eqx.field(static=True)
    centred: bool = eqx.field(static=True)
    bending: bool = eqx.field(static=True)

    def __init__(self, length=0.2, radius=0.01, density=1000.0, youngs_modulus=1e6, *, tip_radius=None,
                 poisson_ratio=0.5, shear_modulus=None, damping=0.0, strains=(True,) * 6, rest_strain=None,
                 order=5, n_radial=2, n_angular=4):
        mat = _material(length, radius, tip_radius, density, youngs_modulus, poisson_ratio, shear_modulus, damping)
        self.strains = strain_mask(strains)
        self.nq = sum(self.strains)
        self.length, self.radius, self.tip_radius = mat.length, mat.radius, mat.tip_radius
        self.rest_strain = _rest_strain(rest_strain)
        self.bending = not any(self.strains[i] for i in _TWIST_SHEAR) and _checks.is_concrete(self.rest_strain) \
            and not np.any(np.asarray(self.rest_strain)[list(_TWIST_SHEAR)])
        self.points, vol, self.n_section = _rod_points(mat, _check_order(order), n_radial, n_angular)
        self.centred = disk_is_centred(n_radial, n_angular)
        self.weights, self.stiffness, self.damping = _pcs_constants(mat, vol, strains=self.strains)

    @property
    def twist_form(self) -> str:
        return "bending" if self.bending else "se3"

    def strain(self, q: Config) -> Vec6:
        """The (constant) strain ``ξ = B q + ξ*`` (a bending rod's rest twist and shear are zero)."""
        sel = np.flatnonzero(self.strains)
        rest = self.rest_strain.astype(jnp.result_type(q, self.rest_strain))
        if self.bending:  # zero twist and shear: the kept entries' slices and zero blocks, not a scatter
            kept = [i for i in range(6) if i not in _TWIST_SHEAR]  # (``_static_index``; a `where` on a
            # constant mask gives the same values in a program 119 instructions larger)
            rest = spread_static(take_static(rest, kept), kept, 6)
        return rest + spread_static(q, sel, 6)

    def arc_twist(self, q: Config) -> Vec6:
        return self.length * self.strain(q)

    def twist_columns(self) -> tuple[int, ...]:
        """Coordinate ``k`` moves strain ``sel_k`` alone (``ξ = B q + ξ*``, ``B`` a selection)."""
        return tuple(int(i) for i in np.flatnonzero(self.strains))


class CosseratGVS(AbstractRod):
    """Geometric Variable Strain Cosserat rod: ``ξ(σ) = Φ(σ) q + ξ*``.

    Coordinates ``q``: modal amplitudes of the strain basis. With scalar bases (``basis`` an
    :class:`~kane_jax.bodies.strain_bases.AbstractStrainBasis`, or a tuple with one per active
    strain), ``Φ(σ)`` is block diagonal: the first ``n₁`` entries of ``q`` are the amplitudes of the
    first active strain (order ``κ_x, κ_y, κ_z, v_x, v_y, v_z``), and so on; each amplitude has the
    unit of its strain (1/m or -). A full basis (``AbstractFullBasis``, e.g.
    :class:`~kane_jax.bodies.strain_bases.PiecewiseGaussianCurvature`) gives ``Φ (6, nq)`` itself
    and ignores ``strains``.

    The poses ``g(σ)`` at the Gauss nodes of the arc (and at the tip) are a cumulative product of
    4th-order Magnus steps between consecutive nodes (``0 = σ₀ < σ₁ < … < σ_K < 1``); the pose
    at any other ``σ`` adds one Magnus step from the last node below it. With a constant basis
    the rod equals :class:`CosseratPCS` exactly. The jets of those poses (generators, curvature) are
    in closed form: :func:`~kane_jax._exp_jets.product_jets` of the steps' twists, which are
    quadratic in ``q`` (the commutator term).

    Rest configuration ``q = 0``: strain ``ξ*`` (default straight and unstretched along +x).
    Material coordinates ``s = (σ, y, z)`` as in :class:`CosseratPCS`; the distal frame is the
    backbone frame at the tip ``σ = 1``.

    Arguments: as :class:`CosseratPCS`, plus ``basis`` (see above) and ``stiffness_order``: the
    Gauss nodes of the rule for ``K = L ∫₀¹ Φᵀ H Φ dσ`` (default 12).

    Raises:
        ValueError/TypeError: as :class:`CosseratPCS`; a ``basis`` of the wrong type or count.
    """

    length: Float[Array, ""]
    radius: Float[Array, ""]
    tip_radius: Float[Array, ""]
    rest_strain: Float[Array, " 6"]
    points: Float[Array, "K 3"]
    weights: Float[Array, " K"]
    stiffness: Float[Array, "n n"]
    damping: Float[Array, "n n"]
    basis: object = eqx.field(static=True)
    strains: tuple[bool, ...] = eqx.field(static=True)
    grid: tuple[float, ...] = eqx.field(static=True)  # 0 and the arc nodes σ_1 … σ_K
    n_section: int = eqx.field(static=True)
    centred: bool = eqx.field(static=True)
    nq: int = eqx.field(static=True)

    def __init__(self, length=0.2, radius=0.01, density=1000.0, youngs_modulus=1e6, *, basis, tip_radius=None,
                 poisson_ratio=0.5, shear_modulus=None, damping=0.0, strains=(True,) * 6, rest_strain=None,
                 order=5, n_radial=2, n_angular=4, stiffness_order=12):
        mat = _material(length, radius, tip_radius, density, youngs_modulus, poisson_ratio, shear_modulus, damping)
        if isinstance(basis, AbstractFullBasis):
            self.strains = tuple(True for _ in range(6))
            self.basis = basis
            self.nq = basis.nq
        else:
            self.strains = strain_mask(strains)
            n_active = sum(self.strains)
            if isinstance(basis, AbstractStrainBasis):
                basis = (basis,) * n_active
            if not (isinstance(basis, tuple) and all(isinstance(b, AbstractStrainBasis) for b in basis)):
                raise TypeError("`basis` must be an AbstractStrainBasis, a tuple of them (one per active strain) "
                                f"or an AbstractFullBasis, got {type(basis).__name__}.")
            if len(basis) != n_active:
                raise ValueError(f"`basis` must hold one scalar basis per active strain ({n_active}), "
                                 f"got {len(basis)}.")
            self.basis = basis
            self.nq = sum(b.n for b in basis)
        order = _check_order(order)
        self.length, self.radius, self.tip_radius = mat.length, mat.radius, mat.tip_radius
        self.rest_strain = _rest_strain(rest_strain)
        self.points, vol, self.n_section = _rod_points(mat, order, n_radial, n_angular)
        self.centred = disk_is_centred(n_radial, n_angular)
        self.grid = (0.0,) + tuple(float(x) for x in gauss_legendre(order)[0])
        self.weights, self.stiffness, self.damping = _gvs_constants(
            mat, vol, basis=self.basis, strains=self.strains, nq=self.nq,
            stiffness_order=_check_order(stiffness_order, "stiffness_order"))

    def phi(self, sigma: Array) -> Float[Array, "6 nq"]:
        """Strain basis ``Φ(σ)`` (6, nq) at normalized arc length σ."""
        return _strain_basis(self.basis, self.strains, self.nq, sigma)

    def strain(self, q: Config, sigma: Array) -> Vec6:
        """Strain ``ξ(σ) = Φ(σ) q + ξ*`` per unit rest length."""
        return contract("ij,j->i", self.phi(sigma), q) + self.rest_strain

    def _twist(self, q: Config, a: Array, b: Array) -> Vec6:
        """Twist ``Ω`` of the 4th-order Magnus (Zanna) step of ``g' = g ξ̂`` from σ = a to σ = b
        (``g(b) = g(a) exp(Ω)``; quadratic in ``q``)."""
        h = b - a
        x1 = self.length * self.strain(q, a + _C1 * h)
        x2 = self.length * self.strain(q, a + _C2 * h)
        return 0.5 * h * (x1 + x2) + (np.sqrt(3) / 12) * h**2 * se3_bracket(x1, x2)

    def _step(self, q: Config, a: Array, b: Array) -> Pose:
        """4th-order Magnus (Zanna) step of ``g' = g ξ̂`` from σ = a to σ = b."""
        return se3_exp(self._twist(q, a, b))

    def _grid_poses(self, q: Config) -> Float[Array, "K1 4 4"]:
        """Poses at ``σ₀ = 0, σ₁, …, σ_K`` by a cumulative product of Magnus steps."""
        grid = jnp.asarray(self.grid, dtype=q.dtype)
        steps = jax.vmap(lambda a, b: self._step(q, a, b))(grid[:-1], grid[1:])

        def accumulate(g, step):
            g = compose_poses(g, step)
            return g, g

        eye = jnp.eye(4, dtype=q.dtype)
        _, poses = jax.lax.scan(accumulate, eye, steps)
        return jnp.concatenate([eye[None], poses], axis=0)

    def frame(self, q: Config, sigma: Array) -> tuple[Mat3, Vec3]:
        grid = jnp.asarray(self.grid, dtype=q.dtype)
        poses = self._grid_poses(q)
        j = jnp.clip(jnp.searchsorted(grid, sigma, side="right") - 1, 0, len(self.grid) - 1)
        g = compose_poses(poses[j], self._step(q, grid[j], sigma))
        return g[:3, :3], g[:3, 3]

    def tip(self, q: Config) -> Pose:
        return self.frames_and_tip(q)[2]

    def frames_and_tip(self, q: Config) -> tuple[Float[Array, "K 3 3"], Float[Array, "K 3"], Pose]:
        poses = self._grid_poses(q)
        last = jnp.asarray(self.grid[-1], dtype=q.dtype)
        tip = compose_poses(poses[-1], self._step(q, last, jnp.ones((), dtype=q.dtype)))
        return poses[1:, :3, :3], poses[1:, :3, 3], tip

    def element_jets(self, q: Config, qd: Config | None) -> tuple[PoseJet, PoseJet]:
        # closed form: the product of the Magnus steps' exponentials (its last factor the step from
        # σ_K to the tip) and the jets of each factor, with the steps' twists quadratic in q
        # (``distal_section_jets(self.frames_and_tip, q, qd)``, autodiff through the product, is the
        # tests' oracle)
        grid = jnp.asarray(self.grid + (1.0,), dtype=q.dtype)

        def twists(x):
            return jax.vmap(lambda a, b: self._twist(x, a, b))(grid[:-1], grid[1:])

        omega = twists(q)
        d_omega = jnp.moveaxis(jax.jacfwd(twists)(q), -1, -2)  # (K + 1, n, 6)
        dd_omega = None if qd is None else jax.jvp(lambda x: jax.jvp(twists, (x,), (qd,))[1], (q,), (qd,))[1]
        return product_jets(omega, d_omega, qd, dd_omega)
