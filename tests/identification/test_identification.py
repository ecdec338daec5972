"""Parameter identification of a hybrid robot (rigid link + planar CC segment) from simulated data."""

import helpers.robots as wr
import jax
import jax.numpy as jnp
import numpy as np
import optax
import optimistix as optx
import pytest

import kane_jax as kj
from kane_jax.identification import Samples, fit, id_residual_loss, linear_least_squares, regressor, simulation_loss
from kane_jax.optimize import InputSequence
from kane_jax.simulation import simulate

TRUE = wr.TRUE_PARAMS


def rel_errors(est, true=TRUE):
    return {k: float(jnp.max(jnp.abs(est[k] - true[k]) / jnp.abs(true[k]))) for k in true}


@pytest.fixture(scope="module")
def data():
    """2 s of exciting motion (sums of sines on both motors), 101 samples, exact accelerations."""
    chain = wr.ident_robot(TRUE)
    t = jnp.linspace(0.0, 2.0, 41)
    u_knots = jnp.stack([0.6 * jnp.sin(3.1 * t) + 0.3 * jnp.sin(7.3 * t) + 0.2,
                         0.2 * jnp.sin(4.7 * t + 1.0) + 0.1 * jnp.cos(9.1 * t)], axis=1)
    inputs = InputSequence(u_knots, 2.0, kind="linear")
    traj = simulate(chain, jnp.zeros(3), jnp.zeros(3), 2.0, control=inputs, saveat=101, rtol=1e-11, atol=1e-13)
    qdd = jax.vmap(lambda q, qd, u: kj.forward_dynamics(chain, q, qd, kj.actuation_force(chain, q, u)))(
        traj.q, traj.qd, traj.u)
    return traj, Samples(traj.q, traj.qd, qdd, traj.u), inputs


def guess():
    return jax.tree.map(lambda x: x * 1.3, TRUE)


def test_linear_least_squares_noise_free(data):
    _, samples, _ = data
    res = linear_least_squares(wr.ident_robot, guess(), samples)
    errs = rel_errors(res.params)
    assert res.rank == 8  # all 8 parameters (first moment has 2) identifiable from these data
    assert max(errs.values()) < 1e-6, errs


def test_linear_least_squares_with_noise(data):
    _, samples, _ = data
    rng = np.random.default_rng(0)
    noise = (1e-4, 1e-3, 1e-2, 1e-3)  # stated noise: q [rad], q̇ [rad/s], q̈ [rad/s²], u [N m]
    noisy = Samples(*[x + s * rng.standard_normal(x.shape) for x, s in zip(samples, noise)])
    errs = rel_errors(linear_least_squares(wr.ident_robot, guess(), noisy).params)
    print("LS relative errors at noise", noise, {k: f"{v:.1e}" for k, v in errs.items()})
    assert max(errs.values()) < 0.05, errs


def test_regressor_is_exact_and_nonlinear_parameters_are_rejected(data):
    _, samples, _ = data
    phi, r0 = regressor(wr.ident_robot, TRUE, Samples(*[x[:5] for x in samples]))
    flat = jnp.concatenate([jnp.ravel(TRUE[k]) for k in sorted(TRUE)])
    assert float(jnp.max(jnp.abs(phi @ flat + r0))) < 1e-9  # the true parameters explain the data
    with pytest.raises(ValueError, match="not affine"):
        bad = lambda p: wr.ident_robot({**TRUE, "izz": p["izz"], "gain": p["gain"] ** 2})
        linear_least_squares(bad, {"izz": TRUE["izz"], "gain": TRUE["gain"]}, samples)


def test_optax_id_residual_loss(data):
    _, samples, _ = data
    scale = jnp.sqrt(jnp.mean(samples.u**2)) * jnp.ones(3)
    res = fit(id_residual_loss(wr.ident_robot, samples, scale=scale), guess(), optimizer=optax.lbfgs(), steps=60)
    errs = rel_errors(res.params)
    assert res.num_traces == 1  # one compilation for all 60 iterations
    assert float(res.losses[-1]) < 1e-12 * float(res.losses[0])
    assert max(errs.values()) < 1e-6, errs


def test_simulation_error_loss_with_optimistix_lbfgs(data):
    """The simulation-error fit with an optimistix minimiser (one evaluation of the loss and its gradient per step,
    once in the program); the optax path is the ID-residual fit's above."""
    traj, _, inputs = data
    rng = np.random.default_rng(1)
    sigma = 1e-3  # stated noise on the measured configurations [rad]
    ts, q_meas = traj.ts[:51], traj.q[:51] + sigma * rng.standard_normal(traj.q[:51].shape)
    q_meas = q_meas.at[0].set(traj.q[0])
    known = {k: TRUE[k] for k in ("mass", "first_moment", "izz")}
    build = lambda p: wr.ident_robot({**known, **p})
    p0 = {k: TRUE[k] * 0.8 for k in ("density", "youngs_modulus", "damping_modulus", "gain")}
    loss = simulation_loss(build, ts, q_meas, inputs, dt=0.005)
    res = fit(loss, p0, optimizer=optx.LBFGS(rtol=1e-12, atol=1e-14), steps=60)
    errs = rel_errors(res.params, {k: TRUE[k] for k in p0})
    print("simulation-error fit, relative errors at sigma_q = 1e-3 rad:", {k: f"{v:.1e}" for k, v in errs.items()},
          "losses", np.asarray(res.losses)[[0, 10, 30, -1]])
    assert res.num_traces == 1
    losses = np.asarray(res.losses)
    assert losses.shape == (61,)
    assert np.all(np.diff(losses) <= 1e-15 * losses[0])  # accepted points of a line search: non-increasing
    # the minimum is the noise's: measured 2.1101e-6 rad² (optax's L-BFGS reaches the same to 1e-14 relative)
    assert float(losses[-1]) < 0.01 * float(losses[0])
    assert max(errs.values()) < 0.05, errs


def test_fit_rejects_an_unknown_optimizer():
    with pytest.raises(TypeError, match="optimizer"):
        fit(lambda p: jnp.sum(p["a"] ** 2), {"a": jnp.ones(2)}, optimizer="lbfgs")
