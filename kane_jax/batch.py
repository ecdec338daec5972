"""Batch rollouts: ``vmap`` of :func:`kane_jax.simulate`, sharded over every available device.

One code path from a laptop CPU to several GPUs and several hosts: the batch axis is split over a
1-D :class:`jax.sharding.Mesh` of ``jax.devices()`` (all processes' devices after
``jax.distributed.initialize()``) and each device integrates its own slice with a ``vmap`` of
``simulate`` inside :func:`jax.shard_map` — no communication between devices, and a device whose
trajectories need fewer steps does not wait for the slowest trajectory of another device.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ._chunks import map_in_chunks
from ._shared_jit import shared_arrays, shared_leaves_jit
from .chain import Chain
from .simulation.simulate import simulate
from .simulation.trajectory import Trajectory

AXIS = "batch"

# Rollouts per ``vmap`` on a CPU (``chunk="auto"``). A batched vector field's intermediates grow with
# the batch, and past a few hundred rollouts they no longer stay in the caches between its kernels:
# one FD of a six-strain PCS rod took 12.1 µs per state at B = 128–256, 13.6 at 1,024 and 27.3 at
# 4,096 (pinned, 2-core VM, 2026-11-28; docs/architecture.md, *Batches in chunks*).
CPU_CHUNK = 256


def _chunk_size(chunk) -> int | None:
    if isinstance(chunk, str):
        if chunk != "auto":
            raise ValueError(f'`chunk` must be "auto", None or a positive integer, got {chunk!r}.')
        return CPU_CHUNK if jax.default_backend() == "cpu" else None
    if chunk is None:
        return None
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f'`chunk` must be "auto", None or a positive integer, got {chunk!r}.')
    return int(chunk)


def batch_mesh(devices=None) -> Mesh:
    """A 1-D mesh named ``"batch"`` over ``devices`` (default: ``jax.devices()``, all hosts)."""
    devices = jax.devices() if devices is None else list(devices)
    if not devices:
        raise ValueError("`devices` must contain at least one device, got an empty sequence.")
    return Mesh(np.asarray(devices), (AXIS,))


def _batch_size(tree, name: str) -> int | None:
    leaves = [x for x in jax.tree.leaves(eqx.filter(tree, eqx.is_array)) if True]
    if not leaves:
        raise ValueError(f"`{name}` is marked as batched but holds no arrays.")
    sizes = {x.shape[0] if x.ndim else None for x in leaves}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(f"every array leaf of the batched `{name}` must have the same leading batch size, got "
                         f"leading sizes {sorted(str(s) for s in sizes)}.")
    return sizes.pop()


def _pad(tree, size: int, target: int):
    """Repeat the first element so that the batch divides the number of devices (trimmed after)."""
    if target == size:
        return tree
    return jax.tree.map(lambda x: jnp.concatenate([x, jnp.repeat(x[:1], target - size, axis=0)]), tree)


def _place(x, sharding: NamedSharding):
    if jax.process_count() == 1 or (isinstance(x, jax.Array) and not x.is_fully_addressable):
        # one process, or already a global array (e.g. the final states of an earlier sharded batch,
        # which no process can read whole): let JAX move or reshard it
        return jax.device_put(x, sharding)
    host = np.asarray(x)  # every process holds the full batch; each keeps its addressable slices
    return jax.make_array_from_callback(host.shape, sharding, lambda idx: host[idx])


def batch_simulate(
    chain: Chain, q0, qd0, t1: float, *, control: Any = None, batch_chain: bool = False,
    batch_control: bool = False, sharded: bool = True, mesh: Mesh | None = None, chunk: int | str | None = "auto",
    **simulate_kwargs,
) -> Trajectory:
    """Simulate a batch of rollouts: initial states, inputs and/or model parameters.

    ``q0``/``qd0`` of shape ``(B, nq)`` are batched (``(nq,)`` is shared by all rollouts); a chain
    built with batched parameters (e.g. ``eqx.filter_vmap(build)(params)``, every array leaf with
    a leading axis ``B``) with ``batch_chain=True``; a control (an equinox Module holding arrays,
    e.g. feedback gains or input sequences, every array leaf batched) with ``batch_control=True``.

    With ``sharded=True`` (default) the batch is split over the mesh's devices (padding to a
    multiple of the device count by repeating the first rollout, trimmed again on return) and the
    returned arrays stay sharded along the batch axis (``traj.q.sharding``) when ``B`` is a
    multiple of the device count (a trimmed batch is no longer evenly shardable); on several hosts the
    inputs must be the same global batch on every process (host arrays, or global arrays such as an
    earlier batch's final states) and the outputs are global arrays (gather them with
    ``jax.experimental.multihost_utils.process_allgather``). ``sharded=False`` is the plain ``vmap``
    on the default device.

    Arguments:
        chain, q0, qd0, t1, control: as in :func:`kane_jax.simulate`, with the batching above.
        batch_chain, batch_control: whether ``chain`` / ``control`` carry a leading batch axis.
        sharded: split the batch over devices (``mesh``, default :func:`batch_mesh`).
        mesh: a 1-D mesh whose single axis is named ``"batch"``.
        chunk: rollouts integrated together per device: a device's share of the batch runs as
            ``lax.map`` over chunks of this many ``vmap``ped rollouts (the same trajectories).
            ``"auto"`` (default): :data:`CPU_CHUNK` on a CPU, the whole share on an accelerator;
            ``None``: the whole share in one ``vmap``.
        **simulate_kwargs: forwarded to :func:`kane_jax.simulate` (``saveat``, ``solver``,
            ``rtol``, ``atol``, ``dt0``, ``adaptive``, ``max_steps``, ``throw``, …).

    Returns:
        :class:`~kane_jax.simulation.Trajectory` whose arrays have a leading batch axis ``B``.

    Raises:
        ValueError: nothing batched, inconsistent batch sizes, wrong state shapes, a bad mesh, a
            ``chunk`` that is not ``"auto"``, ``None`` or a positive integer.
    """
    q0 = jnp.asarray(q0)
    qd0 = jnp.asarray(qd0)
    for x, name in ((q0, "q0"), (qd0, "qd0")):
        if x.ndim not in (1, 2) or x.shape[-1] != chain.nq:
            raise ValueError(f"`{name}` must have shape (nq,) or (B, nq) with nq = {chain.nq}, got {x.shape}.")
    args = {"chain": chain, "q0": q0, "qd0": qd0, "control": control}
    batched = {"chain": batch_chain, "q0": q0.ndim == 2, "qd0": qd0.ndim == 2, "control": batch_control}
    if batch_control and control is None:
        raise ValueError("`batch_control=True` needs a `control` holding batched arrays, got None.")
    sizes = {k: _batch_size(v, k) for k, v in args.items() if batched[k]}
    if not sizes:
        raise ValueError("nothing to batch: pass q0/qd0 of shape (B, nq), or batch_chain/batch_control=True.")
    if len(set(sizes.values())) != 1:
        raise ValueError(f"batched arguments must share one batch size, got {sizes}.")
    size = next(iter(sizes.values()))
    chunk = _chunk_size(chunk)
    if not sharded:
        return _run(args, batched, None, t1, simulate_kwargs, chunk)
    mesh = batch_mesh() if mesh is None else mesh
    if mesh.axis_names != (AXIS,):
        raise ValueError(f"`mesh` must be 1-D with axis name {AXIS!r}, got axis names {mesh.axis_names}.")
    n_dev = mesh.devices.size
    target = -(-size // n_dev) * n_dev
    dyn, static = eqx.partition(args, eqx.is_array)
    dyn = {k: (_pad(v, size, target) if batched[k] else v) for k, v in dyn.items()}
    dyn = {k: jax.tree.map(lambda x, b=batched[k]: _place(x, NamedSharding(mesh, P(AXIS) if b else P())), v)
           for k, v in dyn.items()}
    out = _run(eqx.combine(dyn, static), batched, mesh, t1, simulate_kwargs, chunk)
    if target != size:
        out = jax.tree.map(lambda x: x[:size] if eqx.is_array(x) else x, out)
    return out


def _rollouts(args, batched, t1, kwargs, chunk):
    def one(a):
        return simulate(a["chain"], a["q0"], a["qd0"], t1, control=a["control"], **kwargs)

    in_axes = {k: (0 if batched[k] else None) for k in args}
    size = next(_batch_size(v, k) for k, v in args.items() if batched[k])
    if chunk is None or size <= chunk:
        return eqx.filter_vmap(one, in_axes=(in_axes,))(args)
    # ``lax.map`` over chunks of ``chunk`` rollouts, each chunk a ``vmap`` (the remainder one more):
    # the same rollouts, with a chunk's working set in the caches (see :data:`CPU_CHUNK`)
    dyn, static = eqx.partition({k: v for k, v in args.items() if batched[k]}, eqx.is_array)
    box = {}

    def single(d):
        a = dict(args)
        a.update(eqx.combine(d, static))
        out, box["static"] = eqx.partition(one(a), eqx.is_array)
        return out

    out = map_in_chunks(jax.vmap(single), dyn, size, chunk)
    return eqx.combine(out, box["static"])


def _run(args, batched, mesh, t1, kwargs, chunk):
    if mesh is None:
        return _rollouts(args, batched, t1, kwargs, chunk)
    dyn, static = eqx.partition(args, eqx.is_array)
    specs = {k: jax.tree.map(lambda _, b=batched[k]: P(AXIS) if b else P(), v) for k, v in dyn.items()}
    box = {}

    def local(d):
        dyn_out, box["static"] = eqx.partition(_rollouts(eqx.combine(d, static), batched, t1, kwargs, chunk),
                                               eqx.is_array)
        return dyn_out

    out = jax.shard_map(local, mesh=mesh, in_specs=(specs,), out_specs=P(AXIS), check_vma=False)(dyn)
    return eqx.combine(out, box["static"])


# a law's own copy of the chain is the chain, merged also in the solver's loop (kane_jax/_shared_jit.py)
_run = shared_leaves_jit(_run, merge_in_loops=lambda args, *_: shared_arrays(args["chain"], args["control"]))
