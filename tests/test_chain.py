"""Chain bookkeeping: grouping, coordinate order, and trace size independent of N."""

import jax
import jax.numpy as jnp
import numpy as np
from helpers.robots import planar_cc_chain

import kane_jax as kj


def test_identical_modules_form_one_group_and_order_is_kept():
    body = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, elongation=True, order=2)
    rigid = kj.RigidBody(1.0, (0.1, 0, 0))
    chain = kj.Chain([(kj.Revolute(), body), (kj.Revolute(), rigid), (kj.Revolute(), body), (kj.Fixed(), body)])
    assert chain.nq == 3 + 1 + 3 + 2
    assert chain.layout.members == ((0, 2), (1,), (3,))
    assert [chain.coordinate_slice(i) for i in range(4)] == [slice(0, 3), slice(3, 4), slice(4, 7), slice(7, 9)]
    j, b = chain.module(2)
    assert isinstance(b, kj.PlanarConstantCurvature) and b.nq == 2
    np.testing.assert_allclose(b.weights, body.weights)


def test_trace_size_does_not_grow_with_n():
    # the jaxpr of the ID has the same number of equations for 2 and 32 identical modules
    sizes = []
    for n in (2, 32):
        chain = planar_cc_chain(n, elongation=True)
        z = jnp.zeros(chain.nq)
        jaxpr = jax.make_jaxpr(lambda q: kj.inverse_dynamics(chain, q, q, q))(z)
        sizes.append(len(jaxpr.jaxpr.eqns))
    assert sizes[0] == sizes[1], sizes


def test_unrolled_recursions_equal_the_scans(monkeypatch):
    """The recursions unrolled at trace time (the default on a GPU/TPU for chains of at most
    ``UNROLL_MODULES_ACCELERATOR`` modules) give the numbers of the ``lax.scan`` path (the oracle),
    here forced on the CPU: ID and FD (bias + composite mass matrix + solve) of a five-module chain
    of rigid, planar CC and generic bodies on revolute, universal, fixed, spherical and prismatic joints."""
    from helpers.robots import mixed_chain, random_state

    import kane_jax._modules as km

    rng = np.random.default_rng(7)
    chain = mixed_chain(rng)
    q, qd, x = random_state(rng, chain.nq, 0.4)

    def run():
        return (jax.jit(lambda q, qd, x: kj.inverse_dynamics(chain, q, qd, x))(q, qd, x),
                jax.jit(lambda q, qd, x: kj.forward_dynamics(chain, q, qd, x))(q, qd, x))

    def scans():  # lax.scan equations in the ID's program (the module recursions are two of them)
        jaxpr = jax.make_jaxpr(lambda q, qd, x: kj.inverse_dynamics(chain, q, qd, x))(q, qd, x)
        return str(jaxpr).count(" scan[")

    for name in ("UNROLL_MODULES", "UNROLL_MODULES_ACCELERATOR"):  # whatever the backend
        monkeypatch.setattr(km, name, 0)
    jax.clear_caches()
    scanned, n_scans = run(), scans()
    for name in ("UNROLL_MODULES", "UNROLL_MODULES_ACCELERATOR"):
        monkeypatch.setattr(km, name, 16)
    assert km.unroll_limit() == 16
    jax.clear_caches()  # the entry points' compiled kernels are cached by JAX: trace them again
    unrolled = run()
    assert scans() <= n_scans - 2  # the forward and backward passes are unrolled, not scanned
    for a, b in zip(unrolled, scanned):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(b))))


def test_groups_stack_and_index_on_the_host_with_the_values_of_jnp():
    """Concrete, strongly typed leaves are stacked and indexed by NumPy (no eager XLA program: a
    chain's construction compiled about a hundred tiny ones in every new process); the leaves equal
    ``jnp.stack`` / ``x[k]`` in value, dtype and weak type, and traced leaves still take JAX's path."""
    import logging

    from kane_jax._modules import stack

    rng = np.random.default_rng(3)
    # shapes no other test stacks or indexes, placed without a program (jax.device_put)
    c, d = (jax.device_put(rng.normal(size=(5, 7, 2))) for _ in range(2))
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    try:
        with jax.log_compiles(True):
            cd = stack([(c,), (d,)])[0]
            row = kj.chain._index(cd, 1)
    finally:
        logger.removeHandler(handler)
    assert not [r for r in records if "Compiling" in r.getMessage()], [r.getMessage() for r in records]
    np.testing.assert_array_equal(np.asarray(row), np.asarray(d))

    a, b = (jnp.asarray(rng.normal(size=(4, 3))) for _ in range(2))
    weak = (jnp.asarray(0.5), jnp.asarray(1.5))  # weakly typed: kept on JAX's path
    for xs in ((a, b), weak, (np.asarray(a), np.asarray(b))):
        got, want = stack([(x,) for x in xs])[0], jnp.stack([jnp.asarray(x) for x in xs])
        assert got.dtype == want.dtype and got.weak_type == want.weak_type and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    traced = jax.jit(lambda x, y: stack([(x,), (y,)])[0])(a, b)
    np.testing.assert_array_equal(np.asarray(traced), np.asarray(jnp.stack([a, b])))

    body = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, elongation=True, order=2)
    modules = [(kj.Revolute(), body), (kj.Revolute(rng.normal(size=3)), body)]
    chain = kj.Chain(modules)
    for i, (joint, _) in enumerate(modules):
        np.testing.assert_array_equal(np.asarray(chain.module(i)[0].axis), np.asarray(joint.axis))


def test_a_rigid_chain_from_host_values_is_built_without_a_program():
    """In a new process (where no eager program exists yet), joints, rigid bodies and a chain built
    from lists and NumPy arrays compile nothing (issue 17: a fresh process building a 7-DoF arm ran
    31 tiny XLA programs, 1.3 s), and their leaves equal those of JAX's path."""
    import subprocess
    import sys

    code = """
import logging, jax, numpy as np
jax.config.update("jax_enable_x64", True)
import kane_jax as kj
records = []
h = logging.Handler(); h.emit = records.append; logging.getLogger("jax").addHandler(h)
pose = np.eye(4); pose[:3, 3] = (0.1, 0.2, 0.3)
with jax.log_compiles(True):
    link = kj.RigidBody(np.asarray(2.0), [0.1, 0.0, 0.0], np.diag([0.02, 0.03, 0.04]), tip=pose)
    arm = kj.Chain([(kj.Revolute([0.3, 0.4, 0.5], stiffness=[2.0]), link), (kj.Prismatic([0.0, 0.0, 1.0]), link)])
    joint, body = arm.module(1)
print(sum("Compiling" in r.getMessage() for r in records))
print(repr(np.asarray(arm.module(0)[0].axis).tolist()), repr(np.asarray(body.tip_rot).tolist()))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "0", proc.stdout
    axis = np.asarray(jnp.asarray([0.3, 0.4, 0.5]) / jnp.linalg.norm(jnp.asarray([0.3, 0.4, 0.5])))
    assert lines[1] == f"{axis.tolist()!r} {np.eye(3).tolist()!r}"


def test_states_take_the_chains_precision():
    """``check_state``: a float32 state of a float64 chain (x64 on) is promoted to float64, value for value; a
    float32 chain keeps float32 states; a float64 state is returned as given (no operation)."""
    chain = kj.Chain([(kj.Revolute((0, 0, 1)), kj.RigidBody(1.0, (0.2, 0.0, 0.0)))])
    q32 = jnp.array([0.1], jnp.float32)
    q = chain.check_state(q32, "q")
    assert q.dtype == jnp.float64 and float(q[0]) == float(q32[0])
    q64 = jnp.array([0.1])
    assert chain.check_state(q64, "q") is q64
    with jax.enable_x64(False):
        c32 = kj.Chain([(kj.Revolute((0, 0, 1)), kj.RigidBody(1.0, (0.2, 0.0, 0.0)))])
        assert c32.check_state(jnp.array([0.1], jnp.float32), "q").dtype == jnp.float32
