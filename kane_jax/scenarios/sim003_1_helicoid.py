"""Paper ``003_…`` Simulation 1 (§7.1): trimmed-helicoid arm of three LVP bodies, nine tendons.

The robot (after Guan et al. 2023): three identical soft bodies, each a cylinder deformed by
locally volume-preserving primitives (:class:`~kane_jax.bodies.lvp.LVPBody`) with eight DoFs —
stretch (1 mode), bending about y and about z (2 modes each), twist (1) and shear along y and z
(1 each), the six primitive types of the paper's Table 4 — so ``nq = 24``. The base is rotated so
that the arm hangs along gravity (−z) in the straight configuration. Nine straight tendons run in
triplets along the outer perimeter of each body (body ``i``'s triplet at 0°, 120°, 240° plus
``40° i``), anchored at both ends of that body (:class:`~kane_jax.actuation.tendon.Tendon`,
``Q_a = −(∂L/∂q)ᵀ u``, virtual work as in Renda et al. 2022): ``nu = 9``, underactuated by 15.
Incompressible Neo-Hookean stress (§6.2) with Kelvin–Voigt damping.

The control follows the paper's two steps:

1. **Statics by Newton on the ID** (eq. 55). The three circular tip references are sampled over
   one period; at each sample the equilibrium under gravity, elasticity and a Cartesian regulator
   ``Σ_i J_iᵀ K (x_i* − x_i(q))`` pulling each body's tip towards its reference is found by
   Newton's method in a trust region (Levenberg–Marquardt) on ``ID(q, 0, 0) − Σ J_iᵀ K (x_i* − x_i)``
   (optimistix, warm-started along the samples; the free hanging rest state, ``K = 0``, first;
   the solver's Jacobian by central differences of one batched residual: ``_helicoid_statics.py``).
   The equilibria are fitted by a truncated Fourier series in time (the references are periodic),
   a smooth (C∞) configuration reference ``q*(t)``.
2. **Collocated PFBL** (:class:`~kane_jax.control.CollocatedPFBL`) of the actuation coordinates —
   the tendon work coordinates ``y = −L(q)`` — tracking ``y*(t) = h(q*(t))``, converted once into a
   smooth reference of its own (the paper: "converted into a smooth reference for the actuation
   coordinates"): ``h`` at 64 times of the period, Fourier-fitted to 31 harmonics
   (:func:`actuation_reference`; equal to :class:`~kane_jax.control.ActuationReference`'s jets of
   ``h`` along ``q*(t)`` to 5e-16 m, 9e-15 m/s and 3e-13 m/s² in ``y*``, ``ẏ*``, ``ÿ*`` of largest
   entries 0.11 m, 6e-3 m/s and 1e-2 m/s², measured), so the closed loop no longer differentiates the
   tendon map twice along ``q*``; the 15 unactuated coordinates follow their (stable, damped) zero
   dynamics.

Values lost in our copy of the paper, chosen here as plausible: body ``L = 0.1`` m, ``R = 0.03`` m,
``ρ = 1000`` kg/m³, ``E = 60`` kPa (a soft lattice), ``η = 20`` ms; references: tip ``i`` runs
once per ``T = 4`` s around a circle of radius ``1, 2, 3`` cm through its position at rest (so the
reference starts where the arm is), in a plane tilted by 35° so that the circle rises away from the
rest position (:func:`~kane_jax.scenarios._helicoid_statics.circle_references`); regulator
``K = 2000`` N/m; 24 statics samples, Fourier harmonics up to 4; PFBL gains ``K_p = 100``,
``K_d = 20`` (critically damped, 10 rad/s). Horizontal circles (until 2026-12-03) asked the hanging
arm to lengthen as its tips swing out, which tendons can only do by pushing: the paper's law asked
for −4.4…+2.9 N and the pull-only loop (:class:`~kane_jax.control.PullOnly`, the default) missed
the tendon coordinates by up to 8.7 mm; on the tilted circles the paper's law asks −0.75…+8.6 N and
the pull-only loop misses by 1.5 mm (measured, ``docs/architecture.md``). Either law tracks the nine
tendon coordinates only: the other 15 follow their zero dynamics, not the statics' ``q*``, so the tips
stay up to ≈ 14 mm from their circles (the summary's ``tip_error_max_m``). At ``K_p = 400``,
``K_d = 40`` the pull-only loop on the horizontal circles diverged at t ≈ 2.05 s; the paper's law is
stable at both.
The bodies use a small volumetric quadrature (``order = 2``, one ring of 4 points, 8 nodes) to
keep compile time down; pass ``order`` etc. for more.

Measured runs: the README's scenario table and ``docs/measurements.md``.
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..actuation.tendon import Tendon
from ..algorithms.actuation import work_coordinates
from ..bodies.lvp import LVPBody
from ..bodies.lvp_primitives import Bend, Shear, Stretch, Twist
from ..bodies.materials import NeoHookean
from ..chain import Chain
from ..control.pfbl import CollocatedPFBL
from ..control.pull_only import PullOnly
from ..control.reference import second_order_along
from ..joints import Fixed
from ..simulation import plotting
from ._common import check_finite, output_dir, timed_simulate
from ._helicoid_statics import circle_references, rest_and_references, tips

NAME = "003-sim1"
DESCRIPTION = "trimmed-helicoid LVP arm (3 x 8 DoF), nine tendons, Newton statics + collocated PFBL"
LENGTH, RADIUS, DENSITY, YOUNGS, ETA = 0.1, 0.03, 1000.0, 6e4, 0.02
PERIOD = 4.0
N_HARMONICS = 4
# the actuation reference y*(t) = h(q*(t)): samples per period and harmonics of its own Fourier fit
Y_SAMPLES, Y_HARMONICS = 64, 31
# Tsit5's steps are held at its stability limit by the LVP bodies' Kelvin-Voigt modes (-7.5e3 1/s),
# and the default integral controller cycles between accepted and rejected steps there; the PI
# controller does not: 1,356 -> 1,130 steps over 0.5 s (rejected 231 -> 4), the same
# actuation error to 7 digits (pinned, 2026-12-03, docs/architecture.md)
STEP_CONTROL = "pi"
# the stabilized third-order explicit method (stability interval [-15.85, 0] for 6 evaluations a step,
# Tsit5 [-3.3, 0] for 6): over the 4 s period 9,230 -> 3,140 steps, 0.20 -> 0.60x real time, the final
# actuation error 0.19064 mm either way (pinned, 2026-12-05, docs/architecture.md, "A stabilized explicit solver")
SOLVER = "stabilized_rk3"


def _hanging_base() -> jnp.ndarray:
    """Base placement: the body's +x axis (backbone) along world −z, y along world y."""
    return jnp.array([[0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def make_chain(*, order: int = 2, n_radial: int = 1, n_angular: int = 4) -> Chain:
    """The 24-DoF arm with its nine tendons (see the module docstring)."""
    prims = [Stretch(1), Bend("y", 2), Bend("z", 2), Twist(1), Shear("y", 1), Shear("z", 1)]
    body = LVPBody(prims, LENGTH, RADIUS, DENSITY, NeoHookean(YOUNGS, 0.5, ETA), order=order, n_radial=n_radial,
                   n_angular=n_angular)
    modules = [(Fixed(_hanging_base()), body), (Fixed(), body), (Fixed(), body)]
    tendons = []
    for i in range(3):
        for k in range(3):
            a = 2 * np.pi * k / 3 + 2 * np.pi * i / 9
            tendons.append(Tendon(i, [(RADIUS * np.cos(a), RADIUS * np.sin(a))], order=4))
    return Chain(modules, gravity=(0.0, 0.0, -9.81), actuators=tendons)


class FourierReference(eqx.Module):
    """``q*(t) = c₀ + Σ_k a_k cos(kωt) + b_k sin(kωt)`` and its first two time derivatives."""

    coeffs: jax.Array  # (2K + 1, nq): c0, a_1..a_K, b_1..b_K
    omega: jax.Array

    @staticmethod
    def fit(q_samples, period: float, n_harmonics: int) -> "FourierReference":
        """Least-squares fit of equally spaced samples over one ``period`` (exact interpolation of
        the first ``2K + 1`` harmonics)."""
        n = q_samples.shape[0]
        t = np.arange(n) * period / n
        omega = 2 * np.pi / period
        basis = FourierReference._basis(jnp.asarray(t), omega, n_harmonics)
        coeffs, *_ = jnp.linalg.lstsq(basis, q_samples)
        return FourierReference(coeffs, jnp.asarray(omega))

    @staticmethod
    def _basis(t, omega, n_harmonics):
        k = jnp.arange(1, n_harmonics + 1)
        wt = omega * jnp.atleast_1d(t)[:, None] * k[None]
        return jnp.concatenate([jnp.ones_like(wt[:, :1]), jnp.cos(wt), jnp.sin(wt)], axis=1)

    def __call__(self, t):
        n_h = (self.coeffs.shape[0] - 1) // 2

        def q_of(s):
            return (self._basis(s, self.omega, n_h) @ self.coeffs)[0]

        t = jnp.asarray(t, dtype=self.coeffs.dtype)
        return second_order_along(q_of, t, jnp.ones_like(t))  # q*, q̇*, q̈* along t


def actuation_reference(chain: Chain, ref_q: FourierReference, *, samples: int = Y_SAMPLES,
                        harmonics: int = Y_HARMONICS) -> FourierReference:
    """``y*(t) = h(q*(t))`` as a Fourier series of its own: ``h`` at ``samples`` equally spaced times of
    the period (one compiled call of the tendon map), fitted to ``harmonics`` harmonics.

    The same reference as :class:`~kane_jax.control.ActuationReference` (``y*``, ``ẏ*``, ``ÿ*`` by jets
    of ``h`` along ``q*(t)``) to the fit's accuracy: ``y*`` is smooth and periodic, so its series
    converges spectrally (here to 5e-16 m, 9e-15 m/s and 3e-13 m/s², measured against the jets at 37
    times off the samples), and the closed loop no longer differentiates the tendon map along ``q*``
    (an evaluation 1.46 → 1.28 ms, measured).

    Arguments:
        chain: the arm (its actuators' work coordinates are ``h``).
        ref_q: the configuration reference ``q*(t)`` of period :data:`PERIOD`.
        samples, harmonics: the fit's samples per period and harmonics (keyword-only).

    Returns:
        the reference ``t ↦ (y*, ẏ*, ÿ*)``, a :class:`FourierReference` over the chain's inputs.

    Raises:
        ValueError: fewer samples than the fit's ``2 harmonics + 1`` coefficients.
    """
    if samples < 2 * harmonics + 1:
        raise ValueError(f"`samples` must be at least 2 * harmonics + 1 = {2 * harmonics + 1}, got {samples}.")
    y = _tendon_map_along(chain, ref_q, jnp.arange(samples) * (PERIOD / samples))
    return FourierReference.fit(y, PERIOD, harmonics)


@eqx.filter_jit
def _tendon_map_along(chain: Chain, ref_q: FourierReference, ts) -> jax.Array:
    """``h(q*(t))`` at the times ``ts``, one compiled call."""
    return jax.vmap(lambda t: work_coordinates(chain, ref_q(t)[0]))(ts)


def run(t1: float | None = None, out_dir=None, *, kp: float = 100.0, kd: float = 20.0, rtol: float = 1e-6,
        n_save: int = 161, order: int = 2, n_radial: int = 1, n_angular: int = 4, plots: bool = True,
        keep_trajectory: bool = False, pull_only: bool = True) -> dict:
    """Statics along the references, then the PFBL-controlled simulation up to ``t1`` (default ``T``).

    Arguments:
        t1: end time [s], positive (default one period, 4 s). out_dir: output folder (default
            ``./kane_jax_out/003-sim1``). kp, kd: PFBL gains. rtol: solver tolerance (atol = rtol/10).
        n_save: saved samples. order, n_radial, n_angular: quadrature of the bodies.
        plots: write the PNGs. keep_trajectory: add the trajectory as ``"trajectory"``.
        pull_only: the tendons only pull (:class:`~kane_jax.control.PullOnly`: the PFBL's bending
            moments re-allocated onto non-negative tensions); False: the paper's law as it is, whose
            tensions may be negative (its error obeys the closed-form decay).

    Returns:
        summary: timings, the statics (Newton steps, worst residual), the actuation-coordinate
        tracking error at the end, the tips' largest and final distances to their references
        (``tip_error_max_m``, ``final_tip_error_m``), and the written ``files``.

    Raises:
        ValueError: non-positive ``t1``.
        RuntimeError: statics that did not converge, a failed or non-finite simulation.
    """
    wall = time.perf_counter()
    t_end = PERIOD if t1 is None else float(t1)
    if not t_end > 0:
        raise ValueError(f"`t1` must be positive, got {t1!r}.")
    out = output_dir(out_dir, NAME)
    chain = make_chain(order=order, n_radial=n_radial, n_angular=n_angular)
    start = time.perf_counter()
    rest, x_ref, q_eq, steps, ok, resid = rest_and_references(chain)
    jax.block_until_ready(q_eq)
    statics_s = time.perf_counter() - start
    if not bool(jnp.all(ok)):
        bad = np.flatnonzero(~np.asarray(ok))
        where = (["the rest state"] if bad[0] == 0 else []) + [f"sample {i - 1}" for i in bad if i > 0]
        raise RuntimeError(f"{NAME}: the statics did not converge at {', '.join(where)}.")
    ref_q = FourierReference.fit(q_eq, PERIOD, N_HARMONICS)
    ctrl = CollocatedPFBL(chain, actuation_reference(chain, ref_q), kp=kp, kd=kd)
    # the tendons match the PFBL's bending moments (Bend y/z coordinates of each body, q[8b+1 : 8b+5]);
    # stretch, twist and shear take what their pulls give (in generalized forces the axial lever is
    # ~1/RADIUS times the bending one and would otherwise decide the allocation)
    bends = tuple(8 * b + k for b in range(3) for k in range(1, 5))
    law = PullOnly(ctrl, chain, match=bends) if pull_only else ctrl
    traj, info = timed_simulate(chain, rest, jnp.zeros(chain.nq), t_end, control=law, n_save=n_save, rtol=rtol,
                                atol=rtol / 10, step_control=STEP_CONTROL, solver=SOLVER)
    check_finite(traj, NAME)
    y_ref, y, tip_path = _post(chain, ref_q, traj.ts, traj.q)
    tip_path = np.asarray(tip_path)  # (T, 3, 3)
    tip_error = np.linalg.norm(tip_path - np.asarray(
        circle_references(tip_path[0], 2 * np.pi * np.asarray(traj.ts) / PERIOD)), axis=-1)  # (T, 3)
    summary = {"name": NAME, "description": DESCRIPTION, **info, "nq": chain.nq, "nu": chain.nu,
               "pull_only": pull_only, "statics_s": statics_s, "statics_newton_steps_max": int(jnp.max(steps)),
               "statics_residual_max": float(jnp.max(jnp.abs(resid))),
               "final_actuation_error_m": float(jnp.max(jnp.abs(y[-1] - y_ref[-1]))),
               "max_tendon_tension_N": float(np.max(np.asarray(traj.u))),
               "min_tendon_tension_N": float(np.min(np.asarray(traj.u))),
               "tip_error_max_m": float(tip_error.max()), "final_tip_error_m": float(tip_error[-1].max()),
               "final_tip_m": tip_path[-1, -1].tolist()}
    summary["files"] = _plots(chain, traj, np.asarray(x_ref), tip_path, np.asarray(y), np.asarray(y_ref), out) \
        if plots else []
    if keep_trajectory:
        summary["trajectory"] = traj
        summary["actuation_error_m"] = np.asarray(y_ref - y)  # (n_save, nu): y* − y
        summary["actuation_error_rate0_m_s"] = np.asarray(ctrl.reference(traj.ts[0])[1])  # ẏ*(0) − ẏ(0), q̇0 = 0
    summary["wall_s"] = time.perf_counter() - wall
    return summary


@eqx.filter_jit
def _post(chain: Chain, ref_q: FourierReference, ts, qs):
    """``y* = h(q*(t))``, ``y = h(q)`` and the tip paths in one compiled call (eagerly they cost
    minutes): the tendon map ``h`` once, over the reference and the trajectory together (the PFBL's
    reference would trace it to second order for ``ẏ*`` and ``ÿ*``, unused here). (The statics
    residuals come from the solver: evaluated here they compiled for ≈ 10 s more, pinned, 2026-11-27.)"""
    q_ref = jax.vmap(lambda t: ref_q(t)[0])(ts)
    y_both = jax.vmap(lambda q: work_coordinates(chain, q))(jnp.concatenate([q_ref, qs]))
    n = ts.shape[0]
    return y_both[:n], y_both[n:], jax.vmap(lambda q: tips(chain, q))(qs)


def _plots(chain, traj, x_ref, tip_path, y, y_ref, out) -> list[str]:
    plt = plotting._pyplot()
    ts = np.asarray(traj.ts)
    fig, axs = plt.subplots(1, 3, figsize=(15, 4.5))
    for i in range(3):
        line, = axs[0].plot(tip_path[:, i, 0], tip_path[:, i, 1], lw=1.4, label=f"tip {i + 1}")
        axs[0].plot(x_ref[:, i, 0], x_ref[:, i, 1], "o", ms=3, color=line.get_color())
    axs[0].set(xlabel="x [m]", ylabel="y [m]", title="tips (lines) and circle references (dots)")
    axs[0].axis("equal")
    axs[0].legend()
    for j in range(y.shape[1]):
        line, = axs[1].plot(ts, 1e3 * (y[:, j] - y[0, j]), lw=1.2)
        axs[1].plot(ts, 1e3 * (y_ref[:, j] - y[0, j]), ls="--", lw=0.8, color=line.get_color())
    axs[1].set(xlabel="t [s]", ylabel="−ΔL [mm]", title="tendon coordinates y (solid) and y* (dashed)")
    axs[2].plot(ts, np.asarray(traj.u), lw=1.0)
    axs[2].set(xlabel="t [s]", ylabel="tension [N]", title="tendon tensions u")
    fig.tight_layout()
    files = [out / "sim003_1_tracking.png"]
    fig.savefig(files[0], dpi=110)
    plt.close(fig)
    files.append(out / "sim003_1_stroboscopic.png")
    plt.close(plotting.plot_stroboscopic(chain, np.asarray(traj.q), n_frames=10, dims=3,
                                         title="trimmed-helicoid LVP arm", path=files[-1]))
    return [str(f) for f in files]
