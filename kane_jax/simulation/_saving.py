"""Saving at given times inside the solver state, so that a solve holds no host callback.

``diffrax.diffeqsolve`` checks ``SaveAt(ts=…)`` with two ``equinox.error_if``\\ s on the traced
times (increasing, inside ``[t0, t1]``), and ``dt0`` with a third. A traced condition makes each a
host callback in the compiled program, and JAX never writes a program with host callbacks to its
persistent compilation cache: every ``simulate`` recompiled from scratch in each new process.

:class:`SavingSolver` wraps any diffrax solver and does diffrax's own saving in its state instead:
after each step it evaluates the step's dense interpolant at the save times that fall in
``(t_prev, t_next]`` (the same interpolant, the same times, the same inclusive end as diffrax's
loop, so the same numbers). A rejected step's writes are discarded with the rest of its state by
diffrax's loop. The save times are an array leaf: new times do not recompile.

With ``inputs=True`` it also saves the derivative of the state's last component, which
:func:`~kane_jax.simulation._fields.field_with_input` makes the control input ``u``: read from the
step's own stages (the FSAL stage ``f(t₁, y₁)`` at a step's end, the first stage at ``t₀``), so a
feedback law is evaluated, traced and compiled at one place, the solver's stage loop, instead of
again after the solve for the saved inputs (a second copy of a PFBL was a third of ``003-sim2``'s
rollout program). Exact when the steps end on the save times (``step_ts``). ``simulate``
checks them on the host when called eagerly; :class:`FixedStep` carries the constant step the same
way, so no ``dt0`` check is traced either.
"""

from __future__ import annotations

from typing import Any

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int


class _Saves(eqx.Module):
    """The next save index, the saved states and (``inputs=True``) the saved inputs (rows not
    reached yet hold ``inf``, as diffrax's)."""

    index: Int[Array, ""]
    ys: Any
    us: Any = None


class SavingSolver(diffrax.AbstractWrappedSolver):
    """``solver`` that also saves ``y`` at ``ts`` in its state (see the module docstring).

    Fields:
        solver: the diffrax solver that takes the steps.
        ts: the save times, non-decreasing, inside ``[t0, t1]`` (not checked here).
        inputs: also save ``u``, the derivative of ``y``'s last component, from the step's stages
            (see the module docstring; read them with :meth:`saved_inputs`). Needs an explicit FSAL
            Runge–Kutta ``solver`` and steps that end on ``ts`` (``PIDController(step_ts=ts)``);
            a save inside a step gets the slope of the dense interpolant instead.

    Use with ``diffrax.SaveAt(t1=True, solver_state=True)`` and
    ``diffrax.RecursiveCheckpointAdjoint`` (the saves of one step are a checkpointed
    ``equinox.internal.while_loop``, as diffrax's own under that adjoint), and read the saves with
    :meth:`saved`. Forwards ``isinstance`` checks (implicit, adaptive) to ``solver``.

    Raises:
        ValueError: ``inputs=True`` with a solver that is not an explicit FSAL Runge–Kutta method.
    """

    solver: diffrax.AbstractSolver
    ts: Float[Array, " n"]
    inputs: bool = eqx.field(static=True, default=False)

    def __check_init__(self):
        if self.inputs and not (isinstance(self.solver, diffrax.AbstractERK) and self.solver.tableau.fsal):
            raise ValueError(f"`inputs=True` needs an explicit FSAL Runge-Kutta solver (Tsit5, Dopri5, Dopri8), "
                             f"got {type(self.solver).__name__}.")

    @property
    def term_structure(self):
        return self.solver.term_structure

    @property
    def interpolation_cls(self):  # pyright: ignore
        return self.solver.interpolation_cls

    @property
    def term_compatible_contr_kwargs(self):
        return self.solver.term_compatible_contr_kwargs

    @property
    def root_finder(self):
        return self.solver.root_finder

    @property
    def root_find_max_steps(self):
        return self.solver.root_find_max_steps

    def order(self, terms):
        return self.solver.order(terms)

    def strong_order(self, terms):
        return self.solver.strong_order(terms)

    def error_order(self, terms):
        return self.solver.error_order(terms)

    def init(self, terms, t0, t1, y0, args):
        rows = lambda y: jnp.full((self.ts.shape[0],) + jnp.shape(y), jnp.inf, jnp.result_type(y))  # noqa: E731
        us = rows(y0[-1]) if self.inputs else None
        return self.solver.init(terms, t0, t1, y0, args), _Saves(jnp.asarray(0, jnp.int32), jax.tree.map(rows, y0),
                                                                 us)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        return _step(self, terms, t0, t1, y0, args, solver_state, made_jump)

    def _step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        inner, saves = solver_state
        y1, y_error, dense_info, inner, result = self.solver.step(terms, t0, t1, y0, args, inner, made_jump)
        interpolation = self.solver.interpolation_cls(t0=t0, t1=t1, **dense_info)
        n = self.ts.shape[0]

        def due(s):
            return (s.index < n) & (self.ts[jnp.minimum(s.index, n - 1)] <= t1)

        if self.inputs:
            # the last component's derivative is the input: at the step's end the FSAL stage
            # f(t₁, y₁) holds it, at its start (the first step's t₀) the first stage k₀ = f(t₀, y₀) dt
            f1, k0 = inner[1][-1], dense_info["k"][-1][0]

        def save(s):
            t = self.ts[s.index]
            y = interpolation.evaluate(t)
            set_row = lambda row, rows: rows.at[s.index].set(row)  # noqa: E731
            if not self.inputs:
                return _Saves(s.index + 1, jax.tree.map(set_row, y, s.ys))
            end = t == t1
            y = jax.tree.map(lambda a, b: jnp.where(end, a, b), y1, y)  # the state the law saw
            # a save inside a step (not met when steps end on the saves): the interpolant's slope
            u = jnp.where(end, f1, jnp.where(t == t0, k0 / (t1 - t0), interpolation.derivative(t)[-1]))
            return _Saves(s.index + 1, jax.tree.map(set_row, y, s.ys), set_row(u, s.us))

        saves = eqxi.while_loop(due, save, saves, max_steps=n, buffers=lambda s: (s.ys, s.us), kind="checkpointed",
                                 checkpoints=n)
        return y1, y_error, dense_info, (inner, saves), result

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)

    def saved(self, solution: diffrax.Solution):
        """``(ts, ys)`` as diffrax's ``SaveAt(ts=…)`` returns them (``inf`` where a solve that
        stopped early never reached the save), from a solution with ``SaveAt(solver_state=True)``."""
        saves = solution.solver_state[1]
        reached = jnp.arange(self.ts.shape[0]) < saves.index
        return jnp.where(reached, self.ts, jnp.inf), saves.ys

    def saved_inputs(self, solution: diffrax.Solution):
        """The inputs ``u`` at the saves (``inputs=True``: the derivative of ``y``'s last component,
        as the solver's own stages evaluated it), ``inf`` where the solve never reached the save."""
        return solution.solver_state[1].us


# jitted: diffrax traces a step three times (the loop state's structure, the loop, its checkpointed
# form); a jitted step is traced once and the later traces reuse it
_step = eqx.filter_jit(SavingSolver._step)


class FixedStep(diffrax.AbstractStepSizeController):
    """``diffrax.ConstantStepSize`` with the step ``dt`` as a field instead of ``diffeqsolve``'s
    ``dt0`` (which ``diffeqsolve`` checks with a traced ``error_if``): the same steps, the same
    times."""

    dt: Float[Array, ""]

    def wrap(self, direction):
        return self

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        return diffrax.ConstantStepSize().init(terms, t0, t1, y0, self.dt, args, func, error_order)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        return diffrax.ConstantStepSize().adapt_step_size(t0, t1, y0, y1_candidate, args, y_error, error_order,
                                                          controller_state)


class FirstStep(diffrax.AbstractAdaptiveStepSizeController):
    """An adaptive ``controller`` whose first step is ``dt`` (a field) instead of ``diffeqsolve``'s
    ``dt0``, which ``diffeqsolve`` checks with a traced ``error_if``: the same steps, the same times."""

    controller: diffrax.AbstractAdaptiveStepSizeController
    dt: Float[Array, ""]

    @property
    def rtol(self):
        return self.controller.rtol

    @property
    def atol(self):
        return self.controller.atol

    @property
    def norm(self):
        return self.controller.norm

    def wrap(self, direction):
        return FirstStep(self.controller.wrap(direction), self.dt)

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        return self.controller.init(terms, t0, t1, y0, self.dt, args, func, error_order)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        return self.controller.adapt_step_size(t0, t1, y0, y1_candidate, args, y_error, error_order,
                                               controller_state)
