"""Shared helpers of the scenarios: output folders, timed simulations, summaries."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import time
from collections.abc import Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..simulation.simulate import simulate
from ..simulation.stiffness import choose_solver
from ..simulation.trajectory import Trajectory, join

DEFAULT_OUT = "kane_jax_out"
# (chain, trajectory) of each timed_simulate call inside `recording()`; None outside it
_RECORDED: contextvars.ContextVar[list | None] = contextvars.ContextVar("kane_jax_recorded", default=None)


def output_dir(out_dir: str | os.PathLike | None, name: str) -> Path:
    """``out_dir`` (created), default ``./kane_jax_out/<name>``."""
    path = Path(out_dir) if out_dir is not None else Path(DEFAULT_OUT) / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _resolve_auto(chain, q0, qd0, t1, t0, kwargs: dict) -> tuple[dict, str]:
    """Choose ``solver="auto"`` once, for the whole horizon: the short warm-up call would otherwise
    choose for its own horizon (not stiff over 1e-6 s) and compile a different solver."""
    if kwargs.get("solver", "auto") not in (None, "auto"):
        return kwargs, ""
    dtype = jnp.result_type(jnp.asarray(q0), jnp.asarray(qd0), float)
    adaptive = kwargs.get("adaptive", True)
    name, why = choose_solver(chain, jnp.asarray(q0, dtype), jnp.asarray(qd0, dtype), float(t1), t0=float(t0),
                              control=kwargs.get("control"), dt0=None if adaptive else kwargs.get("dt0"))
    return {**kwargs, "solver": name}, f"{name} ({why})"


def timed_simulate(chain, q0, qd0, t1: float, *, t0: float = 0.0, **kwargs) -> tuple[Trajectory, dict]:
    """Simulate, separating compile time from run time.

    A first call over a very short horizon compiles (times are traced, so the real call reuses
    it); the second call is timed alone. Returns the trajectory and
    ``{"compile_s", "run_s", "wall_s", "sim_time_s", "real_time_factor", "steps"}`` where the
    real-time factor is simulated time / run time (compile excluded; > 1 is faster than real time).
    """
    start = time.perf_counter()
    kwargs, reason = _resolve_auto(chain, q0, qd0, t1, t0, kwargs)
    warm = simulate(chain, q0, qd0, t0 + 1e-6 * max(t1 - t0, 1e-3), t0=t0, **kwargs)
    jax.block_until_ready(warm.q)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    traj = simulate(chain, q0, qd0, t1, t0=t0, **kwargs)
    jax.block_until_ready(traj.q)
    run_s = time.perf_counter() - start
    if reason:
        traj = dataclasses.replace(traj, solver=reason)
    recorded = _RECORDED.get()
    if recorded is not None:
        recorded.append((chain, traj))
    sim = float(t1 - t0)
    info = {
        "compile_s": compile_s, "run_s": run_s, "wall_s": compile_s + run_s, "sim_time_s": sim,
        "real_time_factor": sim / run_s, "steps": int(traj.stats["num_steps"]),
    }
    return traj, info


def timed_phases(chain, q0, qd0, phases, **kwargs) -> tuple[Trajectory, dict]:
    """:func:`timed_simulate` in consecutive phases, one solve each, joined (:func:`~kane_jax.simulation.join`).

    Arguments:
        chain, q0, qd0: as for :func:`timed_simulate`; the solve starts at ``kwargs.get("t0", 0)``.
        phases: ``(t_end, overrides)`` per phase, ``overrides`` the keyword arguments of that phase's
            solve (its law, solver, ``n_save``) on top of ``kwargs``, or a function of the phase's
            initial ``(t, q, q̇)`` that returns them (its time counts as compile time: set-up); each
            phase starts from the previous one's final state.

    Returns:
        The joined trajectory (recorded once) and the phases' ``compile_s``, ``run_s``, ``wall_s`` and
        ``steps`` summed, ``real_time_factor`` over the whole horizon, and ``phase_steps``.
    """
    t, q, qd = float(kwargs.pop("t0", 0.0)), q0, qd0
    traj, infos = None, []
    token = _RECORDED.set(None)  # the phases are recorded once, joined
    try:
        for t_end, overrides in phases:
            start = time.perf_counter()
            overrides = overrides(t, q, qd) if callable(overrides) else overrides
            setup = time.perf_counter() - start
            part, info = timed_simulate(chain, q, qd, t_end, t0=t, **{**kwargs, **overrides})
            info = {**info, "compile_s": info["compile_s"] + setup, "wall_s": info["wall_s"] + setup}
            traj = part if traj is None else join(traj, part)
            infos.append(info)
            t, q, qd = float(t_end), part.q[-1], part.qd[-1]
    finally:
        _RECORDED.reset(token)
    recorded = _RECORDED.get()
    if recorded is not None:
        recorded.append((chain, traj))
    total = {k: sum(i[k] for i in infos) for k in ("compile_s", "run_s", "wall_s", "sim_time_s", "steps")}
    return traj, {**total, "real_time_factor": total["sim_time_s"] / total["run_s"],
                  "phase_steps": [i["steps"] for i in infos]}


@contextlib.contextmanager
def recording() -> Iterator[list]:
    """Collect the ``(chain, trajectory)`` of every :func:`timed_simulate` call made inside the block.

    The ``kane-jax`` command uses it to draw a scenario's motion (``--html``) without each
    scenario returning its trajectories. Yields the list that the calls append to, in call order.
    """
    recorded: list = []
    token = _RECORDED.set(recorded)
    try:
        yield recorded
    finally:
        _RECORDED.reset(token)


def check_finite(traj: Trajectory, name: str) -> None:
    """Raise when a trajectory failed or holds non-finite values (never silent NaN)."""
    if not bool(np.all(np.asarray(traj.success))):
        raise RuntimeError(f"{name}: the solver failed: {traj.message}")
    if not (np.all(np.isfinite(np.asarray(traj.q))) and np.all(np.isfinite(np.asarray(traj.qd)))):
        raise RuntimeError(f"{name}: non-finite state in the trajectory.")


def report(summary: dict) -> str:
    """A few human-readable lines describing a scenario's summary."""
    lines = [f"{summary['name']}: {summary.get('description', '')}"]
    if "sim_time_s" in summary:
        lines.append(
            f"  simulated {summary['sim_time_s']:.3g} s in {summary['run_s']:.3g} s of run time "
            f"(+ {summary['compile_s']:.3g} s compile): real-time factor {summary['real_time_factor']:.3g}x"
            + (f", {summary['steps']} steps" if "steps" in summary else ""))
    lines.append(f"  total wall time {summary['wall_s']:.3g} s")
    for key, val in summary.items():
        if key in ("name", "description", "files", "sim_time_s", "run_s", "compile_s", "real_time_factor",
                   "steps", "wall_s"):
            continue
        if isinstance(val, float):
            lines.append(f"  {key}: {val:.4g}")
        elif isinstance(val, (int, str)):
            lines.append(f"  {key}: {val}")
    if summary.get("files"):
        lines.append("  wrote: " + ", ".join(str(f) for f in summary["files"]))
    return "\n".join(lines)
