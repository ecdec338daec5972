"""How stiff a chain is at a state, and which solver :func:`kane_jax.simulate` picks for it.

The stiff part of a soft robot's dynamics is its internal (visco-elastic) forces behind the mass
matrix. Linearized at the initial state with the structured Jacobian of
:mod:`kane_jax.simulation.rosenbrock`,

    J = [[0, I], [−M⁻¹ K, −M⁻¹ D]],   K = ∂Q_int/∂q,  D = ∂Q_int/∂q̇,

its eigenvalues are those of the quadratic pencil ``det(λ² M + λ D + K) = 0``. An explicit solver
is stable only for steps ``h ≲ 3.3 / ρ`` (Tsit5's stability interval on the negative real axis).
That bound makes a problem *stiff* only when it binds far below the steps that accuracy asks for:

- an eigenvalue far from the real axis (``|Im λ| > |Re λ|``) is an oscillation that any accurate
  solver must follow, implicit or not (the Godage arm of paper ``004_…``: ``−592 ± 913i`` 1/s;
  Tsit5 6,758 steps for experiment 1, Ros34PW2 28,753 at the same tolerance, measured);
- a damped mode ``λ_s`` (``|Im λ| ≤ |Re λ|``) decays and need not be resolved; it forces explicit
  steps below ``3.3/|λ_s|``. Tsit5's accuracy steps on these robots are 0.3–1.5 ms at rtol
  1e-6…1e-10 (measured on the scenarios and the test arms), so a damped mode slower than
  :data:`STIFF_RATE` costs little, and an order-3 Rosenbrock–W method needs ≈ 4× the steps of the
  order-5 Tsit5 for the same accuracy.

So :class:`~kane_jax.simulation.rosenbrock.Ros34PW2` is picked when the fastest damped mode is
faster than :data:`STIFF_RATE`, ten times faster than the fastest oscillation, and forces more
than :data:`STIFF_STEPS` explicit steps over the horizon: paper ``000_…`` Sim. 1 (``|λ_s|`` 8.4e6
1/s) and Sim. 2 (1.0e4 1/s against oscillations of 134 1/s: Ros34PW2 5,639 steps, Tsit5 22,058).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._types import Config
from ..algorithms._recursion import mass_matrix_kernel
from ..algorithms._terms import internal_force_derivatives
from ._control import _evaluate_law, reads_state

# explicit steps that stability alone would force, above which the Rosenbrock–W solver may be picked
STIFF_STEPS = 2_000
# the damped modes must be faster than this [1/s] (explicit stability steps below 0.66 ms) ...
STIFF_RATE = 5e3
# ... and this many times faster than the fastest oscillation, which accuracy must follow anyway
_SEPARATION = 10.0
# the interval of absolute stability of Tsit5 on the negative real axis, ≈ [−3.3, 0]
_EXPLICIT_STABILITY = 3.3


class StiffnessReport(eqx.Module):
    """The outcome of :func:`stiffness` (concrete numbers, for printing and for the solver choice).

    Fields:
        spectral_radius: ``ρ``, the largest ``|λ|`` of the linearized internal-force dynamics [1/s].
        damped_radius: the largest ``|λ|`` over damped modes (``|Im λ| ≤ |Re λ|``) [1/s].
        oscillation_radius: the largest ``|λ|`` over oscillations (``|Im λ| > |Re λ|``) [1/s].
        explicit_steps: ``damped_radius (t1 − t0) / 3.3``, the steps an explicit solver needs for
            the stability of the damped modes alone.
        solver: the solver :func:`kane_jax.simulate` uses by default: ``"tsit5"`` or ``"ros34pw2"``.
        reason: one sentence saying why.
    """

    spectral_radius: float
    damped_radius: float
    oscillation_radius: float
    explicit_steps: float
    solver: str
    reason: str


@eqx.filter_jit
def _linearization(chain, q: Config, qd: Config):
    stiffness, damping = internal_force_derivatives(chain, q, qd)
    return mass_matrix_kernel(chain, q), stiffness, damping


def spectrum(chain, q: Config, qd: Config) -> np.ndarray:
    """Eigenvalues of ``det(λ² M + λ D + K) = 0`` at ``(q, q̇)`` (host, float64, complex ``(2 nq,)``)."""
    mass, stiffness, damping = (np.asarray(x, dtype=np.float64) for x in _linearization(chain, q, qd))
    n = mass.shape[0]
    if not (np.any(stiffness) or np.any(damping)):
        return np.zeros(2 * n, complex)
    minv = np.linalg.inv(mass)
    jac = np.block([[np.zeros((n, n)), np.eye(n)], [-minv @ stiffness, -minv @ damping]])
    eig = np.linalg.eigvals(jac)
    return eig if np.all(np.isfinite(eig)) else np.full(2 * n, np.inf, complex)


def spectral_radius(chain, q: Config, qd: Config) -> float:
    """``ρ = max |λ|`` over ``det(λ² M + λ D + K) = 0`` at ``(q, q̇)`` (host eigenvalues, float64)."""
    return float(np.max(np.abs(spectrum(chain, q, qd))))


def stiffness(chain, q0: Config, qd0: Config, t1: float, *, t0: float = 0.0) -> StiffnessReport:
    """Measure how stiff the chain is at ``(q0, q̇0)`` and choose the default solver of a simulation.

    Arguments:
        chain: the :class:`~kane_jax.Chain`. q0, qd0: the state ``(nq,)`` (concrete arrays).
        t1: final time [s]; ``t0`` the initial time.

    Returns:
        :class:`StiffnessReport` (spectral radius, explicit step count, the choice and why).

    Raises:
        ValueError: states of the wrong shape or non-finite; ``t1 <= t0``.
    """
    q0 = chain.check_state(q0, "q0")
    qd0 = chain.check_state(qd0, "qd0")
    if not float(t1) > float(t0):
        raise ValueError(f"`t1` must be greater than `t0`, got t0={float(t0)} and t1={float(t1)}.")
    dtype = jnp.result_type(q0, qd0, float)
    eig = spectrum(chain, q0.astype(dtype), qd0.astype(dtype))
    damped = np.abs(eig.imag) <= np.abs(eig.real)
    rho = float(np.max(np.abs(eig)))
    rho_d = float(np.max(np.abs(eig[damped]), initial=0.0))
    rho_o = float(np.max(np.abs(eig[~damped]), initial=0.0))
    steps = rho_d * (float(t1) - float(t0)) / _EXPLICIT_STABILITY
    numbers = (f"damped modes up to |λ| = {rho_d:.3g} 1/s (≥ {steps:.3g} explicit steps for stability), "
               f"oscillations up to {rho_o:.3g} 1/s")
    if rho_d > STIFF_RATE and rho_d > _SEPARATION * rho_o and steps > STIFF_STEPS:
        return StiffnessReport(rho, rho_d, rho_o, steps, "ros34pw2", f"stiff: {numbers}")
    why = ("the damped modes are slower than 5e3 1/s" if rho_d <= STIFF_RATE else
           "an oscillation within 10x of the damped modes must be resolved anyway" if rho_d <= _SEPARATION * rho_o
           else f"≤ {STIFF_STEPS} explicit steps")
    return StiffnessReport(rho, rho_d, rho_o, steps, "tsit5", f"not stiff ({why}): {numbers}")


def choose_solver(chain, q0: Config, qd0: Config, t1: float, *, t0: float = 0.0, control=None,
                  dt0: float | None = None) -> tuple[str, str]:
    """The solver ``simulate(solver="auto")`` uses, and why (one sentence).

    Arguments:
        chain: the :class:`~kane_jax.Chain`. q0, qd0: the initial state (concrete arrays).
        t1: final time [s]; ``t0`` the initial time.
        control: as :func:`kane_jax.simulate` takes it (None, a constant, ``u(t)`` or ``u(t, q, q̇)``).
        dt0: the constant step with ``adaptive=False``; None for adaptive steps.

    Returns:
        ``(name, reason)``: ``"tsit5"``, ``"ros34pw2"`` or ``"stabilized_rk3"`` and the reason, e.g. for
        ``Trajectory.solver``.

    A control law that feeds back ``q`` or ``q̇`` keeps an explicit solver: the Rosenbrock–W
    Jacobian holds the internal forces only, and a feedback law can cancel that stiffness (a
    feedback-linearizing law on the actuated coordinates, :class:`~kane_jax.control.CollocatedPFBL`)
    or add its own, so the implicit treatment would act on the wrong modes (measured: PFBL on a
    soft arm, ``|λ| ≈ 2e3`` 1/s open loop, diverged under ``ros34pw2`` and ran in 1,602 Tsit5 steps).
    For a closed loop known to be stiff, name
    ``solver=kj.simulation.Ros34PW2(control_jacobian=True)``, whose Jacobian holds the
    law's derivative too (its compile grows with the law's; not measured here for that reason), or
    ``"kvaerno5"``. Where the open-loop test would pick Ros34PW2 (fast damped modes that force more
    than :data:`STIFF_STEPS` explicit steps), a feedback law gets ``"stabilized_rk3"``
    (:class:`~kane_jax.simulation.stabilized.StabilizedRK3`): the same cost per step as Tsit5, and a
    stability interval 4.8× as long (paper ``003_…`` Sim. 1, whose PFBL leaves the bodies'
    Kelvin–Voigt modes unactuated: 3× fewer steps, ``docs/architecture.md``). A law that cancels those
    modes leaves the steps to accuracy, where Tsit5's order 5 would do better: name ``"tsit5"`` then.
    """
    dtype = jnp.result_type(q0, qd0, float)
    size = chain.nu or chain.nq
    # the jitted law: its trace is the one `simulate`'s checks and solve reuse
    law = None if control is None else (lambda t, q, qd: _evaluate_law(control, size, dtype, t, q, qd))
    feedback = law is not None and reads_state(law, chain.nq, dtype)
    keep = ("tsit5", "auto: the control law feeds back q or q̇, which the stiff solver's Jacobian leaves out; name "
                     "solver=Ros34PW2(control_jacobian=True) or 'kvaerno5' for a closed loop known to be stiff")
    if feedback and dt0 is not None:
        return keep
    report = stiffness(chain, q0, qd0, t1, t0=t0)
    if feedback:
        return keep if report.solver != "ros34pw2" else (
            "stabilized_rk3", "auto: the control law feeds back q or q̇, which the Rosenbrock-W Jacobian leaves out, "
                              f"and the open loop is {report.reason}: the explicit solver with the long stability "
                              "interval")
    if dt0 is None:
        return report.solver, f"auto: {report.reason}"
    rho = report.spectral_radius  # fixed steps: implicit only where an explicit step of dt0 is unstable
    name = "ros34pw2" if rho * float(dt0) > _EXPLICIT_STABILITY else "tsit5"
    return name, (f"auto: fixed steps dt0 = {float(dt0):.3g} s against the explicit stability limit "
                  f"3.3/|λ| = {_EXPLICIT_STABILITY / max(rho, 1e-300):.3g} s")
