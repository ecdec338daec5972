"""A pytest plugin that records where each test's time goes inside JAX (opt-in, never loaded by default).

Run ``KANE_JAX_TEST_PROFILE=/tmp/prof PYTHONPATH=tests python -m pytest -p helpers.profile_plugin``
from the repository root (``-p`` plugins load before ``pyproject.toml``'s ``pythonpath`` applies).
Every process (the xdist workers too) appends one JSON line per test to
``$KANE_JAX_TEST_PROFILE/<worker>.jsonl``: wall and process CPU seconds, and the totals of JAX's
monitoring events during the test — tracing (``jaxpr_trace_duration``), lowering
(``jaxpr_to_mlir_module_duration``), XLA compilation (``backend_compile_duration``, with the
number of compiles) and the persistent cache's hits and misses. The controller prints the totals
and the longest tests at the end. Tests that run in a subprocess (the derivative matrix, notebooks,
the command line) show their wall time only.
"""

from __future__ import annotations

import collections
import json
import os
import time
from pathlib import Path

import jax
import pytest

_FOLDER = os.environ.get("KANE_JAX_TEST_PROFILE")
_EVENTS = {"trace_s": "/jax/core/compile/jaxpr_trace_duration",
           "lower_s": "/jax/core/compile/jaxpr_to_mlir_module_duration",
           "compile_s": "/jax/core/compile/backend_compile_duration"}
_CACHE = {"cache_hits": "/jax/compilation_cache/cache_hits", "cache_misses": "/jax/compilation_cache/cache_misses"}
_current: dict[str, float] = collections.defaultdict(float)


def _on_duration(name: str, seconds: float, **_) -> None:
    for key, event in _EVENTS.items():
        if name == event:
            _current[key] += seconds
            if key == "compile_s":
                _current["compiles"] += 1


def _on_event(name: str, **_) -> None:
    for key, event in _CACHE.items():
        if name == event:
            _current[key] += 1


if _FOLDER:
    jax.monitoring.register_event_duration_secs_listener(_on_duration)
    jax.monitoring.register_event_listener(_on_event)


def pytest_configure(config):
    """The controller (run before any xdist worker starts) drops an earlier run's rows."""
    if _FOLDER and not os.environ.get("PYTEST_XDIST_WORKER"):
        for old in Path(_FOLDER).glob("*.jsonl"):
            old.unlink()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _FOLDER:
        yield
        return
    _current.clear()
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    row = {"test": item.nodeid, "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, **_current}
    folder = Path(_FOLDER)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a") as fh:
        fh.write(json.dumps(row) + "\n")


def pytest_terminal_summary(terminalreporter):
    if not _FOLDER or os.environ.get("PYTEST_XDIST_WORKER") or not Path(_FOLDER).is_dir():
        return
    rows = [json.loads(line) for f in sorted(Path(_FOLDER).glob("*.jsonl")) for line in f.read_text().splitlines()]
    keys = ("wall_s", "cpu_s", "trace_s", "lower_s", "compile_s", "compiles", "cache_hits", "cache_misses")
    totals = {k: sum(r.get(k, 0.0) for r in rows) for k in keys}
    write = terminalreporter.write_line
    write(f"JAX profile of {len(rows)} tests (rows in {_FOLDER}): "
          + ", ".join(f"{k} {v:.0f}" for k, v in totals.items()))
    for r in sorted(rows, key=lambda r: -r["wall_s"])[:25]:
        write(f"  {r['wall_s']:7.1f} s  trace {r.get('trace_s', 0):6.1f}  lower {r.get('lower_s', 0):5.1f}  "
              f"compile {r.get('compile_s', 0):6.1f} ({int(r.get('compiles', 0))})  {r['test']}")
