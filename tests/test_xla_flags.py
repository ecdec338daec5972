"""kane_jax's recommended XLA:CPU flags: merging into ``XLA_FLAGS``, and what they are for — a loop of
forward dynamics compiled as one kernel, with the same numbers.

XLA:CPU compiles a ``while`` loop into one kernel only if it holds no dot, scatter, convolution or
custom call (``docs/architecture.md``, "Whole loops as one kernel"), so the kernels of the rod
bodies, joints and recursion are written without them; the subprocess test checks that property
on a chain of every such body and that the one-kernel loop computes what the default program does.
"""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.algorithms._fd_derivative import forward_dynamics_kernel
from kane_jax.xla_flags import RECOMMENDED_CPU_FLAGS, SMALL_LOOP_BYTES, recommended_xla_flags

OPTION = f"xla_cpu_small_while_loop_byte_threshold={SMALL_LOOP_BYTES}"


def test_recommended_flags_are_added_to_empty_flags():
    assert recommended_xla_flags("").split() == list(RECOMMENDED_CPU_FLAGS)


def test_a_users_flags_win_and_backend_options_merge_into_one_list():
    user = "--xla_cpu_use_fusion_emitters=true --xla_dump_to=/tmp/x --xla_backend_extra_options=foo=1"
    merged = recommended_xla_flags(user).split()
    assert "--xla_cpu_use_fusion_emitters=true" in merged and "--xla_cpu_use_fusion_emitters=false" not in merged
    assert "--xla_dump_to=/tmp/x" in merged
    extra = [p for p in merged if p.startswith("--xla_backend_extra_options=")]
    assert extra == [f"--xla_backend_extra_options=foo=1,{OPTION}"]
    # a threshold the user chose (0 turns the pass off) is kept; merging twice changes nothing
    own = "--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=0"
    assert own in recommended_xla_flags(own).split()
    once = recommended_xla_flags(user)
    assert recommended_xla_flags(once) == once


def test_bad_input_and_late_calls_are_reported(monkeypatch):
    with pytest.raises(TypeError, match="current"):
        recommended_xla_flags(["--xla_cpu_use_fusion_emitters=false"])
    jax.numpy.zeros(1).block_until_ready()  # the backend runs (as in every test process)
    monkeypatch.setenv("XLA_FLAGS", "")
    with pytest.raises(RuntimeError, match="already started"):
        kj.use_recommended_xla_flags()
    assert os.environ["XLA_FLAGS"] == ""  # left as it was


def _rods_chain() -> kj.Chain:
    """A rigid link and every rod body whose kernels are dot-free, behind fixed and screw joints (nq = 12)."""
    link = kj.RigidBody(0.4, com=(0.1, 0.0, 0.0), inertia=jnp.diag(jnp.array([1e-4, 2e-3, 2e-3])),
                        tip=jnp.eye(4).at[0, 3].set(0.2))
    pcs = kj.CosseratPCS(0.15, 0.01, 1000.0, 1e6, damping=0.01, strains=("bend_y", "stretch"), order=3)
    gvs = kj.CosseratGVS(0.15, 0.01, 1000.0, 1e6, basis=kj.LegendreBasis(1), strains=("bend_z",), order=3)
    return kj.Chain([(kj.Revolute((0.0, 0.0, 1.0)), link),
                     (kj.Fixed(), kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01, order=3)),
                     (kj.Fixed(), kj.SpatialConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01, order=3)),
                     (kj.Fixed(), pcs), (kj.Fixed(), gvs),
                     (kj.Prismatic((1.0, 0.0, 0.0)), kj.GodageSection(stiffness=100.0, damping=1.0, order=3))],
                    gravity=(0.3, -9.81, 0.5))


STATE_SEED = 3
N_LOOP = 3

WORKER = r"""
import json, re, sys
sys.path.insert(0, sys.argv[1])
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
import test_xla_flags as T
from kane_jax.algorithms._fd_derivative import forward_dynamics_kernel
chain = T._rods_chain()
q, qd, tau = T._state(chain.nq)
loop = jax.jit(lambda q: jax.lax.fori_loop(0, T.N_LOOP, lambda i, c: T._step(chain, qd, tau, c), (q, 0 * q))[1])
compiled = loop.lower(q).compile()
text = compiled.as_text()
entry = text[text.index("ENTRY"):].split("\n}")[0]
ops = {k: len(re.findall(p, text)) for k, p in
       (("dot", r" dot\("), ("custom", r"custom-call\(|kind=kCustom"), ("scatter", r" scatter\("))}
print(json.dumps({"ops": ops, "one_kernel": "xla_cpu_small_call" in entry and " while(" not in entry,
                  "q": np.asarray(compiled(q)).tolist()}))
"""


def _step(chain, qd, tau, carry):
    """One explicit update of ``q`` and the sum of the forward dynamics met on the way (compared)."""
    q, total = carry
    qdd = forward_dynamics_kernel(chain, q, qd, tau)
    return q + 1e-9 * qdd, total + qdd


def _state(nq):
    rng = np.random.default_rng(STATE_SEED)
    return (jnp.asarray(rng.uniform(-0.1, 0.1, nq)), jnp.asarray(rng.uniform(-1, 1, nq)),
            jnp.asarray(rng.uniform(-0.2, 0.2, nq)))


def test_a_loop_of_rod_forward_dynamics_is_one_kernel_with_the_same_numbers():
    chain = _rods_chain()
    q, qd, tau = _state(chain.nq)
    carry = (q, 0 * q)
    step = jax.jit(lambda c: _step(chain, qd, tau, c))
    for _ in range(N_LOOP):
        carry = step(carry)
    expected = carry[1]
    env = dict(os.environ, XLA_FLAGS=recommended_xla_flags(os.environ.get("XLA_FLAGS", "")))
    proc = subprocess.run([sys.executable, "-c", WORKER, os.path.dirname(__file__)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["ops"] == {"dot": 0, "custom": 0, "scatter": 0}, out["ops"]
    assert out["one_kernel"], "the fori_loop was not compiled into one kernel"
    got = np.asarray(out["q"])
    scale = np.max(np.abs(np.asarray(expected)))
    assert np.all(np.isfinite(got)) and np.max(np.abs(got - np.asarray(expected))) <= 1e-12 * scale
