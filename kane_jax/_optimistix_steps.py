"""An optimistix minimiser stepped a fixed number of times, with the loss at each accepted point
(``identification.fit``'s loop for an ``optimistix.AbstractMinimiser``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

from ._types import Array


def is_minimiser(optimizer: Any) -> bool:
    """Whether ``optimizer`` is an optimistix minimiser (stepped by :func:`minimise_steps`) rather than an optax
    transformation."""
    return isinstance(optimizer, optx.AbstractMinimiser)


def minimise_steps(f: Callable[[Any], Array], solver: optx.AbstractMinimiser, x: Any, steps: int) -> tuple[Any, Array]:
    """``steps + 1`` steps of ``solver`` on the scalar ``f`` from ``x``, as one ``lax.scan``.

    An optimistix step evaluates ``f`` and its gradient once, at its search's trial point, and accepts or rejects
    it (the first step evaluates ``x`` itself and accepts it), so the program holds the objective's value and
    gradient once; optax's L-BFGS holds them three times (the seed and its zoom line search's two branches,
    ``_optax_step``). The loss at the accepted point comes out of each step as the objective's auxiliary output
    (optimistix returns the accepted point's). After the solver's own termination test (its ``rtol``/``atol``)
    holds, the remaining steps keep the point and skip the evaluation (a ``lax.cond``).

    Arguments:
        f: the scalar objective of a pytree. solver: an optimistix minimiser (e.g. ``optx.LBFGS(rtol, atol)``).
        x: the initial point. steps: the steps after the first.

    Returns:
        ``(x, losses)``: the last accepted point and the loss at the accepted point after each step,
        ``(steps + 1,)`` (``losses[0] = f(x₀)``; non-increasing for a descent method with a line search).
    """
    fn = lambda y, _: (lambda v: (v, v))(f(y))  # the value twice: the objective, and the accepted point's record
    f_struct = jax.eval_shape(f, x)
    options: dict = {}
    tags: frozenset = frozenset()
    dynamic, static = eqx.partition(solver.init(fn, x, None, options, f_struct, f_struct, tags), eqx.is_array)

    def advance(y, dynamic, done, value):
        y, state, value = solver.step(fn, y, None, options, eqx.combine(dynamic, static), tags)
        done, _ = solver.terminate(fn, y, None, options, state, tags)
        dynamic, new_static = eqx.partition(state, eqx.is_array)
        assert eqx.tree_equal(static, new_static) is True  # as optimistix's own loop requires
        return y, dynamic, done, value

    def step(carry, _):
        carry = jax.lax.cond(carry[2], lambda *c: c, advance, *carry)
        return carry, carry[3]

    init = (x, dynamic, jnp.array(False), jnp.zeros(f_struct.shape, f_struct.dtype))
    (x, *_), losses = jax.lax.scan(step, init, None, length=steps + 1)
    return x, losses
