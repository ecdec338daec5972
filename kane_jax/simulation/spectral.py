"""The spectral radius of a simulation's vector field, and the largest step a stabilized explicit solver
takes stably (``max_step`` of :func:`kane_jax.simulate`).

An explicit solver held by a fast damped mode ``λ`` must keep ``h |λ|`` inside its stability
interval ``[−β, 0]``. Its error control finds that limit only by crossing it: past the limit the
mode grows, the error estimate grows with it, the step is rejected, shortened, lengthened again —
on paper ``003_…``'s Sim. 2 (closed-loop mode −4.88e4 1/s, :class:`~kane_jax.simulation.StabilizedRK4`)
a quarter of the steps after the swing-up were rejected, and the accepted ones averaged 72 % of
the limit (``docs/architecture.md``, *One solve per phase, steps below the limit*). With the limit known, a
step cap just below it keeps the mode damped and the error control on the slow motion.

``ρ`` comes from the nonlinear power method of the Runge–Kutta–Chebyshev codes (Sommeijer,
Shampine & Verwer, *RKC: an explicit solver for parabolic PDEs*, 1998): ``v ← (f(y + δ v) − f(y)) / δ``,
normalized, converges to the dominant eigenvector of ``∂f/∂y`` and ``‖v‖``'s growth to ``ρ``. It
evaluates the field itself (the law included, feedback and allocation), not its derivative: one
compile of the primal field.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .._shared_jit import shared_leaves_jit
from .._types import Array, Config
from ..chain import Chain
from ._control import checked_control
from ._fields import full_field


def _power_iteration(chain, control, t, q, qd, iterations: int):
    n = q.shape[0]
    y = jnp.concatenate([q, qd])
    scale = jnp.sqrt(jnp.finfo(y.dtype).eps) * (1.0 + jnp.linalg.norm(y))

    def field(z):
        dq, ddq = full_field(t, (z[:n], z[n:]), (chain, control))
        return jnp.concatenate([dq, ddq])

    def body(k, carry):
        # k = 0 evaluates f(y) itself (one call site of the field: it is compiled once)
        v, fy, log_sum = carry
        first = k == 0
        fz = field(y + jnp.where(first, 0.0, scale) * v)
        fy = jnp.where(first, fz, fy)
        w = (fz - fy) / scale
        norm = jnp.linalg.norm(w)
        grows = (~first) & (norm > 0)
        # the second half of the iterations averages log ‖J v‖: a complex pair makes it oscillate
        log_sum = log_sum + jnp.where(grows & (k > iterations // 2), jnp.log(jnp.where(grows, norm, 1.0)), 0.0)
        return jnp.where(grows, w / jnp.where(grows, norm, 1.0), v), fy, log_sum

    # a start with every component (a fixed, sign-alternating vector): no eigenvector is missed by symmetry
    v0 = jnp.where(jnp.arange(2 * n) % 2 == 0, 1.0, -0.7) * (1.0 + 0.1 * jnp.arange(2 * n)) / jnp.sqrt(2.0 * n)
    v0 = (v0 / jnp.linalg.norm(v0)).astype(y.dtype)
    _, _, log_sum = jax.lax.fori_loop(0, iterations + 1, body, (v0, jnp.zeros_like(y), jnp.zeros((), y.dtype)))
    return jnp.exp(log_sum / (iterations - iterations // 2))


# a few dozen evaluations: its compile is its cost
_power_iteration_jit = shared_leaves_jit(_power_iteration, cheap=True)


def spectral_radius(chain: Chain, q: Config, qd: Config, *, t: float = 0.0, control: Any = None,
                    iterations: int = 40) -> Array:
    """``ρ(∂f/∂y)``, the largest eigenvalue modulus of the state-space field ``f(t, (q, q̇)) = (q̇, q̈)``
    at a state, closed by ``control`` (the field of :func:`kane_jax.simulate`), by the nonlinear
    power method on the field's own evaluations (no derivative is compiled).

    Arguments:
        chain: the :class:`~kane_jax.Chain`. q, qd: the state ``(nq,)``. t: the time [s] (for a
            time-varying law). control: as for :func:`kane_jax.simulate`.
        iterations: power iterations (each one field evaluation); the second half is averaged.

    Returns:
        ``ρ`` [1/s], a scalar (0 for a field that does not depend on the state). Converges at the
        rate of the two largest moduli's ratio, to the accuracy of the differences (≈ 1e-6 relative);
        for a dominant complex pair ``‖J v‖`` oscillates and the geometric mean over the second half
        of the iterations is taken (an undamped oscillator's ``ω`` to 1e-5 in the tests).

    Raises:
        ValueError: states of the wrong shape, ``iterations`` < 2.
        TypeError: a control callable of the wrong arity.
    """
    q = chain.check_state(q, "q")
    qd = chain.check_state(qd, "qd")
    if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 2:
        raise ValueError(f"`iterations` must be an int >= 2, got {iterations!r}.")
    dtype = jnp.result_type(q, qd, float)
    control = checked_control(control, chain, dtype)
    return _power_iteration_jit(chain, control, jnp.asarray(t, dtype), q.astype(dtype), qd.astype(dtype),
                                iterations)


def stable_step(solver: Any, radius: Any, *, safety: float = 0.95) -> Array:
    """The largest step at which ``solver`` damps every mode of spectral radius up to ``radius``,
    for a field whose fastest modes are damped (eigenvalues near the negative real axis):
    ``safety · β / ρ`` with ``[−β, 0]`` the solver's stability interval.

    Arguments:
        solver: a solver with a ``stability_interval`` (:class:`~kane_jax.simulation.StabilizedRK3`,
            :class:`~kane_jax.simulation.StabilizedRK4`), or its name in :data:`~kane_jax.simulation.SOLVERS`.
        radius: ``ρ`` [1/s] (:func:`spectral_radius`), positive.
        safety: fraction of the limit, in ``(0, 1]``.

    Returns:
        The step [s], for :func:`kane_jax.simulate`'s ``max_step``. The error control still acts below
        it, so a cap above the true limit costs the rejections it would have saved, never accuracy.

    Raises:
        ValueError: a solver without a stability interval, ``safety`` outside ``(0, 1]``, a ``radius``
            that is not positive.
    """
    from .simulate import SOLVERS

    if isinstance(solver, str):
        if solver.lower() not in SOLVERS:
            raise ValueError(f"`solver` must be one of {sorted(SOLVERS)}, got {solver!r}.")
        solver = SOLVERS[solver.lower()]
    beta = getattr(solver, "stability_interval", None)
    if beta is None:
        raise ValueError(f"`solver` must have a `stability_interval` (StabilizedRK3, StabilizedRK4), got "
                         f"{getattr(solver, '__name__', type(solver).__name__)}.")
    if not 0 < safety <= 1:
        raise ValueError(f"`safety` must be in (0, 1], got {safety!r}.")
    radius = jnp.asarray(radius)
    if not isinstance(radius, jax.core.Tracer) and not float(radius) > 0:
        raise ValueError(f"`radius` must be a positive spectral radius [1/s], got {float(radius)!r}.")
    return safety * float(beta) / radius

