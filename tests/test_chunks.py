"""``_chunks.in_chunks``: a batched kernel evaluated in chunks gives ``vmap``'s values.

The oracle is the plain ``vmap`` of the same function: equal to 1e-14 relative for batches smaller
than, equal to, a multiple of and not a multiple of the chunk, with unbatched and static arguments
and nested ``vmap``; a kernel whose one state's intermediates are large runs state by state, with
the same values. For the forward dynamics, the kernel evaluated state by state (to the round-off
of its solve, ε·cond(M)) and its derivatives (its ``custom_jvp``) through a batch; for the inverse
dynamics and the mass matrix (``in_chunks_differentiable``), the values state by state and the
derivatives of a batch against central differences.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax._chunks import (
    CPU_CHUNK,
    CPU_MIN_BATCH,
    CPU_SEQUENTIAL_BYTES,
    _batched,
    _chunk_size,
    in_chunks,
    program_size,
)
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


def _wide_kernel(x, w):
    """One state's intermediates: three arrays of 4 × 20,000 floats (1.92 MB), an output of 4."""
    outer = x[:, None] * w[None, :]
    return jnp.sum(jnp.sin(outer) * outer, axis=1)


def test_program_size_counts_every_intermediate_once():
    # sin, mul (1,000 floats each), the sum (one); a scan's body (two ops of 1,000 floats) counted once,
    # plus the scan's own outputs (carry 1,000 floats, stacked ys 5 × 1,000); a product's flops 2·m·n·k
    x = jnp.ones(1000)
    assert program_size(jax.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) * 2.0))(x).jaxpr) == (8 * 2001, 0.0)
    scan = jax.make_jaxpr(lambda x: jax.lax.scan(lambda c, _: (jnp.cos(c) + 1.0, c), x, None, length=5))(x)
    assert program_size(scan.jaxpr) == (8 * (2 * 1000 + 1000 + 5 * 1000), 0.0)
    dot = jax.make_jaxpr(lambda a, b: a @ b)(jnp.ones((3, 4)), jnp.ones((4, 5)))
    assert program_size(dot.jaxpr) == (8 * 15, 2.0 * 3 * 5 * 4)


@pytest.mark.parametrize("size", [2, 5, CPU_MIN_BATCH + 3])
def test_large_kernel_runs_state_by_state(size):
    """A kernel whose one state's intermediates exceed CPU_SEQUENTIAL_BYTES runs its batch state after
    state on a CPU, for small batches too: vmap's values (1e-14), and no intermediate holding the batch."""
    rng = np.random.default_rng(size)
    x = jnp.asarray(rng.normal(size=(size, 4)))
    w = jnp.asarray(rng.normal(size=(20_000,)))
    assert program_size(jax.make_jaxpr(_wide_kernel)(x[0], w).jaxpr)[0] > CPU_SEQUENTIAL_BYTES
    chunked = jax.jit(jax.vmap(lambda x: in_chunks(_wide_kernel)(x, w)))
    _close(chunked(x), jax.jit(jax.vmap(lambda x: _wide_kernel(x, w)))(x))
    text = chunked.lower(x).compile().as_text()
    on_cpu = jax.default_backend() == "cpu"
    assert (" while(" in text) == on_cpu
    assert (f"f64[{size},4,20000]" in text) == (not on_cpu)


def test_chunk_follows_the_one_state_program():
    """State by state for large elementwise programs, CPU_CHUNK for medium ones from two chunks on and
    chunks of two below, CPU_CHUNK (or one ``vmap``) for small ones and for programs with matrix
    work — which a wide batch speeds up: a large kernel of matrix products keeps one ``vmap`` at
    B = 5 (no loop in its program)."""
    cpu = jax.default_backend() == "cpu"
    assert _chunk_size(16, (1_000_000, 0.0)) == (1 if cpu else None)
    assert _chunk_size(2 * CPU_CHUNK, (400_000, 0.0)) == (CPU_CHUNK if cpu else None)
    assert _chunk_size(2 * CPU_CHUNK - 1, (400_000, 0.0)) == (2 if cpu else None)
    assert _chunk_size(3, (400_000, 0.0)) is None
    assert _chunk_size(16, (200_000, 0.0)) is None
    assert _chunk_size(CPU_MIN_BATCH, (200_000, 0.0)) == (CPU_CHUNK if cpu else None)
    assert _chunk_size(16, (1_000_000, 1e6)) is None
    assert _chunk_size(1, (1_000_000, 0.0)) is None

    def products(x, w):  # a 200 × 200 matrix times a 200 × 400 one: 1.9 MB of intermediates, 3.2e7 flops
        h = jnp.tanh(w @ (jnp.tile(x, 50)[:, None] * jnp.linspace(0.5, 1.5, 400)[None, :]))
        return jnp.sum(h, axis=1)[:4]

    w = jnp.asarray(np.random.default_rng(0).normal(size=(200, 200))) / 20.0
    x = jnp.asarray(np.random.default_rng(1).normal(size=(5, 4)))
    nbytes, flops = program_size(jax.make_jaxpr(products)(x[0], w).jaxpr)
    assert nbytes > CPU_SEQUENTIAL_BYTES and flops > 1e7
    batched = jax.jit(jax.vmap(lambda x: in_chunks(products)(x, w)))
    _close(batched(x), jax.jit(jax.vmap(lambda x: products(x, w)))(x), rtol=1e-13)
    assert " while(" not in batched.lower(x).compile().as_text()


def test_weak_types_survive_the_one_state_trace():
    """The rule traces the kernel for one state from shapes: a weakly typed scalar argument stays weak,
    so a float32 batch times it stays float32, as under ``vmap`` (a strong float64 would promote)."""
    x = jnp.ones((CPU_MIN_BATCH + 1, 3), jnp.float32)
    scale = jnp.asarray(2.0)  # weakly typed
    chunked = jax.jit(jax.vmap(lambda x: in_chunks(lambda x, s: x * s)(x, scale)))(x)
    assert chunked.dtype == jax.vmap(lambda x: x * scale)(x).dtype == jnp.float32


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


def test_batched_inverse_dynamics_and_mass_matrix_run_in_chunks():
    """The public ID and M of 35 states of a six-strain PCS rod behind a revolute joint: in chunks on
    a CPU (the optimized programs hold arrays of a chunk's states, not of the whole batch) with the
    values of the calls state by state (1e-13 of the largest entry: a chunk's vector code against one
    state's; measured 6e-17 for ID, 1.5e-15 for M), and derivatives of the batch: the forward mode of
    the batched ID along a random direction against central differences of the same batched program
    (h = 1e-5, truncation ≈ h² times the third derivative: 1e-7 of the largest entry), and one reverse
    pass against it (the adjoint identity ``<w, J dq> = <Jᵀ w, dq>``, 1e-12)."""
    rod = kj.CosseratPCS(length=0.15, radius=0.01, n_radial=1, n_angular=4)
    chain = kj.Chain([(kj.Revolute((0.0, 1.0, 0.0)), rod)], gravity=(0.0, 0.0, -9.81))
    n, size = chain.nq, 35
    rng = np.random.default_rng(9)
    q = jnp.asarray(rng.uniform(-0.3, 0.3, (size, n)))
    qd, qdd = jnp.asarray(rng.normal(size=(size, n))), jnp.asarray(rng.normal(size=(size, n)))
    batched_id = jax.vmap(lambda x, v, a: kj.inverse_dynamics(chain, x, v, a))
    ident = jax.jit(batched_id).lower(q, qd, qdd).compile()
    mass = jax.jit(jax.vmap(lambda x: kj.mass_matrix(chain, x))).lower(q).compile()
    if jax.default_backend() == "cpu":  # in chunks: arrays of the whole batch in the optimized programs,
        # jaxlib 0.10.2: ID 122 (4,905 in one vmap), M 42 (2,742)
        for program in (ident, mass):
            assert program.as_text().count(f"f64[{size},") < 200, program.as_text().count(f"f64[{size},")
    tau, m = ident(q, qd, qdd), mass(q)
    tau_ref = jnp.stack([kj.inverse_dynamics(chain, q[i], qd[i], qdd[i]) for i in range(size)])
    m_ref = jnp.stack([kj.mass_matrix(chain, q[i]) for i in range(size)])
    np.testing.assert_allclose(tau, tau_ref, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(tau_ref))))
    np.testing.assert_allclose(m, m_ref, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(m_ref))))
    dq = jnp.asarray(rng.normal(size=(size, n)))
    _, jvp = jax.jit(lambda x, d: jax.jvp(lambda y: batched_id(y, qd, qdd), (x,), (d,)))(q, dq)
    h = 1e-5
    central = (ident(q + h * dq, qd, qdd) - ident(q - h * dq, qd, qdd)) / (2 * h)
    np.testing.assert_allclose(jvp, central, rtol=0, atol=1e-7 * float(jnp.max(jnp.abs(central))))
    weights = jnp.asarray(rng.normal(size=(size, n)))
    grad = jax.jit(jax.grad(lambda x: jnp.sum(weights * batched_id(x, qd, qdd))))(q)
    lhs, rhs = float(jnp.sum(weights * jvp)), float(jnp.sum(grad * dq))
    assert abs(lhs - rhs) < 1e-12 * float(jnp.sum(jnp.abs(weights * jvp))), (lhs, rhs)


def test_only_a_vmapped_call_counts_as_batched():
    """``in_chunks_differentiable`` takes the chunks only for arguments batched by ``vmap`` at the top
    of the trace stack: not for a plain or jitted call, nor inside a derivative (whose rule is the
    kernel's own program)."""
    seen = []

    def probe(x):
        seen.append(_batched((x, 1.0)))
        return x

    x = jnp.ones((3, 2))
    probe(x)
    jax.jit(probe)(x)
    jax.vmap(probe)(x)
    jax.jit(jax.vmap(probe))(x)
    jax.jacfwd(probe)(x[0])
    jax.vmap(jax.jacfwd(probe))(x)
    jax.jacfwd(jax.vmap(probe))(x)
    assert seen == [False, False, True, True, False, False, True], seen


def test_chain_without_coordinates_gives_empty_accelerations():
    """A chain of fixed rigid bodies has no coordinates: its FD is an empty vector, for one state and
    for a batch in chunks (zero-size outputs through the chunks' reshapes); it raised before
    (the unrolled solve stacked no entries)."""
    chain = kj.Chain([(kj.Fixed(), kj.RigidBody(mass=1.0, inertia=jnp.eye(3) * 0.01))])
    z = jnp.zeros((CPU_MIN_BATCH + 5, 0))
    assert kj.forward_dynamics(chain, z[0], z[0], z[0]).shape == (0,)
    batched = jax.jit(jax.vmap(lambda q: kj.forward_dynamics(chain, q, q, q, check=False)))(z)
    assert batched.shape == z.shape
