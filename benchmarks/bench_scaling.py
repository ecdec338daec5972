"""Scaling with the number of modules N: ID, mass matrix and FD time and compile time.

Families: N identical planar CC segments, N-link random rigid arms, and heterogeneous chains that
alternate rigid links and CC segments (two module groups). One state per call, float64, jitted
with the chain as an argument. Prints t(64)/t(8) and the compile-time growth 8 → 64 (issue 7
targets: t(64)/t(8) ≤ 9 for the ID; compile(64)/compile(8) ≤ 1.5), and, for issue 2, the ratio to
the Euler–Lagrange reference at N = 2, 4, 8.

Run: ``python benchmarks/bench_scaling.py [--quick] [--no-fusion-emitters]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import _common as C  # noqa: E402

NAME = "bench_scaling"


def main(argv=None) -> int:
    def extra(p):
        p.add_argument("--algos", default="ID,M,FD")
        p.add_argument("--sizes", default=None, help="comma-separated N (default 1,2,4,8,16,32,64)")
        p.add_argument("--families", default=None, help="comma-separated subset of the family names")
        p.add_argument("--el-sizes", default=None, help="N for the EL comparison (default 2,4,8; '' for none)")

    args = C.parse_args(NAME, argv, extra=extra)
    C.setup_jax()
    import _robots
    import numpy as np

    import kane_jax as kj
    from kane_jax.reference import euler_lagrange as el

    quick = args.quick
    sizes = [1, 2] if quick else [1, 2, 4, 8, 16, 32, 64]
    families = ["planar CC"] if quick else list(_robots.FAMILIES)
    algos = ["ID"] if quick else args.algos.split(",")
    el_sizes = [1] if quick else [2, 4, 8]
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
    if args.families:
        families = args.families.split(",")
    if args.el_sizes is not None:
        el_sizes = [int(x) for x in args.el_sizes.split(",") if x]
    tkw = dict(repeats=args.repeats, min_time=0.005 if quick else 0.05)
    name = C.results_name(NAME, args)
    rep = C.Report(name, args, C.conditions("float64"),
                   "One state per call; the chain is a jit argument (array leaves), so parameters can change "
                   "without recompiling. Identical modules form one group evaluated by one vmap; the "
                   "recursions are lax.scans, so the traced program does not grow with N.")
    fns = {
        "ID": lambda ch, q, v, a, u: kj.inverse_dynamics(ch, q, v, a),
        "M": lambda ch, q, v, a, u: kj.mass_matrix(ch, q),
        "FD": lambda ch, q, v, a, u: kj.forward_dynamics(ch, q, v, u),
    }
    summary = C.Table("Growth 8 → 64 (targets for the ID: time ratio ≤ 9, compile ratio ≤ 1.5)",
                      ["family", "algorithm", "t(64)/t(8)", "compile(64)/compile(8)"])
    for fam in families:
        make = _robots.FAMILIES[fam]
        tab = C.Table(f"{fam}: time per call [compile time]", ["N", "nq"] + algos)
        res: dict[tuple[str, int], C.Timing] = {}
        for n in sizes:
            chain = make(n)
            q, v, a, u = _robots.random_state(chain, seed=n)
            cells = []
            for algo in algos:
                f, p = C.jit_model(fns[algo], chain)
                t = C.time_jit(f, p, q, v, a, u, **tkw)
                res[(algo, n)] = t
                cells.append(f"{t.fmt()} [{C.fmt_time(t.compile)}]")
            tab.add(n, chain.nq, *cells)
            print(f"  {fam} N={n} done", flush=True)
        rep.add(tab)
        if 8 in sizes and 64 in sizes:
            for algo in algos:
                t8, t64 = res[(algo, 8)], res[(algo, 64)]
                summary.add(fam, algo, f"{t64.median / t8.median:.2f}", f"{t64.compile / t8.compile:.2f}")

    # issue 2: recursion vs Euler–Lagrange at small N
    elt = C.Table("ID: recursion vs Euler–Lagrange reference (issue 2)",
                  ["family", "N", "recursive", "EL", "EL / recursive", "max |Δτ| (rel)"])
    for fam in families:
        make = _robots.FAMILIES[fam]
        for n in el_sizes:
            chain = make(n)
            q, v, a, _ = _robots.random_state(chain, seed=n)
            fk, p = C.jit_model(lambda ch, q, v, a: kj.inverse_dynamics(ch, q, v, a), chain)
            fe, pe = C.jit_model(lambda ch, q, v, a: el.inverse_dynamics(ch, q, v, a), chain)
            tk = C.time_jit(fk, p, q, v, a, **tkw)
            te = C.time_jit(fe, pe, q, v, a, **tkw)
            err = C.fmt_err(np.asarray(tk.fn(p, q, v, a)), np.asarray(te.fn(pe, q, v, a)))
            elt.add(fam, n, tk.fmt(), te.fmt(), C.ratio(te.median, tk.median), err)
    rep.add(elt)
    if summary.rows:
        rep.add(summary)
    rep.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
