"""Statics through the inverse dynamics: equilibria and holding inputs (paper ``003_…`` eq. 55).

At an equilibrium the velocities and accelerations vanish, so the equations of motion reduce to

    ``ID(q, 0, 0) = G(q) + ∂U/∂q = A(q)ᵀ u``                                      (003_… eq. 55)

:func:`equilibrium` solves it for ``q`` given ``u`` with Newton–Raphson on the recursive ID (one
ID call and its Jacobian per iteration, as the paper suggests); :func:`holding_input` solves it for
``u`` given ``q`` (the feed-forward that holds a configuration).
"""

from __future__ import annotations

from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import optimistix as optx

from . import _checks
from ._differences import with_difference_jacobian
from ._dispatch import _eager, entry_jit
from ._newton import NewtonAtRoot
from ._types import Array, Config, Float, Vec3
from .algorithms._recursion import inverse_dynamics_kernel, tip_wrench
from .algorithms.actuation import generalized_input, input_matrix
from .algorithms.inverse_dynamics import check_gravity
from .chain import Chain


class Equilibrium(NamedTuple):
    """Result of :func:`equilibrium`.

    Fields:
        q: ``(nq,)`` equilibrium configuration (differentiable w.r.t. ``u`` and the chain's
            parameters by the implicit function theorem).
        residual: ``(nq,)`` the remaining ``ID(q, 0, 0) − A(q)ᵀ u`` [N, N m].
        num_steps: Newton iterations taken.
        success: boolean scalar, True when Newton met its tolerances within ``max_steps``.
    """

    q: Config
    residual: Config
    num_steps: Array
    success: Array


class HoldingInput(NamedTuple):
    """Result of :func:`holding_input`: the input ``u`` and what it leaves unbalanced.

    ``residual = ID(q, 0, 0) − A(q)ᵀ u``: zero (to rounding) for fully actuated chains, the
    least-squares remainder (orthogonal to the columns of ``A(q)ᵀ``) for underactuated ones; a
    nonzero residual means ``q`` is not an equilibrium reachable by any input.
    """

    u: Float[Array, " nu"]
    residual: Config


def _check_input(chain: Chain, u, name: str = "u") -> Array:
    arr = jnp.asarray(u)
    size = chain.nu if chain.nu else chain.nq
    what = "actuator inputs (chain.nu)" if chain.nu else "generalized forces (the chain has no actuators)"
    if arr.shape != (size,):
        raise ValueError(f"`{name}` must have shape ({size},) = {what}, got shape {arr.shape}.")
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        arr = arr.astype(jnp.result_type(float))
    return arr


def static_residual(chain: Chain, q: Config, u: Array, *, gravity: Vec3 | None = None,
                    tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None) -> Config:
    """``ID(q, 0, 0) − A(q)ᵀ u``: zero exactly at the equilibria of input ``u`` (``003_…`` eq. 55).

    Arguments:
        chain: the chain. q: configuration ``(nq,)``.
        u: inputs ``(chain.nu,)``, or generalized forces ``(nq,)`` when the chain has no actuators.
        gravity, tip_force, tip_torque: as in :func:`~kane_jax.inverse_dynamics`.

    Returns:
        ``(nq,)`` unbalanced generalized force.

    Raises:
        ValueError: ``q`` or ``u`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    u = _check_input(chain, u)
    return _residual(chain, q, u, check_gravity(chain, gravity), tip_force, tip_torque)


def _residual(chain: Chain, q: Config, u: Array, gravity, tip_force, tip_torque) -> Config:
    """Kernel of :func:`static_residual` (no validation)."""
    tip = tip_wrench(tip_force, tip_torque, q.dtype)
    return (inverse_dynamics_kernel(chain, q, None, None, gravity=gravity, tip=tip)
            - generalized_input(chain, q, u.astype(q.dtype)))


def equilibrium(chain: Chain, u, q_guess, *, rtol: float | None = None, atol: float | None = None,
                max_steps: int = 64, throw: bool = True, gravity: Vec3 | None = None,
                tip_force: Vec3 | None = None, tip_torque: Vec3 | None = None,
                jacobian: str = "autodiff") -> Equilibrium:
    """Equilibrium configuration under input ``u``: solve ``ID(q, 0, 0) = A(q)ᵀ u`` for ``q``.

    Newton–Raphson on the recursive ID (paper ``003_…`` eq. 55 and §7.1), with the Jacobian
    ``∂ID(q, 0, 0)/∂q − ∂(A(q)ᵀu)/∂q`` (the tangent stiffness) by forward-mode autodiff, through
    :func:`optimistix.root_find` (the iterates of :class:`optimistix.Newton`, with one more
    iteration at the root that returns the residual there from the loop itself). Gradients of the
    result with respect to ``u``, the chain's parameters and the loads use the implicit function
    theorem (``optimistix.ImplicitAdjoint``): one linear solve with the tangent stiffness, no
    differentiation through the iterations.

    The equilibrium found is the one Newton converges to from ``q_guess``; it may be unstable (an
    inverted pendulum is an equilibrium too). Use the straight rest shape or a nearby known
    equilibrium as the guess and continue in ``u`` for large inputs.

    Arguments:
        chain: the chain.
        u: inputs ``(chain.nu,)``, or generalized forces ``(nq,)`` for a chain without actuators.
        q_guess: initial Newton iterate ``(nq,)``.
        rtol, atol: Newton stops when the step is below ``atol + rtol |q|`` and the residual
            below ``atol`` [N, N m]; defaults 1e-10/1e-12 in float64, 1e-5/1e-6 in float32.
        max_steps: Newton iteration budget.
        throw: True raises (at run time, also under ``jit``) when Newton does not converge within
            ``max_steps`` or diverges; False returns the last iterate with ``success=False``.
        gravity, tip_force, tip_torque: as in :func:`~kane_jax.inverse_dynamics`.
        jacobian: ``"autodiff"`` (default): Newton's tangent stiffness by forward mode, exact;
            ``"differences"``: by central differences of one batched residual
            (:func:`kane_jax._differences.central_jacobian`, ≈ 4e-11 relative), whose solve
            compiles faster (only the residual's primal code; `000-sim1`'s chain 15–17 → 8–9 s)
            and converges to the same root; gradients through the result then use that Jacobian too
            (≈ 1e-10 relative), those with respect to ``u``, the chain and the loads stay exact in
            their own terms.

    Returns:
        :class:`Equilibrium` ``(q, residual, num_steps, success)``.

    Raises:
        ValueError: ``u`` or ``q_guess`` of the wrong shape, non-positive tolerances/steps, an unknown
            ``jacobian``.
        equinox.EquinoxRuntimeError: (``throw=True``) Newton did not converge.
    """
    q0 = chain.check_state(q_guess, "q_guess")
    u = _check_input(chain, u)
    dtype = jnp.result_type(q0, u, float)
    q0 = q0.astype(dtype)
    double = dtype == jnp.float64
    rtol = (1e-10 if double else 1e-5) if rtol is None else float(rtol)
    atol = (1e-12 if double else 1e-6) if atol is None else float(atol)
    if not (rtol >= 0 and atol > 0):
        raise ValueError(f"`rtol` must be >= 0 and `atol` > 0, got rtol={rtol}, atol={atol}.")
    _checks.count(max_steps, "max_steps")
    if jacobian not in ("autodiff", "differences"):
        raise ValueError(f"`jacobian` must be 'autodiff' or 'differences', got {jacobian!r}.")
    # called eagerly, the failure is raised here from the concrete result: the compiled program then
    # holds no host callback, so JAX's persistent compilation cache can store it (programs with
    # callbacks are never cached); under a transformation the check is in the program
    in_program = bool(throw) and not _eager()
    eq = _solve(chain, u.astype(dtype), q0, rtol, atol, max_steps, in_program, check_gravity(chain, gravity),
                tip_force, tip_torque, jacobian)
    if throw and not in_program and not bool(eq.success):
        raise eqx.EquinoxRuntimeError(_NOT_CONVERGED)
    return eq


_NOT_CONVERGED = ("equilibrium: Newton–Raphson on ID(q, 0, 0) = A(q)ᵀu did not converge (max_steps reached, singular "
                  "tangent stiffness, or divergence); try a closer `q_guess`, a smaller input (continuation), more "
                  "`max_steps`, or `throw=False` to inspect it.")


# jitted inside the solve: optimistix traces the residual several times (its structure, the first
# iterate, the loop body); a jitted function's trace is reused and its Jacobian built from the jaxpr
# (by differences: the q-derivative from central differences of one batched residual, _differences.py)
_residual_by_differences = with_difference_jacobian(lambda q, chain, u, *loads: _residual(chain, q, u, *loads))
_residual_once = {"autodiff": eqx.filter_jit(_residual),
                  "differences": eqx.filter_jit(lambda chain, q, *rest: _residual_by_differences(q, chain, *rest))}


@eqx.filter_jit
def _solve(chain, u, q0, rtol, atol, max_steps, throw, gravity, tip_force, tip_torque, jacobian="autodiff"):
    residual = _residual_once[jacobian]

    def fn(q, args):
        chain_, u_, loads = args
        r = residual(chain_, q, u_, *loads)
        return r, r  # the residual as aux too: NewtonAtRoot's last iteration evaluates it at the root

    args = (chain, u, (gravity, tip_force, tip_torque))
    solver = NewtonAtRoot(rtol, atol, max_steps)
    sol = optx.root_find(fn, solver, q0, args, max_steps=max_steps + 1, throw=False, has_aux=True,
                         adjoint=optx.ImplicitAdjoint())
    q, residual = sol.value, sol.aux
    success = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(q))
    if throw:  # a static flag: set only under a transformation (see `equilibrium`)
        q = eqx.error_if(q, ~success, _NOT_CONVERGED)
    return Equilibrium(q, residual, sol.state.updates, success)


def holding_input(chain: Chain, q, *, gravity: Vec3 | None = None, tip_force: Vec3 | None = None,
                  tip_torque: Vec3 | None = None) -> HoldingInput:
    """The input that holds configuration ``q`` at rest: ``A(q)ᵀ u = ID(q, 0, 0)`` solved for ``u``.

    The inverse of :func:`equilibrium` (paper ``003_…`` eq. 55). Fully actuated chains
    (``nu == nq``, ``A(q)`` invertible) get the exact solution by LU; other chains the least-squares
    solution by QR (minimum-norm for redundant actuation such as antagonistic tendons), and the
    residual tells how far ``q`` is from a reachable equilibrium. A chain without actuators returns
    the generalized force itself.

    Arguments:
        chain: the chain. q: configuration ``(nq,)``.
        gravity, tip_force, tip_torque: as in :func:`~kane_jax.inverse_dynamics`.

    Returns:
        :class:`HoldingInput` ``(u, residual)`` with ``u`` of shape ``(chain.nu,)`` (``(nq,)``
        without actuators) and ``residual = ID(q, 0, 0) − A(q)ᵀ u`` of shape ``(nq,)``.

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    return HoldingInput(*_holding_input(chain, q, gravity, tip_force, tip_torque))


@entry_jit  # one program: eagerly, the ID and the jacfwd of the work coordinates ran operation by operation
def _holding_input(chain: Chain, q, gravity, tip_force, tip_torque) -> tuple[Array, Config]:
    q = chain.check_state(q, "q")
    tau = inverse_dynamics_kernel(chain, q, None, None, gravity=check_gravity(chain, gravity),
                                  tip=tip_wrench(tip_force, tip_torque, q.dtype))
    if chain.nu == 0:
        return tau, jnp.zeros_like(tau)
    b = input_matrix(chain, q)  # (nq, nu)
    u = solve_input(b, tau)
    return u, tau - b @ u


def solve_input(b: Array, tau: Array) -> Array:
    """``u`` with ``b u = tau``: LU when square, least squares (QR) when tall, minimum norm when wide.

    Plain ``jnp.linalg`` (differentiable, and usable inside ``shard_map``/``vmap``).
    """
    n, m = b.shape
    if n == m:
        return jnp.linalg.solve(b, tau)
    if n > m:
        qmat, rmat = jnp.linalg.qr(b)
        return jsl.solve_triangular(rmat, qmat.T @ tau, lower=False)
    qmat, rmat = jnp.linalg.qr(b.T)  # b = Rᵀ Qᵀ: minimum-norm u = Q R⁻ᵀ tau
    return qmat @ jsl.solve_triangular(rmat.T, tau, lower=True)
