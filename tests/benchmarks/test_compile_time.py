"""The benchmarks' repeated compile timing (``benchmarks/_compile_time.py``): every repeat a first compile.

Reference: JAX's own count of XLA compiles (``jax.monitoring``'s backend-compile events) — each repeat of
each program must be one, not a cache hit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.experimental.compilation_cache.compilation_cache import reset_cache

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def compile_time(monkeypatch):
    if str(BENCH) not in sys.path:
        monkeypatch.syspath_prepend(str(BENCH))
    import _compile_time

    return _compile_time


@pytest.fixture
def no_persistent_cache():
    """The test session's persistent cache off for the test (repeats must compile, not load): JAX decides
    once per process whether to use it, so the decision is reset on the way in and out."""
    folder = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", None)
    reset_cache()
    yield
    jax.config.update("jax_compilation_cache_dir", folder)
    reset_cache()


def test_every_repeat_compiles_each_program(compile_time, no_persistent_cache):
    """Each repeat lowers and compiles each program anew, even one that has run already (its executable
    in JAX's caches: without clearing them, a later compile of it was measured as none)."""
    counts = {"lower": 0, "xla": 0}

    def on_duration(event, duration, **_):
        if event == "/jax/core/compile/jaxpr_to_mlir_module_duration":
            counts["lower"] += 1
        if event == "/jax/core/compile/backend_compile_duration":
            counts["xla"] += 1

    inner = jax.jit(lambda v: jnp.cos(v) + v)  # a nested jit, whose trace JAX caches as well
    x = jnp.linspace(0.0, 1.0, 5)
    pairs = [(lambda v: inner(v) * v, (x,)), (lambda v: jnp.cumsum(v) - 1.0, (x,))]
    for fn, args in pairs:
        jax.block_until_ready(jax.jit(fn)(*args))
    jax.monitoring.register_event_duration_secs_listener(on_duration)
    try:
        res = compile_time.compile_interleaved(pairs, repeats=3)
    finally:
        jax.monitoring.unregister_event_duration_listener(on_duration)
    assert counts == {"lower": 6, "xla": 6}  # 3 repeats × 2 programs, every one lowered and compiled
    for r in res:
        assert r.repeats == 3
        assert 0 < r.min <= r.median <= r.max
        assert r.trace > 0 and r.lower > 0 and r.xla > 0


def test_bad_repeats_and_a_persistent_cache(compile_time, no_persistent_cache, tmp_path):
    pair = [(lambda v: v + 1.0, (jnp.ones(3),))]
    with pytest.raises(ValueError, match="repeats"):
        compile_time.compile_interleaved(pair, repeats=0)
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    with pytest.raises(RuntimeError, match="persistent compilation cache"):
        compile_time.compile_interleaved(pair, repeats=2)
    assert compile_time.compile_interleaved(pair, repeats=1)[0].repeats == 1  # one compile: allowed
