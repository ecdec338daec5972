"""The vector fields of :func:`kane_jax.simulate` (``000_…`` eq. 56, ``q̈ = M⁻¹ (Q_a − ID(q, q̇, 0))``).

- :func:`full_field`: ``(q̇, q̈)`` for the explicit and fully implicit solvers;
- :func:`field_with_input`: the same with the control input ``u`` as the derivative of a third,
  unused state component, so that a FSAL Runge–Kutta step hands back ``u(t₁, y₁)`` from its own
  last stage (:class:`~kane_jax.simulation._saving.SavingSolver` saves it): a feedback law is then
  compiled once, inside the solver's loop, instead of a second time for the saved inputs;
- :func:`explicit_field` and :func:`implicit_field`: the IMEX split (KenCarp);
- :func:`in_kernels`: a field whose solver loop XLA:CPU compiles as a loop of kernels, not as one.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

from .._modules import chain_vector
from ..algorithms._fd_derivative import forward_dynamics_kernel
from ..algorithms._recursion import mass_matrix_kernel, solve_chain_mass
from ..algorithms._terms import internal_forces
from ..algorithms.actuation import generalized_input
from ._control import _evaluate_law

# traced once per solve although diffrax evaluates the vector field at several call sites
_accelerations = eqx.filter_jit(forward_dynamics_kernel)


@eqx.filter_jit
def _input_and_force(chain, control, t, q, qd):
    """The control law's ``u`` and generalized force at ``(t, q, q̇)``: like the accelerations, one
    trace per solve (a feedback law such as a PFBL is a dynamics program of its own; traced at each
    of diffrax's call sites it was a third of `003-sim1`'s compile)."""
    size = chain.nu if chain.nu else chain.nq
    u = _evaluate_law(control, size, q.dtype, t, q, qd)
    return u, generalized_input(chain, q, u)


def full_field(t, y, args):
    chain, control = args
    q, qd = y
    return qd, _accelerations(chain, q, qd, _input_and_force(chain, control, t, q, qd)[1])


def field_with_input(t, y, args):
    # y = (q, q̇, z) with ż = u: z itself is never read (the step-size norm leaves it out)
    chain, control = args
    q, qd, _ = y
    u, force = _input_and_force(chain, control, t, q, qd)
    return qd, _accelerations(chain, q, qd, force), u


def state_norm(y) -> jnp.ndarray:
    """diffrax's RMS norm of ``(q, q̇)`` alone: the error of the input channel ``z`` is not controlled."""
    return optx.rms_norm(tuple(y[:2]))


def explicit_field(t, y, args):
    # non-stiff part for IMEX solvers: inertia, gravity and input (the bias without internal forces)
    chain, control = args
    q, qd = y
    return jnp.zeros_like(q), _accelerations(chain, q, qd, _input_and_force(chain, control, t, q, qd)[1],
                                             internal=False)


def implicit_field(t, y, args):
    # stiff part for IMEX solvers: q̇ = v and the elastic/damping forces of joints and bodies
    chain = args[0]
    q, qd = y
    force = -chain_vector(chain, internal_forces(chain, q, qd))
    return qd, solve_chain_mass(chain, mass_matrix_kernel(chain, q), force)


def in_kernels(field):
    """``field`` with the same values, in a solver loop that XLA:CPU compiles as a loop of kernels.

    Under ``kj.recommended_xla_flags()`` XLA:CPU compiles a whole loop that touches less than its
    threshold (1 MB) as one kernel (``SmallWhileLoopHoistingPass``), except a loop that holds a custom
    call. One kernel runs a simulation's steps 1.3–3.7× faster, and compiles longer: LLVM optimizes
    the loop as one function. A loop compiled inside an optimization (the loss and its gradient,
    several times over in a line search) pays that compile and runs a few hundred steps. The field
    here multiplies ``q̇`` by a 1×1 Cholesky factor of ``1 + 0·t`` (a LAPACK call, exactly 1; of the
    loop-carried time, so not hoisted out of the loop; no derivative): the same numbers, the loop out
    of the one-kernel path. Measured (``tests/identification``'s simulation-error fit, recommended
    flags, pinned, 2026-12-06): 25 optax L-BFGS steps 68.8 / 69.4 → 43.7 s wall (XLA compile
    61.4 / 62.5 → 35.3 s), 60 optimistix L-BFGS steps 27.2 → 19.1 s (22.7 → 13.4 s), the same losses
    and parameters to 3e-11; the steps themselves ran ≈ 8× longer (the 60: ≈ 0.2 → 1.6 s).
    """

    def marked(t, y, args):
        out = field(t, y, args)
        t_ = jax.lax.stop_gradient(t)
        one = jax.lax.linalg.cholesky(jnp.ones((1, 1), jnp.result_type(t_)) + 0 * t_)[0, 0]
        return (out[0] * one.astype(out[0].dtype), *out[1:])

    return marked
