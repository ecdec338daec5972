"""One PCS forward dynamics inside a jitted loop: kane_jax against SoRoMoX, the identical robot, same process.

What a simulation or an optimizer pays per vector-field evaluation, without Python dispatch: a
``jax.lax.fori_loop`` of 1,000 explicit updates ``y ← y + 10⁻⁹ f(y)``, one compiled call, blocked on,
per-FD time = call time / 1,000 (median and min–max of seven calls after a warm-up). Robots from
``bench_soft_vs_soromox`` (``make_soromox``, ``make_kane``: 1 and 3 segments, bending y/z +
elongation, SoRoMoX's Gauss nodes), state as there. Pin the process to one CPU for stable numbers
on a small shared machine (``taskset -c 0``): unpinned, per-call times there are bimodal across
processes (``docs/architecture.md``).

Run: ``taskset -c 0 python benchmarks/bench_soft_loop_vs_soromox.py [--six-strains]`` (``XLA_FLAGS`` as
you choose; ``--six-strains``: all six strains, ``bench_soft_vs_soromox.SIX_STRAINS``).
Target (issue 15): kane_jax ≥ 2× SoRoMoX per FD.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import bench_soft_vs_soromox as B

import kane_jax as kj

N_LOOP = 1000


def per_fd(vf, y0) -> tuple[float, float, float]:
    loop = jax.jit(lambda y: jax.lax.fori_loop(0, N_LOOP, lambda i, y: y + 1e-9 * vf(y), y))
    jax.block_until_ready(loop(y0))
    ts = []
    for _ in range(7):
        t = time.perf_counter(); jax.block_until_ready(loop(y0)); ts.append((time.perf_counter() - t) / N_LOOP * 1e6)
    return float(np.median(ts)), min(ts), max(ts)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    kw = B.SIX_STRAINS if "--six-strains" in argv else {}
    scale = [1.0, 3.0, 3.0, 0.05, 0.05, 0.05] if kw else [3.0, 3.0, 0.05]  # the states of bench_soft_vs_soromox
    model = "all six strains" if kw else "bending y/z + elongation"
    print(f"{model}; machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, affinity "
          f"{sorted(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}; jax {jax.__version__}, float64, "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")
    for nseg in (1, 3):
        robot = B.make_soromox(nseg, **kw)
        chain = B.make_kane(robot, nseg, **kw)
        nq = chain.nq
        rng = np.random.default_rng(nseg)
        y0 = jnp.asarray(np.concatenate([rng.uniform(-1, 1, nq) * np.tile(scale, nseg),
                                         rng.uniform(-1, 1, nq)]))

        def vf_kane(y, chain=chain, nq=nq):
            return jnp.concatenate([y[nq:], kj.forward_dynamics(chain, y[:nq], y[nq:], jnp.zeros(nq), check=False)])

        def vf_sx(y, robot=robot):
            return robot.forward_dynamics(0.0, y)

        agree = float(jnp.max(jnp.abs(vf_kane(y0) - vf_sx(y0))) / jnp.max(jnp.abs(vf_sx(y0))))
        k, s = per_fd(vf_kane, y0), per_fd(vf_sx, y0)
        print(f"{nseg} segment(s): kane_jax {k[0]:.2f} µs [{k[1]:.2f}–{k[2]:.2f}], SoRoMoX {s[0]:.2f} µs "
              f"[{s[1]:.2f}–{s[2]:.2f}] per FD: speed-up {s[0] / k[0]:.2f}×; agreement {agree:.1e} relative")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
