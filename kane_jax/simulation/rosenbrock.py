"""A linearly implicit Rosenbrock–W solver with the chain's structured Jacobian (stiff soft robots).

Soft robots are stiff because of a few forces: the visco-elastic internal forces of joints and
bodies (``K q + D q̇`` for linear materials) and, for pneumatic or tendon drives, the input forces
``A(q)ᵀ u``. Behind the mass matrix these put eigenvalues of the linearized dynamics far out on the
negative real axis (−8.4e6 1/s for the Kelvin–Voigt radius modes of paper ``000_…`` Sim. 1), so an
explicit solver takes steps of microseconds and an implicit solver with a dense autodiff Jacobian
of the whole forward dynamics pays ``2 nq`` JVPs of the recursion at every step.

This solver uses the structure instead. With ``y = (q, v)`` and ``v̇ = M(q)⁻¹ (Q_a − ID(q, v, 0))``
the Jacobian is approximated by the local force derivatives alone,

    J ≈ [[0, I], [−M⁻¹ K, −M⁻¹ D]],   K = ∂(Q_int − Q_a)/∂q,   D = ∂(Q_int − Q_a)/∂v,

where ``Q_int`` are the joints' and bodies' internal forces (per module: a block-diagonal Jacobian,
one forward-mode Jacobian per group of identical modules) and, optionally, ``Q_a`` the input forces
at fixed input (``input_jacobian=True``); inertial, gyroscopic and gravity terms (soft, not stiff)
and the control law's own state dependence are left out (unless ``control_jacobian=True``). The
stage systems ``(I/(hγ) − J) x = r`` then reduce to one ``nq × nq`` matrix per step,

    (M + hγ D + (hγ)² K) x_v = hγ (M r_v − hγ K r_q),   x_q = hγ (r_q + x_v),

solved with one LU factorization (partial pivoting, element-wise code: ``_small_lu``) per step.
Because the Jacobian is approximate, the method is a W-method (order conditions hold for any
matrix in place of ``J``): ROS34PW2 of Rang & Angermann (2005), 4 stages, order 3 with an
embedded order-2 estimate, L-stable and stiffly accurate. Dense output is the cubic Hermite
interpolant of ``y`` and ``f(y)`` at both ends of a step.
The evaluation at the new point also yields ``f`` and ``M`` there, which the next step reuses
(first-same-as-last), and ``K``, ``D`` are recomputed every ``refresh`` steps, so a step costs four
forward-dynamics evaluations, one small ``nq × nq`` LU and a share of one Jacobian of the local forces.
All evaluations run in one ``lax.scan`` over the stage points, so the forward dynamics is traced
and compiled once (paper ``000_…`` Sim. 1: 29 s of compilation against ≈ 210 s for Kvaerno5).

The solver reads the chain and the control from ``args = (chain, control)``, so it works with
:func:`kane_jax.simulate` (``solver="ros34pw2"``), not with arbitrary diffrax terms.
"""

from __future__ import annotations

from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._small import contract
from ..algorithms._recursion import dynamics_terms, solve_chain_mass, tip_wrench
from ..algorithms._terms import internal_force_derivatives
from ..algorithms.actuation import generalized_input
from . import _small_lu as small_lu
from ._control import _evaluate_law


def _tableau() -> dict[str, np.ndarray]:
    """ROS34PW2 (Rang & Angermann 2005) in the transformed variables ``u_i = Σ_j γ_ij k_j``."""
    g = 0.435866521508459
    alpha = np.zeros((4, 4))
    alpha[1, 0] = 0.87173304301691801
    alpha[2, :2] = 0.84457060015369423, -0.11299064236484185
    alpha[3, :3] = 0.0, 0.0, 1.0
    gamma = np.diag([g] * 4)
    gamma[1, 0] = -0.87173304301691801
    gamma[2, :2] = -0.90338057013044082, 0.054180672388095326
    gamma[3, :3] = 0.24212380706095346, -1.2232505839045147, 0.54526025533510214
    b = np.array([0.24212380706095346, -1.2232505839045147, 1.5452602553351020, g])
    b_hat = np.array([0.37810903145819369, -0.096042292212423178, 0.5, 0.2179332607542295])
    inv = np.linalg.inv(gamma)
    # Hairer & Wanner, Solving ODEs II, §IV.7, eq. (7.25): A = α Γ⁻¹, C = diag(1/γ) − Γ⁻¹, m = bᵀ Γ⁻¹
    return {"gamma": np.asarray(g), "a": alpha @ inv, "c": np.diag(1.0 / np.diag(gamma)) - inv,
            "m": b @ inv, "m_hat": b_hat @ inv, "times": alpha.sum(axis=1)}


TABLEAU = _tableau()


class _State(eqx.Module):
    """What a step hands to the next: ``f`` and ``M`` at the new point (first-same-as-last) and
    the local force derivatives ``K``, ``D`` with the number of steps since they were computed."""

    f: tuple
    mass: jax.Array
    stiffness: jax.Array
    damping: jax.Array
    age: jax.Array
    valid: jax.Array


def _input(args, t, q, qd):
    """The control input ``u(t, q, q̇)`` from ``args = (chain, control)`` (``simulate``'s control forms)."""
    chain, control = args
    return _evaluate_law(control, chain.nu if chain.nu else chain.nq, q.dtype, t, q, qd)


@eqx.filter_jit  # jitted, as the evaluation below: traced once although diffrax traces each step three times
def _force_derivatives(args, t, y, inputs: bool, law: bool = False):
    """``K = ∂(Q_int − Q_a)/∂q`` and ``D = ∂(Q_int − Q_a)/∂q̇``.

    The internal forces' derivatives are block diagonal (one Jacobian per group of identical
    modules). ``inputs``: with the input ``u`` held fixed, ``∂(A(q)ᵀ u)/∂q`` by one forward-mode
    Jacobian. ``law``: the closed loop's ``Q_a(q, q̇) = A(q)ᵀ u(t, q, q̇)``, the control law's own
    state dependence included, by reverse mode (``nq`` pullbacks; it passes through solvers with a
    custom VJP, such as the pull-only allocation's QP).
    """
    chain = args[0]
    q, qd = y
    stiffness, damping = internal_force_derivatives(chain, q, qd)
    if law:  # (also without actuators: then Q_a = u(t, q, q̇) itself)
        closed_loop = jax.jacrev(lambda x, xd: generalized_input(chain, x, _input(args, t, x, xd)), argnums=(0, 1))
        dq, dqd = closed_loop(q, qd)
        return stiffness - dq, damping - dqd
    if chain.nu == 0 or not inputs:  # Q_a = u has no q-dependence at fixed u
        return stiffness, damping
    u = _input(args, t, q, qd)
    return stiffness - jax.jacfwd(lambda x: generalized_input(chain, x, u))(q), damping


@eqx.filter_jit
def _evaluate(args, t, y):
    """``f(t, y) = (q̇, q̈)`` and ``M(q)`` from one pass of the module terms."""
    chain = args[0]
    q, qd = y
    dtype = jnp.result_type(q, qd)
    force = generalized_input(chain, q, _input(args, t, q, qd))
    mass, bias = dynamics_terms(chain, q, qd, gravity=jnp.asarray(chain.gravity, dtype),
                                tip=tip_wrench(None, None, dtype))
    return (qd, solve_chain_mass(chain, mass, force - bias)), mass


def vector_field(t, y, args):
    """``f(t, y) = (q̇, q̈)`` as the steps evaluate it: the vector field of the term this solver is
    given (diffrax traces the term once to check it; this way that trace is the steps' own)."""
    return _evaluate(args, t, y)[0]


def _w_factor(mass, stiffness, damping, hg):
    """LU factors (partial pivoting) of ``W = M + hγ D + (hγ)² K``, once per step: element-wise code
    (``_small_lu``) up to ``UNROLLED_LU`` coordinates, no LAPACK call, so XLA:CPU can compile the
    whole solve loop into one kernel."""
    return small_lu.factor(mass + hg * damping + hg * hg * stiffness)


def _w_solve(factors, mass, stiffness, hg, r):
    """``(I/(hγ) − J) x = r`` for ``J = [[0, I], [−M⁻¹K, −M⁻¹D]]``:
    ``(M + hγ D + (hγ)² K) x_v = hγ (M r_v − hγ K r_q)``, ``x_q = hγ (r_q + x_v)`` (products without dots)."""
    rq, rv = r
    rhs = hg * (contract("ij,j->i", mass, rv) - hg * contract("ij,j->i", stiffness, rq))
    xv = small_lu.solve_factored(*factors, rhs)
    return hg * (rq + xv), xv


class Ros34PW2(diffrax.AbstractAdaptiveSolver):
    """ROS34PW2 Rosenbrock–W method with the chain's structured Jacobian (see the module docstring).

    Use through :func:`kane_jax.simulate` (``solver="ros34pw2"`` or an instance): the steps read
    ``args = (chain, control)`` as ``simulate`` passes them. Order 3 (embedded order 2),
    L-stable, for stiff chains whose stiffness sits in the internal and input forces.

    Fields:
        refresh: the local force derivatives ``K``, ``D`` are recomputed every ``refresh`` steps
            (and after a jump of the control); in between the last ones are reused. ``M`` is
            always the current one. Any matrix keeps a W-method's order, so reuse trades only
            stability margin for cost: the derivatives of a body integrated over its volume
            cost several forward-dynamics evaluations. ``refresh=1`` recomputes at every step.
        input_jacobian: also put ``∂(A(q)ᵀ u)/∂q`` (inputs held fixed) into ``K``. Off by default:
            for the six pneumatic chambers of paper ``000_…`` Sim. 1 it halves the steps (337 vs
            649 over 0.5 s) but adds 20 s of compilation and a chain-wide Jacobian per refresh.
        control_jacobian: put the closed loop's ``∂Q_a/∂q`` and ``∂Q_a/∂q̇`` into ``K`` and ``D``,
            the control law ``u(t, q, q̇)``'s own state dependence included (reverse mode, ``nq``
            pullbacks of the law per refresh; supersedes ``input_jacobian``). For feedback laws
            that make the closed loop stiff (high-gain damping: the tests' arm, 2,190 steps
            against 50,744 without it and Tsit5's 10,926). A law that cancels the stiffness
            (:class:`~kane_jax.control.CollocatedPFBL` on the tests' soft arm, rtol 1e-6) leaves
            the open-loop ``K`` on the wrong modes: 29,030 steps without, 1,843 with it; the
            closed loop is not stiff, and Tsit5 takes 319. Off by default: its compile grows with
            the law's (paper ``003_…`` Sim. 2: +55 s; at rtol 1e-5 2,756 steps over 0.6 s against
            Tsit5's 9,085, at its rtol 1e-7 10,822 against 8,959: the order-3 steps that accuracy
            allows there are as short as Tsit5's stability-bound ones).
    """

    term_structure: ClassVar = diffrax.AbstractTerm
    interpolation_cls: ClassVar = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k
    refresh: int = eqx.field(static=True, default=10)
    input_jacobian: bool = eqx.field(static=True, default=False)
    control_jacobian: bool = eqx.field(static=True, default=False)

    def __check_init__(self):
        if not isinstance(self.refresh, int) or isinstance(self.refresh, bool) or self.refresh < 1:
            raise ValueError(f"`refresh` must be a positive int, got {self.refresh!r}.")

    def order(self, terms) -> int:
        return 3

    def init(self, terms, t0, t1, y0, args) -> _State:
        # nothing evaluated here: the first step evaluates f and M at y0 inside its stage scan and
        # computes K and D (age = refresh), so each is traced once
        mass = jnp.zeros((y0[0].shape[0],) * 2, y0[0].dtype)
        return _State(jax.tree.map(jnp.zeros_like, y0), mass, mass, mass, jnp.asarray(self.refresh, jnp.int32),
                      jnp.asarray(False))

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state: _State, made_jump):
        old = solver_state
        reuse = old.valid if made_jump is False else old.valid & ~made_jump
        refresh = (old.age >= self.refresh) | ~reuse
        stiffness, damping = jax.lax.cond(refresh, lambda: _force_derivatives(args, t0, y0, self.input_jacobian,
                                                                             self.control_jacobian),
                                          lambda: (old.stiffness, old.damping))
        dtype = y0[0].dtype
        h = t1 - t0
        hg = h * jnp.asarray(TABLEAU["gamma"], dtype)
        a, c, m, m_hat = (jnp.asarray(TABLEAU[k], dtype) for k in ("a", "c", "m", "m_hat"))
        # five points in one scan (the forward dynamics traced once): y0 (f and M reused from the
        # previous step when valid), the stage points 2..4 (rows of A), then the new point y1
        rows = jnp.concatenate([a, m[None]])
        c_rows = jnp.concatenate([c, jnp.zeros((1, 4), dtype)]) / h
        times = t0 + h * jnp.concatenate([jnp.asarray(TABLEAU["times"], dtype), jnp.ones((1,), dtype)])

        def stage(carry, xs):
            us, mass0, factors, _ = carry
            i, row, c_row, t = xs
            point = jax.tree.map(lambda y, u: y + contract("j,jn->n", row, u), y0, us)
            f, mass = jax.lax.cond((i == 0) & reuse, lambda: (old.f, old.mass), lambda: _evaluate(args, t, point))
            mass0 = jnp.where(i == 0, mass, mass0)
            # W's factors once per step, at the first point (M there); the later stages reuse them
            factors = jax.lax.cond(i == 0, lambda: _w_factor(mass0, stiffness, damping, hg), lambda: factors)
            r = jax.tree.map(lambda fi, u: fi + contract("j,jn->n", c_row, u), f, us)
            x = _w_solve(factors, mass0, stiffness, hg, r)
            us = jax.tree.map(lambda u, xi: u.at[jnp.minimum(i, 3)].set(jnp.where(i < 4, xi, u[3])), us, x)
            return (us, mass0, factors, (f, mass)), f

        stages = jax.tree.map(lambda x: jnp.zeros((4,) + x.shape, dtype), y0)
        no_factors = jax.eval_shape(_w_factor, old.mass, stiffness, damping, hg)
        init = (stages, old.mass, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), no_factors), (old.f, old.mass))
        (stages, _, _, (f1, mass1)), fs = jax.lax.scan(stage, init, (jnp.arange(5), rows, c_rows, times))
        f0 = jax.tree.map(lambda x: x[0], fs)
        y1 = jax.tree.map(lambda y, u: y + contract("j,jn->n", m, u), y0, stages)
        y_error = jax.tree.map(lambda u: contract("j,jn->n", m - m_hat, u), stages)
        dense_info = {"y0": y0, "y1": y1, "k": jax.tree.map(lambda a0, a1: h * jnp.stack([a0, a1]), f0, f1)}
        age = jnp.where(refresh, 1, old.age + 1)
        new = _State(f1, mass1, stiffness, damping, age, jnp.asarray(True))
        return y1, y_error, dense_info, new, diffrax.RESULTS.successful
