"""kane_jax._differences.central_jacobian against closed forms (the statics' uses against autodiff are
in tests/test_statics.py and tests/scenarios/test_helicoid_statics.py)."""

import jax.numpy as jnp
import numpy as np

from kane_jax._differences import central_jacobian


def test_central_jacobian_of_a_closed_form():
    # fn(q) = (sin q0 q1, exp(q1) + q0^3): Jacobian [[q1 cos q0 q1, q0 cos q0 q1], [3 q0^2, exp q1]]
    q = jnp.array([0.7, -1.3])
    r, jac = central_jacobian(lambda x: jnp.stack([jnp.sin(x[0] * x[1]), jnp.exp(x[1]) + x[0] ** 3]), q)
    c = np.cos(0.7 * -1.3)
    exact = np.array([[-1.3 * c, 0.7 * c], [3 * 0.49, np.exp(-1.3)]])
    np.testing.assert_allclose(r, [np.sin(0.7 * -1.3), np.exp(-1.3) + 0.343], rtol=1e-15)
    np.testing.assert_allclose(jac, exact, rtol=1e-9)


def test_steps_scale_with_large_coordinates():
    # at |q| = 1e4 a fixed step of 6e-6 would lose every digit to rounding; h ∝ max(|q|, 1) keeps ≈ 1e-10
    q = jnp.array([1.0e4, -3.0])
    r, jac = central_jacobian(lambda x: jnp.stack([x[0] ** 2 * x[1], jnp.log(x[0]) + x[1] ** 3]), q)
    exact = np.array([[2e4 * -3.0, 1e8], [1e-4, 27.0]])
    np.testing.assert_allclose(jac, exact, rtol=1e-9)
    np.testing.assert_allclose(r, [-3e8, np.log(1e4) - 27.0], rtol=1e-15)
