"""One optax iteration as the optimizing workflows take it (``optimize.shooting``, ``optimize.transcribe``'s
optax inner solver, ``identification.fit``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import optax


def keeps_value(state: Any) -> bool:
    """Whether the optimizer's state keeps one value and one gradient (a line search's accepted point)."""
    values = optax.tree_utils.tree_get_all_with_path(state, "value")
    grads = optax.tree_utils.tree_get_all_with_path(state, "grad")
    return len(values) == 1 and len(grads) == 1 and grads[0][1] is not None


def seed(f: Callable, state: Any, x: Any) -> Any:
    """The optimizer's initial ``state`` with ``f(x)`` and ``∇f(x)`` stored in it (in its own dtypes) where it keeps
    them (:func:`keeps_value`: ``optax.lbfgs``'s zoom line search keeps the accepted point's), unchanged otherwise."""
    if not keeps_value(state):
        return state
    value, grad = jax.value_and_grad(f)(x)
    return optax.tree.cast_like(optax.tree.set(state, value=value, grad=grad), other_tree=state)


def reader(f: Callable, state: Any) -> Callable:
    """The loop's ``(x, state) ↦ (f(x), ∇f(x))`` for states like ``state``: read from a :func:`seed`-ed state that
    keeps them, evaluated otherwise (``optax.adam`` keeps none)."""
    if not keeps_value(state):
        return lambda x, state: jax.value_and_grad(f)(x)
    return lambda x, state: (optax.tree.get(state, "value"), optax.tree.get(state, "grad"))


def seeded(f: Callable, state: Any, x: Any) -> tuple[Any, Callable]:
    """The optimizer's initial ``state`` ready for a loop, and the loop's ``(x, state) ↦ (f(x), ∇f(x))``.

    Where the state keeps a value and gradient (``optax.lbfgs``'s zoom line search keeps the accepted point's),
    ``f(x)`` and ``∇f(x)`` are stored in it here, before the loop, and every iteration reads them from the state:
    the loop's program holds the objective's value and gradient only where the line search evaluates them, not a
    third time in ``optax.value_and_grad_from_state``'s fallback branch for a state that holds none. Otherwise
    (``optax.adam`` keeps none) the state is returned as it is and each iteration computes them. One function
    returns both, so that a loop compiled with its seed cannot read a state that was never seeded (``fit``);
    ``optimize.shooting``, whose seed and steps are separate programs, calls :func:`seed` and :func:`reader`.

    Arguments:
        f: the scalar objective. state: the optimizer's initial state. x: the initial point.

    Returns:
        ``(state, value_and_grad)``: the state (with ``value`` and ``grad`` at ``x``, in its own dtypes, where it
        keeps them) and a function of ``(x, state)`` like ``optax.value_and_grad_from_state(f)``.
    """
    return seed(f, state, x), reader(f, state)


def value(f: Callable, state: Any, x: Any) -> Any:
    """``f(x)``, read from a :func:`seeded` optimizer's ``state`` at the point it was last updated to where it
    keeps the value (a line search's accepted point), evaluated otherwise."""
    return optax.tree.get(state, "value") if keeps_value(state) else f(x)


def update(optimizer: optax.GradientTransformation, grad, state, params, *, value, value_fn: Callable):
    """``optimizer.update``, with the value, gradient and objective for the transformations that take extra
    arguments (line searches) and without them for the others.

    Returns:
        ``(updates, state)``.
    """
    if isinstance(optimizer, optax.GradientTransformationExtraArgs):
        return optimizer.update(grad, state, params, value=value, grad=grad, value_fn=value_fn)
    return optimizer.update(grad, state, params)
