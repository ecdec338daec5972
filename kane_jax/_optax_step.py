"""One optax iteration as the optimizing workflows take it (``optimize.shooting``, ``optimize.transcribe``'s
optax inner solver, ``identification.fit``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import optax


def _keeps_value(state: Any) -> bool:
    """Whether the optimizer's state keeps one value and one gradient (a line search's accepted point)."""
    values = optax.tree_utils.tree_get_all_with_path(state, "value")
    grads = optax.tree_utils.tree_get_all_with_path(state, "grad")
    return len(values) == 1 and len(grads) == 1 and grads[0][1] is not None


def seeded(f: Callable, state: Any, x: Any) -> Any:
    """``state`` with ``f(x)`` and ``∇f(x)`` stored where the optimizer keeps a value and gradient (``optax.lbfgs``'s
    zoom line search keeps the accepted point's), ``state`` itself otherwise.

    Seeded before the first iteration, every iteration reads them from the state (:func:`value_and_grad`):
    the loop's program holds the objective's value and gradient only where the line search evaluates them,
    not a third time in ``optax.value_and_grad_from_state``'s fallback branch for a state that holds none.

    Arguments:
        f: the scalar objective. state: the optimizer's initial state. x: the initial point.

    Returns:
        The state, with ``value`` and ``grad`` at ``x`` where it keeps them (in its own dtypes).
    """
    if not _keeps_value(state):
        return state
    value, grad = jax.value_and_grad(f)(x)
    return optax.tree.cast_like(optax.tree.set(state, value=value, grad=grad), other_tree=state)


def value_and_grad(f: Callable, state: Any) -> Callable:
    """``(x, state) ↦ (f(x), ∇f(x))``: read from a :func:`seeded` optimizer's ``state`` where a line search
    keeps the accepted point's value and gradient (``optax.lbfgs``'s zoom line search: the next iteration
    need not evaluate them again), computed otherwise (``optax.adam`` keeps none).

    Arguments:
        f: the scalar objective. state: an initial state of the optimizer (its structure decides); where it
            keeps a value, the loop's state must be :func:`seeded`.

    Returns:
        A function of ``(x, state)`` like ``optax.value_and_grad_from_state(f)``.
    """
    if _keeps_value(state):
        return lambda x, state: (optax.tree.get(state, "value"), optax.tree.get(state, "grad"))
    return lambda x, state: jax.value_and_grad(f)(x)


def value(f: Callable, state: Any, x: Any) -> Any:
    """``f(x)``, read from a :func:`seeded` optimizer's ``state`` at the point it was last updated to where it
    keeps the value (a line search's accepted point), evaluated otherwise."""
    return optax.tree.get(state, "value") if _keeps_value(state) else f(x)


def update(optimizer: optax.GradientTransformation, grad, state, params, *, value, value_fn: Callable):
    """``optimizer.update``, with the value, gradient and objective for the transformations that take extra
    arguments (line searches) and without them for the others.

    Returns:
        ``(updates, state)``.
    """
    if isinstance(optimizer, optax.GradientTransformationExtraArgs):
        return optimizer.update(grad, state, params, value=value, grad=grad, value_fn=value_fn)
    return optimizer.update(grad, state, params)
