"""Closed-loop tests of the model-based controllers against analytic error dynamics and Lyapunov."""

import equinox as eqx
import helpers.robots as wr
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import assert_rel

import kane_jax as kj
from kane_jax.algorithms.actuation import input_matrix, work_coordinates
from kane_jax.control import ActuationReference, CollocatedPFBL, ComputedTorque, PDCompensation, QuinticReference
from kane_jax.simulation import simulate
from kane_jax.statics import equilibrium


def critically_damped(e0, t, omega=10.0):
    """Solution of ë + 2ω ė + ω² e = 0 with e(0) = e0, ė(0) = 0."""
    return e0[None, :] * ((1 + omega * t) * jnp.exp(-omega * t))[:, None]


def test_computed_torque_rigid_arm_matches_linear_error_dynamics():
    arm = wr.rigid_arm(3)
    ref = QuinticReference([0.2, -0.3, 0.4], [1.0, 0.5, -0.6], 1.5)
    e0 = jnp.array([0.1, -0.08, 0.05])
    ctrl = ComputedTorque(arm, ref, kp=100.0, kd=20.0)
    traj = simulate(arm, ref.start - e0, jnp.zeros(3), 2.0, control=ctrl, saveat=41, rtol=1e-10, atol=1e-12)
    err = jax.vmap(lambda t: ref(t)[0])(traj.ts) - traj.q
    # exact model: e(t) = e0 (1 + 10 t) e^{-10 t}, to integration accuracy
    np.testing.assert_allclose(err, critically_damped(e0, traj.ts), atol=1e-7)
    assert float(jnp.max(jnp.abs(err[-1]))) < 1e-7


def test_pd_gravity_compensation_rigid_arm_lyapunov_decay():
    arm = wr.rigid_arm(3)
    q_goal = jnp.array([0.8, -0.5, 0.3])
    kp, kd = 40.0, 6.0
    ctrl = PDCompensation(arm, q_goal, kp=kp, kd=kd)
    traj = simulate(arm, jnp.zeros(3), jnp.zeros(3), 6.0, control=ctrl, saveat=61, rtol=1e-9, atol=1e-11)
    err = q_goal[None, :] - traj.q
    # V = ½ q̇ᵀ M q̇ + ½ kp |e|² is non-increasing (dV/dt = −kd |q̇|² with exact compensation)
    v = jax.vmap(lambda q, qd: kj.kinetic_energy(arm, q, qd))(traj.q, traj.qd) + 0.5 * kp * jnp.sum(err**2, 1)
    assert float(jnp.max(jnp.diff(v))) < 1e-9
    assert float(v[-1]) < 1e-4 * float(v[0])
    assert float(jnp.linalg.norm(err[-1])) < 1e-3 * float(jnp.linalg.norm(err[0]))


@pytest.fixture(scope="module")
def soft():
    return wr.soft_arm()


def test_pfbl_underactuated_soft_arm(soft):
    # reference for the motor angles (collocated actuation coordinates y = q[[0, 2]])
    ref = QuinticReference([0.0, 0.0], [0.6, -0.4], 2.0)
    e0 = jnp.array([0.05, -0.05])
    ctrl = CollocatedPFBL(soft, ref, kp=100.0, kd=20.0)
    q0 = jnp.array([-0.05, 0.0, 0.05, 0.0])
    traj = simulate(soft, q0, jnp.zeros(4), 4.0, control=ctrl, saveat=81, rtol=1e-10, atol=1e-12)
    # open loop the arm is stiff enough (|λ| ≈ 2e3 1/s) for "auto" to pick ros34pw2, whose Jacobian
    # leaves the feedback out (the PFBL cancels the actuated stiffness): the explicit solver is kept
    assert traj.solver.startswith("tsit5 (auto: the control law feeds back")
    y = traj.q[:, jnp.array([0, 2])]
    err = jax.vmap(lambda t: ref(t)[0])(traj.ts) - y
    np.testing.assert_allclose(err, critically_damped(e0, traj.ts), atol=1e-7)
    # the passive segments deflect during the motion and then settle (stable zero dynamics)
    theta = traj.q[:, jnp.array([1, 3])]
    assert float(jnp.max(jnp.abs(theta))) > 1e-3
    passive_rate = jnp.abs(traj.qd[:, jnp.array([1, 3])])
    assert float(jnp.max(passive_rate[-10:])) < 0.05 * float(jnp.max(passive_rate))  # decays to < 5 %
    # ... towards the static equilibrium compatible with the final motor torques
    eq = equilibrium(soft, traj.u[-1], traj.q[-1])
    np.testing.assert_allclose(traj.q[-1], eq.q, atol=2e-3)


def test_pfbl_through_actuation_reference_equals_direct(soft):
    qref = QuinticReference([0.0, 0.0, 0.0, 0.0], [0.6, 0.1, -0.4, 0.0], 2.0)
    mapped = ActuationReference(soft, qref)
    y, yd, ydd = mapped(0.7)
    q, qd, qdd = qref(0.7)
    idx = jnp.array([0, 2])
    np.testing.assert_allclose(jnp.concatenate([y, yd, ydd]), jnp.concatenate([q[idx], qd[idx], qdd[idx]]),
                               rtol=1e-14)


def test_pd_compensation_soft_arm_regulates_to_equilibrium(soft):
    y_goal = jnp.array([0.5, -0.3])
    ctrl = PDCompensation(soft, jnp.array([0.5, 0.0, -0.3, 0.0]), kp=2.0, kd=0.5)
    traj = simulate(soft, jnp.zeros(4), jnp.zeros(4), 8.0, control=ctrl, saveat=31, rtol=1e-9, atol=1e-11)
    err = y_goal[None, :] - traj.q[:, jnp.array([0, 2])]
    assert float(jnp.linalg.norm(err[-1])) < 1e-3 * float(jnp.linalg.norm(err[0]))
    eq = equilibrium(soft, traj.u[-1], traj.q[-1])
    np.testing.assert_allclose(traj.q[-1], eq.q, atol=1e-4)


def test_pd_compensation_equals_its_definition_with_nonlinear_work_coordinates():
    # a tendon on a helix through a planar CC segment (h(q) nonlinear, 1 input for 2 coordinates);
    # oracle: u = Kp (y_d − y) + Kd (ẏ_d − ẏ) + A(q̄)⁺ᵀ ID(q̄, 0, 0) written out with ẏ = jvp(h), the
    # public ID and NumPy's least squares, for q̄ = q ("current") and q̄ = q_d ("desired")
    helix = lambda s: 0.012 * jnp.stack([jnp.cos(2 * jnp.pi * s), jnp.sin(2 * jnp.pi * s)])  # noqa: E731
    cc = kj.PlanarConstantCurvature(0.3, 0.02, 1000.0, 1e5, elongation=True, order=2, n_radial=1, n_angular=3)
    chain = kj.Chain([(kj.Fixed(), cc)], gravity=(0.0, -9.81, 0.0), actuators=[kj.Tendon(0, helix, order=3)])
    ref = QuinticReference([0.0, 0.0], [0.5, 0.05], 2.0)
    kp, kd = 30.0, 4.0
    laws = [PDCompensation(chain, ref, kp=kp, kd=kd, compensate=c) for c in ("current", "desired")]
    h = lambda x: work_coordinates(chain, x)  # noqa: E731
    rng = np.random.default_rng(11)
    q = jnp.asarray(rng.normal(size=2)) * jnp.array([0.4, 0.05])
    qd = jnp.asarray(rng.normal(size=2))
    t = 0.7

    @jax.jit
    def oracle(q, qd):
        q_d, qd_d, _ = ref(t)
        y, yd = jax.jvp(h, (q,), (qd,))
        y_d, yd_d = jax.jvp(h, (q_d,), (qd_d,))
        pd = kp * (y_d - y) + kd * (yd_d - yd)
        static = [kj.inverse_dynamics(chain, x, jnp.zeros(2), jnp.zeros(2)) for x in (q, q_d)]
        return pd, static, [jax.jacfwd(h)(x) for x in (q, q_d)]

    pd, static, jac = oracle(q, qd)
    u = eqx.filter_jit(lambda q, qd: [law(t, q, qd) for law in laws])(q, qd)
    for name, u_law, s, a in zip(("current", "desired"), u, static, jac):
        comp = np.linalg.lstsq(np.asarray(a).T, np.asarray(s), rcond=None)[0]
        assert_rel(u_law, pd + comp, 1e-12, f"PD + compensation ({name}) against its definition")


def test_controller_bad_inputs(soft):
    with pytest.raises(ValueError, match="fully actuated"):
        ComputedTorque(soft, jnp.zeros(4))
    with pytest.raises(ValueError, match="`kp`"):
        CollocatedPFBL(soft, jnp.zeros(2), kp=jnp.ones(3))
    with pytest.raises(ValueError, match="set-point of shape \\(2,\\)"):
        CollocatedPFBL(soft, jnp.zeros(4))
    with pytest.raises(ValueError, match="compensate"):
        PDCompensation(soft, jnp.zeros(4), compensate="both")


def test_second_order_along_matches_the_chain_rule_in_closed_form():
    # h(q) = (sin(a) b², eᶜ a): ḣ and ḧ = J q̈ + q̇ᵀ H q̇ written out by hand; qdd = None gives J̇ q̇
    from kane_jax.control.reference import second_order_along

    h = lambda x: jnp.stack([jnp.sin(x[0]) * x[1] ** 2, jnp.exp(x[2]) * x[0]])  # noqa: E731
    (a, b, c), (ad, bd, cd), (add, bdd, cdd) = (0.7, -1.3, 0.4), (0.5, 2.0, -1.1), (-0.3, 0.8, 1.7)
    y, yd, ydd = second_order_along(h, jnp.array([a, b, c]), jnp.array([ad, bd, cd]), jnp.array([add, bdd, cdd]))
    s, co, e = np.sin(a), np.cos(a), np.exp(c)
    np.testing.assert_allclose(y, [s * b**2, e * a], rtol=1e-15)
    np.testing.assert_allclose(yd, [co * ad * b**2 + 2 * s * b * bd, e * (cd * a + ad)], rtol=1e-15)
    jdot_qd = [-s * ad**2 * b**2 + 4 * co * ad * b * bd + 2 * s * bd**2, e * (cd**2 * a + 2 * cd * ad)]
    j_qdd = [co * add * b**2 + 2 * s * b * bdd, e * (cdd * a + add)]
    np.testing.assert_allclose(ydd, np.add(jdot_qd, j_qdd), rtol=1e-14)
    np.testing.assert_allclose(second_order_along(h, jnp.array([a, b, c]), jnp.array([ad, bd, cd]))[2], jdot_qd,
                               rtol=1e-14)


def test_pfbl_with_mapped_reference_decouples_actuation_coordinates():
    # tendons on helices through two planar CC segments: h(q) is nonlinear, so the jets of h at the
    # state and at the reference (one vmap when the reference is an ActuationReference of the chain)
    # matter; oracle: the PFBL's defining property ÿ = v, with every derivative of h formed apart
    def helix(turns):
        return lambda s: 0.012 * jnp.stack([jnp.cos(2 * jnp.pi * turns * s), jnp.sin(2 * jnp.pi * turns * s)])

    cc = kj.PlanarConstantCurvature(0.3, 0.02, 1000.0, 1e5, elongation=True, order=2, n_radial=1, n_angular=3)
    chain = kj.Chain([(kj.Fixed(), cc), (kj.Fixed(), cc)], gravity=(0.0, -9.81, 0.0),
                     actuators=[kj.Tendon([0, 1], [helix(1.0), helix(1.0)], order=6),
                                kj.Tendon([0, 1], [helix(-0.5), (0.01, 0.0)], order=6)])
    qref = QuinticReference([0.0, 0.0, 0.0, 0.0], [0.5, 0.05, -0.4, 0.02], 2.0)
    kp, kd = 100.0, 20.0
    ctrl = CollocatedPFBL(chain, ActuationReference(chain, qref), kp=kp, kd=kd)
    # the same reference as a plain callable (jets apart), and mapped through a copy of the chain
    apart = CollocatedPFBL(chain, lambda t: ActuationReference(chain, qref)(t), kp=kp, kd=kd)
    copy = jax.tree.map(lambda x: x + 0.0 if eqx.is_array(x) else x, chain)
    stacked = CollocatedPFBL(chain, ActuationReference(copy, qref), kp=kp, kd=kd)
    h = lambda x: work_coordinates(chain, x)  # noqa: E731
    second = lambda x, v: jax.jvp(lambda z: jax.jvp(h, (z,), (v,))[1], (x,), (v,))[1]  # vᵀ ∂²h v  # noqa: E731

    @jax.jit
    def check(t, q, qd):
        u = ctrl(t, q, qd)
        qdd = kj.forward_dynamics(chain, q, qd, input_matrix(chain, q) @ u, check=False)
        jac = jax.jacfwd(h)(q)
        q_d, qd_d, qdd_d = qref(t)
        jac_d = jax.jacfwd(h)(q_d)
        v = (jac_d @ qdd_d + second(q_d, qd_d) + kd * (jac_d @ qd_d - jac @ qd) + kp * (h(q_d) - h(q)))
        return u, apart(t, q, qd), stacked(t, q, qd), jac @ qdd + second(q, qd), v

    rng = np.random.default_rng(3)
    for t in (0.3, 1.1):
        q = jnp.asarray(rng.normal(size=4)) * jnp.array([0.4, 0.05, 0.4, 0.05])
        u, u_apart, u_stacked, ydd, v = check(t, q, jnp.asarray(rng.normal(size=4)))
        assert_rel(u_apart, u, 1e-12, "fused jets against separate ones")
        assert_rel(u_stacked, u, 1e-12, "a copy of the chain in the reference")
        np.testing.assert_allclose(ydd, v, rtol=1e-9, atol=1e-9 * float(jnp.max(jnp.abs(v))))
