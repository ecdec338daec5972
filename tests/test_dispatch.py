"""The entry points' compilation rule (kane_jax._dispatch.entry_jit): equinox.filter_jit's, cheaper.

Array leaves are traced (a new parameter value reuses the program), every other leaf is static (a
new geometry function or option compiles a new one), results equal the uncompiled function's.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import kane_jax as kj
from kane_jax import _dispatch as dispatch
from kane_jax import _packing as packing
from kane_jax._dispatch import entry_jit


def _arm(mass=1.0):
    body = kj.RigidBody(mass, (0.1, 0.02, 0.0), 0.01 * jnp.eye(3))
    return kj.Chain([(kj.Revolute((0, 0, 1)), body), (kj.Revolute((0, 1, 0)), body)], gravity=(0.0, -9.81, 0.0))


def test_arrays_traced_static_leaves_select_the_program():
    traces = []

    def fn(chain, q, *, scale=1.0, tip_force=None):
        traces.append(1)
        return scale * kj.inverse_dynamics(chain, q, q, q, tip_force=tip_force)

    fast = entry_jit(fn)
    q = jnp.array([0.3, -0.7])
    arm, heavy = _arm(), _arm(2.5)
    out = fast(arm, q)
    # the same numbers as the function run eagerly (1e-15: one compiled program against op-by-op)
    with jax.disable_jit():
        np.testing.assert_allclose(out, fn(arm, q), rtol=1e-15, atol=1e-15)
    assert len(traces) == 2
    fast(heavy, 2.0 * q)  # new masses and state: array leaves, no new trace
    assert len(traces) == 2
    np.testing.assert_allclose(fast(heavy, q), kj.inverse_dynamics(heavy, q, q, q), rtol=1e-14)
    fast(arm, q, scale=2.0)  # a Python number is static: a new program
    assert len(traces) == 3
    np.testing.assert_allclose(fast(arm, q, scale=2.0), 2.0 * out, rtol=1e-15)
    fast(arm, q, tip_force=jnp.ones(3))  # None -> array: a new structure
    assert len(traces) == 4


def test_unhashable_static_leaves_fall_back_to_filter_jit():
    fast = entry_jit(lambda x, opts: x * len(opts["names"]))
    np.testing.assert_allclose(fast(jnp.ones(2), {"names": ["a", "b", "c"]}), 3.0 * np.ones(2), rtol=0)


def test_public_entry_points_accept_a_user_geometry_function():
    # a generic Body's geometry functions are static leaves of the chain
    import helpers.robots as wr

    chain = kj.Chain([(kj.Revolute((0, 0, 1)), wr.generic_beam())], gravity=(0.0, -9.81, 0.0))
    q = 0.1 * jnp.arange(1, chain.nq + 1, dtype=float)
    tau = kj.inverse_dynamics(chain, q, q, q)
    np.testing.assert_allclose(kj.forward_dynamics(chain, q, q, tau), q, rtol=1e-10, atol=1e-12)
    params, static = eqx.partition(chain, eqx.is_array)
    assert any(callable(x) for x in jax.tree.leaves(static))


def test_eager_calls_and_calls_inside_a_users_trace_agree():
    # eager calls compile with per-program CPU options (_dispatch._CPU_COMPILER_OPTIONS); inside a
    # user's jit, even with every array closed over (no tracer among the arguments), the call is
    # traced into the user's program, where JAX rejects options on a nested jit
    arm = _arm()
    q = jnp.array([0.3, -0.7])
    eager = kj.inverse_dynamics(arm, q, q, q)
    closed = jax.jit(lambda: kj.inverse_dynamics(arm, q, q, q))()
    traced = jax.jit(lambda x: kj.inverse_dynamics(arm, x, x, x))(q)
    batched = jax.vmap(lambda x: kj.inverse_dynamics(arm, x, x, x))(jnp.stack([q, q]))
    # the eager program against the independent Euler–Lagrange reference (1e-12 relative) ...
    from kane_jax.reference import euler_lagrange as el

    np.testing.assert_allclose(eager, el.inverse_dynamics(arm, q, q, q), rtol=1e-12, atol=1e-12)
    # ... and the same IEEE operations, scheduled differently: identical to rounding (1e-15 relative)
    for other in (closed, traced, batched[0], batched[1]):
        np.testing.assert_allclose(other, eager, rtol=1e-15, atol=1e-15)
    # and the eager program is the one with the options (only on the CPU)
    if jax.default_backend() == "cpu":
        assert dispatch._eager() and dispatch._compiler_options(True) == dispatch._CPU_COMPILER_OPTIONS
    assert dispatch._compiler_options(False) is None


def test_a_chain_is_flattened_once_and_its_entry_leaves_with_it():
    # the chain's flattened form is kept per chain object (its leaves never change); a chain with
    # the same structure and other values is another object and gives its own numbers, and a
    # chain built inside a trace (tracer leaves) is not kept
    import gc

    from kane_jax.reference import euler_lagrange as el

    q = jnp.array([0.3, -0.7])
    arm, heavy = _arm(), _arm(2.5)
    for chain in (arm, heavy, arm):
        np.testing.assert_allclose(kj.inverse_dynamics(chain, q, q, q), el.inverse_dynamics(chain, q, q, q),
                                   rtol=1e-12, atol=1e-12)
    assert id(arm) in dispatch._modules and id(heavy) in dispatch._modules
    key = id(heavy)
    del heavy
    gc.collect()
    assert key not in dispatch._modules

    kept = []

    def loss(mass):
        chain = _arm(mass)
        out = jnp.sum(kj.inverse_dynamics(chain, q, q, q))
        kept.append(id(chain) in dispatch._modules)  # while the chain is alive
        return out

    g = jax.grad(loss)(1.5)
    assert kept == [False]
    h = 1e-6
    np.testing.assert_allclose(g, (loss(1.5 + h) - loss(1.5 - h)) / (2 * h), rtol=1e-7)
    assert kept == [False, True, True]


def test_compiled_programs_do_not_keep_the_first_calls_arrays():
    # a compiled entry point keeps the structure of its arguments, not the arrays of the call
    # that compiled it: the chain and the state of that call are freed with the caller's names
    import gc
    import weakref

    fast = entry_jit(lambda chain, q: kj.inverse_dynamics(chain, q, q, q))
    arm, q = _arm(3.0), jnp.array([0.1, 0.2])
    refs = [weakref.ref(arm), weakref.ref(q)]
    first = fast(arm, q)
    np.testing.assert_allclose(fast(_arm(3.0), jnp.array([0.1, 0.2])), first, rtol=0, atol=0)
    del arm, q
    gc.collect()
    assert all(r() is None for r in refs)


def test_eager_transformations_keep_one_program_staged_ones_inline():
    """Where an entry point is traced inline and where it stays a compiled program of its own.

    Under a transformation that is being staged into a ``jit`` (``jit(jacfwd(...))``) the entry point
    runs inline; under one that runs eagerly (``jax.jacfwd(f)(q)`` with no ``jit`` around it) it
    stays a nested ``jit`` that JAX transforms as one program, since inline code would execute
    operation by operation (the ``jacfwd`` of two PCS rods' ID: 3.0 s a call inline, 0.04 s as a
    program, 2026-11-25). Both give the Jacobian of the Euler–Lagrange reference (1e-10 relative)
    and agree with each other to rounding."""
    seen = []

    def make_probe():  # a new entry point each time: its program is traced afresh
        @entry_jit
        def probe(x):
            seen.append(dispatch._under_transformation())  # inline: True; in a program of its own: False
            return jnp.sin(x) * x

        return probe

    x = jnp.array([0.3, -0.7])
    eager = jax.jacfwd(make_probe())(x)  # eager transformation: a nested jit
    assert seen == [False]
    seen.clear()
    jax.jit(jax.jacfwd(make_probe()))(x)  # staged transformation: inline
    assert seen == [True]
    seen.clear()
    probe = make_probe()
    jax.grad(lambda y: jnp.sum(jax.vmap(probe)(y[None])))(x)  # eager vmap under eager grad
    assert seen == [False]
    seen.clear()
    jax.grad(lambda y: jnp.sum(jax.vmap(probe)(y[None])))(x + 1.0)  # and its program is reused
    assert seen == []
    np.testing.assert_allclose(np.diag(eager), np.cos(x) * x + np.sin(x), rtol=1e-15)

    from kane_jax.reference import euler_lagrange as el

    arm = _arm()
    q = jnp.array([0.3, -0.7])
    fwd = jax.jacfwd(lambda y: kj.inverse_dynamics(arm, y, q, q))(q)
    staged = jax.jit(jax.jacfwd(lambda y: kj.inverse_dynamics(arm, y, q, q)))(q)
    ref = jax.jacfwd(lambda y: el.inverse_dynamics(arm, y, q, q))(q)
    np.testing.assert_allclose(fwd, ref, rtol=1e-10, atol=1e-10 * float(jnp.max(jnp.abs(ref))))
    np.testing.assert_allclose(fwd, staged, rtol=1e-14, atol=1e-14 * float(jnp.max(jnp.abs(ref))))


PUBLIC = {
    "inverse_dynamics": lambda c, q: kj.inverse_dynamics(c, q, q, q),
    "inverse_dynamics_full": lambda c, q: kj.inverse_dynamics_full(c, q, q, q).tau,
    "mass_matrix": lambda c, q: kj.mass_matrix(c, q),
    "forward_dynamics": lambda c, q: kj.forward_dynamics(c, q, q, q, check=False),
    "nonlinear_effects": lambda c, q: kj.nonlinear_effects(c, q, q),
    "generalized_gravity": lambda c, q: kj.generalized_gravity(c, q),
    "kinetic_energy": lambda c, q: kj.kinetic_energy(c, q, q),
    "potential_energy": lambda c, q: kj.potential_energy(c, q),
    "forward_kinematics": lambda c, q: kj.forward_kinematics(c, q),
    "tip_pose": lambda c, q: kj.tip_pose(c, q),
    "tip_jacobian": lambda c, q: kj.tip_jacobian(c, q),
    "inverse_dynamics_derivatives": lambda c, q: kj.inverse_dynamics_derivatives(c, [q, q, q, q, q], order=2),
    "mass_matrix_derivatives": lambda c, q: kj.mass_matrix_derivatives(c, [q, q, q], order=2),
    "coriolis_matrix": lambda c, q: kj.coriolis_matrix(c, q, q),
    "holding_input": lambda c, q: kj.holding_input(c, q).u,
}


def test_every_public_dynamics_function_is_one_compiled_program():
    """Each public function of the dynamics is one program (a nested ``jit`` in a user's trace), so an
    eager call or an eager transformation of it is compiled once rather than run operation by
    operation (``inverse_dynamics_derivatives``, ``mass_matrix_derivatives``, ``coriolis_matrix`` and
    ``holding_input`` were not, until 2026-11-25: see the README, "Differentiating without jit")."""
    arm = _arm()
    q = jnp.array([0.3, -0.7])
    for name, call in PUBLIC.items():
        eqns = jax.make_jaxpr(lambda x, call=call: call(arm, x))(q).eqns
        assert [e.primitive.name for e in eqns] in (["jit"], ["pjit"]), (name, [e.primitive.name for e in eqns])


def test_an_eager_call_passes_the_chains_arrays_in_few_small_buffers():
    """Eager calls pass the chain's arrays packed (``_packing.pack``): JAX's dispatch costs ≈ 0.55 µs
    per array argument. Every joined buffer stays ≤ 512 bytes (XLA:CPU's limit for running a program
    on the calling thread) unless it holds only larger arrays; weakly typed arrays are passed as they
    are; the leaves come back bit for bit, and the packed program gives the unpacked one's numbers."""
    from helpers.hand_built_arms import iiwa_like

    arm = iiwa_like()
    leaves = [x for x in jax.tree.leaves(arm) if eqx.is_array(x)]
    packed = packing.pack(leaves)
    assert len(packed.buffers) < len(leaves)
    for slot, buf in zip(packed.plan, packed.buffers):
        if len(slot) > 1:
            sizes = [leaves[i].nbytes for i, _ in slot]
            assert buf.nbytes == sum(sizes) and (buf.nbytes <= packing.PACK_BYTES
                                                 or min(sizes) > packing.PACK_BYTES), (slot, sizes)
    back = packing.unpack(packed.plan, packed.buffers)
    assert sorted(i for slot in packed.plan for i, _ in slot) == list(range(len(leaves)))
    for a, b in zip(back, leaves):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    # a weakly typed leaf (its dtype follows the other operand) keeps a buffer of its own
    weak = [jnp.asarray(2.0), jnp.ones(3)]
    assert weak[0].weak_type
    assert ((0, ()),) in packing.pack_plan(weak)
    # the eager (packed) call against the same program traced with the chain as a closure (unpacked)
    rng = np.random.default_rng(3)
    q, qd, qdd = (jnp.asarray(rng.uniform(-1, 1, arm.nq)) for _ in range(3))
    eager = kj.inverse_dynamics(arm, q, qd, qdd)
    assert dispatch._modules[id(arm)][2] is not None
    closed = jax.jit(lambda: kj.inverse_dynamics(arm, q, qd, qdd))()
    np.testing.assert_allclose(eager, closed, rtol=1e-15, atol=1e-15 * float(jnp.max(jnp.abs(closed))))


def test_packed_programs_follow_the_shapes_of_the_arrays():
    """Two pytrees of one structure whose arrays differ in shape get plans (and programs) of their own."""

    class Weights(eqx.Module):
        a: jax.Array
        b: jax.Array
        c: jax.Array

    fast = entry_jit(lambda w, x: jnp.sum(w.a) * x + jnp.sum(w.b * w.b) - jnp.sum(w.c))
    x = jnp.array([1.0, 2.0])
    for n in (2, 5):
        w = Weights(jnp.arange(n, dtype=float), jnp.arange(3.0), jnp.ones((n, 2)))
        ref = float(np.sum(np.arange(n))) * np.array([1.0, 2.0]) + 5.0 - 2.0 * n
        np.testing.assert_allclose(fast(w, x), ref, rtol=1e-15)
        assert len(dispatch._modules[id(w)][2].buffers) == 1
