"""kj.enable_compilation_cache: programs compiled in one process load from disk in the next."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import pytest

import kane_jax as kj

PROGRAM = """
import sys
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
hits = []
jax.monitoring.register_event_listener(lambda name, **kw: hits.append(name) if "cache_hits" in name else None)
import kane_jax as kj
assert not jax.config.jax_compilation_cache_dir, "importing kane_jax changed JAX's configuration"
print("DIR", kj.enable_compilation_cache(sys.argv[1], min_compile_time_s=0.0))
chain = kj.Chain([(kj.Fixed(), kj.CosseratPCS(0.2, 0.01, strains=("bend_y", "stretch")))], gravity=(0.0, 0.0, -9.81))
q = 0.1 * jnp.ones(chain.nq)
tau = jax.jit(lambda q: kj.inverse_dynamics(chain, q, q, q))(q)
# an eager simulate, fixed and adaptive steps: its program holds no host callback (the save times and the
# step are checked on the host, not by diffrax inside the program), so JAX caches it
traj = kj.simulate(chain, q, 0 * q, 0.01, n_save=2, adaptive=False, dt0=1e-3)
adaptive = kj.simulate(chain, q, 0 * q, 0.01, n_save=3, dt0=1e-3)
# an eager equilibrium with throw=True: the failure check runs on the host, so its program is cached too
eq = kj.equilibrium(chain, jnp.zeros(chain.nq), 0 * q)
print("VALUE", repr(float(tau[0])), repr(float(traj.q[-1, 0])), repr(float(adaptive.q[-1, 0])), repr(float(eq.q[0])))
print("HITS", len(hits))
"""


def _run(folder) -> dict:
    # a clean environment: the suite's own cache (tests/conftest.py) must not leak in
    env = {k: v for k, v in os.environ.items() if k != "KANE_JAX_CACHE_DIR" and not k.startswith("JAX_PERSISTENT")
           and k != "JAX_COMPILATION_CACHE_DIR"}
    proc = subprocess.run([sys.executable, "-c", PROGRAM, str(folder)], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)


def test_second_process_loads_from_the_cache(tmp_path):
    folder = tmp_path / "cache"
    first = _run(folder)
    written = sorted(p.name for p in folder.iterdir())
    assert written, first
    # the equilibrium's Newton program (statics._solve) and both simulations (simulate._rollout) are among
    # them: no host callback in them
    assert any(name.startswith("jit__solve-") for name in written), written
    assert sum(name.startswith("jit__rollout-") for name in written) == 2, written
    second = _run(folder)
    # (a program compiled twice inside the first process may already hit what it wrote)
    assert int(second["HITS"]) >= int(first["HITS"]) + 4, (first, second)  # ID, equilibrium, two simulations
    assert second["VALUE"] == first["VALUE"]  # the same program, bit for bit


def test_bad_arguments_are_named(tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("")
    with pytest.raises(ValueError, match="path: expected a folder"):
        kj.enable_compilation_cache(a_file)
    with pytest.raises(ValueError, match="min_compile_time_s"):
        kj.enable_compilation_cache(tmp_path, min_compile_time_s=-1.0)


def test_default_folder_follows_the_environment(monkeypatch, tmp_path):
    from kane_jax.compilation_cache import default_cache_dir

    before = jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("KANE_JAX_CACHE_DIR", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x"
    monkeypatch.delenv("KANE_JAX_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert default_cache_dir() == tmp_path / "kane_jax" / "jax"
    assert jax.config.jax_compilation_cache_dir == before  # nothing above changed the configuration
