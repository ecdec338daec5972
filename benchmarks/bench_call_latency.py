"""One call of the rigid-arm dynamics from Python: what the dispatch costs, and the fastest way to call.

The 7-DoF iiwa-like arm, one state per call, float64, every call blocked on its output (a control
loop needs the answer before the next call). Variants, timed interleaved in one run so that the
machine's drift hits them alike:

- ``filter_jit`` — the entry points as they were before ``kane_jax._dispatch``: ``equinox.filter_jit``
  of the same function (for FD with the non-finite check ``equinox.error_if`` in the program);
- ``public`` — ``kj.inverse_dynamics(chain, q, qd, qdd)`` / ``kj.forward_dynamics(...)`` as a
  user calls them, the chain an argument (``entry_jit``; FD checks finiteness on the host);
- ``jit closure`` — ``jax.jit(lambda q, qd, x: kj.forward_dynamics(chain, q, qd, x, check=False))``:
  the chain's arrays baked into the program (recompiles when a parameter changes);
- ``AOT`` — ``jax.jit(f).lower(params, …).compile()`` with the chain's arrays as arguments (what
  ``bench_rigid_vs_pinocchio`` times as "per call");
- Pinocchio ``rnea``/``aba`` through its Python bindings (C++, ≈ 1 µs of which is the binding).

Each kane_jax variant is timed twice: with JAX's default asynchronous CPU dispatch (the program
runs on a worker thread; the caller waits for it) and with ``jax_cpu_enable_async_dispatch`` off
(the program runs on the calling thread), a setting a control loop may choose. JAX reads that
option once, when it creates the CPU client, so each mode runs in a child process of its own that
sets it before its first computation (before 2026-11-24 this script toggled it between variants
in one process, where it had no effect: its "synchronous" rows were asynchronous).

Run: ``python benchmarks/bench_call_latency.py [--quick]``.
Target (issue 16): one jitted ID call ≤ 20 µs, one jitted FD call ≤ 30 µs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as C  # noqa: E402

NAME = "bench_call_latency"
_RESULT = "BENCH_CALL_LATENCY_RESULT "


def _measure(args, sync: bool) -> dict:
    """Per-call times of every variant (and Pinocchio) in this process, dispatch mode ``sync``."""
    jax = C.setup_jax()
    # read once, when JAX creates its CPU client: set before the first computation or it is ignored
    jax.config.update("jax_cpu_enable_async_dispatch", not sync)
    import _robots
    import equinox as eqx
    import jax.numpy as jnp
    import numpy as np

    import kane_jax as kj
    from kane_jax.algorithms import forward_dynamics as fd_module

    try:
        import pinocchio as pin
    except ImportError:
        pin = None

    links = _robots.ARMS["iiwa-like"]()
    chain = _robots.kane_chain(links)
    rng = np.random.default_rng(7)
    q, v, a, u = (jnp.asarray(rng.uniform(-1.0, 1.0, chain.nq)) for _ in range(4))
    params, static = eqx.partition(chain, eqx.is_array)

    id_raw = kj.inverse_dynamics.__wrapped__
    fd_raw = fd_module._forward_dynamics.__wrapped__

    def fd_checked(ch, q, v, u):
        qdd = fd_raw(ch, q, v, u, None, None, None)
        return eqx.error_if(qdd, ~jnp.all(jnp.isfinite(qdd)), "non-finite accelerations")

    def aot(fn):
        compiled = jax.jit(lambda p, *x: fn(eqx.combine(p, static), *x)).lower(params, q, v, a).compile()
        return lambda *x: compiled(params, *x)

    variants = {
        "ID": {
            "filter_jit (before)": (lambda f: lambda *x: f(chain, *x))(eqx.filter_jit(id_raw)),
            "public (entry_jit)": lambda *x: kj.inverse_dynamics(chain, *x),
            "jit closure": jax.jit(lambda *x: kj.inverse_dynamics(chain, *x)),
            "AOT, chain arrays as arguments": aot(kj.inverse_dynamics),
        },
        "FD": {
            "filter_jit + error_if (before)": (lambda f: lambda *x: f(chain, *x))(eqx.filter_jit(fd_checked)),
            "public (entry_jit, host check)": lambda *x: kj.forward_dynamics(chain, *x),
            "jit closure, check=False": jax.jit(lambda *x: kj.forward_dynamics(chain, *x, check=False)),
            "AOT, chain arrays as arguments, check=False":
                aot(lambda ch, *x: kj.forward_dynamics(ch, *x, check=False)),
        },
    }
    inputs = {"ID": (q, v, a), "FD": (q, v, u)}
    peers = {}
    if pin is not None:
        pm = _robots.pinocchio_model(links)
        pd = pm.createData()
        qn, vn, an, un = (np.asarray(x) for x in (q, v, a, u))
        peers = {"ID": ("Pinocchio rnea", lambda: pin.rnea(pm, pd, qn, vn, an)),
                 "FD": ("Pinocchio aba", lambda: pin.aba(pm, pd, qn, vn, un))}
        for algo, call in (("ID", variants["ID"]["public (entry_jit)"]), ("FD", variants["FD"]["jit closure, check=False"])):
            ref = peers[algo][1]()
            got = np.asarray(call(*inputs[algo]))
            assert np.allclose(got, ref, rtol=1e-10, atol=1e-10), f"{algo} disagrees with Pinocchio"

    number = 200 if args.quick else 2000
    out = {}
    for algo in ("ID", "FD"):
        x = inputs[algo]
        runners = {name: (lambda fn: lambda: jax.block_until_ready(fn(*x)))(fn) for name, fn in variants[algo].items()}
        if algo in peers:
            runners[peers[algo][0]] = peers[algo][1]
        per = {name: [] for name in runners}
        for _ in range(args.repeats):
            for name, run in runners.items():  # interleaved: the machine's drift hits all alike
                run()  # compile / warm up
                t0 = time.perf_counter()
                for _ in range(number):
                    run()
                per[name].append((time.perf_counter() - t0) / number)
        out[algo] = {"times": per, "peer": peers[algo][0] if algo in peers else None, "number": number}
    return out


def main(argv=None) -> int:
    args = C.parse_args(NAME, argv, extra=lambda p: p.add_argument(
        "--child", choices=["async", "sync"], default=None, help=argparse.SUPPRESS))
    if args.child is not None:  # one dispatch mode, in a process of its own
        print(_RESULT + json.dumps(_measure(args, args.child == "sync")))
        return 0
    results = {}
    for mode in ("async", "sync"):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode, "--repeats", str(args.repeats)]
        cmd += ["--quick"] if args.quick else []
        cmd += ["--no-fusion-emitters"] if args.no_fusion_emitters else []
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_RESULT)]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"the {mode} measurement failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        results[mode] = json.loads(lines[-1][len(_RESULT):])

    pin_name = "pin" if results["async"]["ID"]["peer"] else None
    rep = C.Report(NAME, args, C.conditions("float64", [pin_name] if pin_name else []),
                   "iiwa-like arm, one state per call, each call blocked on its output. Each dispatch mode runs in a "
                   "process of its own (JAX reads `jax_cpu_enable_async_dispatch` once, when it creates the CPU "
                   "client), asynchronous first; within a process the variants are timed interleaved (round-robin "
                   "over repeats). Speed-up: Pinocchio time in the same process / variant time.")
    for algo in ("ID", "FD"):
        table = C.Table(f"{algo}: one call", ["variant", "time per call", "speed-up vs Pinocchio"])
        for mode in ("async", "sync"):
            res = results[mode][algo]
            per, peer = res["times"], res["peer"]
            pin_med = statistics.median(per[peer]) if peer else float("nan")
            for name, ts in per.items():
                t = C.Timing(statistics.median(ts), min(ts), max(ts), res["number"])
                label = name if mode == "async" else f"{name}, synchronous dispatch"
                table.add(label, t.fmt(), C.ratio(pin_med, t.median) if peer else "n/a")
        table.notes.append("synchronous dispatch: jax.config.update('jax_cpu_enable_async_dispatch', False) before "
                           "the first JAX computation of the process, set by the user (kane_jax never changes JAX's "
                           "configuration): the CPU runs each program on the calling thread instead of handing it "
                           "to a worker thread and waiting for it. Set later, the option is silently ignored.")
        rep.add(table)
    rep.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
