"""SO(3) and SE(3) for rigid and soft bodies: exponentials, logarithms, adjoints, tangent operators.

Public, for users who write their own body geometry (``tip(q)`` of a :class:`~kane_jax.Body`) and
for the library's own bodies. Conventions: a twist is ``ξ = (ω, v)``, angular part first (SoRoSim's
and the Cosserat bodies' order); a pose is a 4×4 homogeneous transform ``[[R, t], [0, 1]]``.

Every function is smooth at the identity, to every order that the library differentiates: the
straight configuration of a soft body (zero curvature, zero rotation vector) is where simulations
start. Ratios such as ``sin θ/θ`` are written as Taylor series in ``θ²`` behind the double-``where``
trick below a threshold and in closed form above it (DESIGN §3.5).

The formulas are written component-wise (``R = cos θ 1 + a [ω]× + b ω ωᵀ`` rather than
``1 + a K + b K²``): XLA fuses such element-wise code into a few kernels, whereas every tiny matrix
product is a kernel of its own on the CPU.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from ._types import Array, Float, Mat3, Pose, Vec3, Vec6

__all__ = [
    "skew", "vee", "make_pose", "translation", "rot_axis", "inverse_pose", "compose_poses", "so3_exp", "so3_log",
    "se3_exp", "se3_log", "adjoint", "ad", "se3_bracket", "se3_right_jacobian", "sin_over_x", "one_minus_cos_over_x",
    "one_minus_cos_over_x2", "rotvec_coefficients",
]

_FACT = [math.factorial(k) for k in range(40)]
# The smooth coefficients are Taylor series in θ² below _SERIES_BELOW and closed forms above it. A
# soft body's dynamics Hessian differentiates them four times in θ², and a closed form's k-th
# derivative cancels digits like θ^(-2k): at the former threshold θ² = 1e-2, the fourth derivative
# of (θ − sin θ)/θ³ just above it was 39 % off, the second 1.4e-7 (tests/test_lie.py). From θ² = 2
# on, the closed forms' derivatives are good to 8e-14 / 4e-12 / 3e-10 / 2e-8 (orders 1-4), and 13
# terms (to θ²⁴) keep the series as accurate below. (θ² = 4 with 16 terms: 8e-15 … 2e-10, but 9 %
# more operations in a rod's dynamics and 3-5 % more run time; θ² = 1 with 12 terms: up to 8e-8.)
_SERIES_BELOW = 2.0
_TERMS = 13


@jax.jit
def skew(v: Vec3) -> Mat3:
    """The 3×3 matrix ``[v]×`` with ``[v]× w = v × w``."""
    z = jnp.zeros_like(v[..., 0])
    return jnp.stack([jnp.stack([z, -v[..., 2], v[..., 1]], -1),
                      jnp.stack([v[..., 2], z, -v[..., 0]], -1),
                      jnp.stack([-v[..., 1], v[..., 0], z], -1)], -2)


def vee(a: Mat3) -> Vec3:
    """Inverse of :func:`skew`, from the skew-symmetric part of ``a`` (robust to round-off)."""
    return 0.5 * jnp.stack([a[..., 2, 1] - a[..., 1, 2], a[..., 0, 2] - a[..., 2, 0], a[..., 1, 0] - a[..., 0, 1]], -1)


@jax.jit
def make_pose(rot: Mat3, trans: Vec3) -> Pose:
    """The 4×4 homogeneous transform with rotation ``rot`` and translation ``trans``."""
    top = jnp.concatenate([rot, trans[..., :, None]], axis=-1)
    bottom = jnp.zeros(top.shape[:-2] + (1, 4), dtype=top.dtype).at[..., 0, 3].set(1)
    return jnp.concatenate([top, bottom], axis=-2)


def translation(trans: Vec3) -> Pose:
    """Pure translation as a 4×4 transform."""
    trans = jnp.asarray(trans)
    return make_pose(jnp.broadcast_to(jnp.eye(3, dtype=jnp.result_type(trans, float)), trans.shape[:-1] + (3, 3)),
                     trans)


def inverse_pose(x: Pose) -> Pose:
    """Inverse of a rigid transform, ``[[Rᵀ, −Rᵀ t], [0, 1]]``."""
    rot, trans = x[..., :3, :3], x[..., :3, 3]
    rt = jnp.swapaxes(rot, -1, -2)
    return make_pose(rt, -jnp.sum(rt * trans[..., None, :], axis=-1))


@jax.jit
def compose_poses(a: Pose, b: Pose) -> Pose:
    """The product ``a · b`` of rigid transforms (leading batch axes broadcast), component-wise.

    The same numbers as ``a @ b`` without a dot kernel: XLA:CPU compiles a whole loop that holds
    no dot into one kernel (``docs/architecture.md``, "Whole loops as one kernel").
    """
    a, b = jnp.broadcast_arrays(a, b)  # explicit: users may run with strict rank promotion
    ra, ta, rb, tb = a[..., :3, :3], a[..., :3, 3], b[..., :3, :3], b[..., :3, 3]
    rot = ra[..., :, 0:1] * rb[..., 0:1, :] + ra[..., :, 1:2] * rb[..., 1:2, :] + ra[..., :, 2:3] * rb[..., 2:3, :]
    trans = ra[..., :, 0] * tb[..., 0:1] + ra[..., :, 1] * tb[..., 1:2] + ra[..., :, 2] * tb[..., 2:3] + ta
    return make_pose(rot, trans)


def _series_in_sq(theta2: Array, exact, coeffs, threshold: float = _SERIES_BELOW) -> Array:
    """An even function of θ given θ², as a Taylor series where θ² < threshold (double-``where``).

    ``jnp.sinc`` alone is not enough: its derivatives are exact at 0 but garbage just off it
    (``d²/dx² sinc`` ≈ 4e28 at x = 1e-22); and a closed form's derivatives lose digits near 0 (see
    ``_SERIES_BELOW``). The series is evaluated by Horner's rule.

    The derivative in θ² is a function of the same kind (the series' term-wise derivative and the
    closed form's derivative, behind the same ``where``), given to JAX as a custom JVP: nested
    derivatives (a Hessian of a soft body's dynamics differentiates these four times) trace one
    shorter series per order instead of differentiating every term of the series again at every
    order. Measured on the dynamics Hessian of two planar CC segments (2026-11-24, with the inline
    entry points of ``_dispatch``): 123,509 → 115,056 lines of optimized HLO.
    """
    return _analytic_in_sq(exact, tuple(float(c) for c in coeffs), threshold)(theta2)


def _horner(coeffs: tuple, x: Array) -> Array:
    if not coeffs:
        return jnp.zeros_like(x)
    out = jnp.full_like(x, coeffs[-1])
    for c in coeffs[-2::-1]:
        out = out * x + c
    return out


def _analytic_in_sq(exact, coeffs: tuple, threshold: float):
    """The custom-JVP function of :func:`_series_in_sq` (its tangent is the next derivative's)."""

    @jax.custom_jvp
    def f(theta2):
        small = theta2 < threshold
        safe = jnp.where(small, jnp.full_like(theta2, threshold), theta2)
        return jnp.where(small, _horner(coeffs, theta2), exact(safe))

    @f.defjvp
    def f_jvp(primals, tangents):
        (theta2,), (d_theta2,) = primals, tangents
        derivative = _analytic_in_sq(lambda t2: jax.jvp(exact, (t2,), (jnp.ones_like(t2),))[1],
                                     tuple(k * c for k, c in enumerate(coeffs))[1:], threshold)
        return f(theta2), derivative(theta2) * d_theta2

    return f


def _series_stack(theta2: Array, exact, rows, threshold: float = _SERIES_BELOW) -> Array:
    """Several functions of :func:`_series_in_sq`'s kind of one ``θ²`` at once, stacked on a new leading axis.

    ``exact(t2)`` returns the closed forms stacked (``(k,) + t2.shape``), ``rows`` their ``k``
    coefficient series (equal lengths). The series share one Horner evaluation on the stacked array
    and the closed forms their square root, sine and cosine; each row is computed by the same
    operations in the same order as on its own. Used for the four coefficients of the SE(3) right
    Jacobian, which as separate series were a fifth of the equations of a PCS rod's ID and FD
    (2026-11-25, two 6-strain PCS rods, ID and FD: 11,737 → 10,417 equations; the tests' ``jit(jacfwd)``
    / ``jit(jacrev)`` of them trace + compile in 16.4–17.0 / 25.7–26.8 s instead of 17.6–18.5 /
    29.0 s, optimized HLO 47,508 / 69,544 → 44,033 / 66,842 lines). Not used for
    :func:`rotvec_coefficients`: stacked, the bending rods' FD ran 10 % slower.
    """
    rows = tuple(tuple(float(c) for c in r) for r in rows)
    return _analytic_stack(exact, rows, threshold)(theta2)


def _horner_stack(coeffs: np.ndarray, x: Array) -> Array:
    """``Σ_i coeffs[:, i] x^i`` for stacked ``x`` (``(k,) + shape``), by Horner's rule per row."""
    if coeffs.shape[1] == 0:
        return jnp.zeros_like(x)
    shape = (coeffs.shape[0],) + (1,) * (x.ndim - 1)
    out = jnp.broadcast_to(jnp.asarray(coeffs[:, -1].reshape(shape), x.dtype), x.shape)
    for i in range(coeffs.shape[1] - 2, -1, -1):
        out = out * x + jnp.asarray(coeffs[:, i].reshape(shape), x.dtype)
    return out


def _analytic_stack(exact, rows: tuple, threshold: float):
    """The custom-JVP function of :func:`_series_stack` (its tangent is the next derivative's)."""
    coeffs = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)

    @jax.custom_jvp
    def f(theta2):
        small = theta2 < threshold
        safe = jnp.where(small, jnp.full_like(theta2, threshold), theta2)
        stacked = jnp.broadcast_to(theta2, (len(rows),) + theta2.shape)
        return jnp.where(small[None], _horner_stack(coeffs, stacked), exact(safe))

    @f.defjvp
    def f_jvp(primals, tangents):
        (theta2,), (d_theta2,) = primals, tangents
        derivative = _analytic_stack(lambda t2: jax.jvp(exact, (t2,), (jnp.ones_like(t2),))[1],
                                     tuple(tuple(k * c for k, c in enumerate(r))[1:] for r in rows), threshold)
        return f(theta2), derivative(theta2) * d_theta2[None]

    return f


def sin_over_x(x: Array) -> Array:
    """``sin(x)/x``, smooth at 0 to every order."""
    return _series_in_sq(x * x, lambda t2: jnp.sin(jnp.sqrt(t2)) / jnp.sqrt(t2),
                         [(-1) ** k / _FACT[2 * k + 1] for k in range(_TERMS)])


def one_minus_cos_over_x2(x: Array) -> Array:
    """``(1 − cos x)/x²``, smooth at 0 to every order (``2 sin²(x/2)/x²`` away from 0)."""
    return _series_in_sq(x * x, lambda t2: 2 * jnp.sin(0.5 * jnp.sqrt(t2)) ** 2 / t2,
                         [(-1) ** k / _FACT[2 * k + 2] for k in range(_TERMS)])


def one_minus_cos_over_x(x: Array) -> Array:
    """``(1 − cos x)/x``, smooth at 0 to every order."""
    return x * one_minus_cos_over_x2(x)


def rotvec_coefficients(theta2: Array) -> tuple[Array, Array, Array]:
    """``a = sin θ/θ``, ``b = (1 − cos θ)/θ²``, ``c = (θ − sin θ)/θ³`` as functions of ``θ²``.

    Finite with accurate derivatives of every order at θ = 0 (series to θ²⁴ where θ² < 2, closed
    forms beyond; to fourth order within ~2e-8 relative, ``tests/test_lie.py``).
    """
    a = _series_in_sq(theta2, lambda t2: jnp.sin(jnp.sqrt(t2)) / jnp.sqrt(t2),
                      [(-1) ** k / _FACT[2 * k + 1] for k in range(_TERMS)])
    b = _series_in_sq(theta2, lambda t2: 2 * jnp.sin(0.5 * jnp.sqrt(t2)) ** 2 / t2,
                      [(-1) ** k / _FACT[2 * k + 2] for k in range(_TERMS)])
    c = _series_in_sq(theta2, lambda t2: (jnp.sqrt(t2) - jnp.sin(jnp.sqrt(t2))) / (t2 * jnp.sqrt(t2)),
                      [(-1) ** k / _FACT[2 * k + 3] for k in range(_TERMS)])
    return a, b, c


def _outer(u: Array, v: Array) -> Array:
    return u[..., :, None] * v[..., None, :]


def _eye_like(x: Array) -> Array:
    return jnp.broadcast_to(jnp.eye(3, dtype=x.dtype), x.shape[:-1] + (3, 3))


@jax.jit
def so3_exp(phi: Vec3) -> Mat3:
    """Rotation matrix of the rotation vector ``phi`` (Rodrigues), smooth at ``phi = 0``."""
    t2 = jnp.sum(phi * phi, axis=-1)
    a, b, _ = rotvec_coefficients(t2)
    return ((1 - b * t2)[..., None, None] * _eye_like(phi) + a[..., None, None] * skew(phi)
            + b[..., None, None] * _outer(phi, phi))


def rot_axis(axis: Vec3, angle: Array) -> Mat3:
    """Rotation by ``angle`` [rad] about the unit vector ``axis``."""
    axis = jnp.asarray(axis)
    angle = jnp.asarray(angle)
    s, c = jnp.sin(angle)[..., None, None], jnp.cos(angle)[..., None, None]
    return c * _eye_like(axis) + s * skew(axis) + (1 - c) * _outer(axis, axis)


@jax.jit
def se3_exp(xi: Vec6) -> Pose:
    """Pose ``exp(ξ̂)`` of a twist ``ξ = (ω, v)``, smooth at ``ω = 0``.

    ``R = exp([ω]×)``, ``t = (1 + b [ω]× + c [ω]×²) v`` with the coefficients of
    :func:`rotvec_coefficients`.
    """
    w, v = xi[..., :3], xi[..., 3:]
    t2 = jnp.sum(w * w, axis=-1)
    a, b, c = rotvec_coefficients(t2)
    rot = ((1 - b * t2)[..., None, None] * _eye_like(w) + a[..., None, None] * skew(w)
           + b[..., None, None] * _outer(w, w))
    wv = jnp.sum(w * v, axis=-1)
    trans = v + b[..., None] * jnp.cross(w, v) + c[..., None] * (w * wv[..., None] - t2[..., None] * v)
    return make_pose(rot, trans)


def _theta2_of_versine(u: Array) -> Array:
    """``θ²`` from ``u = 1 − cos θ``: ``θ² = 2 Σₙ (2u)ⁿ / (n² C(2n, n))`` (analytic at u = 0), else ``arccos²``."""
    coeffs = [0.0] + [2.0 * 2.0**n / (n * n * math.comb(2 * n, n)) for n in range(1, 14)]
    small = u < 0.25
    us = jnp.where(small, u, 0.0)
    series = sum(c * us**k for k, c in enumerate(coeffs) if c)
    exact = jnp.arccos(jnp.clip(1 - jnp.where(small, 0.5, u), -1.0, 1.0)) ** 2
    return jnp.where(small, series, exact)


def so3_log(rot: Mat3) -> Vec3:
    """Rotation vector ``φ`` with ``so3_exp(φ) = rot`` and ``|φ| ≤ π``.

    ``φ = vee(R) θ/sin θ`` with ``θ²`` an analytic function of ``1 − cos θ`` (smooth to every order at
    the identity); within 0.1 rad of ``θ = π`` the axis comes from the symmetric part of ``R``.
    """
    s = vee(rot)  # sin θ · axis
    cos = 0.5 * (rot[..., 0, 0] + rot[..., 1, 1] + rot[..., 2, 2] - 1)
    near_pi = cos < -0.995
    t2 = _theta2_of_versine(1 - jnp.where(near_pi, 0.0, cos))
    generic = s / rotvec_coefficients(t2)[0][..., None]
    # near π: a aᵀ = ((R + Rᵀ)/2 − cos 1) / (1 − cos); evaluated on a safe stand-in elsewhere (double where)
    safe = jnp.where(near_pi[..., None, None], rot, jnp.diag(jnp.array([1.0, -1.0, -1.0], dtype=rot.dtype)))
    c_safe = jnp.where(near_pi, cos, -1.0)
    sym = (0.5 * (safe + jnp.swapaxes(safe, -1, -2)) - c_safe[..., None, None] * _eye_like(s)) / (1 - c_safe)[
        ..., None, None]
    diag = jnp.stack([sym[..., 0, 0], sym[..., 1, 1], sym[..., 2, 2]], -1)
    k = jnp.argmax(diag, axis=-1)
    col = jnp.take_along_axis(sym, jnp.broadcast_to(k[..., None, None], sym.shape[:-1] + (1,)), axis=-1)[..., 0]
    axis = col / jnp.sqrt(jnp.take_along_axis(diag, k[..., None], axis=-1))
    s_safe = jnp.where(near_pi[..., None], s, 0.0)
    sign = jnp.where(jnp.sum(axis * s_safe, axis=-1) < 0, -1.0, 1.0)
    theta = jnp.arccos(jnp.clip(c_safe, -1.0, 1.0))
    return jnp.where(near_pi[..., None], (sign * theta)[..., None] * axis, generic)


def se3_log(pose: Pose) -> Vec6:
    """Twist ``ξ = (ω, v)`` with ``se3_exp(ξ) = pose`` (``|ω| ≤ π``), smooth at the identity.

    ``v = V⁻¹ t`` with ``V⁻¹ = 1 − [ω]×/2 + d [ω]×²``, ``d = (1 − a/(2b))/θ²`` (series at 0: 1/12 + …).
    """
    w = so3_log(pose[..., :3, :3])
    t = pose[..., :3, 3]
    t2 = jnp.sum(w * w, axis=-1)

    def exact(x):
        a, b, _ = rotvec_coefficients(x)
        return (1 - a / (2 * b)) / x

    d = _series_in_sq(t2, exact, [1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160], threshold=1e-1)
    wt = jnp.sum(w * t, axis=-1)
    v = t - 0.5 * jnp.cross(w, t) + d[..., None] * (w * wt[..., None] - t2[..., None] * t)
    return jnp.concatenate([w, v], axis=-1)


def adjoint(pose: Pose) -> Float[Array, "6 6"]:
    """The 6×6 adjoint ``Ad_g = [[R, 0], [[t]× R, R]]`` acting on twists ``(ω, v)``."""
    rot, trans = pose[..., :3, :3], pose[..., :3, 3]
    tr = jnp.sum(skew(trans)[..., :, :, None] * rot[..., None, :, :], axis=-2)
    zero = jnp.zeros_like(rot)
    return jnp.concatenate([jnp.concatenate([rot, zero], -1), jnp.concatenate([tr, rot], -1)], -2)


def ad(xi: Vec6) -> Float[Array, "6 6"]:
    """The 6×6 small adjoint ``ad_ξ = [[[ω]×, 0], [[v]×, [ω]×]]`` (``ad_ξ η = [ξ, η]``)."""
    w, v = skew(xi[..., :3]), skew(xi[..., 3:])
    zero = jnp.zeros_like(w)
    return jnp.concatenate([jnp.concatenate([w, zero], -1), jnp.concatenate([v, w], -1)], -2)


@jax.jit
def se3_bracket(x1: Vec6, x2: Vec6) -> Vec6:
    """Lie bracket ``[ξ₁, ξ₂] = (ω₁ × ω₂, ω₁ × v₂ − ω₂ × v₁)`` of twists."""
    return jnp.concatenate([jnp.cross(x1[..., :3], x2[..., :3]),
                            jnp.cross(x1[..., :3], x2[..., 3:]) - jnp.cross(x2[..., :3], x1[..., 3:])], -1)


@jax.jit
def se3_right_jacobian(xi: Vec6, eta: Vec6) -> Vec6:
    """``T(ξ) η`` with ``T(ξ) = Σₖ (−ad_ξ)ᵏ/(k+1)!`` the right Jacobian (tangent operator) of ``exp``.

    ``exp(ξ)⁻¹ ∂exp(ξ + s η)/∂s |₀ = (T(ξ) η)^``: the body-frame velocity of ``exp(ξ(t))`` is
    ``T(ξ) ξ̇``. Closed form in the powers of ``ad_ξ`` (``ad⁵ = −2θ² ad³ − θ⁴ ad``, θ = |ω|) with
    coefficients smooth at θ = 0.
    """
    w = xi[..., :3]
    t2 = jnp.sum(w * w, axis=-1)[..., None]
    # ξ and the coefficients are broadcast against η once, explicitly: every later product is then
    # between equal shapes, and reverse mode sums the cotangent of ξ (and of the coefficients)
    # over the broadcast axes in one reduction each, instead of one per product (those many small
    # reductions made XLA:CPU's fusion pass take most of a soft body's gradient compile)
    shape = jnp.broadcast_shapes(xi.shape, eta.shape)
    xi, eta = jnp.broadcast_to(xi, shape), jnp.broadcast_to(eta, shape)
    c1, c2, c3, c4 = jnp.broadcast_to(jnp.stack(_right_jacobian_coefficients(t2)), (4,) + shape)
    a1 = ad_apply(xi, eta)
    a2 = ad_apply(xi, a1)
    a3 = ad_apply(xi, a2)
    a4 = ad_apply(xi, a3)
    return eta - c1 * a1 + c2 * a2 - c3 * a3 + c4 * a4


@jax.jit
def ad_apply(xi: Vec6, eta: Vec6) -> Vec6:
    """``ad_ξ η`` without forming the 6×6 matrix."""
    return se3_bracket(xi, eta)


def _quotient_series(numerator: dict[int, Fraction], power: int, n_terms: int = _TERMS) -> list[float]:
    """Coefficients in ``θ²`` of ``Σ_k numerator[k] θᵏ / θ^power`` (the low orders cancel exactly)."""
    return [float(numerator.get(power + 2 * m, Fraction(0))) for m in range(n_terms)]


def _trig_series(sin_coef: Fraction, sin_shift: int, cos_coef: Fraction, cos_shift: int, poly: dict[int, Fraction],
                 order: int = 40) -> dict[int, Fraction]:
    """Power series of ``sin_coef θ^sin_shift sin θ + cos_coef θ^cos_shift cos θ + Σ poly[k] θᵏ``."""
    out: dict[int, Fraction] = dict(poly)
    for k in range(order):
        s_pow, c_pow = 2 * k + 1 + sin_shift, 2 * k + cos_shift
        out[s_pow] = out.get(s_pow, Fraction(0)) + sin_coef * Fraction((-1) ** k, _FACT_BIG[2 * k + 1])
        out[c_pow] = out.get(c_pow, Fraction(0)) + cos_coef * Fraction((-1) ** k, _FACT_BIG[2 * k])
    return out


_FACT_BIG = [math.factorial(k) for k in range(90)]
F = Fraction
# Barfoot's closed forms of the SE(3) Jacobian, numerators over 2 θ^power (see se3_right_jacobian)
_C1 = _quotient_series({k: v / 2 for k, v in _trig_series(F(-1), 1, F(-4), 0, {0: F(4)}).items()}, 2)
_C2 = _quotient_series({k: v / 2 for k, v in _trig_series(F(-5), 0, F(1), 1, {1: F(4)}).items()}, 3)
_C3 = _quotient_series({k: v / 2 for k, v in _trig_series(F(-1), 1, F(-2), 0, {0: F(2)}).items()}, 4)
_C4 = _quotient_series({k: v / 2 for k, v in _trig_series(F(-3), 0, F(1), 1, {1: F(2)}).items()}, 5)


def _right_jacobian_closed(x: Array) -> Array:
    """Barfoot's closed forms of the four coefficients of :func:`se3_right_jacobian`, ``x = θ²``, stacked."""
    th = jnp.sqrt(x)
    s, c = jnp.sin(th), jnp.cos(th)
    return jnp.stack([(4 - th * s - 4 * c) / (2 * x), (4 * th - 5 * s + th * c) / (2 * x * th),
                      (2 - th * s - 2 * c) / (2 * x * x), (2 * th - 3 * s + th * c) / (2 * x * x * th)])


def _right_jacobian_coefficients(t2: Array) -> tuple[Array, Array, Array, Array]:
    """Coefficients of ``T = 1 − c1 ad + c2 ad² − c3 ad³ + c4 ad⁴`` (exact on SE(3): ``ad_ξ`` satisfies
    ``x (x² + θ²)² = 0``), Barfoot's closed forms for θ² ≥ 2 and Taylor series to θ²⁴ below."""

    # one buffer for the four (as `_jets.materialize`): without it one FD of a PCS rod ran 5-10 % slower
    c1, c2, c3, c4 = jax.lax.optimization_barrier(_series_stack(t2, _right_jacobian_closed, (_C1, _C2, _C3, _C4)))
    return c1, c2, c3, c4
