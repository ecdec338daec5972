"""The mass moments of centred, symmetric cross-sections: :func:`section_moments` without the zeros.

A rod's cross-sections from :func:`~kane_jax.bodies.quadrature.disk_rule` with at least two equally
spaced angles (or the backbone alone) are symmetric about their centre and about the y and z axes:
the first moment ``c = Σ w s`` and the products ``S_yz`` vanish, by symmetry, for every radius. The
closed form of :func:`~kane_jax.bodies._moments.section_moments` then loses every term in ``c``
(``f_j = m v_j``, ``h_j = J ω_j``, ``e = m c_v``, ``η = J c_ω + Ω × J Ω``, no ``R c``) and ``S`` and
``J = tr(S) 1 − S`` are diagonal (``R S Rᵀ = Σ_a s_a R e_a (R e_a)ᵀ``). The same numbers to rounding
(the rule's computed ``c`` and ``S_yz`` are ≈ 1e-18 of the section's size): tests to 1e-12 against
:func:`section_moments` with every term. One FD of a six-strain PCS rod: 27.2k → 22.8k flops.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp

from .._jets import PoseJet
from .._small import add_to_rows, contract, cross, materialize, sum_small
from .._types import Config
from ._moments import BodyMoments, ElementRule
from ._section_sums import at_rest, curvature_sums, section_velocities


def centred_section_moments(sections: PoseJet, rule: ElementRule, qd: Config | None, *,
                            rotating: int | None = None) -> BodyMoments:
    """:func:`~kane_jax.bodies._moments.section_moments` of centred, symmetric sections (module docstring).

    Arguments:
        sections: body-frame pose jets of the sections (batched :class:`PoseJet`, ``gen`` ``(K, n, 6)``).
        rule: the sections' masses and second moments (``rule.first`` is not read: zero by symmetry,
            and only the diagonal of ``rule.second``).
        qd: the body's velocity, or None (configuration-dependent moments only).
        rotating: ``r`` (static): ``ω_j = 0`` for ``j ≥ r``; their ``ω`` terms are left out.

    Returns:
        The :class:`BodyMoments` in the distal frame.
    """
    rot, t = sections.rot, sections.trans
    m = rule.mass
    s2 = rule.second.astype(t.dtype)
    s = jnp.stack([s2[:, 0, 0], s2[:, 1, 1], s2[:, 2, 2]], axis=-1)  # (K, 3) principal second moments
    jd = jnp.stack([s[:, 1] + s[:, 2], s[:, 0] + s[:, 2], s[:, 0] + s[:, 1]], axis=-1)  # diagonal of J
    gen = materialize(sections.gen)
    r = gen.shape[1] if rotating is None else rotating
    w, v = gen[:, :r, :3], gen[..., 3:]  # (K, r, 3), (K, n, 3)
    n = v.shape[1]
    rows = functools.partial(add_to_rows, r)
    # R S Rᵀ once per section, its sum over the sections as adds (as in section_moments)
    rss = materialize(contract("kac,kbc->kab", rot * s[:, None, :], rot))
    rw = contract("kab,kjb->kja", rot, w)
    big_f = m[:, None, None] * contract("kab,kjb->kja", rot, v)  # R f_j = m R v_j
    second = contract("k,ka,kb->ab", m, t, t) + sum_small(rss, axis=0)
    # Σ w ∂_j p pᵀ = m R v_j tᵀ + [R ω_j]× R S Rᵀ
    cross_cols = jnp.swapaxes(cross(rw[..., None, :], jnp.swapaxes(rss, -1, -2)[:, None]), -1, -2)
    jac_second = materialize(rows(contract("kja,kb->jab", big_f, t), sum_small(cross_cols, axis=0), axis=0))
    # gram[j, l] = Σ m v_j·v_l + ω_j·J ω_l (the ω block r × r, padded to the rows' n columns)
    spin = contract("kja,kla->jl", w, jd[:, None, :] * w)
    gram = rows(contract("k,kja,kla->jl", m, v, v), jnp.pad(spin, ((0, 0), (0, n - r))), axis=0)
    dtype = t.dtype
    if qd is None:
        gyro, curv_first, curv_moment, curv_jac = at_rest(n, dtype)
    else:
        qd = qd.astype(dtype)
        om, nu, cw, cv = section_velocities(w, v, qd, sections.curv)
        # Σ w ∂_j p × ṗ in the section's frame: m v_j × ν + S (ω_j × Ω)
        local = materialize(rows(m[:, None, None] * cross(v, nu[:, None]), s[:, None, :] * cross(w, om[:, None])))
        gyro = contract("kab,kjb->ja", rot, local)
        e = materialize(m[:, None] * cv)
        eta = materialize(jd * cw + cross(om, jd * om))
        curv_first, curv_moment, curv_jac = curvature_sums(rot, t, v, w, e, eta)
    return BodyMoments(jnp.sum(m), jnp.sum(m[:, None] * t, axis=0), second, jnp.sum(big_f, axis=0), jac_second,
                       gram, gyro, curv_first, curv_moment, curv_jac)
