"""The plots of paper ``003_…`` Simulation 2 (:mod:`kane_jax.scenarios.sim003_2_hybrid`)."""

from __future__ import annotations

import numpy as np

from ..simulation import plotting


def hybrid_plots(chain, traj, q_ref, closure, windows, goal, out) -> list[str]:
    """The joints against their reference, the soft coordinates against the set-point ``goal``, the inputs,
    the pressure and the gripper's closure, and a stroboscopic view; returns the written files."""
    plt = plotting._pyplot()
    ts, qs, us = np.asarray(traj.ts), np.asarray(traj.q), np.asarray(traj.u)
    fig, axs = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    for i in range(6):
        line, = axs[0, 0].plot(ts, qs[:, i], lw=1.4, label=f"q{i + 1}")
        axs[0, 0].plot(ts, q_ref[:, i], ls="--", lw=1.0, color=line.get_color())
    axs[0, 0].set(ylabel="UR10e joints [rad]", title="(i) joints (solid) vs cubic reference (dashed)")
    for i, lab in enumerate(("κ_y [1/m]", "κ_z [1/m]", "10·v_x [-]")):
        scale = 10.0 if i == 2 else 1.0
        line, = axs[0, 1].plot(ts, scale * qs[:, 6 + i], lw=1.4, label=lab)
        axs[0, 1].axhline(scale * goal[i], ls="--", lw=1.0, color=line.get_color())
    axs[0, 1].plot(ts, qs[:, 9], lw=1.4, label="cavity a")
    axs[0, 1].plot(ts, qs[:, 10], lw=1.4, label="stretch a")
    axs[0, 1].set(ylabel="soft coordinates", title="(ii) segment vs set-point, (iii) gripper")
    for i in range(6):
        axs[1, 0].plot(ts, us[:, i], lw=1.2, label=f"τ{i + 1} [N m]")
    for i in range(3):
        axs[1, 0].plot(ts, us[:, 6 + i], lw=1.2, ls=":", label=f"T{i + 1} [N]")
    axs[1, 0].set(xlabel="t [s]", ylabel="inputs", title="joint torques and tendon tensions")
    axs[1, 1].plot(ts, us[:, 9] / 1e3, "k", lw=1.2, label="pressure [kPa]")
    axs[1, 1].plot(ts, 100 * closure, "tab:red", lw=1.4, label="mouth closure [%]")
    axs[1, 1].set(xlabel="t [s]", title="(iii) feed-forward pressure and gripper closure")
    for ax in axs.ravel():
        for w in windows[:2]:
            ax.axvline(w, color="0.6", lw=0.8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    files = [out / "sim2_trajectories.png", out / "sim2_stroboscopic.png"]
    fig.savefig(files[0], dpi=110)
    plt.close(fig)
    plt.close(plotting.plot_stroboscopic(chain, qs, n_frames=12, dims=3, title="hybrid arm: UR10e + segment + gripper",
                                         path=files[1]))
    return [str(f) for f in files]
