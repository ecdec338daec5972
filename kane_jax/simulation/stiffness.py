"""How stiff a chain is at a state, and which solver :func:`kane_jax.simulate` picks for it.

The stiff part of a soft robot's dynamics is its internal (visco-elastic) forces behind the mass
matrix. Linearized at the initial state with the structured Jacobian of
:mod:`kane_jax.simulation.rosenbrock`,

    J = [[0, I], [−M⁻¹ K, −M⁻¹ D]],   K = ∂Q_int/∂q,  D = ∂Q_int/∂q̇,

its eigenvalues are those of the quadratic pencil ``det(λ² M + λ D + K) = 0``. An explicit solver
is stable only for steps ``h ≲ 3.3 / ρ`` (``ρ`` the largest ``|λ|``, Tsit5's stability interval on
the negative real axis), so it needs at least ``ρ (t1 − t0) / 3.3`` steps whatever the accuracy
asks. When that count exceeds :data:`STIFF_STEPS` the linearly implicit
:class:`~kane_jax.simulation.rosenbrock.Ros34PW2` is picked: its steps cost about what a Tsit5 step
costs (four forward-dynamics evaluations, one ``nq × nq`` LU) and follow the accuracy alone.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._types import Config
from ..algorithms._recursion import mass_matrix_kernel
from ..algorithms._terms import internal_force_derivatives
from ._control import reads_state

# explicit steps that stability alone would force, above which the Rosenbrock–W solver is picked
STIFF_STEPS = 2_000
# the interval of absolute stability of Tsit5 on the negative real axis, ≈ [−3.3, 0]
_EXPLICIT_STABILITY = 3.3


class StiffnessReport(eqx.Module):
    """The outcome of :func:`stiffness` (concrete numbers, for printing and for the solver choice).

    Fields:
        spectral_radius: ``ρ``, the largest ``|λ|`` of the linearized internal-force dynamics [1/s].
        explicit_steps: ``ρ (t1 − t0) / 3.3``, the steps an explicit solver needs for stability.
        solver: the solver :func:`kane_jax.simulate` uses by default: ``"tsit5"`` or ``"ros34pw2"``.
        reason: one sentence saying why.
    """

    spectral_radius: float
    explicit_steps: float
    solver: str
    reason: str


@eqx.filter_jit
def _linearization(chain, q: Config, qd: Config):
    stiffness, damping = internal_force_derivatives(chain, q, qd)
    return mass_matrix_kernel(chain, q), stiffness, damping


def spectral_radius(chain, q: Config, qd: Config) -> float:
    """``ρ = max |λ|`` over ``det(λ² M + λ D + K) = 0`` at ``(q, q̇)`` (host eigenvalues, float64)."""
    mass, stiffness, damping = (np.asarray(x, dtype=np.float64) for x in _linearization(chain, q, qd))
    if not (np.any(stiffness) or np.any(damping)):
        return 0.0
    minv = np.linalg.inv(mass)
    n = mass.shape[0]
    jac = np.block([[np.zeros((n, n)), np.eye(n)], [-minv @ stiffness, -minv @ damping]])
    eig = np.linalg.eigvals(jac)
    return float(np.max(np.abs(eig))) if np.all(np.isfinite(eig)) else float("inf")


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
    rho = spectral_radius(chain, q0.astype(dtype), qd0.astype(dtype))
    steps = rho * (float(t1) - float(t0)) / _EXPLICIT_STABILITY
    if steps > STIFF_STEPS:
        return StiffnessReport(rho, steps, "ros34pw2",
                               f"stiff: the internal forces put eigenvalues at |λ| = {rho:.3g} 1/s, so an explicit "
                               f"solver would need ≥ {steps:.3g} steps for stability alone (> {STIFF_STEPS})")
    return StiffnessReport(rho, steps, "tsit5",
                           f"not stiff: |λ| ≤ {rho:.3g} 1/s, ≈ {steps:.3g} explicit steps for stability "
                           f"(≤ {STIFF_STEPS})")


def choose_solver(chain, q0: Config, qd0: Config, t1: float, *, t0: float = 0.0, law=None,
                  dt0: float | None = None) -> tuple[str, str]:
    """The solver ``simulate(solver="auto")`` uses, and why (one sentence).

    Arguments:
        chain: the :class:`~kane_jax.Chain`. q0, qd0: the initial state (concrete arrays).
        t1: final time [s]; ``t0`` the initial time.
        law: the control law ``(t, q, q̇) -> u`` (None: no input).
        dt0: the constant step with ``adaptive=False``; None for adaptive steps.

    Returns:
        ``(name, reason)``: ``"tsit5"`` or ``"ros34pw2"`` and the reason, e.g. for ``Trajectory.solver``.

    A control law that feeds back ``q`` or ``q̇`` keeps the explicit solver: the Rosenbrock–W
    Jacobian holds the internal forces only, and a feedback law can cancel that stiffness (a
    feedback-linearizing law on the actuated coordinates, :class:`~kane_jax.control.CollocatedPFBL`)
    or add its own, so the implicit treatment would act on the wrong modes (measured: PFBL on a
    soft arm, ``|λ| ≈ 2e3`` 1/s open loop, diverged under ``ros34pw2`` and ran in 1,602 Tsit5 steps).
    Name ``solver="ros34pw2"`` or ``"kvaerno5"`` for a closed loop known to be stiff.
    """
    if law is not None and reads_state(law, chain.nq, jnp.result_type(q0, qd0, float)):
        return "tsit5", ("auto: the control law feeds back q or q̇, which the stiff solver's Jacobian leaves out; "
                         "name solver='ros34pw2' or 'kvaerno5' for a closed loop known to be stiff")
    report = stiffness(chain, q0, qd0, t1, t0=t0)
    if dt0 is None:
        return report.solver, f"auto: {report.reason}"
    rho = report.spectral_radius  # fixed steps: implicit only where an explicit step of dt0 is unstable
    name = "ros34pw2" if rho * float(dt0) > _EXPLICIT_STABILITY else "tsit5"
    return name, (f"auto: fixed steps dt0 = {float(dt0):.3g} s against the explicit stability limit "
                  f"3.3/|λ| = {_EXPLICIT_STABILITY / max(rho, 1e-300):.3g} s")
