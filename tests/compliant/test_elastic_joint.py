"""Elastic-joint robots (Spong's model, ``001_…`` eqs. 4a–4b): inverse dynamics against the closed
form of a single elastic pendulum, and forward simulation with the computed torques."""

import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.compliant import (
    ElasticJointRobot,
    elastic_joint_dynamics,
    elastic_joint_inverse_dynamics,
    simulate_elastic_joint,
)
from kane_jax.models import planar_2r

M, L, G = 1.3, 0.7, 9.81
B, K, DM = 0.2, 150.0, 0.01


def pendulum():
    # point mass M at distance L, joint about z, gravity along −y: I = M L², gravity torque M G L cos q
    body = kj.RigidBody(M, (L, 0.0, 0.0), None)
    return ElasticJointRobot(kj.Chain([(kj.Revolute((0, 0, 1)), body)], gravity=(0.0, -G, 0.0)), B, K, DM)


def test_pendulum_closed_form(rng):
    robot = pendulum()
    for _ in range(3):
        q, qd, qdd, q3, q4 = rng.uniform(-2, 2, 5)
        out = elastic_joint_inverse_dynamics(robot, [np.array([x]) for x in (q, qd, qdd, q3, q4)])
        i = M * L**2
        tau_e = i * qdd + M * G * L * np.cos(q)
        tau_e_d = i * q3 - M * G * L * np.sin(q) * qd
        tau_e_dd = i * q4 - M * G * L * (np.cos(q) * qd**2 + np.sin(q) * qdd)
        theta_d = qd + tau_e_d / K
        theta_dd = qdd + tau_e_dd / K
        tau = B * theta_dd + DM * theta_d + tau_e
        np.testing.assert_allclose(out.tau_e[:, 0], [tau_e, tau_e_d, tau_e_dd], rtol=1e-12)
        np.testing.assert_allclose(out.theta[0], q + tau_e / K, rtol=1e-12)
        np.testing.assert_allclose(out.tau[0], tau, rtol=1e-12)


def _trajectory(t):
    # q(t) = a sin(ω t) per joint and its first four derivatives
    a, w = jnp.array([0.6, -0.4]), jnp.array([2.0, 3.0])
    s, c = jnp.sin(w * t), jnp.cos(w * t)
    return jnp.stack([a * s, a * w * c, -a * w**2 * s, -a * w**3 * c, a * w**4 * s])


@pytest.mark.slow  # ~100 s (mostly compilation) on the loaded 2-core machine
def test_simulation_reproduces_trajectory():
    robot = ElasticJointRobot(planar_2r(0.5, 0.4, 1.0, 0.8, 9.81), (0.3, 0.2), (300.0, 200.0), 0.02)
    ts = jnp.linspace(0.0, 1.5, 31)
    start = elastic_joint_inverse_dynamics(robot, _trajectory(0.0))
    y0 = jnp.concatenate([_trajectory(0.0)[0], start.theta, _trajectory(0.0)[1], start.theta_d])
    ys, _ = simulate_elastic_joint(robot, lambda t, y: elastic_joint_inverse_dynamics(robot, _trajectory(t)).tau,
                                   y0, ts, rtol=1e-11, atol=1e-12)
    q_ref = np.stack([np.asarray(_trajectory(t)[0]) for t in ts])
    assert np.max(np.abs(np.asarray(ys[:, :2]) - q_ref)) < 1e-7


def test_validation():
    chain = planar_2r()
    with pytest.raises(ValueError, match="stiffness"):
        ElasticJointRobot(chain, 1.0, (1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="motor_inertia"):
        ElasticJointRobot(chain, -1.0, 1.0)
    with pytest.raises(TypeError, match="Chain"):
        ElasticJointRobot("arm", 1.0, 1.0)
    robot = ElasticJointRobot(chain, 1.0, 10.0)
    with pytest.raises(ValueError, match="first 5"):
        elastic_joint_inverse_dynamics(robot, [np.zeros(2)] * 3)
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        elastic_joint_dynamics(robot, np.zeros(6), np.zeros(2))


def test_free_pendulum_and_a_failed_solve():
    # undamped, unforced, stiff spring: the link and motor energy is conserved (an independent check
    # of the integration and of its saves), and a step budget that cannot reach the end is reported
    robot = ElasticJointRobot(kj.Chain([(kj.Revolute((0, 0, 1)), kj.RigidBody(M, (L, 0.0, 0.0), None))]), B, K, 0.0)
    y0 = jnp.array([0.3, -0.1, 0.0, 0.0])
    ts = jnp.linspace(0.0, 0.5, 6)
    ys, steps = simulate_elastic_joint(robot, lambda t, y: jnp.zeros(1), y0, ts)

    def energy(y):
        q, theta, qd, thetad = y
        return 0.5 * M * L**2 * qd**2 + 0.5 * B * thetad**2 + 0.5 * K * (q - theta) ** 2

    e = np.array([float(energy(y)) for y in ys])
    assert int(steps) > 10
    np.testing.assert_allclose(e, e[0], rtol=1e-7)  # 8e-9 seen (Dopri8, rtol 1e-10 on the states)
    assert not np.allclose(np.asarray(ys[-1]), np.asarray(y0), atol=1e-3)  # it moved
    with pytest.raises(RuntimeError, match="maximum number of solver steps"):
        simulate_elastic_joint(robot, lambda t, y: jnp.zeros(1), y0, ts, max_steps=3)
