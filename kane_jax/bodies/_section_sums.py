"""Velocity terms shared by the two closed forms of the sections' moments (``_moments.section_moments``
and ``_centred_moments.centred_section_moments``): the sections' velocities and the sums of the
curvature's inertial forces, the same operations in both."""

from __future__ import annotations

import jax.numpy as jnp

from .._small import add_to_rows, contract, cross, materialize
from .._types import Array, Config


def at_rest(n: int, dtype) -> tuple[Array, Array, Array, Array]:
    """``gyro``, ``curv_first``, ``curv_moment``, ``curv_jac`` without a velocity: zeros."""
    zero = jnp.zeros((3,), dtype)
    return jnp.zeros((n, 3), dtype), zero, zero, jnp.zeros((n,), dtype)


def section_velocities(w: Array, v: Array, qd: Config, curv: Array) -> tuple[Array, Array, Array, Array]:
    """Per section ``Ω = Σ ω_j q̇_j`` (over the ``r`` rows of ``w``), ``ν = Σ v_j q̇_j`` and the
    curvature's ``(c_ω, c_v)``, each in a buffer (see :func:`section_moments`)."""
    om, nu = contract("kja,j->ka", w, qd[:w.shape[1]]), contract("kja,j->ka", v, qd)  # (K, 3)
    om, nu = materialize(om), materialize(nu)
    curv = materialize(curv)
    return om, nu, curv[:, :3], curv[:, 3:]


def curvature_sums(rot: Array, t: Array, v: Array, w: Array, e: Array, eta: Array) -> tuple[Array, Array, Array]:
    """``curv_first = Σ R e``, ``curv_moment = Σ t × R e + R η``, ``curv_jac[j] = Σ v_j·e + ω_j·η``
    from each section's inertial force ``e`` and moment ``η`` of the curvature (``w``: the ``r``
    rotating rows)."""
    re = materialize(contract("kab,kb->ka", rot, e))
    jac = add_to_rows(w.shape[1], contract("kja,ka->j", v, e), contract("kja,ka->j", w, eta), axis=0)
    return jnp.sum(re, axis=0), jnp.sum(cross(t, re), axis=0) + contract("kab,kb->a", rot, eta), jac
