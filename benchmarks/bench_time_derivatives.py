"""Benchmark: second-order inverse dynamics (τ, τ̇, τ̈) of the iiwa-like arm and the VSA inverse
dynamics of the 3-DoF robot of ``001_…``, on CPU, float64.

Per-call time of one jitted call (warm, median of repeats, ``block_until_ready`` on the outputs;
compile time reported separately), the in-jit cost per evaluation (many evaluations inside one
jitted ``lax.scan``/``fori_loop``, so dispatch is amortized), and batched throughput for 1024 states
(``vmap``). Paper references: 1.6 ms per second-order ID for the MATLAB closed form of ``002_…``
§6.2; 10–100 µs per iteration for the generated C of the VSA-NEA (``001_…`` §V).

Run: ``python benchmarks/bench_time_derivatives.py`` (optionally with
``XLA_FLAGS=--xla_cpu_use_fusion_emitters=false``, see DESIGN §3.5).
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import kane_jax as kj  # noqa: E402
from kane_jax.compliant import vsa_inverse_dynamics  # noqa: E402
from kane_jax.models import iiwa_like, vsa_3dof  # noqa: E402
from kane_jax.scenarios.vsa_3dof import references  # noqa: E402


def timeit(fn, *args, repeats=30, inner=1):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    compile_s = time.perf_counter() - start
    for _ in range(3):
        jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append((time.perf_counter() - t) / inner)
    return statistics.median(times), compile_s


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    print(f"jax {jax.__version__}, backend {jax.default_backend()}, CPU: {cpu_name()} ({os.cpu_count()} cores), "
          f"dtype float64, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}, load avg {os.getloadavg()[0]:.1f}")
    rows = []
    rng = np.random.default_rng(0)

    # --- iiwa-like: second-order ID ---
    chain = iiwa_like()
    d = jnp.asarray(rng.uniform(-1, 1, (5, 7)))
    id2 = eqx.filter_jit(lambda c, x: kj.inverse_dynamics_derivatives(c, x, order=2))
    t, c = timeit(id2, chain, d)
    rows.append(("iiwa-like 2nd-order ID (τ, τ̇, τ̈), one jitted call", t, c, 1.6e-3, "MATLAB closed form [002]"))
    n_in = 256

    @eqx.filter_jit
    def id2_loop(c, x):
        def body(i, acc):
            out = kj.inverse_dynamics_derivatives(c, x + 1e-9 * i, order=2)
            return acc + out[2]
        return jax.lax.fori_loop(0, n_in, body, jnp.zeros(7))

    t, c = timeit(id2_loop, chain, d, repeats=10, inner=n_in)
    rows.append(("iiwa-like 2nd-order ID, in-jit per evaluation", t, c, 1.6e-3, "MATLAB closed form [002]"))
    batch = jnp.asarray(rng.uniform(-1, 1, (1024, 5, 7)))
    id2_b = eqx.filter_jit(lambda c, x: jax.vmap(lambda y: kj.inverse_dynamics_derivatives(c, y, order=2))(x))
    t, c = timeit(id2_b, chain, batch, repeats=10, inner=1024)
    rows.append(("iiwa-like 2nd-order ID, vmap 1024 states, per state", t, c, 1.6e-3, "MATLAB closed form [002]"))
    id0 = eqx.filter_jit(lambda c, x: kj.inverse_dynamics(c, x[0], x[1], x[2]))
    t, c = timeit(id0, chain, d)
    rows.append(("iiwa-like plain ID (peer, same run), one jitted call", t, c, None, ""))

    # --- VSA 3-DoF: full VSA inverse dynamics at one instant (warm-started Newton) ---
    robot = vsa_3dof()
    ts = jnp.linspace(0.0, 4.0, 1024)
    q, sig = references(ts, 850.0, 1275.0)
    from kane_jax.compliant import vsa_inverse_dynamics_trajectory

    traj = vsa_inverse_dynamics_trajectory(robot, q, sig)
    phi_prev = jnp.roll(traj.phi, 1, axis=0)  # previous instant's solution as warm start
    vsa1 = eqx.filter_jit(lambda r, a, b, p: vsa_inverse_dynamics(r, a, b, phi_guess=p, check=False))
    t, c = timeit(vsa1, robot, q[500], sig[500], phi_prev[500])
    rows.append(("VSA-3DoF ID (τ1, τ2), one jitted call", t, c, 1e-4, "generated C, 10–100 µs [001]"))
    vsa_b = eqx.filter_jit(lambda r, a, b, p: jax.vmap(
        lambda x, y, z: vsa_inverse_dynamics(r, x, y, phi_guess=z, check=False).tau1)(a, b, p))
    t, c = timeit(vsa_b, robot, q, sig, phi_prev, repeats=10, inner=1024)
    rows.append(("VSA-3DoF ID, vmap 1024 instants, per instant", t, c, 1e-4, "generated C, 10–100 µs [001]"))
    from kane_jax.compliant.vsa import _trajectory

    t, c = timeit(_trajectory, robot, q, sig, traj.phi[0], repeats=10, inner=1024)
    rows.append(("VSA-3DoF ID, sequential scan over 1024 instants, per instant", t, c, 1e-4,
                 "generated C, 10–100 µs [001]"))

    print("\n| case | time | compile | paper | ratio paper/ours |\n|---|---|---|---|---|")
    for name, t, c, ref, ref_name in rows:
        ratio = f"{ref / t:.2g}× ({ref_name})" if ref else "—"
        paper = f"{ref * 1e6:.0f} µs" if ref else "—"
        print(f"| {name} | {t * 1e6:.1f} µs | {c:.1f} s | {paper} | {ratio} |")


if __name__ == "__main__":
    main()
