"""One process of the two-process batch in ``test_multihost.py`` (run as a script, not collected).

``python tests/helpers/multihost_worker.py PORT PROCESS_ID NUM_PROCESSES OUT.npz``: joins the JAX
distributed system whose coordinator listens on ``127.0.0.1:PORT`` (process 0 starts it), with
two CPU devices per process, runs :func:`batch` sharded over all processes' devices, continues it
from its final states (a global array no process can read whole), and writes the gathered
trajectories and the rows this process computed to ``OUT.npz``.
"""

from __future__ import annotations

import sys

import jax

# the batch shared by the workers and the single-process reference of the test
B, T_HALF, DT, N_SAVE = 8, 0.1, 0.005, 5


def batch():
    """``(chains, q0, qd0)``: 8 rollouts of a 2-link arm, batched states and first-link masses."""
    import equinox as eqx
    import jax.numpy as jnp
    import numpy as np

    import helpers.robots as wr

    rng = np.random.default_rng(7)
    q0 = jnp.asarray(rng.uniform(-1.0, 1.0, (B, 2)))
    qd0 = jnp.asarray(rng.uniform(-0.5, 0.5, (B, 2)))
    chains = eqx.filter_vmap(lambda m: wr.rigid_arm(2, masses=(m, 0.8)))(jnp.linspace(0.8, 1.6, B))
    return chains, q0, qd0


def rollouts(chains, q0, qd0, **kwargs):
    """Two back-to-back fixed-step halves (the second starts from the first's final states)."""
    from kane_jax.batch import batch_simulate

    opts = dict(batch_chain=True, solver="heun", dt0=DT, adaptive=False, saveat=N_SAVE, **kwargs)
    first = batch_simulate(chains, q0, qd0, T_HALF, **opts)
    second = batch_simulate(chains, first.q[:, -1], first.qd[:, -1], T_HALF, **opts)
    return first, second


def main(port: str, process_id: str, num_processes: str, out: str) -> None:
    # worker-side configuration (never the library's): float64, gloo collectives between CPU
    # processes, two CPU devices per process
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_num_cpu_devices", 2)
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=int(num_processes),
                               process_id=int(process_id), initialization_timeout=60)
    import numpy as np
    from jax.experimental import multihost_utils

    first, second = rollouts(*batch())
    local_rows = sorted((s.index[0].start, s.index[0].stop) for s in second.q.addressable_shards)
    local_q = np.concatenate([np.asarray(s.data) for s in sorted(second.q.addressable_shards,
                                                                 key=lambda s: s.index[0].start)])
    gathered = {name: np.asarray(multihost_utils.process_allgather(x, tiled=True))
                for name, x in (("q1", first.q), ("qd1", first.qd), ("q2", second.q), ("qd2", second.qd))}
    np.savez(out, **gathered, local_rows=np.asarray(local_rows), local_q=local_q,
             n_devices=len(jax.devices()), n_local=len(jax.local_devices()),
             fully_addressable=second.q.is_fully_addressable)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:5])
