"""Paper ``000_…`` Simulation 1: planar PCC arm with variable radius and six pneumatic chambers.

Three :class:`~kane_jax.bodies.variable_radius.VariableRadiusPCC` bodies (four DoF each: bending
angle, elongation and the radius changes of the two chambers), rest length 0.2 m, radius 0.02 m,
density 1062 kg/m³, E = 1.06 MPa, Kelvin–Voigt η = 0.1 s, chamber wall distance 0.004 m (the
paper's values; ν = 0.45 instead of the paper's 0.5, which makes the linear model's λ infinite).
Each body's two chambers are :class:`~kane_jax.actuation.PneumaticChambers` (``Q_a = ∇V(q)ᵀ u``,
eq. 57). The base is rotated so that the straight arm hangs along gravity (−y; bending in the
x–y plane). From rest at ``q = 0`` under the constant input ``u = (2, 0, 0, 2, 1, 0.4) MPa``.

Not given by the paper and chosen here: the simulated time (default 2 s) and a smaller quadrature
than the body's default (5 nodes along the arc, 2 rings × 6 angles; chambers 5 × 3 × 3).

The system is stiff: the Kelvin–Voigt damping of the radius and elongation modes puts eigenvalues
of the linearized dynamics at q = 0 near −8.4e6 1/s (measured), so an explicit solver would need
steps below 1e-6 s (:func:`kane_jax.simulation.stiffness` finds ``|λ| = 8.39e6`` 1/s, so
``simulate``'s ``"auto"`` picks the Rosenbrock–W solver). The scenario names it:
:class:`~kane_jax.simulation.rosenbrock.Ros34PW2` (``"ros34pw2"``, the chain's structured Jacobian
``[[0, I], [−M⁻¹K, −M⁻¹D]]``, one ``12 × 12`` LU per stage) at ``rtol = 1e-5``, ``atol = 1e-7``.
It replaced :class:`diffrax.Kvaerno5` with a dense autodiff Jacobian of the forward dynamics
(≈ 210 s of compilation, 23 s for 0.5 s simulated, against ≈ 29 s and ≈ 1 s). At the end the
state is compared with the Newton equilibrium under the same pressures
(:func:`kane_jax.statics.equilibrium`).
"""

from __future__ import annotations

import time

import jax.numpy as jnp
import numpy as np

from ..actuation.pneumatic import PneumaticChambers
from ..bodies.variable_radius import VariableRadiusPCC
from ..chain import Chain
from ..joints import Fixed
from ..simulation import plotting
from ..statics import equilibrium
from ._common import check_finite, output_dir, timed_simulate

NAME = "000-sim1"
DESCRIPTION = "paper 000 Sim. 1: variable-radius PCC arm, six chambers, u = (2, 0, 0, 2, 1, 0.4) MPa"
T1 = 2.0
RTOL, ATOL = 1e-5, 1e-7
U = jnp.array([2.0, 0.0, 0.0, 2.0, 1.0, 0.4]) * 1e6


def make_chain() -> Chain:
    body = VariableRadiusPCC(0.2, 0.02, 1062.0, chamber_offset=0.004, order=5, n_radial=2, n_angular=6,
                             chamber_order=5, chamber_across=3, chamber_along=3)
    down = jnp.array([[0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    modules = [(Fixed(down), body), (Fixed(), body), (Fixed(), body)]
    return Chain(modules, gravity=(0.0, -9.81, 0.0), actuators=[PneumaticChambers(i, 2) for i in range(3)])


def run(t1: float | None = None, out_dir=None) -> dict:
    """Simulate ``t1`` seconds (default 2) and write strain/radius trajectories and a stroboscopic plot."""
    wall = time.perf_counter()
    t1 = T1 if t1 is None else float(t1)
    out = output_dir(out_dir, NAME)
    chain = make_chain()
    z = jnp.zeros(chain.nq)
    traj, info = timed_simulate(chain, z, z, t1, control=U, n_save=201, solver="ros34pw2", rtol=RTOL, atol=ATOL)
    check_finite(traj, NAME)
    # residual forces stall at ≈ 4e-12 (round-off of the MPa-scale pressure forces): atol 1e-9 on them
    # the tangent stiffness by differences: the same root, half the compile (`kj.equilibrium`)
    eq = equilibrium(chain, U, traj.q[-1], rtol=1e-10, atol=1e-9, max_steps=100, throw=False, jacobian="differences")
    q = np.asarray(traj.q).reshape(-1, 3, 4)
    plt = plotting._pyplot()
    fig, axs = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for i in range(3):
        axs[0].plot(traj.ts, q[:, i, 0], label=f"θ{i + 1} [rad]")
        axs[0].plot(traj.ts, q[:, i, 1] / 0.2, "--", label=f"δL{i + 1}/L0")
        axs[1].plot(traj.ts, q[:, i, 2] * 1e3, label=f"δR{i + 1},1 [mm]")
        axs[1].plot(traj.ts, q[:, i, 3] * 1e3, "--", label=f"δR{i + 1},2 [mm]")
    axs[0].set_title("(a) strain variables")
    axs[1].set_title("(b) radius variables")
    for ax in axs:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    axs[1].set_xlabel("t [s]")
    fig.tight_layout()
    files = [out / "sim1_strain_radius.png", out / "sim1_stroboscopic.png"]
    fig.savefig(files[0], dpi=110)
    plt.close(fig)
    plt.close(plotting.plot_stroboscopic(chain, traj.q, n_frames=12, plane="xy",
                                         title="variable-radius PCC, six chambers", path=files[1]))
    return {"name": NAME, "description": DESCRIPTION, **info, "wall_s": time.perf_counter() - wall,
            "final_bending_rad": [float(x) for x in q[-1, :, 0]],
            "final_radius_change_mm": [float(x) * 1e3 for x in q[-1, :, 2:].ravel()],
            "final_q": np.asarray(traj.q[-1]).tolist(), "equilibrium_q": np.asarray(eq.q).tolist(),
            "equilibrium_converged": bool(eq.success), "equilibrium_residual": float(jnp.max(jnp.abs(eq.residual))),
            "distance_to_equilibrium": float(jnp.max(jnp.abs(traj.q[-1] - eq.q))),
            "final_speed": float(jnp.max(jnp.abs(traj.qd[-1]))),
            "files": [str(f) for f in files]}
