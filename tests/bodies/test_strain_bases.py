"""Strain bases for GVS rods against NumPy's polynomials and the paper's PGC matrix (000_… Sim. 2)."""

import jax.numpy as jnp
import numpy as np
import pytest

from kane_jax.bodies.strain_bases import (
    ChebyshevBasis,
    FullBasis,
    GaussianBasis,
    LegendreBasis,
    MonomialBasis,
    PiecewiseGaussianCurvature,
    ScalarBasis,
)

SIGMAS = np.linspace(0.0, 1.0, 7)


def test_polynomial_bases_match_numpy():
    for k_modes in (1, 2, 5):
        for basis, ref in ((LegendreBasis(k_modes), np.polynomial.legendre.legval),
                           (ChebyshevBasis(k_modes), np.polynomial.chebyshev.chebval)):
            got = np.stack([np.asarray(basis(jnp.asarray(s))) for s in SIGMAS])
            want = np.stack([[ref(2 * s - 1, np.eye(k_modes)[k]) for k in range(k_modes)] for s in SIGMAS])
            np.testing.assert_allclose(got, want, atol=1e-14)
        got = np.stack([np.asarray(MonomialBasis(k_modes)(jnp.asarray(s))) for s in SIGMAS])
        np.testing.assert_allclose(got, SIGMAS[:, None] ** np.arange(k_modes), atol=1e-15)


def test_gaussian_basis():
    b = GaussianBasis(3, width=0.2)
    got = np.stack([np.asarray(b(jnp.asarray(s))) for s in SIGMAS])
    want = np.exp(-((SIGMAS[:, None] - np.array([0.0, 0.5, 1.0])) ** 2) / (2 * 0.04))
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_pgc_basis_matches_paper():
    """Φ(s) of 000_… Sim. 2 with L₀ = 0.2 m, s ∈ [0, L₀], rows (κ_x, κ_y, δL) mapped to (κ_y, κ_z, v_x)."""
    length = 0.2
    basis = PiecewiseGaussianCurvature(length)
    for s in SIGMAS * length:
        e = np.exp(-((s - length / 2) ** 2))
        paper = np.array([[0, 0, -1, -e, 0], [1, e, 0, 0, 0], [0, 0, 0, 0, 1.0]]) / length
        np.testing.assert_allclose(np.asarray(basis.paper_matrix(jnp.asarray(s / length))), paper, rtol=1e-14)
        full = np.asarray(basis(jnp.asarray(s / length)))
        np.testing.assert_allclose(full[1:4], paper, rtol=1e-14)
        assert np.all(full[[0, 4, 5]] == 0)


def _user_scalar(s):
    return jnp.stack([jnp.sin(jnp.pi * s), jnp.cos(jnp.pi * s)])


def _user_full(s):
    return jnp.zeros((6, 1)).at[2, 0].set(1.0 + s)


def test_user_bases_and_errors():
    np.testing.assert_allclose(np.asarray(ScalarBasis(_user_scalar, 2)(jnp.asarray(0.5))), [1.0, 0.0], atol=1e-15)
    assert float(FullBasis(_user_full, 1)(jnp.asarray(0.5))[2, 0]) == 1.5
    with pytest.raises(ValueError, match="shape"):
        ScalarBasis(_user_scalar, 3)
    with pytest.raises(ValueError, match="shape"):
        FullBasis(_user_full, 2)
    with pytest.raises(ValueError, match="n"):
        LegendreBasis(0)
    with pytest.raises(ValueError, match="width"):
        GaussianBasis(2, width=-1.0)
    with pytest.raises(TypeError, match="fn"):
        ScalarBasis(3, 2)
