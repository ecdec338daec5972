"""Inverse dynamics against the independent Euler–Lagrange reference and closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.robots import (
    JOINT_KINDS,
    generic_beam,
    generic_blob,
    hybrid_arm,
    make_joint,
    mixed_chain,
    random_pose,
    random_rigid,
    random_state,
)

import kane_jax as kj
from kane_jax.reference import euler_lagrange as el

RTOL = 1e-10  # float64; observed agreement is ~1e-15


def assert_rel(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    err = np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)
    assert err < rtol, f"relative error {err:.3e} >= {rtol:.1e}"


@pytest.mark.parametrize("kind", JOINT_KINDS)
def test_rigid_chain_every_joint_type(kind, rng):
    # three modules with random placements that rotate the joint axes, random gravity direction
    mods = [(make_joint(kind, rng), random_rigid(rng)) for _ in range(3)]
    mods.append((kj.Revolute(rng.normal(size=3), random_pose(rng)), random_rigid(rng)))
    chain = kj.Chain(mods, gravity=rng.normal(size=3) * 4)
    for _ in range(2):
        q, qd, qdd = random_state(rng, chain.nq)
        assert_rel(kj.inverse_dynamics(chain, q, qd, qdd), el.inverse_dynamics(chain, q, qd, qdd))


def test_generic_soft_bodies(rng):
    # Bodies whose geometry is written in the test, not the library's CC model
    mods = [(kj.Revolute((0, 0, 1), random_pose(rng)), generic_beam(rng, stiffness=4.0, damping=0.3)),
            (kj.Fixed(random_pose(rng)), generic_blob(rng)),
            (kj.Revolute((1, 1, 0), random_pose(rng)), generic_beam(rng))]
    chain = kj.Chain(mods, gravity=(1.0, -2.0, -9.0))
    for _ in range(3):
        q, qd, qdd = random_state(rng, chain.nq)
        assert_rel(kj.inverse_dynamics(chain, q, qd, qdd), el.inverse_dynamics(chain, q, qd, qdd))


def test_mixed_chain_random_gravity(rng):
    for _ in range(3):
        chain = mixed_chain(rng)
        q, qd, qdd = random_state(rng, chain.nq)
        assert_rel(kj.inverse_dynamics(chain, q, qd, qdd), el.inverse_dynamics(chain, q, qd, qdd))


def test_planar_cc_with_elongation_against_el(rng):
    body = kj.PlanarConstantCurvature(0.25, 0.03, 1050.0, 3e5, 0.1, elongation=True, order=4)
    chain = kj.Chain([(kj.Revolute((0, 0, 1)), body), (kj.Revolute((0, 0, 1)), body), (kj.Fixed(), body)],
                     gravity=(0.0, -9.81, 0.0))
    for scale in (1.0, 1e-3):
        q, qd, qdd = random_state(rng, chain.nq, scale)
        assert_rel(kj.inverse_dynamics(chain, q, qd, qdd), el.inverse_dynamics(chain, q, qd, qdd))


def test_planar_2r_closed_form(rng):
    # paper 002 §6.1: point masses at the link ends, gravity along -y, links along x at q = 0
    l1, l2, m1, m2, g = 0.7, 0.45, 1.3, 0.8, 9.81
    chain = kj.Chain([
        (kj.Revolute((0, 0, 1)), kj.RigidBody(m1, (l1, 0, 0), tip=np.array(
            [[1, 0, 0, l1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]))),
        (kj.Revolute((0, 0, 1)), kj.RigidBody(m2, (l2, 0, 0))),
    ], gravity=(0.0, -g, 0.0))
    for _ in range(5):
        (q1, q2), (d1, d2), (a1, a2) = (np.asarray(x) for x in random_state(rng, 2, 2.0))
        c2, s2, c1, c12 = np.cos(q2), np.sin(q2), np.cos(q1), np.cos(q1 + q2)
        tau1 = (l1**2 * a1 * m1 + l1**2 * a1 * m2 + l2**2 * a1 * m2 + l2**2 * a2 * m2 + l2 * g * m2 * c12
                + l1 * g * m1 * c1 + l1 * g * m2 * c1 - l1 * l2 * d2**2 * m2 * s2 + 2 * l1 * l2 * a1 * m2 * c2
                + l1 * l2 * a2 * m2 * c2 - 2 * l1 * l2 * d1 * d2 * m2 * s2)
        tau2 = l2 * m2 * (l1 * s2 * d1**2 + l2 * a1 + l2 * a2 + g * c12 + l1 * a1 * c2)
        tau = kj.inverse_dynamics(chain, jnp.array([q1, q2]), jnp.array([d1, d2]), jnp.array([a1, a2]))
        np.testing.assert_allclose(tau, [tau1, tau2], rtol=1e-12, atol=1e-12)


def test_tip_wrench_is_jacobian_transpose(rng):
    # an external load on the tip changes τ by −J_tipᵀ (world wrench), virtual-work consistency
    chain = mixed_chain(rng)
    q, qd, qdd = random_state(rng, chain.nq)
    f, t = rng.normal(size=3), rng.normal(size=3)
    rot = kj.tip_pose(chain, q)[:3, :3]
    jac = kj.tip_jacobian(chain, q)
    expected = kj.inverse_dynamics(chain, q, qd, qdd) - jac.T @ jnp.concatenate([rot @ f, rot @ t])
    got = kj.inverse_dynamics(chain, q, qd, qdd, tip_force=f, tip_torque=t)
    assert_rel(got, expected, 1e-11)


def test_base_wrench_balances_gravity_at_rest(rng):
    # at rest the chain pushes on its base with its weight: base force = −m_total g
    chain = mixed_chain(rng)
    q = jnp.asarray(rng.normal(size=chain.nq))
    res = kj.inverse_dynamics_full(chain, q, jnp.zeros_like(q), jnp.zeros_like(q))
    mass = sum(float(jnp.sum(b.weights)) if hasattr(b, "weights") else float(b.mass) for _, b in chain.modules)
    np.testing.assert_allclose(res.base_wrench.force, -mass * chain.gravity, rtol=1e-12, atol=1e-12)


def test_jit_vmap_and_float32(rng):
    chain = mixed_chain(rng)
    qs = jnp.asarray(rng.normal(size=(4, chain.nq)))
    batched = jax.vmap(lambda q: kj.inverse_dynamics(chain, q, q, q))(qs)
    jitted = jax.jit(lambda q: kj.inverse_dynamics(chain, q, q, q))
    for k in range(4):
        assert_rel(jitted(qs[k]), el.inverse_dynamics(chain, qs[k], qs[k], qs[k]))
        assert_rel(batched[k], jitted(qs[k]), 1e-13)
    with jax.enable_x64(False):
        mods = [(kj.Revolute((0, 0, 1)), kj.RigidBody(np.float32(1.0), np.float32([0.3, 0, 0]))),
                (kj.Revolute((0, 1, 0)), kj.PlanarConstantCurvature(np.float32(0.3), np.float32(0.02),
                                                                    np.float32(1000.0), np.float32(1e5)))]
        c32 = kj.Chain(mods, gravity=np.float32([0, 0, -9.81]))
        q32 = jnp.asarray(rng.normal(size=3), dtype=jnp.float32)
        tau32 = jax.jit(lambda q: kj.inverse_dynamics(c32, q, q, q))(q32)
        assert tau32.dtype == jnp.float32
    c64 = kj.Chain([(kj.Revolute((0, 0, 1)), kj.RigidBody(1.0, [0.3, 0, 0])),
                    (kj.Revolute((0, 1, 0)), kj.PlanarConstantCurvature(0.3, 0.02, 1000.0, 1e5))])
    q64 = jnp.asarray(np.asarray(q32), dtype=jnp.float64)
    assert_rel(tau32, kj.inverse_dynamics(c64, q64, q64, q64), 1e-5)  # float32 round-off


def test_float32_states_of_a_float64_chain(rng):
    """float32 states of a chain built in float64 (x64 on) are taken in the chain's precision: ID, M and FD
    return float64 and equal the float64 computation at the same (float32-representable) state. The FD's tip
    wrench was created in the states' dtype and crashed its backward scan (carry float32, output float64)."""
    chain = hybrid_arm()  # rigid link and soft body on revolute joints (small programs: each compiles twice here)
    q32, qd32, tau32 = (jnp.asarray(rng.normal(size=chain.nq) * 0.5, dtype=jnp.float32) for _ in range(3))
    q, qd, tau = (x.astype(jnp.float64) for x in (q32, qd32, tau32))
    tip = dict(tip_force=jnp.array([0.3, -0.2, 0.1], jnp.float32))
    qdd = kj.forward_dynamics(chain, q32, qd32, tau32, **tip)
    assert qdd.dtype == jnp.float64
    assert_rel(qdd, kj.forward_dynamics(chain, q, qd, tau, **tip), 1e-12)  # measured 2.6e-14: another program
    tau_ref = kj.inverse_dynamics(chain, q, qd, tau, **tip)
    assert_rel(kj.inverse_dynamics(chain, q32, qd32, tau32, **tip), tau_ref, 1e-12)
    assert_rel(kj.mass_matrix(chain, q32), kj.mass_matrix(chain, q), 1e-12)
