"""The element-wise LU factorization of the Rosenbrock–W stage systems (``simulation/_small_lu.py``).

References: LAPACK's ``getrf`` through SciPy (the same factors and row order: partial pivoting picks
the same rows), ``numpy.linalg.solve``, and the optimized program itself (no dot, scatter or custom
call, the condition for XLA:CPU to compile a solver loop into one kernel).
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from kane_jax.simulation import _small_lu

TOL = 1e-12  # relative to the largest entry


def _permutation(piv: np.ndarray) -> np.ndarray:
    """Row order ``perm`` (``(P A)[i] = A[perm[i]]``) from LAPACK's sequential row swaps."""
    perm = np.arange(piv.shape[0])
    for k, p in enumerate(piv):
        perm[[k, p]] = perm[[p, k]]
    return perm


@pytest.mark.parametrize("n", [1, 3, 10, 24])
def test_factors_are_lapacks(n):
    a = np.random.default_rng(n).normal(size=(n, n))
    lu, perm = jax.jit(_small_lu.lu_factor)(jnp.asarray(a))
    lu_ref, piv = scipy.linalg.lu_factor(a)
    np.testing.assert_array_equal(perm, _permutation(piv))
    np.testing.assert_allclose(lu, lu_ref, rtol=0, atol=TOL * np.abs(lu_ref).max())


def test_pivoting_on_a_zero_leading_entry():
    # without row exchanges the first pivot is 0 and the solve is NaN
    a = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]])
    b = np.array([1.0, 2.0, 3.0])
    x = jax.jit(_small_lu.solve)(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=0, atol=1e-14)


@pytest.mark.parametrize("n", [5, _small_lu.UNROLLED_LU + 8])  # element-wise, and LAPACK above the threshold
def test_solve_matches_numpy(n):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(n, n)) + n * np.eye(n)
    b = rng.normal(size=n)
    x = jax.jit(_small_lu.solve)(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=0, atol=TOL * np.abs(x).max())


def test_no_dot_scatter_or_custom_call():
    a, b = jnp.eye(10) + 0.1, jnp.ones(10)
    text = jax.jit(_small_lu.solve).lower(a, b).compile().as_text()
    assert not re.search(r" (dot|scatter|custom-call)\(", text)
