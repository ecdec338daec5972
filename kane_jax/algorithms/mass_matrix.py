"""Mass matrix by vmapped inverse-dynamics columns: CRBA's counterpart (paper ``000_…`` eq. 56)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from .._types import Array, Config, Float
from ..chain import Chain
from ._terms import chain_terms
from .inverse_dynamics import Wrench, recursion


@eqx.filter_jit
def mass_matrix(chain: Chain, q: Config) -> Float[Array, "nq nq"]:
    """Generalized mass matrix ``M(q)`` (symmetric positive definite).

    Column ``j`` is ``ID(q, 0, e_j)`` with gravity, internal forces and tip loads off (paper
    ``000_…`` §IV, eq. 56; ``003_…`` §5.2); the columns are one ``vmap`` of the recursion, and
    the configuration-only per-module terms are computed once (they do not depend on ``e_j``).

    Arguments:
        chain: the chain. q: configuration ``(nq,)``.

    Returns:
        ``(nq, nq)`` matrix.

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    eye = jnp.eye(chain.nq, dtype=jnp.result_type(q, chain.gravity))
    zero = jnp.zeros_like(eye[0])
    z3 = jnp.zeros(3, dtype=eye.dtype)

    def column(e):
        terms = chain_terms(chain, q.astype(e.dtype), zero, e, internal=False)
        return recursion(chain, terms, z3, Wrench(z3, z3)).tau

    m = jax.vmap(column, out_axes=1)(eye)
    return 0.5 * (m + m.T)
