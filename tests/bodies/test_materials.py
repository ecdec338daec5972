"""Hyperelastic materials and their quadrature over a body (kane_jax/bodies/materials.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from kane_jax.bodies import materials as mat
from kane_jax.lie import so3_exp


def _elasticity_tensor(lam, mu):
    """Isotropic ℂ_ijkl = λ δij δkl + μ (δik δjl + δil δjk), written out independently."""
    d = np.eye(3)
    return lam * np.einsum("ij,kl->ijkl", d, d) + mu * (np.einsum("ik,jl->ijkl", d, d) + np.einsum("il,jk->ijkl", d, d))


def _hessian_at_identity(material):
    w = lambda f: material.energy_density(f)  # noqa: E731
    return np.asarray(jax.jit(jax.hessian(w))(jnp.eye(3)))  # compiled: eagerly ≈ 70 small programs


def test_lame_parameters():
    lam, mu = mat.lame_parameters(2.6, 0.3)
    np.testing.assert_allclose([lam, mu], [2.6 * 0.3 / (1.3 * 0.4), 1.0], rtol=1e-15)


def test_small_strain_limit_neo_hookean_equals_linear():
    # second derivatives at F = I: both equal the isotropic elasticity tensor (minor symmetrized)
    e, nu = 1.3e6, 0.37
    lam, mu = mat.lame_parameters(e, nu)
    ref = _elasticity_tensor(float(lam), float(mu))
    for m in (mat.NeoHookean(e, nu), mat.LinearElastic(e, nu)):
        h = _hessian_at_identity(m)
        assert np.all(np.isfinite(h))
        np.testing.assert_allclose(h, ref, rtol=1e-12, atol=1e-12 * e)
        # energy and stress vanish at F = I
        energy, stress = jax.jit(jax.value_and_grad(m.energy_density))(jnp.eye(3))
        assert abs(float(energy)) < 1e-12 * e
        np.testing.assert_allclose(stress, 0.0, atol=1e-12 * e)


def test_objectivity_and_neo_hookean_values(rng):
    f = jnp.eye(3) + 0.2 * jnp.asarray(rng.normal(size=(3, 3)))
    rot = so3_exp(jnp.asarray(rng.normal(size=3)))
    e, nu = 2e6, 0.3
    lam, mu = (float(x) for x in mat.lame_parameters(e, nu))
    for m in (mat.NeoHookean(e, nu), mat.LinearElastic(e, nu)):
        np.testing.assert_allclose(m.energy_density(rot @ f), m.energy_density(f), rtol=1e-12)
    # closed forms written with numpy
    fn = np.asarray(f)
    j = np.linalg.det(fn)
    nh = 0.5 * mu * (np.sum(fn**2) - 3) - mu * np.log(j) + 0.5 * lam * np.log(j) ** 2
    np.testing.assert_allclose(mat.NeoHookean(e, nu).energy_density(f), nh, rtol=1e-13)
    eg = 0.5 * (fn.T @ fn - np.eye(3))
    svk = mu * np.sum(eg**2) + 0.5 * lam * np.trace(eg) ** 2
    np.testing.assert_allclose(mat.LinearElastic(e, nu).energy_density(f), svk, rtol=1e-13)
    # incompressible Neo-Hookean (paper 003 §6.2): W = μ/2 (I1 − 3) with μ = E/3
    np.testing.assert_allclose(mat.NeoHookean(e, 0.5).energy_density(f), e / 6 * (np.sum(fn**2) - 3), rtol=1e-13)


def test_kelvin_voigt_uniaxial_rate():
    # F = I, Ḟ = diag(ε̇, 0, 0): R = η (μ + λ/2) ε̇²  (viscous stress η ℂ:Ė)
    e, nu, eta, rate = 1e6, 0.25, 0.1, 0.7
    lam, mu = (float(x) for x in mat.lame_parameters(e, nu))
    m = mat.LinearElastic(e, nu, eta)
    r = m.dissipation_density(jnp.eye(3), jnp.diag(jnp.array([rate, 0.0, 0.0])))
    np.testing.assert_allclose(r, eta * (mu + 0.5 * lam) * rate**2, rtol=1e-14)


def test_body_quadrature_affine_map(rng):
    # g(q, s) = diag(1 + q) s on a box: F = diag(1 + q) at every node, U = V W(F) exactly
    q = jnp.asarray(rng.uniform(-0.2, 0.2, 3))
    qd = jnp.asarray(rng.normal(size=3))
    pts = jnp.asarray(rng.uniform(-1, 1, (5, 3)))
    vols = jnp.asarray(rng.uniform(0.1, 0.2, 5))
    position = lambda x, s: (1 + x) * s  # noqa: E731
    m = mat.NeoHookean(1e5, 0.3, 0.05)
    ref_inv = jnp.eye(3)
    u = mat.strain_energy(m, position, q, pts, vols, ref_inv)
    np.testing.assert_allclose(u, jnp.sum(vols) * m.energy_density(jnp.diag(1 + q)), rtol=1e-13)
    force = mat.internal_force(m, position, q, qd, pts, vols, ref_inv)
    # elastic part by central finite differences of U, viscous part from the closed form
    h = 1e-6
    fd = np.array([(mat.strain_energy(m, position, q + h * e, pts, vols, ref_inv)
                    - mat.strain_energy(m, position, q - h * e, pts, vols, ref_inv)) / (2 * h) for e in np.eye(3)])
    lam, mu = (float(x) for x in m.small_strain_lame())
    f = np.diag(1 + np.asarray(q))
    # Ė = F Ḟ (diagonal) → ∂R/∂q̇_i = V η F_ii (2μ Ė_ii + λ tr Ė) F_ii
    edot = np.diag(f) * np.asarray(qd)
    visc = float(jnp.sum(vols)) * 0.05 * np.diag(f) * (2 * mu * edot + lam * edot.sum())
    np.testing.assert_allclose(force, fd + visc, rtol=1e-7)


def test_bad_parameters():
    with pytest.raises(ValueError, match="poisson_ratio"):
        mat.LinearElastic(1e6, 0.5)
    with pytest.raises(ValueError, match="youngs_modulus"):
        mat.NeoHookean(-1.0, 0.3)
    with pytest.raises(ValueError, match="viscosity"):
        mat.NeoHookean(1e6, 0.3, -0.1)
    with pytest.raises(ValueError, match="ref_inverse"):
        mat.deformation_gradients(lambda q, s: s, jnp.zeros(1), jnp.zeros((4, 3)), jnp.eye(2))
