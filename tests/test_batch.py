"""Batch rollouts: vmap of simulate, and the same batch sharded over 4 forced host devices."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import equinox as eqx
import helpers.robots as wr
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from kane_jax._shared_jit import shared_arrays
from kane_jax.batch import batch_simulate
from kane_jax.control import PDCompensation
from kane_jax.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_enable_x64", True)
    import equinox as eqx, jax.numpy as jnp, numpy as np
    sys.path.insert(0, "tests")
    import helpers.robots as wr
    from kane_jax.batch import batch_simulate
    from kane_jax.control import PDCompensation

    arm = wr.rigid_arm(2)
    rng = np.random.default_rng(0)
    B = 12  # 3 rollouts per device
    q0 = jnp.asarray(rng.uniform(-1, 1, (B, 2)))
    # batched feedback gains (a batched equinox Module) and batched link masses (a batched chain)
    ctrl = eqx.filter_vmap(lambda kp: PDCompensation(arm, jnp.array([0.5, -0.5]), kp=kp, kd=3.0))(
        jnp.linspace(5.0, 20.0, B))
    chains = eqx.filter_vmap(lambda m: wr.rigid_arm(2, masses=(m, 0.8)))(jnp.linspace(0.8, 1.6, B))
    kw = dict(saveat=6, rtol=1e-9, atol=1e-11)
    ref = batch_simulate(chains, q0, jnp.zeros(2), 0.5, control=ctrl, batch_chain=True, batch_control=True,
                         sharded=False, **kw)
    out = batch_simulate(chains, q0, jnp.zeros(2), 0.5, control=ctrl, batch_chain=True, batch_control=True, **kw)
    print(json.dumps({
        "n_devices": len(jax.devices()),
        "shard_devices": sorted(str(s.device) for s in out.q.addressable_shards),
        "shard_shapes": [list(s.data.shape) for s in out.q.addressable_shards],
        "spec": str(out.q.sharding.spec) if hasattr(out.q.sharding, "spec") else str(out.q.sharding),
        "shape": list(out.q.shape),
        "max_diff": float(max(jnp.max(jnp.abs(out.q - ref.q)), jnp.max(jnp.abs(out.qd - ref.qd)))),
        "q_ref": np.asarray(ref.q).tolist(),
    }))
""")


def test_sharded_equals_unsharded_on_4_host_devices():
    # the suite's XLA flags (conftest: classic fusion, no expensive LLVM passes) plus four host devices:
    # the child compiles in 7.3 s instead of 13.6 s (2026-11-26, pinned)
    flags = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
    env = dict(os.environ, XLA_FLAGS=flags.strip(), JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    res = json.loads(run.stdout.strip().splitlines()[-1])
    assert res["n_devices"] == 4
    assert res["shape"] == [12, 6, 2]
    assert len(set(res["shard_devices"])) == 4  # one shard on each of the 4 host devices ...
    assert res["shard_shapes"] == [[3, 6, 2]] * 4  # ... each holding its own quarter of the batch
    assert "batch" in res["spec"]
    assert res["max_diff"] < 1e-12
    # the unsharded batch agrees with independent single rollouts (checked here in the parent)
    q_ref = np.asarray(res["q_ref"])
    plant = wr.rigid_arm(2, masses=(0.8, 0.8))  # rollout 0: first link mass 0.8 kg, kp = 5
    arm = wr.rigid_arm(2)  # the controller's model (nominal masses), as in the script

    rng = np.random.default_rng(0)
    q0 = jnp.asarray(rng.uniform(-1, 1, (12, 2)))
    single = simulate(plant, q0[0], jnp.zeros(2), 0.5, control=PDCompensation(arm, jnp.array([0.5, -0.5]), kp=5.0,
                                                                            kd=3.0), saveat=6, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(q_ref[0], single.q, atol=1e-10)


def test_batch_over_states_matches_loop_and_validates():
    arm = wr.rigid_arm(2)
    q0 = jnp.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]])
    out = batch_simulate(arm, q0, jnp.zeros(2), 0.3, saveat=4, rtol=1e-10, atol=1e-12)
    for i in range(3):
        one = simulate(arm, q0[i], jnp.zeros(2), 0.3, saveat=4, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(out.q[i], one.q, atol=1e-11)
    with pytest.raises(ValueError, match="nothing to batch"):
        batch_simulate(arm, q0[0], jnp.zeros(2), 0.3)
    with pytest.raises(ValueError, match="one batch size"):
        batch_simulate(arm, q0, jnp.zeros((2, 2)), 0.3)
    with pytest.raises(ValueError, match="`q0` must have shape"):
        batch_simulate(arm, jnp.zeros((3, 5)), jnp.zeros(2), 0.3)


def test_chunked_rollouts_equal_one_vmap_and_validate():
    # 5 rollouts in chunks of 2 (two chunks and a remainder of one), batched gains and masses
    arm = wr.rigid_arm(2)
    rng = np.random.default_rng(1)
    q0 = jnp.asarray(rng.uniform(-1, 1, (5, 2)))
    ctrl = eqx.filter_vmap(lambda kp: PDCompensation(arm, jnp.array([0.5, -0.5]), kp=kp, kd=3.0))(
        jnp.linspace(5.0, 20.0, 5))
    chains = eqx.filter_vmap(lambda m: wr.rigid_arm(2, masses=(m, 0.8)))(jnp.linspace(0.8, 1.6, 5))
    kw = dict(saveat=4, rtol=1e-10, atol=1e-12, sharded=False, control=ctrl, batch_chain=True, batch_control=True)
    whole = batch_simulate(chains, q0, jnp.zeros(2), 0.3, chunk=None, **kw)
    chunked = batch_simulate(chains, q0, jnp.zeros(2), 0.3, chunk=2, **kw)
    assert chunked.q.shape == whole.q.shape == (5, 4, 2)
    # the same rollouts; only XLA's rounding may differ between the two programs
    np.testing.assert_allclose(chunked.q, whole.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(chunked.qd, whole.qd, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(chunked.stats["num_steps"], whole.stats["num_steps"])
    last = lambda tree: jax.tree.map(lambda x: x[4] if eqx.is_array(x) else x, tree)  # noqa: E731
    one = simulate(last(chains), q0[4], jnp.zeros(2), 0.3, control=last(ctrl), saveat=4, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(chunked.q[4], one.q, rtol=0, atol=1e-11)  # the remainder's rollout
    for bad in ("all", 0, -3, 2.5, True):
        with pytest.raises(ValueError, match="`chunk` must be"):
            batch_simulate(arm, q0, jnp.zeros(2), 0.3, chunk=bad)


def test_batch_with_a_law_holding_the_chain_matches_single_rollouts():
    """A law that holds the chain's own arrays (its model terms merge with the FD's: the batch's program
    is compiled without XLA's loop hoisting, kane_jax/_shared_jit.py) against single rollouts traced
    inside a caller's jit (the plain program): the same trajectories to 1e-10."""
    arm = wr.rigid_arm(2)
    law = PDCompensation(arm, jnp.array([0.5, -0.5]), kp=5.0, kd=3.0)
    assert shared_arrays(arm, law)
    q0 = jnp.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]])
    kw = dict(control=law, saveat=4, rtol=1e-10, atol=1e-12)
    out = batch_simulate(arm, q0, jnp.zeros(2), 0.3, sharded=False, **kw)
    one = jax.jit(lambda x: simulate(arm, x, jnp.zeros(2), 0.3, **kw).q)
    for i in range(3):
        np.testing.assert_allclose(out.q[i], one(q0[i]), atol=1e-10)
