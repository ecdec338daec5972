"""Small-array arithmetic written element-wise, so that XLA:CPU fuses it: no dot kernels.

The recursion's per-module work is on 3-vectors and 3×3 matrices. On the CPU every ``dot_general``
is a kernel of its own (and keeps a whole ``while`` loop from compiling into one kernel), and a
``reduce`` over a short axis becomes a library fusion of its own; the functions here compute the
same numbers as ``@``, ``jnp.cross``, ``jnp.einsum`` and ``jnp.sum`` with broadcast products and
static slices instead (``docs/architecture.md``, "Whole loops as one kernel", "Small buffers").
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from ._types import Array

SMALL_SUM = 16  # axes up to this size are summed by element-wise adds (static slices), longer by ``jnp.sum``
# contractions with up to this many terms per output entry are summed over slices of the operands
# (:func:`contract`), longer ones over slices of their broadcast product
SMALL_TERMS = 16


def sum_small(x: Array, axis: int = 0) -> Array:
    """``jnp.sum(x, axis)`` as element-wise adds of static slices when the axis is short.

    XLA:CPU rewrites a multiply followed by a ``reduce`` over a short axis into a library (YNNPACK)
    fusion of its own: for the batched ID of a 7-DoF arm those kernels took a third of the time
    (2026-11-24 profile), and a ``reduce`` over a minor axis of 3 stayed a loop of its own (2.3×
    slower batched ID, 2026-11-23). Added slice by slice, the sum fuses with its operands instead.
    """
    n = x.shape[axis]
    if n == 0 or n > SMALL_SUM:
        return jnp.sum(x, axis=axis)
    out = jax.lax.index_in_dim(x, 0, axis, keepdims=False)
    for i in range(1, n):
        out = out + jax.lax.index_in_dim(x, i, axis, keepdims=False)
    return out


@functools.partial(jax.jit, static_argnums=0)
def contract(spec: str, *operands: Array) -> Array:
    """``jnp.einsum(spec, *operands)`` as broadcast products and :func:`sum_small` (no dot kernel).

    XLA:CPU compiles a whole ``while`` loop with no dot (a diffrax solve) into one kernel
    (``docs/architecture.md``, "Whole loops as one kernel"); an ``einsum`` over a rod's few sections
    is a dot and keeps the loop out. Explicit ``spec`` only (``"kab,kb->ka"``), no ellipsis.

    With at most :data:`SMALL_TERMS` terms per output entry (the product of the summed axes' sizes),
    each term is a product of static slices of the operands and the terms are added
    (:func:`_short_contract`): no intermediate of the full broadcast product. That product, summed
    slice by slice after it, is a buffer of its own under ``vmap`` (a ``(B, 5, 6, 3, 6)`` array for
    the Gram blocks ``"kja,kla->jl"`` of a six-strain rod, whose kernel recomputed its operands per
    entry: 13 % of the batched ID). Same association of the sums, so the same numbers (bit for bit
    in eager mode). Longer contractions (a deforming body's points) keep the product, summed axes last.
    """
    ins, out = _parse(spec)
    if len(ins) != len(operands):
        raise ValueError(f"contract: {len(ins)} operand specs in {spec!r}, got {len(operands)} operands")
    if any(len(set(sub)) != len(sub) for sub in ins) or len(set(out)) != len(out):
        raise ValueError(f"contract: spec {spec!r} repeats an index within one operand (diagonals are not supported)")
    sizes = _sizes(ins, operands)
    summed = [c for c in sizes if c not in out]
    if summed and math.prod(sizes[c] for c in summed) <= SMALL_TERMS:
        return _short_contract((ins, out), *operands)
    return _broadcast_contract(ins, out, operands)


def _parse(spec: str) -> tuple[tuple[str, ...], str]:
    """``"kab,kb->ka"`` as its operands' index strings and the output's."""
    ins, out = spec.replace(" ", "").split("->")
    return tuple(ins.split(",")), out


def _sizes(ins, operands) -> dict[str, int]:
    """Each index letter's size (the largest over the operands: length-1 axes broadcast), in order of
    first appearance."""
    sizes: dict[str, int] = {}
    for sub, x in zip(ins, operands):
        for c, n in zip(sub, x.shape):
            sizes[c] = max(sizes.get(c, 1), n)
    return sizes


def _aligned(x: Array, sub: str, target) -> Array:
    """``x`` (axes labelled by ``sub``) transposed into the order of ``target`` (a sequence of letters
    containing ``sub``'s), with a length-1 axis for every letter of ``target`` it lacks."""
    order = sorted(range(len(sub)), key=lambda i: target.index(sub[i]))
    x = jnp.transpose(x, order) if order != list(range(len(sub))) else x
    present = [sub[i] for i in order]
    return x.reshape([x.shape[present.index(c)] if c in present else 1 for c in target])


def _broadcast_contract(ins, out: str, operands) -> Array:
    """:func:`contract` as one broadcast product summed over the summed axes (the last one first).

    Summed axes longer than :data:`SMALL_SUM` (a deforming body's mass points) are laid out last
    and reduced together: XLA:CPU reduced a major axis of the product 3.4× slower (a variable-radius
    body's Gram sums ``"k,uka,vkb->uvab"`` over 80 points, 31 → 9 µs in a jitted loop, 2026-11-30).
    """
    sizes = _sizes(ins, operands)
    summed = [c for c in sizes if c not in out]
    long = any(sizes[c] > SMALL_SUM for c in summed)
    letters = list(out) + summed if long else list(sizes)
    prod = None
    for sub, x in zip(ins, operands):
        x = _aligned(x, sub, letters)
        prod = x if prod is None else prod * x
    prod = jnp.broadcast_to(prod, [sizes[c] for c in letters])
    if long:
        return jnp.sum(prod, axis=tuple(range(len(out), len(letters))))
    axes = list(letters)
    for c in reversed(letters):
        if c not in out:
            prod = sum_small(prod, axes.index(c))
            axes.remove(c)
    order = [axes.index(c) for c in out]
    return jnp.transpose(prod, order) if order != list(range(len(out))) else prod


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _short_contract(parsed: tuple[tuple[str, ...], str], *operands: Array) -> Array:
    """:func:`contract` (``parsed`` by :func:`_parse`) as a sum of products of static operand slices,
    one term per index of the summed axes; the sums nested in the order of
    :func:`_broadcast_contract` (the last summed axis innermost, each summed from index 0), so the
    rounding is the same. Each operand's slice at each of its summed indices is taken once.

    Its tangents (and through them its transpose) are :func:`_broadcast_contract`'s: the slices'
    transposes are one zero-padded array per term, which made the reverse-mode program of two PCS
    rods' ID and FD 29 % larger and its compile 21 → 29–31 s (pinned, 2026-11-29); with the
    tangents in the broadcast form 20.6–21.1 s, as before the short form."""
    (ins, out), pieces = parsed, {}
    sizes = _sizes(ins, operands)
    summed = [c for c in sizes if c not in out]

    def term(fixed: dict[str, int]) -> Array:
        prod = None
        for i, (sub, x) in enumerate(zip(ins, operands)):
            at = tuple(min(fixed[c], n - 1) if c in fixed else None for c, n in zip(sub, x.shape))
            if (i, at) not in pieces:  # an axis of length 1 broadcasts: its only slice
                pieces[i, at] = _aligned(x[tuple(slice(None) if k is None else k for k in at)],
                                         "".join(c for c in sub if c not in fixed), out)
            prod = pieces[i, at] if prod is None else prod * pieces[i, at]
        return jnp.broadcast_to(prod, [sizes[c] for c in out])

    def nested(fixed: dict[str, int], depth: int) -> Array:
        if depth == len(summed):
            return term(fixed)
        c = summed[depth]
        total = nested({**fixed, c: 0}, depth + 1)
        for i in range(1, sizes[c]):
            total = total + nested({**fixed, c: i}, depth + 1)
        return total

    return nested({}, 0)


@functools.partial(_short_contract.defjvp, symbolic_zeros=True)
def _short_contract_jvp(parsed, primals, tangents):
    """The contraction's tangent, one broadcast-form term per operand with a nonzero tangent."""
    ins, out = parsed
    tangent = None
    for i, t in enumerate(tangents):
        if type(t) is jax.custom_derivatives.SymbolicZero:
            continue
        part = _broadcast_contract(ins, out, primals[:i] + (t,) + primals[i + 1:])
        tangent = part if tangent is None else tangent + part
    primal = _short_contract(parsed, *primals)
    return primal, jnp.zeros_like(primal) if tangent is None else tangent


def _sum3(terms) -> Array:
    """``t0 + t1 + t2``, left to right (the order ``sum_small`` adds in)."""
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


# The 3×3 products below add three products of slices rather than reducing one broadcast product
# (``sum_small(a * b)``): the broadcast product is a (…, 3, 3, 3) array that XLA materializes when
# several slices read it, and one buffer over 512 bytes (a 7-module stack of them is 1,512) makes
# XLA:CPU run the whole program's kernels on its worker threads instead of the calling thread
# (``docs/architecture.md``, "Small buffers"). Same operations, same order, same bits.


def _common(*xs: Array) -> list[Array]:
    """Broadcast arrays to their common shape (leading axes added as needed), once, explicitly.

    The products below then multiply equal shapes. Reverse mode sums an operand's cotangent over
    the axes it was broadcast along; with one explicit broadcast that is one reduction per operand,
    where implicit broadcasting in every product made one per product. Those many small
    reductions (next to large fusions) are what XLA:CPU's fusion pass spends most of a gradient's
    compile on (``docs/architecture.md``, "Compile time"). The forward program is unchanged: a slice
    of a broadcast simplifies to a broadcast of the slice.
    """
    shape = jnp.broadcast_shapes(*(x.shape for x in xs))
    return [jnp.broadcast_to(x, shape) for x in xs]


def _parts(x: Array, axis: int) -> list[Array]:
    """The three components of ``x`` along ``axis``, kept as axes of size one, by one ``split``.

    One primitive per operand where indexing each component is a slice and a squeeze (the
    products below traced ≈ 2× the equations, a third of a rigid arm's ID), and in reverse mode
    one concatenation of the cotangents instead of three pads and their sum.
    """
    return jax.lax.split(x, (1, 1, 1), axis=axis % x.ndim)


@jax.jit
def mv(m: Array, v: Array) -> Array:
    """``m @ v`` for 3×3 ``m`` (leading batch axes broadcast), without a dot kernel."""
    m, v = _common(m, v[..., None, :])
    return _sum3([mk * vk for mk, vk in zip(_parts(m, -1), _parts(v, -1))])[..., 0]


@jax.jit
def mtv(m: Array, v: Array) -> Array:
    """``mᵀ @ v`` for 3×3 ``m``."""
    m, v = _common(m, v[..., :, None])
    return _sum3([mk * vk for mk, vk in zip(_parts(m, -2), _parts(v, -2))])[..., 0, :]


@jax.jit
def mm(a: Array, b: Array) -> Array:
    """``a @ b`` for 3×3 matrices (leading batch axes broadcast), without a dot kernel."""
    a, b = _common(a[..., :, :, None], b[..., None, :, :])  # (…, i, k, j)
    return _sum3([ak * bk for ak, bk in zip(_parts(a, -2), _parts(b, -2))])[..., 0, :]


@jax.jit
def mtm(a: Array, b: Array) -> Array:
    """``aᵀ @ b`` for 3×3 matrices."""
    a, b = _common(a[..., :, :, None], b[..., :, None, :])  # (…, k, i, j)
    return _sum3([ak * bk for ak, bk in zip(_parts(a, -3), _parts(b, -3))])[..., 0, :, :]


@jax.jit
def cross(a: Array, b: Array) -> Array:
    """Cross product along the last axis, component-wise (leading axes broadcast)."""
    a, b = _common(a, b)
    (a0, a1, a2), (b0, b1, b2) = _parts(a, -1), _parts(b, -1)
    return jnp.concatenate([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


@jax.jit
def dot(a: Array, b: Array) -> Array:
    """Dot product along the last axis (leading axes broadcast)."""
    a, b = _common(a, b)
    return sum_small(a * b, -1)


@jax.jit
def det3(m: Array) -> Array:
    """``det m`` of 3×3 matrices (leading batch axes broadcast) as the triple product of the rows.

    ``jnp.linalg.det`` factors by LU with pivoting and differentiates through its custom rule (a
    second LU and triangular solves), so a Jacobian of a volume ``∫ det F`` — and the Hessian of it
    that a Newton step or an implicit integrator needs — traces and compiles that machinery at every
    order. The triple product is a polynomial: its derivatives are products and sums (000-sim1's
    chamber volumes: their ``jacfwd`` of ``A(q)ᵀu`` compiled 8.8 → 7.8 s with it alone).
    """
    r0, r1, r2 = (r[..., 0, :] for r in _parts(m, -2))
    return dot(r0, cross(r1, r2))


def materialize(x: Array) -> Array:
    """``x`` itself, computed once into a buffer of its own: a fusion boundary that XLA:CPU keeps.

    XLA:CPU fuses an element-wise producer into *every* fusion that consumes it, so an expensive
    intermediate read by several consumers (a series coefficient, a jet's generators through the
    SE(3) right Jacobian) is recomputed in each — and, through nested products, several times per
    element. ``lax.optimization_barrier`` alone does not stop this on XLA:CPU: the CPU compiler
    removes barriers before its fusion pass, so a bare barrier is kept only where its operand
    happens to be a concatenation (``tests/test_small.py`` compiles both and counts the producer's
    multiplications). The boundary here is a barrier around a concatenation of ``x`` with one of
    its own entries, sliced off after: the concatenation is computed into a buffer once and the
    slice is free. It has batching, forward- and reverse-mode rules (those of its three parts).

    Measured (pinned, recommended XLA flags, 2026-11-27, the SoRoMoX benchmark's PCS rod): one FD
    of a six-strain rod in a jitted loop 13.4 → 8.2 µs and 10.0–10.8 → 8.3–9.3 µs per state batched
    (its generators and the right Jacobian's coefficients were recomputed in every moment's kernel);
    three bend-and-stretch rods 8.2–8.6 → 7.6–7.7 µs in a loop.
    """
    if x.size == 0:
        return x
    flat = x.reshape(-1)
    return jax.lax.optimization_barrier(jnp.concatenate([flat, flat[:1]]))[:-1].reshape(x.shape)


def add_to_rows(r: int, every: Array, extra: Array, axis: int = 1) -> Array:
    """``every`` with ``extra`` (``r`` rows along ``axis``) added to its first ``r`` rows along ``axis``."""
    if extra.shape[axis] == every.shape[axis]:
        return every + extra
    head = jax.lax.slice_in_dim(every, 0, r, axis=axis)
    tail = jax.lax.slice_in_dim(every, r, every.shape[axis], axis=axis)
    return jnp.concatenate([head + extra, tail], axis=axis)
