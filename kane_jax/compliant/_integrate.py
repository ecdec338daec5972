"""A small diffrax helper for the compliant-robot models (the general simulator lives elsewhere)."""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._dispatch import _eager
from ..simulation._saving import FirstStep, SavingSolver


@eqx.filter_jit
def _solve(vector_field, y0, ts, rtol, atol, solver, max_steps, throw):
    # saves in the solver state and the first step in the controller: no traced diffrax check, so
    # an eager call (failures checked on the host, `throw` False) compiles to a cacheable program
    term = diffrax.ODETerm(lambda t, y, args: vector_field(t, y))
    saving = SavingSolver(solver, ts)
    controller = FirstStep(diffrax.PIDController(rtol=rtol, atol=atol), (ts[-1] - ts[0]) * 1e-4)
    sol = diffrax.diffeqsolve(
        term, saving, ts[0], ts[-1], None, y0, saveat=diffrax.SaveAt(t1=True, solver_state=True),
        stepsize_controller=controller, max_steps=max_steps, throw=throw,
    )
    return saving.saved(sol)[1], sol.stats["num_steps"], sol.result


def integrate(vector_field: Callable, y0, ts, *, rtol: float = 1e-10, atol: float = 1e-12, solver=None,
              max_steps: int = 200_000):
    """Integrate ``ẏ = vector_field(t, y)`` from ``ts[0]`` and return ``y`` at every time in ``ts``.

    Adaptive explicit Runge–Kutta (default ``diffrax.Dopri8`` with a PID step controller), jitted.

    Arguments:
        vector_field: ``(t, y) -> ẏ``. y0: initial state. ts: increasing times ``(T,)``, ``T ≥ 2``.
        rtol, atol: step-size tolerances. solver: a diffrax solver. max_steps: step limit.

    Returns:
        ``(ys, num_steps)``: states ``(T, len(y0))`` and the number of accepted+rejected steps.

    Raises:
        ValueError: ``ts`` not 1-D increasing with at least two entries.
        RuntimeError: (called eagerly) the solve fails (``max_steps`` reached, a non-finite state);
            under ``jit``/``vmap``/``grad`` an ``equinox.EquinoxRuntimeError``.
    """
    ts = _checks.as_float_array(ts, "ts")
    if ts.ndim != 1 or ts.shape[0] < 2 or (_checks.is_concrete(ts) and not bool(jnp.all(jnp.diff(ts) > 0))):
        raise ValueError(f"`ts` must be a 1-D increasing array of at least two times, got shape {ts.shape}.")
    y0 = _checks.as_float_array(y0, "y0")
    eager = _eager()
    ys, steps, result = _solve(vector_field, y0.astype(ts.dtype), ts, rtol, atol, solver or diffrax.Dopri8(),
                               max_steps, not eager)
    if eager and (result != diffrax.RESULTS.successful or not np.all(np.isfinite(np.asarray(ys)))):
        raise RuntimeError(f"integrate failed after {int(steps)} steps: {diffrax.RESULTS[result]}; try more "
                           "`max_steps`, looser tolerances or another `solver`.")
    return ys, steps
