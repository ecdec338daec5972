"""The simulation's vector fields (``kane_jax/simulation/_fields.py``): a solve compiled as a loop of kernels."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.identification import simulation_loss


def test_a_solve_outside_one_kernel_has_the_same_values():
    """``simulate(one_kernel=False)``: XLA:CPU compiles fewer whole loops as one kernel (the suite runs
    with the recommended 1 MB loop threshold, ``tests/conftest.py``), the solver's steps hold the
    marker's LAPACK call, and the trajectory is the one-kernel program's (the reference: the default
    path; measured equal bit for bit, 2026-12-06). Its gradients: ``tests/identification``'s
    simulation-error fit, whose loss compiles this way by default."""
    link = kj.RigidBody(0.3, com=(0.1, 0.0, 0.0), inertia=jnp.diag(jnp.array([1e-4, 1e-3, 1e-3])),
                        tip=jnp.eye(4).at[0, 3].set(0.2))
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0), stiffness=0.5, damping=0.01), link),
                      (kj.Revolute((0.0, 0.0, 1.0)), link)], gravity=(0.0, -9.81, 0.0))
    q0, u = jnp.array([-1.2, 0.6]), jnp.array([0.1, 0.0])

    def final_q(q, one_kernel):
        return kj.simulate(chain, q, jnp.zeros(2), 0.2, control=u, solver="tsit5", adaptive=False, dt0=2e-3,
                           saveat=5, one_kernel=one_kernel).q

    compiled = {ok: jax.jit(lambda q, ok=ok: final_q(q, ok)).lower(q0).compile() for ok in (True, False)}
    texts = {ok: c.as_text() for ok, c in compiled.items()}
    whole = {ok: len(re.findall(r'xla_cpu_small_call="true"', t)) for ok, t in texts.items()}
    assert whole[False] < whole[True], whole
    assert "lapack" not in texts[True] and "lapack" in texts[False]
    values = {ok: c(q0) for ok, c in compiled.items()}
    np.testing.assert_allclose(values[False], values[True], rtol=1e-12, atol=1e-14)


def test_one_kernel_must_be_a_bool():
    link = kj.RigidBody(0.3, com=(0.1, 0.0, 0.0), inertia=jnp.diag(jnp.array([1e-4, 1e-3, 1e-3])))
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0)), link)], gravity=(0.0, -9.81, 0.0))
    with pytest.raises(TypeError, match="`one_kernel` must be a bool, got str 'no'"):
        kj.simulate(chain, jnp.zeros(1), jnp.zeros(1), 0.1, one_kernel="no")
    with pytest.raises(TypeError, match="`one_kernel` must be a bool, got int 0"):
        simulation_loss(lambda p: chain, jnp.linspace(0.0, 0.1, 3), jnp.zeros((3, 1)), jnp.zeros(1), one_kernel=0)
