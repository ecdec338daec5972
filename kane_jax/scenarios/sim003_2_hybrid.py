"""Paper ``003_…`` Simulation 2 (§7.2): hybrid arm — UR10e, tendon-driven Cosserat segment, LVP gripper.

The chain (11 coordinates, gravity along −z):

- the UR10e (:func:`~kane_jax.models.robots.ur10e`: Universal Robots' DH table, masses and centres
  of mass; controller inertias), joint angles ``q₁…q₆``, driven by joint motors;
- a Cosserat segment (GVS family, :class:`~kane_jax.bodies.cosserat.CosseratPCS`) with piecewise
  constant curvature and elongation, ``q = (κ_y, κ_z, v_x)`` (3 DoFs, as in the paper), fixed to
  the flange along the tool z axis and driven by three straight tendons 120° apart
  (:class:`~kane_jax.actuation.tendon.Tendon`, virtual work as in Renda et al. 2022);
- a soft gripper with LVP kinematics (:class:`~kane_jax.bodies.lvp.LVPBody`): a cavity primitive
  (radial change of the inner chamber) and an elongation primitive, both with mode ``φ = σ``
  which does not vanish at the distal end (Assumption 2 relaxed for the last body, as in the
  paper); incompressible Neo-Hookean stress (§6.2), one pressure input through the chamber volume
  (:class:`~kane_jax.actuation.pneumatic.PneumaticChambers`, ``Q = ∂V/∂q p``).

The three sub-tasks, in consecutive windows ``[0, T₁)``, ``[T₁, T₂)``, ``[T₂, T₃]``:

(i) rest-to-rest *cubic* joint trajectory of the UR10e under collocated partial feedback
    linearization (:class:`~kane_jax.control.CollocatedPFBL`, ``ë + K_d ė + K_p e = 0`` on the
    joints, soft bodies passive: zero tendon tension and pressure);
(ii) swing-up of the soft segment to a set-point by PD plus cancellation of gravity and elastic
    forces with one ID call (:class:`~kane_jax.control.PDCompensation`, paper's law), the arm held
    by the same PD;
(iii) gripper closing by a feed-forward (vacuum) pressure, ramped with a cubic over 0.2 s.

Values lost in our copy of the paper, chosen here as plausible: window ends ``T = (2, 4, 5.5)`` s;
UR10e from ``(0, −π/2, π/2, −π/2, −π/2, 0)`` to ``(π/4, −π/3, π/3, −π/2, −π/2, 0)`` rad (arm
over the table, flange down to flange level); PFBL gains ``K_p = 100``, ``K_d = 20`` (critically
damped, 10 rad/s); segment ``L = 0.3`` m, ``r = 0.02`` m, ``ρ = 1000`` kg/m³, ``E = 5`` MPa,
``ν = ½``, Kelvin–Voigt ``η = 2`` ms; tendons at 15 mm from the backbone; swing-up set-point
``κ_y = 4`` 1/m (a 69° bend), PD gains 4000 N/m, 60 N s/m (tendons) and the PFBL's on the joints;
gripper ``L = 0.06`` m, ``R = 0.025`` m, chamber radius 15 mm, ``ρ = 1100`` kg/m³, ``E = 0.3`` MPa,
``η = 5`` ms, pressure −30 kPa (the paper's sign convention is lost: a vacuum contracts the
chamber, closing the gripper's mouth). The gripper uses its smallest practical quadrature
(``order = 2``, one ring of four points: LVP bodies compile slowly); pass ``gripper_order`` etc.
for more. Gains and η keep the stiff axial mode of the segment within reach of an explicit solver
(Tsit5, rtol 1e-7): the tendon damping acts ``3 L²/d² ≈ 1200``× more strongly on elongation than
on bending.

The paper's law asks the tendons to *push* (tensions −128…+129 N: the PD acts on all three segment
coordinates through a square actuation matrix); by default they only pull
(:class:`~kane_jax.control.PullOnly` matching the two bending moments, the elongation taking the
compression). Measured runs: the README and ``docs/measurements.md``.
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..actuation._base import JointMotor
from ..actuation.pneumatic import PneumaticChambers
from ..actuation.tendon import Tendon
from ..algorithms.kinematics import forward_kinematics
from ..bodies.cosserat import CosseratPCS
from ..bodies.lvp import LVPBody
from ..bodies.lvp_primitives import Cavity, Stretch
from ..bodies.materials import NeoHookean
from ..chain import Chain
from ..control.pd_compensation import PDCompensation
from ..control.pfbl import CollocatedPFBL
from ..control.pull_only import PullOnly
from ..control.reference import CubicReference
from ..joints import Fixed
from ..models.robots import ur10e
from ..simulation.spectral import spectral_radius, stable_step
from ._common import check_finite, output_dir, timed_phases
from ._hybrid_plots import hybrid_plots

NAME = "003-sim2"
DESCRIPTION = "paper 003 Sim. 2: UR10e + tendon Cosserat segment + LVP gripper (PFBL, PD swing-up, pressure)"
WINDOWS = (2.0, 4.0, 5.5)  # ends of sub-tasks (i), (ii), (iii) [s]
Q_UR_START = (0.0, -np.pi / 2, np.pi / 2, -np.pi / 2, -np.pi / 2, 0.0)
Q_UR_END = (np.pi / 4, -np.pi / 3, np.pi / 3, -np.pi / 2, -np.pi / 2, 0.0)
Q_SOFT_GOAL = (4.0, 0.0, 0.0)  # (κ_y [1/m], κ_z [1/m], v_x [-])
SEGMENT = dict(length=0.3, radius=0.02, density=1000.0, youngs_modulus=5e6, damping=2e-3, tendon_offset=0.015)
GRIPPER = dict(length=0.06, radius=0.025, inner_radius=0.015, density=1100.0, youngs_modulus=1e5, viscosity=1e-3)
PRESSURE = -30e3  # [Pa], gauge
RAMP = 0.2  # [s]
# at an explicit solver's stability limit diffrax's integral controller cycles between accepted and rejected
# steps; the PI controller does not (Tsit5: 63,516 -> 52,567 steps, 2026-12-03, docs/architecture.md)
STEP_CONTROL = "pi"
# one solve per phase, each with the solver its steps need: Tsit5 (order 5) for the PFBL's smooth (i), whose steps
# are set by accuracy; for (ii)-(iii), held by the closed loop's -4.9e4 1/s mode, the stabilized fourth-order
# method (stability interval [-19.74, 0] for 8 evaluations a step, Tsit5 [-3.3, 0] for 6), its steps capped just
# below that limit (docs/architecture.md, "A stabilized explicit solver", "One solve per phase, steps below the limit")
SOLVERS = ("tsit5", "stabilized_rk4")


def _flange_to_x() -> jnp.ndarray:
    """Placement turning the segment's backbone (+x) onto the flange's tool axis (+z): ``R_y(−π/2)``."""
    return jnp.array([[0.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def _linear_mode(sigma):
    return jnp.stack([sigma])


def make_chain(*, gripper_order: int = 2, gripper_n_radial: int = 1, gripper_n_angular: int = 4,
               segment_order: int = 3) -> Chain:
    """The hybrid arm with all ten inputs: 6 joint motors, 3 tendon tensions [N], 1 pressure [Pa]."""
    seg = SEGMENT
    segment = CosseratPCS(seg["length"], seg["radius"], seg["density"], seg["youngs_modulus"], poisson_ratio=0.5,
                          damping=seg["damping"], strains=("bend_y", "bend_z", "stretch"), order=segment_order,
                          n_radial=1, n_angular=4)
    g = GRIPPER
    gripper = LVPBody([Cavity(1, modes=_linear_mode), Stretch(1)], g["length"], g["radius"], g["density"],
                      NeoHookean(g["youngs_modulus"], 0.5, g["viscosity"]), inner_radius=g["inner_radius"],
                      order=gripper_order, n_radial=gripper_n_radial, n_angular=gripper_n_angular)
    angles = 2 * np.pi * np.arange(3) / 3
    tendons = [Tendon(6, [(seg["tendon_offset"] * np.cos(a), seg["tendon_offset"] * np.sin(a))], order=4)
               for a in angles]
    arm = ur10e()
    modules = [*arm.modules, (Fixed(_flange_to_x()), segment), (Fixed(), gripper)]
    return Chain(modules, gravity=(0.0, 0.0, -9.81),
                 actuators=[JointMotor(range(6)), *tendons, PneumaticChambers(7, 1)])


def sub_chain(chain: Chain, n_actuators: int) -> Chain:
    """The same modules with only the first ``n_actuators`` actuators (controller models)."""
    return eqx.tree_at(lambda c: c.actuators, chain, chain.actuators[:n_actuators])


class HybridTask(eqx.Module):
    """The three sub-tasks as one feedback law ``u(t, q, q̇)`` of the full chain (10 inputs).

    ``t < T₁``: PFBL on the joints, tendons and pressure zero; ``t ≥ T₁``: PD + compensation on
    joints and tendons; ``t ≥ T₂``: plus the feed-forward pressure (cubic ramp over ``ramp``).
    With one law ``None`` it is the other one's phase alone (:meth:`phases`): ``pd = None`` the
    PFBL (sub-task (i)), ``pfbl = None`` the PD (sub-tasks (ii)–(iii)), without tracing the other's
    model terms.
    """

    pfbl: CollocatedPFBL | None
    pd: PDCompensation | None
    t_switch: jax.Array
    t_grip: jax.Array
    pressure: jax.Array
    ramp: jax.Array

    @property
    def jump_times(self) -> jax.Array | None:
        """``T₁``, where the law switches from the PFBL to the PD (``simulate``'s ``jump_ts``: adaptive
        steps end just before it and restart after it); None for one phase alone. The pressure ramp
        is continuous with its slope: no jump."""
        return None if self.pd is None or self.pfbl is None else self.t_switch[None]

    def phases(self) -> tuple[HybridTask, HybridTask]:
        """The law of ``[0, T₁)`` (the PFBL) and of ``[T₁, T₃]`` (the PD and the pressure), one solve each."""
        return (eqx.tree_at(lambda c: c.pd, self, None), eqx.tree_at(lambda c: c.pfbl, self, None))

    def __call__(self, t, q, qd):
        def pfbl():
            return jnp.concatenate([self.pfbl(t, q, qd), jnp.zeros(3, dtype=q.dtype)])

        # both laws, then a `where`: outside a `lax.cond`'s branches XLA merges the PFBL's model terms
        # with the FD's (docs/architecture.md, *Both laws, one merge*); one solve per phase evaluates one
        u = pfbl() if self.pd is None else self.pd(t, q, qd) if self.pfbl is None else \
            jnp.where(t < self.t_switch, pfbl(), self.pd(t, q, qd))
        s = jnp.clip((t - self.t_grip) / self.ramp, 0.0, 1.0)
        return jnp.concatenate([u, (self.pressure * s**2 * (3 - 2 * s))[None]])


def make_controller(chain: Chain, *, windows=WINDOWS, kp=100.0, kd=20.0, kp_tendon=4000.0, kd_tendon=60.0,
                    pressure=PRESSURE, ramp=RAMP, with_pd: bool = True) -> HybridTask:
    """The controller of the three sub-tasks for ``chain`` (from :func:`make_chain`).

    Arguments:
        chain: the hybrid arm. windows: ends ``(T₁, T₂, T₃)`` [s]. kp, kd: joint gains (PFBL and PD).
        kp_tendon [N/m], kd_tendon [N s/m]: PD gains on the tendon lengths. pressure [Pa], ramp [s]:
        the feed-forward of sub-task (iii). with_pd: False for horizons inside sub-task (i).

    Raises:
        ValueError: ``windows`` not increasing and positive; gains of the wrong shape or negative.
    """
    t1, t2, _ = (float(w) for w in windows)
    if not 0 < t1 < t2:
        raise ValueError(f"`windows` must be increasing positive times (T1, T2, T3), got {windows!r}.")
    ref = CubicReference(Q_UR_START, Q_UR_END, t1)
    pfbl = CollocatedPFBL(sub_chain(chain, 1), ref, kp=kp, kd=kd)
    goal = jnp.concatenate([jnp.asarray(Q_UR_END), jnp.asarray(Q_SOFT_GOAL), jnp.zeros(chain.nq - 9)])
    gains = lambda arm, tendon: jnp.concatenate([jnp.full(6, arm), jnp.full(3, tendon)])
    pd = None
    if with_pd:
        pd = PDCompensation(sub_chain(chain, 4), goal, kp=gains(kp, kp_tendon), kd=gains(kd, kd_tendon))
    return HybridTask(pfbl, pd, jnp.asarray(t1), jnp.asarray(t2), jnp.asarray(float(pressure)),
                      jnp.asarray(float(ramp)))


def gripper_closure(chain: Chain, q) -> jax.Array:
    """Closure of the gripper's mouth, ``1 − r(σ=1)/r_in`` (> 0 closing), with ``r² = r_in² + R² f(1)``."""
    body = chain.module(7)[1]
    a = q[..., chain.coordinate_slice(7)][..., 0]
    r2 = body.inner_radius**2 + body.radius**2 * a  # cavity field f(1) = a (mode φ = σ)
    return 1.0 - jnp.sqrt(jnp.maximum(r2, 0.0)) / body.inner_radius


def run(t1: float | None = None, out_dir=None, *, windows=WINDOWS, rtol: float = 1e-7, n_save: int = 221,
        gripper_order: int = 2, gripper_n_radial: int = 1, gripper_n_angular: int = 4, plots: bool = True,
        keep_trajectory: bool = False, pull_only: bool = True) -> dict:
    """Simulate the three sub-tasks up to ``t1`` (default ``T₃`` = 5.5 s) and write the plots: sub-task
    (i) in one solve, (ii)–(iii) in a second from its final state (:meth:`HybridTask.phases`).

    Arguments:
        t1: end time [s] (shorter runs stop inside sub-task (i) or (ii)); must be positive.
        out_dir: output folder (default ``./kane_jax_out/003-sim2``).
        windows: ends ``(T₁, T₂, T₃)`` [s] of the sub-tasks. rtol: solver tolerance (atol = rtol/10).
        n_save: saved samples. gripper_*: quadrature of the LVP gripper. plots: write the PNGs.
        keep_trajectory: add the :class:`~kane_jax.Trajectory` as ``"trajectory"``.
        pull_only: the tendons only pull (:class:`~kane_jax.control.PullOnly` re-allocates the PD's
            bending moments onto non-negative tensions, the elongation taking what the pulls
            give; motors and pressure as asked); False: the
            paper's law as it is, whose tensions may be negative. Sub-task (i) asks no tension.

    Returns:
        summary: timings (``wall_s``, ``compile_s``, ``run_s``, ``real_time_factor``), the PFBL
        tracking error of the joints in (i) (``max_joint_tracking_error_rad``), the segment's
        set-point error at the end of (ii), the final gripper closure, and the written ``files``.

    Raises:
        ValueError: non-positive ``t1`` or bad ``windows``.
    """
    wall = time.perf_counter()
    windows = tuple(float(w) for w in windows)
    if len(windows) != 3 or not 0 < windows[0] < windows[1] < windows[2]:
        raise ValueError(f"`windows` must be three increasing positive times, got {windows!r}.")
    t_end = windows[2] if t1 is None else float(t1)
    if not t_end > 0:
        raise ValueError(f"`t1` must be positive, got {t1!r}.")
    out = output_dir(out_dir, NAME)
    chain = make_chain(gripper_order=gripper_order, gripper_n_radial=gripper_n_radial,
                       gripper_n_angular=gripper_n_angular)
    ctrl = make_controller(chain, windows=windows, with_pd=t_end > windows[0])
    q0 = jnp.zeros(chain.nq).at[:6].set(jnp.asarray(Q_UR_START))
    first, second = ctrl.phases() if t_end > windows[0] else (ctrl, None)
    # sub-task (i) alone, or each phase in its own solve; the tendons match the PD's bending moments,
    # the elongation takes what their pulls give
    law = PullOnly(second, chain, pulling=(6, 7, 8), match=(6, 7)) if pull_only and second is not None else second
    k = max(1, round((n_save - 1) * windows[0] / t_end))  # saves in (i), the rest after T₁

    def after_t1(t, q, qd):  # the steps just below the closed loop's stability limit (its -4.9e4 1/s mode)
        radius = spectral_radius(chain, q, qd, t=t, control=law)
        return dict(control=law, n_save=max(2, n_save - k), solver=SOLVERS[1], max_step=stable_step(SOLVERS[1], radius))

    phases = [(t_end, dict(control=first, n_save=n_save, solver=SOLVERS[0]))] if second is None else \
        [(windows[0], dict(control=first, n_save=k + 1, solver=SOLVERS[0])), (t_end, after_t1)]
    traj, info = timed_phases(chain, q0, jnp.zeros(chain.nq), phases, rtol=rtol, atol=rtol / 10,
                              step_control=STEP_CONTROL)
    check_finite(traj, NAME)
    ts, qs = np.asarray(traj.ts), np.asarray(traj.q)
    q_ref = np.asarray(jax.vmap(lambda t: ctrl.pfbl.reference(t)[0])(traj.ts))
    phase1 = ts < windows[0]
    summary = {"name": NAME, "description": DESCRIPTION, **info, "nq": chain.nq, "nu": chain.nu,
               "pull_only": pull_only,
               "max_joint_tracking_error_rad": float(np.max(np.abs(qs[phase1, :6] - q_ref[phase1]))),
               "final_joint_error_rad": float(np.max(np.abs(qs[-1, :6] - q_ref[-1])))}
    if t_end >= windows[1]:
        k = int(np.searchsorted(ts, windows[1]))
        summary["segment_setpoint_error_at_T2"] = float(np.max(np.abs(qs[k, 6:9] - np.asarray(Q_SOFT_GOAL))))
        summary["max_tendon_tension_N"] = float(np.max(np.asarray(traj.u)[:, 6:9]))
        summary["min_tendon_tension_N"] = float(np.min(np.asarray(traj.u)[:, 6:9]))
    closure = np.asarray(gripper_closure(chain, traj.q))
    summary["final_gripper_closure"] = float(closure[-1])
    summary["final_tip_m"] = [float(x) for x in np.asarray(forward_kinematics(chain, traj.q[-1]))[-1, :3, 3]]
    summary["files"] = hybrid_plots(chain, traj, q_ref, closure, windows, Q_SOFT_GOAL, out) if plots else []
    if keep_trajectory:
        summary["trajectory"] = traj
    summary["wall_s"] = time.perf_counter() - wall
    return summary
