"""The stiff path: Ros34PW2 (Rosenbrock–W, structured Jacobian) and simulate's automatic choice.

References: a dense solve of the stage system, an explicit Dopri8 solve at tight tolerance, the
energy balance of a Kelvin–Voigt body (the dissipated work from the damping forces alone), the
observed convergence order 3, and the eigenvalues of the dense autodiff Jacobian of the dynamics.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax._modules import chain_vector
from kane_jax.algorithms._terms import internal_forces
from kane_jax.simulation import rosenbrock


def stiff_arm(eta=0.5):
    """Motorless revolute joint + two extensible planar CC segments; |λ| ≈ 1e5 1/s at rest (η = 0.5)."""
    body = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e6, eta, elongation=True, order=3, n_radial=1,
                                      n_angular=3)
    return kj.Chain([(kj.Revolute((0, 0, 1), damping=0.05), body), (kj.Fixed(), body)], gravity=(0.0, -9.81, 0.0))


Q0 = jnp.array([0.8, 0.5, 0.002, -0.4, 0.0])
ZERO = jnp.zeros(5)


@pytest.mark.parametrize("n", [4, 40])  # the element-wise LU and LAPACK's (above UNROLLED_LU)
def test_structured_stage_solve_matches_dense_solve(n):
    # reference: jnp.linalg.solve of (I/(hγ) − J) with J = [[0, I], [−M⁻¹K, −M⁻¹D]] built densely
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, n))
    mass = a @ a.T + n * np.eye(n)
    stiffness, damping = rng.normal(size=(n, n)) * 50, rng.normal(size=(n, n)) * 3  # not symmetric: LU
    rq, rv = rng.normal(size=n), rng.normal(size=n)
    hg = 0.013
    minv = np.linalg.inv(mass)
    jac = np.block([[np.zeros((n, n)), np.eye(n)], [-minv @ stiffness, -minv @ damping]])
    dense = np.linalg.solve(np.eye(2 * n) / hg - jac, np.concatenate([rq, rv]))
    mass, stiffness, damping = jnp.asarray(mass), jnp.asarray(stiffness), jnp.asarray(damping)
    factors = rosenbrock._w_factor(mass, stiffness, damping, hg)
    xq, xv = rosenbrock._w_solve(factors, mass, stiffness, hg, (jnp.asarray(rq), jnp.asarray(rv)))
    np.testing.assert_allclose(np.concatenate([xq, xv]), dense, rtol=1e-12, atol=1e-12)


def test_agrees_with_tight_explicit_reference():
    chain = stiff_arm()
    ref = kj.simulate(chain, Q0, ZERO, 0.05, solver="dopri8", rtol=1e-12, atol=1e-14, n_save=6, max_steps=200_000)
    traj = kj.simulate(chain, Q0, ZERO, 0.05, solver="ros34pw2", rtol=1e-8, atol=1e-10, n_save=6)
    assert traj.solver == "ros34pw2" and bool(traj.success)
    # global error of the rtol 1e-8 solve: measured 2.3e-10 on q, 4.6e-9 on q̇ (903 steps)
    np.testing.assert_allclose(traj.q, ref.q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(traj.qd, ref.qd, rtol=0, atol=1e-7)
    # the motion is not trivial: the segments bend by ≈ 0.04 rad
    assert float(jnp.ptp(traj.q[:, 1])) > 0.03


def test_kelvin_voigt_energy_balance():
    # E(t) + ∫ q̇ᵀ Q_damp dt = E(0): the only dissipation is the damping part of the internal forces
    chain = stiff_arm(eta=0.05)
    traj = kj.simulate(chain, Q0, ZERO, 0.3, solver="ros34pw2", rtol=1e-9, atol=1e-11, n_save=3001)

    def energy(q, qd):
        return kj.kinetic_energy(chain, q, qd) + kj.potential_energy(chain, q)

    def power(q, qd):
        damp = chain_vector(chain, internal_forces(chain, q, qd) - internal_forces(chain, q, jnp.zeros_like(qd)))
        return qd @ damp

    e = jax.vmap(energy)(traj.q, traj.qd)
    p = np.asarray(jax.vmap(power)(traj.q, traj.qd))
    dt = np.diff(np.asarray(traj.ts))
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * dt * (p[1:] + p[:-1]))])
    balance = np.asarray(e) + dissipated - float(e[0])
    # a real loss: a quarter of the initial energy, balanced to 1e-5 of it (the trapezoid rule on
    # 3,001 samples of the dissipated power limits it, not the solve)
    assert dissipated[-1] > 0.05 * abs(float(e[0]))
    assert np.max(np.abs(balance)) < 1e-5 * abs(float(e[0])), np.max(np.abs(balance))


def test_convergence_order_three_with_the_approximate_jacobian():
    # fixed steps h and h/2 against a tight Dopri8 solve: a W-method keeps order 3 although J leaves
    # out the inertial and gravity terms (error ratio 2³ = 8)
    chain = stiff_arm(eta=0.002)
    ref = kj.simulate(chain, Q0, ZERO, 0.02, solver="dopri8", rtol=1e-13, atol=1e-15, n_save=2)
    errors = []
    for dt in (1e-3, 5e-4):
        traj = kj.simulate(chain, Q0, ZERO, 0.02, solver="ros34pw2", adaptive=False, dt0=dt, n_save=2)
        errors.append(float(jnp.max(jnp.abs(traj.q[-1] - ref.q[-1]))))
    ratio = errors[0] / errors[1]
    assert 6.0 < ratio < 10.5, (errors, ratio)


def test_stiffness_matches_the_dense_jacobian_and_auto_picks_the_solver():
    chain = stiff_arm()
    report = kj.simulation.stiffness(chain, ZERO, ZERO, 1.0)

    def field(y):
        q, qd = y[:5], y[5:]
        return jnp.concatenate([qd, kj.forward_dynamics(chain, q, qd, jnp.zeros(5))])

    dense = jax.jacfwd(field)(jnp.zeros(10))
    rho = float(np.max(np.abs(np.linalg.eigvals(np.asarray(dense)))))
    # the structured linearization leaves out gravity's stiffness, negligible against 1e5 1/s
    assert report.spectral_radius == pytest.approx(rho, rel=1e-6)
    assert report.solver == "ros34pw2" and report.explicit_steps > 2_000
    traj = kj.simulate(chain, ZERO, ZERO, 0.1, n_save=2)  # ≈ 3,000 explicit steps
    assert traj.solver.startswith("ros34pw2 (auto: stiff")
    # a rigid pendulum is not stiff: the explicit default stays
    pend = kj.Chain([(kj.Revolute((0, 0, 1)), kj.RigidBody(1.0, (0.2, 0.0, 0.0), 1e-3 * jnp.eye(3)))],
                    gravity=(0.0, -9.81, 0.0))
    traj = kj.simulate(pend, jnp.array([0.3]), jnp.zeros(1), 1.0, n_save=2)
    assert traj.solver.startswith("tsit5 (auto: not stiff")
    # under a transformation the state is not concrete: "auto" means Tsit5
    out = jax.jit(lambda q: kj.simulate(pend, q, jnp.zeros(1), 0.1, n_save=2).q)(jnp.array([0.3]))
    assert np.all(np.isfinite(np.asarray(out)))


def test_auto_choice_tells_stiff_damped_modes_from_oscillations():
    # one revolute joint, inertia about its axis I = 1e-3 + 1.0 * 0.2² = 0.041 kg m²: λ² I + λ d + k = 0
    def pendulum(k, d):
        body = kj.RigidBody(1.0, (0.2, 0.0, 0.0), 1e-3 * jnp.eye(3))
        return kj.Chain([(kj.Revolute((0, 0, 1), stiffness=k, damping=d), body)], gravity=(0.0, 0.0, 0.0))

    z = jnp.zeros(1)
    # heavy damping, no spring: λ = −d/I = −1e5 1/s, a decaying mode an explicit solver must not follow
    report = kj.simulation.stiffness(pendulum(0.0, 0.041 * 1e5), z, z, 1.0)
    assert report.damped_radius == pytest.approx(1e5, rel=1e-9) and report.solver == "ros34pw2"
    # a stiff spring with light damping: λ = −5 ± 1e4 i, an oscillation that accuracy must resolve anyway
    report = kj.simulation.stiffness(pendulum(0.041 * 1e8, 0.41), z, z, 1.0)
    assert report.oscillation_radius == pytest.approx(1e4, rel=1e-6) and report.damped_radius == 0.0
    assert report.solver == "tsit5" and "oscillation" in report.reason
    # a damped mode at 2e3 1/s over 10 s: 6,000 stability steps, but slower than Tsit5's accuracy steps
    report = kj.simulation.stiffness(pendulum(0.0, 0.041 * 2e3), z, z, 10.0)
    assert report.explicit_steps == pytest.approx(2e3 * 10.0 / 3.3, rel=1e-9)
    assert report.solver == "tsit5" and "slower than 5e3" in report.reason


def test_feedback_laws_are_told_from_open_loop_inputs():
    from kane_jax.simulation._control import _control_law, _evaluate_law, reads_state

    f64 = jnp.float64
    laws = {
        "constant": (jnp.ones(2), False),
        "u(t)": (lambda t: jnp.sin(t) * jnp.ones(2), False),
        "none": (None, False),
        "t inside a jit": (lambda t, q, qd: jax.jit(lambda a: 2.0 * a)(t * jnp.ones(2)), False),
        "q": (lambda t, q, qd: q[:2], True),
        "q̇ inside a jit": (lambda t, q, qd: jax.jit(lambda a: 2.0 * a)(qd[1:]), True),
        "q through a scan": (lambda t, q, qd: jax.lax.scan(lambda c, x: (c + x, c), 0.0, q)[1][:2], True),
    }
    for name, (control, feedback) in laws.items():
        assert reads_state(_control_law(control, 2, f64), 3, f64) is feedback, name
        # the jitted law (one pjit equation) is read through: the same answers
        jitted = (lambda c: lambda t, q, qd: _evaluate_law(c, 2, f64, t, q, qd))(control)
        assert reads_state(jitted, 3, f64) is feedback, name
    # the stiff arm under a feedback law: "auto" keeps an explicit solver, the one with the long stability
    # interval (|λ| ≈ 1e5 1/s open loop), and says why; a slow arm keeps Tsit5
    name, reason = kj.simulation.choose_solver(stiff_arm(), ZERO, ZERO, 1.0, control=lambda t, q, qd: -q)
    assert name == "stabilized_rk3" and "feeds back" in reason and "stiff" in reason
    name, reason = kj.simulation.choose_solver(stiff_arm(eta=1e-4), ZERO, ZERO, 1.0, control=lambda t, q, qd: -q)
    assert name == "tsit5" and "feeds back" in reason
    assert kj.simulation.choose_solver(stiff_arm(), ZERO, ZERO, 1.0)[0] == "ros34pw2"


def test_closed_loop_jacobian_takes_a_stiff_feedback_law():
    # high-gain damping on the joint (no actuators: u is the generalized force): the closed loop's
    # mode λ ≈ −k_d / M₀₀ ≈ −1.1e4 1/s comes from the law, which the open-loop K, D leave out
    chain = stiff_arm(eta=0.002)
    kp, kd = 50.0, 300.0

    def law(t, q, qd):
        return jnp.zeros(5).at[0].set(-kp * q[0] - kd * qd[0])

    # K and D of the closed loop: the internal forces' and the law's closed form (−∂Q_a/∂(q, q̇))
    y = (Q0, jnp.full(5, 0.1))
    open_k, open_d = rosenbrock._force_derivatives((chain, law), 0.0, y, False)
    k, d = rosenbrock._force_derivatives((chain, law), 0.0, y, False, True)
    np.testing.assert_allclose(k - open_k, jnp.zeros((5, 5)).at[0, 0].set(kp), rtol=0, atol=1e-12)
    np.testing.assert_allclose(d - open_d, jnp.zeros((5, 5)).at[0, 0].set(kd), rtol=0, atol=1e-12)
    ref = kj.simulate(chain, Q0, ZERO, 0.05, control=law, solver="dopri8", rtol=1e-12, atol=1e-14, n_save=6,
                      max_steps=100_000)
    traj = kj.simulate(chain, Q0, ZERO, 0.05, control=law, solver=rosenbrock.Ros34PW2(control_jacobian=True),
                       rtol=1e-8, atol=1e-10, n_save=6)
    # global error measured 4.2e-10 on q, 9.4e-8 on q̇ (2,190 steps; without the law's Jacobian the
    # same solver took 50,744 steps, Tsit5 10,926)
    np.testing.assert_allclose(traj.q, ref.q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(traj.qd, ref.qd, rtol=0, atol=1e-6)
    explicit = kj.simulate(chain, Q0, ZERO, 0.05, control=law, solver="tsit5", rtol=1e-8, atol=1e-10, n_save=2)
    assert int(traj.stats["num_steps"]) < int(explicit.stats["num_steps"]) / 3


def test_bad_refresh_raises():
    with pytest.raises(ValueError, match="refresh"):
        rosenbrock.Ros34PW2(refresh=0)


@pytest.mark.parametrize("chain", [stiff_arm(), kj.Chain([(kj.Fixed(), kj.PlanarConstantCurvature(0.2, 0.02))] * 3)],
                         ids=["unequal_modules", "three_equal_modules"])
def test_block_diagonal_assembly_matches_scipy(chain):
    # the stiff solver's K and D from per-module blocks: a select, not an einsum (no dot in its loop)
    import scipy.linalg

    from kane_jax._modules import chain_block_diagonal

    lay = chain.layout
    blocks = np.random.default_rng(1).normal(size=(lay.n_modules, lay.n_max, lay.n_max))
    expected = scipy.linalg.block_diag(*[b[:m, :m] for b, m in zip(blocks, lay.module_nq)])
    np.testing.assert_array_equal(chain_block_diagonal(chain, jnp.asarray(blocks)), expected)
