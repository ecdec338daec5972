"""simulate(): energy conservation, convergence to the Newton equilibrium, vmap, gradients, failures.

One small hybrid chain (revolute rigid link + planar constant-curvature soft body, nq = 2) is used
throughout so that the compiled solves are shared between tests (tolerances are traced).
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj


def hybrid(damping=0.0, joint_damping=0.0):
    link = kj.RigidBody(0.3, com=(0.1, 0.0, 0.0), inertia=jnp.diag(jnp.array([1e-4, 1e-3, 1e-3])),
                        tip=jnp.eye(4).at[0, 3].set(0.2))
    soft = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 2e5, damping, order=3, n_radial=1, n_angular=3)
    joint = kj.Revolute((0.0, 0.0, 1.0), stiffness=0.5, damping=joint_damping)
    return kj.Chain([(joint, link), (kj.Fixed(), soft)], gravity=(0.0, -9.81, 0.0))


Q0 = jnp.array([-1.2, 0.6])
ZERO = jnp.zeros(2)


def energy(chain, q, qd):
    return kj.kinetic_energy(chain, q, qd) + kj.potential_energy(chain, q)


def test_energy_conserved_without_damping_or_input():
    # reference: the initial total energy (T + V_gravity + U_elastic), an exact invariant
    chain = hybrid()
    traj = kj.simulate(chain, Q0, ZERO, 5.0, rtol=1e-10, atol=1e-12, n_save=51)
    e = jax.vmap(lambda q, qd: energy(chain, q, qd))(traj.q, traj.qd)
    drift = float(jnp.max(jnp.abs(e - e[0])) / jnp.abs(e[0]))
    assert bool(traj.success)
    assert drift < 1e-6, drift
    # the motion is not trivial: the link swings through more than 0.2 rad
    assert float(jnp.ptp(traj.q[:, 0])) > 0.2


def test_float32_initial_state_of_a_float64_chain_is_simulated_in_float64():
    """float32 initial states (x64 on, the chain in float64) are taken in the chain's precision: the same
    trajectory as from the same values in float64 (the solve compiled above, reused). They crashed before:
    diffrax's buffers are made in the state's dtype and the vector field returned float64."""
    chain = hybrid()
    q32 = Q0.astype(jnp.float32)
    traj32 = kj.simulate(chain, q32, ZERO.astype(jnp.float32), 5.0, rtol=1e-10, atol=1e-12, n_save=51)
    traj = kj.simulate(chain, q32.astype(jnp.float64), ZERO, 5.0, rtol=1e-10, atol=1e-12, n_save=51)
    assert traj32.q.dtype == jnp.float64 and bool(traj32.success)
    np.testing.assert_array_equal(traj32.q, traj.q)
    np.testing.assert_array_equal(traj32.qd, traj.qd)


def newton_equilibrium(chain, u, q):
    # independent statics: Newton on ID(q, 0, 0) = u with the Jacobian by jax.jacfwd (003 eq. 55)
    res = eqx.filter_jit(lambda c, x: kj.inverse_dynamics(c, x, jnp.zeros_like(x), jnp.zeros_like(x)) - u)
    jac = eqx.filter_jit(jax.jacfwd(lambda x, c: kj.inverse_dynamics(c, x, jnp.zeros_like(x), jnp.zeros_like(x))))
    for _ in range(30):
        r = res(chain, q)
        q = q - jnp.linalg.solve(jac(q, chain), r)
        if float(jnp.max(jnp.abs(r))) < 1e-13:
            break
    return q, float(jnp.max(jnp.abs(res(chain, q))))


def test_damped_arm_converges_to_newton_equilibrium():
    chain = hybrid(damping=0.3, joint_damping=0.3)
    u = jnp.array([0.3, -0.02])  # constant generalized forces (chain without actuators)
    traj = kj.simulate(chain, Q0, ZERO, 8.0, control=u, rtol=1e-10, atol=1e-12, n_save=51)
    q_eq, residual = newton_equilibrium(chain, u, traj.q[-1])
    assert residual < 1e-12
    np.testing.assert_allclose(traj.q[-1], q_eq, atol=1e-6)
    np.testing.assert_allclose(traj.qd[-1], 0.0, atol=1e-5)
    np.testing.assert_allclose(traj.u, jnp.broadcast_to(u, traj.u.shape), rtol=0, atol=0)
    # it actually moved there from far away
    assert float(jnp.max(jnp.abs(traj.q[0] - q_eq))) > 0.3


def test_gradient_through_solve_matches_finite_differences():
    chain = hybrid(damping=0.3, joint_damping=0.3)

    def loss(u, q0):
        traj = kj.simulate(chain, q0, ZERO, 0.4, control=u, rtol=1e-10, atol=1e-12, n_save=5)
        return jnp.sum(traj.q[-1] ** 2) + 0.1 * jnp.sum(traj.qd[-1])

    u = jnp.array([0.3, -0.02])
    # one program for the gradient and the values the central differences need
    value_and_grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    gu, gq = value_and_grad(u, Q0)[1]
    value = lambda *args: value_and_grad(*args)[0]  # noqa: E731
    eps = 1e-5
    for x, g, arg in ((u, gu, 0), (Q0, gq, 1)):
        fd = []
        for k in range(2):
            e = jnp.zeros(2).at[k].set(eps)
            args_p = [u, Q0]
            args_m = [u, Q0]
            args_p[arg] = x + e
            args_m[arg] = x - e
            fd.append((value(*args_p) - value(*args_m)) / (2 * eps))
        # central differences: O(eps²) truncation plus solver noise ~ rtol/eps
        np.testing.assert_allclose(g, np.array(fd), rtol=1e-5, atol=1e-7)


def test_vmap_and_jit_over_initial_states_match_single_solves():
    chain = hybrid()
    q0s = jnp.stack([Q0, Q0 * 0.5])
    batched = eqx.filter_jit(jax.vmap(lambda q0: kj.simulate(chain, q0, ZERO, 0.5, rtol=1e-10, atol=1e-12,
                                                             n_save=5)))(q0s)
    for b in range(2):
        single = kj.simulate(chain, q0s[b], ZERO, 0.5, rtol=1e-10, atol=1e-12, n_save=5)
        np.testing.assert_allclose(batched.q[b], single.q, atol=1e-9)
    assert batched.q.shape == (2, 5, 2)


def test_feedback_law_and_time_law_match_constant_input():
    # u(t) and u(t, q, qd) returning the same constant give the same trajectory as the constant
    chain = hybrid(damping=0.3, joint_damping=0.3)
    u = jnp.array([0.3, -0.02])
    ref = kj.simulate(chain, Q0, ZERO, 0.3, control=u, rtol=1e-10, atol=1e-12, n_save=5)
    by_time = kj.simulate(chain, Q0, ZERO, 0.3, control=lambda t: u + 0.0 * t, rtol=1e-10, atol=1e-12, n_save=5)
    np.testing.assert_allclose(by_time.q, ref.q, atol=1e-12)
    np.testing.assert_allclose(by_time.u, ref.u, atol=0)


class _Feedback(eqx.Module):
    gain: jax.Array

    def __call__(self, t, q, qd):
        return self.gain * jnp.stack([jnp.sin(q[0] - t), q[1] * qd[0]]) - 0.05 * qd


def test_saved_inputs_are_the_feedback_law_at_the_saved_states():
    # Trajectory.u (a law without the chain's arrays: evaluated after the solve, save by save) against the
    # law called eagerly at each saved (t, q, q̇), for one solve and for a vmapped batch of two
    chain, law = hybrid(damping=0.3, joint_damping=0.3), _Feedback(jnp.asarray(0.4))
    traj = kj.simulate(chain, Q0, ZERO, 0.3, control=law, rtol=1e-8, atol=1e-10, n_save=7)
    want = np.stack([np.asarray(law(t, q, qd)) for t, q, qd in zip(traj.ts, traj.q, traj.qd)])
    np.testing.assert_allclose(traj.u, want, rtol=0, atol=1e-15)
    assert float(np.min(np.ptp(want, axis=0))) > 1e-3  # the inputs vary along the motion
    batch = eqx.filter_jit(jax.vmap(lambda q0: kj.simulate(chain, q0, ZERO, 0.3, control=law, rtol=1e-8,
                                                             atol=1e-10, n_save=7)))(jnp.stack([Q0, 0.5 * Q0]))
    for b in range(2):
        want = np.stack([np.asarray(law(t, q, qd)) for t, q, qd in zip(batch.ts[b], batch.q[b], batch.qd[b])])
        np.testing.assert_allclose(batch.u[b], want, rtol=0, atol=1e-15)


class _ModelLaw(eqx.Module):
    """A feedback law that holds the chain (as a PFBL does): half its gravity compensated, plus a PD."""

    chain: kj.Chain

    def __call__(self, t, q, qd):
        return 0.5 * kj.inverse_dynamics(self.chain, q, jnp.zeros_like(q), jnp.zeros_like(q)) - 0.3 * (q - 0.1 * t) \
            - 0.05 * qd


def test_a_model_laws_inputs_come_from_the_solvers_stages():
    # a law holding the chain's arrays: its saved inputs are the FSAL stages' (the steps end on the saves),
    # checked against the law called eagerly at each saved state, and the motion against the same law
    # on a copy of the chain (other arrays: the inputs evaluated after the solve, diffrax's own steps)
    chain = hybrid(damping=0.3, joint_damping=0.3)
    copy = jax.tree.map(lambda x: x + 0 if eqx.is_array(x) else x, chain)
    kw = dict(rtol=1e-10, atol=1e-12, n_save=31)
    traj = kj.simulate(chain, Q0, ZERO, 0.3, control=_ModelLaw(chain), **kw)
    after = kj.simulate(chain, Q0, ZERO, 0.3, control=_ModelLaw(copy), **kw)
    assert int(traj.stats["num_steps"]) > int(after.stats["num_steps"])  # 281 > 267: clipped at the 29 interior saves
    want = np.stack([np.asarray(_ModelLaw(chain)(t, q, qd)) for t, q, qd in zip(traj.ts, traj.q, traj.qd)])
    np.testing.assert_allclose(traj.u, want, rtol=0, atol=1e-14)
    assert float(np.min(np.ptp(want, axis=0))) > 1e-3
    np.testing.assert_array_equal(traj.ts, after.ts)
    np.testing.assert_allclose(traj.q, after.q, rtol=0, atol=1e-10)  # other steps: the tolerance's level (4e-13)
    np.testing.assert_allclose(traj.u, after.u, rtol=0, atol=1e-9)  # (1e-11)


@pytest.mark.slow  # the implicit solvers compile a Jacobian of the whole vector field (~1 min)
def test_implicit_solvers_agree_with_tsit5():
    chain = hybrid(damping=0.3, joint_damping=0.3)
    ref = kj.simulate(chain, Q0, ZERO, 0.2, rtol=1e-10, atol=1e-12, n_save=3)
    for name in ("kvaerno5", "kencarp4"):
        traj = kj.simulate(chain, Q0, ZERO, 0.2, solver=name, rtol=1e-8, atol=1e-10, n_save=3)
        # both solves are accurate to ~tolerance; the difference is a global error of a few × 1e-7
        np.testing.assert_allclose(traj.q, ref.q, atol=1e-6)


def test_pi_step_control_damps_rejections_at_the_stability_limit():
    # a stiff Kelvin-Voigt mode (|λ| = 613 1/s: >= 186 Tsit5 steps for stability over 1 s) holds the
    # steps at Tsit5's stability limit; both controllers agree with a tight Dopri8 reference, and the
    # PI controller rejects far fewer steps (measured: integral 253 steps, 52 rejected; PI 219, 7;
    # errors 1.7e-9 / 1.1e-9 on q, 1.1e-6 / 7.1e-7 on q̇)
    chain = hybrid(damping=1.0, joint_damping=0.05)
    ref = kj.simulate(chain, Q0, ZERO, 1.0, solver="dopri8", rtol=1e-12, atol=1e-14, n_save=11)
    runs = {sc: kj.simulate(chain, Q0, ZERO, 1.0, solver="tsit5", rtol=1e-6, atol=1e-8, n_save=11, step_control=sc)
            for sc in ("integral", "pi")}
    for traj in runs.values():
        np.testing.assert_allclose(traj.q, ref.q, rtol=0, atol=1e-7)
        np.testing.assert_allclose(traj.qd, ref.qd, rtol=0, atol=1e-5)
    rejected = {sc: int(traj.stats["num_rejected_steps"]) for sc, traj in runs.items()}
    assert 3 * rejected["pi"] < rejected["integral"], rejected
    assert int(runs["pi"].stats["num_steps"]) < int(runs["integral"].stats["num_steps"])


def test_failure_surfaces_through_result_not_nan():
    chain = hybrid()
    traj = kj.simulate(chain, Q0, ZERO, 5.0, max_steps=3, throw=False, n_save=3)
    assert traj.result == diffrax.RESULTS.max_steps_reached
    assert not bool(traj.success)
    assert "max_steps" in traj.message
    # the save points after the stop were never reached (diffrax fills them with inf, times included):
    # the message names the last one reached, not an "inf" time or a non-finite state
    assert float(traj.ts[0]) == 0.0 and not np.isfinite(float(traj.ts[1])) and int(traj.nonfinite_at) == 1
    assert "stopped before save index 1" in traj.message and "t = 0 s (save index 0)" in traj.message
    assert "inf s" not in traj.message and "became non-finite" not in traj.message
    with pytest.raises(kj.SimulationError, match="max_steps"):
        kj.simulate(chain, Q0, ZERO, 5.0, max_steps=3, n_save=3)


def test_bad_arguments_raise():
    chain = hybrid()
    with pytest.raises(ValueError, match="q0"):
        kj.simulate(chain, jnp.zeros(3), ZERO, 1.0)
    with pytest.raises(ValueError, match="t1"):
        kj.simulate(chain, Q0, ZERO, -1.0)
    with pytest.raises(ValueError, match="solver"):
        kj.simulate(chain, Q0, ZERO, 1.0, solver="euler-forward")
    with pytest.raises(ValueError, match="control"):
        kj.simulate(chain, Q0, ZERO, 1.0, control=jnp.ones(5))
    with pytest.raises(ValueError, match="step_control"):
        kj.simulate(chain, Q0, ZERO, 1.0, step_control="gustafsson")
    with pytest.raises(ValueError, match="step_control"):
        kj.simulate(chain, Q0, ZERO, 1.0, step_control=(0.4, -0.3, 0.0))
    with pytest.raises(TypeError, match="step_control"):
        kj.simulate(chain, Q0, ZERO, 1.0, step_control=0.4)


class _SwitchedForce(eqx.Module):
    """A model-based feedback law (it holds the chain: ``M(q)`` times an acceleration that jumps at
    ``t_switch``, a save time), which says so in ``jump_times``."""

    chain: kj.Chain
    t_switch: jax.Array

    @property
    def jump_times(self):
        return self.t_switch[None]

    def __call__(self, t, q, qd):
        return kj.mass_matrix(self.chain, q) @ jnp.where(t < self.t_switch, 2.0, -3.0)[None]


def test_a_law_that_switches_at_a_save_time_is_stepped_across_exactly():
    # reference: the closed form of a mass pushed by a piecewise constant force, x = a t²/2 and then
    # x(T) + ẋ(T)(t − T) − 3(t − T)²/2. Tsit5 integrates a constant acceleration exactly, so steps that end
    # at the switch (the law's jump_times, simulate's default jump_ts) give rounding only; a step
    # across it would be off by the tolerance's order (1e-9 here)
    mass = 1.7
    body = kj.RigidBody(mass, com=(0.0, 0.0, 0.0), inertia=jnp.eye(3) * 1e-3, tip=jnp.eye(4))
    chain = kj.Chain([(kj.Prismatic((1.0, 0.0, 0.0)), body)], gravity=(0.0, 0.0, -9.81))
    law = _SwitchedForce(chain, jnp.asarray(0.5))
    traj = kj.simulate(chain, jnp.zeros(1), jnp.zeros(1), 1.0, control=law, n_save=11, rtol=1e-8, atol=1e-9)
    t = np.asarray(traj.ts)
    late = np.maximum(t - 0.5, 0.0)
    x = np.where(t < 0.5, t**2, 0.25 + 1.0 * late - 1.5 * late**2)
    assert bool(traj.success)
    np.testing.assert_allclose(np.asarray(traj.q[:, 0]), x, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.asarray(traj.u[:, 0]), mass * np.where(t < 0.5, 2.0, -3.0), rtol=0, atol=1e-13)
