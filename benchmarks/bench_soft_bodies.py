"""Per-call time of ID, mass matrix and FD for one body of each rod-like soft model and a learned body.

Models: spatial PCC with elongation, Cosserat PCS (all six strains), Cosserat GVS (Piecewise
Gaussian Curvature basis of paper ``000_…`` Sim. 2, Magnus integration), Godage's three-actuator
section (paper ``004_…``), and a learned MLP body; the planar CC of the core is the peer. Each body
sits on a revolute joint, gravity on, damping on.

Method (``_common.py``): ``jax.jit`` of each function with the chain's arrays as arguments;
compile time (trace + lower + XLA compile) measured apart; warm-up; per-call time = median over
repeats of the mean of back-to-back calls, each blocking on its outputs. float64, CPU, one state.
Run: ``python benchmarks/bench_soft_bodies.py [--quick] [--no-fusion-emitters]``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import Report, Table, conditions, jit_model, parse_args, setup_jax, time_jit  # noqa: E402

ARGS = parse_args("bench_soft_bodies")
jax = setup_jax(True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import kane_jax as kj  # noqa: E402


def _models():
    rod = dict(order=5, n_radial=2, n_angular=4)
    return [
        ("PlanarConstantCurvature (peer)", kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e6, 0.1, elongation=True,
                                                                      **rod)),
        ("SpatialConstantCurvature", kj.SpatialConstantCurvature(0.2, 0.02, 1000.0, 1e6, 0.1, **rod)),
        ("CosseratPCS (6 strains)", kj.CosseratPCS(0.2, 0.01, 1070.0, 1e6, tip_radius=0.005, damping=0.01, **rod)),
        ("CosseratGVS (PGC basis)", kj.CosseratGVS(0.2, 0.01, 1070.0, 6.66e8, poisson_ratio=0.4, tip_radius=0.005,
                                                   damping=0.01, basis=kj.PiecewiseGaussianCurvature(0.2), **rod)),
        ("GodageSection", kj.GodageSection(0.15, 0.0125, 0.1, stiffness=200.0, damping=2.0, **rod)),
        ("LearnedBody (MLP 16x2)", kj.LearnedBody(3, length=0.2, radius=0.02, key=jax.random.PRNGKey(0),
                                                  stiffness=5.0, damping=0.1, **rod)),
    ]


def main():
    report = Report("bench_soft_bodies", ARGS, conditions("float64"),
                    "One body of each soft model on a revolute joint (single state, no batch).")
    table = Table("Soft bodies (part A): per-call time, float64 CPU",
                  ["body", "nq (chain)", "mass points", "ID", "M", "FD", "compile ID / M / FD"])
    rng = np.random.default_rng(0)
    repeats, min_time = ARGS.repeats, (0.01 if ARGS.quick else 0.05)
    for name, body in _models():
        chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), body)])
        n = chain.nq
        q = jnp.asarray(rng.normal(size=n) * 0.05)
        qd, qdd = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n))
        res = []
        for fn, args in ((kj.inverse_dynamics, (q, qd, qdd)), (kj.mass_matrix, (q,)),
                         (kj.forward_dynamics, (q, qd, qdd))):
            f, params = jit_model(fn, chain)
            res.append(time_jit(f, params, *args, repeats=repeats, min_time=min_time))
        table.add(name, n, body.points.shape[0], *(r.fmt() for r in res),
                  " / ".join(f"{r.compile:.1f} s" for r in res))
        print(table.rows[-1], flush=True)
    table.notes.append("mass points = arc Gauss nodes × cross-section nodes (5 × 8 = 40 here); the GVS rod "
                       "also takes 6 Magnus steps (2 strain evaluations each) per configuration.")
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        table.notes.append("the machine was loaded by other jobs during the run (see the load average), "
                           "so absolute times are pessimistic; ratios between rows are more robust.")
    report.add(table)
    report.write()


if __name__ == "__main__":
    main()
