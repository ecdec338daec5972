"""The short form of every benchmark script runs (so the benchmarks cannot rot).

Each script's ``main(["--quick", "--out", <tmp>])`` runs in-process; it must finish, print its
tables and write a markdown file whose tables hold measured numbers. Scripts whose peer library is
not installed are skipped (``pytest.importorskip``). The quick forms compile a handful of functions
each and leave out the diffrax simulations (the costliest compiles); those run in the ``slow`` test
below (``pytest -m slow``).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path

import pytest

from kane_jax.xla_flags import RECOMMENDED_CPU_FLAGS

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

SCRIPTS = {
    "bench_rigid_vs_pinocchio": ("pinocchio", "mujoco"),
    "bench_soft_vs_soromox": ("soromox",),
    "bench_recursive_vs_el": (),
    "bench_scaling": (),
    "bench_papers": (),
    "bench_gpu": (),
    "bench_call_latency": ("pinocchio",),
}


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_quick_form_runs(name, tmp_path, capsys):
    for peer in SCRIPTS[name]:
        pytest.importorskip(peer)
    out = tmp_path / f"{name}.md"
    assert _load(name).main(["--quick", "--repeats", "2", "--out", str(out)]) == 0
    text = out.read_text()
    printed = capsys.readouterr().out
    # conditions and at least one table with a measured time in it
    assert "| jax / jaxlib |" in text and "| dtype |" in text
    assert "### " in text and "### " in printed
    times = re.findall(r"\d+(?:\.\d+)? (?:ns|µs|ms|s)\b", text)
    assert times, f"no measured time in {out}:\n{text}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bench_soft_vs_soromox", "bench_papers"])
def test_quick_form_with_simulations_runs(name, tmp_path):
    for peer in SCRIPTS[name]:
        pytest.importorskip(peer)
    out = tmp_path / f"{name}.md"
    assert _load(name).main(["--quick", "--sim", "--repeats", "1", "--out", str(out)]) == 0
    text = out.read_text()
    # the simulation rows: SoRoMoX's Tsit5 comparison, the Godage arm's real-time factor
    assert {"bench_soft_vs_soromox": "sim-s", "bench_papers": "× real time ("}[name] in text, text


def test_recommended_flags_option_sets_both_flags(monkeypatch):
    """``--recommended-flags`` adds both recommended flags (the fusion flag alone left a Tsit5 loop
    2.7x slower, 2026-11-29); a flag the caller set is kept."""
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    common = _load("_common")
    args = common.parse_args("x", ["--recommended-flags"])
    assert common.results_name("x", args) == "x_recommended_flags"  # its results file apart
    flags = os.environ["XLA_FLAGS"].split()
    assert "--xla_cpu_enable_fast_math=false" in flags
    assert all(f in flags for f in RECOMMENDED_CPU_FLAGS), flags
    monkeypatch.setenv("XLA_FLAGS", "")
    args = common.parse_args("x", ["--no-fusion-emitters"])
    assert os.environ["XLA_FLAGS"].split() == [common.FUSION_FLAG]
    assert common.results_name("x", args) == "x_no_fusion_emitters"
