"""Batched throughput on whatever accelerator JAX finds (GPU/TPU; on a CPU-only machine: the CPU).

Runs the batched parts of the suite — ID, mass matrix and FD of the 7-DoF iiwa-like arm, FD of the
3-segment SoRoMoX-equivalent PCS arm, ID of an 8-segment planar PCC chain — as ``jit(vmap(...))``
over growing batches and reports states per second, in float64 and float32. No peer: the rigid
and soft peers' CPU numbers are in the other tables.

Run: ``python benchmarks/bench_gpu.py [--quick]`` (on a CPU the large batches take a while).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as C  # noqa: E402

NAME = "bench_gpu"


def main(argv=None) -> int:
    args = C.parse_args(NAME, argv)
    jax = C.setup_jax()
    import _robots
    import jax.numpy as jnp
    import numpy as np

    import kane_jax as kj

    quick = args.quick
    dev = jax.devices()[0]
    on_cpu = dev.platform == "cpu"
    if quick:
        batches = [64]
    elif on_cpu:
        batches = [1024, 8192]
    else:
        batches = [1024, 16384, 131072]
    dtypes = ["float64"] if quick else ["float64", "float32"]
    tkw = dict(repeats=args.repeats, min_time=0.005 if quick else 0.05)
    name = NAME + ("_no_fusion_emitters" if args.no_fusion_emitters else "")
    rep = C.Report(name, args, C.conditions(dtypes),
                   f"Batched throughput on {dev.platform} ({dev.device_kind}); jit(vmap(f)) over B random states.")

    cases = []
    arm = _robots.kane_chain(_robots.iiwa_like())
    cases += [("7-DoF arm ID", arm, lambda ch, q, v, u: kj.inverse_dynamics(ch, q, v, u)),
              ("7-DoF arm M", arm, lambda ch, q, v, u: kj.mass_matrix(ch, q)),
              ("7-DoF arm FD", arm, lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, u))]
    if quick:
        cases = cases[:1]
    else:
        cases.append(("planar PCC N=8 ID", _robots.pcc_chain(8), lambda ch, q, v, u: kj.inverse_dynamics(ch, q, v, u)))
        try:
            import bench_soft_vs_soromox as soft

            robot = soft.make_soromox(3)
            cases.append(("PCS 3 segments FD", soft.make_kane(robot, 3),
                          lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, jnp.zeros_like(q))))
        except Exception as err:  # noqa: BLE001 - soromox (for the identical robot) missing
            print(f"PCS case skipped: {type(err).__name__}: {err}")
    tab = C.Table(f"Throughput on {dev.platform} (states per second; time per batch)",
                  ["case", "dtype", "B", "compile", "throughput", "time per batch"])
    for label, chain, fn in cases:
        nq = chain.nq
        for dt in dtypes:
            f, p = C.jit_model(jax.vmap(fn, in_axes=(None, 0, 0, 0)), chain)
            if dt == "float32":
                p = jax.tree.map(lambda x: x.astype(jnp.float32), p)
            for b in batches:
                rng = np.random.default_rng(b)
                xs = [jax.device_put(jnp.asarray(rng.uniform(-0.5, 0.5, (b, nq)), dtype=dt), dev) for _ in range(3)]
                t = C.time_jit(f, p, *xs, **tkw)
                tab.add(label, dt, b, C.fmt_time(t.compile), f"{b / t.median:.3g}/s", t.fmt())
    rep.add(tab)
    rep.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
