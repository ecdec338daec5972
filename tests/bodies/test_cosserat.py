"""Cosserat PCS/GVS rods: EL reference, exact kinematic identities, Magnus accuracy, stiffness."""

import copy

import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import check_against_el, check_geometry_smooth_at, check_smooth_at

import kane_jax as kj
from kane_jax.bodies.cosserat import CosseratGVS, CosseratPCS
from kane_jax.bodies.spatial_cc import SpatialConstantCurvature
from kane_jax.bodies.strain_bases import ChebyshevBasis, LegendreBasis, MonomialBasis, PiecewiseGaussianCurvature

SMALL = dict(order=2, n_radial=1, n_angular=3)


def _hat(xi):
    w, v = xi[:3], xi[3:]
    return np.array([[0, -w[2], w[1], v[0]], [w[2], 0, -w[0], v[1]], [-w[1], w[0], 0, v[2]], [0, 0, 0, 0.0]])


def expm(a):
    """Matrix exponential by scaling and squaring of a 30-term Taylor series (NumPy, independent)."""
    k = max(0, int(np.ceil(np.log2(max(np.linalg.norm(a, 1), 1e-300)))) + 1)
    b = a / 2**k
    out, term = np.eye(len(a)), np.eye(len(a))
    for j in range(1, 30):
        term = term @ b / j
        out = out + term
    for _ in range(k):
        out = out @ out
    return out


def _chebyshev_strain(q, length, sigma):
    """ξ(σ) of a rod with ChebyshevBasis(2) on all six strains, in NumPy: q[2j] T₀ + q[2j+1] T₁(2σ − 1)."""
    q = np.asarray(q).reshape(6, 2)
    return (q[:, 0] + q[:, 1] * (2 * sigma - 1) + np.array([0, 0, 0, 1.0, 0, 0])) * length


def _reference_pose(q, length, sigma_end, steps=4000):
    """g' = g ξ̂(σ) integrated by classical RK4 with many steps (independent of the Magnus code)."""
    g, h = np.eye(4), sigma_end / steps
    f = lambda s, g: g @ _hat(_chebyshev_strain(q, length, s))  # noqa: E731
    for i in range(steps):
        s = i * h
        k1 = f(s, g)
        k2 = f(s + h / 2, g + h / 2 * k1)
        k3 = f(s + h / 2, g + h / 2 * k2)
        k4 = f(s + h, g + h * k3)
        g = g + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return g


def test_pcs_matches_euler_lagrange(rng):
    rod = CosseratPCS(0.25, 0.015, 1100.0, 3e5, tip_radius=0.008, damping=0.02,
                      strains=("twist", "bend_y", "bend_z", "stretch", "shear_z"), **SMALL)
    chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), rod)], gravity=(1.0, 0.0, -9.81))
    check_against_el(chain, rng, scale=0.5)


def test_gvs_matches_euler_lagrange(rng):
    rod = CosseratGVS(0.2, 0.01, 1000.0, 2e5, tip_radius=0.006, damping=0.01,
                      basis=(LegendreBasis(2), ChebyshevBasis(2), MonomialBasis(1)),
                      strains=("bend_y", "bend_z", "stretch"), **SMALL)
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0)), rod)])
    check_against_el(chain, rng, scale=0.8)


def test_pcs_bending_equals_spatial_cc(rng):
    length = 0.3
    pcs = CosseratPCS(length, 0.02, strains=("bend_y", "bend_z", "stretch"))
    cc = SpatialConstantCurvature(length, 0.02)
    np.testing.assert_allclose(np.asarray(pcs.points), np.asarray(cc.points), atol=0)
    np.testing.assert_allclose(np.asarray(pcs.weights), np.asarray(cc.weights), rtol=1e-14)
    for _ in range(3):
        q = rng.normal(size=3) * np.array([3.0, 3.0, 0.2])
        q_cc = jnp.asarray(q * length)  # θ = L κ, δL = L v_x
        np.testing.assert_allclose(np.asarray(pcs.tip(jnp.asarray(q))), np.asarray(cc.tip(q_cc)), atol=1e-15)
        np.testing.assert_allclose(np.asarray(pcs.points_in_frame(jnp.asarray(q))),
                                   np.asarray(cc.points_in_frame(q_cc)), atol=1e-15)


def test_pcs_bending_rod_dynamics_equal_the_general_form(rng):
    # A PCS rod with bend and stretch strains takes the bending closed form of its jets; the same rod
    # forced onto the general SE(3) form (the older path) gives the same ID, M and FD to 1e-12.
    pcs = CosseratPCS(0.2, 0.01, 1070.0, 1e6, damping=0.01, strains=("bend_y", "bend_z", "stretch"))
    general = copy.copy(pcs)
    object.__setattr__(general, "bending", False)
    assert (pcs.twist_form, general.twist_form) == ("bending", "se3")
    chains = [kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), rod), (kj.Fixed(), rod)]) for rod in (pcs, general)]
    for scale in (0.0, 1e-9, 2.0):
        q = jnp.asarray(rng.normal(size=7) * scale)
        qd, qdd = jnp.asarray(rng.normal(size=7)), jnp.asarray(rng.normal(size=7))
        new, old = ([kj.inverse_dynamics(c, q, qd, qdd), kj.mass_matrix(c, q), kj.forward_dynamics(c, q, qd, qdd)]
                    for c in chains)
        for a, b in zip(new, old):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(b))))


def test_gvs_constant_basis_equals_pcs(rng):
    kw = dict(tip_radius=0.004, order=3, n_radial=1, n_angular=3, damping=0.03)
    pcs = CosseratPCS(0.2, 0.01, **kw)
    gvs = CosseratGVS(0.2, 0.01, basis=MonomialBasis(1), **kw)
    np.testing.assert_allclose(np.asarray(gvs.stiffness), np.asarray(pcs.stiffness), rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.asarray(gvs.damping), np.asarray(pcs.damping), rtol=1e-12, atol=0)
    q = jnp.asarray(rng.normal(size=6) * np.array([4, 4, 4, 0.2, 0.2, 0.2]))
    np.testing.assert_allclose(np.asarray(gvs.tip(q)), np.asarray(pcs.tip(q)), atol=1e-14)
    np.testing.assert_allclose(np.asarray(gvs.local_points(q)), np.asarray(pcs.local_points(q)), atol=1e-14)
    s = jnp.array([0.41, 0.002, -0.003])  # between nodes: one partial Magnus step
    np.testing.assert_allclose(np.asarray(gvs.position(q, s)), np.asarray(pcs.position(q, s)), atol=1e-15)
    # and the PCS pose is the exact exponential
    np.testing.assert_allclose(np.asarray(pcs.tip(q)), expm(_hat(np.asarray(pcs.strain(q)) * 0.2)), atol=1e-13)


def test_gvs_magnus_converges_to_ode_solution(rng):
    q = rng.normal(size=12) * 2.0
    errs = []
    for order in (4, 8):
        rod = CosseratGVS(0.3, 0.01, basis=ChebyshevBasis(2), order=order, n_radial=0)
        ref = _reference_pose(q, 0.3, 1.0)
        errs.append(np.max(np.abs(np.asarray(rod.tip(jnp.asarray(q))) - ref)))
        # a point between nodes, and the mass points (at the nodes) against the same ODE
        sig = 0.53
        p = np.asarray(rod.position(jnp.asarray(q), jnp.array([sig, 0.0, 0.0])))
        assert np.max(np.abs(p - _reference_pose(q, 0.3, sig)[:3, 3])) < 1e-3
    assert errs[0] < 1e-3, errs
    assert errs[1] < errs[0] / 8, errs  # 4th order: halving the (uneven) steps gains ~12-16x; 2nd order ~4x


def test_pgc_basis_rod_with_constant_modes_equals_pcs(rng):
    length = 0.2
    pgc = CosseratGVS(length, 0.01, basis=PiecewiseGaussianCurvature(length), order=3, n_radial=1, n_angular=3)
    assert pgc.nq == 5
    q = rng.normal(size=5) * np.array([1.0, 0.0, 1.0, 0.0, 0.02])
    pcs = CosseratPCS(length, 0.01, strains=("bend_y", "bend_z", "stretch"), order=3, n_radial=1, n_angular=3)
    q_pcs = jnp.asarray([-q[2], q[0], q[4]]) / length  # κ_y = −q₃/L, κ_z = q₁/L, v_x − 1 = q₅/L
    np.testing.assert_allclose(np.asarray(pgc.tip(jnp.asarray(q))), np.asarray(pcs.tip(q_pcs)), atol=1e-14)


def test_cosserat_stiffness_from_material(rng):
    e, nu, eta, length, r0, r1 = 2e6, 0.4, 0.05, 0.3, 0.02, 0.01
    pcs = CosseratPCS(length, r0, youngs_modulus=e, poisson_ratio=nu, tip_radius=r1, damping=eta)
    g = e / (2 * (1 + nu))
    x = np.linspace(0, 1, 200001)
    r = r0 + (r1 - r0) * x
    mean = lambda f: np.trapezoid(f, x)  # noqa: E731
    expected = length * np.array([g * mean(np.pi * r**4 / 2), e * mean(np.pi * r**4 / 4), e * mean(np.pi * r**4 / 4),
                                  e * mean(np.pi * r**2), g * mean(np.pi * r**2), g * mean(np.pi * r**2)])
    np.testing.assert_allclose(np.diag(np.asarray(pcs.stiffness)), expected, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(pcs.damping), eta * np.asarray(pcs.stiffness), rtol=1e-15)
    # GVS: K = L ∫ Φᵀ H Φ dσ, here E I ∫ P_j P_k dσ = E I δ_jk / (2k + 1) on a straight rod
    gvs = CosseratGVS(length, r0, youngs_modulus=e, basis=LegendreBasis(3), strains=("bend_z",))
    np.testing.assert_allclose(np.asarray(gvs.stiffness), length * e * np.pi * r0**4 / 4 * np.diag([1, 1 / 3, 1 / 5]),
                               rtol=1e-12, atol=1e-14)  # entries ~0.08
    # mass: ρ π ∫ r² dX
    assert abs(float(jnp.sum(pcs.weights)) - 1000.0 * length * mean(np.pi * r**2)) < 1e-9


def test_pcs_geometry_smooth_at_straight_configuration(rng):
    """All six strains to 4th order (GVS: the chain-level check below holds its geometry's)."""
    pcs = CosseratPCS(0.2, 0.01, **SMALL)
    check_geometry_smooth_at(pcs, jnp.zeros(6), rng)


@pytest.mark.slow  # subsumed in the default run by test_gvs_dynamics_smooth_at_straight_configuration
def test_gvs_geometry_smooth_at_straight_configuration(rng):
    gvs = CosseratGVS(0.2, 0.01, basis=LegendreBasis(2), strains=("twist", "bend_y", "bend_z"), **SMALL)
    check_geometry_smooth_at(gvs, jnp.zeros(6), rng)


def test_gvs_dynamics_smooth_at_straight_configuration(rng):
    """Chain-level ID, M, FD with full first and second q-derivatives at rest (≈ 100 s of compile)."""
    gvs = CosseratGVS(0.2, 0.01, basis=LegendreBasis(2), strains=("bend_y",), **SMALL)
    check_smooth_at(kj.Chain([(kj.Fixed(), gvs)]), jnp.zeros(2), rng)


@pytest.mark.slow  # ≈ 120 s of compile; PCS's pose is the se3_exp the GVS test differentiates, its geometry's
# 4th-order jets are in the default run, and GVS with a constant basis equals PCS (test above)
def test_pcs_dynamics_smooth_at_straight_configuration(rng):
    pcs = CosseratPCS(0.2, 0.01, strains=("bend_y", "bend_z", "stretch"), **SMALL)
    check_smooth_at(kj.Chain([(kj.Fixed(), pcs)]), jnp.zeros(3), rng)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="strains"):
        CosseratPCS(strains=(False,) * 6)
    with pytest.raises(ValueError, match="strains"):
        CosseratPCS(strains=("bend",))
    with pytest.raises(ValueError, match="poisson_ratio"):
        CosseratPCS(poisson_ratio=0.7)
    with pytest.raises(ValueError, match="tip_radius"):
        CosseratPCS(tip_radius=-0.01)
    with pytest.raises(ValueError, match="rest_strain"):
        CosseratPCS(rest_strain=np.zeros(5))
    with pytest.raises(TypeError, match="basis"):
        CosseratGVS(basis="legendre")
    with pytest.raises(ValueError, match="basis"):
        CosseratGVS(basis=(LegendreBasis(2),), strains=("bend_y", "bend_z"))
