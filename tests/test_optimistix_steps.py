"""An optimistix minimiser stepped in a scan (kane_jax/_optimistix_steps.py): the point of ``optimistix.minimise``
(the oracle, optimistix's own loop) and the loss at each accepted point, through the solver's own termination."""

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from kane_jax import _optimistix_steps as optimistix_steps

C = jnp.array([0.7, -0.4, 1.3])
W = jnp.array([1.0, 2.0, 0.5])
A = jnp.array([[3.0, 0.5, -0.2], [0.5, 2.0, 0.3], [-0.2, 0.3, 1.5]])
X0 = jnp.array([-1.2, 1.0, 0.4])


def objective(x):
    """Strictly convex, minimum Σ W at C (closed form)."""
    d = x - C
    return jnp.sum(W * jnp.cosh(d)) + 0.5 * d @ (A @ d)


def test_steps_reach_optimistix_minimise_and_record_the_accepted_losses():
    solver = optx.LBFGS(rtol=1e-4, atol=1e-6)  # loose: the solver stops well before the 40 steps
    x, losses = jax.jit(lambda x0: optimistix_steps.minimise_steps(objective, solver, x0, 40))(X0)
    oracle, steps_taken = jax.jit(lambda x0: (lambda s: (s.value, s.stats["num_steps"]))(
        optx.minimise(lambda y, _: objective(y), solver, x0, max_steps=41)))(X0)
    steps_taken = int(steps_taken)
    assert steps_taken < 20  # it did stop by its own test (measured: 11 steps)
    print(f"optimistix stopped after {steps_taken} steps; losses {np.asarray(losses)[:steps_taken + 2]}")
    np.testing.assert_allclose(x, oracle, rtol=1e-12, atol=1e-14)
    losses = np.asarray(losses)
    assert losses.shape == (41,)
    assert losses[0] == float(objective(X0))  # the initial point's loss, the first step's accepted point
    assert np.all(np.diff(losses) <= 0.0)  # accepted points of a line search
    # after the solver stopped, every entry is the final point's loss (not a held step's stale record)
    assert np.all(losses[steps_taken:] == float(objective(x)))
    assert abs(losses[-1] - float(jnp.sum(W))) < 1e-8  # the closed-form minimum, to the solver's tolerance


def test_a_step_holds_once_done():
    solver = optx.BFGS(rtol=1e-8, atol=1e-10)
    carry, step = optimistix_steps.stepper(objective, solver, X0)
    step = jax.jit(step)
    for _ in range(60):
        carry = step(carry)
        if bool(carry[2]):
            break
    assert bool(carry[2])
    held = step(carry)
    assert all(bool(jnp.all(a == b)) for a, b in zip(jax.tree.leaves(held), jax.tree.leaves(carry)))
    np.testing.assert_allclose(carry[0], C, atol=1e-6)
