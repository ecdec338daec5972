"""Spatial constant-curvature segment: EL reference, smoothness at the straight shape, closed forms."""

import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import check_against_el, check_geometry_smooth_at, check_smooth_at

import kane_jax as kj
from kane_jax.bodies.spatial_cc import SpatialConstantCurvature

SMALL = dict(order=2, n_radial=1, n_angular=3)


def _webster_jones(theta_y, theta_z, ell, sigma):
    """Classic arc (curvature κ, plane angle φ) — an independent closed form, valid away from θ = 0."""
    theta = np.hypot(theta_y, theta_z)
    kappa = theta / ell
    phi = np.arctan2(-theta_y, theta_z)  # bending-plane direction in the y–z plane: (cos φ, sin φ)
    s = sigma * ell
    x = np.sin(kappa * s) / kappa
    rho = (1 - np.cos(kappa * s)) / kappa
    return np.array([x, rho * np.cos(phi), rho * np.sin(phi)])


def test_id_matches_euler_lagrange_alone(rng):
    body = SpatialConstantCurvature(0.3, 0.03, 1100.0, 2e5, damping=0.05, **SMALL)
    chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), body)], gravity=(0.0, -3.0, -9.81))
    check_against_el(chain, rng)


def test_geometry_smooth_at_straight_configuration(rng):
    body = SpatialConstantCurvature(0.2, 0.02, 1000.0, 1e5, **SMALL)
    check_geometry_smooth_at(body, jnp.zeros(3), rng)
    check_geometry_smooth_at(body, jnp.array([0.0, 0.0, 0.03]), rng)  # straight and elongated


def test_dynamics_smooth_at_straight_configuration(rng):
    body = SpatialConstantCurvature(0.2, 0.02, 1000.0, 1e5, **SMALL)
    check_smooth_at(kj.Chain([(kj.Fixed(), body)]), jnp.zeros(3), rng)


def test_arc_matches_classic_closed_form(rng):
    body = SpatialConstantCurvature(0.25, 0.02)
    for _ in range(3):
        q = rng.normal(size=3) * np.array([1.0, 1.0, 0.05])
        ell = 0.25 + q[2]
        for sigma in (0.3, 1.0):
            p = body.position(jnp.asarray(q), jnp.array([sigma, 0.0, 0.0]))
            np.testing.assert_allclose(np.asarray(p), _webster_jones(q[0], q[1], ell, sigma), rtol=0, atol=1e-14)
        tip = np.asarray(body.tip(jnp.asarray(q)))
        # tip rotation: rotation by |θ| about the unit vector (0, θ_y, θ_z)/|θ|
        axis = np.array([0.0, q[0], q[1]]) / np.hypot(q[0], q[1])
        angle = np.arccos(np.clip((np.trace(tip[:3, :3]) - 1) / 2, -1, 1))
        assert abs(angle - np.hypot(q[0], q[1])) < 1e-12
        np.testing.assert_allclose(tip[:3, :3] @ axis, axis, atol=1e-13)


def test_straight_elongated_and_mass():
    body = SpatialConstantCurvature(0.2, 0.02, 1000.0)
    tip = np.asarray(body.tip(jnp.array([0.0, 0.0, 0.05])))
    np.testing.assert_allclose(tip, np.array([[1, 0, 0, 0.25], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]), atol=1e-15)
    assert abs(float(jnp.sum(body.weights)) - 1000.0 * np.pi * 0.02**2 * 0.2) < 1e-12
    # stiffness: E I / L on the bending angles, E A / L on δL
    k = np.diag(np.asarray(body.stiffness))
    np.testing.assert_allclose(k, [1e6 * np.pi * 0.02**4 / 4 / 0.2] * 2 + [1e6 * np.pi * 0.02**2 / 0.2], rtol=1e-14)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="length"):
        SpatialConstantCurvature(-1.0)
    with pytest.raises(ValueError, match="damping"):
        SpatialConstantCurvature(damping=-0.1)
    with pytest.raises(TypeError, match="radius"):
        SpatialConstantCurvature(radius="thick")
