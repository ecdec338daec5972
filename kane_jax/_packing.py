"""The chain's array leaves packed into a few buffers for an eager call (``_dispatch.entry_jit``).

JAX's dispatch costs about 0.55 µs per array argument, and a 7-DoF arm's chain has 11 arrays. An
eager call of an entry point therefore passes the chain's arrays joined into flat buffers of at most
:data:`PACK_BYTES` (made once per chain object, on the host), and the compiled program slices them
apart again (:func:`unpack`: static slices, no copy in the program's kernels).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import numpy as np

# Packing the chain's arrays: JAX's dispatch costs ≈ 0.55 µs per array argument (a jitted function
# of k (7, 3) arrays, 2026-11-26, pinned: 4.4 / 9.7 / 14.3 µs per synchronous call for k = 1 / 11 / 20), and a
# 7-DoF arm's chain has 11. An eager call therefore passes the chain's arrays packed into a few
# flat buffers, made once per chain object and kept with it, and the program slices them apart.
# Buffers stay ≤ PACK_BYTES so that a program whose buffers were all small keeps running on the
# calling thread (docs/architecture.md, "Small buffers"); arrays above that share one buffer.
# Weakly typed arrays (their dtype follows the other operand) and arrays that are not on one
# device are passed as they are.
PACK_BYTES = 512


class Packed(NamedTuple):
    """A chain's array leaves as the program's arguments."""

    token: Any  # equal for equal plans
    plan: tuple  # per buffer: ((leaf index, shape), ...); a one-leaf buffer is the leaf itself
    buffers: list  # the arguments


_plans: dict[tuple, int] = {}


def packable(x: Any) -> Any:
    """The device of a leaf that may share a buffer, or None."""
    if not isinstance(x, jax.Array) or isinstance(x, jax.core.Tracer) or x.weak_type:
        return None
    try:
        devices = x.sharding.device_set
    except Exception:  # noqa: BLE001 -- an array type without a sharding: passed as it is
        return None
    return next(iter(devices)) if len(devices) == 1 and x.is_fully_addressable else None


def pack_plan(leaves: list) -> tuple:
    """Which leaves share a buffer: per dtype and device, first-fit decreasing into ≤ PACK_BYTES."""
    groups: dict[tuple, list[int]] = {}
    plan: list[tuple] = []
    for i, x in enumerate(leaves):
        device = packable(x)
        if device is None:
            plan.append(((i, tuple(x.shape)),))
        else:
            groups.setdefault((x.dtype, device), []).append(i)
    for members in groups.values():
        small = sorted((i for i in members if leaves[i].nbytes <= PACK_BYTES), key=lambda i: -leaves[i].nbytes)
        bins: list[list] = []
        for i in small:
            for b in bins:
                if b[0] + leaves[i].nbytes <= PACK_BYTES:
                    b[0] += leaves[i].nbytes
                    b[1].append(i)
                    break
            else:
                bins.append([leaves[i].nbytes, [i]])
        large = [i for i in members if leaves[i].nbytes > PACK_BYTES]
        for group in [b[1] for b in bins] + ([large] if large else []):
            plan.append(tuple((i, tuple(leaves[i].shape)) for i in group))
    return tuple(plan)


def _default_device() -> Any:
    default = jax.config.jax_default_device
    if default is None or isinstance(default, str):
        return jax.local_devices(backend=default)[0]
    return default


def _put(buffer: np.ndarray, device: Any) -> jax.Array:
    """``buffer`` on ``device``: uncommitted on the default device (as arrays made there are, so that
    it follows the other arguments), committed elsewhere (as the leaves it holds must have been)."""
    return jax.device_put(buffer) if device == _default_device() else jax.device_put(buffer, device)


def pack(leaves: list) -> Packed:
    """``leaves`` as few buffers (see PACK_BYTES), joined on the host and put on their device (no
    program to compile; once per chain object)."""
    plan = pack_plan(leaves)
    token = _plans.setdefault(plan, len(_plans))
    buffers = [leaves[slot[0][0]] if len(slot) == 1 else
               _put(np.concatenate([np.asarray(leaves[i]).ravel() for i, _ in slot]), packable(leaves[slot[0][0]]))
               for slot in plan]
    return Packed(token, plan, buffers)


def unpack(plan: tuple, buffers: list) -> list:
    """The leaves, in their order, from the buffers of ``plan`` (inside the program: static slices)."""
    leaves: list = [None] * sum(len(slot) for slot in plan)
    for slot, buf in zip(plan, buffers):
        if len(slot) == 1:
            leaves[slot[0][0]] = buf
            continue
        start = 0
        for i, shape in slot:
            size = math.prod(shape)
            leaves[i] = jax.lax.slice(buf, (start,), (start + size,)).reshape(shape)
            start += size
    return leaves
