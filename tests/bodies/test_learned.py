"""Learned (MLP) kinematics: EL reference, rest shape, three-point distal frame, weight gradients."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import check_against_el, check_geometry_smooth_at

import kane_jax as kj
from kane_jax.bodies.learned import LearnedBody

SMALL = dict(order=2, n_radial=1, n_angular=3, width_size=8, depth=1)


def _body(key=0, **kw):
    return LearnedBody(2, length=0.2, radius=0.02, key=jax.random.PRNGKey(key), stiffness=5.0, damping=0.1,
                       **{**SMALL, **kw})


def test_id_matches_euler_lagrange(rng):
    chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), _body())], gravity=(0.0, 1.0, -9.81))
    check_against_el(chain, rng, scale=0.8)


def test_rest_shape_and_tip_frame(rng):
    body = _body()
    pts = np.asarray(body.points_in_frame(jnp.zeros(2)))
    s = np.asarray(body.points)
    np.testing.assert_allclose(pts, np.stack([0.2 * s[:, 0], s[:, 1], s[:, 2]], axis=1), atol=1e-16)
    expected = np.eye(4)
    expected[0, 3] = 0.2
    np.testing.assert_allclose(np.asarray(body.tip(jnp.zeros(2))), expected, atol=1e-15)
    # deformed: the tip frame is a rigid transform at the deformed tip centre, x normal to the face
    q = jnp.asarray(rng.normal(size=2))
    tip = np.asarray(body.tip(q))
    np.testing.assert_allclose(tip[:3, :3].T @ tip[:3, :3], np.eye(3), atol=1e-14)
    assert abs(np.linalg.det(tip[:3, :3]) - 1) < 1e-14
    np.testing.assert_allclose(tip[:3, 3], np.asarray(body.position(q, jnp.array([1.0, 0.0, 0.0]))), atol=1e-16)
    p1 = np.asarray(body.position(q, jnp.array([1.0, 0.02, 0.0])))
    np.testing.assert_allclose(tip[:3, 1], (p1 - tip[:3, 3]) / np.linalg.norm(p1 - tip[:3, 3]), atol=1e-14)
    # base section fixed (rigid proximal contact area)
    np.testing.assert_allclose(np.asarray(body.position(q, jnp.array([0.0, 0.01, -0.01]))), [0, 0.01, -0.01],
                               atol=1e-16)


def test_gradient_wrt_network_weights_matches_finite_differences(rng):
    body = _body(3)
    q, qd, qdd = (jnp.asarray(rng.normal(size=3) * 0.5) for _ in range(3))
    params, static = eqx.partition(body.network, eqx.is_inexact_array)

    def loss(p):
        moved = eqx.tree_at(lambda b: b.network, body, eqx.combine(p, static))
        chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), moved)])
        return jnp.sum(kj.inverse_dynamics(chain, q, qd, qdd) ** 2)

    grad = eqx.filter_jit(jax.grad(loss))(params)
    loss_j = eqx.filter_jit(loss)
    leaves, tree = jax.tree.flatten(params)
    dirs = jax.tree.unflatten(tree, [jnp.asarray(rng.normal(size=x.shape)) for x in leaves])
    eps = 1e-6
    plus = jax.tree.map(lambda p, d: p + eps * d, params, dirs)
    minus = jax.tree.map(lambda p, d: p - eps * d, params, dirs)
    fd = (loss_j(plus) - loss_j(minus)) / (2 * eps)
    ad = sum(jnp.sum(g * d) for g, d in zip(jax.tree.leaves(grad), jax.tree.leaves(dirs)))
    assert abs(float(ad - fd)) < 1e-6 * abs(float(ad)), (float(ad), float(fd))


def test_geometry_smooth_at_rest(rng):
    check_geometry_smooth_at(_body(), jnp.zeros(2), rng)


def test_bad_input_raises():
    with pytest.raises(TypeError, match="key"):
        LearnedBody(2)
    with pytest.raises(ValueError, match="nq"):
        LearnedBody(0, key=jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="network"):
        LearnedBody(2, network=eqx.nn.MLP(5, 2, 4, 1, key=jax.random.PRNGKey(0)))
