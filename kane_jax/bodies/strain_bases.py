"""Strain bases ``Φ(σ)`` for Geometric Variable Strain (GVS) Cosserat rods.

A GVS rod has strain ``ξ(σ) = Φ(σ) q + ξ*`` (Boyer et al. 2021; SoRoSim). A *scalar* basis maps
the normalized arc length ``σ ∈ [0, 1]`` to ``n`` mode shapes and is used for one strain
component; :class:`~kane_jax.CosseratGVS` assembles the block-diagonal ``(6, nq)`` matrix from
one scalar basis per active strain. A *full* basis (:class:`FullBasis`, or the Piecewise Gaussian
Curvature basis :class:`PiecewiseGaussianCurvature`) gives the whole ``(6, nq)`` matrix at once.

Strain ordering everywhere: ``ξ = (κ_x, κ_y, κ_z, v_x, v_y, v_z)`` — angular strains first
(twist, bending about y, bending about z; [1/m]) then linear strains (stretch, shear y, shear z;
[-]), the same order as :func:`kane_jax.lie.se3_exp`'s twist ``(ω, v)``. The backbone runs along
+x, so the rest strain of a straight unstretched rod is ``ξ* = (0, 0, 0, 1, 0, 0)``.

All bases are equinox Modules with only static fields, so they are hashable: two rods with equal
bases are stacked into one group by :class:`~kane_jax.Chain`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._types import Array, Float


def _check_modes(n, name: str = "n") -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"`{name}` must be a positive int (number of modes), got {n!r}.")
    return int(n)


class AbstractStrainBasis(eqx.Module):
    """A scalar basis: ``σ ↦ (φ_1(σ), …, φ_n(σ))`` for one strain component."""

    n: eqx.AbstractVar[int]

    @abc.abstractmethod
    def __call__(self, sigma: Array) -> Float[Array, " n"]:
        """Mode shapes at normalized arc length ``σ ∈ [0, 1]`` (dimensionless)."""


class MonomialBasis(AbstractStrainBasis):
    """``φ_k(σ) = σᵏ``, ``k = 0 … n−1``. ``MonomialBasis(1)`` is the constant (PCS) basis."""

    n: int = eqx.field(static=True)

    def __init__(self, n: int):
        self.n = _check_modes(n)

    def __call__(self, sigma: Array) -> Float[Array, " n"]:
        return jnp.stack([sigma**k for k in range(self.n)])


class LegendreBasis(AbstractStrainBasis):
    """Shifted Legendre polynomials ``φ_k(σ) = P_k(2σ − 1)``, ``k = 0 … n−1`` (Bonnet recursion)."""

    n: int = eqx.field(static=True)

    def __init__(self, n: int):
        self.n = _check_modes(n)

    def __call__(self, sigma: Array) -> Float[Array, " n"]:
        x = 2 * sigma - 1
        out = [jnp.ones_like(x), x]
        for k in range(1, self.n - 1):
            out.append(((2 * k + 1) * x * out[k] - k * out[k - 1]) / (k + 1))
        return jnp.stack(out[: self.n])


class ChebyshevBasis(AbstractStrainBasis):
    """Shifted Chebyshev polynomials of the first kind ``φ_k(σ) = T_k(2σ − 1)``, ``k = 0 … n−1``."""

    n: int = eqx.field(static=True)

    def __init__(self, n: int):
        self.n = _check_modes(n)

    def __call__(self, sigma: Array) -> Float[Array, " n"]:
        x = 2 * sigma - 1
        out = [jnp.ones_like(x), x]
        for k in range(1, self.n - 1):
            out.append(2 * x * out[k] - out[k - 1])
        return jnp.stack(out[: self.n])


class GaussianBasis(AbstractStrainBasis):
    """Gaussian bumps ``φ_k(σ) = exp(−(σ − c_k)² / (2 w²))`` with evenly spaced centres.

    Centres ``c_k = k/(n−1)`` (``c = ½`` for ``n = 1``) unless ``centers`` is given; ``width`` ``w``
    (normalized arc length) defaults to ``1/n``.
    """

    n: int = eqx.field(static=True)
    centers: tuple[float, ...] = eqx.field(static=True)
    width: float = eqx.field(static=True)

    def __init__(self, n: int, width: float | None = None, centers=None):
        self.n = _check_modes(n)
        if centers is None:
            c = np.array([0.5]) if self.n == 1 else np.linspace(0.0, 1.0, self.n)
        else:
            c = np.asarray(centers, dtype=float)
            if c.shape != (self.n,):
                raise ValueError(f"`centers` must have shape ({self.n},), got shape {c.shape}.")
        self.centers = tuple(float(x) for x in c)
        w = 1.0 / self.n if width is None else float(width)
        if not np.isfinite(w) or w <= 0:
            raise ValueError(f"`width` must be a positive float, got {width!r}.")
        self.width = w

    def __call__(self, sigma: Array) -> Float[Array, " n"]:
        c = jnp.asarray(self.centers, dtype=jnp.result_type(sigma, float))
        return jnp.exp(-((sigma - c) ** 2) / (2 * self.width**2))


class ScalarBasis(AbstractStrainBasis):
    """A user scalar basis: ``fn(σ) -> (n,)``, a pure JAX function (hashable, e.g. a top-level def)."""

    fn: Callable = eqx.field(static=True)
    n: int = eqx.field(static=True)

    def __init__(self, fn: Callable, n: int):
        if not callable(fn):
            raise TypeError(f"`fn` must be a callable sigma -> (n,), got {type(fn).__name__}.")
        self.n = _check_modes(n)
        out = jax.eval_shape(fn, jax.ShapeDtypeStruct((), jnp.float32))
        if getattr(out, "shape", None) != (self.n,):
            raise ValueError(f"`fn(sigma)` must return shape ({self.n},), got {getattr(out, 'shape', out)}.")
        self.fn = fn

    def __call__(self, sigma: Array) -> Float[Array, " n"]:
        return self.fn(sigma)


class AbstractFullBasis(eqx.Module):
    """A full basis: ``σ ↦ Φ(σ)`` of shape ``(6, nq)`` in the strain order ``(κ_x, κ_y, κ_z, v_x, v_y, v_z)``."""

    nq: eqx.AbstractVar[int]

    @abc.abstractmethod
    def __call__(self, sigma: Array) -> Float[Array, "6 nq"]:
        """``Φ(σ)`` at normalized arc length ``σ``; strain ``ξ = Φ q + ξ*``."""


class FullBasis(AbstractFullBasis):
    """A user full basis ``fn(σ) -> (6, nq)`` (a pure, hashable JAX function of σ ∈ [0, 1])."""

    fn: Callable = eqx.field(static=True)
    nq: int = eqx.field(static=True)

    def __init__(self, fn: Callable, nq: int):
        if not callable(fn):
            raise TypeError(f"`fn` must be a callable sigma -> (6, nq), got {type(fn).__name__}.")
        self.nq = _check_modes(nq, "nq")
        out = jax.eval_shape(fn, jax.ShapeDtypeStruct((), jnp.float32))
        if getattr(out, "shape", None) != (6, self.nq):
            raise ValueError(f"`fn(sigma)` must return shape (6, {self.nq}), got {getattr(out, 'shape', out)}.")
        self.fn = fn

    def __call__(self, sigma: Array) -> Float[Array, "6 nq"]:
        return self.fn(sigma)


class PiecewiseGaussianCurvature(AbstractFullBasis):
    """The Piecewise Gaussian Curvature (PGC) basis with elongation of paper ``000_…`` Sim. 2.

    Exactly as written there, with ``s = σ L₀ ∈ [0, L₀]`` in metres and ``q ∈ R⁵``::

        (κ_x, κ_y, δL)ᵀ = Φ(s) q + (0, 0, 1)ᵀ,
        Φ(s) = 1/L₀ [[0, 0, −1, −e^{−(s − L₀/2)²}, 0],
                     [1, e^{−(s − L₀/2)²}, 0, 0, 0],
                     [0, 0, 0, 0, 1]].

    The paper's rod runs along its z axis; ours runs along x. The proper rotation
    ``(x, y, z)_paper → (y, z, x)_ours`` maps the paper's ``κ_x, κ_y`` to our ``κ_y, κ_z`` and
    its stretch ``δL`` (rest value 1) to our ``v_x``; the other strains (twist, shears) are zero.
    ``q₁, q₃`` [rad] are constant-curvature bending angles, ``q₂, q₄`` [rad] the amplitudes of the
    Gaussian curvature, ``q₅`` [m] the length change. Note that the exponent, as printed, is in
    square metres with unit width, so for ``L₀ = 0.2`` m the Gaussian varies by only 1 % along
    the rod; ``width`` (default 1 m, the paper's value) generalizes it to
    ``exp(−(s − L₀/2)² / width²)``.

    Arguments:
        length: rest length ``L₀`` [m] (a positive float, static).
        width: Gaussian width [m] (default 1.0, as in the paper).
    """

    length: float = eqx.field(static=True)
    width: float = eqx.field(static=True)
    nq: int = eqx.field(static=True)

    def __init__(self, length: float, width: float = 1.0):
        length, width = float(length), float(width)
        if not np.isfinite(length) or length <= 0:
            raise ValueError(f"`length` must be a positive float [m], got {length!r}.")
        if not np.isfinite(width) or width <= 0:
            raise ValueError(f"`width` must be a positive float [m], got {width!r}.")
        self.length, self.width, self.nq = length, width, 5

    def paper_matrix(self, sigma: Array) -> Float[Array, "3 5"]:
        """The paper's ``Φ(s)`` (rows ``κ_x, κ_y, δL`` in the paper's frame) at ``s = σ L₀``."""
        s = sigma * self.length
        e = jnp.exp(-((s - self.length / 2) ** 2) / self.width**2)
        z, o = jnp.zeros_like(e), jnp.ones_like(e)
        return jnp.stack([
            jnp.stack([z, z, -o, -e, z]),
            jnp.stack([o, e, z, z, z]),
            jnp.stack([z, z, z, z, o]),
        ]) / self.length

    def __call__(self, sigma: Array) -> Float[Array, "6 5"]:
        p = self.paper_matrix(sigma)
        z = jnp.zeros_like(p[0])
        return jnp.stack([z, p[0], p[1], p[2], z, z])


def _strain_basis(basis, strains: tuple[bool, ...], nq: int, sigma: Array) -> Float[Array, "6 nq"]:
    """``Φ(σ)`` (6, nq) of a GVS rod: a full basis as it is, or one scalar basis per active strain
    (``strains``, a length-6 mask) in consecutive columns."""
    if isinstance(basis, AbstractFullBasis):
        return basis(sigma)
    dtype = jnp.result_type(sigma, float)
    out = jnp.zeros((6, nq), dtype=dtype)
    col = 0
    for b, i in zip(basis, np.flatnonzero(strains)):
        out = out.at[i, col:col + b.n].set(b(sigma).astype(dtype))
        col += b.n
    return out
