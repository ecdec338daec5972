"""Bad input gets a clear ValueError/TypeError naming the argument."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj


def _pos(q, s):
    return s + jnp.stack([q[0], q[1], 0.0])


def _tip(q):
    return kj.lie.translation(jnp.stack([q[0], q[1], 0.0]))


@pytest.mark.parametrize(
    "build, exc, match",
    [
        (lambda: kj.Chain([]), ValueError, "at least one"),
        (lambda: kj.Chain([kj.RigidBody(1.0)]), TypeError, r"modules\[0\]"),
        (lambda: kj.Chain([(kj.RigidBody(1.0), kj.Revolute())]), TypeError, r"modules\[0\]\[0\]"),
        (lambda: kj.Chain([(kj.Revolute(), kj.RigidBody(1.0))], gravity=(0, -9.81)), ValueError, "gravity"),
        (lambda: kj.RigidBody(0.0), ValueError, "mass"),
        (lambda: kj.RigidBody(-1.0), ValueError, "mass"),
        (lambda: kj.RigidBody(1.0, (0, 0)), ValueError, "com"),
        (lambda: kj.RigidBody(1.0, inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), ValueError, "symmetric"),
        (lambda: kj.RigidBody(1.0, inertia=np.diag([1.0, 1.0, -1.0])), ValueError, "positive definite"),
        (lambda: kj.RigidBody(1.0, inertia=np.diag([1.0, 1.0, 3.0])), ValueError, "triangle"),
        (lambda: kj.RigidBody(1.0, tip=np.diag([2.0, 1, 1, 1])), ValueError, "tip"),
        (lambda: kj.Revolute((0, 0, 0)), ValueError, "axis"),
        (lambda: kj.Prismatic((0, 0)), ValueError, "axis"),
        (lambda: kj.Revolute(placement=np.ones((4, 4))), ValueError, "placement"),
        (lambda: kj.Revolute(placement=np.eye(3)), ValueError, "placement"),
        (lambda: kj.Revolute(stiffness=-1.0), ValueError, "stiffness"),
        (lambda: kj.Body(_pos, _tip, 2, np.zeros((3, 3)), np.ones(2)), ValueError, "weights"),
        (lambda: kj.Body(_pos, _tip, 2, np.zeros((3, 3)), -np.ones(3)), ValueError, "weights"),
        (lambda: kj.Body(_pos, _tip, 1, np.zeros((3, 3)), np.ones(3)), ValueError, "nq"),
        (lambda: kj.Body(_pos, _tip, 3, np.zeros((3, 3)), np.ones(3)), ValueError, "nq"),
        (lambda: kj.Body("f", _tip, 2, np.zeros((3, 3)), np.ones(3)), TypeError, "position"),
        (lambda: kj.Body(_pos, _tip, 2.5, np.zeros((3, 3)), np.ones(3)), TypeError, "nq"),
        (lambda: kj.Body(lambda q, s: q, _tip, 2, np.zeros((3, 3)), np.ones(3)), ValueError, "position"),
        (lambda: kj.PlanarConstantCurvature(length=-1.0), ValueError, "length"),
        (lambda: kj.PlanarConstantCurvature(damping=-0.1), ValueError, "damping"),
        (lambda: kj.PlanarConstantCurvature(radius="big"), TypeError, "radius"),
    ],
)
def test_construction_errors(build, exc, match):
    with pytest.raises(exc, match=match):
        build()


def test_state_shape_errors():
    chain = kj.Chain([(kj.Revolute(), kj.RigidBody(1.0, (0.1, 0, 0)))] * 2)
    z = jnp.zeros(2)
    with pytest.raises(ValueError, match=r"`q` must have shape \(2,\)"):
        kj.inverse_dynamics(chain, jnp.zeros(3), z, z)
    with pytest.raises(ValueError, match="`qdd`"):
        kj.inverse_dynamics(chain, z, z, jnp.zeros((2, 2)))
    with pytest.raises(ValueError, match="vmap"):
        kj.mass_matrix(chain, jnp.zeros((5, 2)))
    with pytest.raises(ValueError, match="`tau`"):
        kj.forward_dynamics(chain, z, z, jnp.zeros(1))
    with pytest.raises(ValueError, match="`u`"):
        kj.actuation_force(chain, z, jnp.zeros(1))


def test_forward_dynamics_never_returns_silent_nan():
    chain = kj.Chain([(kj.Revolute(), kj.RigidBody(1.0, (0.1, 0, 0)))] * 2, gravity=(0.0, -9.81, 0.0))
    z = jnp.zeros(2)
    bad_q = jnp.array([0.1, jnp.nan])
    with pytest.raises(ValueError, match="`q` must be finite"):
        kj.forward_dynamics(chain, bad_q, z, z)
    with pytest.raises(ValueError, match="`tau` must be finite"):
        kj.forward_dynamics(chain, z, z, jnp.array([jnp.inf, 0.0]))
    # a mass matrix that is not positive definite (a negative mass set behind the constructor's back)
    neg = eqx.tree_at(lambda c: c.groups[0][1].mass, chain, -chain.groups[0][1].mass)
    with pytest.raises(ValueError, match="not positive definite"):
        kj.forward_dynamics(neg, z, z, z)
    # under a transformation: the check is in the program (equinox.error_if) unless check=False
    with pytest.raises(Exception, match="non-finite accelerations"):
        jax.block_until_ready(jax.jit(lambda q: kj.forward_dynamics(chain, q, z, z))(bad_q))
    out = jax.jit(lambda q: kj.forward_dynamics(chain, q, z, z, check=False))(bad_q)
    assert np.all(np.isnan(np.asarray(out)))
