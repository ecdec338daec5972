"""The mass moments of a body from the jets of its mass elements (DESIGN §3.3).

A body's mass is a set of *elements* seen from its distal frame ``{S_i}``: points (a material
point ``p_k`` of mass ``w_k``) or rigid cross-sections (a frame ``(R_k, t_k)`` carrying points
``p = t_k + R_k s`` with the section rule's mass ``m_k = Σ w``, first moment ``c_k = Σ w s`` and
second moment ``S_k = Σ w s sᵀ``). Every moment that the recursion needs is a sum over points of
terms at most quadratic in ``p`` and its derivatives, so each section enters through
``(m_k, c_k, S_k)`` only — the same numbers as its points, with one pose jet per section instead
of one point jet per point.

Each quantity is built from two sums over the elements of the affine fields
``u = A_u s + a_u`` with ``u ∈ {p, ∂_1 p, …, ∂_n p, p''}`` (``'' = D²[q̇, q̇]``):
``F[u] = Σ w u`` and ``G[u, v] = Σ w u vᵀ = Σ_k m a_u a_vᵀ + a_u (A_v c)ᵀ + (A_u c) a_vᵀ + A_u S A_vᵀ``;
then ``Σ w u × v`` and ``Σ w u · v`` are the cross and the trace of ``G[u, v]`` (:func:`moments`:
points, and the oracle for sections). Rods hand their sections over as body-frame pose jets, whose
moments :func:`section_moments` writes in closed form as sums of rigid-body quantities.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._jets import PoseJet, vee_rt
from .._small import add_to_rows, contract, cross, materialize, mm, mtm, mtv, mv, sum_small
from .._types import Array, Config, Float, Mat3, Vec3
from ..lie import skew
from ._section_sums import at_rest, curvature_sums, section_velocities


class BodyMoments(NamedTuple):
    """Mass moments of a body in its distal frame ``{S_i}`` (rows: the body's coordinates).

    Configuration-dependent: ``mass = Σ w``, ``first = Σ w p``, ``second = Σ w p pᵀ``,
    ``jac_first[j] = Σ w ∂_j p``, ``jac_second[j] = Σ w ∂_j p pᵀ``, ``gram[j, l] = Σ w ∂_j p · ∂_l p``
    (the body's own mass matrix). Velocity-dependent: ``gyro[j] = Σ w ∂_j p × ṗ``. Curvature
    (``p'' = D²p[q̇, q̇]``): ``curv_first = Σ w p''``, ``curv_moment = Σ w p × p''``,
    ``curv_jac[j] = Σ w ∂_j p · p''``.
    """

    mass: Float[Array, ""]
    first: Vec3
    second: Mat3
    jac_first: Float[Array, "n 3"]
    jac_second: Float[Array, "n 3 3"]
    gram: Float[Array, "n n"]
    gyro: Float[Array, "n 3"]
    curv_first: Vec3
    curv_moment: Vec3
    curv_jac: Float[Array, " n"]


class Elements(NamedTuple):
    """Jets of a body's mass elements in its distal frame (coordinate axis first)."""

    trans: Float[Array, "K 3"]  # t_k (points: p_k)
    d_trans: Float[Array, "n K 3"]  # ∂_j t_k
    c_trans: Float[Array, "K 3"] | None  # t_k'' (None: configuration only)
    rot: Float[Array, "K 3 3"] | None  # R_k (None: point elements)
    d_rot: Float[Array, "n K 3 3"] | None
    c_rot: Float[Array, "K 3 3"] | None


class ElementRule(NamedTuple):
    """Constants of the elements: mass ``(K,)``; for sections ``c_k`` ``(K, 3)`` and ``S_k`` ``(K, 3, 3)``."""

    mass: Float[Array, " K"]
    first: Float[Array, "K 3"] | None = None
    second: Float[Array, "K 3 3"] | None = None


def section_rule(offsets: Float[Array, "K M 2"], weights: Float[Array, "K M"]) -> ElementRule:
    """Constants of rigid cross-sections from their points ``s = (0, y, z)`` and masses (``x``'s zeros padded)."""
    first = contract("km,kma->ka", weights, offsets)
    second = contract("km,kma,kmb->kab", weights, offsets, offsets)
    return ElementRule(jnp.sum(weights, axis=1), jnp.pad(first, ((0, 0), (1, 0))),
                       jnp.pad(second, ((0, 0), (1, 0), (1, 0))))


def jet(fn: Callable[[Config], object], q: Config, qd: Config | None):
    """Value, Jacobian (coordinate axis first) and curvature ``D²f[q̇, q̇]`` (None without ``qd``)."""
    value = fn(q)
    basis = jnp.eye(q.shape[0], dtype=q.dtype)
    jac = jax.vmap(lambda v: jax.jvp(fn, (q,), (v,))[1])(basis)
    if qd is None:
        return value, jac, None
    curv = jax.jvp(lambda x: jax.jvp(fn, (x,), (qd,))[1], (q,), (qd,))[1]
    return value, jac, curv


def tip_from_jet(rot, trans, d_rot, d_trans, c_rot, c_trans) -> PoseJet:
    """:class:`PoseJet` (body-frame form) from the plain jet of a pose ``(R, t)``."""
    gen = jnp.concatenate([vee_rt(rot, d_rot), mtv(rot, d_trans)], axis=-1)
    if c_rot is None:
        curv = jnp.zeros((6,), rot.dtype)
    else:
        curv = jnp.concatenate([vee_rt(rot, c_rot), mtv(rot, c_trans)])
    return PoseJet(rot, trans, gen, curv)


def elements_from_pose_jets(jets: PoseJet, qd: Config | None) -> Elements:
    """Section elements from their body-frame pose jets (batched over sections, ``gen`` ``(K, n, 6)``).

    ``∂_j R = R [ω_j]×``, ``∂_j t = R v_j``, ``R'' = R ([c_ω]× + [ω]×²)``, ``t'' = R c_v``. With
    :func:`moments` the slow, obvious path: the oracle of :func:`section_moments` in the tests.
    """
    rot = jets.rot
    d_rot = jnp.moveaxis(mm(rot[:, None], skew(jets.gen[..., :3])), 1, 0)
    d_trans = jnp.moveaxis(jnp.sum(rot[:, None] * jets.gen[..., None, 3:], axis=-1), 1, 0)
    if qd is None:
        return Elements(jets.trans, d_trans, None, rot, d_rot, None)
    om = jnp.sum(jets.gen[..., :3] * qd[None, :, None], axis=1)
    k = skew(om)
    c_rot = mm(rot, skew(jets.curv[:, :3]) + mm(k, k))
    c_trans = jnp.sum(rot * jets.curv[:, None, 3:], axis=-1)
    return Elements(jets.trans, d_trans, c_trans, rot, d_rot, c_rot)


def _outer_sums(a_u, a_v, m, rule: ElementRule, A_u=None, A_v=None):
    """``Σ_k w u vᵀ`` for all pairs of affine fields (``a``: ``(U, K, 3)``, ``A``: ``(U, K, 3, 3)``)."""
    g = contract("k,uka,vkb->uvab", m, a_u, a_v)
    if A_u is None:
        return g
    ac_u = jnp.sum(A_u * rule.first[None, :, None, :], axis=-1)  # A_u c  (U, K, 3)
    ac_v = jnp.sum(A_v * rule.first[None, :, None, :], axis=-1)
    a_s = jnp.sum(A_u[..., :, :, None] * rule.second[None, :, None, :, :], axis=-2)  # A_u S  (U, K, 3, 3)
    g = g + contract("uka,vkb->uvab", a_u, ac_v) + contract("uka,vkb->uvab", ac_u, a_v)
    return g + contract("ukac,vkbc->uvab", a_s, A_v)


def _cross_of(g: Array) -> Array:
    """``Σ w u × v`` from ``G = Σ w u vᵀ`` (last two axes)."""
    return jnp.stack([g[..., 1, 2] - g[..., 2, 1], g[..., 2, 0] - g[..., 0, 2], g[..., 0, 1] - g[..., 1, 0]], -1)


def _trace(g: Array) -> Array:
    return g[..., 0, 0] + g[..., 1, 1] + g[..., 2, 2]


def moments(el: Elements | PoseJet, rule: ElementRule, qd: Config | None, *,
            rotating: int | None = None) -> BodyMoments:
    """The :class:`BodyMoments` of a body from the jets of its elements (see the module docstring).

    Rigid cross-sections given as body-frame pose jets (a batched :class:`PoseJet`) go through
    :func:`section_moments`; :class:`Elements` (points, or sections with ``∂R``) through the sums of
    the affine fields, the oracle of the closed form. ``rotating``: see :func:`section_moments`.
    """
    if isinstance(el, PoseJet):
        return section_moments(el, rule, qd, rotating=rotating)
    n = el.d_trans.shape[0]
    m = rule.mass
    sections = el.rot is not None
    a_u = jnp.concatenate([el.trans[None], el.d_trans], axis=0)  # p, ∂_1 p … ∂_n p
    A_u = jnp.concatenate([el.rot[None], el.d_rot], axis=0) if sections else None
    curv = el.c_trans is not None
    a_v = jnp.concatenate([a_u, el.c_trans[None]], axis=0) if curv else a_u
    A_v = (jnp.concatenate([A_u, el.c_rot[None]], axis=0) if curv else A_u) if sections else None
    first = contract("k,vka->va", m, a_v)
    if sections:
        first = first + contract("vkab,kb->va", A_v, rule.first)
    g = _outer_sums(a_u, a_v, m, rule, A_u, A_v)
    dtype = el.trans.dtype
    if curv:
        gjj = g[1:, 1:n + 1]
        gyro = contract("l,jla->ja", qd, _cross_of(gjj))
        curv_first, curv_moment, curv_jac = first[n + 1], _cross_of(g[0, n + 1]), _trace(g[1:, n + 1])
    else:
        gjj = g[1:, 1:]
        gyro = jnp.zeros((n, 3), dtype)
        curv_first = curv_moment = jnp.zeros((3,), dtype)
        curv_jac = jnp.zeros((n,), dtype)
    return BodyMoments(jnp.sum(m), first[0], g[0, 0], first[1:n + 1], g[1:, 0], _trace(gjj), gyro, curv_first,
                       curv_moment, curv_jac)


def section_moments(sections: PoseJet, rule: ElementRule, qd: Config | None, *,
                    rotating: int | None = None) -> BodyMoments:
    """The :class:`BodyMoments` of rigid cross-sections from their body-frame pose jets, in closed form.

    Section ``k`` (pose ``(R, t)`` in the distal frame, generators ``(ω_j, v_j)`` and curvature
    ``(c_ω, c_v)`` in its own frame, batched: ``gen`` ``(K, n, 6)``) carries points ``p = t + R s``
    with ``∂_j p = R (v_j + ω_j × s)`` and ``p'' = R (c_v + c_ω × s + Ω × (Ω × s))``, ``Ω = Σ ω_j q̇_j``.
    Summed over its points with the rule's ``m``, ``c = Σ w s``, ``S = Σ w s sᵀ`` and
    ``J = tr(S) 1 − S``, every moment is the section's rigid-body quantity: the momentum of a
    generator ``f_j = m v_j + ω_j × c``, ``h_j = c × v_j + J ω_j`` (so ``gram[j, l] = Σ ω_j·h_l +
    v_j·f_l``), the inertial force of the curvature ``e = m c_v + c_ω × c + Ω × (Ω × c)``,
    ``η = c × c_v + J c_ω + Ω × J Ω`` (so ``curv_jac[j] = Σ v_j·e + ω_j·η``), and
    ``Σ w (a × s) × (b × s) = S (a × b)`` for ``gyro``. The same numbers as
    :func:`moments` of :func:`elements_from_pose_jets` (the oracle, tests to 1e-12) without
    forming ``∂R`` or the pairwise products of the affine fields. The sums over sections are
    contractions written element-wise (:func:`~kane_jax._small.contract`, no dot kernel, so that a
    loop of forward dynamics compiles into one XLA:CPU kernel; batched FD of a PCS rod within the
    run-to-run spread of the ``einsum`` form, 2026-11-26); ``gen`` and ``curv`` pass through
    :func:`~kane_jax._small.materialize`, whose boundary XLA computes once (batched FD of a PCS rod
    2× faster, 2026-11-24). ``rotating = r`` (static): ``ω_j = 0`` for ``j ≥ r`` (a PCS rod's stretch
    and shear), whose ``ω`` terms are left out (the same sums without zero products).
    """
    rot, t = sections.rot, sections.trans
    m, c, s2 = rule.mass, rule.first.astype(t.dtype), rule.second.astype(t.dtype)
    gen = materialize(sections.gen)
    r = gen.shape[1] if rotating is None else rotating
    w, v = gen[:, :r, :3], gen[..., 3:]  # (K, r, 3), (K, n, 3)
    rows = functools.partial(add_to_rows, r)
    tr = s2[:, 0, 0] + s2[:, 1, 1] + s2[:, 2, 2]
    inertia = tr[:, None, None] * jnp.eye(3, dtype=t.dtype)[None] - s2  # J about the section origin
    cb = c[:, None, :]
    f = rows(m[:, None, None] * v, cross(w, cb))  # (K, n, 3)
    h = rows(cross(cb, v), mv(inertia[:, None], w))
    rc = mv(rot, c)
    rs = contract("kab,kbc->kac", rot, s2)
    # R S Rᵀ and the generators' second moments computed once, their sums over the sections as adds
    # (``sum_small``): ``jnp.sum`` made each a reduce kernel of its own, which kept one FD in a loop
    # from fusing them (one FD in a loop, pinned, two rounds: one six-strain rod 9.1–9.2 → 7.3 µs,
    # three 28.4–28.5 → 24.5–24.6 µs, three bend + stretch rods 11.7–11.9 → 9.5–9.7 µs; batched
    # B = 1,024 the same or faster: 14.0–14.5 → 11.7 µs per state for the three bend + stretch rods);
    # without the two boundaries the sums fused into every reader and the batched FD of three
    # six-strain rods went 55 → 62 µs per state (2026-11-29)
    rss = materialize(contract("kac,kbc->kab", rs, rot))  # R S Rᵀ
    big_f = contract("kab,kjb->kja", rot, f)
    rw = contract("kab,kjb->kja", rot, w)
    rv = contract("kab,kjb->kja", rot, v)
    second = (contract("k,ka,kb->ab", m, t, t) + contract("ka,kb->ab", t, rc) + contract("ka,kb->ab", rc, t)
              + sum_small(rss, axis=0))
    # Σ w ∂_j p pᵀ = F tᵀ + (R v)(R c)ᵀ + [R ω]× R S Rᵀ
    cross_cols = jnp.swapaxes(cross(rw[..., None, :], jnp.swapaxes(rss, -1, -2)[:, None]), -1, -2)
    jac_second = materialize(rows(contract("kja,kb->jab", big_f, t) + contract("kja,kb->jab", rv, rc),
                                  sum_small(cross_cols, axis=0), axis=0))
    gram = rows(contract("kja,kla->jl", v, f), contract("kja,kla->jl", w, h), axis=0)
    dtype = t.dtype
    n = v.shape[1]
    if qd is None:
        gyro, curv_first, curv_moment, curv_jac = at_rest(n, dtype)
    else:
        qd = qd.astype(dtype)
        # the sections' velocities, the gyroscopic integrand and the curvature's inertial force each
        # in a buffer: every entry of gyro, curv_jac and curv_moment read them whole, and fused into
        # those readers they were computed again per entry (one FD of a six-strain PCS rod, XLA's cost
        # analysis: 41.9k → 32.8k flops with the FD's right-hand side in a buffer as well — the FD's
        # parts computed as separate outputs need 30.8k; its compile 2.7–2.8 → 2.4–2.5 s; one FD in a
        # loop 7.3 → 6.9 µs; jacfwd / jacrev of ID and FD of two PCS rods compile 10.5–10.8 → 9.7–9.8 s
        # and 20.8–22.7 → 18.9–19.2 s; batched FD within the spread: pinned, alternating, 2026-11-29)
        om, nu, cw, cv = section_velocities(w, v, qd, sections.curv)
        om_b = om[:, None]
        local = materialize(rows(cross(f, nu[:, None]) + cross(v, cross(om_b, cb)), mv(s2[:, None], cross(w, om_b))))
        gyro = contract("kab,kjb->ja", rot, local)
        e = m[:, None] * cv + cross(cw, c) + cross(om, cross(om, c))
        eta = cross(c, cv) + mv(inertia, cw) + cross(om, mv(inertia, om))
        curv_first, curv_moment, curv_jac = curvature_sums(rot, t, v, w, materialize(e), materialize(eta))
    return BodyMoments(jnp.sum(m), jnp.sum(m[:, None] * t + rc, axis=0), second, jnp.sum(big_f, axis=0), jac_second,
                       gram, gyro, curv_first, curv_moment, curv_jac)


def distal_point_jets(points_and_tip: Callable, q: Config, qd: Config | None) -> tuple[PoseJet, Elements]:
    """Autodiff jets of point elements ``p_k = R_hᵀ (x_k − t_h)`` and of the distal frame ``h``.

    ``points_and_tip(q) -> ((K, 3) points in the proximal frame, (4, 4) pose h)``; one jet of the
    composite (the generic path, also the test oracle of the closed forms).
    """

    def geometry(x):
        pts, h = points_and_tip(x)
        rot, trans = h[:3, :3], h[:3, 3]
        return mtv(rot, pts - trans[None]), rot, trans

    (p, rot, trans), (dp, drot, dtrans), c = jet(geometry, q, qd)
    tip = tip_from_jet(rot, trans, drot, dtrans, None if c is None else c[1], None if c is None else c[2])
    return tip, Elements(p, dp, None if c is None else c[0], None, None, None)


def distal_section_jets(frames_and_tip: Callable, q: Config, qd: Config | None) -> tuple[PoseJet, PoseJet]:
    """Autodiff jets of section frames ``(R_hᵀ R_k, R_hᵀ (t_k − t_h))`` and of the distal frame ``h``;
    the sections in body-frame form (``gen`` ``(K, n, 6)``) for :func:`section_moments`.

    ``frames_and_tip(q) -> ((K, 3, 3) rotations, (K, 3) origins in the proximal frame, (4, 4) h)``.
    """

    def geometry(x):
        rots, origins, h = frames_and_tip(x)
        rot, trans = h[:3, :3], h[:3, 3]
        return mtm(rot[None], rots), mtv(rot, origins - trans[None]), rot, trans

    (r, t, rot, trans), (dr, dt, drot, dtrans), c = jet(geometry, q, qd)
    tip = tip_from_jet(rot, trans, drot, dtrans, None if c is None else c[2], None if c is None else c[3])
    gen = jnp.moveaxis(jnp.concatenate([vee_rt(r[None], dr), mtv(r[None], dt)], axis=-1), 0, 1)
    if c is None:
        curv = jnp.zeros(t.shape[:-1] + (6,), t.dtype)
    else:
        curv = jnp.concatenate([vee_rt(r, c[0]), mtv(r, c[1])], axis=-1)
    return tip, PoseJet(r, t, gen, curv)
