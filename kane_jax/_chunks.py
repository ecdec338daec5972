"""A kernel of one state whose ``vmap`` runs the batch in small chunks on a CPU (a batching rule).

``jax.vmap`` of a forward dynamics gives every intermediate a leading batch axis: one FD of a
six-strain PCS rod keeps ≈ 170 kB of intermediates per state between its ≈ 220 kernels, so a batch
of 1,024 streams ≈ 170 MB through memory per call, while a handful of states stays in the caches
from one kernel to the next. :func:`in_chunks` gives a kernel a batching rule (``custom_vmap``) that
evaluates a batch of at least :data:`CPU_MIN_BATCH` states as a ``lax.map`` over chunks of
:data:`CPU_CHUNK` states, each chunk a ``vmap``; on accelerators, and for smaller batches, the rule
is the plain ``vmap`` (accelerators' batches need width). The values are those of ``vmap``: the same program per state.

Measured (``jit(vmap)`` against ``lax.map(…, batch_size=c)`` of one FD, B = 1,024, pinned, recommended
XLA flags, 2-core VM, 2026-11-29; µs per state): one six-strain PCS rod 9.65 (vmap) / 6.26 (c = 1) /
6.00 (4) / 6.23 (8) / 6.95 (16, 32) / 7.74 (64); three six-strain rods 55.1 / 35.1 / 32.5 / 29.6 /
28.6 / 28.3 / 29.3; three bend-and-stretch rods 22.6 / 8.2 / 8.4 / 9.3 / 9.4 / 9.0 / 9.0; the
iiwa-like arm 1.71 / 1.52 / 1.44 / 1.39 / 1.50 / 1.65 (c = 64). ``batch_simulate``'s chunks of
rollouts (``batch.CPU_CHUNK``) are the same idea one level up, for whole integrations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

# states per chunk of a batched kernel on a CPU (see the module docstring) ...
CPU_CHUNK = 8
# ... for batches of at least this many states; smaller ones stay one ``vmap``. Measured at
# B = 32 / 64 (one FD, µs per state, vmap → chunks of 8, same conditions as the module docstring):
# one six-strain rod 11.4 → 8.4 / 10.8 → 7.5, three 31.1 → 32.8 / 32.5 → 30.4, one bend-and-stretch
# rod 4.7 → 4.2 / 4.2 → 3.5, three 12.5 → 11.6 / 11.6 → 10.7; inside Tsit5 at B = 16, chunks of 8
# were slower for three of these four robots (3–6 %; one six-strain rod 5 % faster)
CPU_MIN_BATCH = 32


def _chunk_size(axis_size: int) -> int | None:
    """The chunk for a batch of ``axis_size`` states, or None for one plain ``vmap``."""
    if jax.default_backend() != "cpu" or axis_size < CPU_MIN_BATCH:
        return None
    return CPU_CHUNK


def map_in_chunks(batched_fn: Callable[[Any], Any], xs: Any, size: int, chunk: int) -> Any:
    """``batched_fn(xs)`` for a pytree ``xs`` of arrays with leading axis ``size > chunk``, computed as a
    ``lax.map`` over chunks of ``chunk`` (the remainder one more call): the same values, with one
    chunk's working set in the caches. Explicit reshapes, since ``lax.map(…, batch_size=…)`` cannot
    reshape zero-size outputs (``u`` of a chain without inputs, the FD of one without coordinates).
    Also ``batch_simulate``'s chunks of rollouts."""
    full = size // chunk * chunk
    chunks = jax.tree.map(lambda x: x[:full].reshape((full // chunk, chunk) + x.shape[1:]), xs)
    out = jax.tree.map(lambda y: y.reshape((full,) + y.shape[2:]), jax.lax.map(batched_fn, chunks))
    if full < size:
        rest = batched_fn(jax.tree.map(lambda x: x[full:], xs))
        out = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), out, rest)
    return out


def _mapped(fn: Callable[..., Any], static: Any, dyn: Any, flags: list[bool], chunk: int | None,
            axis_size: int) -> Any:
    """``vmap`` of ``fn`` over the leaves of ``dyn`` flagged as batched (axis 0), in chunks of ``chunk``."""
    leaves, tree = jax.tree.flatten(dyn)
    axes = jax.tree.unflatten(tree, [0 if b else None for b in flags])

    def batch(d):
        return jax.vmap(lambda x: fn(*eqx.combine(x, static)), in_axes=(axes,))(d)

    if chunk is None:
        return batch(dyn)

    def with_batched(batched):
        it = iter(batched)
        return jax.tree.unflatten(tree, [next(it) if b else x for x, b in zip(leaves, flags)])

    batched_leaves = [x for x, b in zip(leaves, flags) if b]
    return map_in_chunks(lambda c: batch(with_batched(c)), batched_leaves, axis_size, chunk)


def in_chunks(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself, whose ``vmap`` on a CPU runs in chunks of :data:`CPU_CHUNK` states (batches of
    :data:`CPU_MIN_BATCH` or more).

    Arguments:
        fn: a function of pytrees (array leaves are the traced inputs; other leaves are static)
            returning a pytree of arrays (zero-size ones included).

    Returns:
        A function with ``fn``'s signature and values. Differentiate it only through a rule of the
        caller's (``custom_jvp``): its batching rule has a forward-mode but no reverse-mode rule.
    """

    def wrapped(*args):
        dyn, static = eqx.partition(args, eqx.is_array)

        @custom_vmap
        def call(d):
            return fn(*eqx.combine(d, static))

        @call.def_vmap
        def rule(axis_size, in_batched, d):
            flags = [bool(b) for b in jax.tree.leaves(in_batched)]
            out = _mapped(fn, static, d, flags, _chunk_size(axis_size), axis_size)
            return out, jax.tree.map(lambda _: True, out)

        return call(dyn)

    return wrapped
