"""Single shooting: optimize an input sequence through :func:`kane_jax.simulate` with optax.

Gradients of the rollout come from diffrax's adjoint (``RecursiveCheckpointAdjoint``:
discretize-then-optimize, exact gradients of the computed trajectory); each optimizer step is one
compiled function (rollout + backward pass + optax update), compiled once for the whole run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from .. import _checks
from .. import _optax_step as optax_step
from .. import _optimistix_steps as optimistix_steps
from .._types import Array, Config
from ..algorithms.kinematics import tip_pose
from ..chain import Chain
from ..simulation._steps import every_step_stored
from ..simulation.simulate import simulate
from ..simulation.trajectory import Trajectory, first_nonfinite
from .inputs import InputSequence


class ShootingResult(NamedTuple):
    """Optimized inputs, their trajectory and the cost history (``losses[0]`` is the initial cost)."""

    inputs: InputSequence
    trajectory: Trajectory
    losses: Array


def rollout(chain: Chain, q0: Config, qd0: Config, inputs: InputSequence, *, substeps: int = 2,
            solver=None, one_kernel: bool = True) -> Trajectory:
    """Simulate ``inputs`` with ``substeps`` constant steps per input interval, saving at every knot.

    A zero-order hold is integrated interval by interval (a ``lax.scan`` of solves with a constant
    input), so no Runge–Kutta stage ever sees the next interval's value at a knot: the rollout keeps
    the solver's order (evaluating the piecewise-constant ``u(t)`` inside one solve would be first
    order only). A linear input is continuous and integrated in one solve. The same function
    re-simulates optimized inputs for checking. ``one_kernel``: as in :func:`kane_jax.simulate`
    (:func:`shooting` passes False).

    Raises:
        ValueError: ``substeps`` not a positive int.
        TypeError: ``one_kernel`` not a bool.
    """
    _checks.count(substeps, "substeps")
    one_kernel = _checks.flag(one_kernel, "one_kernel")
    k = inputs.n_intervals
    h = inputs.t1 / k
    if inputs.kind == "linear":
        steps = k * substeps + 8
        return simulate(chain, q0, qd0, inputs.t1, control=inputs, saveat=k + 1, adaptive=False, dt0=h / substeps,
                        solver=solver, max_steps=steps, adjoint=every_step_stored(steps), one_kernel=one_kernel)
    q0 = chain.check_state(q0, "q0")
    qd0 = chain.check_state(qd0, "qd0")

    def interval(carry, u):
        q, qd, res = carry
        tr = simulate(chain, q, qd, h, control=u, saveat=2, adaptive=False, dt0=h / substeps,
                      solver=solver, max_steps=substeps + 4, throw=False, adjoint=every_step_stored(substeps + 4),
                      one_kernel=one_kernel)
        res = diffrax.RESULTS.where(res == diffrax.RESULTS.successful, tr.result, res)  # keep the first failure
        return (tr.q[-1], tr.qd[-1], res), (tr.q[-1], tr.qd[-1], tr.stats["num_steps"])

    init = (q0, qd0.astype(q0.dtype), diffrax.RESULTS.successful)
    (_, _, result), (qs, qds, steps) = jax.lax.scan(interval, init, inputs.values)
    q_all = jnp.concatenate([q0[None], qs])
    qd_all = jnp.concatenate([qd0[None].astype(q0.dtype), qds])
    return Trajectory(jnp.linspace(0.0, inputs.t1, k + 1, dtype=q0.dtype), q_all, qd_all,
                      jnp.concatenate([inputs.values, inputs.values[-1:]]).astype(q0.dtype), result,
                      {"num_steps": jnp.sum(steps)}, first_nonfinite(q_all, qd_all))


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
             solver=None, one_kernel: bool = False) -> ShootingResult:
    """Minimize ``cost(rollout(inputs), inputs)`` over the knot values with optax.

    Arguments:
        chain: the chain (its parameters are held fixed). q0, qd0: initial state ``(nq,)``.
        cost: ``cost(traj, inputs) -> scalar``, e.g. :func:`tip_reaching_cost`.
        inputs: the initial :class:`InputSequence` (shape of the decision variables).
        optimizer: an optax transformation, default ``optax.adam(1e-2)``. One whose state keeps its line
            search's accepted point (``optax.lbfgs``) runs the rollout and its gradient only in that line search
            (seeded at the initial inputs), and the final trajectory in a rollout of its own. Or an optimistix
            minimiser (e.g. ``optimistix.LBFGS(rtol, atol)``): one rollout and its gradient per step, once in its
            program.
        steps: optimizer iterations (optax), or steps after the first (optimistix). substeps, solver: as in
            :func:`rollout`.
        one_kernel: the rollouts' solves compiled as one kernel each (:func:`kane_jax.simulate`); default False,
            a loop of kernels: the reach arm's 10 ``optax.lbfgs`` steps (recommended flags, pinned, 2026-12-06)
            63.0 → 29.3 s (XLA compile 56 → 24 s), its 200 Adam steps 16.1 / 16.3 → 13.0 / 13.3 s, the same
            final cost to 4e-14.

    Returns:
        :class:`ShootingResult` ``(inputs, trajectory, losses)`` with ``losses`` of shape
        ``(steps + 1,)`` (cost before each update and after the last; an optimistix minimiser's: the cost at the
        accepted inputs after each step, ``losses[0]`` the initial inputs').

    Raises:
        ValueError: states of the wrong shape, inputs whose width is not the chain's input size,
            ``steps < 1``.
        TypeError: ``optimizer`` neither an optax transformation nor an optimistix minimiser, ``one_kernel`` not a
            bool.
        FloatingPointError: the cost or its gradient became non-finite, almost always a fixed step
            ``h = t1 / (K · substeps)`` beyond the explicit solver's stability limit (a stiff soft
            mode with eigenvalue ``λ`` needs ``|λ| h ≲ 3`` for Tsit5): raise ``substeps`` or pass an
            implicit ``solver``.
    """
    q0 = chain.check_state(q0, "q0")
    qd0 = chain.check_state(qd0, "qd0")
    size = chain.nu or chain.nq
    if inputs.values.shape[1] != size:
        raise ValueError(f"`inputs.values` must have {size} columns (the chain's inputs), got shape "
                         f"{inputs.values.shape}.")
    _checks.count(steps, "steps")
    one_kernel = _checks.flag(one_kernel, "one_kernel")
    optimizer = optax.adam(1e-2) if optimizer is None else optimizer
    minimiser = optimistix_steps.is_minimiser(optimizer)

    def loss(inp):
        traj = rollout(chain, q0, qd0, inp, substeps=substeps, solver=solver, one_kernel=one_kernel)
        return cost(traj, inp), traj

    def value_of(inp):
        return loss(inp)[0]

    if minimiser:
        return _with_minimiser(loss, optimizer, inputs, steps, substeps)
    opt_state = optimizer.init(eqx.filter(inputs, eqx.is_array))
    # a line search's state (optax.lbfgs) keeps the accepted point's cost and gradient: seeded here at the
    # initial inputs and read by every step, so that the rollout and its gradient run only in the line search
    # (with the loss evaluated at the top of each step as well, every iteration ran them once more)
    stored = optax_step.keeps_value(opt_state)
    if stored:
        opt_state = eqx.filter_jit(lambda inp, state: optax_step.seed(value_of, state, inp))(inputs, opt_state)
        read = optax_step.reader(value_of, opt_state)  # the state's stored cost and gradient

    @eqx.filter_jit
    def step(inp, opt_state):
        if stored:
            (value, grad), traj = read(inp, opt_state), None
        else:
            # the trajectory comes out as the loss's auxiliary output, so the final rollout reuses this
            # program (one gradient evaluation) instead of compiling the rollout a second time, which
            # took longer than ten iterations (notebook 02: 7.2 s of a 55 s run, 2026-11-26)
            (value, traj), grad = eqx.filter_value_and_grad(loss, has_aux=True)(inp)
        updates, opt_state = optax_step.update(optimizer, grad, opt_state, inp, value=value, value_fn=value_of)
        return eqx.apply_updates(inp, updates), opt_state, value, traj

    losses = []
    for k in range(steps):
        new, opt_state, value, _ = step(inputs, opt_state)
        _check_finite(k, value, new, inputs, substeps)
        inputs = new
        losses.append(value)
    if stored:  # the optimized inputs' cost and trajectory: the rollout alone (no gradient, no line search)
        value, final = eqx.filter_jit(loss)(inputs)
    else:  # the step's program (its update unused)
        _, _, value, final = step(inputs, opt_state)
    losses.append(value)
    return ShootingResult(inputs, final, jnp.stack(losses))


def _with_minimiser(loss: Callable, solver, inputs: InputSequence, steps: int, substeps: int) -> ShootingResult:
    """:func:`shooting` with an optimistix minimiser: ``steps + 1`` of its steps (each one rollout and its
    gradient, :func:`kane_jax._optimistix_steps.stepper`), one compiled program called per step, then the final
    inputs' rollout; ``losses`` the cost at the accepted inputs after each step (``losses[0]`` the initial
    inputs')."""
    carry, advance = optimistix_steps.stepper(lambda inp: loss(inp)[0], solver, inputs)
    advance = eqx.filter_jit(advance)
    records, done = [], []
    for k in range(steps + 1):
        new = advance(carry)
        _check_finite(k, new[3], new[0], carry[0], substeps)
        carry = new
        records.append(carry[3])
        done.append(carry[2])
    value, final = eqx.filter_jit(loss)(carry[0])  # the accepted inputs' cost and trajectory (the rollout alone)
    losses = optimistix_steps.accepted_losses(jnp.stack(records), jnp.stack(done), value)
    return ShootingResult(carry[0], final, losses)


def _check_finite(k: int, value, new: InputSequence, inputs: InputSequence, substeps: int) -> None:
    if not (bool(jnp.isfinite(value)) and all(bool(jnp.all(jnp.isfinite(x))) for x in
                                              jax.tree.leaves(eqx.filter(new, eqx.is_array)))):
        h = inputs.t1 / (inputs.n_intervals * substeps)
        raise FloatingPointError(
            f"shooting: the cost or its gradient is not finite at iteration {k} (cost {float(value)}); "
            f"the rollout's fixed step h = {h:.3g} s is probably beyond the solver's stability limit "
            f"for this chain's stiffest mode: raise `substeps` (now {substeps}) or pass an implicit `solver`.")
