"""What :func:`~kane_jax.simulate` returns: the :class:`Trajectory` and how a failed simulation is reported.

A trajectory carries diffrax's result code and the index of the first non-finite saved state, so a
failure is never hidden: ``Trajectory.success``/``message`` say what happened, and ``throw=True``
raises :class:`SimulationError` with the message (``eqx.error_if`` under a trace).
"""

from __future__ import annotations

from typing import Any

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._types import Array, Float, Int


class Trajectory(eqx.Module):
    """A simulated trajectory (a pytree: ``jit``/``vmap``/``grad`` pass through it).

    Fields:
        ts: ``(T,)`` save times [s].
        q, qd: ``(T, nq)`` configuration and velocity at ``ts``.
        u: ``(T, m)`` the control input at ``ts`` (``m = chain.nu``, or ``nq`` for a chain
            without actuators driven by generalized forces; ``m = 0`` with no control).
        result: diffrax's ``RESULTS`` item (``diffrax.RESULTS.successful`` when the solver finished).
        stats: diffrax's statistics (``num_steps``, ``num_accepted_steps``, ``num_rejected_steps``, …).
        nonfinite_at: index into ``ts`` of the first saved state with a NaN or infinite entry, −1
            when every saved state is finite (a non-finite state stays non-finite, so with fixed
            steps this catches a blow-up that the solver itself does not report).
        solver: the solver's name (``"tsit5"``, ``"ros34pw2"``, …, the class name for a solver
            instance) and, when :func:`simulate` chose it, why (static: not a leaf).
    """

    ts: Float[Array, " T"]
    q: Float[Array, "T nq"]
    qd: Float[Array, "T nq"]
    u: Float[Array, "T m"]
    result: Any
    stats: dict
    nonfinite_at: Int[Array, ""] | int = -1
    solver: str = eqx.field(static=True, default="")

    @property
    def success(self) -> Array:
        """Boolean array: True where the solver finished and every saved state is finite."""
        return (self.result == diffrax.RESULTS.successful) & (self.nonfinite_at < 0)

    @property
    def message(self) -> str:
        """What went wrong, or ``"successful"`` (concrete, unbatched trajectories only).

        A non-finite state is reported with the save interval where it appeared and the coordinates
        (of ``q`` and ``q̇``) that are not finite there; a solve that stopped early (``max_steps``,
        the minimum step size) with the last save point it reached (diffrax fills the later ones,
        times included, with inf).
        """
        solver = diffrax.RESULTS[self.result]
        k = int(self.nonfinite_at)
        if k < 0:
            return solver or "successful"
        if not np.isfinite(float(self.ts[k])):
            # diffrax fills the save points a failed solve never reached with inf (times and states)
            last = f"the last save reached is t = {float(self.ts[k - 1]):.6g} s (save index {k - 1})" if k > 0 else \
                "no save point was reached"
            text = f"the solve stopped before save index {k}; {last}, and later saves hold inf"
            return f"{solver}; {text}" if solver else text
        bad_q = np.flatnonzero(~np.isfinite(np.asarray(self.q[k]))).tolist()
        bad_qd = np.flatnonzero(~np.isfinite(np.asarray(self.qd[k]))).tolist()
        since = f"after t = {float(self.ts[k - 1]):.6g} s and " if k > 0 else ""
        text = (f"the state became non-finite {since}by t = {float(self.ts[k]):.6g} s (save index {k}); "
                f"non-finite coordinates: q{bad_q}, qd{bad_qd}")
        return f"{solver}; {text}" if solver else text


def first_nonfinite(q: Array, qd: Array) -> Array:
    bad = ~(jnp.all(jnp.isfinite(q), axis=-1) & jnp.all(jnp.isfinite(qd), axis=-1))
    return jnp.where(jnp.any(bad), jnp.argmax(bad), -1)


def raise_on_failure(traj: Trajectory) -> Trajectory:
    """``throw=True``: a detailed error for a concrete trajectory, ``eqx.error_if`` under a trace."""
    # the concrete result's message is read on the host (``""`` when successful): a comparison of the
    # result arrays would compile two tiny programs in every new process
    if not isinstance(traj.q, jax.core.Tracer) and diffrax.RESULTS[traj.result] != "":
        raise SimulationError(f"simulate failed: {traj.message}. Smaller steps (dt0), a stiff solver or a larger "
                              "max_steps may help; with throw=False the trajectory is returned with `success` False.")
    if isinstance(traj.q, jax.core.Tracer):
        q = eqx.error_if(traj.q, traj.nonfinite_at >= 0,
                         "simulate: the state became non-finite (NaN or inf); run with throw=False and read "
                         "Trajectory.message / nonfinite_at for when and which coordinates.")
        return eqx.tree_at(lambda t: t.q, traj, q)
    if int(traj.nonfinite_at) >= 0:
        raise SimulationError(f"simulate failed: {traj.message}. Smaller steps (dt0), adaptive steps or a stiff "
                              "solver may help; with throw=False the trajectory is returned with `success` False.")
    return traj


class SimulationError(RuntimeError):
    """A simulation failed (raised by :func:`simulate` with ``throw=True``)."""


def join(first: Trajectory, second: Trajectory) -> Trajectory:
    """One trajectory from two consecutive solves (a task in phases: one solve per phase, each with
    its own law and solver), the second started from the first's final state.

    The second's first save (at the junction, where its law applies) replaces the first's last.
    ``stats`` are summed, ``result`` is the first phase's where it failed and the second's
    otherwise, ``nonfinite_at`` counts in the joined saves, and ``solver`` names both phases'.

    Arguments:
        first, second: trajectories of the same chain (``nq``, and ``m`` inputs), ``second.ts[0]``
            equal to ``first.ts[-1]``; concrete (not batched).

    Returns:
        The joined :class:`Trajectory` (``len(first.ts) + len(second.ts) − 1`` saves).

    Raises:
        ValueError: shapes that differ, or a second phase that does not start where the first ends.
    """
    for name in ("q", "u"):
        a, b = getattr(first, name), getattr(second, name)
        if a.ndim != 2 or a.shape[1:] != b.shape[1:]:
            raise ValueError(f"`second.{name}` must have the shape (T, {a.shape[1:]}) of `first.{name}`'s saves, got "
                             f"{b.shape} and {a.shape}.")
    if not float(second.ts[0]) == float(first.ts[-1]):
        raise ValueError(f"`second` must start at `first`'s last save, t = {float(first.ts[-1])!r}; it starts at "
                         f"t = {float(second.ts[0])!r}.")
    n = first.ts.shape[0] - 1
    cat = lambda a, b: jnp.concatenate([a[:-1], b])
    failed = first.result != diffrax.RESULTS.successful
    result = jax.tree.map(lambda a, b: jnp.where(failed, a, b), first.result, second.result)
    stats = {k: first.stats[k] + second.stats[k] for k in first.stats}
    bad = jnp.where(first.nonfinite_at >= 0, first.nonfinite_at,
                    jnp.where(second.nonfinite_at >= 0, second.nonfinite_at + n, -1))
    return Trajectory(cat(first.ts, second.ts), cat(first.q, second.q), cat(first.qd, second.qd),
                      cat(first.u, second.u), result, stats, bad, f"{first.solver}, then {second.solver}")
