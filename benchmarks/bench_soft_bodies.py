"""Per-call time of ID, mass matrix and FD for one body of each soft model, optionally against a past revision.

Models (``_robots.soft_bodies``): planar and spatial constant curvature, Cosserat PCS (all six
strains), Cosserat GVS (Piecewise Gaussian Curvature basis of paper ``000_…`` Sim. 2, Magnus
integration), Godage's three-actuator section (paper ``004_…``), a learned MLP body, the
variable-radius PCC of paper ``000_…`` Sim. 1 and an LVP body of paper ``003_…``. Each body sits on
a revolute joint, gravity on, damping on; FD with its finiteness check (the default).

Method (``_common.py``): ``jax.jit`` of each function with the chain's arrays as arguments;
compile time (trace + lower + XLA compile) measured apart; warm-up; per-call time = median over
repeats of the mean of back-to-back calls through ``jax.jit``, each blocking on its outputs.
float64, CPU, one state.

``--baseline REV`` (issue 15's reference is ``5eef166``, the code when it was filed) builds the same
bodies with revision ``REV``'s kane_jax (``_baseline.load``) and times both in this process, their
repeats interleaved, so that the speed-up column is a ratio measured side by side on a machine
whose speed drifts between minutes; the agreement column compares their outputs.

Run: ``python benchmarks/bench_soft_bodies.py [--quick] [--recommended-flags] [--baseline REV]
[--bodies SUBSTRINGS]``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as C  # noqa: E402

NAME = "bench_soft_bodies"
ALGORITHMS = ("ID", "M", "FD")


def _functions(lib):
    """The three timed functions of package ``lib``, each ``f(chain, q, qd, qdd)``."""
    return {"ID": lambda ch, q, qd, qdd: lib.inverse_dynamics(ch, q, qd, qdd),
            "M": lambda ch, q, qd, qdd: lib.mass_matrix(ch, q),
            "FD": lambda ch, q, qd, qdd: lib.forward_dynamics(ch, q, qd, qdd)}


def main(argv=None) -> int:
    def extra(p):
        p.add_argument("--baseline", default=None, metavar="REV",
                       help="also time git revision REV's kane_jax in this process (e.g. 5eef166, issue 15's "
                            "reference) and give the speed-up per row")
        p.add_argument("--bodies", default=None,
                       help="comma-separated substrings of the row names to run (default: all)")

    args = C.parse_args(NAME, argv, extra=extra)
    C.setup_jax(True)
    import jax.numpy as jnp
    import numpy as np
    from _robots import soft_bodies

    import kane_jax as kj

    libs = [kj]
    if args.baseline:
        import _baseline

        libs.append(_baseline.load(args.baseline))
    names = list(soft_bodies(kj))
    if args.bodies:
        names = [n for n in names if any(s.strip().lower() in n.lower() for s in args.bodies.split(","))]
    elif args.quick:
        names = names[:2]
    cond = C.conditions("float64")
    if args.baseline:
        cond["baseline"] = f"{args.baseline} ({libs[1].__name__})"
    rep = C.Report(C.results_name(NAME + ("_vs_" + args.baseline if args.baseline else ""), args), args, cond,
                   "One body of each soft model on a revolute joint (single state, no batch)."
                   + (f" Against revision {args.baseline} in the same process, repeats interleaved; speed-up = "
                      f"{args.baseline}'s time / this tree's." if args.baseline else ""))
    if args.baseline:
        table = C.Table(f"Soft bodies: per-call time, this tree against {args.baseline}",
                        ["body", "nq (chain)"] + [f"{a} ({args.baseline} → now)" for a in ALGORITHMS]
                        + ["compile ID / M / FD", "max rel. difference"])
    else:
        table = C.Table("Soft bodies: per-call time, float64 CPU",
                        ["body", "nq (chain)", "mass points", *ALGORITHMS, "compile ID / M / FD"])
    rng = np.random.default_rng(0)
    tkw = dict(repeats=args.repeats, min_time=0.01 if args.quick else 0.05)
    for name in names:
        bodies = [soft_bodies(lib)[name]() for lib in libs]
        chains = [lib.Chain([(lib.Revolute((0.0, 1.0, 0.0)), body)]) for lib, body in zip(libs, bodies)]
        n = chains[0].nq
        state = (jnp.asarray(rng.normal(size=n) * 0.05), jnp.asarray(rng.normal(size=n)),
                 jnp.asarray(rng.normal(size=n)))
        cells, compiles, diffs = [], [], []
        for algo in ALGORITHMS:
            pairs = []
            for lib, chain in zip(libs, chains):
                f, params = C.jit_model(_functions(lib)[algo], chain)
                pairs.append((f, (params, *state)))
            res = C.time_jit_interleaved(pairs, **tkw)
            if args.baseline:
                now, base = res
                cells.append(f"{C.fmt_time(base.median)} → {C.fmt_time(now.median)} "
                             f"({C.ratio(base.median, now.median)})")
                compiles.append(f"{base.compile:.1f} → {now.compile:.1f} s")
                diffs.append(C.max_abs_rel(now.fn(*pairs[0][1]), base.fn(*pairs[1][1]))[1])
            else:
                cells.append(res[0].fmt())
                compiles.append(f"{res[0].compile:.1f} s")
        if args.baseline:
            table.add(name, n, *cells, " / ".join(compiles), f"{max(diffs):.1e}")
        else:
            table.add(name, n, bodies[0].points.shape[0], *cells, " / ".join(compiles))
        print(table.rows[-1], flush=True)
    table.notes.append("mass points: the quadrature points (rods: 5 arc nodes × 8 section points, evaluated as 5 "
                       "rigid cross-sections); the GVS rod also takes 6 Magnus steps (2 strain evaluations each) "
                       "per configuration.")
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        table.notes.append("the machine was loaded by other jobs during the run (see the load average), "
                           "so absolute times are pessimistic; ratios between rows are more robust.")
    rep.add(table)
    rep.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
