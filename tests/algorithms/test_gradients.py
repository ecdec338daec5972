"""Gradients of the dynamics with respect to states and physical parameters (finite differences)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from helpers.robots import random_state
from jax.test_util import check_grads

import kane_jax as kj


def test_grads_wrt_state(rng):
    # values on the 5-kind mixed chain are checked against EL elsewhere; derivatives here on a
    # 2-kind hybrid chain keep the compile of the jvp/vjp graphs short
    chain = _build({k: jnp.asarray(v) for k, v in PARAMS.items()})
    q, qd, qdd = random_state(rng, chain.nq, 0.5)
    check_grads(lambda a, b, c: kj.inverse_dynamics(chain, a, b, c), (q, qd, qdd), order=1, modes=("fwd", "rev"),
                atol=1e-6, rtol=1e-6)


def test_grads_of_forward_dynamics(rng):
    # a small hybrid arm keeps the compile of the reverse-mode Cholesky path short
    chain = _build({k: jnp.asarray(v) for k, v in PARAMS.items()})
    q, qd, tau = random_state(rng, chain.nq, 0.5)
    check_grads(lambda a, b: kj.forward_dynamics(chain, a, b, tau), (q, qd), order=1, modes=("rev",),
                atol=1e-5, rtol=1e-5)


def _build(params):
    """A hybrid arm built from traced parameters, as in an optax identification loop."""
    link = kj.RigidBody(params["mass"], jnp.stack([params["length"] / 2, 0.0, 0.0]),
                        params["mass"] * params["length"] ** 2 / 12 * jnp.diag(jnp.array([0.01, 1.0, 1.0])),
                        tip=kj.lie.make_pose(jnp.eye(3), jnp.stack([params["length"], 0.0, 0.0])))
    cc = kj.PlanarConstantCurvature(params["cc_length"], 0.02, params["density"], params["youngs"], params["eta"],
                                    order=3, n_radial=1, n_angular=3)
    return kj.Chain([(kj.Revolute((0, 0, 1)), link), (kj.Revolute((0, 0, 1)), cc)], gravity=(0.0, -9.81, 0.0))


PARAMS = {"mass": 1.3, "length": 0.4, "cc_length": 0.3, "density": 1100.0, "youngs": 2e5, "eta": 0.1}


def test_grads_wrt_physical_parameters_built_inside_grad(rng):
    q, qd, qdd = random_state(rng, 3, 0.7)
    # scale parameters to O(1) so that finite differences are well conditioned
    scale = {k: jnp.asarray(v) for k, v in PARAMS.items()}
    unit = {k: jnp.asarray(1.0) for k in PARAMS}

    def f(p):
        return kj.inverse_dynamics(_build(jax.tree.map(lambda a, b: a * b, p, scale)), q, qd, qdd)

    check_grads(f, (unit,), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    # the same gradient through jit
    g1 = jax.jacrev(f)(unit)
    g2 = jax.jit(jax.jacrev(f))(unit)
    for k in PARAMS:
        np.testing.assert_allclose(g1[k], g2[k], rtol=1e-12, atol=1e-12)


def test_filter_grad_reaches_chain_leaves(rng):
    chain = _build({k: jnp.asarray(v) for k, v in PARAMS.items()})
    q, qd, qdd = random_state(rng, chain.nq, 0.7)

    def loss(c):
        return jnp.sum(kj.inverse_dynamics(c, q, qd, qdd) ** 2)

    grads = eqx.filter_grad(loss)(chain)
    # d loss / d (gravity) by finite differences
    eps = 1e-6
    for k in range(3):
        dg = jnp.zeros(3).at[k].set(eps)
        plus = eqx.tree_at(lambda c: c.gravity, chain, chain.gravity + dg)
        minus = eqx.tree_at(lambda c: c.gravity, chain, chain.gravity - dg)
        fd = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(grads.gravity[k], fd, rtol=1e-6, atol=1e-6)


def test_filter_jit_does_not_recompile_for_new_parameter_values(rng):
    q, qd, qdd = random_state(rng, 3, 0.7)

    @eqx.filter_jit
    @eqx.debug.assert_max_traces(max_traces=1)
    def tau(c):
        return kj.inverse_dynamics(c, q, qd, qdd)

    for scale in (1.0, 1.1, 0.9):
        tau(_build({k: jnp.asarray(v * scale) for k, v in PARAMS.items()}))
