"""Demo: a hybrid rigid–soft arm swinging up under gravity (what ``kane-jax demo`` runs).

A motor-driven rigid link (revolute joint about z, 0.3 m, 0.5 kg) carries two visco-elastic soft
segments with constant curvature (:class:`~kane_jax.PlanarConstantCurvature`,
L = 0.2 m, r = 0.02 m, ρ = 1062 kg/m³, E = 1 MPa, Kelvin–Voigt time 0.05 s). The arm starts
hanging straight down at rest; a PD law with gravity feed-forward on the rigid joint,
``u = k_p (θ_goal(t) − θ) − k_d θ̇``, drives the link from −90° to +30° along a smooth ramp in
1.5 s, and the soft segments bend, whip and settle. Planar motion in the x–y plane,
gravity along −y. Integrated with Tsit5 (adaptive, rtol 1e-6) in float64.

Writes: the configuration/input trajectories, a stroboscopic plot and a GIF animation.
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..actuation._base import JointMotor
from ..algorithms.kinematics import tip_pose
from ..bodies.constant_curvature import PlanarConstantCurvature
from ..bodies.rigid import RigidBody
from ..chain import Chain
from ..joints import Fixed, Revolute
from ..simulation import plotting
from ._common import check_finite, output_dir, timed_simulate

NAME = "demo"
DESCRIPTION = "hybrid arm: PD-driven rigid link + two soft constant-curvature segments swinging up under gravity"
T1 = 3.0


def make_chain() -> Chain:
    """The hybrid arm: revolute rigid link + two identical soft constant-curvature segments."""
    tip = np.eye(4)
    tip[0, 3] = 0.3  # host arrays: building the chain compiles no eager programs
    link = RigidBody(0.5, com=(0.15, 0.0, 0.0), inertia=np.diag([1e-4, 3.8e-3, 3.8e-3]), tip=tip)
    soft = PlanarConstantCurvature(0.2, 0.02, 1062.0, 1.0e6, 0.05, order=4, n_radial=1, n_angular=4)
    return Chain([(Revolute((0.0, 0.0, 1.0)), link), (Fixed(), soft), (Fixed(), soft)],
                 gravity=(0.0, -9.81, 0.0), actuators=[JointMotor([0])])


class SwingUp(eqx.Module):
    """PD law on the motor with a smooth (cosine) ramp of the goal angle (array fields: traced, so a
    new instance with other gains does not recompile, and ``jax.grad`` reaches the gains)."""

    start: jax.Array
    goal: jax.Array
    duration: jax.Array
    kp: jax.Array
    kd: jax.Array

    def __init__(self, start=-np.pi / 2, goal=np.pi / 6, duration=1.5, kp=60.0, kd=6.0):
        self.start, self.goal, self.duration, self.kp, self.kd = (jnp.asarray(x, dtype=float) for x in
                                                                  (start, goal, duration, kp, kd))

    def __call__(self, t, q, qd):
        s = jnp.clip(t / self.duration, 0.0, 1.0)
        goal = self.start + (self.goal - self.start) * 0.5 * (1.0 - jnp.cos(jnp.pi * s))
        return jnp.stack([self.kp * (goal - q[0]) - self.kd * qd[0]])


def run(t1: float | None = None, out_dir=None, *, animation: bool = True) -> dict:
    """Simulate the swing-up for ``t1`` seconds (default 3) and write the plots.

    Returns:
        summary: wall/compile/run time, real-time factor, final tip position, files.
    """
    wall = time.perf_counter()
    t1 = T1 if t1 is None else float(t1)
    out = output_dir(out_dir, NAME)
    chain = make_chain()
    q0 = jnp.zeros(chain.nq).at[0].set(-np.pi / 2)
    traj, info = timed_simulate(chain, q0, jnp.zeros(chain.nq), t1, control=SwingUp(), n_save=151)
    check_finite(traj, NAME)
    labels = ["θ link [rad]", "θ₁ bend [rad]", "θ₂ bend [rad]"]
    files = [out / "demo_configuration.png", out / "demo_stroboscopic.png"]
    plt = plotting._pyplot()
    plt.close(plotting.plot_configuration(traj.ts, traj.q, labels=labels, u=traj.u, u_labels=["motor torque [N m]"],
                                          title="hybrid arm: configuration", path=files[0]))
    plt.close(plotting.plot_stroboscopic(chain, traj.q, n_frames=12, plane="xy", title="hybrid arm swing-up",
                                         path=files[1]))
    if animation:
        files.append(out / "demo.gif")
        plotting.animate(chain, traj.ts, traj.q, files[-1], fps=20, max_frames=46, plane="xy", title="hybrid arm")
    tip = np.asarray(tip_pose(chain, traj.q[-1]))[:3, 3]
    return {
        "name": NAME, "description": DESCRIPTION, **info, "wall_s": time.perf_counter() - wall,
        "nq": chain.nq, "final_link_angle_rad": float(traj.q[-1, 0]), "tip_x_m": float(tip[0]),
        "tip_y_m": float(tip[1]), "files": [str(f) for f in files],
    }
