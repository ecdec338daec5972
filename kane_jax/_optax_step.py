"""One optax iteration as the optimizing workflows take it (``optimize.shooting``, ``optimize.transcribe``'s
optax inner solver, ``identification.fit``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import optax


def value_and_grad(f: Callable, state: Any) -> Callable:
    """``(x, state) ↦ (f(x), ∇f(x))``, taken from the optimizer's ``state`` where a line search keeps the
    accepted point's value and gradient (``optax.lbfgs``'s zoom line search: the next iteration need not
    evaluate them again), computed otherwise (``optax.adam`` keeps none; ``optax.value_and_grad_from_state``
    raises there).

    Arguments:
        f: the scalar objective. state: an initial state of the optimizer (its structure decides).

    Returns:
        A function of ``(x, state)`` like ``optax.value_and_grad_from_state(f)``.
    """
    if optax.tree_utils.tree_get_all_with_path(state, "value"):
        return optax.value_and_grad_from_state(f)
    return lambda x, state: jax.value_and_grad(f)(x)


def update(optimizer: optax.GradientTransformation, grad, state, params, *, value, value_fn: Callable):
    """``optimizer.update``, with the value, gradient and objective for the transformations that take extra
    arguments (line searches) and without them for the others.

    Returns:
        ``(updates, state)``.
    """
    if isinstance(optimizer, optax.GradientTransformationExtraArgs):
        return optimizer.update(grad, state, params, value=value, grad=grad, value_fn=value_fn)
    return optimizer.update(grad, state, params)
