"""Mass matrix, forward dynamics and their identities."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from helpers.robots import mixed_chain, random_state

import kane_jax as kj
from kane_jax.reference import euler_lagrange as el


def test_mass_matrix_matches_el_and_is_spd(rng):
    chain = mixed_chain(rng)
    m_fn = eqx.filter_jit(kj.mass_matrix)
    for _ in range(2):
        q = jnp.asarray(rng.normal(size=chain.nq))
        m = m_fn(chain, q)
        m_ref = el.mass_matrix(chain, q)
        np.testing.assert_allclose(m, m_ref, rtol=0, atol=1e-12 * np.max(np.abs(m_ref)))
        np.testing.assert_allclose(m, m.T, rtol=0, atol=1e-14 * np.max(np.abs(m)))
        assert np.linalg.eigvalsh(np.asarray(m)).min() > 0


def test_identities_nle_and_forward_inverse(rng):
    chain = mixed_chain(rng)
    q, qd, qdd = random_state(rng, chain.nq)
    tau = kj.inverse_dynamics(chain, q, qd, qdd)
    nle = kj.nonlinear_effects(chain, q, qd)
    np.testing.assert_allclose(nle, kj.inverse_dynamics(chain, q, qd, jnp.zeros_like(q)), rtol=1e-14, atol=1e-14)
    # τ = M q̈ + nle
    np.testing.assert_allclose(tau, kj.mass_matrix(chain, q) @ qdd + nle, rtol=1e-11, atol=1e-11)
    # forward_dynamics(inverse_dynamics(q̈)) == q̈
    np.testing.assert_allclose(kj.forward_dynamics(chain, q, qd, tau), qdd, rtol=1e-9, atol=1e-9)
    # gravity vector = ∂V_grav/∂q: V with stiffness removed equals V - elastic part
    g = kj.generalized_gravity(chain, q)
    zero_g = kj.inverse_dynamics_full(chain, q, 0 * q, 0 * q, gravity=jnp.zeros(3)).tau  # K q only
    np.testing.assert_allclose(kj.inverse_dynamics(chain, q, 0 * q, 0 * q), g + zero_g, rtol=1e-12, atol=1e-12)


def test_energies_match_el(rng):
    chain = mixed_chain(rng)
    q, qd, _ = random_state(rng, chain.nq)
    # the Euler-Lagrange oracle as one compiled program (eagerly ≈ 150 small ones)
    ref_t, ref_v = jax.jit(lambda q, qd: (el.kinetic_energy(chain, q, qd), el.potential_energy(chain, q)))(q, qd)
    np.testing.assert_allclose(kj.kinetic_energy(chain, q, qd), ref_t, rtol=1e-12)
    np.testing.assert_allclose(kj.potential_energy(chain, q), ref_v, rtol=1e-12, atol=1e-12)


def test_forward_kinematics_and_points(rng):
    chain = mixed_chain(rng)
    q = jnp.asarray(rng.normal(size=chain.nq))
    poses = kj.forward_kinematics(chain, q)
    x = np.eye(4)
    for i, (joint, body) in enumerate(chain.modules):
        qi = np.asarray(q[chain.coordinate_slice(i)])
        prox = x @ np.asarray(joint.transform(jnp.asarray(qi[: joint.nq])))
        pts = kj.body_points(chain, q)[i]
        local = np.asarray(body.points_in_frame(jnp.asarray(qi[joint.nq:])))
        np.testing.assert_allclose(pts, local @ prox[:3, :3].T + prox[:3, 3][None], atol=1e-13)
        x = prox @ np.asarray(body.tip(jnp.asarray(qi[joint.nq:])))
        np.testing.assert_allclose(poses[i], x, atol=1e-13)
