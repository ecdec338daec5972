"""Planar constant curvature: closed-form kinematics and the straight configuration (q = 0)."""

import jax
import jax.numpy as jnp
import numpy as np
from helpers.checks import check_smooth_at

import kane_jax as kj


def test_kinematics_closed_form():
    body = kj.PlanarConstantCurvature(0.5, 0.02, 1000.0, 1e5, elongation=True, order=3)
    theta, delta = 0.8, 0.1
    q = jnp.array([theta, delta])
    ell = 0.5 * 1.1
    tip = body.tip(q)
    np.testing.assert_allclose(tip[:2, 3], [ell * np.sin(theta) / theta, ell * (1 - np.cos(theta)) / theta],
                               rtol=1e-14)
    np.testing.assert_allclose(tip[:2, :2], [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]],
                               atol=1e-15)
    # material point at σ = 1 on the backbone coincides with the tip origin; the arc has length ℓ
    np.testing.assert_allclose(body.position(q, jnp.array([1.0, 0.0, 0.0])), tip[:3, 3], atol=1e-15)
    sig = jnp.linspace(0, 1, 2001)
    pts = jax.vmap(lambda s: body.position(q, jnp.stack([s, 0.0, 0.0])))(sig)
    np.testing.assert_allclose(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)), ell, rtol=1e-6)
    # mass = ρ π r² L, stiffness E I / L
    np.testing.assert_allclose(jnp.sum(body.weights), 1000.0 * np.pi * 0.02**2 * 0.5, rtol=1e-12)
    np.testing.assert_allclose(body.stiffness[0, 0], 1e5 * np.pi * 0.02**4 / 4 / 0.5, rtol=1e-12)


def test_dynamics_smooth_at_zero_curvature(rng):
    """ID, M, FD and their full first and second q-derivatives at q = 0 and at 1e-9 from it, on one
    chain holding both variants (with and without elongation) and a learned (MLP) body, whose rest
    configuration is checked here at chain level: one trace instead of one compile per function,
    variant and model."""
    from kane_jax.bodies.learned import LearnedBody

    with_dl = kj.PlanarConstantCurvature(0.3, 0.03, 1000.0, 1e5, 0.1, elongation=True, order=3)
    bend_only = kj.PlanarConstantCurvature(0.25, 0.025, 1000.0, 1e5, 0.1, elongation=False, order=3)
    learned = LearnedBody(2, length=0.1, radius=0.01, key=jax.random.PRNGKey(3), stiffness=5.0, damping=0.1,
                          width_size=4, depth=1, order=2, n_radial=1, n_angular=3)
    chain = kj.Chain([(kj.Revolute((0, 0, 1)), with_dl), (kj.Fixed(), bend_only), (kj.Fixed(), learned)],
                     gravity=(0.0, -9.81, 0.0))
    check_smooth_at(chain, jnp.zeros(chain.nq), rng)
