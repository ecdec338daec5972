"""``solve_mass`` (algorithms/_cholesky.py): the unrolled and the rolled Cholesky against LAPACK's.

Same factorization, so the solutions agree to round-off (stated: 1e-12 relative to |x|, for
condition numbers ≤ 1e3 here), for vector and matrix right-hand sides, batched, with their
derivatives; a matrix that is not positive definite gives NaN on every path (forward_dynamics
turns that into an error).
"""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from kane_jax.algorithms import _cholesky


def _lapack(m, r):
    return jsl.cho_solve(jsl.cho_factor(m, lower=True), r)


def _max_abs(x) -> float:
    return float(np.max(np.abs(np.asarray(x))))


@jax.jit
def _unrolled_and_lapack(m, r, r2):
    """Both solves of one size, batched over vector and matrix right-hand sides, and both derivatives
    along symmetric perturbations, as one compiled program per size (as six programs with the tolerances'
    arithmetic run eagerly this test took 10.2 s alone, 7.0 s now; the same operations)."""
    d_fast = jax.jacfwd(lambda x: _cholesky.solve_mass(0.5 * (x + x.T), r2[0, :, 0]))(m[0])
    d_ref = jax.jacfwd(lambda x: _lapack(0.5 * (x + x.T), r2[0, :, 0]))(m[0])
    return ((jax.vmap(_cholesky.solve_mass)(m, r), jax.vmap(_lapack)(m, r)),
            (jax.vmap(_cholesky.solve_mass)(m, r2), jax.vmap(_lapack)(m, r2)), (d_fast, d_ref))


def test_unrolled_cholesky_equals_lapack():
    rng = np.random.default_rng(5)
    for n in range(1, _cholesky.UNROLLED_CHOLESKY + 1):
        a = rng.normal(size=(4, n, n))
        m = jnp.asarray(a @ np.swapaxes(a, 1, 2) + n * np.eye(n))
        r_vec, r_mat = jnp.asarray(rng.normal(size=(4, n))), jnp.asarray(rng.normal(size=(4, n, 3)))
        vec, mat, (d_fast, d_ref) = _unrolled_and_lapack(m, r_vec, r_mat)
        for fast, ref in (vec, mat):
            np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12 * _max_abs(ref))
        # derivative along symmetric perturbations of the matrix (what jacfwd of FD takes through
        # it: M and its tangents are symmetric; LAPACK's rule symmetrizes, the unrolled one reads
        # the lower triangle, so they differ only on non-symmetric directions)
        np.testing.assert_allclose(d_fast, d_ref, rtol=0, atol=1e-11 * _max_abs(d_ref))


def test_not_positive_definite_gives_nan():
    m = jnp.diag(jnp.array([1.0, -2.0, 3.0]))
    assert np.all(np.isnan(np.asarray(_cholesky.solve_mass(m, jnp.ones(3)))))
    for big in (_cholesky.UNROLLED_CHOLESKY + 1, _cholesky.ROLLED_CHOLESKY + 1):  # rolled (CPU), LAPACK
        m = jnp.diag(jnp.concatenate([jnp.ones(big - 1), -jnp.ones(1)]))
        assert np.all(np.isnan(np.asarray(_cholesky.solve_mass(m, jnp.ones(big)))))
        # batched: the rolled path's batching rule is LAPACK's over the batch
        assert np.all(np.isnan(np.asarray(jax.vmap(_cholesky.solve_mass)(m[None], jnp.ones((1, big))))))


def test_custom_jvp_is_the_derivative_of_the_unrolled_solve():
    """The unrolled path's JVP rule (``M⁻¹ (dr − dM x)`` with the primal's factor, dM read from its
    lower triangle like the factorization) against five-point central differences of the same
    function, along non-symmetric matrix directions and for vector and matrix right-hand sides,
    in forward and reverse mode (stated: 1e-8 relative to the largest entry; the differences'
    truncation and round-off are ≈ 1e-10 at this step)."""
    rng = np.random.default_rng(11)
    h = 1e-3

    @jax.jit
    def stencil_fwd_rev(m0, r0, dm, dr):  # one compiled program per case (eagerly: ≈ 100 small ones each)
        def f(t):
            return _cholesky.solve_mass(m0 + t * dm, r0 + t * dr)

        at = jax.vmap(f)(jnp.array([h, -h, 2 * h, -2 * h]))
        ref = (8 * (at[0] - at[1]) - (at[2] - at[3])) / (12 * h)
        return ref, jax.jvp(f, (0.0,), (1.0,))[1], jax.jacrev(f)(0.0)

    for n in (1, 4, _cholesky.UNROLLED_CHOLESKY):
        a = rng.normal(size=(n, n))
        m0 = jnp.asarray(a @ a.T + n * np.eye(n))
        for r0 in (jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=(n, 2)))):
            dm, dr = jnp.asarray(rng.normal(size=(n, n))), jnp.asarray(rng.normal(size=r0.shape))
            ref, fwd, rev = stencil_fwd_rev(m0, r0, dm, dr)
            scale = _max_abs(ref)
            np.testing.assert_allclose(fwd, ref, rtol=0, atol=1e-8 * scale)
            np.testing.assert_allclose(rev, ref, rtol=0, atol=1e-8 * scale)


def test_rolled_cholesky_equals_lapack_with_derivatives():
    """Sizes above the unrolled one (on a CPU: rolled loops for one system, LAPACK over a batch,
    inside ``lax.custom_linear_solve``): values for vector and matrix right-hand sides, unbatched and
    batched (both arguments, or the right-hand side alone), forward and reverse Jacobians, batched
    Jacobians and a second derivative, each against LAPACK's solve of the same symmetric matrix
    (stated: 1e-12 relative to the largest entry of the reference; measured ≤ 7e-16)."""
    rng = np.random.default_rng(7)

    def fast(m, r):
        return _cholesky.solve_mass(0.5 * (m + m.T), r)

    def ref(m, r):
        return _lapack(0.5 * (m + m.T), r)

    @jax.jit
    def pairs(m, r, r2):  # (rolled, LAPACK) pairs of one size, one compiled program (≈ 20 programs before)
        def both(make):
            return make(fast), make(ref)

        def energy(f):
            return lambda t: jnp.sum(f(m[0] + t * m[1], r[0] + t * r[1]) ** 2)

        rev_fast, rev_ref = both(lambda f: jax.jacrev(f, argnums=(0, 1))(m[0], r[0]))
        return [both(lambda f: f(m[0], r[0])), both(lambda f: f(m[0], r2[0])), both(lambda f: jax.vmap(f)(m, r)),
                both(lambda f: jax.vmap(f, (None, 0))(m[0], r2)), both(lambda f: jax.jacfwd(f)(m[0], r[0])),
                (rev_fast[0], rev_ref[0]), (rev_fast[1], rev_ref[1]), both(lambda f: jax.vmap(jax.jacfwd(f))(m, r)),
                both(lambda f: jax.grad(jax.grad(energy(f)))(0.3))]

    for n in (_cholesky.UNROLLED_CHOLESKY + 1, 18):
        a = rng.normal(size=(3, n, n))
        m = jnp.asarray(a @ np.swapaxes(a, 1, 2) + n * np.eye(n))
        r, r2 = jnp.asarray(rng.normal(size=(3, n))), jnp.asarray(rng.normal(size=(3, n, 2)))
        for got, want in pairs(m, r, r2):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * _max_abs(want))


def _horner_rhs(x):
    out = jnp.full_like(x, 0.3)
    for k in range(13):
        out = out * x + (k + 1.0)
    return out


def test_buffered_unrolled_solve_computes_its_right_hand_side_once():
    """With ``buffer`` the right-hand side is a buffer of its own: its producer (13 multiplies, a
    stand-in for the bias of a soft chain) is not fused into the substitutions' kernels and computed
    again in each. Counted in the optimized program against the same solve of a precomputed
    right-hand side (jaxlib 0.10.2: 66 for the solve alone, 79 with the producer and the buffer,
    144 without the buffer)."""
    n = 6
    a = np.random.default_rng(2).normal(size=(n, n))
    m = jnp.asarray(a @ a.T + n * np.eye(n))
    x = jnp.linspace(0.1, 0.9, n)

    def multiplies(f):
        return jax.jit(f).lower(m, x).compile().as_text().count(" multiply(")

    alone = multiplies(lambda m, r: _cholesky.solve_mass(m, r))
    produced = multiplies(lambda m, x: _cholesky.solve_mass(m, _horner_rhs(x)))
    assert produced <= alone + 13 + 2, (alone, produced)
    np.testing.assert_allclose(_cholesky.solve_mass(m, _horner_rhs(x)), _lapack(m, _horner_rhs(x)), rtol=1e-12)
