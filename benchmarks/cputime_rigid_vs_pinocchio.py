"""Load-robust check of the rigid-arm targets: process CPU time per state, kane_jax vs Pinocchio.

On a shared machine wall-clock times swing with other jobs; the CPU time this process spends
(``time.process_time``, all its threads) is a steadier measure of the work done. Paired and
interleaved: iiwa-like arm, float64, B = 1024 states, kane_jax ``jit(vmap(...))`` ID and FD against
Pinocchio's C++ ``rneaInParallel``/``abaInParallel`` with one thread. 9 rounds; median and min.
FD with ``check=False``: the programs are called as ``Compiled`` objects, which JAX calls from
Python when they hold a host callback (the check's ``equinox.error_if``, ≈ 100 µs per call that
a ``jax.jit`` call does not pay; ``benchmarks/README.md``, *Method*).

Run: ``python benchmarks/cputime_rigid_vs_pinocchio.py``.
"""
import sys; import time; sys.path[:0] = [str(__import__('pathlib').Path(__file__).resolve().parent), str(__import__('pathlib').Path(__file__).resolve().parents[1])]
import jax; jax.config.update("jax_enable_x64", True)
import _robots
import _common as C
import numpy as np
import pinocchio as pin

import kane_jax as kj

links = _robots.iiwa_like(); ch = _robots.kane_chain(links); pm = _robots.pinocchio_model(links); pool = pin.ModelPool(pm, 1)
B = 1024; rng = np.random.default_rng(0); Q, V, A = rng.uniform(-1, 1, (3, B, 7))
fid, p = C.jit_model(jax.vmap(lambda c, q, v, a: kj.inverse_dynamics(c, q, v, a), in_axes=(None,0,0,0)), ch)
ffd, _ = C.jit_model(jax.vmap(lambda c, q, v, a: kj.forward_dynamics(c, q, v, a, check=False), in_axes=(None,0,0,0)), ch)
cid = jax.jit(fid).lower(p, Q, V, A).compile(); cfd = jax.jit(ffd).lower(p, Q, V, A).compile()
# the chain closed over (a compile-time constant: XLA folds every product of constant parameters;
# a new parameter value recompiles) -- the fastest call when the parameters do not change
kid = jax.jit(jax.vmap(lambda q, v, a: kj.inverse_dynamics(ch, q, v, a))).lower(Q, V, A).compile()
kfd = jax.jit(jax.vmap(lambda q, v, a: kj.forward_dynamics(ch, q, v, a, check=False))).lower(Q, V, A).compile()
QT, VT, AT = (np.asfortranarray(x.T) for x in (Q, V, A)); out = np.zeros((7, B), order="F")
fns = {"kane ID": lambda: cid(p, Q, V, A).block_until_ready(), "kane ID const": lambda: kid(Q, V, A).block_until_ready(),
       "pin rnea": lambda: pin.rneaInParallel(1, pool, QT, VT, AT, out),
       "kane FD": lambda: cfd(p, Q, V, A).block_until_ready(), "kane FD const": lambda: kfd(Q, V, A).block_until_ready(),
       "pin aba": lambda: pin.abaInParallel(1, pool, QT, VT, AT, out)}
assert np.allclose(np.asarray(kid(Q, V, A)), np.asarray(cid(p, Q, V, A)), rtol=1e-12, atol=1e-12)
assert np.allclose(np.asarray(kfd(Q, V, A)), np.asarray(cfd(p, Q, V, A)), rtol=1e-12, atol=1e-10)
res = {k: [] for k in fns}
for f in fns.values(): f(); f()
for _r in range(9):
    for k, f in fns.items():
        n = 20 if "kane" in k else 100
        c0 = time.process_time(); w0 = time.perf_counter()
        for _ in range(n): f()
        res[k].append(((time.process_time() - c0) / n / B, (time.perf_counter() - w0) / n / B))
for k, v in res.items():
    c = np.array(v)
    print(f"{k:13s} cpu/state median {np.median(c[:,0])*1e6:.3f} min {c[:,0].min()*1e6:.3f} us | wall median {np.median(c[:,1])*1e6:.3f} min {c[:,1].min()*1e6:.3f} us")
import os; print("load", os.getloadavg())
