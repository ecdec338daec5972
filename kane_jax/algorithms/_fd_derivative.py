"""Forward dynamics differentiated through the inverse dynamics, not through ``M`` and its factor.

``q̈ = FD(q, q̇, τ)`` is the solution of ``ID(q, q̇, q̈) = τ``. Differentiating that identity at the
solution (Carpentier and Mansard, *Analytical derivatives of rigid body dynamics algorithms*, RSS
2018, §IV; paper ``000_…`` eq. 56 for the ID form of the FD),

    M(q) dq̈ = dτ − ∂ID(q, q̇, q̈)[dq, dq̇, dθ, dg, dtip]  at q̈ = FD(q, q̇, τ),

so a derivative of the FD is one derivative of the O(N) ID recursion at the computed accelerations
and one more solve with the mass matrix already factored — not the derivative of the composite
mass matrix and of every entry of its Cholesky factor. ``θ`` are the chain's array leaves (masses,
stiffnesses, geometry), ``g`` gravity, ``tip`` the tip wrench; every one of them enters the ID
through the per-module terms or as an argument, so the rule is exact for all of them.

:func:`forward_dynamics_kernel` carries this rule as a ``custom_jvp`` (reverse mode transposes
it); :func:`forward_dynamics_direct` is the same FD differentiated operation by operation, kept as
the tests' oracle.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from .._chunks import in_chunks, partial_jvp
from .._types import Config, Vec3
from ._recursion import Wrench, id_recursion, mass_and_bias, solve_chain_mass, tip_wrench
from ._terms import ModuleTerms, chain_terms


def _accelerations(chain, terms: ModuleTerms, force: Config, gravity: Vec3, tip: Wrench):
    """``(M, q̈)`` from the module terms: the primal of the FD and of its derivative rule."""
    mass, bias = mass_and_bias(chain, terms, gravity=gravity, tip=tip)
    return mass, solve_chain_mass(chain, mass, force - bias)


def _fd(chain, q: Config, qd: Config, force: Config, gravity: Vec3, tip: Wrench, internal: bool) -> Config:
    return _accelerations(chain, chain_terms(chain, q, qd, internal=internal), force, gravity, tip)[1]


@eqx.filter_custom_jvp
def _fd_implicit(chain, q, qd, force, gravity, tip, *, internal):
    # batched on a CPU: in chunks of a few states, whose intermediates stay in the caches (_chunks.py)
    return in_chunks(_fd)(chain, q, qd, force, gravity, tip, internal)


@_fd_implicit.def_jvp
def _fd_implicit_jvp(primals, tangents, *, internal):
    chain, q, qd, force, gravity, tip = primals
    dchain, dq, dqd, dforce, dgravity, dtip = tangents
    # the terms and their tangents in one pass; the FD's primal from the primal terms
    terms, dterms = partial_jvp(lambda c, x, v: chain_terms(c, x, v, internal=internal),
                                (chain, q, qd), (dchain, dq, dqd))
    mass, qdd = _accelerations(chain, terms, force, gravity, tip)
    # ∂ID at the computed accelerations (q̈ held fixed)
    _, did = partial_jvp(lambda t, g, w: id_recursion(chain, t, qdd, -g, w).tau,
                         (terms, gravity, tip), (dterms, dgravity, dtip))
    if did is None:
        rhs = dforce
    else:
        rhs = -did if dforce is None else dforce - did
    return qdd, None if rhs is None else solve_chain_mass(chain, mass, rhs)


def _resolve(chain, q, qd, force, gravity, tip):
    g = jnp.asarray(chain.gravity if gravity is None else gravity)
    dtype = jnp.result_type(q, qd, force, g)  # a float64 chain's gravity is not rounded to float32 states
    g = jnp.asarray(g, dtype)
    return g, tip_wrench(None, None, dtype) if tip is None else tip


def forward_dynamics_kernel(chain, q: Config, qd: Config, force: Config, *, gravity: Vec3 | None = None,
                            tip: Wrench | None = None, internal: bool = True) -> Config:
    """``q̈ = M⁻¹ (force − ID(q, q̇, 0))`` (``internal=False``: the bias without the internal forces),
    differentiated through the ID (module docstring): the same values as
    :func:`forward_dynamics_direct`, derivatives to rounding."""
    g, tip = _resolve(chain, q, qd, force, gravity, tip)
    return _fd_implicit(chain, q, qd, force, g, tip, internal=internal)


def forward_dynamics_direct(chain, q: Config, qd: Config, force: Config, *, gravity: Vec3 | None = None,
                            tip: Wrench | None = None, internal: bool = True) -> Config:
    """:func:`forward_dynamics_kernel` differentiated operation by operation (through the composite
    mass matrix and the Cholesky solve): the oracle of the derivative rule."""
    g, tip = _resolve(chain, q, qd, force, gravity, tip)
    return _fd(chain, q, qd, force, g, tip, internal)
