"""The one door into a chain's modules: grouping, gathering, mapping and scanning.

A :class:`~kane_jax.Chain` stores modules of identical structure stacked in *groups* (each array
leaf with a leading axis over the group's members), so that the per-module work of every group is
one ``vmap`` and the trace does not grow with the number of identical modules. Everything that
touches that storage lives here (modelled on MuJoCo MJX's ``scan.py``):

- :func:`map_modules` — per-module work, ``vmap``-ed per group, results in chain order;
- :func:`module_rows` / :func:`chain_vector` — a chain vector ``(nq,)`` as per-module rows
  ``(N, n_max)`` padded with zeros, and back;
- :func:`scan_modules` — a recursion over the modules, base to tip or tip to base (unrolled at
  trace time for short chains, a ``lax.scan`` otherwise);
- :func:`module_coordinates` — module ``i``'s slice of a chain vector;
- :func:`group_by_structure` / :func:`stack` / :func:`map_grouped` — the grouping itself, also used
  for actuators that differ only in their parameters (the tendons of one body).

Nothing outside this file and ``chain.py`` reads the chain's layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._checks import on_host
from ._static_index import spread_static, take_static
from ._types import Array, Config, Float

Carry = TypeVar("Carry")

# Chains of at most this many modules have their recursions unrolled at trace time, on XLA:CPU
# (UNROLL_MODULES) and on an accelerator (UNROLL_MODULES_ACCELERATOR: JAX's default backend is a
# GPU or TPU). Off on the CPU: the unrolled straight-line code made XLA:CPU compile 1.3-1.8x longer
# (FD of two planar CC modules 9.9 s -> 7.5 s, of three PCS modules 14.9 s -> 8.5 s with lax.scan,
# load 3.5, 2026-11-22), the optimized HLO 1.5-1.9x larger and the 7-DoF arm's batched ID/FD
# 1.4-2.8x slower (2026-11-26); a lax.scan is traced once whatever the chain's length. On for short
# chains on a GPU, where each iteration of a loop is a launch round trip: the 7-DoF arm's batched ID
# 1.63-1.87x and FD 1.37-1.52x faster at B = 1,024-16,384, 1.08-1.24x at 131,072 (NVIDIA H200, two
# processes, benchmarks/ab_unroll_recursions.py, results/bench_gpu.md). Same values.
UNROLL_MODULES = 0
UNROLL_MODULES_ACCELERATOR = 8


def unroll_limit() -> int:
    """The longest chain whose recursions are unrolled, for JAX's default backend (read at trace time)."""
    return UNROLL_MODULES if jax.default_backend() == "cpu" else UNROLL_MODULES_ACCELERATOR


def structure_key(tree: Any) -> Any:
    """Hashable key of a pytree's structure: tree definition, array shapes and dtypes, static leaves."""
    leaves, treedef = jax.tree.flatten(tree)
    key = (treedef, tuple(("array", tuple(x.shape), str(x.dtype)) if eqx.is_array(x) else x for x in leaves))
    try:
        hash(key)
    except TypeError:  # unhashable static data: the item stays in a group of its own
        return ("unique", id(tree))
    return key


def group_by_structure(items, key: Callable[[Any], Any] = structure_key) -> list[list[int]]:
    """Indices of the items with the same ``key`` (default :func:`structure_key`), groups in order of
    first appearance."""
    groups: dict[Any, list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(key(item), []).append(i)
    return list(groups.values())


def stack(items) -> Any:
    """Items of one structure as one pytree whose array leaves have a leading axis over the items.

    The items' array leaves are matched in order, so items that differ in static data only (a
    module index ``fn`` does not read, see :func:`map_grouped`) stack too: the first's is kept.
    """
    dyn, static = eqx.partition(items[0], eqx.is_array)
    leaves = [jax.tree.leaves(eqx.filter(x, eqx.is_array)) for x in items]
    stacked = [_stack_leaves([ls[k] for ls in leaves]) for k in range(len(leaves[0]))]
    return eqx.combine(jax.tree.unflatten(jax.tree.structure(dyn), stacked), static)


def _stack_leaves(xs: list) -> Array:
    """``jnp.stack(xs)``, on the host when every entry allows it (:func:`on_host`, one dtype)."""
    if all(on_host(x) for x in xs) and len({np.dtype(x.dtype) for x in xs}) == 1:
        return jax.device_put(np.stack([np.asarray(x) for x in xs]))  # jnp.asarray would compile (lax.stage)
    return jnp.stack([jnp.asarray(x) for x in xs])


def map_grouped(items, fn: Callable[[Any], Array], *, key: Callable[[Any], Any] = structure_key) -> list[Array]:
    """``[fn(item) for item in items]`` with one ``vmap``-ed trace per group of items of equal ``key``.

    The default key is the whole structure (:func:`structure_key`); a coarser key must still group
    only items that stack (same array shapes) and whose static parts ``fn`` does not read, since
    the group runs with the first item's.
    """
    out: list = [None] * len(items)
    for idx in group_by_structure(items, key):
        if len(idx) == 1:
            out[idx[0]] = fn(items[idx[0]])
            continue
        res = eqx.filter_vmap(fn)(stack([items[i] for i in idx]))
        for k, i in enumerate(idx):
            out[i] = res[k]
    return out


def n_rows(chain) -> int:
    """Width of a per-module row: the largest number of coordinates of one module."""
    return chain.layout.n_max


def has_body_coordinates(chain) -> bool:
    """Whether any body of the chain has coordinates of its own (static: from the layout).

    When none has (rigid arms, and chains of bodies without coordinates), every own-coordinate mass
    moment of DESIGN §3.3 (``jac_first``, ``gram``, ``gyro``, the curvature sums, …) is structurally
    zero, and the kernels leave those terms out of the program instead of computing with zeros.
    """
    return any(nb > 0 for _, nb in chain.layout.group_nq)


def module_coordinates(chain, i: int, x: Config) -> Config:
    """Module ``i``'s coordinates (joint first, then body) of a chain vector ``x``."""
    return x[chain.coordinate_slice(i)]


def _group_vectors(chain, g: int, x: Array) -> Array:
    """``(G, n_g)`` slices of chain vector ``x`` for the members of group ``g`` (a reshape when contiguous)."""
    idx = chain.layout.group_index(g)
    flat = idx.reshape(-1)
    if idx.size and np.array_equal(flat, np.arange(flat[0], flat[0] + flat.size)):
        return x[int(flat[0]): int(flat[0]) + flat.size].reshape(idx.shape)
    return x[jnp.asarray(idx)]


def map_modules(chain, fn: Callable[..., Any], *vectors: Array | None) -> Any:
    """``fn(joint, body, *x_i)`` for every module ``i``, ``vmap``-ed per group, stacked in chain order.

    A group of one module is called on that module directly (its parameters indexed, the outputs
    given a leading axis of one): the same program without a batching level that every operation of
    ``fn`` is traced through. The tests' q-Hessians of one soft body's ID, M and FD ran 10–22 % faster
    (GVS program: trace 21.1 → 17.1 s); one FD of a one-segment rod runs the same.

    Arguments:
        chain: the chain.
        fn: ``(joint, body, *per-module vectors) -> pytree of arrays``; each per-module vector is
            the module's slice (joint coordinates first) of the corresponding chain vector. Outputs
            must have the same shapes for every module (pad per-module rows to :func:`n_rows`).
        vectors: chain vectors ``(nq,)``, or None (passed to ``fn`` as None).

    Returns:
        The outputs of ``fn`` with a leading axis over the modules, in chain order.
    """
    lay = chain.layout
    parts = []
    for g, (joint, body) in enumerate(chain.groups):
        xs = [None if x is None else _group_vectors(chain, g, x) for x in vectors]
        present = [x for x in xs if x is not None]

        def one(j, b, *args, xs=xs):
            it = iter(args)
            return fn(j, b, *[None if x is None else next(it) for x in xs])

        if len(lay.members[g]) == 1:
            # a group of one module: called on the module itself, not through vmap (a batching level
            # that every operation would be traced through, for nothing; see docs/architecture.md)
            first = jax.tree.map(lambda a: a[0] if eqx.is_array(a) else a, (joint, body))
            out = one(*first, *[x[0] for x in present])
            parts.append(jax.tree.map(lambda a: a[None], out))
        else:
            parts.append(eqx.filter_vmap(one)(joint, body, *present))
    if len(parts) == 1:
        return parts[0]
    stacked = jax.tree.map(lambda *p: jnp.concatenate(p), *parts)
    order = np.asarray(lay.order)
    if np.array_equal(order, np.arange(order.size)):
        return stacked
    return jax.tree.map(lambda a: a[jnp.asarray(order)], stacked)


def module_rows(chain, x: Config) -> Float[Array, "N n_max"]:
    """Per-module rows of a chain vector, chain order, zero-padded to :func:`n_rows`."""
    lay = chain.layout
    if all(n == lay.n_max for n in lay.module_nq):
        return x.reshape(lay.n_modules, lay.n_max)
    # static slices and zero blocks, not a scatter: XLA:CPU expands a scatter into a loop (_static_index)
    return spread_static(x, lay.flat_index(), lay.n_modules * lay.n_max).reshape(lay.n_modules, lay.n_max)


def chain_vector(chain, rows: Float[Array, "N n_max"]) -> Config:
    """Inverse of :func:`module_rows`: per-module rows back to the ``(nq,)`` chain vector."""
    lay = chain.layout
    if all(n == lay.n_max for n in lay.module_nq):
        return rows.reshape(-1)
    return take_static(rows.reshape(-1), lay.flat_index())


def chain_rows(chain, rows: Float[Array, "N n_max ..."]) -> Float[Array, "nq ..."]:
    """:func:`chain_vector` for rows with trailing axes: ``(N, n_max, …)`` to ``(nq, …)``."""
    lay = chain.layout
    flat = rows.reshape((lay.n_modules * lay.n_max,) + rows.shape[2:])
    if all(n == lay.n_max for n in lay.module_nq):
        return flat
    return take_static(flat, lay.flat_index())


def coordinate_modules(chain) -> tuple[np.ndarray, np.ndarray]:
    """For each of the ``nq`` coordinates: its module (chain order) and its row in that module (static)."""
    index = chain.layout.flat_index()
    return index // chain.layout.n_max, index % chain.layout.n_max


def chain_block_diagonal(chain, blocks: Float[Array, "N n_max n_max"]) -> Float[Array, "nq nq"]:
    """Per-module ``(n_max, n_max)`` blocks (rows and columns laid out as :func:`module_rows`) as
    the block-diagonal ``(nq, nq)`` chain matrix."""
    module, row = coordinate_modules(chain)
    m, r = jnp.asarray(module), jnp.asarray(row)
    # a gather and a select, not an einsum: that is a dot, which keeps XLA:CPU from compiling a solver
    # loop into one kernel (the stiff solver's K and D are built inside its loop, the composite mass
    # matrix's own-coordinate Gram blocks inside every FD)
    return jnp.where(m[:, None] == m[None, :], blocks[m[:, None], r[:, None], r[None, :]], 0).astype(blocks.dtype)


def pad_rows(x: Array, front: int, total: int, axes: tuple[int, ...] = (0,)) -> Array:
    """Zero-pad ``x`` along ``axes`` so that its rows sit at ``[front, front + len)`` of ``total`` rows."""
    if all(x.shape[a] == total for a in axes):
        return x
    shape = list(x.shape)
    for a in axes:
        shape[a] = total
    if any(x.shape[a] == 0 for a in axes):
        return jnp.zeros(shape, dtype=x.dtype)
    pads = [(0, 0)] * x.ndim
    for a in axes:
        pads[a] = (front, total - front - x.shape[a])
    return jnp.pad(x, pads)


def scan_modules(step: Callable[[Carry, Any], tuple[Carry, Any]], init: Carry, xs: Any, *,
                 reverse: bool = False) -> tuple[Carry, Any]:
    """Run ``step`` over the leading (module) axis of ``xs``; ``reverse=True`` goes tip to base.

    Up to :func:`unroll_limit` modules (none on a CPU, :data:`UNROLL_MODULES_ACCELERATOR` on a GPU
    or TPU) the loop is unrolled at trace time (straight-line code that XLA fuses across modules);
    longer chains use :func:`jax.lax.scan`, traced once whatever their length. Both return the
    outputs stacked in module order, with the same values.
    """
    n = jax.tree.leaves(xs)[0].shape[0]
    if n > unroll_limit():
        return jax.lax.scan(step, init, xs, reverse=reverse)
    carry = init
    ys = [None] * n
    for i in (reversed(range(n)) if reverse else range(n)):
        carry, ys[i] = step(carry, jax.tree.map(lambda a, i=i: a[i], xs))
    return carry, jax.tree.map(lambda *y: jnp.stack(y), *ys)
