"""Paper ``003_…`` Simulation 3: the recursive ID against the Euler–Lagrange (EL) equations.

Planar piecewise-constant-curvature (PCC) chains of ``N = 1 … 20`` bodies (fixed joints,
:class:`~kane_jax.PlanarConstantCurvature` bodies). For each ``N`` we measure

- the *model build time*: constructing the chain plus tracing and compiling the ID with XLA
  (the JAX counterpart of the paper's symbolic derivation and code export for EL);
- the *evaluation time*: median of repeated calls of the full ID ``τ(q, q̇, q̈)`` at unit values
  ``q = q̇ = q̈ = 1`` (the paper's Fig. 11(a)–(c) setting);
- the *relative difference* ``‖τ_rec − τ_EL‖ / ‖τ_EL‖`` over 100 random triplets
  ``q, q̇, q̈ ∈ [−1, 1]`` (Fig. 11(d)), mean and standard deviation.

The EL side is the independent reference :mod:`kane_jax.reference.euler_lagrange` (energies by
composing the bodies' geometry, equations by autodiff). Its build time grows quickly with N, as in
the paper (there, symbolic EL stopped at six bodies); here it runs up to ``n_el_max`` bodies.

Parameters lost in the paper's text conversion, chosen here: rest length 1 m, radius 0.1 m,
density 1000 kg/m³ (the toy example's unit body), E = 1 MPa, no damping; gravity along −y (in the
bending plane); Gauss–Legendre order 5, two radial rings × four angular points per section.
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..algorithms.inverse_dynamics import inverse_dynamics
from ..bodies.constant_curvature import PlanarConstantCurvature
from ..chain import Chain
from ..joints import Fixed
from ..reference import euler_lagrange as el
from ._common import output_dir

NAME = "003-sim3"
DESCRIPTION = "paper 003 Sim. 3: recursive ID vs Euler-Lagrange on planar PCC chains of 1..20 bodies (timing, accuracy)"


def make_chain(n: int) -> Chain:
    """Planar PCC chain of ``n`` identical bodies hanging in the bending plane."""
    body = PlanarConstantCurvature(1.0, 0.1, 1000.0, 1e6)
    return Chain([(Fixed(), body)] * n, gravity=(0.0, -9.81, 0.0))


def _time_calls(fn, args, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        out.append(time.perf_counter() - t)
    return float(np.median(out))


def _measure(n: int, recursive: bool, repeats: int, samples: np.ndarray) -> dict:
    start = time.perf_counter()
    chain = make_chain(n)
    fn = eqx.filter_jit(inverse_dynamics) if recursive else el.inverse_dynamics
    ones = jnp.ones(chain.nq)
    jax.block_until_ready(fn(chain, ones, ones, ones))
    build = time.perf_counter() - start
    evaluate = _time_calls(fn, (chain, ones, ones, ones), repeats)
    taus = np.stack([np.asarray(fn(chain, *(jnp.asarray(x) for x in s))) for s in samples])
    return {"build_s": build, "eval_s": evaluate, "tau": taus}


def run(t1: float | None = None, out_dir=None, *, n_max: int = 20, n_el_max: int = 8, n_samples: int = 100,
        repeats: int = 30) -> dict:
    """Run the scaling study and write ``sim3_scaling.png``.

    Arguments:
        t1: unused (this scenario is a timing study, not a time simulation).
        out_dir: output folder (default ``./kane_jax_out/003-sim3``).
        n_max: largest chain for the recursive ID. n_el_max: largest chain for EL.
        n_samples: random (q, q̇, q̈) triplets for the relative difference. repeats: timed calls.

    Returns:
        summary dict: per-N times, mean relative differences, wall time.
    """
    wall = time.perf_counter()
    out = output_dir(out_dir, NAME)
    rng = np.random.default_rng(0)
    ns = list(range(1, n_max + 1))
    rec, ell, rel_mean, rel_std = {}, {}, {}, {}
    for n in ns:
        samples = rng.uniform(-1.0, 1.0, size=(n_samples, 3, n))
        rec[n] = _measure(n, True, repeats, samples)
        if n <= n_el_max:
            ell[n] = _measure(n, False, max(3, repeats // 3), samples)
            diff = np.linalg.norm(rec[n]["tau"] - ell[n]["tau"], axis=1) / np.linalg.norm(ell[n]["tau"], axis=1)
            rel_mean[n], rel_std[n] = float(np.mean(diff)), float(np.std(diff))

    from ..simulation.plotting import _pyplot

    plt = _pyplot()
    fig, axs = plt.subplots(1, 3, figsize=(13, 3.8))
    ne = sorted(ell)
    axs[0].semilogy(ns, [rec[n]["build_s"] for n in ns], "o-", label="recursive (Kane)")
    axs[0].semilogy(ne, [ell[n]["build_s"] for n in ne], "s--", label="Euler-Lagrange")
    axs[0].set_title("model build (construct + compile) [s]")
    axs[1].semilogy(ns, [rec[n]["eval_s"] * 1e3 for n in ns], "o-", label="recursive (Kane)")
    axs[1].semilogy(ne, [ell[n]["eval_s"] * 1e3 for n in ne], "s--", label="Euler-Lagrange")
    axs[1].set_title("ID evaluation, median [ms]")
    axs[2].errorbar(ne, [rel_mean[n] for n in ne], yerr=[rel_std[n] for n in ne], fmt="o-", capsize=3)
    axs[2].set_yscale("log")
    axs[2].set_title(r"relative difference $\|\tau_{rec}-\tau_{EL}\|/\|\tau_{EL}\|$")
    for ax in axs:
        ax.set_xlabel("number of bodies N")
        ax.grid(True, which="both", alpha=0.3)
    axs[0].legend()
    axs[1].legend()
    fig.tight_layout()
    path = out / "sim3_scaling.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    n_cmp = max(ne)
    return {
        "name": NAME, "description": DESCRIPTION, "wall_s": time.perf_counter() - wall,
        "n_bodies": ns, "rec_build_s": [rec[n]["build_s"] for n in ns], "rec_eval_s": [rec[n]["eval_s"] for n in ns],
        "el_build_s": [ell[n]["build_s"] for n in ne], "el_eval_s": [ell[n]["eval_s"] for n in ne],
        "rel_diff_mean": [rel_mean[n] for n in ne], "max_rel_diff": float(max(rel_mean.values())),
        f"speedup_eval_at_{n_cmp}": ell[n_cmp]["eval_s"] / rec[n_cmp]["eval_s"],
        "files": [str(path)],
    }
