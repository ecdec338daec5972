"""A/B on one CPU: ``batch_simulate`` of a large batch as one ``vmap`` (``chunk=None``) and in chunks of
``CPU_CHUNK`` rollouts (``chunk="auto"``), with SoRoMoX's ``vmap``ped Tsit5 on the same robot as the peer.

Run: ``python benchmarks/ab_batch_chunks.py [--quick] [--out FILE]`` (needs soromox). The PCS arms of
``bench_soft_vs_soromox.py`` (one segment with six strains, three bend-and-stretch segments), Tsit5 at a
fixed dt = 1e-4 from a bent state; compile apart from run, interleaved repeats in one process, the
largest difference of the final states between the two kane_jax programs (rounding only).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

ARGS = C.parse_args("ab_batch_chunks")
jax = C.setup_jax()
import bench_soft_vs_soromox as soft  # noqa: E402
import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import kane_jax as kj  # noqa: E402
from kane_jax.batch import CPU_CHUNK  # noqa: E402

DT = 1e-4
CASES = [("1 segment, six strains", 1, soft.SIX_STRAINS, [1024, 4096]),
         ("3 segments, bend + stretch", 3, dict(select=soft.SELECT, eta_s=soft.ETA_S), [4096])]
if ARGS.quick:
    CASES = [("1 segment, six strains", 1, soft.SIX_STRAINS, [600])]


def peer(robot, y0, steps):
    def one(y):
        term = diffrax.ODETerm(lambda t, y, a: robot.forward_dynamics(t, y))
        return diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, steps * DT, DT, y, saveat=diffrax.SaveAt(t1=True),
                                   stepsize_controller=diffrax.ConstantStepSize(), max_steps=steps + 1).ys
    return jax.jit(jax.vmap(one))


def main():
    rep = C.Report("ab_batch_chunks", ARGS, C.conditions("float64", ["soromox"]),
                   f"Tsit5, fixed dt = {DT:g} s; per rollout and step; `auto` = chunks of {CPU_CHUNK} on a CPU.")
    table = rep.add(C.Table("batch_simulate: one vmap against chunks", [
        "robot", "B", "steps", "first call (compile + run): one vmap / chunks / SoRoMoX", "one vmap", "chunks", "SoRoMoX",
        "chunks / one vmap", "chunks vs SoRoMoX", "max |Δq| between the programs"]))
    for name, nseg, model, batches in CASES:
        robot = soft.make_soromox(nseg, **model)
        chain = soft.make_kane(robot, nseg, **model)
        nq = chain.nq
        for b in batches:
            steps = 10 if ARGS.quick else 20
            rng = np.random.default_rng(b)
            q0 = jnp.asarray(rng.uniform(-1, 1, (b, nq)) * 0.1)
            qd0 = jnp.zeros((b, nq))
            kw = dict(solver="tsit5", adaptive=False, dt0=DT, sharded=False, saveat=2)
            runs = {ch: (lambda ch=ch: kj.batch_simulate(chain, q0, qd0, steps * DT, chunk=ch, **kw))
                    for ch in (None, "auto")}
            fsx = peer(robot, jnp.concatenate([q0, qd0], 1), steps)
            runs["soromox"] = lambda: fsx(jnp.concatenate([q0, qd0], 1))
            comp, outs, times = {}, {}, {k: [] for k in runs}
            for k, f in runs.items():
                t0 = time.perf_counter()
                outs[k] = jax.block_until_ready(f())
                comp[k] = time.perf_counter() - t0
            for _ in range(ARGS.repeats):
                for k, f in runs.items():
                    t0 = time.perf_counter()
                    jax.block_until_ready(f())
                    times[k].append((time.perf_counter() - t0) / b / steps)
            med = {k: float(np.median(v)) for k, v in times.items()}
            span = {k: f"{C.fmt_time(med[k])} [{C.fmt_time(min(v))}–{C.fmt_time(max(v))}]" for k, v in times.items()}
            diff = float(jnp.max(jnp.abs(outs[None].q - outs["auto"].q)))
            table.add(name, b, steps, " / ".join(f"{comp[k]:.1f} s" for k in runs), span[None], span["auto"],
                      span["soromox"], C.ratio(med[None], med["auto"]), C.ratio(med["soromox"], med["auto"]),
                      f"{diff:.1e}")
    print(table.markdown(), flush=True)
    rep.write()


if __name__ == "__main__":
    main()
