"""Recursive Kane ID against the Euler–Lagrange reference on planar PCC chains of 1…32 bodies.

Both are jitted, single state, float64; the EL reference is ``kane_jax/reference/euler_lagrange.py`` (autodiff
of the Lagrangian through the composed geometry, O(N²)–O(N³)). Prints times, compile times,
agreement and the crossover (smallest N at which the recursion is faster). Paper ``003_…`` Sim. 3
makes the same comparison.

Run: ``python benchmarks/bench_recursive_vs_el.py [--quick] [--no-fusion-emitters]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import _common as C  # noqa: E402

NAME = "bench_recursive_vs_el"


def main(argv=None) -> int:
    args = C.parse_args(NAME, argv, extra=lambda p: p.add_argument("--max-n", type=int, default=32))
    C.setup_jax()
    import _robots
    import numpy as np

    import kane_jax as kj
    from kane_jax.reference import euler_lagrange as el

    sizes = [1] if args.quick else [n for n in (1, 2, 4, 8, 16, 32) if n <= args.max_n]
    tkw = dict(repeats=args.repeats, min_time=0.005 if args.quick else 0.05)
    name = C.results_name(NAME, args)
    rep = C.Report(name, args, C.conditions("float64"),
                   "Inverse dynamics of N identical planar constant-curvature segments (fixed joints, 1 bending "
                   "coordinate each, 40 mass points each), one state per call, both jitted.")
    tab = C.Table("ID: recursion vs Euler–Lagrange", ["N", "nq", "recursive compile", "recursive",
                                                        "EL compile", "EL", "EL / recursive", "max |Δτ| (rel)"])
    cross = None
    for n in sizes:
        chain = _robots.pcc_chain(n)
        q, v, a, _ = _robots.random_state(chain, seed=n)
        fk, p = C.jit_model(lambda ch, q, v, a: kj.inverse_dynamics(ch, q, v, a), chain)
        fe, pe = C.jit_model(lambda ch, q, v, a: el.inverse_dynamics(ch, q, v, a), chain)
        tk = C.time_jit(fk, p, q, v, a, **tkw)
        te = C.time_jit(fe, pe, q, v, a, **tkw)
        tau_k = np.asarray(tk.fn(p, q, v, a))
        tau_e = np.asarray(te.fn(pe, q, v, a))
        if cross is None and tk.median < te.median:
            cross = n
        tab.add(n, chain.nq, C.fmt_time(tk.compile), tk.fmt(), C.fmt_time(te.compile), te.fmt(),
                C.ratio(te.median, tk.median), C.fmt_err(tau_k, tau_e))
    tab.notes.append(f"crossover (smallest N measured with the recursion faster): "
                     f"{cross if cross is not None else 'none in the measured range'}")
    rep.add(tab)
    rep.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
