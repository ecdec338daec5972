"""Batched throughput on whatever accelerator JAX finds (GPU/TPU; on a CPU-only machine: the CPU).

Runs the batched parts of the suite — ID, mass matrix and FD of the 7-DoF iiwa-like arm, ID of an
8-segment planar PCC chain, FD of the 1- and 3-segment SoRoMoX-equivalent PCS arm (bend + stretch) and
of the 1-segment arm with all six strains — as
``jit(vmap(...))`` over growing batches and reports states per second, float64 at three batch sizes
and float32 at the largest. Peers on the same device in the same run: MJX (``mujoco-mjx``, MuJoCo in
JAX) for the arm, SoRoMoX for the PCS arm; each peer's output is compared with kane_jax's. Rows are
printed as they are measured, and a case that fails (memory, a peer's import) is reported in its row.

Run: ``python benchmarks/bench_gpu.py [--quick] [--batches 1024,16384] [--no-peers]`` (on a CPU the
large batches take a while).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as C  # noqa: E402

NAME = "bench_gpu"


def main(argv=None) -> int:
    def extra(p):
        p.add_argument("--batches", default=None, help="comma-separated batch sizes (default by device)")
        p.add_argument("--no-peers", action="store_true", help="kane_jax alone (no MJX / SoRoMoX rows)")
        p.add_argument("--cases", default=None, help="comma-separated substrings of the case labels to run")

    args = C.parse_args(NAME, argv, extra=extra)
    jax = C.setup_jax()
    import _robots
    import jax.numpy as jnp
    import numpy as np

    import kane_jax as kj

    quick = args.quick
    dev = jax.devices()[0]
    on_cpu = dev.platform == "cpu"
    # (dtype, batches) in the order measured: the float64 ends first (the library's default), float32 at
    # the largest batch, then the middle float64 size (rows stream out, so a cut-off run keeps the first)
    if quick:
        plan = [("float64", [64])]
    elif on_cpu:
        plan = [("float64", [1024, 8192]), ("float32", [8192])]
    else:
        plan = [("float64", [1024, 131072]), ("float32", [131072]), ("float64", [16384])]
    if args.batches:
        plan = [(dt, [int(b) for b in args.batches.split(",")]) for dt in dict.fromkeys(dt for dt, _ in plan)]
    dtypes = list(dict.fromkeys(dt for dt, _ in plan))
    tkw = dict(repeats=args.repeats, min_time=0.005 if quick else 0.05)
    name = C.results_name(NAME, args)
    rep = C.Report(name, args, C.conditions(dtypes, ["mujoco", "mujoco-mjx", "soromox"]),
                   f"Batched throughput on {dev.platform} ({dev.device_kind}); jit(vmap(f)) over B random states.")

    def cast(tree, dt):
        return jax.tree.map(lambda x: x.astype(dt) if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating)
                            else x, tree)

    def soromox_peer(robot, nq, backend):
        """SoRoMoX's FD of the identical PCS robot, the robot a jit argument (as in bench_soft_vs_soromox).

        ``backend``: SoRoMoX's execution backend, "jax" (its JAX path, the one used on a CPU) or "auto"
        (on a GPU, its Warp CUDA kernel; needs ``warp-lang``, float64 only).
        """
        def make(dt):
            f, p = C.jit_model(jax.vmap(lambda rb, q, v, u: rb.forward_dynamics(
                0.0, jnp.concatenate([q, v]), backend=backend)[nq:], in_axes=(None, 0, 0, 0)), robot)
            return f, cast(p, dt)
        return f"SoRoMoX ({'JAX' if backend == 'jax' else 'auto: Warp on GPU'})", make

    def mjx_peer(links, algo):
        """MJX (MuJoCo in JAX) on the same device: mj_forward's qacc / mj_inverse's qfrc_inverse / full M.

        The MJX model is closed over (MJX keeps its tree structure in NumPy fields), so for MJX the model
        is a compile-time constant while kane_jax's chain is a jit argument.
        """
        from mujoco import mjx

        mx0 = mjx.put_model(_robots.mujoco_model(links))

        def make(dt):
            mx = cast(mx0, dt)
            d0 = cast(mjx.make_data(mx), dt)

            def one(q, v, u):
                if algo == "ID":
                    return mjx.inverse(mx, d0.replace(qpos=q, qvel=v, qacc=u)).qfrc_inverse
                if algo == "M":
                    d = mjx.fwd_position(mx, d0.replace(qpos=q))
                    return mjx.full_m(mx, d)
                return mjx.forward(mx, d0.replace(qpos=q, qvel=v, qfrc_applied=u)).qacc

            return (lambda p, q, v, u: jax.vmap(one)(q, v, u)), None
        return "MJX", make

    links = _robots.iiwa_like()
    arm = _robots.kane_chain(links)
    cases = []  # (label, chain, kane_jax fn of (chain, q, v, u), peers: [(name, make(dtype) -> (f, params))])
    for algo, fn in (("ID", lambda ch, q, v, u: kj.inverse_dynamics(ch, q, v, u)),
                     ("M", lambda ch, q, v, u: kj.mass_matrix(ch, q)),
                     ("FD", lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, u))):
        try:
            peers = [] if args.no_peers else [mjx_peer(links, algo)]
        except Exception as err:  # noqa: BLE001 - mujoco / mujoco-mjx missing: kane_jax's rows alone
            print(f"MJX peer skipped: {type(err).__name__}: {err}")
            peers = []
        cases.append((f"7-DoF arm {algo}", arm, fn, peers))
    if quick:
        cases = cases[:1]
    else:
        cases.append(("planar PCC N=8 ID", _robots.pcc_chain(8),
                      lambda ch, q, v, u: kj.inverse_dynamics(ch, q, v, u), []))
        try:
            import bench_soft_vs_soromox as soft

            # bend + stretch (3 strains per segment) on 1 and 3 segments, all six strains on 1 segment
            for nseg, model, tag in ((1, {}, ""), (3, {}, ""), (1, soft.SIX_STRAINS, " six strains")):
                robot = soft.make_soromox(nseg, **model)
                kane = soft.make_kane(robot, nseg, **model)
                cases.append((f"PCS {nseg} segment{'s' if nseg > 1 else ''}{tag} FD", kane,
                              lambda ch, q, v, u: kj.forward_dynamics(ch, q, v, jnp.zeros_like(q)),
                              [] if args.no_peers else
                              [soromox_peer(robot, kane.nq, b) for b in ("jax", "auto")[:1 if on_cpu else 2]]))
        except Exception as err:  # noqa: BLE001 - soromox (for the identical robot) missing
            print(f"PCS cases skipped: {type(err).__name__}: {err}")
    cols = ["case", "dtype", "B", "compile", "throughput", "time per batch", "peer (same device)",
            "peer compile", "peer time per batch", "speed-up", "max |Δ| vs peer (rel)"]
    tab = C.Table(f"Throughput on {dev.platform} (states per second; time per batch)", cols)
    tab.notes.append("speed-up: the peer's time per batch / kane_jax's, both jit(vmap(.)) on this device in this "
                     "run; the arm's peer is MJX (mujoco-mjx: forward / inverse / fwd_position + full_m of "
                     "the identical MuJoCo model, contacts and constraints off), the PCS peer SoRoMoX's forward "
                     "dynamics of the identical robot (bench_soft_vs_soromox.py); outputs compared with "
                     "kane_jax's on the first 8 states of the batch.")

    if args.cases:
        cases = [c for c in cases if any(k.strip() in c[0] for k in args.cases.split(","))]
    for dt, batches in plan:
        for label, chain, fn, peers in cases:
            nq = chain.nq
            try:
                f, p = C.jit_model(jax.vmap(fn, in_axes=(None, 0, 0, 0)), chain)
                p = cast(p, dt)
                for b in batches:
                    rng = np.random.default_rng(b)
                    xs = [jax.device_put(jnp.asarray(rng.uniform(-0.5, 0.5, (b, nq)), dtype=dt), dev)
                          for _ in range(3)]
                    t = C.time_jit(f, p, *xs, **tkw)
                    row = [label, dt, b, C.fmt_time(t.compile), f"{b / t.median:.3g}/s", t.fmt()]
                    if not peers:
                        tab.add(*row, *["—"] * 5)
                        print(" | ".join(str(x) for x in tab.rows[-1]), flush=True)
                    for name_p, make in peers:
                        try:
                            fp, pp = make(dt)
                            tp = C.time_jit(fp, pp, *xs, **tkw)
                            err = C.fmt_err(t.fn(p, *xs)[:8], tp.fn(pp, *xs)[:8])
                            tab.add(*row, name_p, C.fmt_time(tp.compile), tp.fmt(), C.ratio(tp.median, t.median), err)
                        except Exception as e:  # noqa: BLE001 - report the peer's failure, keep kane_jax's row
                            print(f"{name_p} failed: {type(e).__name__}: {e}", flush=True)
                            tab.add(*row, f"{name_p} failed: {type(e).__name__}", "—", "—", "—", "—")
                        print(" | ".join(str(x) for x in tab.rows[-1]), flush=True)
            except Exception as e:  # noqa: BLE001 - one case failing (e.g. out of memory) keeps the others
                tab.add(label, dt, "—", f"failed: {type(e).__name__}: {str(e)[:120]}", *["—"] * 7)
                print(f"{label} {dt} failed: {type(e).__name__}: {e}", flush=True)
    rep.add(tab)
    rep.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
