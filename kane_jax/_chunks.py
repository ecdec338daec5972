"""A kernel of one state whose ``vmap`` runs the batch in small chunks on a CPU (a batching rule).

``jax.vmap`` of a forward dynamics gives every intermediate a leading batch axis: one FD of a
six-strain PCS rod keeps ≈ 170 kB of intermediates per state between its ≈ 220 kernels, so a batch
of 1,024 streams ≈ 170 MB through memory per call, while a handful of states stays in the caches
from one kernel to the next. :func:`in_chunks` gives a kernel a batching rule (``custom_vmap``) that
traces the kernel once for one state and, on a CPU, sizes the batch's evaluation by that one-state
program (:func:`program_size`: the bytes of its intermediates, the flops of its matrix products):

- elementwise work (matrix products of at most :data:`CPU_DOT_FLOPS`) of more than
  :data:`CPU_SEQUENTIAL_BYTES`: the one-state program itself, state after state (a ``lax.map``
  without ``vmap``), for every batch of two or more: its working set fills the caches already, and
  a ``vmap`` only adds a batch axis to every intermediate; of more than :data:`CPU_PAIR_BYTES`:
  chunks of :data:`CPU_CHUNK` for batches of two chunks or more, chunks of two states for
  smaller batches of four or more;
- otherwise batches of at least :data:`CPU_MIN_BATCH` states as a ``lax.map`` over chunks of
  :data:`CPU_CHUNK` states, each chunk a ``vmap``, and smaller batches as one ``vmap``.

On accelerators the rule is the plain ``vmap`` (accelerators' batches need width). The values are
those of ``vmap``: the same program per state. The rule's one-state program is what runs (its
``jaxpr`` evaluated under ``lax.map``/``vmap``): the kernel's Python is traced once.

Measured on the AMD EPYC host of 2026-11-29 (``jit(vmap)`` against ``lax.map(…, batch_size=c)`` of one
FD, B = 1,024, pinned, recommended XLA flags; µs per state): one six-strain PCS rod 9.65 (vmap) /
6.26 (c = 1) / 6.00 (4) / 6.23 (8) / 6.95 (16, 32) / 7.74 (64); three six-strain rods 55.1 / 35.1 /
32.5 / 29.6 / 28.6 / 28.3 / 29.3; three bend-and-stretch rods 22.6 / 8.2 / 8.4 / 9.3 / 9.4 / 9.0 /
9.0; the iiwa-like arm 1.71 / 1.52 / 1.44 / 1.39 / 1.50 / 1.65 (c = 64). On the Intel Xeon host of
2026-11-30 (2 MB L2 per core), after the rods' later kernels (pinned, recommended flags, the
variants of one process in turn, best of seven to nine; µs per state for state by state / chunks of
2 / chunks of 8 / one ``vmap``, at B = 256, then inside a ``fori_loop`` at B = 16; each robot's FD
behind its one-state program's bytes): three six-strain rods (1,304 kB) 15.5 / 24.7 / 22.3 / –, 18.5 /
27.2 / 24.5 / 24.9; one six-strain GVS rod on a joint (863 kB) 10.0 / 10.3 / 12.0 / 16.0, 9.6 / 10.1
/ 11.5 / 12.2; three bend-and-stretch rods (651 kB) 9.9 / 10.3 / 13.5 / –, 6.4 / 6.5 / 8.2 / 8.2;
three planar CC segments (503 kB) 4.7 / 5.0 / 5.1 / –, 4.7 / 4.9 / 5.1 / 5.8; a six-strain PCS rod
on a joint (412 kB) 6.5 / 6.0 / 6.3 / 8.4, 6.6 / 5.6 / 5.7 / 6.3; one six-strain rod (388 kB) 9.4 /
7.6 / 7.7 / –, 5.6 / 4.7 / 4.8 / 5.4; a Godage section (251 kB) 3.3 / 3.2 / 3.0 / 3.9, 3.1 / 2.8 /
2.7 / 2.8; one bend-and-stretch rod (219 kB) 5.3 / 4.2 / 4.1 / –, 5.4 / 4.1 / 4.0 / 3.6; the
iiwa-like arm (192 kB) 2.1 / 2.3 / 2.1 / –, 3.2 / 3.5 / 3.0 / 3.2; a learned body (MLP, 1,259 kB,
4e5 flops of matrix products) 79.8 / 57.9 / 37.4 / 39.9, 79.6 / 46.9 / 36.4 / 46.0.
``batch_simulate``'s chunks of rollouts (``batch.CPU_CHUNK``) are the same idea one level up, for
whole integrations. :func:`in_chunks_differentiable` gives kernels that JAX differentiates by its own
rules (the public inverse dynamics and mass matrix) the same batches, behind a ``custom_jvp`` whose
rule is the kernel's JVP (:func:`partial_jvp`), and only for ``vmap``ped calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap
from jax.extend import core as jex

try:  # JAX's private name for a vmap's tracer (``_batched``; checked by tests/test_chunks.py)
    from jax._src.interpreters.batching import BatchTracer as _BATCH_TRACER
except ImportError:  # pragma: no cover - another JAX version
    _BATCH_TRACER = None

# states per chunk of a batched kernel on a CPU (see the module docstring) ...
CPU_CHUNK = 8
# ... for batches of at least this many states; smaller ones stay one ``vmap``. Measured at
# B = 32 / 64 (one FD, µs per state, vmap → chunks of 8, same conditions as the module docstring):
# one six-strain rod 11.4 → 8.4 / 10.8 → 7.5, three 31.1 → 32.8 / 32.5 → 30.4, one bend-and-stretch
# rod 4.7 → 4.2 / 4.2 → 3.5, three 12.5 → 11.6 / 11.6 → 10.7; inside Tsit5 at B = 16, chunks of 8
# were slower for three of these four robots (3–6 %; one six-strain rod 5 % faster)
CPU_MIN_BATCH = 32
# an elementwise kernel (matrix products of at most CPU_DOT_FLOPS per state) whose one-state
# intermediates (:func:`program_size`) exceed CPU_SEQUENTIAL_BYTES runs a batch state by state, one of
# more than CPU_PAIR_BYTES in chunks of CPU_CHUNK from two chunks on and in chunks of two below: between
# the one-state programs measured on either side (the module docstring's table), 504 kB (state by state
# faster) and 412 kB (chunks of two), 388 kB (chunks of two) and 251 kB (no gain). On the AMD EPYC host
# of 2026-12-05 (AVX-512; pinned, recommended flags, two rounds, µs per state at B = 256 / 1,024 for
# state by state / chunks of two / chunks of 8) the three chains of that band ran fastest in chunks of
# 8: one six-strain PCS rod (341 kB) 4.17 / 3.72 / 3.63 and 4.12 / 3.65 / 3.52, three planar CC
# segments (313 kB) 3.02 / 3.18 / 2.94 and 2.92 / 3.09 / 2.95, three Godage sections (422 kB) 4.57 /
# 4.87 / 4.37 and 4.57 / 4.71 / 4.43; and inside Tsit5 at B = 16 (one ``vmap`` / pairs / two chunks of 8,
# s per simulated second) 3.61 / 3.49 / 3.40, 3.05 / 3.04 / 2.83, 4.58 / 4.44 / 4.23. Above 450 kB
# state by state stayed fastest there (three six-strain rods, 1,161 kB: 12.8 / 18.0 / 17.0 at B = 256;
# three bend-and-stretch rods, 560 kB: 5.24 / 5.36 / 5.93)
CPU_SEQUENTIAL_BYTES = 450_000
CPU_PAIR_BYTES = 300_000
# ... a kernel with more matrix work keeps the chunks of CPU_CHUNK: a batch widens its products (a
# learned body's MLP, 1,259 kB and 4e5 flops per state: 37 µs per state in chunks of 8, 80 state by state)
CPU_DOT_FLOPS = 10_000


def program_size(jaxpr: jex.Jaxpr) -> tuple[int, float]:
    """``(bytes, flops)`` of one evaluation of ``jaxpr``: the bytes of every intermediate (each
    equation's outputs; a loop's or branch's body counted once), a measure of its working set, and
    the floating-point operations of its matrix products (``dot_general``)."""
    nbytes, flops = 0, 0.0
    for eqn in jaxpr.eqns:
        nbytes += sum(v.aval.size * v.aval.dtype.itemsize for v in eqn.outvars if hasattr(v.aval, "dtype"))
        if eqn.primitive.name == "dot_general":
            (contract, _), _ = eqn.params["dimension_numbers"]
            depth = math.prod(eqn.invars[0].aval.shape[i] for i in contract)
            flops += 2.0 * eqn.outvars[0].aval.size * depth
    for sub in jex.subjaxprs(jaxpr):
        b, f = program_size(sub)
        nbytes, flops = nbytes + b, flops + f
    return nbytes, flops


def _chunk_size(axis_size: int, size: tuple[int, float]) -> int | None:
    """The chunk for a batch of ``axis_size`` states of a kernel whose one-state program has ``size``
    (:func:`program_size`): 1 (state by state), a chunk, or None for one plain ``vmap``."""
    if jax.default_backend() != "cpu" or axis_size < 2:
        return None
    nbytes, flops = size
    if flops <= CPU_DOT_FLOPS:  # elementwise work: a wider batch buys little, a smaller working set does
        if nbytes > CPU_SEQUENTIAL_BYTES:
            return 1
        if nbytes > CPU_PAIR_BYTES and axis_size >= 4:
            return CPU_CHUNK if axis_size >= 2 * CPU_CHUNK else 2
    return CPU_CHUNK if axis_size >= CPU_MIN_BATCH else None


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


def _mapped(one: Callable[..., Any], leaves: list[Any], flags: list[bool], chunk: int | None,
            axis_size: int) -> Any:
    """``one`` (a function of the flat ``leaves``) over the leaves flagged as batched (axis 0): one
    ``vmap`` (``chunk`` None), state by state (1) or in chunks of ``chunk``."""
    batched = [x for x, b in zip(leaves, flags) if b]

    def with_batched(xs):
        it = iter(xs)
        return [next(it) if b else x for x, b in zip(leaves, flags)]

    if chunk == 1:
        return jax.lax.map(lambda xs: one(*with_batched(xs)), batched)

    def batch(xs):
        return jax.vmap(one, in_axes=[0 if b else None for b in flags])(*with_batched(xs))

    if chunk is None:
        return batch(batched)
    return map_in_chunks(batch, batched, axis_size, chunk)


def in_chunks(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself, whose ``vmap`` on a CPU runs state by state or in chunks of :data:`CPU_CHUNK`
    states, as the size of its one-state program asks (the module docstring).

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
            leaves, tree = jax.tree.flatten(d)
            flags = [bool(b) for b in jax.tree.leaves(in_batched)]
            # one state's program, traced once: its size picks the evaluation, and it is what runs
            shapes = [jax.ShapeDtypeStruct(x.shape[1:] if b else x.shape, x.dtype, weak_type=jax.typeof(x).weak_type)
                      for x, b in zip(leaves, flags)]
            program, out_shape = jax.make_jaxpr(lambda *xs: fn(*eqx.combine(jax.tree.unflatten(tree, xs), static)),
                                                return_shape=True)(*shapes)
            out_tree = jax.tree.structure(out_shape)

            def one(*xs):
                return jax.tree.unflatten(out_tree, jex.jaxpr_as_fun(program)(*xs))

            chunk = _chunk_size(axis_size, program_size(program.jaxpr))
            out = _mapped(one, leaves, flags, chunk, axis_size)
            return out, jax.tree.map(lambda _: True, out)

        return call(dyn)

    return wrapped


def partial_jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``jax.jvp(fn, primals, tangents)`` where a ``None`` tangent (of a whole argument or of one of
    its leaves) is a symbolic zero: only the leaves with tangents are inputs of the ``jvp``, the rest
    are constants. Returns ``(fn(*primals), tangent or None)``."""
    flat, tree = jax.tree.flatten(tuple(primals))
    # a None standing for a whole subtree (a tip wrench without tangent) becomes one None per leaf
    dflat = tree.flatten_up_to(jax.tree.map(lambda t, p: jax.tree.map(lambda _: None, p) if t is None else t,
                                            tuple(tangents), tuple(primals), is_leaf=lambda x: x is None))
    live = [i for i, t in enumerate(dflat) if t is not None]
    if not live:
        return fn(*primals), None

    def restricted(*xs):
        leaves = list(flat)
        for i, x in zip(live, xs):
            leaves[i] = x
        return fn(*jax.tree.unflatten(tree, leaves))

    return jax.jvp(restricted, [flat[i] for i in live], [dflat[i] for i in live])


def _batched(args: Any) -> bool:
    """True when an array leaf of ``args`` is being batched by ``vmap`` at the top of its trace stack
    (a batch tracer; under ``jvp``/``grad`` inside a ``vmap`` the leaves are tangent tracers). Where
    JAX's private name is missing (another version): True."""
    if _BATCH_TRACER is None:
        return True
    return any(isinstance(x, _BATCH_TRACER) for x in jax.tree.leaves(args))


def in_chunks_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself, whose ``vmap`` on a CPU runs in chunks (:func:`in_chunks`) and whose derivatives
    are ``fn``'s own.

    A ``vmap``ped call (batch tracers among the arguments) goes through :func:`in_chunks` behind a
    ``custom_jvp`` whose rule is ``fn``'s JVP (a ``custom_vmap`` has none), so that ``jvp``, ``grad``
    and Jacobians of a batch are the programs they were; any other call is ``fn`` itself, the same
    program as without this wrapper. The test runs when ``fn`` is traced, so a ``vmap`` of an already
    traced program (``vmap(jit(f))``) batches ``fn``'s plain program; wrapping every call instead
    (as the FD is) cost 0.1–0.25 s more compile per unbatched program and 0.3–0.45 s per batched one
    (pinned, three rounds, 2026-12-05). For kernels differentiated by JAX's own rules (the inverse
    dynamics, the mass matrix); the forward dynamics has a derivative rule of its own around its
    chunked primal (``algorithms/_fd_derivative.py``).

    Arguments:
        fn: a function of pytrees (array leaves traced, other leaves static) returning arrays.

    Returns:
        A function with ``fn``'s signature, values and derivatives.
    """

    @eqx.filter_custom_jvp
    def chunked(*args):
        return in_chunks(fn)(*args)

    @chunked.def_jvp
    def _jvp(primals, tangents):
        return partial_jvp(fn, primals, tangents)

    def call(*args):
        return chunked(*args) if _batched(args) else fn(*args)

    return call
