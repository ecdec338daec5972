"""Soft bodies built by composing locally volume-preserving (LVP) primitives.

Paper ``003_…`` §7 (Sims. 1–2) with the primitives of Xu & Chirikjian (arXiv 2202.09270,
:mod:`kane_jax.bodies.lvp_primitives`): ``g(q, s) = g_m(q_m, ·) ∘ … ∘ g_1(q_1, ·)(X(s))``, the modal
amplitudes of all primitives stacked in ``q``; the distal frame from three points of the distal
contact area (eqs. 4–7, :func:`~kane_jax.bodies.frames.frame_from_points`); incompressible
Neo-Hookean stress (§6.2) by volumetric quadrature.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._types import Array, Config, Float, Pose, Vec3
from . import materials as mat
from ._base import AbstractPointBody
from .frames import frame_from_points
from .lvp_primitives import AbstractPrimitive, Bend
from .quadrature import construction_jit, gauss_legendre


@construction_jit("order", "n_radial", "n_angular")
def tube_rule(length, radius, inner_radius, *, order: int, n_radial: int, n_angular: int):
    """Tensor Gauss rule on a (hollow) cylinder: nodes ``(σ, y, z)`` and their volumes [m³].

    Gauss–Legendre in ``σ ∈ [0, 1]`` and in ``r ∈ [r_in, R]`` (with the ``r dr`` Jacobian), equally
    spaced angles: exact for the volume and for polynomial integrands of the section of degree
    ``< n_angular`` in the angle.
    """
    for name, n in (("order", order), ("n_radial", n_radial), ("n_angular", n_angular)):
        _checks.count(n, name)
    xs, ws = gauss_legendre(order)
    xr, wr = gauss_legendre(n_radial)
    ang = 2 * np.pi * (np.arange(n_angular) + 0.5) / n_angular
    r = inner_radius + (radius - inner_radius) * jnp.asarray(xr)
    area_r = (radius - inner_radius) * jnp.asarray(wr) * r * (2 * np.pi / n_angular)
    y = (r[:, None] * jnp.cos(ang)[None, :]).reshape(-1)
    z = (r[:, None] * jnp.sin(ang)[None, :]).reshape(-1)
    sec = jnp.stack([y, z], axis=1)
    area = jnp.repeat(area_r, n_angular)
    m = sec.shape[0]
    nodes = jnp.concatenate([jnp.repeat(jnp.asarray(xs, dtype=sec.dtype), m)[:, None], jnp.tile(sec, (order, 1))],
                            axis=1)
    vol = (jnp.asarray(ws)[:, None] * area[None, :]).reshape(-1) * length
    return nodes, vol


class LVPBody(mat.AbstractMaterialBody, AbstractPointBody):
    """A cylinder deformed by a composition of LVP primitives; ``q`` = their modal amplitudes.

    Coordinates: ``q = (a₁, …, a_m)``, the amplitudes of ``primitives[0]`` first (each primitive's
    ``n_modes``; units per primitive: stretch and shear amplitudes are displacements over ``L``,
    bend and twist amplitudes are angles [rad], cavity amplitudes are areas over ``R²``). The
    primitives act in the given order on the reference point ``X = (L σ, y, z)``; all fields vanish
    at ``q = 0`` (rest: a straight cylinder of length ``L``, radius ``R``, optional hollow core of
    radius ``r_in``, along the proximal +x axis).

    Material coordinates ``s = (σ, y, z)``: ``σ ∈ [0, 1]`` normalized axial coordinate, ``(y, z)``
    [m] reference position in the section. Distal frame ``{S_i}``: :func:`frame_from_points` of
    ``g(q, (1, 0, 0))``, ``g(q, (1, ρ, 0))``, ``g(q, (1, 0, ρ))`` with ``ρ = R`` (paper ``003_…``
    eqs. 4–7): origin at the distal centre, x the normal of the distal face.

    The first :class:`~kane_jax.bodies.lvp_primitives.Bend` evaluates its backbone quadrature once per
    cross-section of the rule (``points`` in sections of ``section_size``) when the primitives before
    it keep sections plane; the numbers are those of :meth:`position` point by point.

    Internal forces: the strain energy of ``material`` (default incompressible
    :class:`~kane_jax.bodies.materials.NeoHookean`, paper ``003_…`` §6.2, exact here because every
    primitive is isochoric) and its Kelvin–Voigt damping, integrated on :func:`tube_rule`.

    Arguments:
        primitives: non-empty sequence of :class:`~kane_jax.bodies.lvp_primitives.AbstractPrimitive`.
        length: ``L`` [m]. radius: ``R`` [m]. density: ``ρ`` [kg/m³]. inner_radius: ``r_in`` [m]
            (``0 ≤ r_in < R``; > 0 for a chamber driven by a :class:`Cavity`).
        material: an ``AbstractMaterial`` (default ``NeoHookean(1e6, 0.5, 0.0)``).
        order, n_radial, n_angular: quadrature (see :func:`tube_rule`).

    Raises:
        ValueError: empty ``primitives``, non-positive sizes, ``inner_radius`` out of range.
        TypeError: an entry that is not a primitive, or a ``material`` that is not a material.
    """

    primitives: tuple[AbstractPrimitive, ...]
    length: Float[Array, ""]
    radius: Float[Array, ""]
    inner_radius: Float[Array, ""]
    material: mat.AbstractMaterial
    points: Float[Array, "K 3"]
    volumes: Float[Array, " K"]
    weights: Float[Array, " K"]
    nq: int = eqx.field(static=True)
    slices: tuple[tuple[int, int], ...] = eqx.field(static=True)
    section_size: int = eqx.field(static=True)

    def __init__(self, primitives: Sequence[AbstractPrimitive], length=0.1, radius=0.02, density=1000.0,
                 material=None, *, inner_radius=0.0, order=4, n_radial=2, n_angular=4):
        prims = tuple(primitives) if isinstance(primitives, (list, tuple)) else None
        if not prims:
            raise ValueError(f"`primitives` must be a non-empty list of LVP primitives, got {primitives!r}.")
        for i, p in enumerate(prims):
            if not isinstance(p, AbstractPrimitive):
                raise TypeError(f"`primitives[{i}]` must be an LVP primitive (Stretch, Bend, ...), "
                                f"got {type(p).__name__}.")
        names = ("length", "radius", "density")
        vals = [_checks.as_float_array(v, n, ()) for v, n in zip((length, radius, density), names)]
        for v, n in zip(vals, names):
            _checks.positive(v, n)
        length, radius, density = vals
        r_in = _checks.as_float_array(inner_radius, "inner_radius", ())
        _checks.nonnegative(r_in, "inner_radius")
        if _checks.is_concrete(r_in) and _checks.is_concrete(radius) and float(r_in) >= float(radius):
            raise ValueError(f"`inner_radius` must be smaller than `radius`={float(radius)}, got {float(r_in)}.")
        if material is None:
            material = mat.NeoHookean(1e6, 0.5, 0.0)
        if not isinstance(material, mat.AbstractMaterial):
            raise TypeError(f"`material` must be a kane_jax AbstractMaterial, got {type(material).__name__}.")
        self.primitives = prims
        self.length, self.radius, self.inner_radius, self.material = length, radius, r_in, material
        starts = np.cumsum([0] + [p.n_modes for p in prims])
        self.slices = tuple((int(a), int(b)) for a, b in zip(starts[:-1], starts[1:]))
        self.nq = int(starts[-1])
        self.points, self.volumes = tube_rule(length, radius, r_in, order=order, n_radial=n_radial,
                                              n_angular=n_angular)
        self.weights = density * self.volumes
        self.section_size = int(n_radial) * int(n_angular)  # tube_rule's points, section by section

    def position(self, q: Config, s: Array) -> Vec3:
        return self._map(q, s, self.primitives, self.slices)

    def _frame_coords(self) -> Float[Array, "3 3"]:
        """Material coordinates of the three distal points that define ``{S_i}`` (eqs. 4–7)."""
        one, zero, rho = jnp.ones_like(self.radius), jnp.zeros_like(self.radius), self.radius
        return jnp.stack([jnp.stack([one, zero, zero]), jnp.stack([one, rho, zero]), jnp.stack([one, zero, rho])])

    def tip(self, q: Config) -> Pose:
        p = jax.vmap(lambda s: self.position(q, s))(self._frame_coords())
        return frame_from_points(p[0], p[1], p[2])

    def points_and_tip(self, q: Config) -> tuple[Float[Array, "K 3"], Pose]:
        # the quadrature points and the three frame points in one vmapped map: one trace of the
        # primitives instead of four, which shortens every derivative of the moments
        s_all = jnp.concatenate([self.points, self._frame_coords()])
        k = self._shared_bend()
        if k is None:
            x = jax.vmap(lambda s: self.position(q, s))(s_all)
        else:
            # the first Bend's axial terms once per cross-section (tube_rule's sections and the
            # distal face) instead of once per point
            reps = jnp.concatenate([self.points[:: self.section_size], self._frame_coords()[:1]])
            per_point = self._to_points(jax.vmap(lambda s: self._section_terms(q, s, k))(reps), frame=True)
            x = jax.vmap(lambda s, tk: self._point(q, s, k, tk))(s_all, per_point)
        return x[:-3], frame_from_points(x[-3], x[-2], x[-1])

    def deformation_gradients(self, q: Config) -> Float[Array, "K 3 3"]:
        k = self._shared_bend()
        if k is None:
            return super().deformation_gradients(q)
        # ∂x/∂s point by point, the first Bend's axial terms and their derivative along σ (the only
        # coordinate they depend on) once per cross-section
        reps = self.points[:: self.section_size]
        e_sigma = jnp.zeros_like(reps[0]).at[0].set(1)
        terms, dterms = jax.vmap(lambda s: jax.jvp(lambda x: self._section_terms(q, x, k), (s,), (e_sigma,)))(reps)
        terms, dterms = self._to_points((terms, dterms), frame=False)

        def jacobian(s, tk, dtk):
            def column(e):
                return jax.jvp(lambda x, t: self._point(q, x, k, t), (s, tk),
                               (e, jax.tree.map(lambda d: d * e[0], dtk)))[1]
            return jax.vmap(column, out_axes=1)(jnp.eye(3, dtype=s.dtype))

        jac = jax.vmap(jacobian)(self.points, terms, dterms)
        return jnp.einsum("kij,jl->kil", jac, self.reference_inverse())

    def _shared_bend(self) -> int | None:
        """Index of the first :class:`Bend` if every primitive before it keeps cross-sections plane
        (``keeps_sections``): its axial terms are then the same for all points of a section. None
        as well when ``points`` is not whole sections of ``section_size`` (replaced by a user)."""
        if self.points.shape[0] % self.section_size:
            return None
        for i, prim in enumerate(self.primitives):
            if isinstance(prim, Bend):  # (a subclass that changes `apply` is applied as it is)
                return i if type(prim).apply is Bend.apply else None
            if not prim.keeps_sections:
                return None
        return None

    def _to_points(self, per_section, *, frame: bool):
        """Per-section values (leading axis: the rule's sections, then the distal face if ``frame``)
        repeated for each point of their section (the three frame points last)."""
        n_sec = self.points.shape[0] // self.section_size

        def repeat(v):
            # broadcasts, not a gather: they fuse into their users (the gather was ≈ 8 % of the
            # profiled kernel time of an LVP arm's FD)
            out = jnp.broadcast_to(v[:n_sec, None], (n_sec, self.section_size) + v.shape[1:])
            out = out.reshape((n_sec * self.section_size,) + v.shape[1:])
            if frame:
                out = jnp.concatenate([out, jnp.broadcast_to(v[n_sec:], (3,) + v.shape[1:])])
            return out

        return jax.tree.map(repeat, per_section)

    def _section_terms(self, q: Config, s: Array, k: int):
        """The axial terms of ``primitives[k]`` (a Bend) for the section of material point ``s``."""
        a, b = self.slices[k]
        xk = self._map(q, s, self.primitives[:k], self.slices[:k])
        return self.primitives[k].section_terms(q[a:b], xk[0] / self.length, self.length)

    def _point(self, q: Config, s: Array, k: int, terms) -> Vec3:
        """:meth:`position` with the axial terms of ``primitives[k]`` given (same operations)."""
        x = self._map(q, s, self.primitives[:k], self.slices[:k])
        x = self.primitives[k].apply_in_section(x, terms)
        return self._map_from(q, x, self.primitives[k + 1:], self.slices[k + 1:])

    def _map(self, q: Config, s: Array, prims, slices) -> Vec3:
        """The reference point of ``s`` carried through ``prims``."""
        return self._map_from(q, jnp.stack([self.length * s[0], s[1], s[2]]), prims, slices)

    def _map_from(self, q: Config, x: Vec3, prims, slices) -> Vec3:
        for prim, (a, b) in zip(prims, slices):
            x = prim.apply(q[a:b], x, self.length, self.radius)
        return x

    def reference_inverse(self) -> Array:
        one = jnp.ones_like(self.length)
        return jnp.diag(jnp.stack([1 / self.length, one, one]))

    def cavity_volume(self, q: Config, *, order: int = 16) -> Array:
        """Volume [m³] of the hollow core (``r < r_in``, closed by the end planes), for pneumatics.

        Requires ``primitives[0]`` to be a :class:`Cavity`: it maps the core's cross section
        ``π r_in²`` to ``π (r_in² + R² f(σ))``, and every later primitive is an isochoric
        diffeomorphism of space that carries the core along without changing its volume, so
        ``V = ∫₀ᴸ π (r_in² + R² f(x/L)) dx`` exactly (Gauss–Legendre with ``order`` nodes in ``σ``).

        Raises:
            ValueError: the first primitive is not a Cavity, or the body is not hollow.
        """
        from .lvp_primitives import Cavity

        if not isinstance(self.primitives[0], Cavity):
            raise ValueError("`cavity_volume` needs primitives[0] to be a Cavity (the chamber's source), "
                             f"got {type(self.primitives[0]).__name__}.")
        if _checks.is_concrete(self.inner_radius) and float(self.inner_radius) <= 0:
            raise ValueError(f"`cavity_volume` needs a hollow body (inner_radius > 0), got {float(self.inner_radius)}.")
        xs, ws = gauss_legendre(order)
        a, b = self.slices[0]
        cav = self.primitives[0]
        f = jnp.stack([cav.field(q[a:b], jnp.asarray(x, dtype=q.dtype)) for x in xs])
        mean = jnp.sum(jnp.asarray(ws, dtype=f.dtype) * f)
        return self.length * jnp.pi * (self.inner_radius**2 + self.radius**2 * mean)
