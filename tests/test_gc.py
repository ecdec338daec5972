"""``_gc``: the collector's thresholds, set by the command and the tests, never by importing the library."""

import gc
import subprocess
import sys

from kane_jax._gc import MIDDLE, OLD, YOUNG, collect_less_often


def test_collect_less_often_sets_and_returns_the_thresholds():
    before = gc.get_threshold()
    try:
        previous = collect_less_often()
        assert previous == before
        assert gc.get_threshold() == (YOUNG, MIDDLE, OLD)
    finally:
        gc.set_threshold(*before)


def test_importing_the_library_leaves_the_collector_alone():
    code = "import gc; t = gc.get_threshold(); import kane_jax, kane_jax.algorithms; print(t == gc.get_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "True", out.stderr[-2000:]
