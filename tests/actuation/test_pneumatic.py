"""Pneumatic chambers (paper 000 eq. 57): A = ∂V/∂q against finite differences, virtual work."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.algorithms.actuation import work_coordinates
from kane_jax.bodies import lvp_primitives as P
from kane_jax.bodies.lvp import LVPBody
from kane_jax.bodies.variable_radius import VariableRadiusPCC

VR = dict(order=2, n_radial=1, n_angular=4, chamber_order=3, chamber_across=2, chamber_along=3)


def _fd_jacobian(fun, q, h=1e-7):
    return np.stack([(fun(q + h * e) - fun(q - h * e)) / (2 * h) for e in np.eye(q.shape[0])], axis=-1)


def test_variable_radius_chambers(rng):
    chain = kj.Chain([(kj.Revolute((0, 1, 0)), kj.PlanarConstantCurvature(order=2, n_radial=1, n_angular=3)),
                      (kj.Revolute((0, 0, 1)), VariableRadiusPCC(**VR))],
                     actuators=[kj.PneumaticChambers(1, 2)])
    q = jnp.asarray(rng.normal(size=chain.nq)) * jnp.array([0.3, 0.3, 0.3, 0.5, 0.02, 0.003, 0.003])
    vols = jax.jit(lambda x: chain.actuators[0].volumes(chain, x))
    a = jax.jit(lambda x: kj.actuation_matrix(chain, x))(q)
    np.testing.assert_allclose(a, _fd_jacobian(vols, q).T, rtol=1e-6, atol=1e-12)
    # the chambers only depend on their own body's coordinates
    np.testing.assert_allclose(a[:3], 0.0, atol=0)
    u = jnp.array([2e5, 4e4])
    dq = jnp.asarray(rng.normal(size=chain.nq))
    force = jax.jit(lambda x, v: kj.actuation_force(chain, x, v))
    np.testing.assert_allclose(u @ jax.jvp(vols, (q,), (dq,))[1], force(q, u) @ dq, rtol=1e-12)
    # at rest, pressure in chamber 1 bends away from it (θ < 0) and inflates it (δR1 > 0)
    qa = force(jnp.zeros(chain.nq), jnp.array([1e5, 0.0]))
    assert qa[3] < 0 and qa[5] > 0 and qa[4] > 0


def test_lvp_cavity(rng):
    body = LVPBody([P.Cavity(2), P.Stretch(), P.Bend("y")], 0.1, 0.02, inner_radius=0.006, order=2, n_radial=1,
                   n_angular=3)
    chain = kj.Chain([(kj.Fixed(), body)], actuators=[kj.PneumaticChambers(0, 1)])
    q = jnp.asarray(rng.normal(size=chain.nq) * 0.05)
    a = jax.jit(lambda x: kj.actuation_matrix(chain, x))(q)
    # V = π L (r_in² + R² Σ a_k 2/((2k−1)π)): linear in the cavity amplitudes, independent of the rest
    np.testing.assert_allclose(a[:, 0], [0.1 * 0.02**2 * 2, 0.1 * 0.02**2 * 2 / 3, 0.0, 0.0], rtol=1e-9, atol=1e-15)


def test_bad_input():
    with pytest.raises(ValueError, match="n_chambers"):
        kj.PneumaticChambers(0, 0)
    with pytest.raises(TypeError, match="volume"):
        kj.PneumaticChambers(0, 1, volume=3)
    chain = kj.Chain([(kj.Fixed(), kj.PlanarConstantCurvature())], actuators=[kj.PneumaticChambers(0, 1)])
    with pytest.raises(ValueError, match="no volume method"):
        kj.actuation_matrix(chain, jnp.zeros(1))
    chain = kj.Chain([(kj.Fixed(), VariableRadiusPCC(**VR))], actuators=[kj.PneumaticChambers(0, 3)])
    with pytest.raises(ValueError, match="n_chambers"):
        kj.actuation_matrix(chain, jnp.zeros(4))


def test_chambers_of_identical_modules_share_one_trace(rng):
    # three equal sections (000-sim1's shape), chambers listed out of module order: one vmapped trace
    # of the volumes, values and A(q) equal to the per-actuator evaluation
    traces = []

    def volume(body, qb):
        traces.append(1)
        return body.chamber_volumes(qb)

    body = VariableRadiusPCC(**VR)
    acts = [kj.PneumaticChambers(m, 2, volume=volume) for m in (2, 0, 1)]
    chain = kj.Chain([(kj.Fixed(), body)] * 3, actuators=acts)
    q = jnp.asarray(rng.normal(size=chain.nq)) * jnp.tile(jnp.array([0.5, 0.02, 0.003, 0.003]), 3)
    grouped = jax.jit(lambda x: work_coordinates(chain, x))
    jax.make_jaxpr(grouped)(q)
    assert len(traces) == 1
    # the per-actuator oracle (values and forward-mode Jacobians) as one compiled program
    alone, jac = jax.jit(lambda x: (
        jnp.concatenate([a.volumes(chain, x) for a in acts]),
        jnp.concatenate([jax.jacfwd(lambda y, c=c: c.volumes(chain, y))(x) for c in acts])))(q)
    np.testing.assert_allclose(grouped(q), alone, rtol=1e-14, atol=0)
    a = jax.jit(lambda x: kj.actuation_matrix(chain, x))(q)
    np.testing.assert_allclose(a, jac.T, rtol=1e-13, atol=1e-18)
    # chamber k's inputs act on module m's coordinates only
    for k, m in enumerate((2, 0, 1)):
        rows = np.zeros(chain.nq, bool)
        rows[4 * m: 4 * m + 4] = True
        np.testing.assert_array_equal(np.asarray(a[~rows, 2 * k: 2 * k + 2]), 0.0)
