"""Checks shared by the variable-radius, LVP, material and actuation tests (one jit per chain)."""

from __future__ import annotations

import el_reference as el
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import kane_jax as kj
from soft_checks import value_jac_hess

EL_RTOL = 1e-9  # the bar for ID vs the Euler–Lagrange reference


def rel_err(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@eqx.filter_jit
def _id_vs_el(chain, q, qd, qdd):
    ours = jax.vmap(lambda a, b, c: kj.inverse_dynamics(chain, a, b, c))(q, qd, qdd)
    ref = jax.vmap(lambda a, b, c: el.inverse_dynamics(chain, a, b, c))(q, qd, qdd)
    return ours, ref


def check_against_el(chain, states, rtol=EL_RTOL):
    """ID == EL reference to relative ``rtol`` on the stacked states ``(q, qd, qdd)``."""
    ours, ref = _id_vs_el(chain, *states)
    for k in range(ours.shape[0]):
        err = rel_err(ours[k], ref[k])
        assert err < rtol, f"ID vs EL, state {k}: relative error {err:.3e}"
    return rel_err(ours, ref)


@eqx.filter_jit
def _dynamics_derivatives(chain, qs, qd, tau):
    def f(q):
        return jnp.concatenate([kj.inverse_dynamics(chain, q, qd, tau), kj.mass_matrix(chain, q).ravel(),
                                kj.forward_dynamics(chain, q, qd, tau)])

    return jax.vmap(lambda q: value_jac_hess(f, q))(qs)


def check_smooth_at(chain, q0, rng, *, rtol=1e-6, eps=1e-9):
    """ID, M, FD and their 1st/2nd q-derivatives finite at ``q0`` and equal (to ``rtol``) at ``q0 + eps·d``."""
    q0 = jnp.asarray(q0, dtype=jnp.float64)
    d = rng.normal(size=chain.nq)
    qs = jnp.stack([q0, q0 + eps * d / np.linalg.norm(d)])
    qd = jnp.asarray(rng.normal(size=chain.nq) * 0.3)
    tau = jnp.asarray(rng.normal(size=chain.nq) * 0.1)
    out = _dynamics_derivatives(chain, qs, qd, tau)
    for name, x in zip(("value", "jacobian", "hessian"), out):
        x = np.asarray(x)
        assert np.all(np.isfinite(x)), f"{name} not finite at q0 or q0 + eps"
        err = rel_err(x[1], x[0])
        assert err < rtol, f"{name} not continuous at q0: relative change {err:.3e} over {eps}"
    return out


@eqx.filter_jit
def _body_derivatives(body, qs, qd):
    def f(q):
        return jnp.concatenate([body.tip(q).ravel(), body.points_in_frame(q).ravel(), body.internal_force(q, qd)])

    return jax.vmap(lambda q: value_jac_hess(f, q))(qs)


def check_body_smooth_at_rest(body, rng, *, rtol=1e-6, eps=1e-9):
    """Distal frame, mass points and internal force of a body with their 1st/2nd q-derivatives:
    finite at ``q = 0`` and equal (to ``rtol``) at ``eps`` from it (cheap form of :func:`check_smooth_at`)."""
    d = rng.normal(size=body.nq)
    qs = jnp.stack([jnp.zeros(body.nq), eps * jnp.asarray(d / np.linalg.norm(d))])
    out = _body_derivatives(body, qs, jnp.asarray(rng.normal(size=body.nq)))
    for name, x in zip(("value", "jacobian", "hessian"), out):
        x = np.asarray(x)
        assert np.all(np.isfinite(x)), f"{name} not finite at q = 0 or at {eps}"
        err = rel_err(x[1], x[0])
        assert err < rtol, f"{name} not continuous at q = 0: relative change {err:.3e} over {eps}"
