"""A/B on one device: FD's ``M⁻¹ rhs`` as the unrolled Cholesky (``UNROLLED_CHOLESKY = 12``) vs the
library's factorization (``jax.scipy.linalg.cho_factor``: LAPACK on a CPU, cuSOLVER on a GPU).

Run: ``python benchmarks/ab_cholesky.py 1024,16384 [pcs]`` (comma-separated batch sizes; ``pcs`` adds
the 3-segment PCS arm's FD, which needs soromox).

For each batch size, in one process, interleaved repeats: the 7-DoF arm's batched ID and mass matrix
(where FD's time goes besides the solve), its FD with each solve, and the solve alone on the FD's own
mass matrices; the outputs of the two FD variants are compared.

FD with ``check=False``: the variants are called as ``Compiled`` objects, which JAX calls from Python
when they hold a host callback (the check, ≈ 100 µs per call; ``benchmarks/README.md``, *Method*).
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax

jax.config.update("jax_enable_x64", True)
import _robots
import equinox as eqx
import jax.numpy as jnp
import numpy as np

import kane_jax as kj
import kane_jax.algorithms._cholesky as rec

arm = _robots.kane_chain(_robots.iiwa_like())
chains = {"arm": arm}
if "pcs" in sys.argv[2:]:
    import bench_soft_vs_soromox as soft

    chains["PCS3"] = soft.make_kane(soft.make_soromox(3), 3)


def timed(c, args):
    """Median, min and max over 7 repeats of the mean time of calls for ≥ 50 ms (outputs blocked on)."""
    out = []
    for _ in range(7):
        jax.block_until_ready(c(*args))
        n, t0 = 0, time.perf_counter()
        while True:
            jax.block_until_ready(c(*args))
            n += 1
            if time.perf_counter() - t0 > 0.05:
                break
        out.append((time.perf_counter() - t0) / n)
    return out


print(jax.devices()[0].device_kind, jax.__version__, flush=True)
for name, chain in chains.items():
    params, static = eqx.partition(chain, eqx.is_array)
    nq = chain.nq
    for b in [int(x) for x in sys.argv[1].split(",")]:
        rng = np.random.default_rng(b)
        xs = [jnp.asarray(rng.uniform(-0.5, 0.5, (b, nq))) for _ in range(3)]
        masses = jax.jit(jax.vmap(lambda p, q: kj.mass_matrix(eqx.combine(p, static), q),
                                  in_axes=(None, 0)))(params, xs[0])
        progs, outs = {}, {}
        variants = {"ID": (12, lambda ch, q, v, u: kj.inverse_dynamics(ch, q, v, u)),
                    "M": (12, lambda ch, q, v, u: kj.mass_matrix(ch, q)),
                    "FD unrolled": (12, lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, u, check=False)),
                    "FD cho_factor": (0, lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, u, check=False))}
        for label, (limit, fn) in variants.items():
            rec.UNROLLED_CHOLESKY = rec.ROLLED_CHOLESKY = limit
            jax.clear_caches()
            g = jax.vmap(lambda p, q, v, u: fn(eqx.combine(p, static), q, v, u), in_axes=(None, 0, 0, 0))
            t0 = time.perf_counter()
            progs[label] = (jax.jit(g).lower(params, *xs).compile(), (params, *xs))
            print(f"{name} B={b} {label} compile {time.perf_counter() - t0:.2f} s", flush=True)
            outs[label] = np.asarray(progs[label][0](params, *xs))
        for label, limit in (("solve unrolled", 12), ("solve cho_factor", 0)):
            rec.UNROLLED_CHOLESKY = rec.ROLLED_CHOLESKY = limit
            jax.clear_caches()
            progs[label] = (jax.jit(jax.vmap(rec.solve_mass)).lower(masses, xs[2]).compile(), (masses, xs[2]))
            outs[label] = np.asarray(progs[label][0](masses, xs[2]))
        rec.UNROLLED_CHOLESKY, rec.ROLLED_CHOLESKY = 12, 64
        for a, c in (("FD unrolled", "FD cho_factor"), ("solve unrolled", "solve cho_factor")):
            d = np.max(np.abs(outs[a] - outs[c])) / np.max(np.abs(outs[c]))
            print(f"{name} B={b} {a} vs {c}: rel diff {d:.1e}", flush=True)
        times = {k: [] for k in progs}
        for _ in range(3):  # interleaved rounds
            for k, (c, args) in progs.items():
                times[k] += timed(c, args)
        for k, ts in times.items():
            print(f"{name} B={b} {k}: {np.median(ts) * 1e6:.1f} us [{min(ts) * 1e6:.1f}-{max(ts) * 1e6:.1f}]",
                  flush=True)
