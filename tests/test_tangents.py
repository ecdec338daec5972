"""A loop's initial state given its tangent where its inputs are differentiated (kane_jax/_tangents.py): the same
values and derivatives as without it (closed forms of a linear recurrence), and the loop body's JVP traced once
instead of once per pass of JAX's fixed point over the carried tangents (counted)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from helpers.robots import rigid_arm

import kane_jax as kj
from kane_jax._tangents import with_tangent_where

X0 = jnp.array([1.0, -2.0])
N = 7
H = 0.1


def _decay(a, *, instantiate: bool, counter: list | None = None):
    """``x_{k+1} = x_k − H a x_k`` from the constant ``X0``, ``N`` steps of a ``scan``: ``X0 (1 − H a)^N``. The
    product goes through a ``custom_jvp`` whose rule counts its calls: one per JVP pass over the loop body."""

    @jax.custom_jvp
    def times(a_, x):
        return a_ * x

    @functools.partial(times.defjvp, symbolic_zeros=True)  # a rule per pattern of zero tangents: traced per pass
    def _(primals, tangents):
        if counter is not None:
            counter.append(1)
        (a_, x), (ta, tx) = primals, tangents
        parts = [t * p for t, p in ((ta, x), (tx, a_)) if not isinstance(t, jax.custom_derivatives.SymbolicZero)]
        return a_ * x, sum(parts[1:], parts[0])

    x0 = with_tangent_where(X0, a) if instantiate else X0
    return jax.lax.scan(lambda x, _: (x - H * times(a, x), None), x0, None, length=N)[0]


def _closed(a):
    return X0 * (1 - H * a) ** N, -N * H * X0 * (1 - H * a) ** (N - 1)


def test_values_and_derivatives_equal_the_closed_form_either_way():
    a = 1.3
    value, slope = _closed(a)
    for instantiate in (False, True):
        out, tangent = jax.jvp(lambda a_: _decay(a_, instantiate=instantiate), (a,), (1.0,))
        np.testing.assert_allclose(out, value, rtol=1e-14)
        np.testing.assert_allclose(tangent, slope, rtol=1e-13)
        grad = jax.grad(lambda a_: jnp.sum(_decay(a_, instantiate=instantiate)))(a)
        np.testing.assert_allclose(grad, np.sum(slope), rtol=1e-13)
    # reverse mode through the state itself is untouched: d x_N / d x_0 = (1 − H a)^N
    jac = jax.jacrev(lambda x0: jax.lax.scan(lambda x, _: (x - H * a * x, None),
                                             with_tangent_where(x0, jnp.asarray(a)), None, length=N)[0])(X0)
    np.testing.assert_allclose(jac, np.eye(2) * (1 - H * a) ** N, rtol=1e-14)


def test_the_loop_body_jvp_is_traced_once():
    """Without the wrapper JAX traces the body's JVP twice (the state has no tangent on the first pass and one
    after it); with it, once. Counted in forward and reverse mode (reverse mode linearizes the same way): the
    body's derivative rule runs once per pass."""
    for transform in (lambda f: jax.jvp(f, (1.3,), (1.0,)), lambda f: jax.grad(lambda a: jnp.sum(f(a)))(1.3)):
        counts = {}
        for instantiate in (False, True):
            counter: list = []
            jax.make_jaxpr(lambda a, i=instantiate, c=counter: transform(lambda a_: _decay(a_, instantiate=i,
                                                                                          counter=c)))(1.3)
            counts[instantiate] = len(counter)
        assert counts[True] == counts[False] - 1, counts


def test_identity_where_nothing_is_differentiated():
    """No anchor tangent: the state comes back as it is, and its derivative with respect to itself is the identity."""
    x = jnp.array([0.5, 2.0])
    np.testing.assert_array_equal(with_tangent_where(x, {"k": jnp.array([3.0]), "n": 2}), x)
    assert with_tangent_where(x, {"n": 2, "i": jnp.array([1, 2])}) is x  # no floating anchor: nothing added
    np.testing.assert_array_equal(jax.jacfwd(lambda y: with_tangent_where(y, jnp.array([3.0])))(x), np.eye(2))



def test_simulate_gives_its_solve_the_wrapper():
    """Wired into ``simulate``: its solve's program holds the wrapper (whose effect the tests above count; the
    solve's own derivative passes have no public probe; ``test_simulate``'s gradients check the numbers)."""
    def loss(g):
        traj = kj.simulate(rigid_arm(2, gravity=g), jnp.array([0.3, -0.2]), jnp.zeros(2), 0.05, adaptive=False,
                           dt0=0.01, solver="tsit5", saveat=3)
        return jnp.sum(traj.q[-1] ** 2)

    assert "_identity" in str(jax.make_jaxpr(loss)(jnp.array([0.0, -9.81, 0.0])))
