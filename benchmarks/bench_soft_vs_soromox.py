"""Soft arms: kane_jax against SoRoMoX (JAX Cosserat PCS), the identical robot, same run.

The robot is SoRoMoX's spatial PCS model (``soromox.systems.pcs.PCS``) with 1 and 3 segments, active
strains bending y, bending z and elongation (``strain_selector`` ``[0, 1, 1, 1, 0, 0]`` per
segment), read from its source (0.5.0):

- ``q`` per segment: deviations of ``(κ_y, κ_z, σ_x)`` from the rest strain ``(0,0,0,1,0,0)``,
  ``ξ = B q + ξ*``, pose ``g(X) = g0 · Π exp(L_j ξ_j) · exp(X ξ_i)`` — the same meaning and order
  as kane_jax's :class:`CosseratPCS` with ``strains=(0, 1, 1, 1, 0, 0)``;
- base pose ``g0``: SoRoMoX's default mounting rotates the rod's +x axis onto world −z (the rod
  hangs); kane_jax gets it as the placement of the first (fixed) joint;
- mass: per Gauss node the 6×6 section inertia ``ρ diag(J, I, I, A, A, A)``; kane_jax puts mass
  points on a 2×4 disk rule, whose area and second moments are exact, so both kinetic energies are
  the same quadratic form;
- stiffness ``K = L diag(E I, E I, E A)``, damping ``D = η_s L diag(3 I, 3 I, 3 A)`` (SoRoMoX's
  ``material_damping_coefficient`` η_s [Pa s]) = ``(3 η_s / E) K``, i.e. kane_jax's Kelvin–Voigt
  time constant ``η = 3 η_s / E``;
- quadrature: 5 Gauss nodes per segment in both. SoRoMoX computes its Gauss–Legendre nodes
  iteratively, accurate to ~3e-8; kane_jax is given SoRoMoX's nodes and weights so that both
  evaluate the same discrete model (the exact-node model differs from it by ~1e-8 relative).

Timed: one FD evaluation (single and vmapped batches) and a 1 s simulation with diffrax Tsit5 at a
fixed dt = 1e-4 and with adaptive steps (PID controller), single environment and a vmapped batch.

Run: ``python benchmarks/bench_soft_vs_soromox.py [--quick] [--no-fusion-emitters]``.
Target (issue 7): kane_jax ≥ 10× faster than SoRoMoX per FD call and per simulated second.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as C  # noqa: E402

NAME = "bench_soft_vs_soromox"
# the robot (per segment)
LENGTH, RADIUS, DENSITY, YOUNG, POISSON, ETA_S = 0.1, 0.02, 1070.0, 2e5, 0.45, 50.0
GRAVITY = (0.0, 0.0, -9.81)
SELECT = (False, True, True, True, False, False)
# --six-strains: all six strains, no material damping (kane_jax's Kelvin–Voigt rod has one retardation
# time 3η/E for every strain, SoRoMoX damps twist and shear with η itself: their D differ by 3G/E there)
SIX_STRAINS = dict(select=(True,) * 6, eta_s=0.0)


def make_pcs_body(nodes, node_weights, *, select=SELECT, eta_s=ETA_S):
    """kane_jax PCS segment (``kane_jax.bodies.cosserat.CosseratPCS``) on the given arc nodes, with the
    strains ``select`` and SoRoMoX's material damping coefficient ``eta_s``."""
    import equinox as eqx
    import jax.numpy as jnp
    import numpy as np

    from kane_jax.bodies.cosserat import CosseratPCS

    body = CosseratPCS(length=LENGTH, radius=RADIUS, density=DENSITY, youngs_modulus=YOUNG,
                       poisson_ratio=POISSON, damping=3 * eta_s / YOUNG, strains=select, order=len(nodes))
    # same discrete model as SoRoMoX: its (iteratively computed) Gauss nodes and weights
    x, w = np.polynomial.legendre.leggauss(len(nodes))
    per = body.points.shape[0] // len(nodes)
    sigma = jnp.repeat(jnp.asarray(nodes), per)
    scale = jnp.repeat(jnp.asarray(node_weights) / (0.5 * w), per)
    return eqx.tree_at(lambda b: (b.points, b.weights), body,
                       (body.points.at[:, 0].set(sigma), body.weights * scale))


def make_soromox(nseg: int, *, select=SELECT, eta_s=ETA_S):
    import jax.numpy as jnp
    from soromox.systems.components import LinkSpec
    from soromox.systems.pcs import PCS, PCSStructure

    links = [LinkSpec.circular(length=LENGTH, radius=RADIUS, density=DENSITY, reference_strain=[0, 0, 0, 1, 0, 0],
                               young_modulus=YOUNG, poisson_ratio=POISSON, material_damping_coefficient=eta_s)
             for _ in range(nseg)]
    sel = jnp.asarray(list(select) * nseg)
    return PCS.from_links(links, structure=PCSStructure(num_gauss_points=5, strain_selector=sel),
                          gravity=jnp.asarray(GRAVITY))


def make_kane(robot, nseg: int, *, select=SELECT, eta_s=ETA_S):
    import numpy as np

    import kane_jax as kj

    nodes = np.asarray(robot.integration_points)[1:-1]
    weights = np.asarray(robot.integration_weights)[1:-1]
    body = make_pcs_body(nodes, weights, select=select, eta_s=eta_s)
    mods = [(kj.Fixed(placement=np.asarray(robot.g0)), body)] + [(kj.Fixed(), body)] * (nseg - 1)
    return kj.Chain(mods, gravity=GRAVITY)


def main(argv=None) -> int:
    def extra(p):
        p.add_argument("--sim", action=argparse.BooleanOptionalAction, default=None,
                       help="time the Tsit5 simulations (default: on; off in --quick)")
        p.add_argument("--six-strains", action="store_true",
                       help="all six strains (twist, bending, stretch, shear) instead of bending y/z + elongation")
        p.add_argument("--horizon", type=float, default=None,
                       help="simulated time [s] of the single-environment runs (default 1; times are per simulated s)")
        p.add_argument("--compile-repeats", type=int, default=None,
                       help="compiles of each one-FD program, interleaved, from cleared caches (default 5; 1 in "
                            "--quick)")

    args = C.parse_args(NAME, argv, extra=extra)
    if args.sim is None:
        args.sim = not args.quick
    jax = C.setup_jax()
    import diffrax as dfx
    import jax.numpy as jnp
    import numpy as np

    import kane_jax as kj

    try:
        import soromox  # noqa: F401
    except ImportError:
        soromox = None
    quick = args.quick
    segs = [1] if quick else [1, 3]
    batches = [] if quick else [64, 256, 1024]
    horizon = args.horizon or (0.0005 if quick else 1.0)
    sim_batch, sim_batch_horizon = (None, None) if quick else (16, 0.05)
    tkw = dict(repeats=args.repeats, min_time=0.005 if quick else 0.05)
    ckw = dict(compile_repeats=args.compile_repeats or (1 if quick else 5))
    skw = dict(repeats=1 if quick else 2, min_time=0.0)
    model = SIX_STRAINS if args.six_strains else dict(select=SELECT, eta_s=ETA_S)
    name = C.results_name(NAME + ("_six_strains" if args.six_strains else ""), args)
    rep = C.Report(name, args, C.conditions("float64", ["soromox", "diffrax"]),
                   f"SoRoMoX PCS robot (L = {LENGTH} m, r = {RADIUS} m, ρ = {DENSITY} kg/m³, E = {YOUNG:g} Pa, "
                   f"ν = {POISSON}, η_s = {model['eta_s']} Pa·s per segment; gravity {GRAVITY}; "
                   f"{'all six strains' if args.six_strains else 'bending y/z + elongation'}; "
                   "5 Gauss nodes per segment) and the identical kane_jax chain of CosseratPCS bodies. Speed-up: "
                   "SoRoMoX time / kane_jax time, their repeats interleaved (a, b, a, b, …: the shared machine's drift "
                   "falls on both); compile ratio: SoRoMoX's compile time / kane_jax's (below 1: kane_jax compiles "
                   "longer). kane_jax's "
                   "forward dynamics runs with `check=False`, the documented form inside jitted loops (its "
                   "finiteness check is a host callback; SoRoMoX checks nothing).")
    if soromox is None:
        print("soromox not installed: nothing to compare (pip install soromox)")
        rep.write()
        return 0
    agree = C.Table("Agreement (max |kane_jax − SoRoMoX|, relative to max |SoRoMoX|) at random states",
                    ["segments", "nq", "M", "bias (C q̇ + G + K q + D q̇)", "FD"])
    nc = ckw["compile_repeats"]
    how = (f"median [min–max] of {nc} compiles per program, the two libraries alternating, each from cleared "
           "caches, and the medians of its phases" if nc > 1 else "one compile per program, and its phases")
    single = C.Table(f"One FD evaluation (compile: {how}: trace + lowering + XLA)",
                     ["segments", "B", "kane_jax compile", "kane_jax", "SoRoMoX compile", "SoRoMoX", "speed-up",
                      "compile ratio"])
    sims = C.Table("Simulation with diffrax Tsit5 (time per simulated second; from rest at a bent state)",
                   ["segments", "stepping", "B", "horizon", "kane_jax compile", "kane_jax / sim-s",
                    "SoRoMoX compile", "SoRoMoX / sim-s", "speed-up", "FD evals", "final-state |Δ| (rel)"])
    for nseg in segs:
        robot = make_soromox(nseg, **model)
        chain = make_kane(robot, nseg, **model)
        nq = chain.nq
        rng = np.random.default_rng(nseg)
        sel = np.asarray(model["select"])
        scale = np.tile(np.array([1.0, 3.0, 3.0, 0.05, 0.05, 0.05])[sel], nseg)
        qs = rng.uniform(-1, 1, (max(batches + [8]), nq)) * scale
        qds = rng.uniform(-1, 1, qs.shape)

        # ---- one FD evaluation (vector field of the state y = [q, q̇]); chain/robot as jit arguments
        def vf_kane(ch, y):
            q, v = y[:nq], y[nq:]
            return jnp.concatenate([v, kj.forward_dynamics(ch, q, v, jnp.zeros_like(q), check=False)])

        def vf_sx(rb, y):
            return rb.forward_dynamics(0.0, y)

        fkane, pk = C.jit_model(vf_kane, chain)
        fsx, ps = C.jit_model(vf_sx, robot)
        ys = np.concatenate([qs, qds], axis=1)
        for b in [1] + batches:
            if b == 1:
                yk = jnp.asarray(ys[0])
                tk, ts = C.time_jit_interleaved([(fkane, (pk, yk)), (fsx, (ps, yk))], **tkw, **ckw)
                vf_compiled = tk.fn
            else:
                yb = jnp.asarray(ys[:b])
                tk, ts = C.time_jit_interleaved([(jax.vmap(fkane, in_axes=(None, 0)), (pk, yb)),
                                                 (jax.vmap(fsx, in_axes=(None, 0)), (ps, yb))], **tkw, **ckw)
            single.add(nseg, b, tk.compiles.fmt(), tk.fmt(), ts.compiles.fmt(), ts.fmt(),
                       C.ratio(ts.median, tk.median), C.ratio(ts.compile, tk.compile))

        # ---- agreement (jitted; the quick form checks FD only, which contains M and the bias)
        zero = jnp.zeros(nq)
        n_chk = 2 if quick else 8
        if quick:  # reuse the compiled single-state vector field of the timing above (one compile less)
            fk = np.stack([np.asarray(vf_compiled(pk, jnp.concatenate([q, v])))[nq:]
                           for q, v in zip(qs[:n_chk], qds[:n_chk])])
        else:
            fk = jax.jit(jax.vmap(lambda q, v: kj.forward_dynamics(chain, q, v, zero)))(qs[:n_chk], qds[:n_chk])
        ms, bs, fs = [], [], []
        for q, v in zip(qs[:n_chk], qds[:n_chk]):
            fs.append(robot.forward_dynamics(0.0, jnp.concatenate([q, v]))[nq:])
            if not quick:
                b_, c_, g_ = robot.dynamics_terms(jnp.asarray(q), jnp.asarray(v))
                ms.append(b_)
                bs.append(c_ + g_ + robot.stiffness_matrix() @ q + robot.damping_matrix(q) @ v)
        if quick:
            agree.add(nseg, nq, "(full form)", "(full form)", C.fmt_err(fk, np.stack(fs)))
        else:
            mk = jax.jit(jax.vmap(lambda q: kj.mass_matrix(chain, q)))(qs[:8])
            bk = jax.jit(jax.vmap(lambda q, v: kj.inverse_dynamics(chain, q, v, zero)))(qs[:8], qds[:8])
            agree.add(nseg, nq, C.fmt_err(mk, np.stack(ms)), C.fmt_err(bk, np.stack(bs)),
                      C.fmt_err(fk, np.stack(fs)))

        # ---- simulations
        y0 = jnp.concatenate([jnp.asarray(np.tile(np.array([0.5, 2.0, -1.0, 0.01, 0.005, -0.005])[sel], nseg)),
                              jnp.zeros(nq)])

        def solve(f, params, y0, t1, adaptive):
            term = dfx.ODETerm(lambda t, y, p: f(p, y))
            ctrl = dfx.PIDController(rtol=1e-6, atol=1e-6) if adaptive else dfx.ConstantStepSize()
            sol = dfx.diffeqsolve(term, dfx.Tsit5(), 0.0, t1, 1e-4, y0, args=params, stepsize_controller=ctrl,
                                  saveat=dfx.SaveAt(t1=True), max_steps=int(t1 / 1e-4) * 4 + 16)
            return sol.ys[-1], sol.stats["num_steps"]

        runs = [("fixed dt 1e-4", False, 1, horizon)] if args.sim else []
        if args.sim and not quick:
            runs.append(("adaptive (rtol = atol = 1e-6)", True, 1, horizon))
        if args.sim and sim_batch:
            runs.append(("fixed dt 1e-4", False, sim_batch, sim_batch_horizon))
        for label, adaptive, b, t1 in runs:
            if b == 1:
                gk = lambda p, y0, adaptive=adaptive, t1=t1: solve(fkane, p, y0, t1, adaptive)  # noqa: E731
                gs = lambda p, y0, adaptive=adaptive, t1=t1: solve(fsx, p, y0, t1, adaptive)  # noqa: E731
                yy = y0
            else:
                gk = jax.vmap(lambda p, y0, t1=t1: solve(fkane, p, y0, t1, False), in_axes=(None, 0))
                gs = jax.vmap(lambda p, y0, t1=t1: solve(fsx, p, y0, t1, False), in_axes=(None, 0))
                yy = y0[None] * jnp.asarray(np.linspace(0.5, 1.0, b))[:, None]
            tk, ts = C.time_jit_interleaved([(gk, (pk, yy)), (gs, (ps, yy))], **skw)
            (yk, nk), (ysx, _) = tk.fn(pk, yy), ts.fn(ps, yy)
            steps = int(np.max(np.asarray(nk)))
            sims.add(nseg, label, b, f"{t1:g} s", C.fmt_time(tk.compile), C.fmt_time(tk.median / t1),
                     C.fmt_time(ts.compile), C.fmt_time(ts.median / t1), C.ratio(ts.median, tk.median),
                     f"{steps * 6 * b}", C.fmt_err(yk, ysx))
    rep.add(agree)
    rep.add(single)
    rep.add(sims)
    rep.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
