"""Statics (003_… eq. 55): equilibrium by Newton on the ID, holding inputs, implicit gradients."""

import equinox as eqx
import helpers.robots as wr
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.simulation import simulate
from kane_jax.statics import equilibrium, holding_input

U = jnp.array([0.35, -0.12])


@pytest.fixture(scope="module")
def arm():
    return wr.hybrid_arm(joint_damping=1.0, eta=0.1)


def test_equilibrium_residual_and_damped_simulation(arm):
    eq = equilibrium(arm, U, jnp.zeros(4))
    assert bool(eq.success)
    # the residual is evaluated independently of the solver with the plain ID and A(q)
    q = eq.q
    res = kj.inverse_dynamics(arm, q, 0 * q, 0 * q) - kj.actuation_matrix(arm, q) @ U
    assert float(jnp.max(jnp.abs(res))) < 1e-10
    assert float(jnp.max(jnp.abs(eq.residual))) < 1e-10
    # a long damped simulation under the same constant input settles on the same configuration
    traj = simulate(arm, jnp.zeros(4), jnp.zeros(4), 12.0, control=U, saveat=2, rtol=1e-9, atol=1e-11)
    # (slowest closed-loop mode decays like e^{-t/1.3 s}: after 12 s the arm is within ~1e-4 of rest)
    assert float(jnp.max(jnp.abs(traj.qd[-1]))) < 1e-3
    np.testing.assert_allclose(traj.q[-1], q, atol=5e-4)
    assert float(jnp.max(jnp.abs(q))) > 0.05  # and the equilibrium is far from the rest shape


def test_equilibrium_gradient_matches_finite_differences(arm):
    f = lambda u: equilibrium(arm, u, jnp.zeros(4)).q
    jac = jax.jacfwd(f)(U)  # implicit function theorem inside optimistix
    eps = 1e-6
    fd = jnp.stack([(f(U + eps * e) - f(U - eps * e)) / (2 * eps) for e in jnp.eye(2)], axis=1)
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-8)
    assert float(jnp.min(jnp.abs(jac[:2, :]).max(axis=0))) > 1e-2  # a non-trivial sensitivity


def test_equilibrium_by_differences_equals_autodiff(arm):
    """The tangent stiffness by central differences: the same root as the forward-mode Newton, and
    gradients (implicit function theorem through the differences' Jacobian) to its accuracy."""
    exact = equilibrium(arm, U, jnp.zeros(4))
    diff = equilibrium(arm, U, jnp.zeros(4), jacobian="differences")
    assert bool(diff.success) and float(jnp.max(jnp.abs(diff.residual))) < 1e-10
    np.testing.assert_allclose(diff.q, exact.q, rtol=0, atol=1e-12)
    jac = jax.jacfwd(lambda u: equilibrium(arm, u, jnp.zeros(4)).q)(U)
    jac_diff = jax.jacfwd(lambda u: equilibrium(arm, u, jnp.zeros(4), jacobian="differences").q)(U)
    # ≈ eps^(2/3) relative error of the differences, times the tangent stiffness's condition
    np.testing.assert_allclose(jac_diff, jac, rtol=0, atol=1e-8 * float(jnp.max(jnp.abs(jac))))
    with pytest.raises(ValueError, match="jacobian"):
        equilibrium(arm, U, jnp.zeros(4), jacobian="fd")


def test_holding_input_fully_actuated_roundtrip():
    arm = wr.hybrid_arm(actuate_body=True, gains=(2.0, 0.5))
    q = jnp.array([0.4, -0.3, 0.6, 0.01])
    hold = holding_input(arm, q)
    assert float(jnp.max(jnp.abs(hold.residual))) < 1e-12
    # independent reference: A = diag(gains), so u = ID(q, 0, 0) / gains
    tau = kj.inverse_dynamics(arm, q, 0 * q, 0 * q)
    np.testing.assert_allclose(hold.u, tau / jnp.array([2.0, 0.5, 1.0, 1.0]), rtol=1e-12)


def test_holding_input_underactuated_least_squares(arm):
    q = jnp.array([0.4, -0.3, 0.6, 0.01])  # not an equilibrium of the passive soft segment
    hold = holding_input(arm, q)
    b = np.asarray(kj.actuation_matrix(arm, q))
    tau = np.asarray(kj.inverse_dynamics(arm, q, 0 * q, 0 * q))
    u_ref = np.linalg.lstsq(b, tau, rcond=None)[0]
    np.testing.assert_allclose(hold.u, u_ref, rtol=1e-10)
    np.testing.assert_allclose(hold.residual, tau - b @ u_ref, atol=1e-12)
    assert float(jnp.linalg.norm(hold.residual)) > 1e-3  # the soft segment's own torque is unbalanced
    # at an actual equilibrium the least-squares input is exact and equals the input that made it
    eq = equilibrium(arm, U, jnp.zeros(4))
    back = holding_input(arm, eq.q)
    np.testing.assert_allclose(back.u, U, atol=1e-10)
    assert float(jnp.max(jnp.abs(back.residual))) < 1e-10


def test_non_convergence_is_reported(arm):
    nan_guess = jnp.array([jnp.nan, 0.0, 0.0, 0.0])  # diverges at once; same compilation as the others
    bad = equilibrium(arm, U, nan_guess, throw=False)
    assert not bool(bad.success)
    with pytest.raises(eqx.EquinoxRuntimeError, match="did not converge"):
        equilibrium(arm, U, nan_guess)


def test_bad_inputs(arm):
    with pytest.raises(ValueError, match="`u` must have shape \\(2,\\)"):
        equilibrium(arm, jnp.zeros(4), jnp.zeros(4))
    with pytest.raises(ValueError, match="q_guess"):
        equilibrium(arm, U, jnp.zeros(3))
    with pytest.raises(ValueError, match="max_steps"):
        equilibrium(arm, U, jnp.zeros(4), max_steps=0)


@pytest.mark.parametrize("which", ["hybrid_arm_with_damping", "mixed_rigid_soft_generic"])
def test_static_forces_are_the_id_at_rest_velocity(which, arm):
    # the statics' kernel traces no velocity terms (qd=None: configuration-only jets, internal forces at
    # q̇ = 0); reference: the public ID with q̇ = q̈ = 0 (damped joints and Kelvin–Voigt bodies included)
    import zlib

    from helpers import derivative_matrix as dm

    from kane_jax.algorithms._recursion import inverse_dynamics_kernel

    rng = np.random.default_rng(zlib.crc32(which.encode()))
    chain = arm if which.startswith("hybrid") else dm.make_chain("mixed", "mixed", 4, rng)
    q = jnp.asarray(rng.uniform(-0.4, 0.4, chain.nq))
    static = jax.jit(lambda x: inverse_dynamics_kernel(chain, x, None, None))(q)
    reference = kj.inverse_dynamics(chain, q, jnp.zeros_like(q), jnp.zeros_like(q))
    np.testing.assert_allclose(static, reference, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(reference))))
