"""Planar constant curvature: closed-form kinematics and the straight configuration (q = 0)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

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


@pytest.mark.parametrize("elongation", [False, True])
def test_finite_and_continuous_at_zero_curvature(elongation):
    """ID, M, FD and the Jacobians of ID and M at and next to q = 0; with elongation also the ID's
    q-Hessian and FD's Jacobian.

    The ID's q-Hessian at a generic q̈ contains ∂²M/∂q² q̈ and the bias term's, so M's and FD's
    second derivatives add nothing singular (FD = M⁻¹(…) with M SPD); they are left out because
    their compile time (≈ 45 s and 80 s) would dominate the suite.
    """
    body = kj.PlanarConstantCurvature(0.3, 0.03, 1000.0, 1e5, 0.1, elongation=elongation, order=3)
    chain = kj.Chain([(kj.Revolute((0, 0, 1)), body), (kj.Fixed(), body)], gravity=(0.0, -9.81, 0.0))
    n = chain.nq
    qd = jnp.linspace(0.3, -0.4, n)
    qdd = jnp.linspace(-0.2, 0.5, n)

    def id_(q):
        return kj.inverse_dynamics(chain, q, qd, qdd)

    def m_(q):
        return kj.mass_matrix(chain, q)

    def fd(q):
        return kj.forward_dynamics(chain, q, qd, qdd)

    fns = [jax.jit(id_), jax.jit(jax.jacfwd(id_)), jax.jit(m_), jax.jit(jax.jacfwd(m_)), jax.jit(fd)]
    if elongation:  # the elongation model contains the other one (δL = 0): same sin(x)/x series
        fns += [jax.jit(jax.jacfwd(jax.jacfwd(id_))), jax.jit(jax.jacfwd(fd))]
    values = {}
    for eps in (0.0, 1e-9):
        q = jnp.zeros(n).at[1].set(eps).at[-1].set(eps)
        values[eps] = [f(q) for f in fns]
        for leaf in jax.tree.leaves(values[eps]):
            assert np.all(np.isfinite(np.asarray(leaf)))
    for a, b in zip(jax.tree.leaves(values[0.0]), jax.tree.leaves(values[1e-9])):
        scale = max(1.0, float(jnp.max(jnp.abs(a))))
        assert float(jnp.max(jnp.abs(a - b))) < 1e-6 * scale  # continuous: O(1e-9) change
