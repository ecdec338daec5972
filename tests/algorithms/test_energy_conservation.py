"""Energy is conserved in undamped, unactuated motion (a conservation law, independent of the ID)."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import kane_jax as kj


def test_energy_conserved_fixed_step_rk(rng):
    # hybrid chain: revolute + rigid link, revolute + elastic CC with elongation, no damping
    cc = kj.PlanarConstantCurvature(0.3, 0.03, 1000.0, 2e4, 0.0, elongation=True, order=3, n_radial=1,
                                    n_angular=3)
    chain = kj.Chain([(kj.Revolute((0, 0, 1)), kj.RigidBody(0.5, (0.15, 0, 0), np.diag([1e-4, 1e-3, 1e-3]),
                                                             tip=np.array([[1, 0, 0, 0.3], [0, 1, 0, 0],
                                                                           [0, 0, 1, 0], [0, 0, 0, 1.0]]))),
                      (kj.Revolute((0, 1, 0)), cc)], gravity=(0.0, -9.81, 0.0))

    def field(t, y, args):
        q, qd = y
        return qd, kj.forward_dynamics(chain, q, qd, jnp.zeros_like(q))

    @eqx.filter_jit
    def run(q0, qd0):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(field), diffrax.Tsit5(), 0.0, 2.0, 5e-4, (q0, qd0),
                                  saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 2.0, 21)),
                                  stepsize_controller=diffrax.ConstantStepSize(), max_steps=5000)
        return sol.ys

    q0 = jnp.asarray([0.4, -0.3, 0.5, 0.02])
    qd0 = jnp.asarray([0.5, 0.2, -1.0, 0.0])
    qs, qds = run(q0, qd0)
    energy = jax.vmap(lambda q, qd: kj.kinetic_energy(chain, q, qd) + kj.potential_energy(chain, q))(qs, qds)
    drift = np.max(np.abs(np.asarray(energy) - float(energy[0]))) / abs(float(energy[0]))
    assert np.all(np.isfinite(np.asarray(qs)))
    assert np.max(np.abs(np.asarray(qs[-1] - q0))) > 1e-2  # it actually moved
    assert drift < 1e-8, drift
