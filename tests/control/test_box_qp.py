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


_solve_box_qp = jax.jit(solve_box_qp)  # one compiled program per size and bound structure (eagerly ≈ 100 small ones)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_box_qp_equals_bvls(n, rng):
    for trial in range(12):
        m = rng.normal(size=(n, n))
        quad = m @ m.T + 0.05 * np.eye(n)
        lin = 3.0 * rng.normal(size=n)
        lower = rng.uniform(-1.0, 0.5, size=n)
        upper = lower + rng.uniform(0.1, 2.0, size=n) if trial % 2 else None
        want = _bvls_qp(quad, lin, lower, upper)
        got = _solve_box_qp(jnp.asarray(quad), jnp.asarray(lin), jnp.asarray(lower),
                            upper=None if upper is None else jnp.asarray(upper))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * max(1.0, np.abs(want).max()))


def _allocation_reference(a, tau, weight, pretension=0.0, maximum=np.inf):
    # the allocation's objective ‖Aᵀu − τ‖² + w ‖u − p‖² (w relative to A Aᵀ's smallest non-zero
    # eigenvalue) as one bounded least-squares problem, u ≥ 0
    ev = np.linalg.eigvalsh(a @ a.T)
    w = weight * ev[ev > 1e-10 * ev[-1]].min()
    nu = a.shape[0]
    p = np.full(nu, pretension)
    stacked = np.concatenate([a.T, np.sqrt(w) * np.eye(nu)])
    target = np.concatenate([tau, np.sqrt(w) * p])
    return lsq_linear(stacked, target, bounds=(0.0, maximum), method="bvls", tol=1e-15).x


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
    alloc = jax.jit(lambda t: allocate_tensions(a, t))
    u = alloc(tau)
    assert float(jnp.min(u)) == 0.0 and float(jnp.max(u)) > 1.0
    fwd, rev = jax.jit(lambda t: (jax.jacfwd(alloc)(t), jax.jacrev(alloc)(t)))(tau)
    h = 1e-6
    diff = np.stack([(alloc(tau + h * e) - alloc(tau - h * e)) / (2 * h) for e in np.eye(2)], axis=1)
    scale = np.abs(diff).max()
    np.testing.assert_allclose(fwd, diff, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(rev, diff, rtol=0, atol=1e-7 * scale)
    # the produced force follows the asked one exactly where it is reachable
    np.testing.assert_allclose(a.T @ fwd, np.eye(2), atol=1e-6)


def _three_bodies(rng):
    # 003-sim1's structure: three bodies of three tendons, four matched moments each, and two matched
    # components that no tendon reaches (a rigid joint's, say)
    groups = [((0, 1, 2), (0, 1, 2, 3)), ((3, 4, 5), (4, 5, 6, 7)), ((6, 7, 8), (8, 9, 10, 11))]
    a = np.zeros((9, 14))
    for inputs, comps in groups:
        a[np.ix_(inputs, comps)] = 0.015 * rng.normal(size=(3, 4))
    return a, groups


@pytest.mark.parametrize("maximum", [None, 40.0])
def test_allocation_in_independent_groups_equals_bvls(maximum, rng):
    for _ in range(6):
        a, groups = _three_bodies(rng)
        tau = rng.normal(size=14)
        want = _allocation_reference(a, tau, 1e-8, maximum=np.inf if maximum is None else maximum)
        got = np.asarray(allocate_tensions(a, tau, maximum=maximum, blocks=groups))
        # the same problem (w of the whole matrix): exact per group, to the weighted normal equations'
        # rounding as in the one-group case above
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
        assert got.min() >= 0.0
        if maximum is not None:
            assert got.max() <= maximum
        # and the whole problem's solver (qpax, nine inputs) to its tolerance
        np.testing.assert_allclose(got, allocate_tensions(a, tau, maximum=maximum), rtol=0,
                                   atol=1e-6 * np.abs(want).max())


def test_allocation_in_groups_differentiates_and_refuses_bad_groups(rng):
    a, groups = _three_bodies(rng)
    tau = jnp.asarray(rng.normal(size=14))

    @jax.jit
    def alloc(t):
        return allocate_tensions(jnp.asarray(a), t, blocks=groups)

    fwd, rev = jax.jit(lambda t: (jax.jacfwd(alloc)(t), jax.jacrev(alloc)(t)))(tau)
    h = 1e-6
    diff = np.stack([(alloc(tau + h * e) - alloc(tau - h * e)) / (2 * h) for e in np.eye(14)], axis=1)
    scale = np.abs(diff).max()
    np.testing.assert_allclose(fwd, diff, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(rev, diff, rtol=0, atol=1e-6 * scale)
    np.testing.assert_array_equal(fwd[:, 12:], 0.0)  # the components no input reaches
    with pytest.raises(ValueError, match="blocks: expected groups whose inputs"):
        allocate_tensions(a, tau, blocks=groups[:2])  # inputs 6..8 in no group
    with pytest.raises(ValueError, match="blocks: expected distinct components"):
        allocate_tensions(a, tau, blocks=[groups[0], ((3, 4, 5), (3, 4)), groups[2]])
    with pytest.raises(ValueError, match="zero outside the groups"):
        allocate_tensions(a + 1e-3, tau, blocks=groups)
    with pytest.raises(TypeError, match="blocks"):
        allocate_tensions(a, tau, blocks=[(0, 1)])
