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

import jax
import jax.numpy as jnp

from ._series import FACT, TERMS, right_jacobian_coefficients, series_in_sq, trig
from ._small import materialize
from ._types import Array, Float, Mat3, Pose, Vec3, Vec6

__all__ = [
    "skew", "vee", "make_pose", "translation", "rot_axis", "inverse_pose", "compose_poses", "so3_exp", "so3_log",
    "se3_exp", "se3_log", "adjoint", "ad", "se3_bracket", "se3_right_jacobian", "sin_over_x", "one_minus_cos_over_x",
    "one_minus_cos_over_x2", "rotvec_coefficients",
]

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


def _closed_sin_over_x(t2: Array) -> Array:
    th, s, _ = trig(t2)
    return s / th


def _closed_one_minus_cos_over_x2(t2: Array) -> Array:
    _, _, c = trig(t2)
    return (1 - c) / t2


def sin_over_x(x: Array) -> Array:
    """``sin(x)/x``, smooth at 0 to every order (:func:`rotvec_coefficients`' ``a`` of ``x²``)."""
    return series_in_sq(x * x, _closed_sin_over_x, [(-1) ** k / FACT[2 * k + 1] for k in range(TERMS)])


def one_minus_cos_over_x2(x: Array) -> Array:
    """``(1 − cos x)/x²``, smooth at 0 to every order (:func:`rotvec_coefficients`' ``b`` of ``x²``).

    The closed forms of this and :func:`sin_over_x` (used where ``x² ≥ 2``, so ``1 − cos x`` loses
    no digits) read one buffer of ``√(x²)``, ``sin`` and ``cos`` (:func:`~kane_jax._series.trig`), which XLA
    shares between the two at the same ``x`` and across their derivatives: the variable-radius
    body's ``position`` needs both (before, each had its own sine, of ``x`` and of ``x/2``).
    """
    return series_in_sq(x * x, _closed_one_minus_cos_over_x2, [(-1) ** k / FACT[2 * k + 2] for k in range(TERMS)])


def one_minus_cos_over_x(x: Array) -> Array:
    """``(1 − cos x)/x``, smooth at 0 to every order."""
    return x * one_minus_cos_over_x2(x)


def rotvec_coefficients(theta2: Array) -> tuple[Array, Array, Array]:
    """``a = sin θ/θ``, ``b = (1 − cos θ)/θ²``, ``c = (θ − sin θ)/θ³`` as functions of ``θ²``.

    Finite with accurate derivatives of every order at θ = 0 (series to θ²⁴ where θ² < 2, closed
    forms beyond; to fourth order within ~2e-8 relative, ``tests/test_lie.py``).
    """
    def closed_a(t2):
        th, s, _ = trig(t2)
        return s / th

    def closed_b(t2):
        _, _, c = trig(t2)
        return (1 - c) / t2

    def closed_c(t2):
        th, s, _ = trig(t2)
        return (th - s) / (t2 * th)

    a = series_in_sq(theta2, closed_a, [(-1) ** k / FACT[2 * k + 1] for k in range(TERMS)])
    b = series_in_sq(theta2, closed_b, [(-1) ** k / FACT[2 * k + 2] for k in range(TERMS)])
    c = series_in_sq(theta2, closed_c,
                     [(-1) ** k / FACT[2 * k + 3] for k in range(TERMS)])
    a, b, c = materialize(jnp.stack([a, b, c]))  # once, not in every reader (`_small.materialize`)
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

    d = series_in_sq(t2, exact, [1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160], threshold=1e-1)
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
    c1, c2, c3, c4 = jnp.broadcast_to(jnp.stack(right_jacobian_coefficients(t2)), (4,) + shape)
    a1 = ad_apply(xi, eta)
    a2 = ad_apply(xi, a1)
    a3 = ad_apply(xi, a2)
    a4 = ad_apply(xi, a3)
    return eta - c1 * a1 + c2 * a2 - c3 * a3 + c4 * a4


@jax.jit
def ad_apply(xi: Vec6, eta: Vec6) -> Vec6:
    """``ad_ξ η`` without forming the 6×6 matrix."""
    return se3_bracket(xi, eta)
