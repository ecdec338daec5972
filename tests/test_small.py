"""``_small``: the element-wise 3×3 helpers against their ``jnp`` counterparts."""

import jax
import jax.numpy as jnp
import numpy as np

from kane_jax._small import det3


def test_det3_equals_the_lu_determinant_with_its_derivatives():
    m = jnp.asarray(np.random.default_rng(3).normal(size=(2, 5, 3, 3)))
    np.testing.assert_allclose(det3(m), jnp.linalg.det(m), rtol=1e-13, atol=1e-15)
    grad = jax.grad(lambda x: jnp.sum(jnp.sin(det3(x))))(m)
    np.testing.assert_allclose(grad, jax.grad(lambda x: jnp.sum(jnp.sin(jnp.linalg.det(x))))(m), rtol=1e-12, atol=1e-14)
    # the gradient of det is the cofactor matrix: det(m) m⁻ᵀ
    ref = jnp.linalg.det(m)[..., None, None] * jnp.swapaxes(jnp.linalg.inv(m), -1, -2)
    np.testing.assert_allclose(jax.vmap(jax.vmap(jax.grad(det3)))(m), ref, rtol=1e-12, atol=1e-14)
