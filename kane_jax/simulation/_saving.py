"""Saving at given times inside the solver state, so that a solve holds no host callback.

``diffrax.diffeqsolve`` checks ``SaveAt(ts=…)`` with two ``equinox.error_if``\\ s on the traced
times (increasing, inside ``[t0, t1]``), and ``dt0`` with a third. A traced condition makes each a
host callback in the compiled program, and JAX never writes a program with host callbacks to its
persistent compilation cache: every ``simulate`` recompiled from scratch in each new process.

:class:`SavingSolver` wraps any diffrax solver and does diffrax's own saving in its state instead:
after each step it evaluates the step's dense interpolant at the save times that fall in
``(t_prev, t_next]`` (the same interpolant, the same times, the same inclusive end as diffrax's
loop, so the same numbers). A rejected step's writes are discarded with the rest of its state by
diffrax's loop. The save times are an array leaf: new times do not recompile. ``simulate``
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
    """The next save index and the saved states (rows not reached yet hold ``inf``, as diffrax's)."""

    index: Int[Array, ""]
    ys: Any


class SavingSolver(diffrax.AbstractWrappedSolver):
    """``solver`` that also saves ``y`` at ``ts`` in its state (see the module docstring).

    Fields:
        solver: the diffrax solver that takes the steps.
        ts: the save times, non-decreasing, inside ``[t0, t1]`` (not checked here).

    Use with ``diffrax.SaveAt(t1=True, solver_state=True)`` and
    ``diffrax.RecursiveCheckpointAdjoint`` (the saves of one step are a checkpointed
    ``equinox.internal.while_loop``, as diffrax's own under that adjoint), and read the saves with
    :meth:`saved`. Forwards ``isinstance`` checks (implicit, adaptive) to ``solver``.
    """

    solver: diffrax.AbstractSolver
    ts: Float[Array, " n"]

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
        ys = jax.tree.map(lambda y: jnp.full((self.ts.shape[0],) + jnp.shape(y), jnp.inf, jnp.result_type(y)), y0)
        return self.solver.init(terms, t0, t1, y0, args), _Saves(jnp.asarray(0, jnp.int32), ys)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        return _step(self, terms, t0, t1, y0, args, solver_state, made_jump)

    def _step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        inner, saves = solver_state
        y1, y_error, dense_info, inner, result = self.solver.step(terms, t0, t1, y0, args, inner, made_jump)
        interpolation = self.solver.interpolation_cls(t0=t0, t1=t1, **dense_info)
        n = self.ts.shape[0]

        def due(s):
            return (s.index < n) & (self.ts[jnp.minimum(s.index, n - 1)] <= t1)

        def save(s):
            y = interpolation.evaluate(self.ts[s.index])
            return _Saves(s.index + 1, jax.tree.map(lambda row, rows: rows.at[s.index].set(row), y, s.ys))

        saves = eqxi.while_loop(due, save, saves, max_steps=n, buffers=lambda s: s.ys, kind="checkpointed",
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
