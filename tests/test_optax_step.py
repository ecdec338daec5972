"""One optax iteration (kane_jax/_optax_step.py): a seeded line-search state gives the iterates of optax's own
``value_and_grad_from_state`` loop (the oracle), and the final point's value read from the state is the
objective's there."""

import jax
import jax.numpy as jnp
import optax

from kane_jax import _optax_step as optax_step

C = jnp.array([0.7, -0.4, 1.3])
W = jnp.array([1.0, 2.0, 0.5])
A = jnp.array([[3.0, 0.5, -0.2], [0.5, 2.0, 0.3], [-0.2, 0.3, 1.5]])


def objective(x):
    """Strictly convex, minimum Σ W at C (closed form); well conditioned, so rounding does not grow along the
    iterates."""
    d = x - C
    return jnp.sum(W * jnp.cosh(d)) + 0.5 * d @ (A @ d)


X0 = jnp.array([-1.2, 1.0, 0.4])
STEPS = 25


@jax.jit
def seeded_run(x):
    optimizer = optax.lbfgs()
    state, value_and_grad = optax_step.seeded(objective, optimizer.init(x), x)

    def body(carry, _):
        x, state = carry
        value, grad = value_and_grad(x, state=state)
        upd, state = optax_step.update(optimizer, grad, state, x, value=value, value_fn=objective)
        return (optax.apply_updates(x, upd), state), x

    (x, state), xs = jax.lax.scan(body, (x, state), None, length=STEPS)
    return x, xs, optax_step.value(objective, state, x)


@jax.jit
def optax_run(x):
    """optax's documented loop (``value_and_grad_from_state``, evaluating where the state holds no value)."""
    optimizer = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(objective)

    def body(carry, _):
        x, state = carry
        value, grad = value_and_grad(x, state=state)
        upd, state = optimizer.update(grad, state, x, value=value, grad=grad, value_fn=objective)
        return (optax.apply_updates(x, upd), state), x

    (x, _), xs = jax.lax.scan(body, (x, optimizer.init(x)), None, length=STEPS)
    return x, xs


def test_seeded_line_search_state_gives_optax_iterates_and_final_value():
    x, xs, final = seeded_run(X0)
    x_ref, xs_ref = optax_run(X0)
    # the same iterates as optax's own loop (every step, not only the answer), to rounding
    assert float(jnp.max(jnp.abs(xs - xs_ref))) < 1e-12
    assert float(jnp.max(jnp.abs(x - x_ref))) < 1e-12
    # the minimum of the closed form, and the state's value is the objective at the final point
    assert float(jnp.max(jnp.abs(x - C))) < 1e-8
    assert abs(float(final) - float(jnp.sum(W))) < 1e-12
    assert abs(float(final) - float(objective(x))) < 1e-14


def test_optimizer_without_a_stored_value_evaluates_the_objective():
    optimizer = optax.adam(1e-2)
    x = X0
    state = optimizer.init(x)
    seeded, value_and_grad = optax_step.seeded(objective, state, x)
    assert seeded is state  # nothing to seed
    value, grad = value_and_grad(x, state=state)
    ref_value, ref_grad = jax.value_and_grad(objective)(x)
    assert float(value) == float(ref_value)
    assert float(jnp.max(jnp.abs(grad - ref_grad))) == 0.0
    # closed form of the gradient: W sinh(x − C) + A (x − C)
    expected = W * jnp.sinh(x - C) + A @ (x - C)
    assert float(jnp.max(jnp.abs(grad - expected))) < 1e-12
    assert float(optax_step.value(objective, state, x)) == float(ref_value)
