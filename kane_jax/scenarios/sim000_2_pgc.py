"""Paper ``000_…`` Simulation 2: two conical PGC bodies in free evolution, tip up, settling under gravity.

A tentacle-like arm of two conical :class:`~kane_jax.CosseratGVS` bodies (Geometric Variable Strain
kinematics, 4th-order Magnus steps) with the Piecewise Gaussian Curvature basis with elongation
(:class:`~kane_jax.PiecewiseGaussianCurvature`, five coordinates per body: the constant and
Gaussian bending amplitudes in the two planes and the length change; paper ``000_…`` §VI-B).
The paper's values: base/tip radius 0.01/0.005 m (body 1) and 0.005/0.002 m (body 2), rest length
0.2 m, ρ = 1070 kg/m³, ν = 0.4, Kelvin–Voigt η = 0.01 s (``D = η K``), the Gaussian as printed
(unit width in metres). The base is rotated so that the stress-free arm points up (+z), against
gravity (−z). No input: ``q̈ = −M⁻¹ ID(q, q̇, 0)`` (eq. 56).

Chosen here, because the text lost or contradicts them:

- Young's modulus ``E = 5 MPa`` instead of the printed 0.666 GPa, which contradicts the printed
  η and the described transient. Linearized about the upright rest shape (eigenvalues of the
  state matrix, measured with this model): with 0.666 GPa every mode is over-damped, the slowest
  decays at 1/η = 100 1/s, so the arm would stand almost undeflected and settle in ≈ 0.05 s;
  with 0.666 MPa the upright shape buckles under the arm's own weight (eigenvalue +5.5 1/s) and
  the arm folds down and still swings after 6 s. With 5 MPa the upright shape is stable, the
  first bending pair is ≈ −0.84 ± 10.8i 1/s (``η ω²/2`` decay), so the swing decays to ≈ 1.5 %
  in 5 s: the paper's "transient of approximately 5 s". ``youngs_modulus=`` overrides it.
- The initial configuration (lost in the text): at rest, each body bent by
  ``q = (0.2, 0, 0.1, 0, 0)`` (constant curvature in both planes), so the motion is spatial.
- Quadrature: 4 Gauss nodes along each body, 1 ring × 3 angles on the section (options).
- Simulated time 6 s at rtol 1e-6 with the Rosenbrock–W solver ``"ros34pw2"`` (the fastest mode,
  the damped stretch at ≈ −1.0e4 1/s, bounds an explicit step to ≈ 0.3 ms: Tsit5 takes 22,058 steps;
  Kvaerno5 with its dense Jacobian compiled and ran slower than Tsit5).
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from ..algorithms.kinematics import forward_kinematics, tip_jacobian
from ..bodies.cosserat import CosseratGVS
from ..bodies.strain_bases import PiecewiseGaussianCurvature
from ..chain import Chain
from ..joints import Fixed
from ..simulation import plotting
from ._common import check_finite, output_dir, timed_simulate

NAME = "000-sim2"
DESCRIPTION = "paper 000 Sim. 2: two conical PGC bodies (GVS) in free evolution, tip up, settling under gravity"
T1 = 6.0
LENGTH = 0.2
RADII = ((0.01, 0.005), (0.005, 0.002))  # (base, tip) radius of bodies 1 and 2 [m]
Q0_BODY = (0.2, 0.0, 0.1, 0.0, 0.0)
UP = ((0.0, 0.0, -1.0, 0.0), (0.0, 1.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))  # backbone +x → +z
LABELS = ("q1 bend (const)", "q2 bend (Gauss)", "q3 bend (const)", "q4 bend (Gauss)", "q5 δL [m]")


def make_chain(*, youngs_modulus: float = 5e6, damping: float = 0.01, order: int = 4, n_radial: int = 1,
               n_angular: int = 3) -> Chain:
    """The two-body conical PGC arm pointing up (paper ``000_…`` §VI-B).

    Arguments:
        youngs_modulus: ``E`` [Pa] of both bodies (default 5 MPa, see the module docstring).
        damping: Kelvin–Voigt time ``η`` [s] (``D = η K``; default 0.01, the paper's).
        order, n_radial, n_angular: Gauss nodes along each body and the section rule.

    Returns:
        the :class:`~kane_jax.Chain` (10 coordinates, gravity −z, no actuators).

    Raises:
        ValueError: non-positive modulus, negative damping or quadrature counts that are not positive ints.
    """
    order = _checks.count(order, "order")
    n_angular = _checks.count(n_angular, "n_angular")
    n_radial = _checks.count(n_radial, "n_radial", minimum=0)
    basis = PiecewiseGaussianCurvature(LENGTH)
    bodies = [CosseratGVS(LENGTH, r0, 1070.0, youngs_modulus, basis=basis, tip_radius=r1, poisson_ratio=0.4,
                          damping=damping, order=order, n_radial=n_radial, n_angular=n_angular)
              for r0, r1 in RADII]
    return Chain([(Fixed(jnp.asarray(UP)), bodies[0]), (Fixed(), bodies[1])], gravity=(0.0, 0.0, -9.81))


def initial_state(chain: Chain, q0=None) -> tuple[jax.Array, jax.Array]:
    """``(q0, q̇0)``: ``q0`` given (shape ``(10,)``) or each body at ``Q0_BODY``; at rest."""
    q = jnp.tile(jnp.asarray(Q0_BODY), 2) if q0 is None else chain.check_state(jnp.asarray(q0, dtype=float), "q0")
    return q, jnp.zeros_like(q)


@eqx.filter_jit
def _tip_motion(chain: Chain, qs, qd_last):
    """World tip positions ``(T, 3)`` along ``qs`` and the tip velocity ``J_p q̇`` at the last sample."""
    tips = jax.vmap(lambda x: forward_kinematics(chain, x)[-1, :3, 3])(qs)
    return tips, tip_jacobian(chain, qs[-1])[:3] @ qd_last


def _plot_configuration(path, ts, q):
    plt = plotting._pyplot()
    fig, axs = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for i, ax in enumerate(axs):
        for j in range(4):
            ax.plot(ts, q[:, i, j], label=LABELS[j] + " [rad]")
        ax.plot(ts, q[:, i, 4] * 10, "--", label="10 × " + LABELS[4])
        ax.set_title(f"({'ab'[i]}) body {i + 1} configuration")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    axs[-1].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_tip(path, ts, tips):
    plt = plotting._pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for k, lab in enumerate("xyz"):
        ax.plot(ts, tips[:, k], label=f"tip {lab} [m]")
    ax.set_xlabel("t [s]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("tip position")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(t1: float | None = None, out_dir=None, *, youngs_modulus: float = 5e6, damping: float = 0.01,
        q0=None, order: int = 4, n_radial: int = 1, n_angular: int = 3, solver="ros34pw2", rtol: float = 1e-6,
        atol: float = 1e-8, n_save: int = 301, return_trajectory: bool = False) -> dict:
    """Simulate the free evolution for ``t1`` seconds (default 6) and write the plots.

    Arguments:
        t1: simulated time [s]. out_dir: output folder (default ``./kane_jax_out/000-sim2``).
        youngs_modulus, damping, order, n_radial, n_angular: see :func:`make_chain`.
        q0: initial configuration ``(10,)`` (default: each body at ``Q0_BODY``), at rest.
        solver, rtol, atol: as in :func:`~kane_jax.simulate`; default ``"ros34pw2"`` (the stretch
            modes put |λ| = 1.02e4 1/s at the initial state: Tsit5 needs 22,058 steps for 6 s, the
            Rosenbrock–W solver 5,639, 4.5× less run time, measured 2026-11-24). n_save: saved
            samples (>= 2).
        return_trajectory: also return the chain and the :class:`~kane_jax.Trajectory`
            (keys ``"chain"``, ``"trajectory"``).

    Returns:
        summary: compile/run/wall time, real-time factor, steps, initial and final tip position [m],
        final tip speed [m/s], final velocity norm ``|q̇(t1)|`` (modal rates: the printed
        Gaussian is nearly constant, so ``q₁ ≈ −q₂`` combinations are large), final
        configuration ``final_q``, the last time the tip was more than 1 mm from its final
        position (``settling_time_1mm_s``), and the PNG files.

    Raises:
        ValueError: non-positive ``t1``, bad ``q0`` shape or model options (see :func:`make_chain`).
    """
    wall = time.perf_counter()
    t1 = T1 if t1 is None else float(_checks.as_float_array(t1, "t1", ()))
    if not t1 > 0:
        raise ValueError(f"`t1` must be a positive time [s], got {t1}.")
    n_save = _checks.count(n_save, "n_save", minimum=2)
    out = output_dir(out_dir, NAME)
    chain = make_chain(youngs_modulus=youngs_modulus, damping=damping, order=order, n_radial=n_radial,
                       n_angular=n_angular)
    q_init, qd_init = initial_state(chain, q0)
    traj, info = timed_simulate(chain, q_init, qd_init, t1, solver=solver, rtol=rtol, atol=atol,
                                n_save=n_save)
    check_finite(traj, NAME)
    ts = np.asarray(traj.ts)
    q = np.asarray(traj.q)
    tips, tip_velocity = (np.asarray(x) for x in _tip_motion(chain, traj.q, traj.qd[-1]))
    far = np.flatnonzero(np.linalg.norm(tips - tips[-1], axis=1) > 1e-3)
    files = [out / "sim2_configuration.png", out / "sim2_tip.png", out / "sim2_stroboscopic.png"]
    _plot_configuration(files[0], ts, q.reshape(-1, 2, 5))
    _plot_tip(files[1], ts, tips)
    plt = plotting._pyplot()
    plt.close(plotting.plot_stroboscopic(chain, traj.q, n_frames=14, dims=3, title="PGC arm, free evolution",
                                         path=files[2]))
    summary = {"name": NAME, "description": DESCRIPTION, **info, "wall_s": time.perf_counter() - wall,
            "nq": chain.nq, "youngs_modulus_pa": float(youngs_modulus),
            "initial_tip_m": [float(x) for x in tips[0]], "final_tip_m": [float(x) for x in tips[-1]],
            "final_tip_speed_m_s": float(np.linalg.norm(tip_velocity)),
            "final_velocity_norm": float(np.linalg.norm(np.asarray(traj.qd[-1]))),
            "settling_time_1mm_s": float(ts[far[-1] + 1]) if far.size else 0.0,
            "final_q": [float(x) for x in q[-1]], "files": [str(f) for f in files]}
    if return_trajectory:
        summary.update(chain=chain, trajectory=traj)
    return summary
