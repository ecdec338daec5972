"""``_small.contract``: the element-wise ``einsum`` (no dot kernel) of the section moments and the joints."""

import jax.numpy as jnp
import numpy as np
import pytest

from kane_jax._small import contract

SPECS = [  # the forms the library uses, plus a transposed output
    ("kab,kbc->kac", [(5, 3, 3), (5, 3, 3)]), ("k,ka,kb->ab", [(5,), (5, 3), (5, 3)]),
    ("kja,kla->jl", [(5, 2, 3), (5, 2, 3)]), ("kja,j->ka", [(5, 2, 3), (2,)]), ("kab,kb->a", [(5, 3, 3), (5, 3)]),
    ("km,kma,kmb->kab", [(2, 40), (2, 40, 3), (2, 40, 3)]), ("ij,j->i", [(6, 4), (4,)]), ("ab->ba", [(3, 4)]),
]


@pytest.mark.parametrize("spec, shapes", SPECS, ids=[s for s, _ in SPECS])
def test_contract_equals_einsum(spec, shapes):
    rng = np.random.default_rng(len(spec))
    ops = [jnp.asarray(rng.normal(size=s)) for s in shapes]
    ref = jnp.einsum(spec, *ops)
    got = contract(spec, *ops)
    assert got.shape == ref.shape
    assert float(jnp.max(jnp.abs(got - ref))) <= 1e-13 * max(float(jnp.max(jnp.abs(ref))), 1.0)


def test_contract_rejects_what_it_does_not_implement():
    x = jnp.ones((3, 3))
    with pytest.raises(ValueError, match="repeats an index"):
        contract("ii->i", x)
    with pytest.raises(ValueError, match="operand specs"):
        contract("ij,j->i", x)
