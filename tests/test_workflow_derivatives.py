"""Derivatives the workflows take, in forward and reverse mode, against central differences (issue 13.3):
through ``simulate`` (two identical soft modules on fixed joints: the chain whose forward-mode
Jacobian once aborted XLA), through a closed-loop rollout with respect to a controller's gains.
``equilibrium``'s implicit Jacobian is checked in ``tests/test_statics.py``.
"""

from __future__ import annotations

import diffrax
import helpers.robots as wr
import jax
import jax.numpy as jnp
import numpy as np
from helpers.checks import with_value

import kane_jax as kj
from kane_jax.control import ComputedTorque

H = 1e-6


def _central(f, x):
    return jnp.stack([(f(x + H * e) - f(x - H * e)) / (2 * H) for e in jnp.eye(x.shape[0])], axis=-1)


def _soft_pair():
    seg = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.02, order=3)
    return kj.Chain([(kj.Fixed(), seg), (kj.Fixed(), seg)], gravity=(0.0, -9.81, 0.0))


def test_simulate_forward_and_reverse_mode_match_finite_differences():
    chain = _soft_pair()
    q0 = jnp.array([0.3, -0.2])

    def final_state(x, adjoint):  # fixed steps: a smooth map of the initial state
        traj = kj.simulate(chain, x, jnp.zeros(2), 0.05, n_save=2, adaptive=False, dt0=1e-3, adjoint=adjoint)
        return jnp.concatenate([traj.q[-1], traj.qd[-1]])

    # the forward-mode program also returns the final state (its auxiliary output): the central
    # differences evaluate it, so no third program of the values is compiled
    fwd_value = jax.jit(jax.jacfwd(with_value(lambda x: final_state(x, diffrax.ForwardMode())), has_aux=True))
    fwd = fwd_value(q0)[0]
    rev = jax.jit(jax.jacrev(lambda x: final_state(x, None)))(q0)
    fd = _central(lambda x: fwd_value(x)[1], q0)
    scale = float(jnp.max(jnp.abs(fd)))
    assert scale > 1e-2  # a non-trivial sensitivity
    np.testing.assert_allclose(fwd, fd, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(rev, fd, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(fwd, rev, rtol=0, atol=1e-11 * scale)  # same discrete solution


def test_gradient_wrt_controller_gains_matches_finite_differences():
    arm = wr.rigid_arm(2)
    target = jnp.array([0.4, -0.3])

    def cost(gains, adjoint=None):  # forward mode through diffrax needs its ForwardMode adjoint
        ctrl = ComputedTorque(arm, target, kp=gains[0], kd=gains[1])
        traj = kj.simulate(arm, jnp.zeros(2), jnp.zeros(2), 0.3, control=ctrl, n_save=2, adaptive=False, dt0=5e-3,
                           adjoint=adjoint)
        return jnp.sum((traj.q[-1] - target) ** 2)

    gains = jnp.array([50.0, 10.0])
    grad = jax.jit(jax.grad(cost))(gains)
    fwd_value = jax.jit(jax.jacfwd(with_value(lambda g: cost(g, diffrax.ForwardMode())), has_aux=True))
    fwd = fwd_value(gains)[0]
    fd = _central(lambda g: fwd_value(g)[1], gains)
    np.testing.assert_allclose(grad, fd, rtol=1e-6)
    np.testing.assert_allclose(fwd, grad, rtol=1e-10)
    # exact model: each coordinate's error obeys ë + kd ė + kp e = 0, so a stiffer kp lowers the cost
    assert grad[0] < 0
