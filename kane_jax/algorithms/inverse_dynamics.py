"""Recursive inverse dynamics of a chain of rigid and soft modules: RNEA's counterpart.

Paper ``003_…`` Algorithm 2 / ``000_…`` Theorem 1 and Alg. 2 (eqs. 36–45, 50–55), in the form of
DESIGN §3: per-module terms in parallel, a forward ``lax.scan`` for frame velocities and
accelerations, body sums from mass moments, a backward ``lax.scan`` for the propagated wrenches,
and a projection on each module's coordinates. O(N).
"""

from __future__ import annotations

import jax.numpy as jnp

from .._chunks import in_chunks_differentiable
from .._dispatch import entry_jit
from .._types import Config, Vec3
from ._recursion import FrameMotion, InverseDynamicsResult, Wrench, id_recursion, tip_wrench
from ._terms import chain_terms

__all__ = ["FrameMotion", "InverseDynamicsResult", "Wrench", "inverse_dynamics", "inverse_dynamics_full",
           "check_gravity"]


def check_gravity(chain, gravity) -> jnp.ndarray:
    """``chain.gravity`` or the override, validated as a 3-vector."""
    g = chain.gravity if gravity is None else jnp.asarray(gravity)
    if g.shape != (3,):
        raise ValueError(f"`gravity` must have shape (3,), got shape {g.shape}.")
    return g


@entry_jit(sequential=True)
def inverse_dynamics_full(
    chain, q: Config, qd: Config, qdd: Config, *, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None, internal: bool = True,
) -> InverseDynamicsResult:
    """Like :func:`inverse_dynamics` but also returns frame motions and joint wrenches.

    Arguments: as :func:`inverse_dynamics`, plus ``internal``: include the joints' and bodies'
    elastic and dissipative forces (default True).

    Returns:
        :class:`InverseDynamicsResult`: ``tau``; per module the frame motion (angular velocity,
        angular and linear acceleration of ``{S_i}`` in ``{S_i}``) and the wrench ``(F_i, T_i)``
        transmitted to body ``i`` (in ``{S_i}``); the wrench on the base (in ``{S_0}``).

    Raises:
        ValueError: arrays whose shapes do not match the chain.
    """
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    qdd = chain.check_state(qdd, "qdd")
    return _one_state(chain, q, qd, qdd, check_gravity(chain, gravity), tip_force, tip_torque, internal)


@entry_jit(sequential=True)
def inverse_dynamics(
    chain, q: Config, qd: Config, qdd: Config, *, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None,
) -> Config:
    """Generalized forces ``τ = M(q) q̈ + c(q, q̇) + G(q) + ∂U/∂q + D q̇`` (RNEA's counterpart).

    The model-agnostic recursive Kane inverse dynamics (paper ``003_…`` Alg. 2, ``000_…`` Alg. 2,
    eqs. 36–45 and 50–55): per-module terms in parallel, then a forward and a backward pass over
    the modules (O(N)).

    Arguments:
        chain: the :class:`~kane_jax.Chain`.
        q, qd, qdd: configuration, velocity and acceleration, each of shape ``(nq,)``.
        gravity: overrides ``chain.gravity`` (base-frame 3-vector; zeros turn gravity off).
        tip_force, tip_torque: external force [N] and torque [N m] applied *to* the tip, in the
            tip frame ``{S_N}``, torque about its origin; ``τ`` is what the actuators must supply
            on top of them.

    Returns:
        ``(nq,)`` generalized forces.

    Raises:
        ValueError: arrays whose shapes do not match the chain.
    """
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    qdd = chain.check_state(qdd, "qdd")
    g = check_gravity(chain, gravity)
    return _generalized_forces(chain, q, qd, qdd, g, *(None if x is None else jnp.asarray(x)
                                                       for x in (tip_force, tip_torque)))


def _one_state(chain, q, qd, qdd, gravity, tip_force, tip_torque, internal=True) -> InverseDynamicsResult:
    """The recursion of both entry points for one state (the tip wrench in the terms' dtype)."""
    terms = chain_terms(chain, q, qd, internal=internal)
    return id_recursion(chain, terms, qdd, -gravity, tip_wrench(tip_force, tip_torque, terms.rot.dtype))


# batched on a CPU in chunks of a few states (their intermediates stay in the caches), derivatives the
# recursion's own (_chunks.py): one six-strain PCS rod's batched ID 4.5-5.6 -> 2.7 us per state
_generalized_forces = in_chunks_differentiable(lambda *state: _one_state(*state).tau)
