"""Indexing by static integer positions as slices and one concatenation: no gather, no scatter.

``x.at[idx].add(v)`` and ``x[idx]`` with a NumPy index array trace to XLA ``scatter`` and ``gather``
even when the positions are constants. XLA:CPU expands a scatter into a ``while`` loop of
dynamic-update-slices (one per index), and a loop is a kernel of its own that keeps the rest of the
program out of one fusion and adds a loop body to compile: the one FD of a bend-and-stretch PCS rod
(``ξ = B q + ξ*``, its strain selection as a scatter-add) compiled three such loops, for the value,
its tangent and its transpose (2026-12-02). With static positions the same values are a handful of
slices of contiguous runs and zero blocks, concatenated: element-wise, fused with their neighbours,
and their derivatives are slices, pads and concatenations again.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ._types import Array


def _runs(source: Sequence[int]) -> list[tuple[int, int]]:
    """``source`` (an input position per output position, −1 for none) as runs ``(start, length)``:
    consecutive outputs read consecutive inputs (``start ≥ 0``) or none (``start = −1``)."""
    runs: list[tuple[int, int]] = []
    for s in source:
        if runs:
            start, n = runs[-1]
            if (start < 0 and s < 0) or (start >= 0 and s == start + n):
                runs[-1] = (start, n + 1)
                continue
        runs.append((int(s) if s >= 0 else -1, 1))
    return runs


def _assemble(x: Array, source: Sequence[int], axis: int) -> Array:
    """The array whose entries along ``axis`` are ``x``'s at ``source`` (zeros where −1)."""
    axis = axis % x.ndim
    pieces = []
    for start, n in _runs(source):
        if start < 0:
            shape = list(x.shape)
            shape[axis] = n
            pieces.append(jnp.zeros(shape, x.dtype))
        else:
            pieces.append(jax.lax.slice_in_dim(x, start, start + n, axis=axis))
    if not pieces:  # nothing taken
        shape = list(x.shape)
        shape[axis] = 0
        return jnp.zeros(shape, x.dtype)
    if len(pieces) == 1:
        return pieces[0]
    return jnp.concatenate(pieces, axis=axis)


def take_static(x: Array, index, axis: int = 0) -> Array:
    """``jnp.take(x, index, axis)`` for static positions, as slices of ``x`` and one concatenation.

    Arguments:
        x: the array. index: static non-negative integer positions along ``axis`` (any sequence).
        axis: the axis taken from.

    Returns:
        ``x`` with ``axis`` replaced by ``len(index)`` entries, ``x``'s at ``index``.

    Raises:
        ValueError: a position outside ``[0, x.shape[axis])``.
    """
    index = np.asarray(index, dtype=int).reshape(-1)
    if index.size and (index.min() < 0 or index.max() >= x.shape[axis]):
        raise ValueError(f"take_static: `index` must lie in [0, {x.shape[axis]}), got {index}")
    return _assemble(x, index.tolist(), axis)


def spread_static(x: Array, index, size: int, axis: int = 0) -> Array:
    """``jnp.zeros(…).at[index].set(x)`` along ``axis`` for static, distinct positions, as slices of
    ``x`` and zero blocks joined by one concatenation.

    Arguments:
        x: the entries, ``x.shape[axis] == len(index)``. index: static distinct non-negative integer
            positions. size: the length of the result along ``axis``. axis: the axis spread along.

    Returns:
        ``x``'s shape with ``axis`` of length ``size``: ``x``'s entries at ``index``, zeros elsewhere.

    Raises:
        ValueError: ``index`` not of ``x.shape[axis]`` distinct positions in ``[0, size)``.
    """
    index = np.asarray(index, dtype=int).reshape(-1)
    if index.size != x.shape[axis] or len(set(index.tolist())) != index.size:
        raise ValueError(f"spread_static: `index` must hold {x.shape[axis]} distinct positions, got {index}")
    if index.size and (index.min() < 0 or index.max() >= size):
        raise ValueError(f"spread_static: `index` must lie in [0, {size}), got {index}")
    source = [-1] * size
    for k, i in enumerate(index.tolist()):
        source[i] = k
    return _assemble(x, source, axis)
