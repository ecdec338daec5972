"""Scenario: inverse dynamics of the 3-DoF VSA robot of paper ``001_…`` §V (its Figs. 1–4).

The spatial 3R arm of Table I (standard DH, augmented-link masses, motor inertias
``B = (3.20, 3.05, 1.98)`` kg m², cubic antagonistic springs ``K φ + K_c φ³``, ``K = 400`` N m/rad,
``K_c = 2000`` N m/rad³) follows a degree-7 rest-to-rest link trajectory over ``T = 4`` s (zero
velocity, acceleration and jerk at both ends) while the stiffness of every joint follows a cubic
rest-to-rest profile from 850 to 1275 N m/rad. The motor torques ``τ_d1, τ_d2`` come from
:func:`~kane_jax.compliant.vsa_inverse_dynamics_trajectory` (Newton warm-started from the previous
instant), then the same link motion is repeated at constant stiffness 850 and 1275 N m/rad
(the paper's comparison: same ``τ_e``, larger motor torques at high stiffness). Finally the
variable-stiffness torques are applied open loop to the full 18-state model (diffrax Dopri8,
rtol 1e-10) to check that they reproduce ``q_d(t)`` and ``σ_d(t)``.

The paper's Fig. 1 (the actual joint excursions) did not survive in our copy; the endpoints used
here, ``q(0) = (0, 0, 0)`` and ``q(T) = (π/2, π/4, −π/4)`` rad, are a plausible choice, so the
torque curves have the paper's shapes but not its exact values.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

NAME = "vsa_3dof"
DURATION = 4.0
Q_START = (0.0, 0.0, 0.0)
Q_END = (np.pi / 2, np.pi / 4, -np.pi / 4)
SIGMA_MIN, SIGMA_MAX = 850.0, 1275.0

# rest-to-rest polynomials s(τ), τ ∈ [0, 1], with s(0) = 0, s(1) = 1 and zero derivatives at both ends
_REST_TO_REST = {3: (0, 0, 3, -2), 5: (0, 0, 0, 10, -15, 6), 7: (0, 0, 0, 0, 35, -84, 70, -20)}


def rest_to_rest(t, start, end, duration, *, degree: int = 7, n_derivs: int = 5):
    """``(x, ẋ, …)`` of the rest-to-rest polynomial from ``start`` to ``end`` in ``duration``.

    Degree 3, 5 or 7 (zero velocity; + acceleration; + jerk at both ends). Constant outside
    ``[0, duration]``. Returns shape ``(n_derivs, *start.shape)``.

    Raises:
        ValueError: unsupported degree or non-positive duration.
    """
    if degree not in _REST_TO_REST:
        raise ValueError(f"`degree` must be 3, 5 or 7, got {degree!r}.")
    if not duration > 0:
        raise ValueError(f"`duration` must be positive, got {duration!r}.")
    start, end = jnp.asarray(start, dtype=float), jnp.asarray(end, dtype=float)
    coeffs = np.array(_REST_TO_REST[degree], dtype=float)
    tau = jnp.clip(jnp.asarray(t) / duration, 0.0, 1.0)
    out = []
    for m in range(n_derivs):
        c = np.polynomial.polynomial.polyder(coeffs, m) if m else coeffs
        s = jnp.polyval(jnp.asarray(c[::-1]), tau) / duration**m
        out.append(start + (end - start) * s if m == 0 else (end - start) * s)
    return jnp.stack(out)


def references(ts, sigma_start, sigma_end):
    """``(T, 5, 3)`` link and ``(T, 3, 3)`` stiffness references of the scenario on the grid ``ts``."""
    q = jax.vmap(lambda t: rest_to_rest(t, Q_START, Q_END, DURATION, degree=7, n_derivs=5))(ts)
    sig = jax.vmap(lambda t: rest_to_rest(t, jnp.full(3, sigma_start), jnp.full(3, sigma_end), DURATION,
                                          degree=3, n_derivs=3))(ts)
    return q, sig


def _plot(ts, q, sig, res, const, out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = [dict(color="k", ls="-"), dict(color="r", ls="--"), dict(color="b", ls="-", marker="+", markevery=40)]
    files = []

    def save(fig, name):
        path = out / name
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        files.append(str(path))

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for i in range(3):
        ax[0].plot(ts, q[:, 0, i], label=f"joint {i + 1}", **styles[i])
    ax[0].set(xlabel="t [s]", ylabel="q_d [rad]", title="Fig. 1 (left): link position")
    ax[1].plot(ts, sig[:, 0, 0], "k")
    ax[1].set(xlabel="t [s]", ylabel="σ_d [N m/rad]", title="Fig. 1 (right): joint stiffness")
    ax[0].legend()
    save(fig, "fig1_references.png")
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for k, tau in enumerate((res.tau1, res.tau2)):
        for i in range(3):
            ax[k].plot(ts, tau[:, i], label=f"joint {i + 1}", **styles[i])
        ax[k].set(xlabel="t [s]", ylabel=f"τ_d{k + 1} [N m]", title=f"Fig. 2: motor torque τ_d{k + 1}")
    ax[0].legend()
    save(fig, "fig2_motor_torques.png")
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for i in range(3):
        ax.plot(ts, res.tau_e[:, 0, i], label=f"joint {i + 1}", **styles[i])
    ax.set(xlabel="t [s]", ylabel="τ_e [N m]", title="Fig. 3: total elastic torque τ_e1 + τ_e2")
    ax.legend()
    save(fig, "fig3_elastic_torque.png")
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for (sigma, r), st in zip(const.items(), (dict(color="k", ls="-"), dict(color="r", ls="--")), strict=True):
        ax[0].plot(ts, r.tau1[:, 0], label=f"σ = {sigma:g}", **st)
        ax[1].plot(ts, r.tau2[:, 0], label=f"σ = {sigma:g}", **st)
    ax[0].set(xlabel="t [s]", ylabel="τ_d1,1 [N m]", title="Fig. 4: joint 1, motor 1, constant σ")
    ax[1].set(xlabel="t [s]", ylabel="τ_d2,1 [N m]", title="Fig. 4: joint 1, motor 2, constant σ")
    ax[0].legend()
    save(fig, "fig4_constant_stiffness.png")
    return files


def run(t1: float | None = None, out_dir: str | os.PathLike | None = None, *, n_samples: int = 801,
        verify: bool = True) -> dict:
    """Run the scenario; write the four figures into ``out_dir`` (default ``kane_jax_out/vsa_3dof``).

    Arguments:
        t1: end of the computed horizon [s] (default the full ``T = 4`` s; shorter runs for tests).
        out_dir: folder for the PNGs (created); ``None`` → ``./kane_jax_out/vsa_3dof``.
        n_samples: time samples over ``[0, t1]`` for the inverse dynamics and the plots.
        verify: also simulate the full model open loop with the computed torques.

    Returns:
        Summary numbers: peak motor/elastic torques per case, the open-loop reproduction errors,
        timings, and the written files.
    """
    from ..compliant import simulate_vsa, vsa_inverse_dynamics, vsa_inverse_dynamics_trajectory, vsa_state
    from ..compliant.springs import task_map
    from ..models import vsa_3dof

    start = time.perf_counter()
    t1 = DURATION if t1 is None else float(t1)
    if not 0 < t1 <= 10 * DURATION:
        raise ValueError(f"`t1` must be in (0, {10 * DURATION}] s, got {t1!r}.")
    out = Path(out_dir) if out_dir is not None else Path("kane_jax_out") / NAME
    out.mkdir(parents=True, exist_ok=True)
    robot = vsa_3dof()
    ts = jnp.linspace(0.0, t1, n_samples)
    q, sig = references(ts, SIGMA_MIN, SIGMA_MAX)
    res = vsa_inverse_dynamics_trajectory(robot, q, sig)
    jax.block_until_ready(res.tau1)
    id_s = time.perf_counter() - start
    const = {}
    for sigma in (SIGMA_MIN, SIGMA_MAX):
        const[sigma] = vsa_inverse_dynamics_trajectory(robot, q, references(ts, sigma, sigma)[1])
    summary = {"name": NAME, "description": "VSA-NEA inverse dynamics of the 3-DoF robot of Buondonno & De Luca "
               "(2016), Table I", "id_wall_s": id_s, "n_samples": n_samples}
    for label, r in (("var", res), ("850", const[SIGMA_MIN]), ("1275", const[SIGMA_MAX])):
        summary[f"max_abs_tau1_{label}"] = float(jnp.max(jnp.abs(r.tau1)))
        summary[f"max_abs_tau2_{label}"] = float(jnp.max(jnp.abs(r.tau2)))
    summary["max_abs_tau_e"] = float(jnp.max(jnp.abs(res.tau_e[:, 0])))
    summary["tau_e_same_for_all_sigma"] = float(jnp.max(jnp.abs(const[SIGMA_MAX].tau_e - const[SIGMA_MIN].tau_e)))
    if verify:
        def controller(t, y):
            qd_t, s_t = references(t[None], SIGMA_MIN, SIGMA_MAX)
            phi = y[3:9].reshape(2, 3) - y[None, :3]  # current deflections warm-start Newton
            r = vsa_inverse_dynamics(robot, qd_t[0], s_t[0], phi_guess=phi, check=False)
            return r.tau1, r.tau2

        y0 = vsa_state(q[0, 0], res.theta[0], q[0, 1], res.theta_d[0])
        t_sim = time.perf_counter()
        ys, steps = simulate_vsa(robot, controller, y0, ts, rtol=1e-11, atol=1e-12)
        summary["sim_wall_s"] = time.perf_counter() - t_sim
        phis = ys[:, 3:9].reshape(-1, 2, 3) - ys[:, None, :3]
        sig_sim = jax.vmap(lambda p: task_map(robot.springs, p)[1])(phis)
        summary["sim_max_q_error_rad"] = float(jnp.max(jnp.abs(ys[:, :3] - q[:, 0])))
        summary["sim_max_sigma_error"] = float(jnp.max(jnp.abs(sig_sim - sig[:, 0])))
        summary["sim_steps"] = int(steps)
    summary["files"] = _plot(np.asarray(ts), np.asarray(q), np.asarray(sig), res, const, out)
    summary["wall_s"] = time.perf_counter() - start
    return summary
