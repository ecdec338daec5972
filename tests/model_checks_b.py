"""Checks shared by the variable-radius, LVP, material and actuation tests (one jit per chain).

The ID-vs-EL comparison and the chain-level smoothness check are those of :mod:`soft_checks`;
only the call forms differ (explicit states here, random states there).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from soft_checks import EL_RTOL, _id_vs_el, check_smooth_at, rel_err, value_jac_hess  # noqa: F401


def check_against_el(chain, states, rtol=EL_RTOL):
    """ID == EL reference to relative ``rtol`` on the stacked states ``(q, qd, qdd)``."""
    ours, ref = _id_vs_el(chain, *states)
    for k in range(ours.shape[0]):
        err = rel_err(ours[k], ref[k])
        assert err < rtol, f"ID vs EL, state {k}: relative error {err:.3e}"
    return rel_err(ours, ref)


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
