"""allocate_tensions against independent references: least squares, SciPy's NNLS, a closed-form projection."""

from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import nnls

from kane_jax.control import allocate_tensions


def test_reachable_force_is_matched_exactly(rng):
    a = rng.uniform(0.1, 1.0, size=(3, 3))  # three pulling tendons spanning the positive cone
    u_true = np.array([2.0, 0.5, 1.0])
    u = allocate_tensions(a, a.T @ u_true)
    np.testing.assert_allclose(u, u_true, rtol=1e-6, atol=1e-7)


def test_tendons_never_push_and_match_nnls(rng):
    # antagonistic pairs on two coordinates: the least-squares solution has negative tensions
    a = np.array([[1.0, 0.2], [-1.0, 0.1], [0.3, 1.0], [0.1, -1.0]])
    tau = np.array([-3.0, 2.0])
    lstsq = np.linalg.lstsq(a.T, tau, rcond=None)[0]
    assert lstsq.min() < -0.5  # what the old controllers asked for
    u = np.asarray(allocate_tensions(a, tau))
    assert u.min() >= -1e-9
    # among force-exact solutions, the nearest to the (zero) pretension: SciPy's NNLS + minimum norm
    ref, res = nnls(a.T, tau)
    assert res < 1e-9
    np.testing.assert_allclose(a.T @ u, tau, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(u), min(np.linalg.norm(u), np.linalg.norm(ref)), rtol=1e-6)


def test_unreachable_force_gives_nnls_residual():
    a = np.array([[1.0, 0.0], [0.0, 1.0]])  # each tendon pulls one coordinate, positively only
    tau = np.array([-2.0, 3.0])
    u = np.asarray(allocate_tensions(a, tau))
    ref, _ = nnls(a.T, tau)
    np.testing.assert_allclose(u, ref, atol=1e-6)  # (0, 3): the negative part is unreachable


def test_pretension_lives_in_the_null_space():
    a = np.array([[1.0], [-1.0]])  # an antagonistic pair on one joint: null space (1, 1)
    tau = np.array([0.4])
    u = np.asarray(allocate_tensions(a, tau, pretension=5.0))
    # closed form: u = p + Aᵀ⁺ (τ − Aᵀ p) = (5.2, 4.8)
    np.testing.assert_allclose(u, [5.2, 4.8], atol=1e-5)
    capped = np.asarray(allocate_tensions(a, tau, pretension=5.0, maximum=5.1))
    assert capped.max() <= 5.1 + 1e-8
    np.testing.assert_allclose(a.T @ capped, tau, atol=1e-5)


def test_jit_vmap_and_gradient():
    a = jnp.array([[1.0, 0.2], [-1.0, 0.1], [0.3, 1.0], [0.1, -1.0]])
    taus = jnp.array([[1.0, 2.0], [-1.0, 0.5]])
    us = jax.jit(jax.vmap(lambda t: allocate_tensions(a, t)))(taus)
    for t, u in zip(taus, us):
        np.testing.assert_allclose(u, allocate_tensions(a, t), atol=1e-8)
    # d/dτ of the produced force = identity where τ is reachable (qpax's smoothed KKT gradient)
    # under the tests' rank promotion "raise": qpax's implicit broadcasts run in a scope of their own
    jac = jax.jacrev(lambda t: a.T @ allocate_tensions(a, t))(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(jac, np.eye(2), atol=1e-2)


def test_tendons_at_120_degrees_match_the_closed_form_at_every_scale():
    # three tendons 120° apart at 15 mm on two bending moments (003-sim2's segment): the exact
    # solutions are u_ls + c (1, 1, 1) (u_ls, the least-squares tensions, sums to zero), the
    # nearest to zero pretension lifts the smallest to zero: u = u_ls − min(u_ls). The same
    # relative accuracy from millinewtons to kilonewtons: the solver works in tensions relative to
    # their size (an absolute tolerance that qpax meets in newtons is loose in millinewtons).
    angles = np.deg2rad([0.0, 120.0, 240.0]) + 0.3
    a = 0.015 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    rng = np.random.default_rng(3)
    for scale in (1e-3, 1.0, 1e3):
        tau = scale * rng.normal(size=2)
        u_ls = np.linalg.lstsq(a.T, tau, rcond=None)[0]
        ref = u_ls - u_ls.min()
        u = np.asarray(allocate_tensions(a, tau))
        np.testing.assert_allclose(u, ref, rtol=0, atol=1e-7 * np.abs(ref).max())


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="matrix"):
        allocate_tensions(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="force"):
        allocate_tensions(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="maximum"):
        allocate_tensions(np.ones((2, 1)), np.ones(1), minimum=1.0, maximum=0.5)
    with pytest.raises(ValueError, match="weight"):
        allocate_tensions(np.ones((2, 1)), np.ones(1), weight=0.0)


def test_float32_inputs_get_the_float64_solution():
    # random 3-tendon problems on which qpax's interior point in single precision returned NaN or
    # tensions off by up to 14 % (measured): solved in float64, returned in float32
    rng = np.random.default_rng(0)
    for _ in range(3):
        a = rng.normal(size=(3, 2)) * 0.015  # tendon levers of a 15 mm offset
        for tau in (np.array([0.5, -0.3]), np.array([3.0, 1.0]), np.zeros(2)):
            ref = np.asarray(allocate_tensions(a, tau))
            u = allocate_tensions(jnp.asarray(a, jnp.float32), jnp.asarray(tau, jnp.float32))
            assert u.dtype == jnp.float32
            np.testing.assert_allclose(u, ref.astype(np.float32), rtol=1e-6, atol=1e-6 * max(np.abs(ref).max(), 1.0))
    with jax.enable_x64(False), pytest.raises(ValueError, match="float64"):
        allocate_tensions(jnp.ones((2, 1), jnp.float32), jnp.ones(1, jnp.float32))


def test_integer_matrix_keeps_a_fractional_force():
    # an integer lever matrix (unit levers) with a fractional force: the force is not truncated
    a = np.array([[1, 0], [0, 1], [1, 1]])
    tau = np.array([0.5, 0.25])
    u = allocate_tensions(a, tau)
    assert jnp.issubdtype(u.dtype, jnp.floating)
    np.testing.assert_allclose(a.T @ np.asarray(u), tau, atol=1e-8)
    np.testing.assert_allclose(u, allocate_tensions(a.astype(float), tau), atol=1e-12)


def test_eager_calls_reuse_one_compiled_solve(caplog):
    # called eagerly (a notebook, a script), the solve is one compiled program per problem structure:
    # new matrices, forces and bounds run it again without compiling (op by op, its first call had
    # compiled ≈ 100 small programs and every call dispatched as many operations); the same tensions
    # as inside a caller's jit
    def compiles():
        return [r for r in caplog.records if "Finished XLA compilation" in r.getMessage()]

    a = np.array([[1.0, 0.2], [-1.0, 0.1], [0.3, 1.0]])
    jax.clear_caches()  # the first call compiles (and the log shows it: the check below can see a compile)
    with caplog.at_level(logging.WARNING), jax.log_compiles(True):
        allocate_tensions(a, np.array([1.0, 2.0]), maximum=5.0)
        assert compiles()
        caplog.clear()
        u = allocate_tensions(1.1 * a, np.array([-1.0, 0.5]), maximum=4.0)
    assert not compiles()
    inside = jax.jit(lambda m, t: allocate_tensions(m, t, maximum=4.0))(1.1 * a, np.array([-1.0, 0.5]))
    np.testing.assert_allclose(u, inside, rtol=0, atol=1e-12 * float(np.max(np.abs(inside))))
