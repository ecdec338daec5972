"""Mass matrix by acceleration-only inverse-dynamics columns: CRBA's counterpart (paper ``000_…`` eq. 56)."""

from __future__ import annotations

from .._chunks import in_chunks_differentiable
from .._dispatch import entry_jit
from .._types import Array, Config, Float
from ._recursion import mass_matrix_kernel


@entry_jit(sequential=True)
def mass_matrix(chain, q: Config) -> Float[Array, "nq nq"]:
    """Generalized mass matrix ``M(q)`` (symmetric positive definite).

    Column ``j`` is ``ID(q, 0, e_j)`` with gravity, internal forces and tip loads off (paper
    ``000_…`` §IV, eq. 56; ``003_…`` §5.2). The configuration-dependent module terms are computed
    once; with ``q̇ = 0`` the columns need no velocity or curvature terms, and they are one
    ``vmap`` of a forward and a backward pass of 3-vector algebra.

    Arguments:
        chain: the chain. q: configuration ``(nq,)``.

    Returns:
        ``(nq, nq)`` matrix.

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    return _mass_matrix(chain, q)


# batched on a CPU in chunks of a few states, derivatives the kernel's own (_chunks.py)
_mass_matrix = in_chunks_differentiable(mass_matrix_kernel)
