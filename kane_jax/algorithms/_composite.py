"""The mass matrix from composite inertias in the base frame: CRBA's counterpart for every module type.

Paper ``003_…`` §5.2 computes ``M`` alongside the ID; :func:`~kane_jax.algorithms._recursion.mass_columns`
does it literally, one acceleration-only ID per coordinate (``vmap`` over ``nq`` columns, each a
forward and a backward ``lax.scan``). This kernel gives the same matrix from the same module terms
with one short ``lax.scan`` (the frames' base poses) and no columns.

With zero velocities the recursion is linear in ``q̈``. Written in the base frame ``{S_0}`` with
spatial vectors about its origin, module ``i`` contributes

- its motion subspace ``S_i`` (rows ``(Pω, Pv)`` of ``gen``, moved to the base: ``R ω``,
  ``R v + p × R ω``),
- its body's spatial inertia ``Λ_i`` about the base origin — mass ``m``, first moment
  ``c = R c_i + m p``, inertia ``I = R I_i Rᵀ + m(|p|² 1 − p pᵀ) + 2 (p · R c_i) 1 − p (R c_i)ᵀ − R c_i pᵀ``
  — acting as ``Λ (ω, v) = (I ω + c × v, m v − c × ω)``,
- the wrench of its own coordinates ``Γ_i`` (rows ``(−Σ w ∂_j p × p, Σ w ∂_j p)`` moved to the
  base) and their own mass matrix ``G_i = gram``.

The composite inertia ``Λᶜ_b = Σ_{i ≥ b} Λ_i`` is a reverse cumulative sum (13 numbers per module),
``P_b = Λᶜ_b S_b + Γ_b``, and

    M_ab = S_aᵀ P_b  (a < b),     M_bb = S_bᵀ P_b + Γ_bᵀ S_b + G_b,     M_ba = M_abᵀ,

Featherstone's composite-rigid-body algorithm (RBDA §6.2) with the bodies' own coordinates added.
``M`` does not depend on the frame these are written in: a chain of one module (a single rod or
segment) takes that module's own frame ``{S_1}``, where ``S``, ``Γ`` and ``Λ`` are its terms as they
come, with no transport to the base and no composite sums.
The six-component contractions are written as elementwise sums (no ``dot_general``: see
``docs/architecture.md`` on XLA:CPU).
"""

from __future__ import annotations

import jax.numpy as jnp

from .._modules import chain_block_diagonal, chain_rows, coordinate_modules, scan_modules
from .._small import cross, materialize, mm, mv
from .._types import Array, Float
from ._terms import ModuleTerms


def _base_poses(terms: ModuleTerms) -> tuple[Float[Array, "N 3 3"], Float[Array, "N 3"]]:
    """Rotation and origin of every ``{S_i}`` in ``{S_0}``."""
    dtype = terms.rot.dtype

    def step(prev, x):
        rot0, p0 = prev
        rot, trans = x
        out = (mm(rot0, rot), p0 + mv(rot0, trans))
        return out, out

    init = (jnp.eye(3, dtype=dtype), jnp.zeros((3,), dtype))
    return scan_modules(step, init, (terms.rot, terms.trans))[1]


def _outer6(a: Array, b: Array) -> Array:
    """``a @ bᵀ`` for rows of 6 components, as six broadcast products (no dot kernel)."""
    out = a[:, None, 0] * b[None, :, 0]
    for k in range(1, 6):
        out = out + a[:, None, k] * b[None, :, k]
    return out


def _in_base_frame(terms: ModuleTerms, own: bool):
    """Subspaces ``(s_w, s_v)`` ``(N, n, 3)``, composite inertias ``(mass_c, first_c, inertia_c)`` and
    the own-coordinate wrenches ``(g_f, g_t)`` (None without ``own``), in the base frame about its origin."""
    rot0, p0 = _base_poses(terms)  # (N, 3, 3), (N, 3)
    body = terms.body
    r = rot0[:, None]  # broadcast over each module's rows
    p = p0[:, None]
    # motion subspaces and own-coordinate wrenches in the base frame, about its origin: (N, n, 3) each
    s_w = mv(r, terms.gen[..., :3])
    s_v = mv(r, terms.gen[..., 3:]) + cross(p, s_w)
    g_f = g_t = None
    if own:
        g_f = mv(r, body.jac_first)
        g_t = -mv(r, terms.jac_rot) + cross(p, g_f)
    # bodies' spatial inertias about the base origin, then the composite ones (reverse cumsum)
    rc = mv(rot0, body.first)
    mass = body.mass
    first = rc + mass[:, None] * p0
    pp = p0[:, :, None] * p0[:, None, :]
    eye = jnp.eye(3, dtype=p0.dtype)[None]
    inertia = (mm(mm(rot0, terms.inertia), jnp.swapaxes(rot0, -1, -2))
               + mass[:, None, None] * ((pp[:, 0, 0] + pp[:, 1, 1] + pp[:, 2, 2])[:, None, None] * eye - pp)
               + 2.0 * (p0[:, 0] * rc[:, 0] + p0[:, 1] * rc[:, 1] + p0[:, 2] * rc[:, 2])[:, None, None] * eye
               - p0[:, :, None] * rc[:, None, :] - rc[:, :, None] * p0[:, None, :])

    def tail_sum(x):
        return jnp.flip(jnp.cumsum(jnp.flip(x, 0), axis=0), 0)

    mass_c, first_c, inertia_c = tail_sum(mass), tail_sum(first), tail_sum(inertia)
    # each in a buffer of its own: XLA:CPU otherwise fuses their products (R I Rᵀ, the transported
    # subspaces) into the kernel that assembles M and recomputes them per entry of M — 38 ns per
    # entry batched (jax.profiler, six-strain rod, B = 1,024); materialized, the batched FD of that rod
    # 19.8–20.0 → 18.5–18.7 µs per state, three rods −1 %, one FD in a loop within ±3 % (in-process,
    # interleaved, pinned, 2026-11-28)
    first_c, inertia_c, s_w, s_v = materialize(first_c), materialize(inertia_c), materialize(s_w), materialize(s_v)
    return s_w, s_v, mass_c, first_c, inertia_c, (g_f, g_t)


def composite_mass_matrix(chain, terms: ModuleTerms) -> Float[Array, "nq nq"]:
    """``M(q)`` from the configuration terms by composite inertias (see the module docstring).

    Arguments:
        chain: the chain (its row layout). terms: :func:`~kane_jax.algorithms._terms.chain_terms`
            (velocities are not read).

    Returns:
        ``(nq, nq)`` symmetric mass matrix, equal to :func:`~kane_jax.algorithms._recursion.mass_columns`.
    """
    body = terms.body
    own = body.jac_first is not None  # False: no body coordinates in the chain, Γ and G vanish
    if chain.n_modules == 1:
        # one module: its own frame {S_1} serves as the reference (M does not depend on it), where the
        # subspace, the wrenches Γ and the body's inertia are the terms themselves — no transport, no
        # composite sums (docs/architecture.md, *A one-module chain's mass matrix in its own frame*)
        s_w, s_v = terms.gen[..., :3], terms.gen[..., 3:]
        g_f, g_t = (body.jac_first, -terms.jac_rot) if own else (None, None)
        mass_c, first_c, inertia_c = body.mass, body.first, terms.inertia
    else:
        s_w, s_v, mass_c, first_c, inertia_c, (g_f, g_t) = _in_base_frame(terms, own)
    # P_b = Λᶜ_b S_b + Γ_b, rows of (torque, force)
    c = first_c[:, None]
    p_t = mv(inertia_c[:, None], s_w) + cross(c, s_v)
    p_f = mass_c[:, None, None] * s_v - cross(c, s_w)
    if own:
        p_t, p_f = p_t + g_t, p_f + g_f
    s = chain_rows(chain, jnp.concatenate([s_w, s_v], -1))  # (nq, 6)
    pw = chain_rows(chain, jnp.concatenate([p_t, p_f], -1))
    module, _ = coordinate_modules(chain)
    upper = jnp.asarray(module[:, None] < module[None, :])
    same = jnp.asarray(module[:, None] == module[None, :])
    sp = _outer6(s, pw)
    diag = sp
    if own:
        gam = chain_rows(chain, jnp.concatenate([g_t, g_f], -1))
        diag = sp + (_outer6(gam, s) + chain_block_diagonal(chain, body.gram))
    full = jnp.where(upper, sp, 0.0)
    full = full + full.T + jnp.where(same, diag, 0.0)
    if own:  # computed once: the symmetrization below reads every entry twice, and fused into it (and
        # into the buffer FD materializes M in) the rod's Gram blocks were summed twice per entry
        # (six-strain rod, B = 1,024: the one kernel assembling M 2.4 ms of 11.5 ms per batched FD);
        # rigid chains have none, and their cheap entries are best recomputed (``solve_chain_mass``)
        full = materialize(full)
    return 0.5 * (full + full.T)
