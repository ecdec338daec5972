"""NewtonAtRoot (kane_jax/_newton.py): the iterates of optimistix.Newton (the oracle), and the residual at
its answer."""

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest

from kane_jax._newton import NewtonAtRoot

# a smooth, nonlinear, well-posed system with a root near (0.8, 0.6, 0.3), from a guess some steps away
A = jnp.array([[3.0, 0.5, -0.2], [0.4, 2.5, 0.3], [-0.1, 0.2, 1.5]])
B = jnp.array([1.0, 2.0, 0.5])


def residual(y, args):
    return A @ y + 0.3 * jnp.sin(y) ** 3 + 0.2 * y * jnp.sum(y**2) - args


def with_aux(y, args):
    r = residual(y, args)
    return r, r


def solve(y0, max_steps, rtol=1e-12, atol=1e-12):
    return optx.root_find(with_aux, NewtonAtRoot(rtol, atol, max_steps), y0, B, has_aux=True, throw=False,
                          max_steps=max_steps + 1)


@jax.jit
def _both(y0):
    ours = solve(y0, 32)
    plain = optx.root_find(residual, optx.Newton(rtol=1e-12, atol=1e-12), y0, B, throw=False, max_steps=32)
    return ours.value, ours.aux, ours.state.updates, ours.result, plain.value, plain.stats["num_steps"], plain.result


def test_same_iterates_and_the_residual_at_the_root():
    y, aux, updates, result, y_plain, steps_plain, result_plain = _both(jnp.array([2.0, -1.0, 1.5]))
    assert result == optx.RESULTS.successful and result_plain == optx.RESULTS.successful
    np.testing.assert_array_equal(y, y_plain)  # the same Newton iterates, bit for bit
    assert int(updates) == int(steps_plain) >= 3
    # the returned residual is f at the returned root (evaluated apart here), to rounding
    np.testing.assert_allclose(aux, residual(y, B), rtol=0, atol=1e-15)
    assert float(jnp.max(jnp.abs(aux))) < 1e-12


@pytest.mark.parametrize("budget", [1, 2])
def test_budget_spent_is_reported_with_the_residual_where_it_stopped(budget):
    sol = solve(jnp.array([2.0, -1.0, 1.5]), budget)
    assert sol.result == optx.RESULTS.nonlinear_max_steps_reached
    assert int(sol.state.updates) == budget
    # the answer is the iterate after `budget` plain Newton updates, and aux is f there
    y = jnp.array([2.0, -1.0, 1.5])
    for _ in range(budget):
        y = y - jnp.linalg.solve(jax.jacfwd(residual)(y, B), residual(y, B))
    np.testing.assert_allclose(sol.value, y, rtol=1e-13)
    np.testing.assert_allclose(sol.aux, residual(sol.value, B), rtol=0, atol=1e-14)
    assert float(jnp.max(jnp.abs(sol.aux))) > 1e-6  # not converged


def test_a_failed_step_stays_at_the_last_iterate():
    sol = solve(jnp.array([jnp.nan, 0.0, 0.0]), 16)
    assert sol.result != optx.RESULTS.successful
    assert int(sol.state.updates) == 0
