"""Per-call time of ID, mass matrix and FD for the bodies whose cross-sections deform.

Models: variable-radius PCC (paper ``000_…`` Sim. 1, with its strain energy and Kelvin–Voigt
damping), an LVP body (paper ``003_…``: stretch + two bends + twist + two shears, incompressible
Neo-Hookean), and the planar CC of the core as a peer. Each body sits on a revolute joint.

Method: ``equinox.filter_jit`` of each function; compile time measured apart
(``lower(...).compile()``); warm-up call; per call time = median over ``--repeats`` repeats of the
mean of ``--number`` back-to-back calls, each blocking on the outputs (``block_until_ready``).
float64, CPU, single state (no batch). Run: ``python benchmarks/bench_deforming_sections.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # run from a checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _robots

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import kane_jax as kj  # noqa: E402


def _models():
    from _robots import soft_bodies

    bodies = soft_bodies(kj)
    return [("PlanarConstantCurvature (peer)", bodies["PlanarConstantCurvature (± elongation)"]()),
            ("VariableRadiusPCC", bodies["VariableRadiusPCC"]()),
            ("LVPBody (6 primitives)", bodies["LVPBody (6 primitives, Neo-Hookean)"]())]


def _time(fn, args, repeats, number):
    jax.block_until_ready(fn(*args))
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            jax.block_until_ready(fn(*args))
        runs.append((time.perf_counter() - t0) / number)
    return statistics.median(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--number", type=int, default=20)
    args = parser.parse_args()
    print(f"# kane_jax soft bodies (part B): float64, {jax.devices()[0].platform.upper()}, single state, "
          f"jax {jax.__version__}, {platform.processor() or platform.machine()}")
    print(f"# median of {args.repeats} repeats x {args.number} calls, blocking on outputs; compile time apart")
    print("| body | nq (body) | quadrature nodes | ID [µs] | M [µs] | FD [µs] | compile ID / M / FD [s] |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(0)
    for name, body in _models():
        chain = kj.Chain([(kj.Revolute((0, 1, 0)), body)])
        n = chain.nq
        q = jnp.asarray(rng.normal(size=n) * 0.1)
        qd, qdd = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n))
        fns = [(eqx.filter_jit(kj.inverse_dynamics), (chain, q, qd, qdd)),
               (eqx.filter_jit(kj.mass_matrix), (chain, q)),
               (eqx.filter_jit(kj.forward_dynamics), (chain, q, qd, qdd))]
        times, compiles = [], []
        for fn, a in fns:
            t0 = time.perf_counter()
            fn.lower(*a).compile()
            compiles.append(time.perf_counter() - t0)
            times.append(_time(fn, a, args.repeats, args.number) * 1e6)
        nodes = body.points.shape[0]
        extra = f" (+{body.chamber_points.shape[0]} per chamber)" if hasattr(body, "chamber_points") else ""
        print(f"| {name} | {body.nq} | {nodes}{extra} | {times[0]:.0f} | {times[1]:.0f} | {times[2]:.0f} | "
              f"{compiles[0]:.1f} / {compiles[1]:.1f} / {compiles[2]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
