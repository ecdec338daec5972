"""A/B on one device: module recursions as lax.scan (UNROLL_MODULES = 0) vs unrolled at trace time.

Run: ``python benchmarks/ab_unroll_recursions.py 1024,16384 [pcs]`` (comma-separated batch sizes;
``pcs`` adds the 3-segment PCS arm's FD, which needs soromox).

The 7-DoF arm's batched ID and FD (jit(vmap), chain as argument), interleaved repeats in one process.

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
import kane_jax._modules as km

arm = _robots.kane_chain(_robots.iiwa_like())
fns = {"ID": lambda ch, q, v, u: kj.inverse_dynamics(ch, q, v, u),
       "FD": lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, u, check=False)}
chains = {"ID": arm, "FD": arm}
if "pcs" in sys.argv[2:]:  # also FD of the 3-segment SoRoMoX-equivalent PCS arm (needs soromox)
    import bench_soft_vs_soromox as soft

    chains["PCS3 FD"] = soft.make_kane(soft.make_soromox(3), 3)
    fns["PCS3 FD"] = lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, jnp.zeros_like(q), check=False)
print(jax.devices()[0].device_kind, jax.__version__, flush=True)
for algo, fn in fns.items():
    params, static = eqx.partition(chains[algo], eqx.is_array)
    nq = chains[algo].nq
    for b in [int(x) for x in sys.argv[1].split(",")]:
        rng = np.random.default_rng(b)
        xs = [jnp.asarray(rng.uniform(-0.5, 0.5, (b, nq))) for _ in range(3)]
        comp, outs = {}, {}
        for unroll in (0, 16):
            km.UNROLL_MODULES = km.UNROLL_MODULES_ACCELERATOR = unroll
            jax.clear_caches()  # nested jitted kernels would otherwise reuse the other variant's trace
            g = jax.vmap(lambda p, q, v, u: fn(eqx.combine(p, static), q, v, u), in_axes=(None, 0, 0, 0))
            t0 = time.perf_counter()
            comp[unroll] = jax.jit(g).lower(params, *xs).compile()
            tc = time.perf_counter() - t0
            outs[unroll] = np.asarray(comp[unroll](params, *xs))
            print(f"{algo} B={b} unroll={unroll} compile {tc:.2f} s", flush=True)
        km.UNROLL_MODULES = km.UNROLL_MODULES_ACCELERATOR = 0
        diff = np.max(np.abs(outs[0] - outs[16])) / np.max(np.abs(outs[0]))
        times = {0: [], 16: []}
        for _ in range(7):
            for unroll in (0, 16):
                c = comp[unroll]
                jax.block_until_ready(c(params, *xs))
                n = 0
                t0 = time.perf_counter()
                while True:
                    jax.block_until_ready(c(params, *xs))
                    n += 1
                    if time.perf_counter() - t0 > 0.05:
                        break
                times[unroll].append((time.perf_counter() - t0) / n)
        m0, m1 = np.median(times[0]), np.median(times[16])
        print(f"{algo} B={b}: scan {m0*1e6:.1f} us [{min(times[0])*1e6:.1f}-{max(times[0])*1e6:.1f}], "
              f"unrolled {m1*1e6:.1f} us [{min(times[16])*1e6:.1f}-{max(times[16])*1e6:.1f}], "
              f"scan/unrolled {m0/m1:.2f}x, rel diff {diff:.1e}", flush=True)
