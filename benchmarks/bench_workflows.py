"""Workflow benchmarks: batch-rollout throughput and time per optimization / identification iteration.

Prints the conditions and markdown tables. Compile time is reported apart from steady state
(first call vs. median of repeats, each blocking on its outputs). Runs on whatever
``jax.devices()`` offers (CPU here; the same script on a GPU machine). The batch rollouts use
``kane_jax.batch.batch_simulate`` (sharded over all devices).

    python benchmarks/bench_workflows.py [--quick] [--sizes 1 16 128 1024]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(fn, repeats):
    t0 = time.perf_counter()
    out = fn()
    import jax

    jax.block_until_ready(out)
    first = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        runs.append(time.perf_counter() - t0)
    return first, statistics.median(runs) if runs else float("nan")


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sizes", type=int, nargs="*", default=None)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    import jax

    jax.config.update("jax_enable_x64", True)
    import equinox as eqx
    import jax.numpy as jnp
    import numpy as np
    import optax

    import kane_jax as kj
    from kane_jax.batch import batch_simulate
    from kane_jax.identification import Samples, id_residual_loss, simulation_loss
    from kane_jax.lie import make_pose
    from kane_jax.optimize import InputSequence, rollout, tip_reaching_cost

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import helpers.robots as wr

    sizes = args.sizes or ([1, 16] if args.quick else [1, 16, 128, 1024])
    print("## Conditions")
    print(f"- jax {jax.__version__}, devices {jax.devices()}, float64, {os.cpu_count()} CPU cores, "
          f"load average {os.getloadavg()[0]:.1f} (shared machine), {platform.processor() or platform.machine()}")
    print(f"- XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; median of {args.repeats} repeats after a first "
          "(compiling) call; each call blocks on its outputs\n")

    # --- batch rollouts ------------------------------------------------------------------------------
    link = kj.RigidBody(0.5, com=(0.15, 0.0, 0.0), inertia=np.diag([1e-4, 4e-3, 4e-3]),
                        tip=make_pose(jnp.eye(3), jnp.array([0.3, 0.0, 0.0])))
    soft = kj.PlanarConstantCurvature(length=0.3, radius=0.015, density=1100.0, youngs_modulus=1e6, damping=0.05,
                                      order=3, n_radial=0)
    chain = kj.Chain([(kj.Revolute((0, 0, 1), damping=0.05), link), (kj.Revolute((0, 0, 1), damping=0.05), soft)],
                     gravity=(0.0, -9.81, 0.0), actuators=[kj.JointMotor([0, 1])])
    t1, dt = 1.0, 2e-3
    print(f"## Batch rollouts: hybrid arm (revolute+rigid link+revolute+planar CC, nq=3), {t1} s, fixed-step "
          f"Tsit5 dt={dt} ({int(t1 / dt)} steps), passive")
    print("| batch | compile+first [s] | steady [s] | simulated s / wall s | ID evals / s (vmapped ID) |")
    print("|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for b in sizes:
        q0 = jnp.asarray(rng.uniform(-1, 1, (b, 3)))
        run = lambda: batch_simulate(chain, q0, jnp.zeros(3), t1, saveat=2, adaptive=False, dt0=dt,
                                     max_steps=int(t1 / dt) + 8).q
        first, steady = timed(run, args.repeats)
        idf = eqx.filter_jit(jax.vmap(lambda q: kj.inverse_dynamics(chain, q, q, q)))
        _, id_time = timed(lambda: idf(q0), args.repeats)
        print(f"| {b} | {first:.2f} | {steady:.4f} | {b * t1 / steady:.1f} | {b / id_time:.3g} |")

    # --- time per optimization iteration ----------------------------------------------------------------
    print("\n## Time per iteration (value + gradient, compiled once)")
    print("| workflow | problem | compile+first [s] | per iteration [ms] |")
    print("|---|---|---:|---:|")
    arm = wr.reach_arm()
    target = jnp.array([0.25, 0.1, 0.0])
    cost = tip_reaching_cost(arm, target)
    inputs = InputSequence(jnp.zeros((16, 1)), 1.0)
    vg = eqx.filter_jit(eqx.filter_value_and_grad(
        lambda i: cost(rollout(arm, jnp.zeros(2), jnp.zeros(2), i, substeps=8), i)))
    first, steady = timed(lambda: vg(inputs), args.repeats)
    print(f"| shooting (optax) | revolute + CC segment, 16 knots, 8 Tsit5 steps per knot (scan of 16 solves), RecursiveCheckpointAdjoint | "
          f"{first:.2f} | {1e3 * steady:.1f} |")

    # the ID transcription: whole solves (transcribe compiles its programs per call)
    from kane_jax.optimize import transcribe

    def term(q, v):
        return jnp.concatenate([(kj.tip_pose(arm, q)[:3, 3] - target)[:2], v])

    for knots in (20, 40):
        whole, _ = timed(lambda: transcribe(arm, jnp.zeros(2), jnp.zeros(2), 1.0, knots, terminal=term, outer=8,
                                            inner_steps=40).knots, 0)
        print(f"| direct transcription (ID, Levenberg–Marquardt), whole solve | same arm, K = {knots}, 8 outer × 40 "
              f"LM steps | {whole:.2f} | – |")

    true = wr.TRUE_PARAMS
    ch = wr.ident_robot(true)
    t = jnp.linspace(0.0, 2.0, 41)
    u = jnp.stack([0.6 * jnp.sin(3.1 * t) + 0.2, 0.2 * jnp.sin(4.7 * t + 1.0)], axis=1)
    seq = InputSequence(u, 2.0, kind="linear")
    from kane_jax.simulation import simulate

    traj = simulate(ch, jnp.zeros(3), jnp.zeros(3), 2.0, control=seq, saveat=101)
    qdd = jax.vmap(lambda q, qd, uu: kj.forward_dynamics(ch, q, qd, kj.actuation_force(ch, q, uu)))(
        traj.q, traj.qd, traj.u)
    data = Samples(traj.q, traj.qd, qdd, traj.u)
    loss = eqx.filter_jit(jax.value_and_grad(id_residual_loss(wr.ident_robot, data)))
    first, steady = timed(lambda: loss(true), args.repeats)
    print(f"| identification, ID-residual loss | 8 parameters, 101 samples, nq=3 | {first:.2f} | "
          f"{1e3 * steady:.1f} |")
    known = {k: true[k] for k in ("mass", "first_moment", "izz")}
    sl = simulation_loss(lambda p_: wr.ident_robot({**known, **p_}), traj.ts[:51], traj.q[:51], seq, dt=0.005)
    p0 = {k: true[k] for k in ("density", "youngs_modulus", "damping_modulus", "gain")}
    vg2 = eqx.filter_jit(jax.value_and_grad(sl))
    first, steady = timed(lambda: vg2(p0), args.repeats)
    print(f"| identification, simulation-error loss | 4 parameters, 1 s, 200 RK steps | {first:.2f} | "
          f"{1e3 * steady:.1f} |")
    del optax


if __name__ == "__main__":
    main()
