"""003-sim1's actuation reference: ``y*(t) = h(q*(t))`` fitted once by its own Fourier series against
the jets of ``h`` along ``q*(t)`` (:class:`~kane_jax.control.ActuationReference`), on a cheap chain."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.control import ActuationReference
from kane_jax.scenarios import sim003_1_helicoid as sim


def test_fitted_actuation_reference_equals_the_jets_of_the_tendon_map():
    # a tendon on a helix through a planar CC segment (h nonlinear in q), q*(t) a random 4-harmonic series
    helix = lambda s: 0.012 * jnp.stack([jnp.cos(2 * jnp.pi * s), jnp.sin(2 * jnp.pi * s)])  # noqa: E731
    cc = kj.PlanarConstantCurvature(0.3, 0.02, 1000.0, 1e5, elongation=True, order=2, n_radial=1, n_angular=3)
    chain = kj.Chain([(kj.Fixed(), cc)], gravity=(0.0, -9.81, 0.0), actuators=[kj.Tendon(0, helix, order=3)])
    rng = np.random.default_rng(5)
    coeffs = rng.normal(size=(2 * sim.N_HARMONICS + 1, 2)) * np.array([0.4, 0.02]) / np.arange(1, 10)[:, None]
    ref_q = sim.FourierReference(jnp.asarray(coeffs), jnp.asarray(2 * np.pi / sim.PERIOD))
    fitted = sim.actuation_reference(chain, ref_q)
    ts = jnp.linspace(0.013, 3.97, 29)  # off the fit's samples
    want = jax.jit(jax.vmap(ActuationReference(chain, ref_q)))(ts)
    got = jax.jit(jax.vmap(fitted))(ts)
    for name, a, b in zip(("y*", "ẏ*", "ÿ*"), got, want):
        scale = float(jnp.max(jnp.abs(b)))
        assert scale > 1e-4, name  # a reference that moves
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10 * scale, err_msg=name)
    with pytest.raises(ValueError, match="samples"):
        sim.actuation_reference(chain, ref_q, samples=10, harmonics=5)
