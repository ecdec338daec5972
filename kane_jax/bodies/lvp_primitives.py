"""Locally volume-preserving (LVP) deformation primitives (Xu & Chirikjian, arXiv 2202.09270).

Each primitive is a map ``X ↦ X'`` of space (body frame, metres, backbone along +x on
``x ∈ [0, L]``) with ``det ∂X'/∂X ≡ 1`` for every amplitude vector ``a`` — isochoric by
construction, so an incompressible material needs no constraint force. Every primitive has a
*field* along the normalized axial coordinate ``σ = x/L``, a modal expansion
``f(σ) = Σ_k a_k φ_k(σ)`` with mode functions ``φ_k`` (paper ``003_…`` Tables 4–5 lost the
printed modes in conversion; the defaults below are polynomials ``σ^k``, which vanish at the base
so that ``q = 0`` is the rest shape and the proximal contact area stays put, and the
``sin((2k−1)πσ)`` chamber modes of Xu & Chirikjian's inflatable-chamber example for the cavity).
Pass ``modes=callable σ -> (n_modes,)`` for other (smooth) mode functions; their σ-derivatives are
taken by autodiff.

Primitives (field, map, why ``det = 1``):

- :class:`Stretch`: axial displacement ``u(σ) = L f``; ``x' = x + u``, ``(y', z') = (y, z)/√λ``,
  ``λ = 1 + du/dx > 0``. Triangular Jacobian, diagonal ``λ · λ^{-½} · λ^{-½}``.
- :class:`Bend` (plane ``"y"`` or ``"z"``): tangent angle ``θ(σ) = f`` (``f = a σ`` is a constant
  curvature ``a/L``); backbone ``c(x) = ∫₀ˣ t(θ)`` (Gauss–Legendre, ``n_backbone`` nodes); a
  point at lateral offset ``y`` goes to ``c(x) + η n(θ)`` with ``λ_c η − κ η²/2 = y``
  (``κ = dθ/dx``, ``λ_c = c'·t``), i.e. ``η = 2y / (λ_c + √(λ_c² − 2κy))``: the fibres on the
  inside are shortened exactly as much as they are thickened, and the quadrature error of ``c``
  is absorbed in ``λ_c`` so that ``det = (λ_c − κη) ∂η/∂y = 1`` holds to round-off. Needs
  ``2κy < λ_c²`` (bending radius above half the body radius).
- :class:`Twist`: angle ``ψ(σ) = f``; the section rotates by ``ψ`` about x. Triangular.
- :class:`Shear` (direction ``"y"`` or ``"z"``): ``v(σ) = L f``; ``y' = y + v``. Triangular.
- :class:`Cavity` (source/sink): ``c(σ) = R² f``; ``r'² = r² + c`` in the section (``r`` distance
  from the axis), a line source along the backbone (Xu & Chirikjian's chamber). In cylindrical
  coordinates the Jacobian is ``(r'/r) ∂r'/∂r = 1``. For hollow bodies (inner radius > 0) or
  ``r² + c > 0``; on the axis itself it is the identity (convention: no material there).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from .._series import sincos
from .._small import det3
from .._types import Array, Float, Vec3
from .quadrature import gauss_legendre


def _check_modes(modes, n_modes: int, name: str):
    if not isinstance(n_modes, (int, np.integer)) or isinstance(n_modes, bool) or n_modes < 1:
        raise ValueError(f"`n_modes` of {name} must be a positive int, got {n_modes!r}.")
    if modes is None:
        return None
    if not callable(modes):
        raise TypeError(f"`modes` of {name} must be a callable sigma -> ({n_modes},), got {type(modes).__name__}.")
    out = jax.eval_shape(modes, jax.ShapeDtypeStruct((), jnp.result_type(float)))
    if getattr(out, "shape", None) != (n_modes,):
        raise ValueError(f"`modes` of {name} must return shape ({n_modes},), got {getattr(out, 'shape', out)}.")
    return modes


def _powers(x: Array, n: int) -> list[Array]:
    """``[x, x², …, xⁿ]`` by products, not ``jnp.cumprod`` (a scan: ≈ 11 % of an LVP arm's FD's kernel time)."""
    out = [x]
    for _ in range(n - 1):
        out.append(out[-1] * x)
    return out


@jax.custom_jvp
def _section_offset(lam: Array, kappa: Array, y: Array) -> tuple[Array, Array]:
    """:class:`Bend`'s fibre offset ``η = 2y / (λ + s)``, ``s = √(λ² − 2κy)``, and ``s``.

    ``η`` is the root of ``κη²/2 − λη + y = 0`` that vanishes with ``y`` (``λ − κη = s``), so its
    derivative is implicit: ``dη = (η²/2 dκ − η dλ + dy) / s`` and ``ds = (λ dλ − y dκ − κ dy) / s``.
    That rule is the JVP (and, through itself, every higher derivative): the tests' q-Hessians
    differentiate ``η`` to fourth order, where autodiff of the square root and the quotient took 7.3k
    of the 62.2k optimized HLO instructions of an LVP body's ID/M/FD Hessian program (4.1k with the rule).
    """
    s = jnp.sqrt(lam**2 - 2 * kappa * y)
    return 2 * y / (lam + s), s


def _section_offset_jvp(primals, tangents):
    lam, kappa, y = primals
    eta, s = _section_offset(lam, kappa, y)
    # zero tangents left out (symbolic_zeros): y does not move with q, λ and κ not with the lateral
    # coordinate; XLA keeps a float product with a zero (NaN semantics), so instantiated zeros would stay
    deta, ds = [], []
    for d, a, b in zip(tangents, (-eta, 0.5 * eta * eta, 1.0), (lam, -y, -kappa)):
        if not isinstance(d, SymbolicZero):
            deta.append(a * d)
            ds.append(b * d)
    if not deta:
        return (eta, s), (jnp.zeros_like(eta), jnp.zeros_like(s))
    inv = 1 / s
    return (eta, s), (sum(deta[1:], deta[0]) * inv, sum(ds[1:], ds[0]) * inv)


_section_offset.defjvp(_section_offset_jvp, symbolic_zeros=True)


class AbstractPrimitive(eqx.Module):
    """A volume-preserving map of space parametrized by ``n_modes`` amplitudes.

    ``keeps_sections`` (class attribute): True when the image's axial coordinate ``x'[0]`` is a
    function of ``x[0]`` alone, so that a cross-section ``x[0] = const`` maps into one plane
    ``x'[0] = const`` (Stretch, Twist, Shear, Cavity; not Bend, which moves the fibres of a section
    apart). :class:`~kane_jax.bodies.lvp.LVPBody` then evaluates a following :class:`Bend`'s axial
    terms once per cross-section instead of once per point. False for new primitives unless they
    declare it.
    """

    keeps_sections: ClassVar[bool] = False
    n_modes: eqx.AbstractVar[int]
    modes: eqx.AbstractVar[Callable | None]

    def default_modes(self, sigma: Array) -> Array:
        """Default mode functions ``φ_k(σ) = σ^k``, ``k = 1..n``."""
        return jnp.stack(_powers(sigma, self.n_modes), axis=-1)

    def field(self, a: Array, sigma: Array) -> Array:
        """The modal field ``f(σ) = Σ a_k φ_k(σ)``."""
        phi = self.default_modes(sigma) if self.modes is None else self.modes(sigma)
        return jnp.sum(phi * a.astype(phi.dtype), axis=-1)  # no dot: XLA:CPU lays out batched dots by copies

    def powers(self) -> bool:
        """Whether the modes are the default powers ``σ^k`` (closed forms apply; static)."""
        return self.modes is None and type(self).default_modes is AbstractPrimitive.default_modes

    def field_and_slope(self, a: Array, sigma: Array) -> tuple[Array, Array]:
        """``f(σ)`` and ``df/dσ``: ``Σ k a_k σ^(k−1)`` for the default powers (differentiated again as a
        polynomial at every order of the jets), forward-mode autodiff of other modes."""
        if not self.powers():
            return jax.jvp(lambda s: self.field(a, s), (sigma,), (jnp.ones_like(sigma),))
        lower = jnp.stack([jnp.ones_like(sigma)] + (_powers(sigma, self.n_modes - 1) if self.n_modes > 1 else []),
                          axis=-1)  # σ^(k−1)
        k = np.arange(1, self.n_modes + 1)
        return self.field(a, sigma), jnp.sum(lower * (k * a.astype(lower.dtype)), axis=-1)

    @abc.abstractmethod
    def apply(self, a: Array, x: Vec3, length: Array, radius: Array) -> Vec3:
        """Image of the point ``x`` [m] for amplitudes ``a``; ``length``/``radius`` set the scales."""


class Stretch(AbstractPrimitive):
    """Stretch/compression: ``x' = x + L f(σ)``, sections scaled by ``(1 + df/dσ)^{-½}``."""

    keeps_sections: ClassVar[bool] = True
    n_modes: int = eqx.field(static=True)
    modes: Callable | None = eqx.field(static=True)

    def __init__(self, n_modes: int = 1, modes=None):
        self.modes = _check_modes(modes, n_modes, "Stretch")
        self.n_modes = int(n_modes)

    def apply(self, a, x, length, radius):
        u, du = self.field_and_slope(a, x[0] / length)
        lam = 1 + du
        inv_sqrt = jax.lax.rsqrt(lam)
        return jnp.stack([x[0] + length * u, x[1] * inv_sqrt, x[2] * inv_sqrt])


class Bend(AbstractPrimitive):
    """Planar bending in the x–``plane`` plane, tangent angle ``θ(σ) = f(σ)`` (see module doc)."""

    n_modes: int = eqx.field(static=True)
    modes: Callable | None = eqx.field(static=True)
    plane: str = eqx.field(static=True)
    n_backbone: int = eqx.field(static=True)

    def __init__(self, plane: str = "y", n_modes: int = 1, modes=None, *, n_backbone: int = 8):
        if plane not in ("y", "z"):
            raise ValueError(f"`plane` of Bend must be 'y' or 'z', got {plane!r}.")
        if not isinstance(n_backbone, (int, np.integer)) or n_backbone < 1:
            raise ValueError(f"`n_backbone` must be a positive int, got {n_backbone!r}.")
        self.modes = _check_modes(modes, n_modes, "Bend")
        self.n_modes, self.plane, self.n_backbone = int(n_modes), plane, int(n_backbone)

    def _backbone(self, a, sigma, length):
        """``c(σ) = L σ Σ_j w_j t(θ(σ ξ_j))`` (2-vector in the bending plane) for modes other than powers."""
        xi, w = gauss_legendre(self.n_backbone)
        theta = jax.vmap(lambda t: self.field(a, sigma * t))(jnp.asarray(xi, dtype=jnp.result_type(sigma, float)))
        w = jnp.asarray(w, dtype=theta.dtype)
        return length * sigma * jnp.stack([jnp.sum(w * jnp.cos(theta)), jnp.sum(w * jnp.sin(theta))])

    def section_terms(self, a: Array, sigma: Array, length: Array) -> tuple[Array, ...]:
        """What :meth:`apply` needs of the axial coordinate ``σ`` alone, shared by a cross-section's points:
        ``(cos θ, sin θ, λ_c, κ, c_x, c_⊥)`` — the tangent ``t(θ)``, the backbone's stretch ``λ_c = c'(x)·t``
        (1 up to the quadrature error), the curvature ``κ = dθ/dx`` and the backbone point ``c``.

        For the default powers ``θ(σ ξ_j) = Σ_k a_k σ^k ξ_j^k`` in closed form: with ``δ_j = θ(σ) − θ(σ ξ_j)``
        and ``ρ_j = σ ∂_σ θ(σ ξ_j) = Σ_k k a_k σ^k ξ_j^k``, ``dc/dσ = L Σ_j w_j (t_j + ρ_j n_j)`` gives
        ``λ_c = Σ_j w_j (cos δ_j + ρ_j sin δ_j)``. Later derivatives (jets in ``q``, deformation gradients
        in ``σ``) differentiate these scalar products, not a JVP of the quadrature dotted with ``t``
        (``docs/architecture.md``). Other modes: autodiff of :meth:`_backbone`, the closed form's oracle."""
        theta, dtheta = self.field_and_slope(a, sigma)
        st, ct = sincos(theta)  # once, in one buffer, for every kernel of every jet that reads them
        if self.powers():
            xi, w = gauss_legendre(self.n_backbone)
            dtype = jnp.result_type(sigma, float)
            xi_pow = np.stack(_powers(np.asarray(xi), self.n_modes), axis=-1)  # (n_b, n)
            scaled = self.default_modes(sigma) * a.astype(dtype)  # a_k σ^k
            phi = jnp.sum(jnp.asarray(xi_pow, dtype=dtype) * scaled[None, :], axis=-1)  # θ(σ ξ_j)
            rho = jnp.sum(jnp.asarray(xi_pow * np.arange(1, self.n_modes + 1), dtype=dtype) * scaled[None, :], axis=-1)
            delta = jnp.sum(jnp.asarray(1 - xi_pow, dtype=dtype) * scaled[None, :], axis=-1)  # θ(σ) − θ(σ ξ_j)
            w, arc = jnp.asarray(w, dtype=dtype), length * sigma
            sn, cs = sincos(jnp.stack([phi, delta]))  # the nodes' angles and θ(σ) minus them, in one buffer
            c = arc * jnp.sum(w * cs[0]), arc * jnp.sum(w * sn[0])
            lam_c = jnp.sum(w * (cs[1] + rho * sn[1]))
        else:
            c, dc = jax.jvp(lambda s: self._backbone(a, s, length), (sigma,), (jnp.ones_like(sigma),))
            lam_c = (dc[0] * ct + dc[1] * st) / length
        return ct, st, lam_c, dtheta / length, c[0], c[1]

    def apply(self, a, x, length, radius):
        return self.apply_in_section(x, self.section_terms(a, x[0] / length, length))

    def apply_in_section(self, x: Vec3, terms: tuple[Array, ...]) -> Vec3:
        """:meth:`apply` given the :meth:`section_terms` of the point's axial coordinate: the point at
        lateral offset ``y`` goes to ``c + η n(θ)``, ``η`` the fibre offset of :func:`_section_offset`."""
        lat = 1 if self.plane == "y" else 2
        ct, st, lam_c, kappa, cx, cp = terms
        eta, _ = _section_offset(lam_c, kappa, x[lat])
        px, pp = cx - eta * st, cp + eta * ct
        if lat == 1:
            return jnp.stack([px, pp, x[2]])
        return jnp.stack([px, x[1], pp])


class Twist(AbstractPrimitive):
    """Twist about the backbone: the section at ``σ`` rotates by ``ψ(σ) = f(σ)`` [rad]."""

    keeps_sections: ClassVar[bool] = True
    n_modes: int = eqx.field(static=True)
    modes: Callable | None = eqx.field(static=True)

    def __init__(self, n_modes: int = 1, modes=None):
        self.modes = _check_modes(modes, n_modes, "Twist")
        self.n_modes = int(n_modes)

    def apply(self, a, x, length, radius):
        psi = self.field(a, x[0] / length)
        s, c = sincos(psi)
        return jnp.stack([x[0], c * x[1] - s * x[2], s * x[1] + c * x[2]])


class Shear(AbstractPrimitive):
    """Transverse shear: sections translate by ``v(σ) = L f(σ)`` along ``direction`` (y or z)."""

    keeps_sections: ClassVar[bool] = True
    n_modes: int = eqx.field(static=True)
    modes: Callable | None = eqx.field(static=True)
    direction: str = eqx.field(static=True)

    def __init__(self, direction: str = "y", n_modes: int = 1, modes=None):
        if direction not in ("y", "z"):
            raise ValueError(f"`direction` of Shear must be 'y' or 'z', got {direction!r}.")
        self.modes = _check_modes(modes, n_modes, "Shear")
        self.n_modes, self.direction = int(n_modes), direction

    def apply(self, a, x, length, radius):
        v = length * self.field(a, x[0] / length)  # stacked, not `.at[].add` (a scatter at every derivative order)
        return jnp.stack([x[0], x[1] + v, x[2]] if self.direction == "y" else [x[0], x[1], x[2] + v])


class Cavity(AbstractPrimitive):
    """Line source/sink along the backbone: ``r'² = r² + R² f(σ)`` (see module doc).

    Default modes ``sin((2k−1)πσ)`` (Xu & Chirikjian's inflatable chamber), zero at both ends.
    """

    keeps_sections: ClassVar[bool] = True
    n_modes: int = eqx.field(static=True)
    modes: Callable | None = eqx.field(static=True)

    def __init__(self, n_modes: int = 1, modes=None):
        self.modes = _check_modes(modes, n_modes, "Cavity")
        self.n_modes = int(n_modes)

    def default_modes(self, sigma: Array) -> Array:
        k = jnp.arange(1, self.n_modes + 1, dtype=jnp.result_type(sigma, float))
        return jnp.sin((2 * k - 1) * jnp.pi * sigma)

    def apply(self, a, x, length, radius):
        area = radius**2 * self.field(a, x[0] / length)
        r2 = x[1] ** 2 + x[2] ** 2
        on_axis = r2 < 1e-30
        scale = jnp.where(on_axis, 1.0, jnp.sqrt(1 + area / jnp.where(on_axis, 1.0, r2)))
        return jnp.stack([x[0], x[1] * scale, x[2] * scale])


Source = Cavity


def primitive_jacobian_det(primitive: AbstractPrimitive, a: Float[Array, " n"], x: Vec3, length, radius) -> Array:
    """``det ∂X'/∂X`` of one primitive at point ``x`` (= 1 for an LVP map)."""
    return det3(jax.jacfwd(lambda p: primitive.apply(a, p, length, radius))(x))
