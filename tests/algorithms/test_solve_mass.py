"""``solve_mass`` (algorithms/_recursion.py): the unrolled Cholesky against LAPACK's.

Same factorization, so the solutions agree to round-off (stated: 1e-12 relative to |x|, for
condition numbers ≤ 1e3 here), for vector and matrix right-hand sides, batched, with their
derivatives; a matrix that is not positive definite gives NaN on both paths (forward_dynamics
turns that into an error).
"""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from kane_jax.algorithms import _recursion


def _lapack(m, r):
    return jsl.cho_solve(jsl.cho_factor(m, lower=True), r)


# compiled once per size (eagerly the unrolled factorization ran operation by operation)
_fast_batched = jax.jit(jax.vmap(_recursion.solve_mass))
_lapack_batched = jax.jit(jax.vmap(_lapack))
_fast_derivative = jax.jit(lambda m, r: jax.jacfwd(lambda x: _recursion.solve_mass(0.5 * (x + x.T), r))(m))
_lapack_derivative = jax.jit(lambda m, r: jax.jacfwd(lambda x: _lapack(0.5 * (x + x.T), r))(m))


def test_unrolled_cholesky_equals_lapack():
    rng = np.random.default_rng(5)
    for n in range(1, _recursion.UNROLLED_CHOLESKY + 1):
        a = rng.normal(size=(4, n, n))
        m = jnp.asarray(a @ np.swapaxes(a, 1, 2) + n * np.eye(n))
        for r in (jnp.asarray(rng.normal(size=(4, n))), jnp.asarray(rng.normal(size=(4, n, 3)))):
            fast = _fast_batched(m, r)
            ref = _lapack_batched(m, r)
            np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(ref))))
        # derivative along symmetric perturbations of the matrix (what jacfwd of FD takes through
        # it: M and its tangents are symmetric; LAPACK's rule symmetrizes, the unrolled one reads
        # the lower triangle, so they differ only on non-symmetric directions)
        d_fast = _fast_derivative(m[0], r[0, :, 0])
        d_ref = _lapack_derivative(m[0], r[0, :, 0])
        np.testing.assert_allclose(d_fast, d_ref, rtol=0, atol=1e-11 * float(jnp.max(jnp.abs(d_ref))))


def test_not_positive_definite_gives_nan():
    m = jnp.diag(jnp.array([1.0, -2.0, 3.0]))
    assert np.all(np.isnan(np.asarray(_recursion.solve_mass(m, jnp.ones(3)))))
    big = _recursion.UNROLLED_CHOLESKY + 1  # the LAPACK path
    m = jnp.diag(jnp.concatenate([jnp.ones(big - 1), -jnp.ones(1)]))
    assert np.all(np.isnan(np.asarray(_recursion.solve_mass(m, jnp.ones(big)))))


def test_custom_jvp_is_the_derivative_of_the_unrolled_solve():
    """The unrolled path's JVP rule (``M⁻¹ (dr − dM x)`` with the primal's factor, dM read from its
    lower triangle like the factorization) against five-point central differences of the same
    function, along non-symmetric matrix directions and for vector and matrix right-hand sides,
    in forward and reverse mode (stated: 1e-8 relative to the largest entry; the differences'
    truncation and round-off are ≈ 1e-10 at this step)."""
    rng = np.random.default_rng(11)
    h = 1e-3
    for n in (1, 4, _recursion.UNROLLED_CHOLESKY):
        a = rng.normal(size=(n, n))
        m0 = jnp.asarray(a @ a.T + n * np.eye(n))
        for r0 in (jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=(n, 2)))):
            dm, dr = jnp.asarray(rng.normal(size=(n, n))), jnp.asarray(rng.normal(size=r0.shape))

            def f(t, r0=r0, dm=dm, dr=dr, m0=m0):
                return _recursion.solve_mass(m0 + t * dm, r0 + t * dr)

            ref = (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)
            fwd = jax.jvp(f, (0.0,), (1.0,))[1]
            rev = jax.jacrev(f)(0.0)
            scale = float(jnp.max(jnp.abs(ref)))
            np.testing.assert_allclose(fwd, ref, rtol=0, atol=1e-8 * scale)
            np.testing.assert_allclose(rev, ref, rtol=0, atol=1e-8 * scale)
