"""``_kernel_jit.kernel_jit``: the rods' exponential jets stay a nested ``jit`` up to first derivatives and run
inline under second ones, with the same numbers either way."""

import jax
import jax.numpy as jnp
import numpy as np

import kane_jax as kj
from kane_jax._exp_jets import planar_exp_jet
from kane_jax._kernel_jit import _derivative_depth


def _nested_jits(closed) -> list[str]:
    names = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in ("jit", "pjit"):
                names.append(eqn.params["name"])
            for p in eqn.params.values():
                for sub in p if isinstance(p, (list, tuple)) else [p]:
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)

    walk(closed.jaxpr)
    return names


def test_exp_jet_nested_to_first_order_inline_beyond():
    seg = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01, elongation=True, order=3)
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0)), seg), (kj.Fixed(), seg)], gravity=(0.0, -9.81, 0.0))
    rng = np.random.default_rng(0)
    q, qd, qdd = (jnp.asarray(rng.normal(size=chain.nq)) * 0.3 for _ in range(3))

    def tau(x):
        return kj.inverse_dynamics(chain, x, qd, qdd)

    first = jax.make_jaxpr(jax.jacfwd(tau))(q)
    second = jax.make_jaxpr(jax.jacfwd(jax.jacfwd(tau)))(q)
    assert "planar_exp_jet" in _nested_jits(first)
    assert "planar_exp_jet" not in _nested_jits(second)
    # the rule counts differentiation levels, not batching ones
    depths = []
    jax.make_jaxpr(jax.jacfwd(jax.vmap(jax.jacrev(lambda x: depths.append(_derivative_depth()) or jnp.sum(x ** 3)))))(
        jnp.ones((2, 3)))
    assert depths == [2]

    # the same jet either way: the inline Hessian against the nested one's own second derivative
    # taken level by level through a jit boundary (1e-13 of the largest entry)
    omega, d_omega = jnp.asarray(rng.normal(size=6)) * jnp.array([0, 0, 1, 1, 1, 0.0]), jnp.eye(6)[2:5]

    def pose(x):  # the rotation, translation and generators of exp(Ω)
        jet = planar_exp_jet(x, d_omega, None)
        return jnp.concatenate([jet.rot.ravel(), jet.trans, jet.gen.ravel()])

    inline = jax.jit(jax.hessian(pose))(omega)
    nested = jax.jit(jax.jacfwd(jax.jit(jax.jacfwd(pose))))(omega)
    np.testing.assert_allclose(inline, nested, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(nested))))


def test_eager_second_derivatives_keep_the_compiled_jet():
    # under an eager jax.hessian (no jit around it) the jet stays one compiled program: inline, it would
    # run operation by operation; the same numbers as the staged Hessian
    omega, d_omega = jnp.array([0.0, 0.0, 0.4, 0.1, -0.2, 0.0]), jnp.eye(6)[2:5]
    depths = []

    def pose(x):
        depths.append(_derivative_depth())
        jet = planar_exp_jet(x, d_omega, None)
        return jnp.concatenate([jet.rot.ravel(), jet.trans])

    eager = jax.hessian(pose)(omega)
    assert depths == [0]
    staged = jax.jit(jax.hessian(pose))(omega)
    np.testing.assert_allclose(eager, staged, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(staged))))
