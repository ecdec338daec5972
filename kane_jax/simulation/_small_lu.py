"""LU factorization with partial pivoting as element-wise array code, for the small stage systems
of the Rosenbrock–W solver.

``lineax.LU`` (``jax.scipy.linalg.lu_factor``) is one LAPACK custom call on the CPU. A custom call
inside a ``while`` loop keeps XLA:CPU from compiling the loop into one kernel (its
``SmallWhileLoopHoistingPass``; ``docs/architecture.md``, "Whole loops as one kernel"), so every
small operation of every solver step is then dispatched on its own. The elimination below is the
same algorithm (row ``k`` swapped with the row of the largest ``|a_ik|``, ``i ≥ k``; ``P A = L U``
with unit ``L`` stored below the diagonal, LAPACK's ``getrf`` convention), written as ``n`` rounds
of masked whole-matrix updates: the traced program grows as ``n`` (not ``n³`` as a scalar
unrolling), and holds no dot, scatter or custom call.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._small import materialize
from .._types import Array

# up to this size the stage systems use the element-wise elimination, above it LAPACK
UNROLLED_LU = 32


def lu_factor(a: Array) -> tuple[Array, Array]:
    """``P A = L U`` by Gaussian elimination with partial pivoting (Golub & Van Loan, Alg. 3.4.1).

    Arguments:
        a: square matrix ``(n, n)``.

    Returns:
        ``(lu, perm)``: ``U`` on and above the diagonal of ``lu``, the multipliers of unit ``L``
        below it, and ``perm`` ``(n,)`` (int32) with ``(P A)[i] = A[perm[i]]``. A singular ``A``
        gives a zero pivot and non-finite solves (no exception), as LAPACK's.
    """
    n = a.shape[-1]
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]
    perm = jnp.arange(n, dtype=jnp.int32)
    for k in range(n):
        magnitude = jnp.where(rows[:, 0] >= k, jnp.abs(a[:, k]), -1.0)
        p = jnp.argmax(magnitude)
        pick = rows == p  # (n, 1): the pivot row
        row_p = jax.lax.dynamic_index_in_dim(a, p, 0, keepdims=False)
        row_k = a[k]
        a = jnp.where(pick, row_k[None], a)  # swap rows k and p (whole rows: multipliers too)
        a = jnp.where(rows == k, row_p[None], a)
        perm_p = jax.lax.dynamic_index_in_dim(perm, p, 0, keepdims=False)
        perm = jnp.where(rows[:, 0] == k, perm_p, jnp.where(pick[:, 0], perm[k], perm))
        below = rows > k
        mult = jnp.where(below, a[:, k:k + 1] / row_p[k], 0.0)  # (n, 1)
        a = jnp.where(below & (cols == k), mult, a - mult * jnp.where(cols > k, row_p[None], 0.0))
        # each round in a buffer of its own: fused, every entry would recompute the earlier rounds
        a, perm = materialize(a), materialize(perm)
    return a, perm


def lu_solve(lu: Array, perm: Array, b: Array) -> Array:
    """``A⁻¹ b`` from :func:`lu_factor`'s ``(lu, perm)``; ``b`` of shape ``(n,)``."""
    n = lu.shape[-1]
    idx = jnp.arange(n)
    x = jnp.take(b, perm, axis=0)  # P b
    for k in range(n - 1):  # L y = P b, column by column
        x = x - jnp.where(idx > k, lu[:, k], 0.0) * x[k]
    for k in reversed(range(n)):  # U x = y
        xk = x[k] / lu[k, k]
        x = jnp.where(idx == k, xk, x - jnp.where(idx < k, lu[:, k], 0.0) * xk)
    return x


def factor(a: Array) -> tuple[Array, Array]:
    """:func:`lu_factor` up to :data:`UNROLLED_LU` unknowns, LAPACK's (``jax.lax.linalg.lu``) above;
    the same ``(lu, perm)`` convention."""
    if a.shape[-1] <= UNROLLED_LU:
        return lu_factor(a)
    lu, _, perm = jax.lax.linalg.lu(a)
    return lu, perm


def solve_factored(lu: Array, perm: Array, b: Array) -> Array:
    """``A⁻¹ b`` from :func:`factor`'s ``(lu, perm)``; ``b`` of shape ``(n,)``."""
    if lu.shape[-1] <= UNROLLED_LU:
        return lu_solve(lu, perm, b)
    y = jax.lax.linalg.triangular_solve(lu, jnp.take(b, perm, axis=0)[:, None], left_side=True, lower=True,
                                        unit_diagonal=True)
    return jax.lax.linalg.triangular_solve(lu, y, left_side=True, lower=False)[:, 0]


def solve(a: Array, b: Array) -> Array:
    """``A⁻¹ b`` for a general square ``A`` ``(n, n)`` and ``b`` ``(n,)`` (:func:`factor`, :func:`solve_factored`)."""
    return solve_factored(*factor(a), b)


__all__ = ["UNROLLED_LU", "factor", "lu_factor", "lu_solve", "solve", "solve_factored"]
