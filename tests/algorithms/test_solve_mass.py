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


# compiled once per size (eagerly the unrolled factorization ran operation by operation)
_fast_batched = jax.jit(jax.vmap(_cholesky.solve_mass))
_lapack_batched = jax.jit(jax.vmap(_lapack))
_fast_derivative = jax.jit(lambda m, r: jax.jacfwd(lambda x: _cholesky.solve_mass(0.5 * (x + x.T), r))(m))
_lapack_derivative = jax.jit(lambda m, r: jax.jacfwd(lambda x: _lapack(0.5 * (x + x.T), r))(m))


def test_unrolled_cholesky_equals_lapack():
    rng = np.random.default_rng(5)
    for n in range(1, _cholesky.UNROLLED_CHOLESKY + 1):
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
    for n in (1, 4, _cholesky.UNROLLED_CHOLESKY):
        a = rng.normal(size=(n, n))
        m0 = jnp.asarray(a @ a.T + n * np.eye(n))
        for r0 in (jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=(n, 2)))):
            dm, dr = jnp.asarray(rng.normal(size=(n, n))), jnp.asarray(rng.normal(size=r0.shape))

            def f(t, r0=r0, dm=dm, dr=dr, m0=m0):
                return _cholesky.solve_mass(m0 + t * dm, r0 + t * dr)

            ref = (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)
            fwd = jax.jvp(f, (0.0,), (1.0,))[1]
            rev = jax.jacrev(f)(0.0)
            scale = float(jnp.max(jnp.abs(ref)))
            np.testing.assert_allclose(fwd, ref, rtol=0, atol=1e-8 * scale)
            np.testing.assert_allclose(rev, ref, rtol=0, atol=1e-8 * scale)


def test_rolled_cholesky_equals_lapack_with_derivatives():
    """Sizes above the unrolled one (on a CPU: rolled loops for one system, LAPACK over a batch,
    inside ``lax.custom_linear_solve``): values for vector and matrix right-hand sides, unbatched and
    batched (both arguments, or the right-hand side alone), forward and reverse Jacobians, batched
    Jacobians and a second derivative, each against LAPACK's solve of the same symmetric matrix
    (stated: 1e-12 relative to the largest entry of the reference; measured ≤ 7e-16)."""
    rng = np.random.default_rng(7)

    def close(a, b):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(b))))

    def fast(m, r):
        return _cholesky.solve_mass(0.5 * (m + m.T), r)

    def ref(m, r):
        return _lapack(0.5 * (m + m.T), r)

    for n in (_cholesky.UNROLLED_CHOLESKY + 1, 18):
        a = rng.normal(size=(3, n, n))
        m = jnp.asarray(a @ np.swapaxes(a, 1, 2) + n * np.eye(n))
        r, r2 = jnp.asarray(rng.normal(size=(3, n))), jnp.asarray(rng.normal(size=(3, n, 2)))
        close(jax.jit(fast)(m[0], r[0]), ref(m[0], r[0]))
        close(jax.jit(fast)(m[0], r2[0]), ref(m[0], r2[0]))
        close(jax.jit(jax.vmap(fast))(m, r), jax.vmap(ref)(m, r))
        close(jax.jit(jax.vmap(fast, (None, 0)))(m[0], r2), jax.vmap(ref, (None, 0))(m[0], r2))
        close(jax.jit(jax.jacfwd(fast))(m[0], r[0]), jax.jacfwd(ref)(m[0], r[0]))
        for got, want in zip(jax.jit(jax.jacrev(fast, argnums=(0, 1)))(m[0], r[0]),
                             jax.jacrev(ref, argnums=(0, 1))(m[0], r[0])):
            close(got, want)
        close(jax.jit(jax.vmap(jax.jacfwd(fast)))(m, r), jax.vmap(jax.jacfwd(ref))(m, r))

        def energy(f, m=m, r=r):
            return lambda t: jnp.sum(f(m[0] + t * m[1], r[0] + t * r[1]) ** 2)

        close(jax.jit(jax.grad(jax.grad(energy(fast))))(0.3), jax.grad(jax.grad(energy(ref)))(0.3))


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
