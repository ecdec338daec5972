"""The exact box-constrained QP (active-set enumeration) and both allocation paths against SciPy's
bounded-variable least squares (BVLS), and the exact path's derivatives against central differences."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import lsq_linear

from kane_jax.control import allocate_tensions
from kane_jax.control._box_qp import EXACT_MAX, solve_box_qp


def _bvls_qp(quad, lin, lower, upper):
    # ½ vᵀ Q v + cᵀ v = ½ ‖Lᵀ v + L⁻¹ c‖² + const (Q = L Lᵀ): a bounded least-squares problem
    chol = np.linalg.cholesky(quad)
    return lsq_linear(chol.T, -np.linalg.solve(chol, lin), bounds=(lower, np.inf if upper is None else upper),
                      method="bvls", tol=1e-15).x


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_box_qp_equals_bvls(n, rng):
    for trial in range(12):
        m = rng.normal(size=(n, n))
        quad = m @ m.T + 0.05 * np.eye(n)
        lin = 3.0 * rng.normal(size=n)
        lower = rng.uniform(-1.0, 0.5, size=n)
        upper = lower + rng.uniform(0.1, 2.0, size=n) if trial % 2 else None
        want = _bvls_qp(quad, lin, lower, upper)
        got = solve_box_qp(jnp.asarray(quad), jnp.asarray(lin), jnp.asarray(lower),
                           upper=None if upper is None else jnp.asarray(upper))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * max(1.0, np.abs(want).max()))


def _allocation_reference(a, tau, weight, pretension=0.0):
    # the allocation's objective ‖Aᵀu − τ‖² + w ‖u − p‖² (w relative to A Aᵀ's smallest non-zero
    # eigenvalue) as one bounded least-squares problem, u ≥ 0
    ev = np.linalg.eigvalsh(a @ a.T)
    w = weight * ev[ev > 1e-10 * ev[-1]].min()
    nu = a.shape[0]
    p = np.full(nu, pretension)
    stacked = np.concatenate([a.T, np.sqrt(w) * np.eye(nu)])
    target = np.concatenate([tau, np.sqrt(w) * p])
    return lsq_linear(stacked, target, bounds=(0.0, np.inf), method="bvls", tol=1e-15).x


@pytest.mark.parametrize("nu", [3, EXACT_MAX + 2])  # the exact path and qpax's
def test_allocation_paths_equal_bvls(nu, rng):
    for _ in range(6):
        a = 0.015 * rng.normal(size=(nu, 2))  # tendon levers on two bending moments
        tau = rng.normal(size=2)
        want = _allocation_reference(a, tau, 1e-8)
        got = np.asarray(allocate_tensions(a, tau))
        # the exact active set carries the rounding of the weighted normal equations (condition
        # ≈ σ_max²/w ≈ 1e9 here: ≈ 1e-7 relative, measured 1.1e-7); qpax's tolerance is 1e-7 relative
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
        assert got.min() >= -1e-12 * np.abs(want).max()


def test_exact_allocation_derivatives_match_central_differences():
    # three tendons, one of them slack (an active bound): forward and reverse mode against differences
    angles = np.deg2rad([0.0, 120.0, 240.0]) + 0.3
    a = jnp.asarray(0.015 * np.stack([np.cos(angles), np.sin(angles)], axis=1))
    tau = jnp.array([0.7, -0.4])
    u = allocate_tensions(a, tau)
    assert float(jnp.min(u)) == 0.0 and float(jnp.max(u)) > 1.0
    fwd = jax.jacfwd(lambda t: allocate_tensions(a, t))(tau)
    rev = jax.jacrev(lambda t: allocate_tensions(a, t))(tau)
    h = 1e-6
    diff = np.stack([(allocate_tensions(a, tau + h * e) - allocate_tensions(a, tau - h * e)) / (2 * h)
                     for e in np.eye(2)], axis=1)
    scale = np.abs(diff).max()
    np.testing.assert_allclose(fwd, diff, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(rev, diff, rtol=0, atol=1e-7 * scale)
    # the produced force follows the asked one exactly where it is reachable
    np.testing.assert_allclose(a.T @ fwd, np.eye(2), atol=1e-6)
