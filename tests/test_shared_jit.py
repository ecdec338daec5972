"""`shared_leaves_jit`: repeated array leaves reach the program once; results as `equinox.filter_jit`'s."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from kane_jax._shared_jit import shared_leaves_jit


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
