"""Time derivatives of the inverse dynamics along a trajectory, ``Ṁ``, ``M̈`` and the Coriolis matrix.

Papers ``001_…`` (eqs. 12–13: ``τ̇``, ``τ̈`` for elastic-joint and VSA robots) and ``002_…`` (closed
forms of ``τ̇``, ``τ̈``, ``Ṁ``, ``M̈``, §3–5). Instead of new hand-written recursions (``001_…``
eqs. 36–60 go "two differentiation levels further than the NEA"), the recursive inverse dynamics is
differentiated along the curve whose derivatives are given (DESIGN §3.5): with the Taylor polynomial
``q(t) = Σ_j q⁽ʲ⁾ tʲ/j!`` the function ``t ↦ ID(q(t), q̇(t), q̈(t))`` is differentiated ``k`` times at
``t = 0`` by nested forward-mode ``jax.jvp`` (``jax.experimental.jet`` has no rule for ``lax.scan``).
This is exact (no finite differences) and works for any chain — rigid, soft or mixed — because it
differentiates whatever the recursion computes, internal visco-elastic forces included.

The public functions are compiled entry points (``_dispatch.entry_jit``, like
:func:`~kane_jax.inverse_dynamics`): one program per chain structure and ``order``. Called eagerly
they used to run the nested ``jvp``s operation by operation (measured below in the README).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import factorial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._dispatch import entry_jit
from .._types import Array, Config, Float, Vec3
from ..chain import Chain
from ._recursion import inverse_dynamics_kernel, mass_matrix_kernel, tip_wrench
from .inverse_dynamics import check_gravity


def _check_order(order: Any) -> int:
    if isinstance(order, bool) or not isinstance(order, int) or order < 0:
        raise ValueError(f"`order` must be a non-negative int, got {order!r}.")
    return int(order)


def check_derivatives(chain: Chain, derivs: Any, needed: int, what: str) -> list[Array]:
    """Validate ``derivs = (q, q̇, q̈, …)``: a sequence (or stacked array) of ``(nq,)`` vectors.

    At least ``needed`` entries are required; extra entries are ignored.
    """
    if isinstance(derivs, (str, bytes)) or derivs is None:
        raise TypeError(f"`derivs` must be a sequence (q, q̇, q̈, …) of arrays, got {type(derivs).__name__}.")
    if hasattr(derivs, "ndim"):
        if derivs.ndim != 2:
            raise ValueError(f"`derivs` given as one array must have shape (k, {chain.nq}), got shape {derivs.shape}.")
        derivs = list(derivs)
    try:
        derivs = list(derivs)
    except TypeError:
        raise TypeError(f"`derivs` must be a sequence (q, q̇, q̈, …) of arrays, got {type(derivs).__name__}.") from None
    if len(derivs) < needed:
        raise ValueError(
            f"{what} needs the first {needed} time derivatives (q, q̇, …, q^({needed - 1})) in `derivs`, "
            f"got {len(derivs)}.")
    names = ["q", "qd", "qdd", "q3", "q4", "q5", "q6"]
    out = [chain.check_state(d, f"derivs[{i}] ({names[i] if i < len(names) else f'q{i}'})")
           for i, d in enumerate(derivs[:needed])]
    dtype = jnp.result_type(*out)
    return [d.astype(dtype) for d in out]


def taylor_path(derivs: Sequence[Array]) -> Callable[[Array], list[Array]]:
    """``t ↦ [q(t), q̇(t), q̈(t), …]``: the Taylor polynomial with the given derivatives at ``t = 0``.

    Derivative ``m`` of the path is ``Σ_j q⁽ᵐ⁺ʲ⁾ tʲ/j!`` truncated at the last entry given.
    """
    n = len(derivs)

    def path(t):
        return [sum((derivs[m + j] * (t**j / factorial(j)) for j in range(n - m)), start=0 * derivs[m])
                for m in range(n)]

    return path


def taylor_derivatives(fn: Callable[[Array], Any], order: int, t0: Array) -> tuple:
    """``(f(t0), f'(t0), …, f⁽ᵏ⁾(t0))`` of a function of a scalar by nested ``jax.jvp``."""

    def upto(k):
        if k == 0:
            return lambda t: (fn(t),)
        lower = upto(k - 1)

        def f(t):
            primal, tangent = jax.jvp(lower, (t,), (jnp.ones_like(t),))
            return primal + (tangent[-1],)

        return f

    return upto(order)(t0)


def inverse_dynamics_derivatives(
    chain: Chain, derivs: Sequence[Config], *, order: int, gravity: Vec3 | None = None,
    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None,
) -> tuple[Config, ...]:
    """``(τ, τ̇, …, τ⁽ᵏ⁾)`` of the inverse dynamics along the curve whose derivatives are given.

    ``τ(t) = ID(q(t), q̇(t), q̈(t))`` (:func:`~kane_jax.inverse_dynamics`, internal visco-elastic
    forces included) is differentiated ``k = order`` times in time; ``τ̇`` and ``τ̈`` are the
    left-hand sides of paper ``001_…`` eqs. (12)–(13) and the first/second-order inverse dynamics of
    paper ``002_…`` (eqs. 28, 38). Works for any chain (rigid, soft, mixed); exact to round-off.

    Arguments:
        chain: the chain.
        derivs: ``(q, q̇, q̈, q⃛, q⁗, …)``, each ``(nq,)`` (or one ``(k, nq)`` array); at least
            ``order + 3`` entries (``τ⁽ᵏ⁾`` depends on ``q⁽ᵏ⁺²⁾``), extra entries are ignored.
        order: highest derivative ``k ≥ 0`` returned (keyword-only).
        gravity, tip_force, tip_torque: as in :func:`~kane_jax.inverse_dynamics`; the tip wrench is
            constant in time (its frame moves with the tip).

    Returns:
        Tuple of ``order + 1`` arrays of shape ``(nq,)``: ``τ, τ̇, …, τ⁽ᵏ⁾``.

    Raises:
        ValueError: ``order`` not a non-negative int, too few derivatives, wrong shapes.
    """
    return _inverse_dynamics_derivatives(chain, _array_entries(derivs), _check_order(order), gravity, tip_force,
                                         tip_torque)


def _array_entries(derivs: Any) -> Any:
    """Entries of ``derivs`` given as Python sequences of numbers become arrays: the compiled entry
    points trace array leaves and key their programs on every other leaf (a list of floats would
    compile once per value)."""
    if isinstance(derivs, (list, tuple)):
        return [np.asarray(x) if isinstance(x, (list, tuple, int, float)) else x for x in derivs]
    return derivs


@entry_jit
def _inverse_dynamics_derivatives(chain, derivs, order: int, gravity, tip_force, tip_torque) -> tuple[Config, ...]:
    d = check_derivatives(chain, derivs, order + 3, f"inverse_dynamics_derivatives(order={order})")
    return id_derivatives(chain, d, order, gravity=check_gravity(chain, gravity),
                          tip=tip_wrench(tip_force, tip_torque, d[0].dtype))


def id_derivatives(chain: Chain, derivs: Sequence[Config], order: int, *, gravity: Vec3 | None = None,
                   tip=None) -> tuple[Config, ...]:
    """Kernel of :func:`inverse_dynamics_derivatives` (validated ``derivs``, at least ``order + 3``)."""
    path = taylor_path(derivs)

    def tau(t):
        q, qd, qdd = path(t)[:3]
        return inverse_dynamics_kernel(chain, q, qd, qdd, gravity=gravity, tip=tip)

    return taylor_derivatives(tau, order, jnp.zeros((), dtype=derivs[0].dtype))


def mass_matrix_derivatives(chain: Chain, derivs: Sequence[Config], *, order: int) -> tuple[Float[Array, "nq nq"], ...]:
    """``(M, Ṁ, …, M⁽ᵏ⁾)`` of the mass matrix along the curve whose derivatives are given.

    ``Ṁ = DM[q̇]``, ``M̈ = D²M[q̇, q̇] + DM[q̈]`` (paper ``002_…`` eqs. 29, 40), by nested ``jax.jvp``
    of :func:`~kane_jax.mass_matrix`. All are symmetric.

    Arguments:
        chain: the chain. derivs: ``(q, q̇, q̈, …)``, at least ``order + 1`` entries.
        order: highest derivative returned (keyword-only).

    Returns:
        Tuple of ``order + 1`` arrays of shape ``(nq, nq)``.

    Raises:
        ValueError: ``order`` not a non-negative int, too few derivatives, wrong shapes.
    """
    return _mass_matrix_derivatives(chain, _array_entries(derivs), _check_order(order))


@entry_jit
def _mass_matrix_derivatives(chain, derivs, order: int) -> tuple[Float[Array, "nq nq"], ...]:
    d = check_derivatives(chain, derivs, order + 1, f"mass_matrix_derivatives(order={order})")
    path = taylor_path(d)
    return taylor_derivatives(lambda t: mass_matrix_kernel(chain, path(t)[0]), order, jnp.zeros((), dtype=d[0].dtype))


def coriolis_matrix(chain: Chain, q: Config, qd: Config) -> Float[Array, "nq nq"]:
    """Coriolis/centrifugal matrix ``C(q, q̇)`` with ``Ṁ − 2C`` skew symmetric (paper ``002_…`` §5).

    The Christoffel arrangement ``C_ij = Σ_k Γ_ijk q̇_k``, ``Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j −
    ∂M_jk/∂q_i)``, built without the ``(nq, nq, nq)`` tensor: with ``T = ∂(M(q) v)/∂q |_{v = q̇}``
    (``nq`` forward-mode directional derivatives of one inverse-dynamics call, since
    ``M(q) v = ID(q, 0, v)`` without gravity and internal forces),

        ``C = ½ (Ṁ + T − Tᵀ)``,  so ``Ṁ − 2C = Tᵀ − T`` (skew) and ``C + Cᵀ = Ṁ``.

    ``C q̇`` equals the velocity-product terms ``c(q, q̇)`` of the inverse dynamics. Valid for any
    chain whose kinetic energy is ``½ q̇ᵀ M(q) q̇`` (every kane_jax chain), soft bodies included.

    Arguments:
        chain: the chain. q, qd: configuration and velocity, each ``(nq,)``.

    Returns:
        ``(nq, nq)`` matrix.

    Raises:
        ValueError: shapes that do not match the chain.
    """
    return _coriolis_matrix(chain, q, qd)


@entry_jit
def _coriolis_matrix(chain, q: Config, qd: Config) -> Float[Array, "nq nq"]:
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    dtype = jnp.result_type(q, qd)
    q, qd = q.astype(dtype), qd.astype(dtype)
    g0 = jnp.zeros(3, dtype=dtype)

    def momentum(x):  # M(x) q̇ = ID(x, 0, q̇) without gravity or internal forces (no velocity terms traced)
        return inverse_dynamics_kernel(chain, x, None, qd, gravity=g0, internal=False)

    t = jax.jacfwd(momentum)(q)
    m_dot = jax.jvp(lambda x: mass_matrix_kernel(chain, x), (q,), (qd,))[1]
    return 0.5 * (m_dot + t - t.T)
