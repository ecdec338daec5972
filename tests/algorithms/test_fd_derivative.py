"""The FD's derivative rule through the ID (``algorithms/_fd_derivative.py``) against the FD
differentiated operation by operation (through ``M`` and its Cholesky factor), the closed form
``∂FD/∂τ = M⁻¹`` and finite differences."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import assert_rel
from helpers.robots import make_joint, random_rigid, random_state

import kane_jax as kj
from kane_jax.algorithms._fd_derivative import forward_dynamics_direct, forward_dynamics_kernel
from kane_jax.algorithms._recursion import tip_wrench

RTOL = 1e-10  # relative to the largest entry: the two rules differ by rounding through M's condition


def _close(a, b, rtol=RTOL):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        if np.size(y):
            assert_rel(x, y, rtol)


def _hybrid():
    link = kj.RigidBody(1.3, (0.2, 0.0, 0.0), np.diag([1e-4, 1.7e-2, 1.7e-2]), tip=np.array(
        [[1.0, 0, 0, 0.4], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]))
    cc = kj.PlanarConstantCurvature(0.3, 0.02, 1100.0, 2e5, 0.1, order=3, n_radial=1, n_angular=3)
    return kj.Chain([(kj.Revolute((0, 0, 1)), link), (kj.Revolute((0, 0, 1)), cc)], gravity=(0.0, -9.81, 0.0))


def _rigid(rng, n=3):
    return kj.Chain([(make_joint("revolute", rng), random_rigid(rng)) for _ in range(n)], gravity=(0.0, 0.0, -9.81))


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_state_and_input_jacobians_match_the_direct_derivative(rng, mode):
    chain = _hybrid()
    q, qd, tau = random_state(rng, chain.nq, 0.5)
    force, torque = jnp.asarray(rng.normal(size=3)), jnp.asarray(rng.normal(size=3))
    jac = jax.jacfwd if mode == "fwd" else jax.jacrev

    def fd(kernel):
        def f(x, v, u, g, tf, tt):
            return kernel(chain, x, v, u, gravity=g, tip=tip_wrench(tf, tt, x.dtype))
        return jax.jit(jac(f, argnums=(0, 1, 2, 3, 4, 5)))

    args = (q, qd, tau, chain.gravity, force, torque)
    new, old = fd(forward_dynamics_kernel)(*args), fd(forward_dynamics_direct)(*args)
    _close(new, old)
    # ∂q̈/∂τ = M⁻¹ (closed form)
    np.testing.assert_allclose(new[2], np.linalg.inv(np.asarray(kj.mass_matrix(chain, q))), rtol=1e-10, atol=1e-12)


def test_parameter_gradient_matches_the_direct_derivative_and_finite_differences(rng):
    q, qd, tau = random_state(rng, 3, 0.5)
    base = {"mass": 1.3, "length": 0.4, "cc_length": 0.3, "density": 1100.0, "youngs": 2e5, "eta": 0.1}

    def build(p):
        length = p["length"] * base["length"]
        link = kj.RigidBody(p["mass"] * base["mass"], jnp.stack([length / 2, 0.0, 0.0]),
                            jnp.diag(jnp.array([1e-4, 1.7e-2, 1.7e-2])),
                            tip=kj.lie.make_pose(jnp.eye(3), jnp.stack([length, 0.0, 0.0])))
        cc = kj.PlanarConstantCurvature(p["cc_length"] * base["cc_length"], 0.02, p["density"] * base["density"],
                                        p["youngs"] * base["youngs"], p["eta"] * base["eta"],
                                        order=3, n_radial=1, n_angular=3)
        return kj.Chain([(kj.Revolute((0, 0, 1)), link), (kj.Revolute((0, 0, 1)), cc)], gravity=(0.0, -9.81, 0.0))

    weights = jnp.asarray(rng.normal(size=3))

    def loss(kernel):
        return lambda p: jnp.dot(weights, kernel(build(p), q, qd, tau))

    unit = {k: jnp.asarray(1.0) for k in base}
    new = jax.jit(jax.grad(loss(forward_dynamics_kernel)))(unit)
    # rounding apart, amplified through M⁻¹ (6e-10 relative with a sin(FD) loss); both far inside
    # the five-point differences' 1e-6 below
    _close(new, jax.jit(jax.grad(loss(forward_dynamics_direct)))(unit), rtol=1e-8)
    f, h = jax.jit(loss(forward_dynamics_kernel)), 1e-3
    for k in base:  # five-point central differences, the independent reference

        def at(x, k=k):
            return f({j: v + (x if j == k else 0.0) for j, v in unit.items()})

        diff = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h)
        np.testing.assert_allclose(new[k], diff, rtol=1e-6, atol=1e-7)


def _on_manifold(name, leaf, grad):
    """The part of a gradient along the set a constrained leaf lives on: a rotation's ``so(3)`` part
    (``Rᵀ G`` skew), an inertia's symmetric part, a joint axis's part tangent to the unit sphere."""
    g = np.asarray(grad)
    if name.endswith(("placement_rot", "tip_rot")):
        r = np.swapaxes(np.asarray(leaf), -1, -2) @ g
        return r - np.swapaxes(r, -1, -2)
    if name.endswith("inertia"):
        return g + np.swapaxes(g, -1, -2)
    if name.endswith("axis"):
        a = np.asarray(leaf)
        return g - np.sum(g * a, -1, keepdims=True) * a
    return g


def test_constrained_leaves_agree_on_their_manifolds(rng):
    """A rotation-matrix leaf (a joint's placement, a rigid body's tip) is a point of SO(3), an
    inertia a symmetric matrix, a joint's axis a unit vector. Along those sets the two rules give the
    same gradient (to rounding); off them (a non-orthogonal ``R``, a skew inertia, an axis that is
    no longer unit) the FD and the ID are no longer inverse maps of one physical system, and the
    two differentiations differ there. Every other leaf agrees as it is."""
    chain = _rigid(rng)
    q, qd, tau = random_state(rng, chain.nq, 0.5)
    dyn, static = eqx.partition(chain, eqx.is_inexact_array)

    def grad(kernel):
        return jax.jit(jax.grad(lambda d: jnp.sum(jnp.sin(kernel(eqx.combine(d, static), q, qd, tau)))))(dyn)

    new, old = grad(forward_dynamics_kernel), grad(forward_dynamics_direct)
    names = []
    for (path, a), b, leaf in zip(jax.tree_util.tree_flatten_with_path(new)[0], jax.tree.leaves(old),
                                  jax.tree.leaves(dyn)):
        name = jax.tree_util.keystr(path)
        names.append(name)
        _close(_on_manifold(name, leaf, a), _on_manifold(name, leaf, b))
    assert sum(n.endswith(("placement_rot", "tip_rot", "inertia", "axis")) for n in names) == 4


def test_second_derivative_matches_the_direct_one(rng):
    chain = _rigid(rng)
    q, qd, tau = random_state(rng, chain.nq, 0.5)
    v = jnp.asarray(rng.normal(size=chain.nq))

    def second(kernel):
        def d1(x):
            return jax.jvp(lambda y: kernel(chain, y, qd, tau), (x,), (v,))[1]
        return jax.jit(lambda x: jax.jvp(d1, (x,), (v,))[1])(q)

    _close(second(forward_dynamics_kernel), second(forward_dynamics_direct), rtol=1e-9)
