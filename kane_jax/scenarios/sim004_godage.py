"""Paper ``004_…`` (Godage, Webster, Walker): three-section variable-length continuum arm, step pressures.

The prototype's parameters from the paper: three sections of unactuated length ``L = 0.15 m``,
actuator distance ``r = 0.0125 m``, mass ``0.1 kg`` each, actuator (PMA) area
``A = 2.2e-4 m²`` with ``τ = P A``; the arm hangs from its base (backbone along −z, gravity
−z). Bodies: :class:`~kane_jax.bodies.godage.GodageSection` (exact, singularity-free arcs instead
of the paper's Taylor polynomials), inputs by :class:`~kane_jax.actuation.godage.GodagePressureActuator`.

The paper identified the actuator stiffness ``K_e`` and damping ``D`` experimentally and does not
print them; chosen here: ``K_e = 4000 N/m`` per actuator (600 kPa → 132 N → about 3 cm of
extension, the prototype's range) and ``D = 4 N s/m`` (step responses settling within about a
second, as in the paper's Figs. 6–8; larger D makes the light bending coordinates stiff for an
explicit solver: the fastest eigenvalue is about −D/m_eff).

The three step-pressure experiments (paper §V):

1. 600, 500, 500 kPa on ``l33``, ``l22``, ``l11`` at t = 0, 3.2, 7.55 s (10 s simulated; the
   paper: 6.69× faster than real time);
2. 300 and 500 kPa on ``l23`` and ``l33`` at t = 0 and 3.3 s (7 s; paper 7.8×);
3. 500, 300, 300 kPa on ``l33``, ``l23``, ``l11`` at t = 0, 2.55, 5.05 s (7.9 s; paper 7.3×).

``l_ij`` is actuator ``j`` of section ``i``. The real-time factor reported is simulated time over
the integration's wall time (compile excluded), on this machine's CPU, float64, Tsit5 with
rtol 1e-6; the paper's ran MATLAB/Simulink ode15s on an i7-4910MQ.
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..algorithms.kinematics import forward_kinematics
from ..models.godage import godage_arm
from ..simulation import plotting
from ._common import check_finite, output_dir, timed_simulate

NAME = "004-godage"
DESCRIPTION = "paper 004: Godage three-section arm (L=0.15 m, r=0.0125 m, 0.1 kg), three step-pressure experiments"
PAPER_RTF = {1: 6.69, 2: 7.8, 3: 7.3}
# (input index = 3 (section − 1) + (actuator − 1), pressure [Pa], switch-on time [s]); duration [s]
EXPERIMENTS = {
    1: ([(8, 600e3, 0.0), (4, 500e3, 3.2), (0, 500e3, 7.55)], 10.0),
    2: ([(5, 300e3, 0.0), (8, 500e3, 3.3)], 7.0),
    3: ([(8, 500e3, 0.0), (5, 300e3, 2.55), (0, 300e3, 5.05)], 7.9),
}


class StepPressures(eqx.Module):
    """``u(t) = Σ_k P_k e_{i_k} H(t − t_k)``: pressures switched on and held (arrays, so one compile
    serves every experiment)."""

    pressures: jax.Array  # (n_steps, nu)
    times: jax.Array  # (n_steps,)

    def __call__(self, t):
        return jnp.sum(jnp.where((t >= self.times)[:, None], self.pressures, 0.0), axis=0)


def step_pressures(steps, nu: int = 9, n_max: int = 3) -> StepPressures:
    pressures = np.zeros((n_max, nu))
    times = np.full(n_max, np.inf)
    for k, (i, p, t) in enumerate(steps):
        pressures[k, i] = p
        times[k] = t
    return StepPressures(jnp.asarray(pressures), jnp.asarray(times))


def make_chain(stiffness=4000.0, damping=4.0):
    """The paper's prototype hanging down (backbone along −z)."""
    base = jnp.array([[0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    return godage_arm(3, length=0.15, radius=0.0125, mass=0.1, stiffness=stiffness, damping=damping, base=base,
                      gravity=(0.0, 0.0, -9.81), area=2.2e-4, order=4, n_radial=1, n_angular=3)


def run(t1: float | None = None, out_dir=None, *, experiments=(1, 2, 3)) -> dict:
    """Run the step-pressure experiments; ``t1`` (if given) shortens every experiment to ``t1`` s.

    Returns:
        summary with each experiment's run time and real-time factor next to the paper's.
    """
    wall = time.perf_counter()
    out = output_dir(out_dir, NAME)
    chain = make_chain()
    q0 = jnp.zeros(chain.nq)
    summary = {"name": NAME, "description": DESCRIPTION}
    files = []
    plt = plotting._pyplot()
    total_sim = total_run = 0.0
    total_steps = 0
    compile_s = None
    for e in experiments:
        steps, duration = EXPERIMENTS[e]
        horizon = duration if t1 is None else min(float(t1), duration)
        traj, info = timed_simulate(chain, q0, q0, horizon, control=step_pressures(steps), n_save=201)
        check_finite(traj, f"{NAME} experiment {e}")
        compile_s = info["compile_s"] if compile_s is None else compile_s
        total_sim += info["sim_time_s"]
        total_run += info["run_s"]
        total_steps += info["steps"]
        summary[f"exp{e}_sim_s"] = info["sim_time_s"]
        summary[f"exp{e}_run_s"] = info["run_s"]
        summary[f"exp{e}_real_time_factor"] = info["real_time_factor"]
        summary[f"exp{e}_paper_real_time_factor"] = PAPER_RTF[e]
        tips = np.asarray(jax.vmap(lambda q: forward_kinematics(chain, q)[:, :3, 3])(traj.q))  # (T, 3, 3)
        fig, axs = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
        for i in range(3):
            for k, (lab, col) in enumerate(zip("XYZ", ("tab:blue", "black", "tab:red"), strict=True)):
                axs[i].plot(traj.ts, tips[:, i, k], color=col, label=lab)
            axs[i].set_ylabel(f"section {i + 1} tip [m]")
            axs[i].grid(True, alpha=0.3)
        axs[0].legend(ncol=3, fontsize=8)
        axs[0].set_title(f"experiment {e}: section tip coordinates")
        axs[-1].set_xlabel("t [s]")
        fig.tight_layout()
        path = out / f"godage_exp{e}_tips.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
        labels = [f"l{i + 1}{j + 1}" for i in range(3) for j in range(3)]
        path = out / f"godage_exp{e}_configuration.png"
        plt.close(plotting.plot_configuration(traj.ts, traj.q, labels=labels, u=traj.u / 1e3,
                                              u_labels=[f"P{s} [kPa]" for s in labels], ylabel="l [m]",
                                              title=f"experiment {e}: actuator length changes", path=path))
        files.append(path)
        path = out / f"godage_exp{e}_stroboscopic.png"
        plt.close(plotting.plot_stroboscopic(chain, traj.q, n_frames=10, dims=3, title=f"Godage arm, experiment {e}",
                                             path=path))
        files.append(path)
        summary[f"exp{e}_final_tip_m"] = [float(x) for x in tips[-1, 2]]
    summary.update(compile_s=compile_s, run_s=total_run, sim_time_s=total_sim,
                   real_time_factor=total_sim / total_run, steps=total_steps, wall_s=time.perf_counter() - wall,
                   files=[str(f) for f in files])
    return summary
