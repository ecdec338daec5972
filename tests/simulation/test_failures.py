"""Simulation failures are reported, never silent: a fixed-step blow-up sets the failure status
with the time and coordinates, raises with ``throw=True``, and is flagged per rollout in a batch.

The failing case is the issue's: a two-segment PCS chain driven by 1e9 N·m generalized forces with
10 ms fixed steps (the explicit step is far outside the stability region, the state overflows to
inf/NaN within a few steps). The same chain with zero input is the control that must stay finite.
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj

DT = 1e-2


@pytest.fixture(scope="module")
def chain():
    seg = kj.CosseratPCS(length=0.15, radius=0.01, strains=("bend_y",), damping=0.01)
    return kj.Chain([(kj.Fixed(), seg), (kj.Fixed(), seg)], gravity=(0.0, 0.0, -9.81))


def _fixed(chain, u, **kw):
    return kj.simulate(chain, jnp.zeros(chain.nq), jnp.zeros(chain.nq), 1.0, control=u, adaptive=False, dt0=DT,
                       n_save=11, solver="heun", **kw)


def test_blow_up_is_flagged_with_time_and_coordinates(chain):
    traj = _fixed(chain, jnp.full(chain.nq, 1e9), throw=False)
    assert not bool(traj.success)
    k = int(traj.nonfinite_at)
    assert 0 < k < 11
    assert not np.all(np.isfinite(np.asarray(traj.q[k])))
    assert np.all(np.isfinite(np.asarray(traj.q[k - 1])))  # the first non-finite save is the one reported
    msg = traj.message
    assert "non-finite" in msg and f"t = {float(traj.ts[k]):.6g}" in msg and "q[" in msg


def test_blow_up_raises_with_throw(chain):
    with pytest.raises(kj.SimulationError, match=r"non-finite .* coordinates: q\[0, 1\]"):
        _fixed(chain, jnp.full(chain.nq, 1e9))


def test_finite_run_is_successful_and_integer_inputs_still_work(chain):
    traj = _fixed(chain, [0, 0])  # integer list input, as before
    assert bool(traj.success) and int(traj.nonfinite_at) == -1 and traj.message == "successful"
    assert np.all(np.isfinite(np.asarray(traj.q)))


class _Constant(eqx.Module):
    """A constant generalized force ``scale · 1`` (an equinox Module: its array leaf is batched)."""

    scale: jnp.ndarray

    def __call__(self, t):
        return self.scale * jnp.ones(2)


def test_batch_flags_each_rollout_and_throw_raises(chain):
    q0 = jnp.zeros((3, chain.nq))
    control = _Constant(jnp.asarray([0.0, 1e9, 0.0]))

    def run(throw):
        return kj.batch_simulate(chain, q0, q0, 1.0, control=control, batch_control=True, adaptive=False,
                                 dt0=DT, n_save=11, solver="heun", throw=throw, sharded=False)

    traj = run(False)
    np.testing.assert_array_equal(np.asarray(traj.success), [True, False, True])
    assert int(traj.nonfinite_at[0]) == -1 and int(traj.nonfinite_at[1]) > 0
    with pytest.raises(Exception, match="non-finite"):
        run(True)
