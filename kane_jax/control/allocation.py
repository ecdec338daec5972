"""Tendons that only pull: allocation of a desired generalized force onto bounded inputs.

A controller asks for a generalized force ``τ_d`` on the actuated coordinates; tendons realize
``Q_a = A(q)ᵀ u`` (paper ``000_…`` eq. 57) with tensions ``u ≥ u_min ≥ 0``. The allocation solves
the small quadratic program

    minimize  ‖Aᵀ u − τ_d‖² + w ‖u − p‖²   subject to  u_min ≤ u ≤ u_max

exactly, by enumerating its active sets, for up to four inputs (a segment's tendons:
:mod:`kane_jax.control._box_qp`, loop-free) or for independent groups of up to four (the tendons of
several bodies, each on its own body's coordinates: one exact problem per group), and with qpax's
differentiable interior-point solver otherwise: where ``τ_d`` is reachable with pulling
tendons the residual vanishes (up to ``w``) and, among the exact solutions, the one nearest to the
pretension ``p`` is taken (the pretension acts in the null space of ``Aᵀ``, the co-contraction
that antagonistic tendons allow); where it is not, the nearest reachable force is produced.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import qpax

from .._dispatch import entry_jit
from .._types import Array, Float
from ._box_qp import EXACT_MAX, solve_box_qp


def allocate_tensions(
    matrix: Float[Array, "nu n"], force: Float[Array, " n"], *, minimum: float | Array = 0.0,
    maximum: float | Array | None = None, pretension: float | Array | None = None, weight: float = 1e-8,
    tol: float = 1e-7, blocks: Sequence[tuple[Sequence[int], Sequence[int]]] | None = None,
) -> Float[Array, " nu"]:
    """Non-negative (bounded) inputs ``u`` whose generalized force ``matrixᵀ u`` best matches ``force``.

    Arguments:
        matrix: ``A`` of shape ``(nu, n)``: input ``j`` produces the generalized force ``A[j]``
            (``kj.actuation_matrix(chain, q).T``, restricted to the coordinates to match).
        force: the desired generalized force ``τ_d``, shape ``(n,)``.
        minimum: lower bound on every input (default 0: tendons only pull), scalar or ``(nu,)``.
        maximum: optional upper bound, scalar or ``(nu,)``.
        pretension: the inputs preferred among equally good ones (scalar or ``(nu,)``; default
            ``minimum``), e.g. a co-contraction that keeps tendons taut.
        weight: ``w``, the weight of ``‖u − p‖²`` relative to the force residual, itself scaled by
            the smallest non-zero eigenvalue of ``A Aᵀ`` (small: the residual comes first in every
            direction the inputs reach; the relative bias of a reachable force is ≈ ``w``).
        tol: qpax's solver tolerance (more than four inputs), on the KKT residual of the problem in
            tensions relative to their size (``‖τ‖/σ_min(A)``, the pretension, the lower bound): the
            tensions' relative accuracy. Up to four inputs the active set is exact and the tensions carry
            the rounding of the weighted normal equations (condition ≈ σ_max²/w: ≈ 1e-7 relative
            for the default ``weight``, as qpax's tolerance).
        blocks: optional independent groups ``(inputs, components)``: the inputs of each group act on
            its components of the force only (``matrix`` is zero outside the groups, as the tendons
            of different bodies are on each body's coordinates). The inputs of all groups are
            ``0 … nu − 1`` once each; the components are distinct (components in no group carry
            no input's force and do not enter the problem). The QP then separates into one per group,
            with the same ``w`` and scaling as the whole problem (so the same minimizer); groups of at
            most four inputs are solved exactly, equal-sized groups in one ``vmap``
            (``003-sim1``'s nine tendons: three exact 3-tendon problems instead of one interior
            point); with a larger group the whole problem goes to qpax as without ``blocks``.

    Returns:
        ``u`` of shape ``(nu,)``. Jit- and vmap-compatible. Up to four inputs (or groups of up to
        four) differentiable in
        forward and reverse mode (the exact minimizer's derivative within its active set); beyond,
        in reverse mode only (qpax's custom VJP on its relaxed KKT system: gradients of a smoothed
        problem, ≈ 1e-3 relative near active bounds). Float32 inputs are solved in float64 and the tensions returned
        in float32 (so float64 must be enabled). Works under ``jax_numpy_rank_promotion="raise"``
        (qpax's implicit broadcasts, forward and backward, run in a scope that allows them).

    Raises:
        ValueError: float32 inputs while float64 is disabled (``jax_enable_x64``); ``matrix`` not
            2-D, ``force`` not of length ``matrix.shape[1]``, a bound of the wrong size,
            ``maximum < minimum`` (concrete values), or a non-positive ``weight``; ``blocks`` that
            are not a partition of the inputs into groups of distinct components, or (concrete
            values) a ``matrix`` that is non-zero outside them.
    """
    a, tau = jnp.asarray(matrix), jnp.asarray(force)
    # JAX's promotion of both, at least floating point (an integer matrix must not truncate a force)
    out_dtype = jnp.result_type(a.dtype, tau.dtype, float)
    a, tau = a.astype(out_dtype), tau.astype(out_dtype)
    if jnp.finfo(out_dtype).bits < 64:
        # the QP is scaled by 1/w ~ 1e8 (the residual first, the pretension in the null space): beyond
        # single precision, where qpax's interior point returns NaN or tensions off by up to 14 %
        # (measured, random 3-tendon problems). Solved in float64, returned in the caller's dtype.
        if not jax.config.jax_enable_x64:
            raise ValueError(f"matrix/force: allocate_tensions solves its QP in float64 (single precision is too "
                             f"coarse for it), but got {out_dtype} with float64 disabled; enable it with "
                             f"jax.config.update('jax_enable_x64', True)")
        a, tau = a.astype(jnp.float64), tau.astype(jnp.float64)
    if a.ndim != 2:
        raise ValueError(f"matrix: expected a 2-D array (nu, n), got shape {a.shape}")
    nu, n = a.shape
    if tau.shape != (n,):
        raise ValueError(f"force: expected shape ({n},) to match matrix {a.shape}, got {tau.shape}")
    if not weight > 0:
        raise ValueError(f"weight: expected a positive number, got {weight!r}")
    groups = None if blocks is None else tuple(_check_blocks(blocks, a, nu, n))

    def bound(x, name):  # an array (a Python number would be a static argument of the compiled solve)
        if np.ndim(x) != 0 and np.shape(x) != (nu,):
            raise ValueError(f"{name}: expected a scalar or shape ({nu},), got {np.shape(x)}")
        return jnp.asarray(x, dtype=a.dtype)

    lo = bound(minimum, "minimum")
    p = None if pretension is None else bound(pretension, "pretension")
    hi = None if maximum is None else bound(maximum, "maximum")
    if hi is not None and not any(isinstance(x, jax.core.Tracer) for x in (lo, hi)):
        # concrete bounds checked here; traced ones are the caller's responsibility
        if np.any(np.asarray(hi) < np.asarray(lo)):
            raise ValueError(f"maximum: must be >= minimum, got maximum {hi} and minimum {lo}")
    return _allocate(a, tau, lo, p, hi, groups=groups, weight=float(weight), tol=float(tol)).astype(out_dtype)


@entry_jit
def _allocate(a: Array, tau: Array, minimum, pretension, maximum, *, groups, weight: float, tol: float) -> Array:
    """:func:`allocate_tensions`' solve of checked arguments, one compiled program per structure when called
    eagerly (op by op, its first call compiled ≈ 100 small programs), a nested ``jit`` inside a caller's."""
    nu = a.shape[0]
    lo = jnp.broadcast_to(jnp.asarray(minimum, dtype=a.dtype), (nu,))
    p = lo if pretension is None else jnp.broadcast_to(jnp.asarray(pretension, dtype=a.dtype), (nu,))
    hi = None if maximum is None else jnp.broadcast_to(jnp.asarray(maximum, dtype=a.dtype), (nu,))
    eye = jnp.eye(nu, dtype=a.dtype)
    # ½ uᵀ Q u + cᵀ u with Q = 2 (A Aᵀ + w I), c = −2 (A τ + w p)
    # w is relative to the smallest non-zero eigenvalue of A Aᵀ: the residual comes first in every
    # direction the inputs reach, however ill-conditioned A is (a tendon's bending lever is ~100x
    # smaller than its axial one), and the pretension decides only in A's null space. A solver
    # setting, not a model quantity: no gradient flows through it.
    ev = jax.lax.stop_gradient(jnp.linalg.eigvalsh(a @ a.T))
    top = jnp.maximum(ev[-1], jnp.finfo(a.dtype).tiny)
    smallest = jnp.min(jnp.where(ev > 1e-10 * top, ev, top))
    w = weight * smallest
    # the objective divided by w (same minimizer): the pretension's curvature is 2, so the solver's
    # tolerance resolves the null space too (at scale w it stopped wherever it started there)
    quad = 2.0 * (a @ a.T / w + eye)
    lin = -2.0 * (a @ tau / w + p)
    # and in tensions relative to their size, u = T v (the minimizer in v is u / T): qpax stops on
    # the KKT residual's absolute max norm and floors its slack and dual variables at √eps, so it
    # never met the former tol = 1e-10 (all 30 iterations at every call, the last ≈ 20 changing
    # nothing), and an absolute tolerance it can meet for newtons is loose for millinewtons (1e-5:
    # 5e-4 relative error, measured). T: the least-squares tensions' bound ‖τ‖/σ_min(A), the
    # pretension, the lower bound; a solver setting like w. When all vanish, so does the answer
    # (u = 0), which the solver meets to ≈ 1e-4 T: T is then tiny.
    size = jnp.maximum(jnp.linalg.norm(tau) / jnp.sqrt(smallest), jnp.max(jnp.abs(jnp.concatenate([p, lo]))))
    size = jax.lax.stop_gradient(jnp.where(size > 0, size, jnp.sqrt(jnp.finfo(a.dtype).tiny)))
    if groups is not None and max(len(inputs) for inputs, _ in groups) <= EXACT_MAX:
        return size * _solve_blocks(groups, quad, lin / size, lo / size, None if hi is None else hi / size,
                                    nu)
    if nu <= EXACT_MAX:  # a segment's few tendons: every active set at once, exact, loop-free (_box_qp.py)
        v = solve_box_qp(quad, lin / size, lo / size, upper=None if hi is None else hi / size)
    else:  # qpax's inequality rows: −v ≤ −lo (and v ≤ hi)
        g, h = (-eye, -lo) if hi is None else (jnp.concatenate([-eye, eye]), jnp.concatenate([-lo, hi]))
        v = _solve_qp(quad, lin / size, g, h / size, tol)
    return size * v


def _check_blocks(blocks, a: Array, nu: int, n: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``blocks`` as tuples of ints, checked: a partition of the inputs, distinct components, and (for
    a concrete ``matrix``) zeros outside the groups."""
    try:
        groups = [(tuple(int(i) for i in inputs), tuple(int(j) for j in comps)) for inputs, comps in blocks]
    except (TypeError, ValueError):
        raise TypeError(f"blocks: expected a sequence of (inputs, components) index sequences, "
                        f"got {blocks!r}") from None
    inputs = [i for g, _ in groups for i in g]
    comps = [j for _, c in groups for j in c]
    if not groups or any(not g for g, _ in groups) or sorted(inputs) != list(range(nu)):
        raise ValueError(f"blocks: expected groups whose inputs are 0..{nu - 1} once each, got {blocks!r}")
    if len(set(comps)) != len(comps) or any(not 0 <= j < n for j in comps):
        raise ValueError(f"blocks: expected distinct components in 0..{n - 1}, got {blocks!r}")
    if not isinstance(a, jax.core.Tracer):
        inside = np.zeros((nu, n), dtype=bool)
        for g, c in groups:
            inside[np.ix_(g, c)] = True
        if np.any(np.asarray(a)[~inside] != 0):
            raise ValueError("blocks: expected a matrix that is zero outside the groups (an input acting on "
                             "another group's components, or on none), got non-zero entries there")
    return groups


def _solve_blocks(groups, quad: Array, lin: Array, lower: Array, upper: Array | None, nu: int) -> Array:
    """The QP's minimizer group by group: ``quad`` is block diagonal over the groups' inputs (the
    matrix is zero outside them, ``quad = 2 (A Aᵀ / w + I)``), so the minimizer is each group's own;
    groups of equal size share one ``vmap`` of :func:`solve_box_qp`."""
    v = jnp.zeros((nu,), dtype=quad.dtype)
    by_size: dict[int, list[tuple[int, ...]]] = {}
    for inputs, _ in groups:
        by_size.setdefault(len(inputs), []).append(inputs)
    for members in by_size.values():
        idx = jnp.asarray(np.array(members))  # (G, k)
        sub = quad[idx[:, :, None], idx[:, None, :]]
        # (no upper bounds: None, a pytree without leaves, passes through the vmap)
        solved = jax.vmap(lambda qd, c, lo, hi: solve_box_qp(qd, c, lo, upper=hi))(
            sub, lin[idx], lower[idx], None if upper is None else upper[idx])
        v = v.at[idx.reshape(-1)].set(solved.reshape(-1))
    return v


def _qpax_primal(quad, lin, g, h, tol):
    """qpax's primal solution of ``min ½ vᵀ quad v + linᵀ v`` s.t. ``g v ≤ h`` (no equalities), under
    ``jax.numpy_rank_promotion("allow")``: qpax broadcasts implicitly (a user may have set "raise")."""
    none = jnp.zeros((0, quad.shape[0]), dtype=quad.dtype)
    with jax.numpy_rank_promotion("allow"):
        return qpax.solve_qp_primal(quad, lin, none, jnp.zeros((0,), quad.dtype), g, h, solver_tol=tol)


# the same solve whose reverse pass (qpax's custom VJP, traced when a transformation transposes it,
# outside the forward's scope) runs under "allow" as well
_solve_qp = jax.custom_vjp(_qpax_primal, nondiff_argnums=(4,))


def _solve_qp_fwd(quad, lin, g, h, tol):
    with jax.numpy_rank_promotion("allow"):
        return jax.vjp(lambda *x: _qpax_primal(*x, tol), quad, lin, g, h)


def _solve_qp_bwd(tol, pullback, cotangent):
    with jax.numpy_rank_promotion("allow"):
        return pullback(cotangent)


_solve_qp.defvjp(_solve_qp_fwd, _solve_qp_bwd)
