"""``_static_index``: static gathers and scatters as slices against ``jnp.take`` and ``.at[].set``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax._modules import chain_rows, chain_vector, module_rows
from kane_jax._static_index import spread_static, take_static

CASES = [([0, 4, 5], 6), ([1, 2, 3], 6), ([3, 0, 1], 5), ([0, 1, 2, 3, 4, 5], 6), ([], 4), ([2], 3)]


@pytest.mark.parametrize("index, size", CASES)
def test_spread_and_take_equal_the_scatter_and_gather_with_their_derivatives(index, size):
    rng = np.random.default_rng(len(index) + size)
    x = jnp.asarray(rng.normal(size=(len(index), 2)))
    ref = jnp.zeros((size, 2)).at[np.asarray(index, dtype=int)].set(x)
    np.testing.assert_array_equal(spread_static(x, index, size), ref)
    y = jnp.asarray(rng.normal(size=(size, 2)))
    np.testing.assert_array_equal(take_static(y, index), y[np.asarray(index, dtype=int)])
    np.testing.assert_array_equal(take_static(y.T, index, axis=-1), y.T[:, np.asarray(index, dtype=int)])
    # derivatives (both modes) and vmap: the same linear maps
    w = jnp.asarray(rng.normal(size=(size, 2)))
    g = jax.grad(lambda x: jnp.sum(w * spread_static(x, index, size) ** 2))(x)
    g_ref = jax.grad(lambda x: jnp.sum(w * jnp.zeros((size, 2)).at[np.asarray(index, dtype=int)].set(x) ** 2))(x)
    np.testing.assert_allclose(g, g_ref, rtol=1e-15, atol=0)
    xs = jnp.asarray(rng.normal(size=(3, len(index))))
    np.testing.assert_array_equal(jax.vmap(lambda v: spread_static(v, index, size))(xs),
                                  jnp.zeros((3, size)).at[:, np.asarray(index, dtype=int)].set(xs))


def test_a_program_of_static_indices_has_no_gather_scatter_or_loop():
    text = jax.jit(lambda x: take_static(spread_static(x, [0, 4, 5], 6), [5, 0])).lower(jnp.ones(3)).compile().as_text()
    assert " scatter(" not in text and " gather(" not in text and " while(" not in text


def test_bad_positions_are_named():
    with pytest.raises(ValueError, match="index"):
        spread_static(jnp.ones(2), [1, 1], 3)
    with pytest.raises(ValueError, match="index"):
        spread_static(jnp.ones(2), [0, 3], 3)
    with pytest.raises(ValueError, match="index"):
        take_static(jnp.ones(2), [2])


def test_module_rows_of_a_mixed_chain_round_trip():
    # modules of 1, 3 and 0 coordinates: rows padded to 3, and back
    link = kj.RigidBody(1.0, [0.1, 0, 0], np.eye(3) * 0.01)
    chain = kj.Chain([(kj.Revolute([0, 0, 1]), link),
                      (kj.Fixed(), kj.CosseratPCS(0.1, 0.01, strains=("bend_y", "bend_z", "stretch"), order=2)),
                      (kj.Fixed(), link)])
    x = jnp.arange(1.0, chain.nq + 1)
    rows = module_rows(chain, x)
    np.testing.assert_array_equal(rows, jnp.array([[1.0, 0, 0], [2, 3, 4], [0, 0, 0]]))
    np.testing.assert_array_equal(chain_vector(chain, rows), x)
    np.testing.assert_array_equal(chain_rows(chain, jnp.stack([rows, 2 * rows], -1)), jnp.stack([x, 2 * x], -1))
