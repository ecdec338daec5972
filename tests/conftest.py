"""Test configuration: float64 and strict rank promotion for every test (never in the library)."""

import jax
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture
def rng():
    """A seeded NumPy generator, so every failure is reproducible."""
    return np.random.default_rng(1234)
