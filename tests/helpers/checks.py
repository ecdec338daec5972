"""The tests' reference checks, defined once (the body, algorithm, material and actuation tests).

The Euler–Lagrange reference is :mod:`kane_jax.reference.euler_lagrange` (DESIGN §5): it lives
in the package (scenario ``003-sim3`` times it) and shares nothing with the recursion except the
geometry and constitutive laws; tests import it as ``from kane_jax.reference import
euler_lagrange as el``.

- :func:`check_against_el`: recursive ID == independent Euler–Lagrange reference on random
  states (one program holding both, called per state, so a test compiles once: :func:`at_each`);
  :func:`check_against_el_at` the same on given states.
- :func:`check_smooth_at`: ID, mass matrix and FD, with their first and second derivatives with
  respect to q, are finite at a (singular-looking) configuration ``q0`` and continuous there:
  the values at ``q0`` and at ``q0 + 1e-9 d`` agree to ``rtol`` (a removable singularity written
  naively, e.g. ``sin(x)/x`` or ``(1 − cos x)/x²``, gives NaN at ``q0`` or loses ~8 digits at
  1e-9, and fails here); :func:`check_body_smooth_at_rest` its cheap body-level form.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import kane_jax as kj
from kane_jax.reference import euler_lagrange as el

EL_RTOL = 1e-9  # the bar; observed agreement is ~1e-15


def rel_err(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def assert_rel(a, b, rtol, what=""):
    err = rel_err(a, b)
    assert err < rtol, f"{what}: relative error {err:.3e} >= {rtol:.1e}"


def with_value(fn):
    """``x ↦ (fn(x), fn(x))``: under ``jacfwd(…, has_aux=True)`` the second is the primal value, so a
    derivative program returns what it differentiates without a program of its own for it."""

    def both(x):
        y = fn(x)
        return y, y

    return both


def value_jac_hess(f, q):
    """``f(q)``, its Jacobian and its Hessian from one nested forward-mode trace.

    The Hessian's trace already evaluates the Jacobian and the value as its primal; returning them
    as auxiliary outputs avoids tracing (and compiling) ``f`` and ``jacfwd(f)`` a second time.
    """

    def jac_and_value(x):
        j, y = jax.jacfwd(with_value(f), has_aux=True)(x)
        return j, (j, y)

    h, (j, y) = jax.jacfwd(jac_and_value, has_aux=True)(q)
    return y, j, h


def at_each(program, qs, *args):
    """``program(q, *args)`` at each row of ``qs``, outputs stacked: one compiled program called per
    point rather than a ``vmap`` of it (the Hessian programs of the smoothness checks compile ≈ 10 %
    faster unbatched: a soft chain's ID/M/FD Hessian 10.0 + 19.0 s → 8.5 + 17.2 s trace + compile,
    pinned, 2026-11-26)."""
    outs = [program(q, *args) for q in qs]
    return jax.tree.map(lambda *xs: jnp.stack(xs), *outs)


@eqx.filter_jit
def _id_and_el(state, chain):
    q, qd, qdd = state
    return kj.inverse_dynamics(chain, q, qd, qdd), el.inverse_dynamics(chain, q, qd, qdd)


def _id_vs_el(chain, q, qd, qdd):
    """The recursion's and the EL reference's ID at each of the stacked states (one program per chain,
    called per state: see :func:`at_each`)."""
    return at_each(_id_and_el, jnp.stack([q, qd, qdd], axis=1), chain)


def random_states(rng, nq, n_states=2, scale=0.6):
    return [jnp.asarray(rng.normal(size=(n_states, nq)) * scale) for _ in range(3)]


def check_against_el(chain, rng, *, n_states=2, scale=0.6, rtol=EL_RTOL):
    """Assert ID == EL reference to relative ``rtol`` on ``n_states`` random states."""
    q, qd, qdd = random_states(rng, chain.nq, n_states, scale)
    ours, ref = _id_vs_el(chain, q, qd, qdd)
    for k in range(n_states):
        assert_rel(ours[k], ref[k], rtol, f"ID vs EL, state {k}")
    return rel_err(ours, ref)


@eqx.filter_jit
def _dynamics_derivatives(q, chain, qd, tau):
    def f(q):
        return jnp.concatenate([
            kj.inverse_dynamics(chain, q, qd, tau),
            kj.mass_matrix(chain, q).ravel(),
            kj.forward_dynamics(chain, q, qd, tau),
        ])

    return value_jac_hess(f, q)


def check_smooth_at(chain, q0, rng, *, rtol=1e-6, eps=1e-9):
    """ID, M, FD and their first/second q-derivatives: finite at q0, continuous at q0 + eps·d."""
    q0 = jnp.asarray(q0, dtype=jnp.float64)
    d = rng.normal(size=chain.nq)
    qs = jnp.stack([q0, q0 + eps * d / np.linalg.norm(d)])
    qd = jnp.asarray(rng.normal(size=chain.nq) * 0.3)
    tau = jnp.asarray(rng.normal(size=chain.nq) * 0.1)
    vals, jacs, hess = at_each(_dynamics_derivatives, qs, chain, qd, tau)
    for name, x in (("value", vals), ("jacobian", jacs), ("hessian", hess)):
        assert np.all(np.isfinite(np.asarray(x))), f"{name} not finite at q0 or q0 + {eps}"
        assert_rel(x[1], x[0], rtol, f"{name} continuity at q0")
    return vals, jacs, hess


@eqx.filter_jit
def _geometry_taylor(q, body, d):
    def g(q):
        return jnp.concatenate([body.local_points(q).ravel(), body.tip(q).ravel()])

    def dk(fn):
        return lambda q: jax.jvp(fn, (q,), (d,))[1]

    d1 = dk(g)
    d2 = dk(d1)
    d3 = dk(d2)
    d4 = dk(d3)
    return g(q), jax.jacfwd(g)(q), d2(q), d3(q), d4(q)


def check_geometry_smooth_at(body, q0, rng, *, rtol=1e-6, eps=1e-9):
    """Body geometry (points relative to the distal frame and the distal frame) with its full first
    q-derivative and its directional second, third and fourth derivatives along a random unit ``d``
    — the orders the ID's first and second q-derivatives consume — finite at q0 and continuous at
    q0 + eps·d. (Full higher-order tensors cost minutes of XLA compile on the shared CI machine;
    the chain-level full Hessians are in the ``slow`` tests.)
    """
    q0 = jnp.asarray(q0, dtype=jnp.float64)
    d = rng.normal(size=body.nq)
    d = jnp.asarray(d / np.linalg.norm(d))
    outs = at_each(_geometry_taylor, jnp.stack([q0, q0 + eps * d]), body, d)
    for name, x in zip(("value", "jacobian", "2nd derivative", "3rd derivative", "4th derivative"), outs):
        assert np.all(np.isfinite(np.asarray(x))), f"geometry {name} not finite at q0 or q0 + {eps}"
        scale = max(float(np.max(np.abs(np.asarray(x[0])))), 1e-12)
        err = float(np.max(np.abs(np.asarray(x[1] - x[0])))) / scale
        assert err < rtol, f"geometry {name} continuity at q0: relative jump {err:.3e} >= {rtol:.1e}"
    return outs


# --- explicit-state forms (variable-radius, LVP, material and actuation tests) ---------------------

def check_against_el_at(chain, states, rtol=EL_RTOL):
    """ID == EL reference to relative ``rtol`` on the stacked states ``(q, qd, qdd)``."""
    ours, ref = _id_vs_el(chain, *states)
    for k in range(ours.shape[0]):
        err = rel_err(ours[k], ref[k])
        assert err < rtol, f"ID vs EL, state {k}: relative error {err:.3e}"
    return rel_err(ours, ref)


@eqx.filter_jit
def _body_derivatives(q, body, qd):
    def f(q):
        return jnp.concatenate([body.tip(q).ravel(), body.points_in_frame(q).ravel(), body.internal_force(q, qd)])

    return value_jac_hess(f, q)


def check_body_smooth_at_rest(body, rng, *, rtol=1e-6, eps=1e-9):
    """Distal frame, mass points and internal force of a body with their 1st/2nd q-derivatives:
    finite at ``q = 0`` and equal (to ``rtol``) at ``eps`` from it (cheap form of :func:`check_smooth_at`)."""
    d = rng.normal(size=body.nq)
    qs = jnp.stack([jnp.zeros(body.nq), eps * jnp.asarray(d / np.linalg.norm(d))])
    out = at_each(_body_derivatives, qs, body, jnp.asarray(rng.normal(size=body.nq)))
    for name, x in zip(("value", "jacobian", "hessian"), out):
        x = np.asarray(x)
        assert np.all(np.isfinite(x)), f"{name} not finite at q = 0 or at {eps}"
        err = rel_err(x[1], x[0])
        assert err < rtol, f"{name} not continuous at q = 0: relative change {err:.3e} over {eps}"
