"""Single shooting: optimize an input sequence through :func:`kane_jax.simulate` with optax.

Gradients of the rollout come from diffrax's adjoint (``RecursiveCheckpointAdjoint``:
discretize-then-optimize, exact gradients of the computed trajectory); each optimizer step is one
compiled function (rollout + backward pass + optax update), compiled once for the whole run.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from .._types import Array, Config
from ..algorithms.kinematics import tip_pose
from ..chain import Chain
from ..simulation.simulate import Trajectory, simulate
from .inputs import InputSequence


class ShootingResult(NamedTuple):
    """Optimized inputs, their trajectory and the cost history (``losses[0]`` is the initial cost)."""

    inputs: InputSequence
    trajectory: Trajectory
    losses: Array


def rollout(chain: Chain, q0: Config, qd0: Config, inputs: InputSequence, *, substeps: int = 2,
            solver=None) -> Trajectory:
    """Simulate ``inputs`` with constant steps aligned to the knots, saving at every knot time.

    ``substeps`` integration steps per input interval ``h = t1 / K``; the same function re-simulates
    optimized inputs for checking.
    """
    if not isinstance(substeps, int) or substeps < 1:
        raise ValueError(f"`substeps` must be a positive int, got {substeps!r}.")
    k = inputs.n_knots
    intervals = k if inputs.kind == "zoh" else k - 1
    dt = inputs.t1 / (intervals * substeps)
    return simulate(chain, q0, qd0, inputs.t1, control=inputs, saveat=intervals + 1, adaptive=False,
                    dt0=dt, solver=solver, max_steps=intervals * substeps + 8)


def tip_reaching_cost(chain: Chain, target, *, effort: float = 1e-3, velocity: float = 1e-2) -> Callable:
    """``|p_tip(q(T)) − target|² + velocity |q̇(T)|² + effort · mean_k |u_k|²`` as ``cost(traj, inputs)``.

    Raises:
        ValueError: ``target`` not a 3-vector, negative weights.
    """
    target = jnp.asarray(target, dtype=float)
    if target.shape != (3,):
        raise ValueError(f"`target` must be a 3-vector [m], got shape {target.shape}.")
    if effort < 0 or velocity < 0:
        raise ValueError(f"`effort` and `velocity` must be non-negative, got {effort}, {velocity}.")

    def cost(traj: Trajectory, inputs: InputSequence) -> Array:
        tip = tip_pose(chain, traj.q[-1])[:3, 3]
        return (jnp.sum((tip - target) ** 2) + velocity * jnp.sum(traj.qd[-1] ** 2)
                + effort * jnp.mean(jnp.sum(inputs.values**2, axis=-1)))

    return cost


def shooting(chain: Chain, q0, qd0, cost: Callable, inputs: InputSequence, *,
             optimizer: optax.GradientTransformation | None = None, steps: int = 200, substeps: int = 2,
             solver=None) -> ShootingResult:
    """Minimize ``cost(rollout(inputs), inputs)`` over the knot values with optax.

    Arguments:
        chain: the chain (its parameters are held fixed). q0, qd0: initial state ``(nq,)``.
        cost: ``cost(traj, inputs) -> scalar``, e.g. :func:`tip_reaching_cost`.
        inputs: the initial :class:`InputSequence` (shape of the decision variables).
        optimizer: an optax transformation, default ``optax.adam(1e-2)``.
        steps: optimizer iterations. substeps, solver: as in :func:`rollout`.

    Returns:
        :class:`ShootingResult` ``(inputs, trajectory, losses)`` with ``losses`` of shape
        ``(steps + 1,)`` (cost before each update and after the last).

    Raises:
        ValueError: states of the wrong shape, inputs whose width is not the chain's input size,
            ``steps < 1``.
    """
    q0 = chain.check_state(q0, "q0")
    qd0 = chain.check_state(qd0, "qd0")
    size = chain.nu or chain.nq
    if inputs.values.shape[1] != size:
        raise ValueError(f"`inputs.values` must have {size} columns (the chain's inputs), got shape "
                         f"{inputs.values.shape}.")
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"`steps` must be a positive int, got {steps!r}.")
    optimizer = optax.adam(1e-2) if optimizer is None else optimizer

    def loss(inp):
        return cost(rollout(chain, q0, qd0, inp, substeps=substeps, solver=solver), inp)

    @eqx.filter_jit
    def step(inp, opt_state):
        value, grad = eqx.filter_value_and_grad(loss)(inp)
        if isinstance(optimizer, optax.GradientTransformationExtraArgs):  # e.g. optax.lbfgs's line search
            updates, opt_state = optimizer.update(grad, opt_state, inp, value=value, grad=grad, value_fn=loss)
        else:
            updates, opt_state = optimizer.update(grad, opt_state, inp)
        return eqx.apply_updates(inp, updates), opt_state, value

    opt_state = optimizer.init(eqx.filter(inputs, eqx.is_array))
    losses = []
    for _ in range(steps):
        inputs, opt_state, value = step(inputs, opt_state)
        losses.append(value)
    final = rollout(chain, q0, qd0, inputs, substeps=substeps, solver=solver)
    losses.append(cost(final, inputs))
    return ShootingResult(inputs, final, jnp.stack(losses))
