"""Newton–Raphson that also returns the residual at its answer, from inside its own loop.

:class:`optimistix.Newton` evaluates ``f`` at each iterate ``y_k``, steps to ``y_{k+1}`` and
stops when that step was small; its answer ``y_{k+1}`` is never evaluated. A caller who reports the
remaining residual there (:func:`kane_jax.equilibrium`) had to call ``f`` once more after the
solve: a second program of the residual beside the loop's linearization, compiled on its own
(paper ``000_…`` Sim. 1's equilibrium check: 4.2 s of its 20.5 s compile, pinned, 2026-11-27).

:class:`NewtonAtRoot` wraps :class:`optimistix.Newton` and takes one more iteration when it has
converged: that iteration linearizes ``f`` at the answer, as any other does, but does not move.
The iterates and the answer are those of :class:`optimistix.Newton` (bit for bit); a residual
function that returns itself as auxiliary output (``fn(y, args) = (r, r)``, ``has_aux=True``) then
has ``solution.aux = f(answer)``: the aux of the last iteration, evaluated where it stopped. The
only cost is one more linearization and solve at run
time. Failed iterations (a singular Jacobian, divergence) stay at the last iterate, whose residual
is then the one returned; after ``max_newton_steps`` updates it stops with
``RESULTS.nonlinear_max_steps_reached``. Pass ``optimistix.root_find`` at least
``max_newton_steps + 1`` steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

from ._types import Array


class _State(eqx.Module):
    newton: Any  # optimistix.Newton's own state
    finish: Array  # the next iteration evaluates f at the answer and stops
    budget_spent: Array  # ... because max_newton_steps updates were taken
    done: Array
    result: optx.RESULTS
    updates: Array  # Newton updates applied


def _where(flag, a, b):
    return jax.tree.map(lambda x, y: jnp.where(flag, x, y), a, b)


class NewtonAtRoot(optx.AbstractRootFinder):
    """:class:`optimistix.Newton` whose final state holds ``f`` at the returned root (see the module
    docstring).

    Fields:
        newton: the wrapped solver (its tolerances, norm and linear solver are used as they are).
        max_newton_steps: the most Newton updates taken.
    """

    newton: optx.Newton
    max_newton_steps: int = eqx.field(static=True)

    @property
    def rtol(self) -> float:
        return self.newton.rtol

    @property
    def atol(self) -> float:
        return self.newton.atol

    @property
    def norm(self) -> Callable:
        return self.newton.norm

    def init(self, fn, y, args, options, f_struct, aux_struct, tags) -> _State:
        inner = self.newton.init(fn, y, args, options, f_struct, aux_struct, tags)
        false = jnp.asarray(False)
        return _State(inner, false, false, false, optx.RESULTS.successful, jnp.asarray(0))

    def step(self, fn, y, args, options, state: _State, tags):
        new_y, inner, aux = self.newton.step(fn, y, args, options, state.newton, tags)
        # aux comes from f(y), the same linearization that gave the update
        converged, result = self.newton.terminate(fn, y, args, options, inner, tags)
        failed = result != optx.RESULTS.successful
        done = state.finish | failed
        new_y = _where(done, y, new_y)
        updates = state.updates + jnp.where(done, 0, 1)
        budget_spent = ~done & (updates >= self.max_newton_steps) & ~converged
        result = optx.RESULTS.where(
            failed, result,
            optx.RESULTS.where(state.finish & state.budget_spent, optx.RESULTS.nonlinear_max_steps_reached,
                               optx.RESULTS.successful))
        finish = ~done & (converged | budget_spent)
        return new_y, _State(inner, finish, budget_spent, done, result, updates), aux

    def terminate(self, fn, y, args, options, state: _State, tags):
        return state.done, state.result

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        return y, aux, {}
