"""Rigid 7-DoF arms: kane_jax against Pinocchio (C++) and MuJoCo, same arm, same run.

ID (kane_jax ``inverse_dynamics`` / Pinocchio ``rnea`` / MuJoCo ``mj_inverse``), mass matrix
(``mass_matrix`` / ``crba`` / ``mj_fwdPosition`` + ``mj_fullM``) and FD (``forward_dynamics`` /
``aba`` / ``mj_forward``), per call and batched (kane_jax: ``jit(vmap(...))`` over B states;
Pinocchio: its C++ batch ``rneaInParallel``/``abaInParallel`` with ONE thread, and a Python loop of
``crba`` (no batch CRBA exists); MuJoCo: a Python loop), float64 and float32 (kane_jax only; the
peers run in float64). Agreement of the three libraries is printed next to the times.

Run: ``python benchmarks/bench_rigid_vs_pinocchio.py [--quick] [--no-fusion-emitters]``.
Targets (issue 7, float64, same run): batched ID throughput ≥ Pinocchio single-thread; batched FD
≥ 0.5× Pinocchio ``aba``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as C  # noqa: E402

NAME = "bench_rigid_vs_pinocchio"


def main(argv=None) -> int:
    args = C.parse_args(NAME, argv)
    jax = C.setup_jax()
    import _robots
    import equinox as eqx
    import jax.numpy as jnp
    import numpy as np

    import kane_jax as kj

    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    try:
        import mujoco
    except ImportError:
        mujoco = None

    quick = args.quick
    arms = ["iiwa-like"] if quick else ["iiwa-like", "random"]
    dtypes = ["float64"] if quick else ["float64", "float32"]
    batches = [16] if quick else [1, 64, 1024, 8192]
    algos = ["ID"] if quick else ["ID", "M", "FD"]
    min_time = 0.005 if quick else 0.05
    tkw = dict(repeats=args.repeats, min_time=min_time)
    name = C.results_name(NAME, args)
    rep = C.Report(name, args, C.conditions(dtypes, ["pin", "mujoco"]),
                   "Same 7-DoF arm in kane_jax, Pinocchio (model built in code) and MuJoCo (MJCF). "
                   "Speed-up column: peer time / kane_jax time (> 1: kane_jax faster). Pinocchio and MuJoCo "
                   "per-call times include the Python call (~0.3–1 µs); the batched Pinocchio ID/FD use its "
                   "C++ batch functions with 1 thread (no Python per state).")

    def kj_fns(chain):
        return {
            "ID": lambda ch, q, v, a, u: kj.inverse_dynamics(ch, q, v, a),
            "M": lambda ch, q, v, a, u: kj.mass_matrix(ch, q),
            "FD": lambda ch, q, v, a, u: kj.forward_dynamics(ch, q, v, u),
        }

    for arm in arms:
        links = _robots.ARMS[arm]()
        chain64 = _robots.kane_chain(links)
        nq = chain64.nq
        rng = np.random.default_rng(7)
        bmax = max(batches)
        states = {k: rng.uniform(-1.0, 1.0, (bmax, nq)) for k in ("q", "v", "a", "u")}
        states["u"] = 5.0 * states["u"]

        pm = pd = mm = md = None
        if pin is not None:
            pm = _robots.pinocchio_model(links)
            pd = pm.createData()
        if mujoco is not None:
            mm = _robots.mujoco_model(links)
            md = mujoco.MjData(mm)

        def pin_call(algo, q, v, a, u):
            if algo == "ID":
                return pin.rnea(pm, pd, q, v, a)
            if algo == "M":
                m = pin.crba(pm, pd, q)
                return np.triu(m) + np.triu(m, 1).T
            return pin.aba(pm, pd, q, v, u)

        def mj_call(algo, q, v, a, u):
            md.qpos[:] = q
            md.qvel[:] = v
            if algo == "ID":
                md.qacc[:] = a
                mujoco.mj_inverse(mm, md)
                return md.qfrc_inverse.copy()
            if algo == "M":
                mujoco.mj_fwdPosition(mm, md)
                out = np.zeros((nq, nq))
                mujoco.mj_fullM(mm, md, out)
                return out
            md.qfrc_applied[:] = u
            mujoco.mj_forward(mm, md)
            return md.qacc.copy()

        # ---------------- agreement (float64 and float32 against Pinocchio/MuJoCo) -------------
        n_check = 8 if quick else 64
        agree = C.Table(f"{arm} arm: agreement over {n_check} random states (max |difference|, relative to max |ref|)",
                        ["quantity", "kane_jax f64 vs Pinocchio", "kane_jax f32 vs Pinocchio",
                         "MuJoCo vs Pinocchio"])
        fns = kj_fns(chain64)
        for algo in algos:
            ref = kj64 = kj32 = mjv = None
            sl = {k: states[k][:n_check] for k in states}
            f, p = C.jit_model(jax.vmap(fns[algo], in_axes=(None, 0, 0, 0, 0)), chain64)
            kj64 = np.asarray(jax.jit(f)(p, sl["q"], sl["v"], sl["a"], sl["u"]))
            if "float32" in dtypes:
                p32 = jax.tree.map(lambda x: x.astype(jnp.float32), p)
                kj32 = np.asarray(jax.jit(f)(p32, *(sl[k].astype(np.float32) for k in "qvau")))
            if pin is not None:
                ref = np.stack([pin_call(algo, *(sl[k][i] for k in "qvau")) for i in range(n_check)])
            if mujoco is not None:
                mjv = np.stack([mj_call(algo, *(sl[k][i] for k in "qvau")) for i in range(n_check)])
            agree.add(algo, C.fmt_err(kj64, ref) if ref is not None else "n/a",
                      C.fmt_err(kj32, ref) if (ref is not None and kj32 is not None) else "n/a",
                      C.fmt_err(mjv, ref) if (ref is not None and mjv is not None) else "n/a")
        rep.add(agree)

        # ---------------- per call (one state) ----------------
        per = C.Table(f"{arm} arm: one state per call",
                      ["algorithm", "dtype", "kane_jax compile", "kane_jax", "Pinocchio", "MuJoCo",
                       "speed-up vs Pinocchio", "speed-up vs MuJoCo"])
        s0 = {k: states[k][0] for k in states}
        peer_single = {}
        for algo in algos:
            tp = C.time_call(lambda algo=algo: pin_call(algo, *(s0[k] for k in "qvau")), block=False,
                             **tkw) if pin is not None else None
            tm = C.time_call(lambda algo=algo: mj_call(algo, *(s0[k] for k in "qvau")), block=False,
                             **tkw) if mujoco is not None else None
            peer_single[algo] = (tp, tm)
            for dt in dtypes:
                f, p = C.jit_model(fns[algo], chain64)
                if dt == "float32":
                    p = jax.tree.map(lambda x: x.astype(jnp.float32), p)
                xs = [jnp.asarray(s0[k], dtype=dt) for k in "qvau"]
                tk = C.time_jit(f, p, *xs, **tkw)
                per.add(algo, dt, C.fmt_time(tk.compile), tk.fmt(), tp.fmt() if tp else "n/a",
                        tm.fmt() if tm else "n/a", C.ratio(tp.median, tk.median) if tp else "n/a",
                        C.ratio(tm.median, tk.median) if tm else "n/a")
        rep.add(per)

        # ---------------- batched ----------------
        bat = C.Table(f"{arm} arm: batched throughput (states per second; time per batch in brackets)",
                      ["algorithm", "dtype", "B", "kane_jax compile", "kane_jax", "Pinocchio (C++ batch, 1 thread)"
                       if not quick else "Pinocchio", "MuJoCo (loop)", "kane_jax / Pinocchio", "kane_jax / MuJoCo"])
        if pin is not None:
            pool = pin.ModelPool(pm, 1)
        for algo in algos:
            for b in batches:
                sb = {k: np.ascontiguousarray(states[k][:b]) for k in states}
                tp = tm = None
                if pin is not None:
                    if algo in ("ID", "FD"):
                        qT, vT, aT, uT = (np.asfortranarray(sb[k].T) for k in "qvau")
                        outT = np.zeros((nq, b), order="F")
                        if algo == "ID":
                            call = lambda qT=qT, vT=vT, aT=aT, outT=outT: pin.rneaInParallel(1, pool, qT, vT, aT, outT)
                        else:
                            call = lambda qT=qT, vT=vT, uT=uT, outT=outT: pin.abaInParallel(1, pool, qT, vT, uT, outT)
                        call()
                        ref = (pin_call(algo, *(sb[k][b - 1] for k in "qvau")))
                        assert np.allclose(outT[:, b - 1], ref, atol=1e-9), "Pinocchio batch disagrees with its single call"
                    else:
                        call = lambda sb=sb, b=b: [pin_call("M", sb["q"][i], None, None, None) for i in range(b)]
                    tp = C.time_call(call, block=False, **tkw)
                if mujoco is not None:
                    tm = C.time_call(lambda sb=sb, b=b, algo=algo: [mj_call(algo, *(sb[k][i] for k in "qvau"))
                                                                    for i in range(b)], block=False, **tkw)
                for dt in dtypes:
                    f, p = C.jit_model(jax.vmap(fns[algo], in_axes=(None, 0, 0, 0, 0)), chain64)
                    if dt == "float32":
                        p = jax.tree.map(lambda x: x.astype(jnp.float32), p)
                    xs = [jnp.asarray(sb[k], dtype=dt) for k in "qvau"]
                    tk = C.time_jit(f, p, *xs, **tkw)
                    thr = lambda t, b=b: f"{b / t.median:.3g}/s ({C.fmt_time(t.median)})"  # noqa: E731
                    bat.add(algo, dt, b, C.fmt_time(tk.compile), thr(tk), thr(tp) if tp else "n/a",
                            thr(tm) if tm else "n/a", C.ratio(tp.median, tk.median) if tp else "n/a",
                            C.ratio(tm.median, tk.median) if tm else "n/a")
        rep.add(bat)
        eqx.clear_caches()
    rep.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
