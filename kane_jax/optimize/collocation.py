"""Direct transcription with the inverse dynamics (the ID formulation of Ferrolho et al. 2021).

Decision variables at ``K + 1`` knots ``t_k = k h``: configurations ``q_k``, velocities ``v_k``,
accelerations ``a_k`` and inputs ``u_k`` (``q_0``, ``v_0`` fixed). The acceleration is piecewise
linear in time, so the kinematic defects are integrated exactly (a cubic spline in ``q``):

    ``q_{k+1} − q_k − h v_k − h²/6 (2 a_k + a_{k+1}) = 0``,   ``v_{k+1} − v_k − h/2 (a_k + a_{k+1}) = 0``,

and the dynamics is imposed at every knot through the recursive ID — no mass-matrix inverse:

    ``ID(q_k, v_k, a_k) − A(q_k)ᵀ u_k = 0``                                        (000_… Alg. 2)

plus user terminal constraints ``g(q_K, v_K) = 0``. The cost is a sum of squares ``½|r(z)|²``
(default: the effort ``h Σ |u_k|²``). The problem is solved by an augmented Lagrangian: each outer
iteration minimizes ``½|r|² + ½ρ|c + λ/ρ|²`` with optimistix's Levenberg–Marquardt (or an optax
optimizer), then updates ``λ ← λ + ρ c`` and raises ``ρ`` when the violation stalls. The dynamics
residual at a knot depends on that knot's variables only, and its derivative rule uses that
(:func:`knot_dynamics`): Levenberg–Marquardt's Jacobian costs ``K + 1`` small per-knot Jacobians,
not one pass through the ID at every knot per decision variable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
import optimistix as optx

from .. import _checks
from .. import _optax_step as optax_step
from .. import _optimistix_steps as optimistix_steps
from .._types import Array
from ..algorithms._recursion import inverse_dynamics_kernel
from ..algorithms.actuation import input_force
from ..chain import Chain


class Knots(NamedTuple):
    """Decision variables: ``q, v, a`` of shape ``(K + 1, nq)`` and ``u`` of shape ``(K + 1, m)``."""

    q: Array
    v: Array
    a: Array
    u: Array


class CollocationResult(NamedTuple):
    """Solution, cost and maximum constraint violation after each outer iteration (index 0: guess)."""

    knots: Knots
    ts: Array
    cost: Array
    violation: Array
    multipliers: Array


def _free(z: Knots) -> tuple:
    return z.q[1:], z.v[1:], z.a, z.u


def knot_dynamics(chain: Chain) -> Callable:
    """``(q, v, a, u) ↦ ID(q_k, v_k, a_k) − A(q_k)ᵀ u_k`` at every knot (arrays ``(K + 1, ·)``), with a
    forward-mode rule that uses the constraint's structure: the residual at knot ``k`` depends on the
    variables of knot ``k`` only.

    Its JVP forms each knot's Jacobian blocks once — ``jacfwd`` over that knot's ``3 nq + m``
    variables, vmapped over the knots — and applies them to the tangent. A Jacobian of the whole
    problem (Levenberg–Marquardt's, one tangent per decision variable) then runs ``K + 1`` small
    ``jacfwd``s instead of pushing every column through the ID at every knot, and reverse mode
    transposes the blocks' products. Same values; derivatives equal to those of the plain map up to
    rounding (``tests/optimize``). On notebook 02's arm (2026-12-05, pinned): one inner solve of 40
    Levenberg–Marquardt steps 0.67 → 0.04 s; the transcription test at K = 20 and 40, 8 outer
    iterations each, 96.6 → 16.9 s (the residual taken from the blocks' own trace: 19.3 → 16.9 s,
    the same knots bit for bit).

    Arguments:
        chain: the chain; its parameters are constants to the rule (transcription optimizes the knots).

    Returns:
        ``at_knots(q, v, a, u) -> (K + 1, nq)`` for knot arrays ``(K + 1, nq)`` and ``(K + 1, m)``.
    """

    def dyn(qk, vk, ak, uk):
        force = uk if chain.nu == 0 else input_force(chain, qk, uk)
        return inverse_dynamics_kernel(chain, qk, vk, ak) - force

    @jax.custom_jvp
    def at_knots(q, v, a, u):
        return jax.vmap(dyn)(q, v, a, u)

    def with_value(*x):
        value = dyn(*x)
        return value, value

    @at_knots.defjvp
    def at_knots_jvp(primals, tangents):
        # the residual comes out of the blocks' own trace (jacfwd's auxiliary output): one ID, not two
        blocks, value = jax.vmap(jax.jacfwd(with_value, argnums=(0, 1, 2, 3), has_aux=True))(*primals)
        tangent = sum(jnp.einsum("kij,kj->ki", b, t) for b, t in zip(blocks, tangents))  # blocks (K + 1, nq, ·)
        return value, tangent

    return at_knots


def constraints(chain: Chain, z: Knots, h, terminal: Callable | None) -> Array:
    """All equality constraints stacked: kinematic defects, ID dynamics at the knots, terminal."""
    q, v, a, u = z
    dq = q[1:] - q[:-1] - h * v[:-1] - h**2 / 6 * (2 * a[:-1] + a[1:])
    dv = v[1:] - v[:-1] - h / 2 * (a[:-1] + a[1:])
    parts = [dq.ravel(), dv.ravel(), knot_dynamics(chain)(q, v, a, u).ravel()]
    if terminal is not None:
        parts.append(jnp.ravel(terminal(q[-1], v[-1])))
    return jnp.concatenate(parts)


def effort_residuals(z: Knots, h) -> Array:
    """``√h u_k`` (trapezoid weights at the ends): ``½|r|²`` approximates ``½ ∫ |u|² dt``."""
    w = jnp.full((z.u.shape[0], 1), h).at[jnp.array([0, -1])].multiply(0.5)
    return (jnp.sqrt(w) * z.u).ravel()


def transcribe(chain: Chain, q0, qd0, t1: float, n_intervals: int, *, terminal: Callable | None = None,
               residuals: Callable | None = None, guess: Knots | None = None, outer: int = 8,
               inner_steps: int = 60, rho: float = 10.0, rho_growth: float = 10.0, tol: float = 1e-8,
               inner: Any = None) -> CollocationResult:
    """Solve a trajectory optimization problem by direct transcription with the ID.

    Arguments:
        chain: the chain. q0, qd0: fixed initial state ``(nq,)``. t1: horizon [s].
        n_intervals: ``K`` (``K + 1`` knots, step ``h = t1 / K``).
        terminal: ``g(q_K, v_K) -> array`` of terminal equality constraints (e.g. tip position
            minus target and the final velocity), or None.
        residuals: ``r(knots, h) -> (n,)`` cost residuals (cost ``½|r|²``); default
            :func:`effort_residuals`.
        guess: initial :class:`Knots` (``q_0, v_0`` are overwritten); default: rest at ``q0``,
            zero inputs.
        outer: augmented-Lagrangian iterations. inner_steps: iterations per inner solve.
        rho, rho_growth: initial penalty and its growth when the violation does not fall by 4×.
        tol: stop when the maximum constraint violation is below ``tol``.
        inner: None for Levenberg–Marquardt (optimistix) on the least-squares form, an optax
            optimizer (e.g. ``optax.lbfgs()``) run for ``inner_steps``, or an optimistix minimiser (e.g.
            ``optimistix.BFGS(rtol, atol)``) run for at most ``inner_steps`` steps (one evaluation of the cost and
            its gradient each, held once in its program where optax's L-BFGS holds them three times).

    Returns:
        :class:`CollocationResult` with the knots, times, and per outer iteration the cost
        ``½|r|²`` and the maximum absolute constraint violation.

    Raises:
        ValueError: wrong shapes, ``n_intervals < 2``, non-positive horizon or penalty.
        TypeError: ``inner`` neither None, an optax transformation nor an optimistix minimiser.
    """
    q0 = chain.check_state(q0, "q0")
    qd0 = chain.check_state(qd0, "qd0")
    n_intervals = _checks.count(n_intervals, "n_intervals", minimum=2)
    minimiser = inner is not None and optimistix_steps.is_minimiser(inner, "inner")
    if not float(t1) > 0 or not rho > 0 or not rho_growth >= 1:
        raise ValueError(f"need t1 > 0, rho > 0, rho_growth >= 1; got {t1}, {rho}, {rho_growth}.")
    k1, size = n_intervals + 1, (chain.nu or chain.nq)
    h = float(t1) / n_intervals
    if guess is None:
        zeros = jnp.zeros((k1, chain.nq), dtype=q0.dtype)
        guess = Knots(jnp.tile(q0, (k1, 1)), zeros, zeros, jnp.zeros((k1, size), dtype=q0.dtype))
    shapes = ((k1, chain.nq),) * 3 + ((k1, size),)
    if tuple(x.shape for x in guess) != shapes:
        raise ValueError(f"`guess` must be Knots with shapes {shapes}, got {tuple(x.shape for x in guess)}.")
    guess = guess._replace(q=guess.q.at[0].set(q0), v=guess.v.at[0].set(qd0))
    residuals = effort_residuals if residuals is None else residuals

    def unpack(free):
        qf, vf, a, u = free
        return Knots(jnp.concatenate([q0[None], qf]), jnp.concatenate([qd0[None], vf]), a, u)

    def al_residual(free, args):
        lam, rho_ = args
        z = unpack(free)
        c = constraints(chain, z, h, terminal)
        return jnp.concatenate([residuals(z, h), jnp.sqrt(rho_) * (c + lam / rho_)])

    def al_cost(free, args):  # the least-squares form's cost, for the minimisers
        return 0.5 * jnp.sum(al_residual(free, args) ** 2)

    @eqx.filter_jit
    def inner_solve(free, lam, rho_):
        if inner is None:
            solver = optx.LevenbergMarquardt(rtol=1e-12, atol=1e-12)
            sol = optx.least_squares(al_residual, solver, free, (lam, rho_), max_steps=inner_steps, throw=False,
                                     options=dict(jac="bwd"))
            free = sol.value
        elif minimiser:
            free = optx.minimise(al_cost, inner, free, (lam, rho_), max_steps=inner_steps, throw=False).value
        else:
            f = lambda x: al_cost(x, (lam, rho_))
            state, value_and_grad = optax_step.seeded(f, inner.init(free), free)

            def body(carry, _):
                x, st = carry
                value, grad = value_and_grad(x, state=st)
                upd, st = optax_step.update(inner, grad, st, x, value=value, value_fn=f)
                return (optax.apply_updates(x, upd), st), None

            (free, _), _ = jax.lax.scan(body, (free, state), None, length=inner_steps)
        return free

    @eqx.filter_jit
    def evaluate(free):
        # constraints and cost in one program: evaluated eagerly, the vmapped ID alone dispatched
        # ≈ 1,500 single-primitive programs (≈ 15 s of compiles on the 2-core CI machine)
        z = unpack(free)
        return constraints(chain, z, h, terminal), 0.5 * jnp.sum(residuals(z, h) ** 2)

    free = _free(guess)
    c, cost0 = evaluate(free)
    lam = jnp.zeros_like(c)
    costs = [cost0]
    viol = [jnp.max(jnp.abs(c))]
    rho_ = jnp.asarray(rho, dtype=q0.dtype)
    for _ in range(outer):
        # the constraints and cost from the compiled `evaluate`, not traced a second time inside
        # the solve (notebook 02: 13 % of the solve's equations)
        free = inner_solve(free, lam, rho_)
        c, cost = evaluate(free)
        lam = lam + rho_ * c
        v = jnp.max(jnp.abs(c))
        if float(v) > 0.25 * float(viol[-1]):
            rho_ = rho_ * rho_growth
        costs.append(cost)
        viol.append(v)
        if float(v) < tol:
            break
    ts = jnp.linspace(0.0, float(t1), k1)
    return CollocationResult(unpack(free), ts, jnp.stack(costs), jnp.stack(viol), lam)
