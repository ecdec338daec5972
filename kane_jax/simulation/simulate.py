"""Simulation of a chain with diffrax: forward dynamics through the inverse dynamics (``000_…`` eq. 56).

The state ``y = (q, q̇)`` is integrated with ``q̈ = M(q)⁻¹ (Q_a(q, u) − ID(q, q̇, 0))``, where
``M`` comes from the vmapped ID columns (:func:`kane_jax.mass_matrix`) and the bias
``ID(q, q̇, 0) = c + G + ∂U/∂q + D q̇`` from one call of the recursion — the inertia-based
algorithm that papers ``000_…`` §VI and ``003_…`` §7 use to simulate.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable
from typing import Any

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .. import _checks
from .._dispatch import _eager
from .._shared_jit import loop_merge_options, shared_arrays, shared_leaves_jit
from .._tangents import with_tangent_where
from .._types import Config
from ..chain import Chain
from . import _stored
from ._control import _evaluate_law, checked_control, reads_state
from ._fields import explicit_field, field_with_input, full_field, implicit_field, in_kernels, state_norm
from ._saving import FirstStep, FixedStep, SavingSolver
from ._steps import STEP_CONTROLS, largest_step, step_coefficients
from .rosenbrock import Ros34PW2
from .rosenbrock import vector_field as rosenbrock_field
from .stabilized import StabilizedRK3, StabilizedRK4
from .stiffness import choose_solver
from .trajectory import Trajectory, first_nonfinite, raise_on_failure

SOLVERS: dict[str, Callable[[], diffrax.AbstractSolver]] = {
    "tsit5": diffrax.Tsit5,
    "dopri5": diffrax.Dopri5,
    "dopri8": diffrax.Dopri8,
    "heun": diffrax.Heun,
    "stabilized_rk3": StabilizedRK3,
    "stabilized_rk4": StabilizedRK4,
    "kvaerno5": diffrax.Kvaerno5,
    "kencarp4": diffrax.KenCarp4,
    "ros34pw2": Ros34PW2,
}

# --- the solve -----------------------------------------------------------------------------------

def _rollout(chain, y0, t0, t1, ts, control, solver, dt0, tolerances, adjoint, max_steps, throw, meter, jumps,
             model_law, coefficients=STEP_CONTROLS["integral"], one_kernel=True):
    dtype = y0[0].dtype
    # saving in the solver's state and the step in the controller: no traced diffrax checks, so an
    # eagerly called solve holds no host callback and JAX's persistent cache can store it
    # (with the default adjoint; others keep diffrax's own saving)
    own_saving = type(adjoint) is diffrax.RecursiveCheckpointAdjoint
    with_input = False
    if tolerances is None:
        controller = FixedStep(dt0) if own_saving else diffrax.ConstantStepSize()
        dt0 = None if own_saving else dt0
    else:
        # a step below 1e-13 of the horizon means the state went non-finite or the problem is far
        # too stiff: stop with RESULTS.dt_min_reached instead of burning max_steps
        # (not with jump_ts: a step clipped to end at a jump may legitimately be that short)
        dtmin = 1e-13 * (t1 - t0) if jumps is None else None
        # a model-based law's inputs at the saves come from the steps' own last stages: steps end on
        # the saves, and the law is compiled once (_fields.py); not across jumps (a step ends just before one)
        with_input = (own_saving and jumps is None and model_law and isinstance(solver, diffrax.AbstractERK)
                      and solver.tableau.fsal)
        pcoeff, icoeff, dcoeff = coefficients
        max_step = tolerances[2] if len(tolerances) > 2 else None  # traced: new values do not recompile
        controller = diffrax.PIDController(rtol=tolerances[0], atol=tolerances[1], pcoeff=pcoeff, icoeff=icoeff,
                                           dcoeff=dcoeff, dtmin=dtmin, force_dtmin=False, dtmax=max_step,
                                           jump_ts=jumps, step_ts=ts if with_input else None,
                                           norm=state_norm if with_input else optx.rms_norm)
        if own_saving and dt0 is not None:
            controller, dt0 = FirstStep(controller, dt0), None
    size = chain.nu if chain.nu else chain.nq
    # not one kernel: a marker in the steps (_fields.py); on a CPU only, the one backend whose loops XLA hoists
    mark = in_kernels if not one_kernel and jax.default_backend() == "cpu" else (lambda f: f)
    if isinstance(solver, (diffrax.KenCarp3, diffrax.KenCarp4, diffrax.KenCarp5)):
        terms = diffrax.MultiTerm(diffrax.ODETerm(mark(explicit_field)), diffrax.ODETerm(implicit_field))
    elif isinstance(solver, Ros34PW2):
        terms = diffrax.ODETerm(rosenbrock_field)  # the same field, traced and compiled once with the steps
    elif with_input:
        terms, y0 = diffrax.ODETerm(mark(field_with_input)), (*y0, jnp.zeros((size,), dtype))
    else:
        terms = diffrax.ODETerm(mark(full_field))
    if own_saving:
        solver = SavingSolver(solver, ts, inputs=with_input)
        saveat = diffrax.SaveAt(t1=True, solver_state=True)
    else:
        saveat = diffrax.SaveAt(ts=ts)
    # differentiated: the state's tangent from the first step, so JAX traces the loop's JVP once (_tangents.py)
    y0 = with_tangent_where(y0, (chain, control))
    sol = diffrax.diffeqsolve(
        terms, solver, t0, t1, dt0, y0, args=(chain, control), saveat=saveat,
        stepsize_controller=controller, adjoint=adjoint, max_steps=max_steps, throw=throw, progress_meter=meter)
    ts, (q, qd, *_) = solver.saved(sol) if own_saving else (sol.ts, sol.ys)
    if with_input:
        return Trajectory(ts, q, qd, solver.saved_inputs(sol), sol.result, sol.stats, first_nonfinite(q, qd))
    # the inputs at the saves, one after another (`lax.map`): a vmapped feedback law (qpax's loop, the PFBL's
    # solves) compiles longer: 003-sim2's solve 27.2-38.9 s (median 31.4) against 32.4-39.9 s (33.0), pinned
    u = jax.lax.map(lambda a: _evaluate_law(control, size, dtype, *a), (ts, q, qd))
    return Trajectory(ts, q, qd, u, sol.result, sol.stats, first_nonfinite(q, qd))


# the law's copy of the chain is the chain: XLA merges their work, also in the solver's loop (a law that
# holds the chain's arrays, such as a PFBL: compiled without loop hoisting, _shared_jit.py)
_rollout = shared_leaves_jit(_rollout, merge_in_loops=lambda chain, y0, t0, t1, ts, law, *_: shared_arrays(chain, law))


def _solver(solver, chain, y0, t0, t1, dt0, control) -> tuple[diffrax.AbstractSolver, str]:
    if solver is None or (isinstance(solver, str) and solver.lower() == "auto"):
        if not _eager() or any(isinstance(x, jax.core.Tracer) for x in (*y0, t0, t1, dt0)):
            return diffrax.Tsit5(), "tsit5 (auto under a JAX transformation: the stiffness test needs concrete values)"
        name, reason = choose_solver(chain, *y0, float(t1), t0=float(t0), control=control,
                                     dt0=None if dt0 is None else float(dt0))
        return SOLVERS[name](), f"{name} ({reason})"
    if isinstance(solver, str):
        key = solver.lower()
        if key not in SOLVERS:
            raise ValueError(f"`solver` must be 'auto', one of {sorted(SOLVERS)} or a diffrax solver, got {solver!r}.")
        return SOLVERS[key](), key
    if isinstance(solver, diffrax.AbstractSolver):
        return solver, type(solver).__name__
    raise TypeError(f"`solver` must be a name or a diffrax solver, got {type(solver).__name__}.")


def simulate(
    chain: Chain, q0: Config, qd0: Config, t1: float, *, control: Any = None, t0: float = 0.0,
    saveat: Any = None, n_save: int = 201, solver: Any = None, dt0: float | None = None, rtol: float = 1e-6,
    atol: float = 1e-8, adaptive: bool = True, max_steps: int = 100_000, adjoint: Any = None,
    progress: bool = False, throw: bool = True, jump_ts: Any = None, step_control: Any = "integral",
    max_step: float | None = None, one_kernel: bool = True,
) -> Trajectory:
    """Integrate the chain's dynamics from ``(q0, q̇0)`` at ``t0`` to ``t1`` with diffrax.

    ``q̈ = M(q)⁻¹ (Q_a − ID(q, q̇, 0))`` (paper ``000_…`` eq. 56), ``M`` by vmapped ID columns and
    a Cholesky solve; ``Q_a = A(q)ᵀ u`` through the chain's actuators
    (:func:`kane_jax.actuation_force`, ``000_…`` eq. 57) or ``Q_a = u`` when the chain has none.

    Works under ``jax.jit``/``eqx.filter_jit``, ``jax.vmap`` (batches of initial states, inputs,
    or chains with batched parameters) and ``jax.grad``: gradients go through the solve with
    diffrax's ``RecursiveCheckpointAdjoint`` (discretize-then-optimize, exact gradients of the
    computed solution, memory O(log max_steps) checkpoints); pass
    ``adjoint=diffrax.BacksolveAdjoint()`` for the continuous adjoint.

    Arguments:
        chain: the :class:`~kane_jax.Chain`.
        q0, qd0: initial state ``(nq,)``.
        t1: final time [s] (``t0`` the initial time, default 0).
        control: ``None`` (no input), a constant ``u``, a function of time ``u(t)`` or a feedback
            law ``u(t, q, q̇)``; ``u`` has shape ``(chain.nu,)``, or ``(nq,)`` (generalized
            forces) for a chain without actuators. Callables may be ``equinox.Module``\\ s holding
            arrays (gains, references), which ``grad``/``vmap`` then reach.
        saveat: times to save at (1-D array in ``[t0, t1]``) or an int (that many evenly spaced
            times); default ``n_save`` evenly spaced times including ``t0`` and ``t1``. With a
            feedback law that holds the chain's arrays (a model-based law such as a PFBL), adaptive
            steps of an explicit FSAL solver (Tsit5, Dopri5, Dopri8, the stabilized ones) and no ``jump_ts``, the
            steps also end on these times, and the saved inputs are the solver's own evaluations of
            the law there (the law is compiled once, not again for the saves).
        solver: ``"auto"`` (default, also ``None``): measures the stiffness at the initial state
            (:func:`kane_jax.simulation.stiffness`) and takes ``"tsit5"``, or ``"ros34pw2"`` when
            stability alone would force an explicit solver into more than 2,000 steps (with
            ``adaptive=False``: when ``dt0`` exceeds the explicit stability limit); the choice
            and its reason are in ``Trajectory.solver``. A control law that feeds back ``q`` or
            ``q̇`` gets ``"tsit5"``, or ``"stabilized_rk3"`` where the open loop would take ``"ros34pw2"``
            (:func:`~kane_jax.simulation.stiffness.choose_solver` says why; a stiff closed loop takes
            ``Ros34PW2(control_jacobian=True)``). Under ``jit``/``vmap``/``grad`` the
            state is not concrete and ``"auto"`` means ``"tsit5"``: name the solver there.
            Names: ``"tsit5"``, ``"dopri5"``, ``"dopri8"``, ``"heun"``, ``"stabilized_rk3"``, ``"stabilized_rk4"``
            (explicit; the last two for steps held by fast damped modes: ``kane_jax.simulation.stabilized``);
            ``"ros34pw2"`` (linearly implicit Rosenbrock–W with the chain's structured Jacobian
            ``[[0, I], [−M⁻¹K, −M⁻¹D]]`` and one ``nq × nq`` LU per stage, for stiff soft robots:
            :class:`~kane_jax.simulation.rosenbrock.Ros34PW2`); ``"kvaerno5"`` (implicit, dense
            autodiff Jacobian: slow to compile); ``"kencarp4"`` (IMEX: elastic and damping forces
            and ``q̇ = v`` implicit, inertia/gravity/input explicit); or any diffrax solver.
        dt0: initial step [s]; None lets diffrax choose. Required when ``adaptive=False``.
        rtol, atol: tolerances of the PID step-size controller (adaptive steps).
        step_control: ``"integral"`` (default: diffrax's ``PIDController`` defaults, the next step
            from the last error alone), ``"pi"`` (``pcoeff=0.4, icoeff=0.3``: Hairer & Wanner's PI
            controller, which damps the accept/reject cycling of an explicit solver held at its
            stability limit by stiff modes: paper ``003_…``'s closed loops, 17 % fewer steps;
            elsewhere up to 23 % more, ``docs/architecture.md``), or ``(pcoeff, icoeff, dcoeff)``
            of diffrax's ``PIDController``. Ignored with ``adaptive=False``.
        max_step: the largest adaptive step [s] (diffrax's ``dtmax``), or None. Below the stability
            limit of a mode that only needs damping (:func:`~kane_jax.simulation.stable_step`), the
            error control no longer cycles between steps past the limit and rejected ones. Ignored
            with ``adaptive=False``.
        one_kernel: True (default): under ``kj.recommended_xla_flags()`` on a CPU, XLA compiles the solver's
            whole loop as one kernel (steps 1.3–3.7× faster, a longer compile). False keeps it a loop of
            kernels (the same numbers), for a solve compiled inside an optimization loop, where the compile
            dominates (``simulation_loss``'s and ``shooting``'s default: their compile ≈ 40–55 % shorter). The
            Runge–Kutta and IMEX solvers on a CPU (not ``"ros34pw2"``); ``_fields.in_kernels`` says how.
        adaptive: False for constant steps ``dt0``.
        max_steps: step budget; exceeding it is a failure (see ``throw``).
        adjoint: a diffrax adjoint, default ``RecursiveCheckpointAdjoint()``.
        progress: show diffrax's progress meter (tqdm when installed, else text).
        throw: True raises on failure: the solver's (max steps; an adaptive step below 1e-13 of the
            horizon, which is what non-finite states cause) and a non-finite saved state (fixed
            steps): :class:`SimulationError` naming the time and coordinates (under ``jit``/``vmap``
            an ``equinox`` runtime error). False returns the trajectory with ``result`` and
            ``nonfinite_at`` set — check ``traj.success`` and ``traj.message``.
        jump_ts: times where ``control`` jumps or kinks (adaptive steps end exactly there instead of
            being rejected across them); default ``control.jump_times`` when the control has it
            (``InputSequence``: its interior knots; ``PullOnly``: its controller's). With jumps the
            1e-13 minimum step is off, so a non-finite state ends at ``max_steps`` instead.

    Returns:
        :class:`Trajectory` with ``ts, q, qd, u, result, stats``.

    Raises:
        ValueError: states of the wrong shape, a constant ``control`` of the wrong size, bad times,
            an unknown ``step_control`` name or negative coefficients, a ``max_step`` not positive.
        TypeError: unknown ``solver``, a control callable of the wrong arity, a ``step_control``
            that is neither a name nor three numbers, a ``max_step`` that is not a number, a
            ``one_kernel`` that is not a bool.
        SimulationError: (with ``throw=True``, called outside jit/vmap/grad) the solver fails, or a
            state is not finite; under a transformation, ``equinox.EquinoxRuntimeError``: the solver
            fails, or a state is not finite.
    """
    q0 = chain.check_state(q0, "q0")
    qd0 = chain.check_state(qd0, "qd0")
    one_kernel = _checks.flag(one_kernel, "one_kernel")
    dtype = jnp.result_type(q0, qd0, float)
    y0 = (q0.astype(dtype), qd0.astype(dtype))
    t0_ = jnp.asarray(t0, dtype=dtype)
    t1_ = jnp.asarray(t1, dtype=dtype)
    if t0_.shape != () or t1_.shape != ():
        raise ValueError(f"`t0` and `t1` must be scalars, got shapes {t0_.shape} and {t1_.shape}.")
    concrete = not isinstance(t1_, jax.core.Tracer) and not isinstance(t0_, jax.core.Tracer)
    if concrete and not float(t1_) > float(t0_):
        raise ValueError(f"`t1` must be greater than `t0`, got t0={float(t0_)} and t1={float(t1_)}.")
    if saveat is None:
        saveat = n_save
    if isinstance(saveat, (int, np.integer)) and not isinstance(saveat, bool):
        if saveat < 2:
            raise ValueError(f"`saveat`/`n_save` as a count must be >= 2, got {saveat}.")
        if concrete:  # on the host: an eager jnp expression compiles four tiny programs in every new process
            ts = jnp.asarray(float(t0_) + (float(t1_) - float(t0_)) * np.linspace(0.0, 1.0, int(saveat)), dtype=dtype)
        else:
            ts = t0_ + (t1_ - t0_) * jnp.linspace(0.0, 1.0, int(saveat), dtype=dtype)
    else:
        ts = jnp.asarray(saveat, dtype=dtype)
        if ts.ndim != 1 or ts.shape[0] == 0:
            raise ValueError(f"`saveat` must be an int or a non-empty 1-D array of times, got shape {ts.shape}.")
        if concrete and not isinstance(ts, jax.core.Tracer):
            tsn = np.asarray(ts)
            if np.any(np.diff(tsn) < 0) or tsn[0] < float(t0_) or tsn[-1] > float(t1_):
                raise ValueError(f"`saveat` times must be non-decreasing and inside [t0, t1] = [{float(t0_)}, "
                                 f"{float(t1_)}], got [{tsn[0]}, …, {tsn[-1]}].")
    size = chain.nu if chain.nu else chain.nq
    control = checked_control(control, chain, dtype)
    slv, name = _solver(solver, chain, y0, t0_, t1_, None if adaptive else dt0, control)
    if adaptive:
        tolerances = (jnp.asarray(rtol, dtype=dtype), jnp.asarray(atol, dtype=dtype))  # traced: no recompile
        cap = largest_step(max_step, dtype)
        tolerances = tolerances if cap is None else (*tolerances, cap)
    else:
        if dt0 is None:
            raise ValueError("`dt0` must be given when `adaptive=False`.")
        tolerances = None
    max_steps = _checks.count(max_steps, "max_steps")
    coefficients = step_coefficients(step_control)
    if adjoint is None:
        adjoint = diffrax.RecursiveCheckpointAdjoint()
    meter = (diffrax.NoProgressMeter() if not progress else diffrax.TqdmProgressMeter()
             if importlib.util.find_spec("tqdm") else diffrax.TextProgressMeter())
    dt0_ = None if dt0 is None else jnp.asarray(dt0, dtype=dtype)
    jump_ts = getattr(control, "jump_times", None) if jump_ts is None else jump_ts
    jumps = None if jump_ts is None or not adaptive else jnp.asarray(jump_ts, dtype=dtype).reshape(-1)
    # called eagerly, the solve runs with diffrax's throw off and failures are raised here from the
    # concrete result: the compiled program then holds no host callback, so JAX's persistent
    # compilation cache can store it (programs with callbacks are never cached)
    in_solve = bool(throw) and not _eager()
    # a model-based feedback law (it holds the chain's arrays: a PFBL) is worth compiling once, with
    # its saved inputs from the solver's stages; a law as cheap as a PD is not worth the steps that
    # end on the saves (the demo: 950 -> 1,037 steps). `reads_state` through the jitted law, whose
    # trace is cached: tracing a PFBL itself again takes seconds per call.
    shared = control is not None and shared_arrays(chain, control)
    model_law = shared and reads_state(lambda t, q, qd: _evaluate_law(control, size, dtype, t, q, qd), chain.nq, dtype)
    args = (chain, y0, t0_, t1_, ts, control, slv, dt0_, tolerances, adjoint, int(max_steps), in_solve, meter, jumps,
            model_law, coefficients, one_kernel)
    # the lowered program from disk where an application keeps them (`_stored`); a law holding the chain's
    # arrays compiles without loop hoisting (`_shared_jit`), here as in `_rollout`
    options = loop_merge_options() if shared else None
    traj = _stored.call("simulate", _rollout.__wrapped__, args, compiler_options=options) if _eager() else None
    traj = dataclasses.replace(_rollout(*args) if traj is None else traj, solver=name)  # the reason holds numbers
    return raise_on_failure(traj) if throw else traj
