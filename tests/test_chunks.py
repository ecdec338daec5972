"""``_chunks.in_chunks``: a batched kernel evaluated in chunks gives ``vmap``'s values.

The oracle is the plain ``vmap`` of the same function: equal to 1e-14 relative for batches smaller
than, equal to, a multiple of and not a multiple of the chunk, with unbatched and static arguments
and nested ``vmap``. For the forward dynamics, the kernel evaluated state by state (to the round-off
of its solve, ε·cond(M)) and its derivatives (its ``custom_jvp``) through a batch.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax._chunks import CPU_CHUNK, CPU_MIN_BATCH, in_chunks
from kane_jax.algorithms._fd_derivative import forward_dynamics_direct


def _kernel(x, pair, scale, power):
    a, b = pair
    return {"y": jnp.sin(x * a) * scale + b[0] ** power, "z": jnp.cumsum(x) * b[1]}


def _close(got, want, rtol=1e-14):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0)


@pytest.mark.parametrize("size", [1, CPU_CHUNK, CPU_MIN_BATCH - 1, CPU_MIN_BATCH + 3, 2 * CPU_MIN_BATCH])
def test_chunked_vmap_equals_vmap(size):
    rng = np.random.default_rng(size)
    x = jnp.asarray(rng.normal(size=(size, 4)))
    a = jnp.asarray(rng.normal(size=(4,)))
    b = jnp.asarray(rng.normal(size=(size, 2)))
    chunked = jax.jit(jax.vmap(lambda x, b: in_chunks(_kernel)(x, (a, b), 2.5, 3)))
    plain = jax.jit(jax.vmap(lambda x, b: _kernel(x, (a, b), 2.5, 3)))
    _close(chunked(x, b), plain(x, b))
    # a loop over the chunks exactly for batches of CPU_MIN_BATCH or more (on a CPU)
    text = chunked.lower(x, b).compile().as_text()
    assert (" while(" in text) == (size >= CPU_MIN_BATCH and jax.default_backend() == "cpu")


def test_nested_vmap_and_unbatched_calls():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(3, CPU_MIN_BATCH + 1, 4)))
    pair = (jnp.asarray(rng.normal(size=(4,))), jnp.asarray(rng.normal(size=(2,))))
    chunked = jax.vmap(jax.vmap(lambda x: in_chunks(_kernel)(x, pair, 0.5, 2)))
    _close(jax.jit(chunked)(x), jax.vmap(jax.vmap(lambda x: _kernel(x, pair, 0.5, 2)))(x))
    _close(in_chunks(_kernel)(x[0, 0], pair, 0.5, 2), _kernel(x[0, 0], pair, 0.5, 2))


def test_batched_forward_dynamics_and_its_derivatives():
    """A six-strain PCS rod behind a revolute joint, 35 states (four chunks and a remainder): the
    batched FD against the kernel evaluated state by state, to the round-off of the solve through
    this stiff rod's M (ε·cond(M) ≈ 2.5e-11 of the largest entry; cond(M) 6e4–1.1e5: measured
    1.05e-12 after `_series.trig`, NumPy's own solve of the same M and bias differs from either
    by 7e-13 … 1.1e-12); independent of cond(M), its backward error ``ID(q, q̇, q̈_batched) − τ``, to
    1e-14 of ``|M| |q̈| + |bias| + |τ|`` per state (measured 1.4e-16); and forward- against
    reverse-mode derivatives of the batched FD (a random weighting of the forward-mode Jacobians
    against one reverse pass, 1e-9 relative)."""
    rod = kj.CosseratPCS(length=0.15, radius=0.01, n_radial=1, n_angular=4)
    chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), rod)], gravity=(0.0, 0.0, -9.81))
    n = chain.nq
    rng = np.random.default_rng(8)
    q = jnp.asarray(rng.uniform(-0.3, 0.3, (35, n)))
    qd, tau = jnp.asarray(rng.normal(size=(35, n))), jnp.asarray(rng.normal(size=(35, n)))
    program = jax.jit(jax.vmap(lambda q, qd, t: kj.forward_dynamics(chain, q, qd, t, check=False)))
    batched = program(q, qd, tau)
    if jax.default_backend() == "cpu":  # in chunks: the intermediates hold 8 or 3 states, not 35
        # (arrays of the whole batch in the optimized program, jaxlib 0.10.2: 68 in chunks, 6,604 in one vmap)
        text = program.lower(q, qd, tau).compile().as_text()
        assert text.count("f64[35,") < 200, text.count("f64[35,")
    one = jax.jit(lambda q, qd, t: forward_dynamics_direct(chain, q, qd, t))
    ref = jnp.stack([one(q[i], qd[i], tau[i]) for i in range(35)])
    mass = jax.vmap(lambda x: kj.mass_matrix(chain, x))(q)
    cond = float(np.max(np.linalg.cond(np.asarray(mass))))
    tol = np.finfo(np.float64).eps * cond * float(jnp.max(jnp.abs(ref)))
    np.testing.assert_allclose(batched, ref, rtol=0, atol=tol)
    # and independent of cond(M): each batched state's accelerations satisfy its own ID (backward error)
    ident = jax.jit(jax.vmap(lambda x, v, a: kj.inverse_dynamics(chain, x, v, a)))
    bias = ident(q, qd, jnp.zeros_like(q))
    scale = (jnp.max(jnp.abs(mass), axis=(1, 2)) * jnp.max(jnp.abs(batched), axis=1)
             + jnp.max(jnp.abs(bias), axis=1) + jnp.max(jnp.abs(tau), axis=1))
    backward = float(jnp.max(jnp.max(jnp.abs(ident(q, qd, batched) - tau), axis=1) / scale))
    assert backward < 1e-14, backward  # measured 1.4e-16
    fd = lambda x, v, t: kj.forward_dynamics(chain, x, v, t, check=False)  # noqa: E731
    fwd = jax.jit(jax.vmap(jax.jacfwd(fd)))(q, qd, tau)
    weights = jnp.asarray(rng.normal(size=(35, n)))
    rev = jax.jit(jax.grad(lambda x: jnp.sum(weights * jax.vmap(fd)(x, qd, tau))))(q)  # one reverse pass
    expected = jnp.sum(weights[:, :, None] * fwd, axis=1)
    np.testing.assert_allclose(rev, expected, rtol=0, atol=1e-9 * float(jnp.max(jnp.abs(expected))))


def test_chain_without_coordinates_gives_empty_accelerations():
    """A chain of fixed rigid bodies has no coordinates: its FD is an empty vector, for one state and
    for a batch in chunks (zero-size outputs through the chunks' reshapes); it raised before
    (the unrolled solve stacked no entries)."""
    chain = kj.Chain([(kj.Fixed(), kj.RigidBody(mass=1.0, inertia=jnp.eye(3) * 0.01))])
    z = jnp.zeros((CPU_MIN_BATCH + 5, 0))
    assert kj.forward_dynamics(chain, z[0], z[0], z[0]).shape == (0,)
    batched = jax.jit(jax.vmap(lambda q: kj.forward_dynamics(chain, q, q, q, check=False)))(z)
    assert batched.shape == z.shape
