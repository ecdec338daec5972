"""Gradient-based identification with optax or optimistix: ID-residual and simulation-error losses.

Parameters are pytree leaves; the chain is rebuilt from them inside the loss (``build(params)``),
so a new parameter value never recompiles: one compiled optimizer step serves every iteration
(guarded by ``equinox.debug.assert_max_traces``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from .. import _checks
from .. import _optax_step as optax_step
from .. import _optimistix_steps as optimistix_steps
from .._types import Array
from ..chain import Chain
from ..simulation._steps import every_step_stored
from ..simulation.simulate import simulate
from .linear import Samples, _check_samples, id_residual


class FitResult(NamedTuple):
    """Estimated parameters, the loss before each step (and after the last), and the trace count."""

    params: Any
    losses: Array
    num_traces: int


def id_residual_loss(build: Callable[[Any], Chain], data: Samples, *, scale=None) -> Callable:
    """``loss(params) = mean_s |(ID(q_s, q̇_s, q̈_s) − A(q_s)ᵀ u_s) / scale|²``.

    Quadratic in parameters the ID is linear in (so L-BFGS converges in a few steps), but any
    parameter works (lengths, radii, nonlinear material laws).

    Arguments:
        build: ``params -> Chain``. data: :class:`~kane_jax.identification.Samples`.
        scale: per-coordinate normalization ``(nq,)`` [N or N m], e.g. the RMS of the measured
            generalized forces, so that all coordinates count alike; default 1.

    Raises:
        TypeError, ValueError: bad ``data``.
    """
    data = _check_samples(data)
    s = 1.0 if scale is None else jnp.asarray(scale, dtype=float).reshape(1, -1)

    def loss(params):
        res = jax.vmap(lambda q, qd, qdd, u: id_residual(build, params, q, qd, qdd, u))(*data)
        return jnp.mean(jnp.sum((res / s) ** 2, axis=-1))

    return loss


def simulation_loss(build: Callable[[Any], Chain], ts, q_measured, inputs, *, qd0=None, dt: float | None = None,
                    solver=None, one_kernel: bool = False) -> Callable:
    """``loss(params) = mean |q_sim(t_k; params) − q_measured_k|²`` through :func:`kane_jax.simulate`.

    The rollout starts at ``q_measured[0]`` (and ``qd0``, default zero) and is driven by the
    recorded inputs ``inputs(t)`` (e.g. an :class:`~kane_jax.optimize.InputSequence`); constant
    steps ``dt`` (default: the sample spacing / 4) keep the cost per iteration fixed. Its gradient is
    diffrax's exact discrete adjoint with every step stored (a few states each: the reverse pass
    recomputes nothing; ``tests/identification``'s simulation-error fit 41.3 → 31.9 s, pinned,
    2026-12-05, the same fitted parameters). The solve is compiled as a loop of kernels
    (``simulate(one_kernel=False)``): a fit evaluates it and its gradient a few hundred times, where the
    one-kernel loop's longer compile does not pay (that fit under ``kj.recommended_xla_flags()``,
    pinned, 2026-12-06: 25 optax L-BFGS steps 68.8 / 69.4 → 43.7 s, 60 optimistix L-BFGS steps
    27.2 → 19.1 s, of which XLA's compile 22.7 → 13.4 s while the 60 steps ran ≈ 0.2 → 1.6 s: past
    ≈ 400 steps ``one_kernel=True`` is the faster one).

    Raises:
        ValueError: ``ts`` and ``q_measured`` of inconsistent shapes.
        TypeError: ``one_kernel`` not a bool.
    """
    one_kernel = _checks.flag(one_kernel, "one_kernel")
    ts = jnp.asarray(ts, dtype=float)
    q_measured = jnp.asarray(q_measured, dtype=float)
    if ts.ndim != 1 or q_measured.ndim != 2 or q_measured.shape[0] != ts.shape[0]:
        raise ValueError(f"`ts` (T,) and `q_measured` (T, nq) must agree, got {ts.shape} and {q_measured.shape}.")
    step = float(ts[1] - ts[0]) / 4 if dt is None else float(dt)
    n_steps = int(round((float(ts[-1]) - float(ts[0])) / step)) + 8
    qd0 = jnp.zeros(q_measured.shape[1]) if qd0 is None else jnp.asarray(qd0, dtype=float)
    t_start, t_end = float(ts[0]), float(ts[-1])  # concrete here; inside a trace they would be tracers

    def loss(params):
        traj = simulate(build(params), q_measured[0], qd0, t_end, t0=t_start, control=inputs,
                        saveat=ts, adaptive=False, dt0=step, solver=solver, max_steps=n_steps,
                        adjoint=every_step_stored(n_steps), one_kernel=one_kernel)
        return jnp.mean(jnp.sum((traj.q - q_measured) ** 2, axis=-1))

    return loss


def fit(loss: Callable[[Any], Array], params0, *, optimizer: Any = None, steps: int = 100,
        relative: bool = True) -> FitResult:
    """Minimize ``loss(params)`` with optax or optimistix, in relative coordinates ``params = params0 (1 + x)``.

    Optimizing the relative change ``x`` puts a Young's modulus (1e6 Pa) and an inertia (1e-3
    kg m²) on the same footing; ``relative=False`` optimizes the parameters themselves.

    Arguments:
        loss: scalar function of the parameter pytree (e.g. :func:`id_residual_loss`,
            :func:`simulation_loss`). params0: initial guess (nonzero leaves when ``relative``).
        optimizer: an optax transformation, default ``optax.lbfgs()`` (with its zoom line search), or an
            optimistix minimiser (e.g. ``optimistix.LBFGS(rtol=1e-12, atol=1e-14)``), whose steps evaluate the loss
            and its gradient once each, so that its program holds them once where optax's L-BFGS holds them three
            times: ``tests/identification``'s simulation-error fit took 27.2 s (20.1 s of XLA compile) with 60
            optimistix L-BFGS steps against 43.1–44.3 s (34.3–35.2 s) with 25 optax L-BFGS iterations, to the same
            minimum (2026-12-06, pinned, JAX's default flags; under ``kj.recommended_xla_flags()`` 26.8 against
            69.1 s, and 19.1 against 43.7 s since :func:`simulation_loss` compiles its solve as a loop of kernels).
        steps: optax iterations, or optimistix steps after the first (each one evaluation of the loss).

    Returns:
        :class:`FitResult` ``(params, losses, num_traces)``; ``losses`` ``(steps + 1,)``: the loss before each
        optax update and after the last, or the loss at the accepted point after each optimistix step
        (``losses[0]`` the initial loss either way); ``num_traces`` is 1: the loop compiled once.

    Raises:
        ValueError: ``steps < 1``.
        TypeError: ``optimizer`` neither an optax transformation nor an optimistix minimiser.
    """
    _checks.count(steps, "steps")
    optimizer = optax.lbfgs() if optimizer is None else optimizer
    minimiser = optimistix_steps.is_minimiser(optimizer)
    scale = jax.tree.map(lambda p: jnp.where(p == 0, 1.0, p), params0) if relative else None
    to_params = ((lambda x: jax.tree.map(lambda p, s, xi: p + s * xi, params0, scale, x)) if relative
                 else (lambda x: x))
    x = jax.tree.map(jnp.zeros_like, params0) if relative else params0
    objective = lambda x_: loss(to_params(x_))

    # the whole run is one lax.scan inside one compiled function: traced exactly once
    @eqx.debug.assert_max_traces(max_traces=1)
    @eqx.filter_jit
    def run(x_, state):
        if minimiser:
            return optimistix_steps.minimise_steps(objective, optimizer, x_, steps)
        # L-BFGS's line search keeps the accepted point's value and gradient: reused by the next iteration
        # (the initial point's stored before the loop, so that the loop evaluates them only in the line search)
        state, value_and_grad = optax_step.seeded(objective, state, x_)

        def update(carry, _):
            x_, state = carry
            value, grad = value_and_grad(x_, state=state)
            upd, state = optax_step.update(optimizer, grad, state, x_, value=value, value_fn=objective)
            return (optax.apply_updates(x_, upd), state), value

        (x_, state), values = jax.lax.scan(update, (x_, state), None, length=steps)
        # the final point's loss: kept by a line search's state, evaluated otherwise
        return x_, jnp.concatenate([values, optax_step.value(objective, state, x_)[None]])

    x, losses = run(x, None if minimiser else optimizer.init(x))
    return FitResult(to_params(x), losses, eqx.debug.get_num_traces(run))
