"""How the coefficients of ``kane_jax.simulation.stabilized``'s two methods were found (needs SciPy).

Run ``python docs/stabilized_rk_design.py ORDER STAGES``: ``3 6`` prints ``StabilizedRK3``'s tableau and
``4 8`` ``StabilizedRK4``'s, bit for bit (seed 1, SciPy 1.17; least squares from random starts can land
on another tableau of equal merit with another seed or SciPy version). Three steps, for order ``p``:

1. The stability polynomial ``R(z) = Σ_{k≤p} z^k/k! + Σ_{k=p+1}^{s} γ_k z^k`` with the longest interval
   ``[−β, 0]`` on which ``|R(z)| ≤ 1 − η min(1, |z|/2)``: a linear program in ``γ`` for each ``β``,
   bisection on ``β``.
2. A lower-triangular tableau ``(A, b)`` with Butcher's conditions up to order ``p`` (the tall trees
   ``bᵀA^{j−1}c`` through the polynomial of step 1, which also sets them beyond ``p``), every internal
   stage polynomial bounded by 1 on the interval, ``0 ≤ c ≤ 1``, small fourth-order error terms and
   small coefficients: weighted least squares from random starts; then Newton on the equalities alone.
3. The embedded estimate of order ``p − 1`` with the first-same-as-last stage: ``d = b − b̂`` with
   ``dᵀ1 = dᵀc = 0`` (and ``dᵀc² = dᵀAc = 0`` for ``p = 4``), ``dᵀAc = −1/48`` (``p = 3``; ``dᵀA²c =
   −1/96`` for ``p = 4``) and the smallest ``max |Σ d_i Y_i(z)|`` on the interval (a linear program),
   then projected onto its order conditions.
"""

from __future__ import annotations

import sys
from math import factorial

import numpy as np
from scipy.optimize import least_squares, linprog

ETA, REGULARIZATION, SEED = 0.05, 0.02, 1
ORDER, STAGES = 3, 6  # set from the command line


def _residual_bound(beta, s, n=2000):
    """The smallest excess of ``|R|`` over its bound on ``[−β, 0]`` (0 where ``β`` is reachable), and ``γ``."""
    z = -np.linspace(1e-3, beta, n)
    base = sum(z**k / factorial(k) for k in range(ORDER + 1))
    v = np.stack([z**k for k in range(ORDER + 1, s + 1)], 1)
    bound = 1 - ETA * np.clip(np.abs(z) / 2.0, 0, 1)
    m = v.shape[1]
    ub = np.r_[np.c_[v, -np.ones(n)], np.c_[-v, -np.ones(n)]]
    r = linprog(np.r_[np.zeros(m), 1.0], A_ub=ub, b_ub=np.r_[bound - base, bound + base],
                bounds=[(None, None)] * m + [(0, None)], method="highs")
    return (r.x[-1], r.x[:m]) if r.success else (np.inf, None)


def stability_polynomial(s):
    lo, hi = 1.0, 2.0 * s * s
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _residual_bound(mid, s)[0] < 1e-9 else (lo, mid)
    return lo, np.r_[[1 / factorial(k + 1) for k in range(ORDER)], _residual_bound(lo, s)[1]]


def stage_polynomials(a, z):
    y = np.ones((a.shape[0], z.size))
    for i in range(a.shape[0]):
        y[i] = 1 + z * (a[i, :i] @ y[:i])
    return y


def tableau(s, beta, gam):
    idx = np.tril_indices(s, -1)
    z = -np.linspace(0, beta, 400)

    def unpack(x):
        a = np.zeros((s, s))
        a[idx] = x[:len(idx[0])]
        return a, x[len(idx[0]):]

    def equalities(x):
        a, b = unpack(x)
        c, out = a.sum(1), [b.sum() - 1]
        out.append(b @ c**2 - 1 / 3)
        if ORDER == 4:
            out += [b @ c**3 - 1 / 4, b @ (c * (a @ c)) - 1 / 8, b @ (a @ c**2) - 1 / 12]
        v = c
        for j in range(1, s):
            out.append(b @ v - gam[j])
            v = a @ v
        return np.array(out)

    def residual(x):
        a, b = unpack(x)
        c = a.sum(1)
        internal = np.maximum(np.abs(stage_polynomials(a, z)).max(1) - 1.0, 0)
        fourth = [b @ c**3 - 1 / 4, b @ (c * (a @ c)) - 1 / 8, b @ (a @ c**2) - 1 / 12]
        return np.r_[1e3 * equalities(x), 3 * internal, 10 * np.maximum(-c, 0), 10 * np.maximum(c - 1, 0),
                     0.3 * np.array(fourth), REGULARIZATION * x]

    rng, best = np.random.default_rng(SEED), (np.inf, None)
    for _ in range(60):
        x0 = rng.uniform(0, 0.5, len(idx[0]) + s)
        r = least_squares(residual, x0, method="trf", max_nfev=4000)
        best = min(best, (float(np.sum(r.fun**2)), r.x), key=lambda t: t[0])
    x = best[1]
    for _ in range(20):  # Newton on the equalities (least-norm steps)
        jac = np.stack([(equalities(x + 1e-7 * e) - equalities(x - 1e-7 * e)) / 2e-7 for e in np.eye(x.size)], 1)
        x = x - np.linalg.lstsq(jac, equalities(x), rcond=None)[0]
    return unpack(x)


def error_weights(a_full, c_full, beta):
    z = -np.linspace(0, beta, 600)
    y = stage_polynomials(a_full, z)
    n = a_full.shape[0]
    ub = np.r_[np.c_[y.T, -np.ones(z.size)], np.c_[-y.T, -np.ones(z.size)]]
    ac = a_full @ c_full
    cons = np.array([np.ones(n), c_full] + ([c_full**2, ac] if ORDER == 4 else []))
    scale = np.array([ac] if ORDER == 3 else [a_full @ ac])
    eq = np.c_[np.r_[cons, scale], np.zeros(len(cons) + 1)]
    r = linprog(np.r_[np.zeros(n), 1.0], A_ub=ub, b_ub=np.zeros(2 * z.size), A_eq=eq,
                b_eq=np.r_[np.zeros(len(cons)), -1 / 48 if ORDER == 3 else -1 / 96],
                bounds=[(None, None)] * n + [(0, None)], method="highs")
    d = r.x[:n]
    return d - cons.T @ np.linalg.solve(cons @ cons.T, cons @ d)


def main():
    global ORDER, STAGES
    ORDER, STAGES = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (ORDER, STAGES)
    beta, gam = stability_polynomial(STAGES)
    a, b = tableau(STAGES, beta, gam)
    a_full = np.zeros((STAGES + 1, STAGES + 1))
    a_full[:STAGES, :STAGES], a_full[STAGES, :STAGES] = a, b  # first same as last
    c_full = a_full.sum(1)
    d = error_weights(a_full, c_full, beta)
    print(f"beta = {beta:.4f}")
    for i in range(1, STAGES + 1):
        print("a_lower", tuple(float(v) for v in a_full[i, :i]))
    print("b_sol", tuple(float(v) for v in np.r_[b, 0.0]))
    print("b_error", tuple(float(v) for v in d))


if __name__ == "__main__":
    main()
