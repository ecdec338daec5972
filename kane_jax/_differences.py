"""Jacobians by central differences of one batched evaluation, for solvers whose iterations need a
Jacobian but not its last digits (Newton on a static residual).

A forward-mode Jacobian puts the tangent code of the whole function into the solver's program; the
differences need the function's primal code only, evaluated at ``2 n + 1`` points in one ``vmap``.
For the statics of soft chains that halves or more the XLA compile of the solve (``docs/architecture.md``,
*Statics by differences*), while Newton converges to the same root: the root does not depend on the
Jacobian's rounding, only the rate does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from ._chunks import partial_jvp
from ._types import Array


def central_jacobian(fn: Callable[[Array], Array], q: Array) -> tuple[Array, Array]:
    """``(fn(q), ∂fn/∂q)`` with the Jacobian by central differences, all ``2 n + 1`` evaluations of
    ``fn`` in one ``vmap``.

    Steps ``h_j = ε^{1/3} max(|q_j|, 1)`` (ε: the dtype's machine epsilon; the step that balances the
    differences' truncation and rounding errors), divided by the representable difference
    ``(q_j + h_j) − (q_j − h_j)``. Relative error ≈ ε^{2/3} (≈ 4e-11 in float64) for a smooth ``fn``.

    Arguments:
        fn: function of ``q`` of shape ``(n,)`` to an array of shape ``(m,)``.
        q: the point, shape ``(n,)``.

    Returns:
        ``(fn(q) (m,), jacobian (m, n))``.
    """
    n = q.shape[0]
    h = jnp.finfo(q.dtype).eps ** (1.0 / 3.0) * jnp.maximum(jnp.abs(q), 1.0)
    plus, minus = q[None] + jnp.diag(h), q[None] - jnp.diag(h)
    values = jax.vmap(fn)(jnp.concatenate([q[None], plus, minus]))
    steps = jnp.diagonal(plus) - jnp.diagonal(minus)
    return values[0], ((values[1:n + 1] - values[n + 1:]) / steps[:, None]).T


def with_difference_jacobian(fn: Callable[..., Array]) -> Callable[..., Array]:
    """``fn(q, *rest)`` whose derivative in ``q`` is its :func:`central_jacobian` applied (tangents of
    ``rest`` through ``fn``'s own JVP), so that a solver's program holds ``fn``'s primal code only.

    Arguments:
        fn: function of ``q`` ``(n,)`` and further pytree arguments, to ``(m,)``.

    Returns:
        The same function with that custom JVP (``equinox.filter_custom_jvp``), same values.
    """

    @eqx.filter_custom_jvp
    def wrapped(q, *rest: Any):
        return fn(q, *rest)

    @wrapped.def_jvp
    def _jvp(primals, tangents):
        q, *rest = primals
        dq, *drest = tangents
        r, jac = central_jacobian(lambda x: fn(x, *rest), q)
        dr = jnp.zeros_like(r) if dq is None else jac @ dq
        if jax.tree.leaves(drest):  # tangents in the other arguments (a chain's parameters, an input)
            dr = dr + partial_jvp(lambda *xs: fn(q, *xs), tuple(rest), tuple(drest))[1]
        return r, dr

    wrapped.__doc__ = fn.__doc__
    return wrapped
