"""PCC with variable radius (paper 000 Sim. 1): geometry, chambers, ID vs EL, smoothness at rest."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import check_against_el_at, check_body_smooth_at_rest, check_smooth_at

import kane_jax as kj
from kane_jax.bodies.variable_radius import VariableRadiusPCC, chamber_segment_area

SMALL = dict(order=3, n_radial=1, n_angular=4, chamber_order=3, chamber_across=2, chamber_along=3)


def _paper_bump(s1, s2, length):
    """b(s1, s2) exactly as printed in paper 000 (s1 in metres, s2 the section angle)."""
    return (np.exp(-length / (length**2 / 4 - (s1 - length / 2) ** 2))
            * np.exp(-1 / (np.pi**2 / 4 - (s2 - np.pi / 2) ** 2)))


def _states(rng, nq, body_slice, n=2):
    scale = np.full(nq, 0.5)
    scale[body_slice] = [0.5, 0.02, 0.003, 0.003]  # θ [rad], δL [m], δR [m]
    return [jnp.asarray(rng.normal(size=(n, nq)) * scale) for _ in range(3)]


def test_radius_change_is_the_normalized_paper_bump(rng):
    body = VariableRadiusPCC(**SMALL)
    length = 0.2
    q = jnp.array([0.0, 0.0, 0.003, -0.002])
    peak = _paper_bump(length / 2, np.pi / 2, length)
    dr = jax.jit(jax.vmap(lambda s: body.radius_change(q, s)))
    sigma, r, psi = rng.uniform(0.05, 0.95, 6), rng.uniform(0.001, 0.02, 6), rng.uniform(0.05, np.pi - 0.05, 6)
    # chamber 1 (y > 0): ψ from +z toward +y; chamber 2: the same angle measured from −z toward −y
    s1 = jnp.asarray(np.stack([sigma, r * np.sin(psi), r * np.cos(psi)], axis=1))
    s2 = jnp.asarray(np.stack([sigma, -r * np.sin(psi), -r * np.cos(psi)], axis=1))
    b = _paper_bump(sigma * length, psi, length) / peak
    np.testing.assert_allclose(dr(s1), 0.003 * b, rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(dr(s2), -0.002 * b, rtol=1e-12, atol=1e-20)
    # centre of chamber 1: δR = q3 exactly; the point moves radially by δR·r/R0. Ends and axis untouched.
    ends = jnp.array([[0.5, 0.02, 0.0], [0.0, 0.01, 0.0], [1.0, 0.01, 0.0], [0.5, 0.0, 0.0], [0.5, 0.0, 0.01]])
    np.testing.assert_allclose(dr(ends), [0.003, 0.0, 0.0, 0.0, 0.0], rtol=1e-14, atol=0)
    np.testing.assert_allclose(body.position(q, ends[0]), [0.1, 0.023, 0.0], rtol=1e-14)


def test_chamber_volumes_rest_and_sensitivities():
    body = VariableRadiusPCC(chamber_order=4, chamber_across=8, chamber_along=8)
    v0, jac = jax.jit(lambda x: (body.chamber_volumes(x), jax.jacfwd(body.chamber_volumes)(x)))(jnp.zeros(4))
    ref = (0.2 - 2 * 0.004) * chamber_segment_area(0.02, 0.004)
    np.testing.assert_allclose(v0, [ref, ref], rtol=1e-9)
    # bending toward +y shortens chamber 1 and lengthens chamber 2 by the same amount
    np.testing.assert_allclose(jac[0, 0], -jac[1, 0], rtol=1e-12)
    assert jac[0, 0] < 0
    # elongation: dV/dδL = V/L0 for both (uniform axial stretch of a prismatic region)
    np.testing.assert_allclose(jac[:, 1], v0 / 0.2, rtol=1e-12)
    # each radius coordinate inflates only its own chamber
    assert jac[0, 2] > 0 and jac[1, 3] > 0
    np.testing.assert_allclose([jac[0, 3], jac[1, 2]], 0.0, atol=1e-20)


def test_rest_shape_and_tip():
    body = VariableRadiusPCC(**SMALL)
    z = jnp.zeros(4)
    pts = jax.jit(lambda x: body.points_in_frame(x))(z)
    np.testing.assert_allclose(pts, body.points * jnp.array([0.2, 1.0, 1.0])[None, :], atol=1e-16)
    rest_tip = np.eye(4)
    rest_tip[0, 3] = 0.2
    np.testing.assert_allclose(body.tip(z), rest_tip, atol=1e-16)
    theta = 0.7
    tip = body.tip(jnp.array([theta, 0.01, 0.002, 0.0]))
    np.testing.assert_allclose(tip[:2, 3], 0.21 * np.array([np.sin(theta), 1 - np.cos(theta)]) / theta, rtol=1e-14)


def test_tangent_stiffness_symmetric_positive():
    body = VariableRadiusPCC(**SMALL)
    k, d = jax.jit(lambda b: (b.stiffness, b.damping))(body)
    np.testing.assert_allclose(k, k.T, rtol=1e-12, atol=1e-9)
    assert np.all(np.linalg.eigvalsh(np.asarray(k)) > 0)
    np.testing.assert_allclose(d, 0.1 * k, rtol=1e-12, atol=1e-9)  # Kelvin–Voigt: D = η K at rest


def test_id_matches_euler_lagrange_alone(rng):
    chain = kj.Chain([(kj.Revolute((0, 0, 1)), VariableRadiusPCC(**SMALL))], gravity=(-9.81, 0.0, 0.0))
    check_against_el_at(chain, _states(rng, chain.nq, slice(1, 5)))


# a subset of test_lvp.py::test_id_matches_euler_lagrange_mixed (rigid + CC + VR + LVP, in the default run)
@pytest.mark.slow
def test_id_matches_euler_lagrange_mixed(rng):
    rigid = kj.RigidBody(0.3, (0.05, 0, 0), np.diag([1e-4, 2e-4, 2e-4]), tip=np.array(
        [[1, 0, 0, 0.1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]))
    cc = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.05, elongation=True, order=3, n_radial=1, n_angular=3)
    chain = kj.Chain([(kj.Revolute((0, 1, 0)), rigid), (kj.Revolute((1, 0, 0)), cc),
                      (kj.Revolute((0, 0, 1)), VariableRadiusPCC(**SMALL))])
    check_against_el_at(chain, _states(rng, chain.nq, slice(5, 9)))


@pytest.mark.slow  # subsumed by test_smooth_at_rest: the chain's q-Hessians contain the body's
def test_body_functions_smooth_at_rest(rng):
    check_body_smooth_at_rest(VariableRadiusPCC(**SMALL), rng)


def test_smooth_at_rest(rng):
    chain = kj.Chain([(kj.Fixed(), VariableRadiusPCC(**SMALL))], gravity=(-9.81, 0.0, 0.0))
    check_smooth_at(chain, jnp.zeros(chain.nq), rng)


def test_bad_input():
    with pytest.raises(ValueError, match="chamber_offset"):
        VariableRadiusPCC(radius=0.02, chamber_offset=0.015)
    with pytest.raises(ValueError, match="radius"):
        VariableRadiusPCC(radius=-0.02)
    with pytest.raises(TypeError, match="material"):
        VariableRadiusPCC(material="rubber")
    with pytest.raises(ValueError, match="n_radial"):
        VariableRadiusPCC(n_radial=0)
