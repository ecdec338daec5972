"""Small box-constrained quadratic programs solved exactly, by enumerating their active sets.

``min ½ vᵀ Q v + cᵀ v`` subject to ``lo ≤ v`` (and ``v ≤ hi``), ``Q`` symmetric positive definite:
the minimizer is unique, and it is the solution of the equality-constrained problem of the one
active set that satisfies the KKT conditions (Nocedal & Wright, *Numerical Optimization*, §16.1 and
Thm. 16.4). With ``n`` variables there are ``2ⁿ`` active sets (``3ⁿ`` with upper bounds); for the few
tendons of a segment (``n ≤`` :data:`EXACT_MAX`) every one is solved at once, as masked element-wise
array code, and the one that violates the KKT conditions least is taken.

Why not an iterative solver there: qpax's interior point is a ``while`` loop of LAPACK factorizations
inside the vector field of a closed-loop simulation, which keeps XLA:CPU from compiling the solver's
step as one kernel (``docs/architecture.md``, *Whole loops as one kernel*), and it stops at a
tolerance. The enumeration holds no loop, no custom call and no dot, finds the exact active set, and
differentiates in forward and reverse mode (within the active set: the derivative of the exact
minimizer, where qpax's is that of a smoothed problem).
"""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np

from .._types import Array, Float

# up to this many variables the enumeration (16 active sets with lower bounds only, 81 with both)
EXACT_MAX = 4


def _active_sets(n: int, upper: bool) -> np.ndarray:
    """Every assignment of the ``n`` variables to free (0), at the lower bound (1) or at the upper (2)."""
    states = (0, 1, 2) if upper else (0, 1)
    return np.array(list(itertools.product(states, repeat=n)), dtype=np.int8).reshape(-1, n)


def _spd_solve(a: Float[Array, "k n n"], b: Float[Array, "k n"]) -> Float[Array, "k n"]:
    """``a⁻¹ b`` for a batch of symmetric positive definite matrices: Gauss–Jordan elimination without
    pivoting (its pivots are those of a Cholesky factorization: positive, and stable for SPD
    matrices), ``n`` rounds of masked whole-array updates."""
    n = a.shape[-1]
    idx = jnp.arange(n)
    for k in range(n):
        pivot = a[:, k, k]
        row = a[:, k, :] / pivot[:, None]
        bk = b[:, k] / pivot
        col = jnp.where(idx[None, :] == k, 0.0, a[:, :, k])  # (K, n): the other rows' entries in column k
        a = jnp.where((idx == k)[None, :, None], row[:, None, :], a - col[:, :, None] * row[:, None, :])
        b = jnp.where(idx[None, :] == k, bk[:, None], b - col * bk[:, None])
    return b


def solve_box_qp(quad: Float[Array, "n n"], lin: Float[Array, " n"], lower: Float[Array, " n"], *,
                 upper: Float[Array, " n"] | None = None) -> Float[Array, " n"]:
    """The minimizer of ``½ vᵀ quad v + linᵀ v`` subject to ``lower ≤ v ≤ upper``, exactly.

    Arguments:
        quad: symmetric positive definite ``(n, n)``. lin: ``(n,)``. lower: ``(n,)``.
        upper: ``(n,)`` or None (no upper bounds); ``upper ≥ lower``.

    Returns:
        ``v`` of shape ``(n,)``: for each active set the stationary point of the objective with the
        active variables at their bounds (an SPD system, the inactive block of ``quad``), then the
        one whose KKT residual is smallest — primal bounds on the free variables, the sign of the
        objective's gradient on the bound ones (``≥ 0`` at the lower bound, ``≤ 0`` at the upper), in
        units of ``v`` (the gradient divided by ``quad``'s diagonal). Exactly one active set has
        residual zero (several, with equal ``v``, at degenerate points).
    """
    n = quad.shape[0]
    sets = jnp.asarray(_active_sets(n, upper is not None))  # (K, n)
    free, at_lo, at_hi = sets == 0, sets == 1, sets == 2
    hi = lower if upper is None else upper
    fixed = jnp.where(at_lo, lower[None, :], jnp.where(at_hi, hi[None, :], 0.0))  # (K, n)
    both_free = free[:, :, None] & free[:, None, :]
    eye = jnp.eye(n, dtype=quad.dtype)
    system = jnp.where(both_free, quad[None], eye[None])  # the free block, identity rows for the bound ones
    coupling = jnp.sum(quad[None] * fixed[:, None, :], axis=-1)  # quad @ fixed, (K, n)
    rhs = jnp.where(free, -lin[None, :] - coupling, fixed)
    v = _spd_solve(system, rhs)  # (K, n)
    grad = jnp.sum(quad[None] * v[:, None, :], axis=-1) + lin[None, :]
    scaled = grad / jnp.diagonal(quad)[None, :]
    primal = jnp.maximum(lower[None, :] - v, 0.0)
    if upper is not None:
        primal = jnp.maximum(primal, v - upper[None, :])
    violation = jnp.where(free, primal, jnp.where(at_lo, jnp.maximum(-scaled, 0.0), jnp.maximum(scaled, 0.0)))
    best = jnp.argmin(jnp.max(violation, axis=1))
    pick = (jnp.arange(sets.shape[0]) == best)[:, None]
    return jnp.sum(jnp.where(pick, v, 0.0), axis=0)
