"""Tendons: length from the routing, A = −∂L/∂q against finite differences, virtual work."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.algorithms.actuation import work_coordinates
from kane_jax.bodies import lvp_primitives as P
from kane_jax.bodies.lvp import LVPBody
from kane_jax.bodies.variable_radius import VariableRadiusPCC


def _cc(length=0.3):
    return kj.PlanarConstantCurvature(length, 0.02, 1000.0, 1e5, elongation=True, order=2, n_radial=1, n_angular=3)


def _fd_jacobian(fun, q, h=1e-6):
    return np.stack([(fun(q + h * e) - fun(q - h * e)) / (2 * h) for e in np.eye(q.shape[0])], axis=-1)


def test_length_closed_form_planar_cc():
    # a fibre at offset y in a planar CC segment has length ℓ (1 − y κ) = ℓ − y θ; two segments on a
    # fixed joint add up; the joint gap is zero
    y = 0.012
    chain = kj.Chain([(kj.Fixed(), _cc()), (kj.Fixed(), _cc())],
                     actuators=[kj.Tendon([0, 1], [(y, 0.0), (y, 0.0)])])
    q = jnp.array([0.4, 0.1, -0.3, 0.05])
    ref = (0.3 * 1.1 - y * 0.4) + (0.3 * 1.05 + y * 0.3)
    length, a = jax.jit(lambda x: (chain.actuators[0].length(chain, x), kj.actuation_matrix(chain, x)))(q)
    np.testing.assert_allclose(length, ref, rtol=1e-13)
    np.testing.assert_allclose(a[:, 0], [y, -0.3, y, -0.3], rtol=1e-12)  # h = −L, ∂L/∂θ_i = −y


def test_helical_routing_length():
    # straight body, helix of radius r and n turns: length √(L² + (2π n r)²)
    r, turns, length = 0.015, 2.0, 0.3
    helix = lambda s: jnp.stack([r * jnp.cos(2 * jnp.pi * turns * s), r * jnp.sin(2 * jnp.pi * turns * s)])  # noqa: E731
    chain = kj.Chain([(kj.Fixed(), _cc(length))], actuators=[kj.Tendon(0, [helix], order=12)])
    np.testing.assert_allclose(jax.jit(lambda x: chain.actuators[0].length(chain, x))(jnp.zeros(2)),
                               np.hypot(length, 2 * np.pi * turns * r), rtol=1e-12)


def test_actuation_matrix_matches_finite_differences_and_virtual_work(rng):
    vr = VariableRadiusPCC(order=2, n_radial=1, n_angular=4, chamber_order=2, chamber_across=1, chamber_along=2)
    lvp = LVPBody([P.Stretch(), P.Bend("y"), P.Twist()], 0.1, 0.02, order=2, n_radial=1, n_angular=3)
    tendons = [kj.Tendon([0, 1, 2], [(0.01, 0.0), (0.0, 0.012), (0.01, 0.005)], order=6),
               kj.Tendon([1, 2], [(-0.01, 0.0), lambda s: jnp.stack([0.01 * jnp.cos(3 * s), 0.01 * jnp.sin(3 * s)])])]
    chain = kj.Chain([(kj.Fixed(), _cc()), (kj.Revolute((0, 1, 0)), vr), (kj.Revolute((0, 0, 1)), lvp)],
                     actuators=tendons)
    q = jnp.asarray(rng.normal(size=chain.nq) * 0.3) * jnp.array([1, 0.3, 1, 1, 0.1, 0.01, 0.01, 1, 1, 1, 1])
    lengths = jax.jit(lambda x: jnp.stack([t.length(chain, x) for t in chain.actuators]))
    a = jax.jit(lambda x: kj.actuation_matrix(chain, x))(q)
    np.testing.assert_allclose(a, -_fd_jacobian(lengths, q).T, rtol=1e-6, atol=1e-9)
    # virtual work: uᵀ δh = Q_aᵀ δq for any δq, with h = −L
    u = jnp.array([3.0, 5.0])
    dq = jnp.asarray(rng.normal(size=chain.nq))
    dh = -jax.jvp(lengths, (q,), (dq,))[1]
    force = jax.jit(lambda x, v: kj.actuation_force(chain, x, v))
    qa = force(q, u)
    np.testing.assert_allclose(u @ dh, qa @ dq, rtol=1e-12)
    # positive tension shortens: moving along Q_a reduces the tendon length
    assert float(jax.jvp(lengths, (q,), (force(q, jnp.array([1.0, 0.0])),))[1][0]) < 0


def test_bad_input():
    with pytest.raises(ValueError, match="consecutive"):
        kj.Tendon([0, 2], [(0.0, 0.01), (0.0, 0.01)])
    with pytest.raises(ValueError, match="one entry per routed module"):
        kj.Tendon([0, 1], [(0.0, 0.01)])
    with pytest.raises(ValueError, match="offsets\\[0\\]"):
        kj.Tendon(0, [(0.0, 0.01, 0.0)])
    with pytest.raises(ValueError, match="offsets\\[0\\]"):
        kj.Tendon(0, [lambda s: jnp.zeros(3)])
    rigid = kj.RigidBody(1.0, (0, 0, 0), np.eye(3) * 1e-3)
    chain = kj.Chain([(kj.Revolute((0, 0, 1)), rigid)], actuators=[kj.Tendon(0, [(0.0, 0.01)])])
    with pytest.raises(ValueError, match="not a soft body"):
        kj.actuation_matrix(chain, jnp.zeros(1))


def test_grouped_work_coordinates_keep_the_actuators_order(rng):
    # tendons of one body differ only in their offsets: work_coordinates evaluates them in one vmap;
    # interleaved with a motor and a two-body tendon, the result must equal the per-actuator values
    # in the order of chain.actuators
    acts = [kj.Tendon(0, [(0.01, 0.0)], order=3), kj.JointMotor([0]), kj.Tendon(1, [(-0.01, 0.005)], order=3),
            kj.Tendon(0, [(0.0, -0.012)], order=3), kj.Tendon([0, 1], [(0.004, 0.0), (0.004, 0.0)], order=3),
            kj.Tendon(1, [(0.007, 0.007)], order=3), kj.Tendon(0, [(-0.01, 0.002)], order=3)]
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0)), _cc()), (kj.Fixed(), _cc())], actuators=acts)
    q = jnp.asarray(rng.normal(size=chain.nq) * 0.3)
    grouped = jax.jit(lambda x: work_coordinates(chain, x))(q)
    alone = jnp.concatenate([jax.jit(lambda x, a=a: a.work_coordinates(chain, x))(q) for a in acts])
    assert grouped.shape == (7,)
    np.testing.assert_allclose(grouped, alone, rtol=1e-14, atol=1e-16)


def test_tendons_within_identical_bodies_evaluate_together(rng):
    # 003-sim1's pattern: tendons each within one of three equal bodies (one vmap over the bodies),
    # with a tendon through two bodies in between; values and A(q) equal the per-actuator ones
    acts = [kj.Tendon(m, [(0.01 * np.cos(a), 0.01 * np.sin(a))], order=3) for m in (0, 1, 2) for a in (0.3, 2.4)]
    acts.insert(3, kj.Tendon([1, 2], [(0.0, 0.008), (0.0, 0.008)], order=3))
    chain = kj.Chain([(kj.Fixed(), _cc())] * 3, actuators=acts)
    q = jnp.asarray(rng.normal(size=chain.nq) * 0.3)
    h = jax.jit(lambda x: work_coordinates(chain, x))
    grouped = h(q)
    # the per-actuator values and the forward-mode Jacobian over the whole chain: one compiled oracle
    alone, jac = jax.jit(lambda x: (jnp.concatenate([a.work_coordinates(chain, x) for a in acts]),
                                    jax.jacfwd(lambda y: work_coordinates(chain, y))(x)))(q)
    np.testing.assert_allclose(grouped, alone, rtol=1e-14, atol=1e-16)
    a = jax.jit(lambda x: kj.actuation_matrix(chain, x))(q)
    np.testing.assert_allclose(a, _fd_jacobian(lambda x: np.asarray(h(x)), q).T, rtol=1e-6, atol=1e-10)
    # the module-local blocks (Jacobians over each body's own coordinates, padded) equal the
    # forward-mode Jacobian over the whole chain
    np.testing.assert_allclose(a, jac.T, rtol=1e-13, atol=1e-16)


def test_local_tendons_force_by_their_input_matrix(rng):
    # tendons each within one body (003-sim1's pattern): A(q) comes from one pullback per tendon over
    # its body's coordinates, and the generalized force as B(q) u; both equal autodiff of the
    # work coordinates over the whole chain (forward-mode Jacobian, one vector-Jacobian product)
    acts = [kj.Tendon(m, [(0.01 * np.cos(a), 0.01 * np.sin(a))], order=3) for m in (0, 1, 2) for a in (0.3, 2.4)]
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0)), _cc())] + [(kj.Fixed(), _cc())] * 2, actuators=acts)
    q = jnp.asarray(rng.normal(size=chain.nq) * 0.3)
    u = jnp.asarray(rng.uniform(0.5, 2.0, size=chain.nu))
    h = lambda x: work_coordinates(chain, x)  # noqa: E731
    a, force = jax.jit(lambda x, v: (kj.actuation_matrix(chain, x), kj.actuation_force(chain, x, v)))(q, u)
    jac, pulled = jax.jit(lambda x, v: (jax.jacfwd(h)(x), jax.vjp(h, x)[1](v)[0]))(q, u)  # the autodiff oracle
    np.testing.assert_allclose(a, jac.T, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(force, pulled, rtol=1e-13, atol=1e-16)
    assert float(jnp.max(jnp.abs(force))) > 1e-3  # the joint and the bodies feel the pulls
