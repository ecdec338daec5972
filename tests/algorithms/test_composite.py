"""The composite-inertia mass matrix (algorithms/_composite.py) against the column-by-column oracle.

``mass_columns`` runs one acceleration-only inverse dynamics per coordinate (DESIGN §3, paper
``000_…`` eq. 56); ``composite_mass_matrix`` reorganizes the same terms into composite inertias in
the base frame (in its own frame for a chain of one module). Same model, so the matrices and their
q-derivatives agree to round-off (stated tolerances: 1e-12 of max |M|, 1e-10 of max |∂M/∂q|), on
rigid, generic, multi-coordinate-joint and soft chains, at random states and at the straight
configuration q = 0.
"""

import helpers.robots as wr
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.algorithms._composite import composite_mass_matrix
from kane_jax.algorithms._recursion import mass_columns
from kane_jax.algorithms._terms import chain_terms


def _chains():
    rng = np.random.default_rng(3)
    pcs = kj.CosseratPCS(length=0.15, radius=0.01, strains=("bend_y", "bend_z", "stretch"))
    return {
        "iiwa-like": kj.models.iiwa_like(),
        "mixed (generic bodies, multi-coordinate joints)": wr.mixed_chain(rng),
        "revolute + planar CC (uneven rows)": wr.soft_arm(),
        "PCS on fixed joints": kj.Chain([(kj.Fixed(), pcs), (kj.Revolute((0, 1, 0)), pcs)], gravity=(0, 0, -9.81)),
        # one module: the matrix in the module's own frame, not the base's
        "one six-strain PCS rod": kj.Chain([(kj.Fixed(), kj.CosseratPCS(length=0.15, radius=0.01))]),
        "one PCS rod on a universal joint": kj.Chain([(kj.Universal((1, 0, 0), (0, 1, 0)), pcs)]),
        "one rigid link": kj.Chain([(kj.Revolute((0.3, 1, 0.2)), wr.random_rigid(rng))]),
    }


CHAINS = _chains()


@pytest.mark.parametrize("name", list(CHAINS))
def test_composite_equals_columns(name):
    chain = CHAINS[name]
    both = jax.jit(lambda q: tuple(m(chain, chain_terms(chain, q, None, internal=False))
                                   for m in (composite_mass_matrix, mass_columns)))
    d_both = jax.jit(jax.jacfwd(lambda q: jnp.stack(both(q))))
    rng = np.random.default_rng(11)
    for q in (jnp.zeros(chain.nq), jnp.asarray(rng.uniform(-0.8, 0.8, chain.nq))):
        fast, oracle = both(q)
        np.testing.assert_allclose(fast, oracle, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(oracle))))
        np.testing.assert_allclose(fast, fast.T, rtol=0, atol=1e-15 * float(jnp.max(jnp.abs(oracle))))
        d_fast, d_oracle = d_both(q)
        assert np.all(np.isfinite(np.asarray(d_fast)))
        np.testing.assert_allclose(d_fast, d_oracle, rtol=0, atol=1e-10 * float(jnp.max(jnp.abs(d_oracle)) + 1e-300))
