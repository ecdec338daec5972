"""Newton–Raphson for :func:`optimistix.root_find` that returns the residual at its answer.

:class:`optimistix.Newton` evaluates ``f`` at each iterate ``y_k``, steps to ``y_{k+1}`` and stops
when that step was small: its answer ``y_{k+1}`` is never evaluated, and a caller who reports the
remaining residual there (:func:`kane_jax.equilibrium`) had to call ``f`` once more after the solve,
a second program of the residual compiled beside the loop's. It also linearizes ``f`` with
``jax.linearize`` and materializes the linear map, which XLA compiles more slowly than one
forward-mode Jacobian of the same function.

:class:`NewtonAtRoot` takes the same iterates — ``y_{k+1} = y_k − J(y_k)⁻¹ f(y_k)`` with ``J`` by
``jax.jacfwd`` and the linear solve by lineax, stopping when ``|y_{k+1} − y_k| < atol + rtol |y_k|``
and ``|f(y_k)| < atol`` (optimistix's Cauchy test) — and, once converged, one more iteration that
evaluates ``f`` and ``J`` at the answer but does not move. A residual function that returns itself
as auxiliary output (``fn(y, args) = (r, r)``, ``has_aux=True``) then has
``solution.aux = f(answer)``. Paper ``000_…`` Sim. 1's equilibrium check, first call (pinned,
2026-11-27, default XLA flags): 19.3 s with ``optimistix.Newton`` and the residual called after it,
17.3 s with the extra iteration alone, 14.5 s with the forward-mode Jacobian too; the same
iterates bit for bit; the extra iteration costs one Jacobian and solve at run time (≈ 2 ms).
A failed linear solve stays at the last iterate, whose residual is then the one returned; after
``max_newton_steps`` updates it stops with ``RESULTS.nonlinear_max_steps_reached``. Give
``optimistix.root_find`` at least ``max_newton_steps + 1`` steps. Gradients of the root go through
``optimistix.ImplicitAdjoint`` as with any root finder.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import optimistix as optx

from ._types import Array


class _State(eqx.Module):
    finish: Array  # the next iteration evaluates f at the answer and stops
    budget_spent: Array  # ... because max_newton_steps updates were taken
    done: Array
    result: optx.RESULTS
    updates: Array  # Newton updates applied


class NewtonAtRoot(optx.AbstractRootFinder):
    """Newton–Raphson whose last iteration evaluates ``f`` at the returned root (module docstring),
    for an unknown ``y`` that is one array.

    Fields:
        rtol, atol: the Cauchy test's tolerances (as :class:`optimistix.Newton`'s).
        max_newton_steps: the most Newton updates taken.
        norm: the norm of the tests (default the max norm).
        linear_solver: the lineax solver of ``J x = f`` (default LU for a square ``J``).
    """

    rtol: float
    atol: float
    max_newton_steps: int = eqx.field(static=True)
    norm: Callable = optx.max_norm
    linear_solver: lx.AbstractLinearSolver = lx.AutoLinearSolver(well_posed=None)

    def init(self, fn, y, args, options, f_struct, aux_struct, tags) -> _State:
        false = jnp.asarray(False)
        return _State(false, false, false, optx.RESULTS.successful, jnp.asarray(0))

    def step(self, fn, y, args, options, state: _State, tags):
        def value_and_aux(x):
            out, aux = fn(x, args)
            return out, (out, aux)

        jac, (fx, aux) = jax.jacfwd(value_and_aux, has_aux=True)(y)
        sol = lx.linear_solve(lx.MatrixLinearOperator(jac, tags), fx, self.linear_solver, throw=False)
        diff = sol.value
        converged = (self.norm(diff / (self.atol + self.rtol * jnp.abs(y))) < 1) & (self.norm(fx) < self.atol)
        linear_result = optx.RESULTS.promote(sol.result)
        failed = linear_result != optx.RESULTS.successful
        done = state.finish | failed
        new_y = jnp.where(done, y, y - diff)
        updates = state.updates + jnp.where(done, 0, 1)
        budget_spent = ~done & (updates >= self.max_newton_steps) & ~converged
        result = optx.RESULTS.where(
            failed, linear_result,
            optx.RESULTS.where(state.finish & state.budget_spent, optx.RESULTS.nonlinear_max_steps_reached,
                               optx.RESULTS.successful))
        finish = ~done & (converged | budget_spent)
        return new_y, _State(finish, budget_spent, done, result, updates), aux

    def terminate(self, fn, y, args, options, state: _State, tags):
        return state.done, state.result

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        return y, aux, {}
