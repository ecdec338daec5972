"""``M⁻¹ rhs`` for the forward dynamics: a Cholesky factorization written for XLA, by size.

The mass matrix of a chain is small (a 7-DoF arm: 7; three six-strain rods: 18). XLA:CPU runs
``jax.scipy.linalg.cho_factor`` as one LAPACK call per matrix: a custom call that a batch runs
matrix by matrix, and that splits a compiled loop of forward dynamics around it (one FD of three
six-strain PCS rods in a jitted loop: 57 µs with LAPACK, 40 µs without; 2026-11-27). So:

- up to :data:`UNROLLED_CHOLESKY` coordinates the factorization and the two triangular solves are
  unrolled into scalar code that XLA fuses (straight-line code: the fastest form for the smallest
  systems, batched or not; the program grows as ``n³``), with one JVP rule ``d(M⁻¹ r) =
  M⁻¹ (dr − dM M⁻¹ r)`` from the primal's factor;
- up to :data:`ROLLED_CHOLESKY`, on a CPU, one system is solved by rolled loops (``lax.fori_loop``
  over the columns: a program of fixed, small size) and a batch of systems by LAPACK over the batch
  (``jax.custom_batching.custom_vmap``: under ``vmap`` the loops would do ``n²`` work per column,
  LAPACK ``n²/2``), inside :func:`jax.lax.custom_linear_solve`, whose derivatives are more solves
  with the same factorization path;
- above, and on accelerators beyond the unrolled size, ``cho_factor`` (LAPACK, cuSOLVER).

A matrix that is not positive definite gives NaN (no exception) on every path; ``forward_dynamics``
turns that into an error.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax.custom_batching import custom_vmap

from .._small import materialize, sum_small
from .._types import Array

# up to this size M⁻¹ rhs is an unrolled Cholesky (straight-line scalar code) ...
UNROLLED_CHOLESKY = 12
# ... up to this one, on a CPU, rolled loops for one system (LAPACK for a batch); above, LAPACK
ROLLED_CHOLESKY = 64


def _cholesky_unrolled(mass: Array) -> list[list[Array | None]]:
    """The lower Cholesky factor of ``M``, entry by entry; reads the lower triangle of ``M`` only."""
    n = mass.shape[-1]
    low: list[list[Array | None]] = [[None] * n for _ in range(n)]
    for j in range(n):
        s = mass[j, j]
        for k in range(j):
            s = s - low[j][k] * low[j][k]
        low[j][j] = jnp.sqrt(s)
        for i in range(j + 1, n):
            s = mass[i, j]
            for k in range(j):
                s = s - low[i][k] * low[j][k]
            low[i][j] = s / low[j][j]
    return low


def _cho_solve_unrolled(low: list[list[Array | None]], rhs: Array) -> Array:
    """``(L Lᵀ)⁻¹ rhs``: the two triangular solves, entry by entry."""
    n = len(low)
    y = [None] * n
    for i in range(n):  # L y = rhs
        s = rhs[i]
        for k in range(i):
            s = s - low[i][k] * y[k]
        y[i] = s / low[i][i]
    x = [None] * n
    for i in reversed(range(n)):  # Lᵀ x = y
        s = y[i]
        for k in range(i + 1, n):
            s = s - low[k][i] * x[k]
        x[i] = s / low[i][i]
    return jnp.stack(x)


def _cholesky_rolled(mass: Array) -> Array:
    """The lower Cholesky factor of ``M`` by a loop over its columns (left-looking, masked to the
    rows at and below the diagonal); reads the lower triangle of ``M`` only."""
    n = mass.shape[-1]
    idx = jnp.arange(n)

    def step(j, low):
        row = jax.lax.dynamic_index_in_dim(low, j, 0, keepdims=False)
        col = jax.lax.dynamic_index_in_dim(mass, j, 1, keepdims=False) - jnp.sum(low * row[None, :], axis=1)
        d = jnp.sqrt(jax.lax.dynamic_index_in_dim(col, j, 0, keepdims=False))
        col = jnp.where(idx >= j, col / d, 0.0)
        return jax.lax.dynamic_update_index_in_dim(low, col, j, 1)

    return jax.lax.fori_loop(0, n, step, jnp.zeros_like(mass))


def _cho_solve_rolled(low: Array, rhs: Array) -> Array:
    """``(L Lᵀ)⁻¹ rhs`` by two loops of one row each (``rhs``: ``(n,)`` or ``(n, k)``)."""
    n = low.shape[0]
    idx = jnp.arange(n)
    trail = (1,) * (rhs.ndim - 1)
    diag = jnp.diagonal(low)

    def fwd(j, y):
        lj = jax.lax.dynamic_index_in_dim(low, j, 0, keepdims=False)  # row j of L
        lj = jnp.where(idx < j, lj, 0.0).reshape((n,) + trail)
        s = jax.lax.dynamic_index_in_dim(y, j, 0, keepdims=False) - jnp.sum(lj * y, axis=0)
        return jax.lax.dynamic_update_index_in_dim(y, s / diag[j], j, 0)

    def bwd(i, x):
        j = n - 1 - i
        cj = jax.lax.dynamic_index_in_dim(low, j, 1, keepdims=False)  # column j of L = row j of Lᵀ
        cj = jnp.where(idx > j, cj, 0.0).reshape((n,) + trail)
        s = jax.lax.dynamic_index_in_dim(x, j, 0, keepdims=False) - jnp.sum(cj * x, axis=0)
        return jax.lax.dynamic_update_index_in_dim(x, s / diag[j], j, 0)

    y = jax.lax.fori_loop(0, n, fwd, rhs)
    return jax.lax.fori_loop(0, n, bwd, y)


def _from_lower(m: Array) -> Array:
    """The symmetric matrix of ``m``'s lower triangle (the part a factorization reads)."""
    return jnp.tril(m) + jnp.tril(m, -1).T


@jax.custom_jvp
def _cholesky_solve_unrolled(mass: Array, rhs: Array) -> Array:
    """``M⁻¹ rhs`` by the unrolled Cholesky factorization and triangular solves."""
    return _cho_solve_unrolled(_cholesky_unrolled(mass), rhs)


@_cholesky_solve_unrolled.defjvp
def _cholesky_solve_unrolled_jvp(primals, tangents):
    """``d(M⁻¹ r) = M⁻¹ (dr − dM M⁻¹ r)`` with the primal's factor: two more triangular solves per
    tangent instead of the derivative of every factor entry (the forward-mode Jacobian of FD of
    two PCS rods: 39,000 → 31,000 lines of optimized HLO; 92,000 without this rule and without
    ``materialize(M)``). ``dM`` enters as the symmetric matrix of its lower triangle, the part of
    ``M`` the factorization reads, so this is the derivative of the primal as computed."""
    (mass, rhs), (dmass, drhs) = primals, tangents
    low = _cholesky_unrolled(mass)
    x = _cho_solve_unrolled(low, rhs)
    dm = _from_lower(dmass)
    dmx = sum_small(dm.reshape(dm.shape + (1,) * (x.ndim - 1)) * x[None], 1)  # dM x, x of shape (n,) or (n, k)
    return x, _cho_solve_unrolled(low, drhs - dmx)


@custom_vmap
def _factor_solve(mass: Array, rhs: Array) -> Array:
    """``M⁻¹ rhs`` for one system: the rolled loops (a small program that XLA:CPU keeps inside a loop of
    forward dynamics, where a LAPACK call would split it); batched, LAPACK over the batch."""
    return _cho_solve_rolled(_cholesky_rolled(mass), rhs)


@_factor_solve.def_vmap
def _factor_solve_batched(axis_size, in_batched, mass, rhs):
    """Batched: LAPACK over the batch; one factorization for right-hand sides that share ``M`` (the
    tangents of a forward-mode Jacobian)."""
    mass_batched, rhs_batched = in_batched
    if not mass_batched:  # then the right-hand sides are (the rule runs only for a batched argument)
        cols = jnp.moveaxis(rhs, 0, -1)  # (n, …, B)
        x = _lapack_solve(mass, cols.reshape(cols.shape[0], -1)).reshape(cols.shape)
        return jnp.moveaxis(x, -1, 0), True
    if not rhs_batched:
        rhs = jnp.broadcast_to(rhs, (axis_size,) + rhs.shape)
    return jax.vmap(_lapack_solve)(mass, rhs), True


def _lapack_solve(mass: Array, rhs: Array) -> Array:
    return jsl.cho_solve(jsl.cho_factor(mass, lower=True), rhs)


def _solve_rolled(mass: Array, rhs: Array) -> Array:
    """``M⁻¹ rhs`` through :func:`jax.lax.custom_linear_solve` (its derivatives are more solves with
    the same ``M``; ``M`` symmetric from its lower triangle, the part the factorization reads)."""
    sym = _from_lower(mass)
    trail = (1,) * (rhs.ndim - 1)

    def matvec(x):
        return sum_small(sym.reshape(sym.shape + trail) * x[None], 1)

    return jax.lax.custom_linear_solve(matvec, rhs, lambda _, b: _factor_solve(mass, b), symmetric=True)


def solve_mass(mass: Array, rhs: Array, *, buffer: bool = True) -> Array:
    """``M⁻¹ rhs`` by a Cholesky factorization; NaN (no exception) where ``M`` is not positive definite.

    Up to :data:`UNROLLED_CHOLESKY` coordinates the factorization is unrolled into scalar code that
    XLA fuses: on the CPU a batch of 1,024 7×7 systems took 0.48 ms with LAPACK against 0.085 ms
    unrolled (measured 2026-11-24; same numbers to 2e-16). Up to :data:`ROLLED_CHOLESKY`, on a CPU,
    rolled loops for one system and LAPACK for a batch (see the module docstring); larger systems,
    and accelerators, use ``cho_factor``.

    Arguments:
        mass: ``(n, n)`` symmetric positive definite; only its lower triangle is read.
        rhs: ``(n,)`` or ``(n, k)``.
        buffer: (unrolled sizes) ``M`` in a buffer of its own (:func:`~kane_jax._small.materialize`);
            otherwise XLA may fuse the computation of each entry of ``M`` into the scalar kernel of
            each factor entry that reads it, recomputing the mass matrix piecewise (FD's
            forward-mode Jacobian of two PCS rods: 92,000 lines of optimized HLO; see
            docs/architecture.md, "Compile time"); ``rhs`` as well. Pass ``buffer=False`` for rigid chains, whose
            entries of ``M`` are cheap: there a bare ``optimization_barrier`` is kept, since the
            buffer measured slower (iiwa-like arm, one FD in a jitted loop, pinned: 1.10–1.11 µs
            without, 1.22–1.25 µs with; three PCS rods 7.6–7.7 µs with, 8.4–9.2 µs without).

    Returns:
        ``M⁻¹ rhs``, the shape of ``rhs``.
    """
    n = mass.shape[-1]
    if n == 0:  # a chain without coordinates: nothing to solve
        return rhs
    if n <= UNROLLED_CHOLESKY:
        mass = materialize(mass) if buffer else jax.lax.optimization_barrier(mass)
        if buffer:  # and the right-hand side: otherwise the bias behind it (a soft body's velocity
            # moments) fused into the substitutions' kernels and was computed again in each (one FD of
            # a six-strain PCS rod: 46.8k → 41.9k flops, XLA's cost analysis, 2026-11-29)
            rhs = materialize(rhs)
        return _cholesky_solve_unrolled(mass, rhs)
    if n <= ROLLED_CHOLESKY and jax.default_backend() == "cpu":
        return _solve_rolled(mass, rhs)
    return _lapack_solve(mass, rhs)
