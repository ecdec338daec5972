"""VSA robots (paper ``001_…``): spring algebra, inverse dynamics checked by forward simulation,
feedback linearization checked against the linear error dynamics it must produce."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import kane_jax as kj
from kane_jax.compliant import (
    CubicSpring,
    TaskError,
    VSARobot,
    hurwitz_gains,
    simulate_vsa,
    solve_deflections,
    vsa_feedback_linearization,
    vsa_inverse_dynamics,
    vsa_inverse_dynamics_trajectory,
    vsa_output_derivatives,
    vsa_state,
)
from kane_jax.compliant.springs import decoupling_matrix, task_map
from kane_jax.models import vsa_3dof
from kane_jax.scenarios.vsa_3dof import DURATION, references

K, KC = 400.0, 2000.0


def test_cubic_spring_closed_forms(rng):
    # eqs. 25–27: σ = K + 3 K_c φ², ζ = 6 K_c φ; the 2×2 solve against the paper's parametrization (30)
    springs = (CubicSpring(K, KC, n=4), CubicSpring(K, KC, n=4))
    phi = rng.uniform(-0.3, 0.3, (2, 4))
    a = np.asarray(decoupling_matrix(springs, jnp.asarray(phi)))
    np.testing.assert_allclose(a[:, 0, :], (K + 3 * KC * phi**2).T, rtol=1e-14)
    np.testing.assert_allclose(a[:, 1, :], (6 * KC * phi).T, rtol=1e-14)
    sigma = rng.uniform(900, 1300, 4)
    tau_e = rng.uniform(-20, 20, 4)
    guess = np.stack([np.full(4, 0.1), np.full(4, -0.1)])
    sol = solve_deflections(springs, jnp.asarray(tau_e), jnp.asarray(sigma), guess)
    p = np.asarray(sol.phi)
    assert np.all(np.asarray(sol.converged))
    np.testing.assert_allclose(p[0] ** 2 + p[1] ** 2, (sigma - 2 * K) / (3 * KC), rtol=1e-12)  # eq. 30
    np.testing.assert_allclose(K * (p[0] + p[1]) + KC * (p[0] ** 3 + p[1] ** 3), tau_e, rtol=1e-11, atol=1e-11)


def test_task_errors():
    springs = (CubicSpring(K, KC, n=1), CubicSpring(K, KC, n=1))
    robot = VSARobot(kj.Chain([(kj.Revolute(), kj.RigidBody(1.0, (0.1, 0, 0), np.eye(3) * 0.01))]), 1.0, 0.0,
                     springs[0])
    zero = [np.zeros(1)] * 5
    # σ below the minimum stiffness 2K: eq. (14) has no solution
    with pytest.raises(TaskError, match="not attainable"):
        vsa_inverse_dynamics(robot, zero, (np.array([700.0]), np.zeros(1), np.zeros(1)))
    # identical springs with φ1 = φ2: the decoupling matrix is singular (001_… §III-B remark)
    phi = 0.1
    sigma = np.array([2 * K + 6 * KC * phi**2])
    with pytest.raises(TaskError, match="singular"):
        tau_e = jnp.array([2 * (K * phi + KC * phi**3)])
        sol = solve_deflections(springs, tau_e, jnp.asarray(sigma), np.array([[phi], [phi]]))
        from kane_jax.compliant.springs import raise_if_failed
        raise_if_failed(sol, "test")
    assert isinstance(TaskError("x"), ValueError)
    with pytest.raises(ValueError, match="sigma_derivs"):
        vsa_inverse_dynamics(robot, zero, (np.array([900.0]),))
    with pytest.raises(ValueError, match="joint by joint"):
        VSARobot(vsa_3dof().chain, 1.0, 0.0, lambda p: p + p.sum())
    with pytest.raises(ValueError, match="gains|poles"):
        hurwitz_gains([-1.0, 0.5])


def test_inverse_dynamics_matches_paper_formulas(rng):
    # eqs. 19–23 written out for the cubic spring (independent of the autodiff route)
    robot = vsa_3dof()
    ts = jnp.asarray([0.7, 1.9, 3.1])
    q, sig = references(ts, 850.0, 1275.0)
    res = vsa_inverse_dynamics_trajectory(robot, q, sig)
    for k in range(3):
        p1, p2 = np.asarray(res.phi[k])
        s1, s2 = K + 3 * KC * p1**2, K + 3 * KC * p2**2
        z1, z2 = 6 * KC * p1, 6 * KC * p2
        te, ted, tedd = np.asarray(res.tau_e[k])
        sd, sdd = np.asarray(sig[k, 1]), np.asarray(sig[k, 2])
        det = s1 * z2 - s2 * z1
        pd1, pd2 = (z2 * ted - s2 * sd) / det, (-z1 * ted + s1 * sd) / det  # eq. 20
        qdd = np.asarray(q[k, 2])
        b1 = tedd - z1 * pd1**2 - z2 * pd2**2 + (s1 + s2) * qdd  # eq. 21
        b2 = sdd - 6 * KC * pd1**2 - 6 * KC * pd2**2 + (z1 + z2) * qdd  # eq. 22
        th1, th2 = (z2 * b1 - s2 * b2) / det, (-z1 * b1 + s1 * b2) / det  # eq. 23
        bm = np.asarray(robot.motor_inertia[0])
        tau1 = bm * th1 + 1e-4 * (pd1 + np.asarray(q[k, 1])) + K * p1 + KC * p1**3
        tau2 = bm * th2 + 1e-4 * (pd2 + np.asarray(q[k, 1])) + K * p2 + KC * p2**3
        np.testing.assert_allclose(res.tau1[k], tau1, rtol=1e-11, atol=1e-10)
        np.testing.assert_allclose(res.tau2[k], tau2, rtol=1e-11, atol=1e-10)


def _open_loop_errors(t1):
    robot = vsa_3dof()
    ts = jnp.linspace(0.0, t1, 41)
    q, sig = references(ts, 850.0, 1275.0)
    res = vsa_inverse_dynamics_trajectory(robot, q[:1], sig[:1])

    def controller(t, y):  # exact τ_d(t); the simulated deflections only warm-start the Newton search
        qd_t, s_t = references(t[None], 850.0, 1275.0)
        r = vsa_inverse_dynamics(robot, qd_t[0], s_t[0], phi_guess=y[3:9].reshape(2, 3) - y[None, :3], check=False)
        return r.tau1, r.tau2

    y0 = vsa_state(q[0, 0], res.theta[0], q[0, 1], res.theta_d[0])
    ys, _ = simulate_vsa(robot, controller, y0, ts, rtol=1e-11, atol=1e-12)
    phis = ys[:, 3:9].reshape(-1, 2, 3) - ys[:, None, :3]
    sig_sim = jax.vmap(lambda p: task_map(robot.springs, p)[1])(phis)
    return float(jnp.max(jnp.abs(ys[:, :3] - q[:, 0]))), float(jnp.max(jnp.abs(sig_sim - sig[:, 0])))


@pytest.mark.slow  # ~95 s (mostly compilation) on the loaded 2-core machine
def test_open_loop_simulation_reproduces_references_short():
    # the first 1.5 s of the 4 s task (the part with the largest accelerations)
    err_q, err_sigma = _open_loop_errors(1.5)
    assert err_q < 1e-6 and err_sigma < 1e-3


@pytest.mark.slow
def test_open_loop_simulation_reproduces_references_full():
    err_q, err_sigma = _open_loop_errors(DURATION)
    assert err_q < 1e-6 and err_sigma < 1e-3


def _companion(k):
    m = len(k)
    a = np.zeros((m, m))
    a[:-1, 1:] = np.eye(m - 1)
    a[-1] = -np.asarray(k)
    return a


def _fl_errors(t1, n_t=21):
    robot = vsa_3dof()
    kq = hurwitz_gains([-8.0, -10.0, -12.0, -14.0])
    ks = hurwitz_gains([-15.0, -20.0])
    ts = jnp.linspace(0.0, t1, n_t)
    q, sig = references(ts, 850.0, 1275.0)
    res = vsa_inverse_dynamics_trajectory(robot, q[:1], sig[:1])
    y0 = vsa_state(q[0, 0] + jnp.array([0.01, -0.01, 0.005]), res.theta[0] + 0.002, q[0, 1], res.theta_d[0])

    def controller(t, y):
        qd_t, s_t = references(t[None], 850.0, 1275.0)
        return vsa_feedback_linearization(robot, y, qd_t[0][:, :], s_t[0], gains_q=kq, gains_sigma=ks)

    ys, _ = simulate_vsa(robot, controller, y0, ts, rtol=1e-11, atol=1e-12)
    out_q, out_s = jax.vmap(lambda y: vsa_output_derivatives(robot, y))(ys)
    e_q = np.asarray(q[:, :4] - out_q)  # (T, 4, n): e, ė, ë, e⃛
    e_s = np.asarray(sig[:, :2] - out_s)
    aq, as_ = _companion(np.asarray(kq)), _companion(np.asarray(ks))
    pred_q = np.stack([scipy.linalg.expm(aq * float(t)) @ e_q[0] for t in ts])
    pred_s = np.stack([scipy.linalg.expm(as_ * float(t)) @ e_s[0] for t in ts])
    return e_q, pred_q, e_s, pred_s


@pytest.mark.slow  # ~130 s (mostly compilation) on the loaded 2-core machine
def test_feedback_linearization_error_dynamics():
    # closed loop: e⁗ + K3 e⃛ + K2 ë + K1 ė + K0 e = 0 and ë_σ + Kσ1 ė_σ + Kσ0 e_σ = 0 exactly
    e_q, pred_q, e_s, pred_s = _fl_errors(1.0)
    assert np.max(np.abs(e_q[0, 0])) > 0.004 and np.max(np.abs(e_s[0, 0])) > 0.1  # a real perturbation
    # the simulated errors follow the predicted linear error dynamics (1e-7 of their peak) ...
    np.testing.assert_allclose(e_q[:, 0], pred_q[:, 0], atol=1e-7 * np.max(np.abs(e_q[:, 0])))
    np.testing.assert_allclose(e_s[:, 0], pred_s[:, 0], atol=1e-7 * np.max(np.abs(e_s[:, 0])))
    # ... and decay (the θ perturbation makes a large jerk error, hence a transient peak ~1 rad):
    # after 1 s, 2.2e-2 of the peak observed; the σ loop (poles −15, −20) below 1e-2
    assert np.max(np.abs(e_q[-1, 0])) < 5e-2 * np.max(np.abs(e_q[:, 0]))
    assert np.max(np.abs(e_s[-1, 0])) < 1e-2 * np.max(np.abs(e_s[:, 0]))
