"""Statics of paper ``003_…`` Simulation 1 (eq. 55): equilibria of the helicoid arm along its references.

Levenberg–Marquardt (optimistix) on the static residual ``ID(q, 0, 0) − Σ_i J_iᵀ k (x_i* − x_i(q))``
— the ID at rest with a Cartesian regulator pulling each body's tip towards its reference — first
for the free hanging rest state (``k = 0``), then at each sample of the three circle references,
warm-started from the previous equilibrium: one compiled solver program for all solves.

The solver's ``q``-Jacobian of the residual is formed by central differences of one batched
(``vmap``) evaluation of the residual at ``q ± h e_j`` (``_differences.with_difference_jacobian``), not by
forward-mode autodiff: the solver's program then holds the residual's primal code only, no
tangent code of the three LVP bodies' static ID. Measured (pinned, alternating with the forward
Jacobian twice, 2026-12-01): XLA compile of the statics 44.4 / 47.7 → 18.3 / 12.1 s, the solves as
fast (9.3 / 7.3 vs 10.1 / 7.7 s), Levenberg–Marquardt steps 331 → 327 over the 25 solves and
equilibria equal to 8.7e-14 (their scale 0.49; ``docs/architecture.md``). Newton's method converges
to the root of the residual whatever the Jacobian's rounding; the differences' relative error
(≈ ε^{2/3} ≈ 4e-11) only perturbs its quadratic rate. Tangents in the references or the chain's parameters
(implicit differentiation through the solves) still go through the residual's own JVP.

The samples' solves start Levenberg–Marquardt with a wide trust region (step size ``WARM_STEP``,
damping ``1/WARM_STEP``) instead of optimistix's ``λ = 1``, which held back the arm's soft
directions for 13–15 accepted steps per sample: 327 → 221 steps over the 25 solves, the solves
6.8–7.9 → 4.5–4.8 s, equilibria equal to 6.3e-13 (pinned, one process, 2026-12-01).
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

from .._differences import with_difference_jacobian
from ..algorithms._recursion import inverse_dynamics_kernel
from ..algorithms.kinematics import forward_kinematics
from ..chain import Chain
from ..simulation._stored import stored_jit

CIRCLE_RADII = (0.01, 0.02, 0.03)
K_REGULATOR = 2000.0
N_SAMPLES = 24
WARM_STEP = 1e3  # Levenberg–Marquardt's first step size (1/damping) from a previous equilibrium
# the circles' planes rise away from the rest position by this angle about the world y axis: a horizontal
# circle through the hanging tip asks the arm to lengthen (its tendons to push), tilted ones to shorten
TILT = math.radians(35.0)


def circle_references(x0, phase) -> jax.Array:
    """The tips' circle references: tip ``i`` on a circle of radius ``CIRCLE_RADII[i]`` through its rest
    position ``x0[i]``, in the plane through ``x0[i]`` tilted by :data:`TILT` about the world y axis, rising
    away from ``x0[i]`` (the arm hangs along −z; the circles' centres are towards −x).

    Arguments:
        x0: the three tips' rest positions, ``(3, 3)``.
        phase: angles along the circles, ``(…)`` (0 at the rest position).

    Returns:
        the references ``(…, 3, 3)``: ``x0 + (d cos TILT, r sin φ, −d sin TILT)`` with ``d = r (cos φ − 1)``.
    """
    phase = jnp.asarray(phase)
    lead = (None,) * phase.ndim  # explicit ranks (no implicit rank promotion)
    radii, x0 = jnp.asarray(CIRCLE_RADII)[lead + (slice(None), None)], jnp.asarray(x0)[lead]
    phase = phase[..., None, None]
    d = radii * (jnp.cos(phase) - 1)
    return x0 + jnp.concatenate([d * jnp.cos(TILT), radii * jnp.sin(phase), -d * jnp.sin(TILT)], axis=-1)


def tips(chain: Chain, q) -> jax.Array:
    """World positions ``(3, 3)`` of the three bodies' distal centres."""
    return forward_kinematics(chain, q)[:, :3, 3]


def _residual(q, reference, chain: Chain):
    """``ID(q, 0, 0) − Σ_i J_iᵀ k (x_i* − x_i(q))`` (eq. 55 with a Cartesian regulator) for
    ``reference = (x*, k)``: the scenario's gain ``K_REGULATOR``, or 0 for the free hanging statics."""
    x_ref, gain = reference
    spring = jax.grad(lambda x: 0.5 * gain * jnp.sum((x_ref - tips(chain, x)) ** 2))(q)
    # the ID at q̇ = q̈ = 0 without tracing velocity terms (the ID kernel's qd=None: configuration-only jets)
    return inverse_dynamics_kernel(chain, q, None, None) + spring


# optimistix traces the residual several times: a jitted one is traced once
_static_residual = eqx.filter_jit(with_difference_jacobian(_residual))


class _TrustFrom(optx.AbstractSearch):
    """optimistix's classical trust region, started from the damping ``1/initial`` instead of 1.

    Levenberg–Marquardt damps its Newton step by ``λ = 1/step size`` and starts every solve at ``λ = 1``,
    which holds back the arm's soft directions (the residual Jacobian's smallest singular values are
    ≈ 0.045, so ``σ² ≪ λ``) until accepted steps have grown the step size by 3.5× each: 13–15 steps per
    warm-started sample, all accepted, converging linearly. From the previous equilibrium the first
    steps can be Newton's; a step that does not reduce the loss still shrinks the region."""

    inner: optx.ClassicalTrustRegion
    initial: jax.Array

    def init(self, y, f_info_struct):
        state = self.inner.init(y, f_info_struct)
        return eqx.tree_at(lambda s: s.step_size, state, jnp.asarray(self.initial, state.step_size.dtype))

    def step(self, first_step, y, y_eval, f_info, f_eval_info, state):
        return self.inner.step(first_step, y, y_eval, f_info, f_eval_info, state)


# stored when an application keeps lowered programs (the `kane-jax` command): a second run skips its trace
@stored_jit
def rest_and_references(chain: Chain, *, n_samples: int = N_SAMPLES, rtol: float = 1e-10):
    """The hanging equilibrium, the sampled circle references and the statics along them.

    Arguments:
        chain: the arm (three modules; the scenario's :func:`make_chain`).
        n_samples: samples of one period of the circle references.
        rtol: Levenberg–Marquardt's relative and absolute tolerance.

    Returns:
        ``(q_rest, x_ref (S, 3, 3), q_eq (S, nq), steps (S + 1,), ok (S + 1,), residual (S, nq))``
        (``steps`` and ``ok``: the rest configuration first; ``residual``: the static residual at each
        ``q_eq``, from the solver's state): Levenberg–Marquardt on the static residual for the rest
        configuration (regulator gain 0, from the straight arm), then at each sample, warm-started from
        the previous equilibrium — one solver program for all ``S + 1`` solves (``docs/architecture.md``).
    """
    phase = 2 * jnp.pi * jnp.arange(n_samples) / n_samples
    trust = optx.LevenbergMarquardt(rtol=rtol, atol=rtol)
    warm = eqx.tree_at(lambda s: s.search, trust, _TrustFrom(trust.search, jnp.asarray(WARM_STEP)))

    def step(carry, k):
        # Newton's steps inside a trust region (Levenberg–Marquardt on the residual): plain Newton
        # overshoots into the bending primitives' domain limit when the references pull hard
        # jac="bwd": the Jacobian materialized by reverse mode; the default forward linearization kept
        # every intermediate of the residual in the solver's loop state (first call 585 -> 315 s,
        # XLA compile 525 -> 238 s, run 17.5 -> 21.4 s; equilibria equal to 7e-14; 2026-11-26)
        q, x0 = carry
        rest = k == 0
        xr = circle_references(x0, phase[jnp.maximum(k - 1, 0)])  # (3 tips, 3)
        gain = jnp.where(rest, 0.0, K_REGULATOR)
        solver = eqx.tree_at(lambda s: s.search.initial, warm, jnp.where(rest, 1.0, WARM_STEP))
        sol = optx.least_squares(lambda x, a: _static_residual(x, a, chain), solver, q, args=(xr, gain),
                                 max_steps=200, throw=False, options=dict(jac="bwd"))
        x0 = jnp.where(rest, tips(chain, sol.value), x0)
        # the residual at the answer: Gauss–Newton methods keep it in their state (evaluated where they
        # accepted the last step), so no second program of the residual is compiled to report it
        resid = sol.state.f_info.residual
        return (sol.value, x0), (sol.value, xr, sol.stats["num_steps"], sol.result == optx.RESULTS.successful, resid)

    init = (jnp.zeros(chain.nq), jnp.zeros((3, 3)))
    _, (qs, x_ref, steps, ok, resid) = jax.lax.scan(step, init, jnp.arange(n_samples + 1))
    return qs[0], x_ref[1:], qs[1:], steps, ok, resid[1:]
