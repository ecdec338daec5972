"""`shared_leaves_jit`: repeated array leaves reach the program once; results as `equinox.filter_jit`'s."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import kane_jax as kj
from kane_jax._shared_jit import shared_arrays, shared_leaves_jit
from kane_jax.algorithms._recursion import dynamics_terms, tip_wrench
from kane_jax.xla_flags import LOOP_HOISTING_PASS, without_loop_hoisting


class _Law(eqx.Module):
    model: jnp.ndarray
    gain: float = eqx.field(static=True)


def test_repeated_leaves_are_one_tracer_and_results_match():
    seen = []

    def fn(model, law, x, *, scale=None):
        seen.append((model is law.model, scale is None))
        return law.gain * (model @ x) + law.model.sum() + (0.0 if scale is None else scale)

    fast, plain = shared_leaves_jit(fn), eqx.filter_jit(fn)
    m = jnp.arange(9.0).reshape(3, 3)
    x = jnp.array([1.0, -2.0, 0.5])
    law = _Law(m, 2.0)
    np.testing.assert_allclose(fast(m, law, x), plain(m, law, x), rtol=1e-15)
    assert seen[0] == (True, True)  # the law's copy of the model is the model's tracer itself
    assert seen[1] == (False, True)  # (filter_jit: two parameters)
    # another sharing pattern: another program, the right numbers (not the first call's)
    other = _Law(m + 1.0, 2.0)
    np.testing.assert_allclose(fast(m, other, x, scale=jnp.asarray(3.0)), plain(m, other, x, scale=jnp.asarray(3.0)),
                               rtol=1e-15)
    assert seen[2] == (False, False)
    # the first pattern again: its program is reused (no new trace)
    n, m2 = len(seen), m * 2
    np.testing.assert_allclose(fast(m2, _Law(m2, 2.0), x), plain(m2, _Law(m2, 2.0), x), rtol=1e-15)
    assert len(seen) == n



def _twice_in_a_loop(chain, law, q, qd):
    """Two copies of the same model terms in a loop body (the FD's and a law's), as in a simulation."""
    def terms(c, x):
        return dynamics_terms(c, x, qd, gravity=c.gravity, tip=tip_wrench(None, None, x.dtype))

    def body(i, acc):
        x = q + 1e-3 * acc[0]
        m, b = terms(chain, x)
        m2, b2 = terms(law["chain"], x)
        return acc + jnp.stack([jnp.sum(m) + jnp.sum(b), jnp.sum(m2 * b2[:, None])])

    return jax.lax.fori_loop(0, 3, body, jnp.zeros(2, q.dtype))


def _soft_chain():
    cc = kj.PlanarConstantCurvature(0.2, 0.01, 1000.0, 1e5, 0.01, order=3, n_radial=1, n_angular=3)
    return kj.Chain([(kj.Revolute(), cc)] * 2, gravity=(0.0, -9.81, 0.0))


def _rigid_chain():
    link = kj.RigidBody(0.5, (0.1, 0.0, 0.0), jnp.diag(jnp.array([1e-4, 1e-3, 1e-3])))
    return kj.Chain([(kj.Revolute(), link)] * 2, gravity=(0.0, -9.81, 0.0))


def test_identical_work_in_a_loop_merges_only_without_loop_hoisting():
    """XLA's loop-invariant code motion splits two copies of the same work in a loop body before its
    CSE can merge them (``kane_jax/_shared_jit.py``): compiled without it the program holds one copy
    (fewer than 70 % of the fusions: measured ≈ half) and computes the same numbers (1e-13: other kernels)."""
    chain = _soft_chain()
    q, qd = jnp.linspace(0.1, 0.4, chain.nq), jnp.linspace(-0.3, 0.2, chain.nq)
    dyn, static = eqx.partition((chain, {"chain": chain}), eqx.is_array)
    leaves, tree = jax.tree.flatten(dyn)
    unique = list({id(x): x for x in leaves}.values())
    index = [next(i for i, u in enumerate(unique) if u is x) for x in leaves]

    def run(shared, q, qd):
        c, law = eqx.combine(jax.tree.unflatten(tree, [shared[i] for i in index]), static)
        return _twice_in_a_loop(c, law, q, qd)

    lowered = jax.jit(run).lower(unique, q, qd)
    hoisting, merged = lowered.compile(), lowered.compile(without_loop_hoisting(""))
    np.testing.assert_allclose(merged(unique, q, qd), hoisting(unique, q, qd), rtol=1e-13)
    n_hoisting, n_merged = (c.as_text().count(" fusion(") for c in (hoisting, merged))
    assert n_merged < 0.7 * n_hoisting, (n_hoisting, n_merged)


def test_merge_in_loops_selects_the_program_per_call():
    # the selection's mechanics (which program, under which caller): a rigid chain compiles in a
    # fraction of the soft one's time (90 s of the suite's time with the soft chain)
    chain = _rigid_chain()
    q, qd = jnp.linspace(0.1, 0.4, chain.nq), jnp.linspace(-0.3, 0.2, chain.nq)
    asked = []

    def predicate(chain, law, q, qd):
        asked.append(law["merge"])
        return law["merge"]

    fn = shared_leaves_jit(_twice_in_a_loop, merge_in_loops=predicate)
    plain = eqx.filter_jit(_twice_in_a_loop)
    for merge in (False, True):
        np.testing.assert_allclose(fn(chain, {"chain": chain, "merge": merge}, q, qd),
                                   plain(chain, {"chain": chain, "merge": merge}, q, qd), rtol=1e-13)
    assert asked == [False, True]
    # inside a caller's transformation the caller's program decides: no options on a nested jit
    # (JAX rejects them), the same numbers, and the predicate is not asked
    law = {"chain": chain, "merge": True}
    np.testing.assert_allclose(jax.jit(lambda x: fn(chain, law, x, qd))(q), plain(chain, law, q, qd), rtol=1e-13)
    # (also a caller's jit that closes over concrete arrays only)
    np.testing.assert_allclose(jax.jit(lambda: fn(chain, law, q, qd))(), plain(chain, law, q, qd), rtol=1e-13)
    # and under a caller's differentiation (a JVP: the same tracers reach the function as under
    # `grad`, at less than half its compile time)
    v = jnp.linspace(1.0, -0.5, chain.nq)
    got = jax.jvp(lambda x: fn(chain, law, x, qd)[1], (q,), (v,))
    np.testing.assert_allclose(got, jax.jvp(lambda x: plain(chain, law, x, qd)[1], (q,), (v,)), rtol=1e-12)
    assert asked == [False, True]


def test_without_loop_hoisting_keeps_the_passes_already_disabled():
    assert without_loop_hoisting("") == {"xla_disable_hlo_passes": LOOP_HOISTING_PASS}
    flags = "--xla_cpu_use_fusion_emitters=false --xla_disable_hlo_passes=a,b --xla_disable_hlo_passes=hlo-verifier"
    assert without_loop_hoisting(flags) == {"xla_disable_hlo_passes": f"hlo-verifier,{LOOP_HOISTING_PASS}"}
    already = f"--xla_disable_hlo_passes={LOOP_HOISTING_PASS},c"
    assert without_loop_hoisting(already) == {"xla_disable_hlo_passes": f"{LOOP_HOISTING_PASS},c"}


def test_shared_arrays_means_the_same_array_objects():
    m = jnp.arange(4.0)
    assert shared_arrays({"a": m, "b": 1.0}, _Law(m, 2.0))
    assert not shared_arrays({"a": m}, _Law(m + 0.0, 2.0))  # equal values, another array
    assert not shared_arrays(m, None) and not shared_arrays(m, lambda t: t)


def test_cheap_code_keeps_the_callers_disabled_passes_and_the_numbers(monkeypatch):
    from kane_jax._shared_jit import cheap_code_options
    from kane_jax.xla_flags import without_passes

    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_use_thunk_runtime=true --xla_disable_hlo_passes=hlo-verifier")
    opts = cheap_code_options()
    assert opts["xla_disable_hlo_passes"] == "hlo-verifier,simplification,reshape-mover"
    assert opts["xla_backend_optimization_level"] == 0 and opts["xla_llvm_disable_expensive_passes"] is True
    assert without_passes(("a", "hlo-verifier"), "--xla_disable_hlo_passes=hlo-verifier") == {
        "xla_disable_hlo_passes": "hlo-verifier,a"}
    # the same function compiled both ways: the same numbers (the chain's dynamics terms, 1e-14)
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0), stiffness=2.0), kj.RigidBody(0.5, com=(0.1, 0.0, 0.0))),
                      (kj.Revolute((0.0, 1.0, 0.0)), kj.RigidBody(0.3, com=(0.2, 0.0, 0.0)))], gravity=(0, 0, -9.81))
    terms = lambda c, q, v: dynamics_terms(c, q, v, gravity=c.gravity, tip=tip_wrench(None, None, q.dtype))  # noqa: E731
    q, v = jnp.array([0.3, -0.4]), jnp.array([1.0, 2.0])
    plain = shared_leaves_jit(terms)(chain, q, v)
    cheap = shared_leaves_jit(terms, cheap=True)(chain, q, v)
    for a, b in zip(plain, cheap):
        np.testing.assert_allclose(b, a, rtol=1e-14, atol=1e-14)
