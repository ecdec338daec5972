"""The spectral radius of a simulation's field and the largest stable step (``kane_jax/simulation/spectral.py``),
``simulate``'s ``max_step``, and phases joined (``kane_jax/simulation/trajectory.py::join``).

References: the eigenvalues of the field's autodiff Jacobian (LAPACK), the closed form of an undamped
oscillator, a tight Dopri8 solution, and one solve over the whole horizon.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import robots

import kane_jax as kj
from kane_jax.simulation._fields import full_field


@pytest.fixture(scope="module")
def kelvin_voigt_chain():
    return robots.kelvin_voigt_chain()


def _jacobian_radius(chain, q, qd, control=None, t=0.0):
    n = chain.nq

    def f(y):
        dq, ddq = full_field(t, (y[:n], y[n:]), (chain, control))
        return jnp.concatenate([dq, ddq])

    jac = np.asarray(jax.jit(jax.jacfwd(f))(jnp.concatenate([q, qd])))
    return float(np.max(np.abs(np.linalg.eigvals(jac))))


def test_spectral_radius_of_damped_and_closed_loop_fields(kelvin_voigt_chain):
    chain, q, qd = kelvin_voigt_chain, jnp.array([-1.2, 0.6]), jnp.array([0.3, -2.0])
    # the Kelvin–Voigt mode (-1.8e4 1/s) dominates the next modulus by ≈ 100×: the power method converges,
    # to the accuracy of its directional differences (≈ sqrt(eps): measured 7.5e-7 relative)
    rho = float(kj.simulation.spectral_radius(chain, q, qd))
    want = _jacobian_radius(chain, q, qd)
    assert 1e4 < want < 3e4 and abs(rho - want) < 1e-5 * want, (rho, want)
    # closed by a law whose damping on the soft coordinate is faster still (-3e5 1/s measured): the law's
    # mode, not the body's
    law = lambda t, q, qd: jnp.array([-2.0 * q[0], -400.0 * qd[1]])  # noqa: E731
    rho = float(kj.simulation.spectral_radius(chain, q, qd, control=law, t=0.1))
    want = _jacobian_radius(chain, q, qd, law, 0.1)
    assert want > 5e4 and abs(rho - want) < 1e-5 * want, (rho, want)


def test_spectral_radius_of_an_oscillation():
    # an undamped link on a stiff spring: eigenvalues ±iω, ω = sqrt(k / I) (closed form); the power
    # method's ‖Jv‖ alternates and its mean over an even number of iterations is ω
    inertia = 2e-3 + 0.5 * 0.1**2  # about the joint axis: I_zz + m |c|²
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0), stiffness=400.0),
                       kj.RigidBody(0.5, com=(0.1, 0.0, 0.0), inertia=jnp.diag(jnp.array([1e-3, 1e-3, 2e-3]))))])
    rho = float(kj.simulation.spectral_radius(chain, jnp.array([0.3]), jnp.array([0.0])))
    assert abs(rho - np.sqrt(400.0 / inertia)) < 1e-5 * rho, rho


def test_stable_step_and_its_errors():
    assert kj.simulation.stable_step("stabilized_rk4", 1e4) == pytest.approx(0.95 * 19.74 / 1e4, rel=1e-15)
    assert kj.simulation.stable_step(kj.simulation.StabilizedRK3, 2e3, safety=0.5) == pytest.approx(
        0.5 * 15.85 / 2e3, rel=1e-15)
    with pytest.raises(ValueError, match="stability_interval"):
        kj.simulation.stable_step("tsit5", 1e4)
    with pytest.raises(ValueError, match="solver"):
        kj.simulation.stable_step("rk45", 1e4)
    with pytest.raises(ValueError, match="safety"):
        kj.simulation.stable_step("stabilized_rk3", 1e4, safety=1.5)
    with pytest.raises(ValueError, match="radius"):
        kj.simulation.stable_step("stabilized_rk3", 0.0)


def test_max_step_below_the_stability_limit(kelvin_voigt_chain):
    chain, q0, qd0 = kelvin_voigt_chain, jnp.array([-1.2, 0.6]), jnp.zeros(2)
    ref = kj.simulate(chain, q0, qd0, 0.3, solver="dopri8", rtol=1e-12, atol=1e-14, n_save=7)
    cap = kj.simulation.stable_step("stabilized_rk4", kj.simulation.spectral_radius(chain, q0, qd0))
    kw = dict(solver="stabilized_rk4", rtol=1e-6, atol=1e-8, n_save=7, step_control="pi")
    free, capped = kj.simulate(chain, q0, qd0, 0.3, **kw), kj.simulate(chain, q0, qd0, 0.3, max_step=cap, **kw)
    np.testing.assert_allclose(capped.q, ref.q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(capped.qd, ref.qd, rtol=0, atol=1e-6)
    # no step longer than the cap: a cap at a third of the steps' free mean takes at least 0.3 s / cap steps
    # (the same program: the cap is traced)
    small = 0.3 / (3 * int(free.stats["num_accepted_steps"]))
    tiny = kj.simulate(chain, q0, qd0, 0.3, max_step=small, **kw)
    assert int(tiny.stats["num_accepted_steps"]) >= 0.3 / small - 1, tiny.stats
    # the uncapped steps cross the limit and are rejected; below it the error control keeps to the slow
    # motion (measured: 445 steps, 46 of them rejected, against 396 and 8; errors 5.1e-12 on q, 9.3e-8 on q̇)
    steps = {name: (int(t.stats["num_steps"]), int(t.stats["num_rejected_steps"])) for name, t in
             (("free", free), ("capped", capped))}
    assert steps["capped"][1] < steps["free"][1] and steps["capped"][0] < steps["free"][0], steps
    with pytest.raises(ValueError, match="max_step"):
        kj.simulate(chain, q0, qd0, 0.3, max_step=0.0, **kw)
    with pytest.raises(TypeError, match="max_step"):
        kj.simulate(chain, q0, qd0, 0.3, max_step="small", **kw)


def test_phases_joined_equal_one_solve(kelvin_voigt_chain):
    chain, q0, qd0 = kelvin_voigt_chain, jnp.array([-1.2, 0.6]), jnp.zeros(2)
    kw = dict(solver="dopri8", rtol=1e-12, atol=1e-14)
    whole = kj.simulate(chain, q0, qd0, 0.2, n_save=9, **kw)
    first = kj.simulate(chain, q0, qd0, 0.1, n_save=5, **kw)
    second = kj.simulate(chain, first.q[-1], first.qd[-1], 0.2, t0=0.1, n_save=5, **kw)
    joined = kj.simulation.join(first, second)
    np.testing.assert_allclose(joined.ts, whole.ts, rtol=0, atol=1e-15)
    np.testing.assert_allclose(joined.q, whole.q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(joined.qd, whole.qd, rtol=0, atol=1e-8)
    assert joined.u.shape == (9, 0) and bool(joined.success) and joined.solver == "dopri8, then dopri8"
    assert int(joined.stats["num_steps"]) == int(first.stats["num_steps"]) + int(second.stats["num_steps"])
    with pytest.raises(ValueError, match="second"):
        kj.simulation.join(first, first)
