"""An optimistix minimiser stepped a fixed number of times, with the loss at each accepted point
(``identification.fit``'s and ``optimize.shooting``'s loops for an ``optimistix.AbstractMinimiser``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
import optimistix as optx

from ._types import Array


def is_minimiser(optimizer: Any, name: str = "optimizer") -> bool:
    """Whether ``optimizer`` is an optimistix minimiser (stepped by :func:`stepper`) rather than an optax
    transformation; the one check of the workflows that take either (``fit``, ``shooting``, ``transcribe``).

    Raises:
        TypeError: neither; the message names the argument ``name``.
    """
    if isinstance(optimizer, optx.AbstractMinimiser):
        return True
    if isinstance(optimizer, optax.GradientTransformation):
        return False
    raise TypeError(f"`{name}` must be an optax GradientTransformation or an optimistix minimiser, got "
                    f"{type(optimizer).__name__}.")


def stepper(f: Callable[[Any], Array], solver: optx.AbstractMinimiser, x: Any) -> tuple[tuple, Callable]:
    """The initial carry ``(point, state's arrays, done, record)`` of ``solver`` on the scalar ``f`` from ``x``,
    and one step of it, ``carry ↦ carry``.

    An optimistix step evaluates ``f`` and its gradient once, at its search's trial point, and accepts or rejects
    it (the first step evaluates ``x`` itself and accepts it), so a program of steps holds the objective's value
    and gradient once; optax's L-BFGS holds them three times (the seed and its zoom line search's two branches,
    ``_optax_step``). The carry's point is the accepted one after the step; its record is the objective's
    auxiliary output (here the loss itself) that optimistix returns: the loss at the point the step *started*
    from (:func:`accepted_losses` turns the records into the accepted points' losses). Once the solver's own
    termination test (its ``rtol``/``atol``) holds, a step keeps the carry and skips the evaluation (a
    ``lax.cond``).
    """
    fn = lambda y, _: (lambda v: (v, v))(f(y))  # the value twice: the objective, and the step's record
    f_struct = jax.eval_shape(f, x)
    options: dict = {}
    tags: frozenset = frozenset()
    dynamic, static = eqx.partition(solver.init(fn, x, None, options, f_struct, f_struct, tags), eqx.is_array)

    def advance(y, dynamic, done, record):
        y, state, record = solver.step(fn, y, None, options, eqx.combine(dynamic, static), tags)
        done, _ = solver.terminate(fn, y, None, options, state, tags)
        dynamic, new_static = eqx.partition(state, eqx.is_array)
        assert eqx.tree_equal(static, new_static) is True  # as optimistix's own loop requires
        return y, dynamic, done, record

    def step(carry: tuple) -> tuple:
        return jax.lax.cond(carry[2], lambda *c: c, advance, *carry)

    return (x, dynamic, jnp.array(False), jnp.zeros(f_struct.shape, f_struct.dtype)), step


def accepted_losses(records: Array, done: Array, final: Array) -> Array:
    """The loss at the accepted point after each of ``steps + 1`` :func:`stepper` steps (after the first: ``x₀``),
    from the steps' ``records`` and ``done`` flags ``(steps + 1,)`` and the ``final`` point's loss.

    Step ``k``'s record is the loss at the point after step ``k − 1``, so the records from the second on are the
    losses after steps ``0 … steps − 1``, except where the solver had stopped (a held step repeats its record):
    there, and after the last step, the point is the final one. Returns ``(steps + 1,)``.
    """
    return jnp.concatenate([jnp.where(done[:-1], final, records[1:]), final[None]])


def minimise_steps(f: Callable[[Any], Array], solver: optx.AbstractMinimiser, x: Any, steps: int) -> tuple[Any, Array]:
    """``steps + 1`` steps of ``solver`` (:func:`stepper`) on the scalar ``f`` from ``x``, as one ``lax.scan``, and
    ``f`` at the final point (its value alone).

    Arguments:
        f: the scalar objective of a pytree. solver: an optimistix minimiser (e.g. ``optx.LBFGS(rtol, atol)``).
        x: the initial point. steps: the steps after the first.

    Returns:
        ``(x, losses)``: the last accepted point and the loss at the accepted point after each step,
        ``(steps + 1,)`` (``losses[0] = f(x₀)``; non-increasing for a descent method with a line search).
    """
    init, step = stepper(f, solver, x)

    def scan_step(carry, _):
        carry = step(carry)
        return carry, (carry[3], carry[2])  # the step's record and done flag

    (x, *_), (records, done) = jax.lax.scan(scan_step, init, None, length=steps + 1)
    return x, accepted_losses(records, done, f(x))
