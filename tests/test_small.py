"""``_small``: the element-wise 3×3 helpers against their ``jnp`` counterparts."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from kane_jax._small import SMALL_TERMS, contract, det3, materialize


def test_det3_equals_the_lu_determinant_with_its_derivatives():
    m = jnp.asarray(np.random.default_rng(3).normal(size=(2, 5, 3, 3)))
    np.testing.assert_allclose(det3(m), jnp.linalg.det(m), rtol=1e-13, atol=1e-15)
    grad = jax.grad(lambda x: jnp.sum(jnp.sin(det3(x))))(m)
    np.testing.assert_allclose(grad, jax.grad(lambda x: jnp.sum(jnp.sin(jnp.linalg.det(x))))(m), rtol=1e-12, atol=1e-14)
    # the gradient of det is the cofactor matrix: det(m) m⁻ᵀ
    ref = jnp.linalg.det(m)[..., None, None] * jnp.swapaxes(jnp.linalg.inv(m), -1, -2)
    np.testing.assert_allclose(jax.vmap(jax.vmap(jax.grad(det3)))(m), ref, rtol=1e-12, atol=1e-14)


def _horner(x):
    out = jnp.full_like(x, 0.3)
    for k in range(13):
        out = out * x + (k + 1.0)
    return out


def _three_readers(x, boundary):
    y = boundary(_horner(x))
    return y[:, None] * y[None, :] + 1, jnp.cumsum(y[:, None] * y[None, :], 0), jnp.concatenate([2 * y, y[::-1]])


def _multiplies(boundary):
    x = jnp.linspace(0.0, 1.0, 8)
    return jax.jit(lambda x: _three_readers(x, boundary)).lower(x).compile().as_text().count(" multiply(")


def test_materialize_computes_a_cheap_producer_once_where_a_bare_barrier_does_not():
    # XLA:CPU fuses the 13-step Horner producer into each reader; the bare barrier is removed before
    # fusion (same count as no boundary), materialize keeps one buffer (13 multiplies of the producer
    # plus the readers' own: measured 42 / 42 / 16 with jaxlib 0.10.2)
    none = _multiplies(lambda y: y)
    bare = _multiplies(jax.lax.optimization_barrier)
    once = _multiplies(materialize)
    assert once <= none - 2 * 13, (none, bare, once)


def test_materialize_is_the_identity_with_its_derivatives():
    x = jnp.asarray(np.random.default_rng(0).normal(size=(4, 3, 2)))
    np.testing.assert_array_equal(materialize(x), x)
    np.testing.assert_array_equal(jax.vmap(materialize)(x), x)
    f = lambda z: jnp.sum(jnp.sin(materialize(z * z)))  # noqa: E731
    g = lambda z: jnp.sum(jnp.sin(z * z))  # noqa: E731
    np.testing.assert_allclose(jax.grad(f)(x), jax.grad(g)(x), rtol=1e-15, atol=0)
    v = jnp.ones_like(x)
    np.testing.assert_allclose(jax.jvp(f, (x,), (v,))[1], jax.jvp(g, (x,), (v,))[1], rtol=1e-14, atol=0)
    assert materialize(jnp.zeros((0, 3))).shape == (0, 3)


# (spec, operand shapes): sums of ≤ SMALL_TERMS terms (sums of slice products) and longer ones (the
# broadcast product summed), a length-1 axis broadcast against the others, three operands
CONTRACTIONS = [("kja,kla->jl", [(5, 6, 3), (5, 4, 3)]), ("k,uka,vkb->uvab", [(5,), (4, 5, 3), (2, 5, 3)]),
                ("kab,kjb->kja", [(5, 3, 3), (5, 6, 3)]), ("ka,kb->ab", [(1, 3), (5, 3)]),
                ("uka,vkb->uvab", [(2, 40, 3), (3, 40, 3)]), ("ij,j->i", [(4, 17), (17,)]),
                ("ukac,vkbc->uvab", [(2, 20, 3, 3), (3, 20, 3, 3)])]


@pytest.mark.parametrize("spec,shapes", CONTRACTIONS)
def test_contract_equals_einsum_with_derivatives(spec, shapes):
    rng = np.random.default_rng(len(spec))
    ops = [jnp.asarray(rng.normal(size=s)) for s in shapes]
    full = [jnp.broadcast_to(x, (5, 3)) if x.shape == (1, 3) else x for x in ops]  # einsum does not broadcast
    ref = jnp.einsum(spec, *full)
    np.testing.assert_allclose(contract(spec, *ops), ref, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(jax.vmap(lambda x: contract(spec, x, *ops[1:]))(jnp.stack([ops[0], 2 * ops[0]])),
                               jnp.stack([ref, 2 * ref]), rtol=1e-13, atol=1e-14)
    g = jax.grad(lambda x: jnp.sum(jnp.sin(contract(spec, x, *ops[1:]))))(ops[0])
    g_ref = jax.grad(lambda x: jnp.sum(jnp.sin(jnp.einsum(spec, *([jnp.broadcast_to(x, full[0].shape)] + full[1:])))))
    np.testing.assert_allclose(g, g_ref(ops[0]), rtol=1e-12, atol=1e-14)
    # forward mode, and second order (the short form's tangents are the broadcast form's)
    v = jnp.asarray(rng.normal(size=ops[-1].shape))
    jvp = jax.jvp(lambda y: contract(spec, *ops[:-1], y), (ops[-1],), (v,))[1]
    np.testing.assert_allclose(jvp, jnp.einsum(spec, *full[:-1], v), rtol=1e-13, atol=1e-14)
    hvp = jax.jvp(jax.grad(lambda x: jnp.sum(jnp.sin(contract(spec, x, *ops[1:])))), (ops[0],), (ops[0],))[1]
    hvp_ref = jax.jvp(g_ref, (ops[0],), (ops[0],))[1]
    np.testing.assert_allclose(hvp, hvp_ref, rtol=1e-12, atol=1e-13)


def test_short_contractions_do_not_build_the_broadcast_product():
    # "kja,kla->jl" over 5 × 3 terms, batched: no (B, 5, 6, 3, 6) buffer in the optimized program
    assert 5 * 3 <= SMALL_TERMS
    w, h = (jnp.asarray(np.random.default_rng(i).normal(size=(64, 5, 6, 3))) for i in range(2))
    gram = jax.jit(jax.vmap(lambda a, b: contract("kja,kla->jl", jnp.sin(a), jnp.cos(b))))
    text = gram.lower(w, h).compile().as_text()
    shapes = set(re.findall(r"f64\[([0-9,]+)\]", text))
    assert "64,6,6" in shapes and not any(s.count(",") >= 4 for s in shapes), sorted(shapes)


def test_long_contractions_reduce_their_summed_axes_last():
    # a variable-radius body's Gram sums over its 80 points: the product laid out (u, v, a, b, k) and
    # reduced over its last axis (XLA:CPU reduced the leading k axis 3.4x slower, 2026-11-30); with a
    # short summed axis beside the long one, both trailing and reduced together
    rng = np.random.default_rng(0)
    ops = [jnp.asarray(rng.normal(size=s)) for s in [(80,), (5, 80, 3), (6, 80, 3)]]
    text = str(jax.make_jaxpr(lambda *x: contract("k,uka,vkb->uvab", *x))(*ops))
    assert re.findall(r"reduce_sum\[[^\]]*axes=\(([0-9, ]*)\)", text) == ["4,"], text
    ops = [jnp.asarray(rng.normal(size=s)) for s in [(2, 20, 3, 3), (3, 20, 3, 3)]]
    text = str(jax.make_jaxpr(lambda *x: contract("ukac,vkbc->uvab", *x))(*ops))
    assert re.findall(r"reduce_sum\[[^\]]*axes=\(([0-9, ]*)\)", text) == ["4, 5"], text
