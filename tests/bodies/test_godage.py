"""Godage's three-actuator section: EL reference, exact arc geometry, pressure actuator virtual work."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import check_against_el, check_geometry_smooth_at, check_smooth_at

import kane_jax as kj
from kane_jax.actuation.godage import GodagePressureActuator
from kane_jax.bodies.godage import ACTUATOR_ANGLES, GodageSection
from kane_jax.models.godage import godage_arm

SMALL = dict(order=2, n_radial=1, n_angular=3)


def test_id_matches_euler_lagrange(rng):
    sec = GodageSection(0.15, 0.0125, 0.1, stiffness=np.diag([50.0, 60.0, 70.0]), damping=0.5, **SMALL)
    chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), sec)], gravity=(0.0, 2.0, -9.81))
    check_against_el(chain, rng, scale=0.03)  # length changes of a few cm


def test_equal_lengths_straight_and_elongated():
    sec = GodageSection(0.15, 0.0125, 0.1)
    for c in (0.0, 0.02, -0.01):
        tip = np.asarray(sec.tip(jnp.full(3, c)))
        expected = np.eye(4)
        expected[0, 3] = 0.15 + c
        np.testing.assert_allclose(tip, expected, atol=1e-16)
        pts = np.asarray(sec.points_in_frame(jnp.full(3, c)))
        np.testing.assert_allclose(pts[:, 0], (0.15 + c) * np.asarray(sec.points[:, 0]), atol=1e-16)
        np.testing.assert_allclose(pts[:, 1:], np.asarray(sec.points[:, 1:]), atol=1e-16)


def test_actuator_fibres_have_the_commanded_lengths(rng):
    """Arc length of the curve traced by each actuator attachment = L + l_j (the defining property)."""
    sec = GodageSection(0.15, 0.0125, 0.1)
    xs, ws = np.polynomial.legendre.leggauss(20)
    sig, w = 0.5 * (xs + 1), 0.5 * ws
    for _ in range(3):
        q = jnp.asarray(rng.uniform(0.0, 0.07, size=3))
        for j, a in enumerate(ACTUATOR_ANGLES):
            def fibre(s, a=a):
                return sec.position(q, jnp.stack([s, 0.0125 * jnp.cos(a), 0.0125 * jnp.sin(a)]))
            speed = jax.vmap(lambda s: jnp.linalg.norm(jax.jacfwd(fibre)(s)))(jnp.asarray(sig))
            assert abs(float(w @ speed) - (0.15 + float(q[j]))) < 1e-13


def test_bending_angle_and_radius_match_godage_curve_parameters(rng):
    """φ = 2√(l₁²+l₂²+l₃²−l₁l₂−l₁l₃−l₂l₃)/(3r), λ = ℓ/φ: the chord is 2λ sin(φ/2)."""
    sec = GodageSection(0.15, 0.0125, 0.1)
    for _ in range(3):
        l1, l2, l3 = rng.uniform(0.0, 0.07, size=3)
        phi = 2 * np.sqrt(l1**2 + l2**2 + l3**2 - l1 * l2 - l1 * l3 - l2 * l3) / (3 * 0.0125)
        lam = (0.15 + (l1 + l2 + l3) / 3) / phi
        tip = np.asarray(sec.tip(jnp.array([l1, l2, l3])))
        angle = np.arccos(np.clip((np.trace(tip[:3, :3]) - 1) / 2, -1, 1))
        assert abs(angle - phi) < 1e-12
        assert abs(np.linalg.norm(tip[:3, 3]) - 2 * lam * np.sin(phi / 2)) < 1e-14
        # it bends away from the longest actuator: the tip moves opposite to its attachment direction
        j = int(np.argmax([l1, l2, l3]))
        direction = np.array([np.cos(ACTUATOR_ANGLES[j]), np.sin(ACTUATOR_ANGLES[j])])
        assert tip[1:3, 3] @ direction < 0


def test_geometry_smooth_at_zero_and_equal_lengths(rng):
    sec = GodageSection(0.15, 0.0125, 0.1, **SMALL)
    check_geometry_smooth_at(sec, jnp.zeros(3), rng)
    check_geometry_smooth_at(sec, jnp.full(3, 0.03), rng)  # equal lengths ≠ 0


def test_dynamics_smooth_at_zero_and_equal_lengths(rng):
    sec = GodageSection(0.15, 0.0125, 0.1, stiffness=100.0, **SMALL)
    chain = kj.Chain([(kj.Fixed(), sec)])
    check_smooth_at(chain, jnp.zeros(3), rng)
    check_smooth_at(chain, jnp.full(3, 0.03), rng)


def test_pressure_actuator_virtual_work(rng):
    arm = godage_arm(2, stiffness=200.0, offset=0.01, twist=0.3, area=2.2e-4, **SMALL)
    assert arm.nq == 6 and arm.nu == 6
    q = jnp.asarray(rng.uniform(0.0, 0.05, size=6))
    u = jnp.asarray(rng.uniform(1e5, 6e5, size=6))  # Pa
    qa = kj.actuation_force(arm, q, u)
    # τ = P A on each actuator coordinate (paper 004, §IV-D)
    np.testing.assert_allclose(np.asarray(qa), 2.2e-4 * np.asarray(u), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(kj.actuation_matrix(arm, q)), 2.2e-4 * np.eye(6), rtol=1e-14)
    # virtual work uᵀ δh = Q_aᵀ δq, δh by central differences of the work coordinates
    act = arm.actuators[0]
    for _ in range(3):
        dq = jnp.asarray(rng.normal(size=6)) * 1e-4
        dh = (act.work_coordinates(arm, q + dq) - act.work_coordinates(arm, q - dq)) / 2
        assert abs(float(u @ dh - qa @ dq)) < 1e-12 * float(jnp.abs(u) @ jnp.abs(dh))


def test_bad_input_raises():
    with pytest.raises(ValueError, match="mass"):
        GodageSection(mass=0.0)
    with pytest.raises(ValueError, match="stiffness"):
        GodageSection(stiffness=np.ones((2, 2)))
    with pytest.raises(ValueError, match="n_sections"):
        godage_arm(0)
    with pytest.raises(ValueError, match="length"):
        godage_arm(2, length=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="area"):
        GodagePressureActuator([0], area=[1e-4, 2e-4])
    chain = kj.Chain([(kj.Fixed(), kj.PlanarConstantCurvature())], actuators=[GodagePressureActuator([1])])
    with pytest.raises(ValueError, match="out of range"):
        kj.actuation_matrix(chain, jnp.zeros(chain.nq))
    chain = kj.Chain([(kj.Fixed(), kj.PlanarConstantCurvature())], actuators=[GodagePressureActuator([0])])
    with pytest.raises(ValueError, match="GodageSection"):
        kj.actuation_matrix(chain, jnp.zeros(chain.nq))


def test_id_matches_euler_lagrange_in_mixed_chain(rng):
    """Default-run mixed check: rigid link + Godage section + spatial PCC (all models mixed: test_soft_mix, slow)."""
    from kane_jax.bodies.spatial_cc import SpatialConstantCurvature

    rigid = kj.RigidBody(0.4, (0.05, 0.0, 0.0), np.diag([1e-3, 2e-3, 2e-3]), tip=np.eye(4))
    mods = [(kj.Revolute((0.0, 0.0, 1.0)), rigid),
            (kj.Fixed(), GodageSection(0.12, 0.01, 0.08, stiffness=30.0, **SMALL)),
            (kj.Fixed(), SpatialConstantCurvature(0.1, 0.01, elongation=False, **SMALL))]
    check_against_el(kj.Chain(mods), rng, n_states=1, scale=0.03)
