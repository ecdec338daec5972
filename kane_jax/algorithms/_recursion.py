"""The recursion's kernels (DESIGN §3.2–3.4): inverse dynamics, mass-matrix columns, forward dynamics.

Private and unvalidated: the public entry points (``inverse_dynamics.py``, ``mass_matrix.py``,
``forward_dynamics.py``, ``simulate``, the controllers) check their inputs and call these. Every
quantity of a module is kept in the module's own frame ``{S_i}``, so each step rotates a vector
once (``R_iᵀ x``) and the rest is 3-vector algebra.

- :func:`id_recursion` — paper ``003_…`` Alg. 2, ``000_…`` Theorem 1 (eqs. 36–45): a forward pass
  for frame velocities and accelerations with the body sums, a backward pass for the wrenches.
- :func:`mass_columns` — ``M e_j = ID(q, 0, e_j)`` without gravity and internal forces; with
  ``q̇ = 0`` every angular velocity vanishes, so the columns need the configuration terms only
  (``000_…`` eq. 56; the mass matrix alongside the ID of ``003_…`` §5.2). Kept as the oracle of
  :func:`~kane_jax.algorithms._composite.composite_mass_matrix`, which the kernels below use
  (same matrix to 1e-15; 3.8× faster batched on a 7-DoF arm).
- the forward dynamics (one terms pass for both the bias and ``M``, then a Cholesky solve,
  ``000_…`` eq. 56) is in ``_fd_derivative.py``, with its derivative rule through the ID.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._modules import chain_vector, has_body_coordinates, module_rows, scan_modules
from .._small import cross, dot, mtv, mv, sum_small
from .._types import Array, Config, Float, Vec3
from ._cholesky import solve_mass
from ._composite import composite_mass_matrix
from ._terms import ModuleTerms, chain_terms


class FrameMotion(NamedTuple):
    """Angular velocity, angular acceleration and linear acceleration of ``{S_i}``, in ``{S_i}``."""

    omega: Vec3
    domega: Vec3
    acc: Vec3


class Wrench(NamedTuple):
    """Force and torque (about the frame origin) in one frame."""

    force: Vec3
    torque: Vec3


class InverseDynamicsResult(NamedTuple):
    """Generalized forces and the intermediate quantities of the recursion."""

    tau: Config  # generalized forces, shape (nq,)
    motion: FrameMotion  # per module, leading axis N
    wrench: Wrench  # F_i, T_i transmitted through each joint, in {S_i}
    base_wrench: Wrench  # what the chain exerts on the base, in {S_0}


def _rows_dot(rows: Array, x: Array) -> Array:
    """``Σ_j rows[j] x[j]`` (``rows`` ``(n, …)``)."""
    return sum_small(rows * x.reshape(x.shape + (1,) * (rows.ndim - 1)), 0)


def _backward(terms: ModuleTerms, f: Array, tau: Array, pi: Array, tip: Wrench, internal: Array | None):
    """Wrenches transmitted through each joint and their projection (DESIGN §3.4)."""

    def step(distal: Wrench, x):
        t, fi, ti, pii, inner = x
        force = fi + distal.force
        torque = ti + distal.torque
        gen = mv(t.gen[:, :3], torque) + mv(t.gen[:, 3:], force)
        if pii is not None:
            gen = gen + pii
        if inner is not None:
            gen = gen + inner
        out = Wrench(mv(t.rot, force), mv(t.rot, torque + cross(t.trans_local, force)))
        return out, (gen, Wrench(force, torque))

    return scan_modules(step, tip, (terms, f, tau, pi, internal), reverse=True)


def id_recursion(chain, terms: ModuleTerms, qdd: Config | None, base_acc: Vec3, tip: Wrench) -> InverseDynamicsResult:
    """Generalized forces for precomputed terms; ``qdd=None`` is ``q̈ = 0`` (the bias)."""
    dtype = terms.rot.dtype
    z = jnp.zeros((3,), dtype)
    rows = None if qdd is None else module_rows(chain, qdd.astype(dtype))

    def forward(prev: FrameMotion, x):
        # forward pass: frame velocities and accelerations (DESIGN §3.2, 000_… eqs. 8–19), in {S_i}
        t, acc_row = x
        m = t.body
        tl = t.trans_local
        wp, dwp = mtv(t.rot, prev.omega), mtv(t.rot, prev.domega)
        ap = mtv(t.rot, prev.acc) + cross(dwp, tl) + cross(wp, cross(wp, tl))
        u_w, u_v = t.vel[:3], t.vel[3:]
        dw_rel, a_rel = t.curv[:3], t.curv[3:]
        if acc_row is not None:
            acc_gen = _rows_dot(t.gen, acc_row)
            dw_rel, a_rel = dw_rel + acc_gen[:3], a_rel + acc_gen[3:]
        w = wp + u_w
        dw = dwp + cross(wp, u_w) + dw_rel
        a = ap + 2 * cross(wp, u_v) + a_rel
        # body sums from mass moments (DESIGN §3.3): f_i, τ_i, π_i
        c = m.first
        f = m.mass * a + cross(dw, c) + cross(w, cross(w, c))
        tau = cross(c, a) + mv(t.inertia, dw) + cross(w, mv(t.inertia, w))
        out = FrameMotion(w, dw, a)
        if m.jac_first is None:  # no body coordinates in the chain: the own-coordinate sums vanish
            return out, (out, f, tau, None)
        acc_first, acc_moment, acc_proj = m.curv_first, m.curv_moment, m.curv_jac
        if acc_row is not None:
            acc_first = acc_first + _rows_dot(m.jac_first, acc_row)
            acc_moment = acc_moment - _rows_dot(t.jac_rot, acc_row)
            acc_proj = acc_proj + sum_small(m.gram * acc_row[None, :], 1)
        f = f + 2 * cross(w, t.vel_first) + acc_first
        h = t.vel_outer
        tau = tau + 2 * ((h[0, 0] + h[1, 1] + h[2, 2]) * w - mv(h, w)) + acc_moment
        quad = sum_small(sum_small(m.jac_second * (w[:, None] * w[None, :])[None], 2), 1) - dot(w, w) * (
            m.jac_second[:, 0, 0] + m.jac_second[:, 1, 1] + m.jac_second[:, 2, 2])
        pi = (mv(m.jac_first, a) - mv(t.jac_rot, dw) + quad
              - 2 * mv(m.gyro, w) + acc_proj)
        return out, (out, f, tau, pi)

    _, (motion, f, tau, pi) = scan_modules(forward, FrameMotion(z, z, base_acc.astype(dtype)), (terms, rows))
    tip = Wrench(tip.force.astype(dtype), tip.torque.astype(dtype))  # the backward scan's carry, in the terms' dtype
    base, (gen, wrench) = _backward(terms, f, tau, pi, tip, terms.internal)
    return InverseDynamicsResult(chain_vector(chain, gen), motion, wrench, base)


def mass_columns(chain, terms: ModuleTerms) -> Float[Array, "nq nq"]:
    """``M(q)`` from the configuration terms, one column per coordinate (``vmap``), symmetrized."""
    dtype = terms.rot.dtype
    z = jnp.zeros((3,), dtype)
    eye = jnp.eye(chain.nq, dtype=dtype)

    def column(e):
        rows = module_rows(chain, e)

        def forward(prev, x):
            t, e_row = x
            m = t.body
            dwp = mtv(t.rot, prev[0])
            acc_gen = _rows_dot(t.gen, e_row)
            dw = dwp + acc_gen[:3]
            a = mtv(t.rot, prev[1]) + cross(dwp, t.trans_local) + acc_gen[3:]
            c = m.first
            f = m.mass * a + cross(dw, c)
            tau = cross(c, a) + mv(t.inertia, dw)
            if m.jac_first is None:  # no body coordinates in the chain
                return (dw, a), (f, tau, None)
            f = f + _rows_dot(m.jac_first, e_row)
            tau = tau - _rows_dot(t.jac_rot, e_row)
            pi = (mv(m.jac_first, a) - mv(t.jac_rot, dw)
                  + sum_small(m.gram * e_row[None, :], 1))
            return (dw, a), (f, tau, pi)

        _, (f, tau, pi) = scan_modules(forward, (z, z), (terms, rows))
        _, (gen, _) = _backward(terms, f, tau, pi, Wrench(z, z), None)
        return chain_vector(chain, gen)

    m = jax.vmap(column, out_axes=1)(eye)
    return 0.5 * (m + m.T)


def tip_wrench(tip_force, tip_torque, dtype) -> Wrench:
    """The wrench the environment applies at the tip, as the backward pass's initial carry."""
    z = jnp.zeros((3,), dtype=dtype)
    f = z if tip_force is None else -jnp.asarray(tip_force, dtype=dtype).reshape(3)
    t = z if tip_torque is None else -jnp.asarray(tip_torque, dtype=dtype).reshape(3)
    return Wrench(f, t)


def mass_and_bias(chain, terms: ModuleTerms, *, gravity: Vec3, tip: Wrench) -> tuple[Array, Config]:
    """``M(q)`` and the bias ``ID(q, q̇, 0)`` from precomputed terms (the FD's ingredients)."""
    bias = id_recursion(chain, terms, None, -gravity, tip).tau
    return composite_mass_matrix(chain, terms), bias


def dynamics_terms(chain, q: Config, qd: Config, *, gravity: Vec3, tip: Wrench,
                   internal: bool = True) -> tuple[Array, Config]:
    """``M(q)`` and the bias ``ID(q, q̇, 0)`` from one terms pass."""
    return mass_and_bias(chain, chain_terms(chain, q, qd, internal=internal), gravity=gravity, tip=tip)


def inverse_dynamics_kernel(chain, q: Config, qd: Config | None, qdd: Config | None, *, gravity: Vec3 | None = None,
                            tip: Wrench | None = None, internal: bool = True) -> Config:
    """``ID(q, q̇, q̈)`` (``qdd=None``: ``q̈ = 0``) with the chain's gravity unless overridden.

    ``qd=None``: ``q̇ = 0`` without tracing the velocity terms (configuration-only jets), the static
    generalized forces ``ID(q, 0, q̈)`` of the statics and equilibria."""
    g = jnp.asarray(chain.gravity if gravity is None else gravity)
    dtype = jnp.result_type(q, g) if qd is None else jnp.result_type(q, qd, g)
    tip = tip_wrench(None, None, dtype) if tip is None else tip
    terms = chain_terms(chain, q, qd, internal=internal)
    return id_recursion(chain, terms, qdd, -jnp.asarray(g, dtype), tip).tau


def solve_chain_mass(chain, mass: Array, rhs: Array) -> Array:
    """:func:`solve_mass` for ``chain``'s mass matrix: ``M`` in a buffer of its own when a body of the
    chain has coordinates (soft bodies: entries of ``M`` are costly to recompute), a bare barrier
    for rigid chains (see ``buffer`` there)."""
    return solve_mass(mass, rhs, buffer=has_body_coordinates(chain))


def mass_matrix_kernel(chain, q: Config) -> Array:
    """``M(q)`` from the configuration terms alone (composite inertias)."""
    return composite_mass_matrix(chain, chain_terms(chain, q, None, internal=False))
