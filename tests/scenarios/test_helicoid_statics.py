"""003-sim1's statics: the central-difference Jacobian against autodiff, and the solves it drives
against Levenberg–Marquardt with optimistix's own autodiff Jacobian (the scenario's arm itself is
in the ``slow`` scenario test: its statics compile for tens of seconds)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest

import kane_jax as kj
from kane_jax._differences import central_jacobian
from kane_jax.scenarios import _helicoid_statics as hs


def _three_rods():
    """Three soft constant-curvature segments hanging in the x–y plane: a cheap three-module chain
    with the scenario's residual (ID at rest + Cartesian regulator on the three tips)."""
    soft = kj.PlanarConstantCurvature(0.2, 0.02, 1062.0, 2.0e5, 0.05, order=3, n_radial=1, n_angular=3)
    base = np.array([[0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    return kj.Chain([(kj.Fixed(base), soft), (kj.Fixed(), soft), (kj.Fixed(), soft)], gravity=(0.0, -9.81, 0.0))


@pytest.mark.parametrize("at_rest", [True, False])
def test_central_jacobian_matches_autodiff(at_rest, rng):
    chain = _three_rods()
    q = jnp.zeros(3) if at_rest else jnp.asarray(rng.uniform(-1.0, 1.0, 3))
    reference = (jnp.asarray(rng.normal(size=(3, 3)) * 0.1), jnp.asarray(hs.K_REGULATOR))

    @eqx.filter_jit
    def both(q, reference, chain):
        fn = lambda x: hs._residual(x, reference, chain)  # noqa: E731
        return central_jacobian(fn, q), (fn(q), jax.jacfwd(fn)(q))

    (r, jac), (r_ad, jac_ad) = both(q, reference, chain)
    np.testing.assert_allclose(r, r_ad, rtol=0, atol=1e-14 * float(jnp.max(jnp.abs(r_ad))))
    # central differences with h = eps^(1/3): ≈ eps^(2/3) ≈ 4e-11 relative to the Jacobian's scale
    scale = float(jnp.max(jnp.abs(jac_ad)))
    assert scale > 1.0
    np.testing.assert_allclose(jac, jac_ad, rtol=0, atol=1e-8 * scale)


def test_statics_equal_the_solves_with_the_autodiff_jacobian():
    """The scenario's solve program (differences) and Levenberg–Marquardt differentiating the residual
    itself (optimistix's reverse-mode Jacobian): the same equilibria along the references."""
    chain = _three_rods()
    q_rest, x_ref, q_eq, steps, ok, resid = hs.rest_and_references(chain, n_samples=3)
    assert bool(jnp.all(ok)) and float(jnp.max(jnp.abs(resid))) < 1e-9

    @eqx.filter_jit
    def oracle(chain, q0, xr, gain):
        solver = optx.LevenbergMarquardt(rtol=1e-10, atol=1e-10)
        sol = optx.least_squares(lambda x, a: hs._residual(x, a, chain), solver, q0, args=(xr, gain), max_steps=200,
                                 throw=False, options=dict(jac="bwd"))
        return sol.value, sol.result == optx.RESULTS.successful, sol.stats["num_steps"]

    rest, ok0, _ = oracle(chain, jnp.zeros(3), jnp.zeros((3, 3)), jnp.asarray(0.0))
    assert bool(ok0)
    np.testing.assert_allclose(q_rest, rest, rtol=0, atol=1e-10)
    previous, oracle_steps = rest, []
    for k in range(3):  # warm-started along the samples, as the scenario's scan
        q, ok_k, n_k = oracle(chain, previous, x_ref[k], jnp.asarray(hs.K_REGULATOR))
        assert bool(ok_k)
        oracle_steps.append(int(n_k))
        np.testing.assert_allclose(q_eq[k], q, rtol=0, atol=1e-10)
        previous = q
    assert float(jnp.max(jnp.abs(q_eq - q_rest[None]))) > 1e-3  # the regulator moved the arm: a real test
    # the samples' solves start from a wide trust region (hs.WARM_STEP) instead of optimistix's λ = 1
    assert int(jnp.sum(steps[1:])) < sum(oracle_steps), (steps, oracle_steps)


def test_circle_references_are_tilted_circles_through_the_rest_tips():
    """Each tip's reference lies on a circle of its radius, in the plane tilted by ``TILT`` about y through
    its rest position, starts there and rises away from it (closed-form centre and normal)."""
    x0 = np.array([[0.001, -0.002, -0.1], [0.003, 0.0, -0.2], [-0.002, 0.001, -0.3]])
    phase = np.linspace(0.0, 2 * np.pi, 25)
    x = np.asarray(hs.circle_references(jnp.asarray(x0), jnp.asarray(phase)))  # (25, 3, 3)
    r = np.asarray(hs.CIRCLE_RADII)[:, None]
    t = hs.TILT
    centre = x0 + r * np.array([-np.cos(t), 0.0, np.sin(t)])  # (3, 3): r from x0 towards −x, up the plane
    normal = np.array([np.sin(t), 0.0, np.cos(t)])
    assert x.shape == (25, 3, 3)
    np.testing.assert_allclose(x[0], x0, rtol=0, atol=1e-16)
    np.testing.assert_allclose(np.linalg.norm(x - centre, axis=-1), np.broadcast_to(r[:, 0], (25, 3)), rtol=1e-14)
    np.testing.assert_allclose((x - x0) @ normal, 0.0, atol=1e-16)  # positions of 0.3 m: rounding
    rise = x[..., 2] - x0[:, 2]
    assert rise.min() >= -1e-16  # never below the rest height: the arm shortens as its tips swing out
    np.testing.assert_allclose(rise[12], 2 * r[:, 0] * np.sin(t), rtol=1e-14)  # half a period: the top
