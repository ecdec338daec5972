"""The ``kane-jax`` command: list, run with a bad name, demo with a short time (in-process main)."""

import os
import re
import subprocess
import sys
import types

import pytest

from kane_jax.__main__ import main
from kane_jax.simulation import _stored


@pytest.fixture(autouse=True)
def _store_off_after_each_test():
    """``main`` turns the lowered-program store on for its process; this worker's later tests run without it."""
    yield
    _stored.disable()


def test_list_prints_every_scenario(capsys):
    from kane_jax.scenarios import SCENARIOS

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == len(SCENARIOS)
    for name in SCENARIOS:
        assert name in out


def test_bad_scenario_name_exits_nonzero_with_one_line_message():
    proc = subprocess.run([sys.executable, "-m", "kane_jax", "run", "no-such-scenario"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    errors = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert len(errors) == 1 and "no-such-scenario" in errors[0]


def test_bad_option_exits_nonzero(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "demo", "--t1", "not-a-number"])
    assert exc.value.code == 2


def test_demo_short_writes_its_files(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "")  # keep the test process's XLA configuration as it is
    assert main(["demo", "--t1", "0.2", "--out", str(tmp_path), "--html"]) == 0
    out = capsys.readouterr().out
    assert "real-time factor" in out and "wall time" in out and str(tmp_path) in out
    for name in ("demo_configuration.png", "demo_stroboscopic.png", "demo.gif"):
        path = tmp_path / name
        assert path.stat().st_size > 1000, name
    # the 3-D view: offline page (plotly.js inside), one frame per saved state (151), each moving the
    # rigid link, the two soft segments and their material points (traces 0-4)
    html = (tmp_path / "view.html").read_text()
    assert f"3-D view: {tmp_path / 'view.html'}" in out
    assert 'class="plotly-graph-div"' in html and re.search(r"plotly\.js v\d", html)
    assert html.count('"traces":[0,1,2,3,4]') == 151


def _fake_scenario(n_motions: int):
    """A stand-in for a scenario module that "simulates" ``n_motions`` motions of a one-link arm (what
    ``timed_simulate`` records, without the compile; the demo test above goes through it)."""
    import helpers.robots as wr
    import jax.numpy as jnp

    from kane_jax import Trajectory
    from kane_jax.scenarios import _common

    def run(t1=None, out_dir=None):
        os.makedirs(out_dir, exist_ok=True)
        arm = wr.rigid_arm(1)
        for k in range(n_motions):
            q = jnp.linspace(0.0, 0.3 * (k + 1), 3)[:, None]
            _common._RECORDED.get().append((arm, Trajectory(jnp.linspace(0, 0.1, 3), q, q, q[:, :0], 0, {})))
        return {"name": "demo", "description": "fake", "wall_s": 0.0}

    return types.SimpleNamespace(run=run)


def test_html_writes_one_view_per_simulated_motion(tmp_path, capsys, monkeypatch):
    from kane_jax import scenarios
    from kane_jax.scenarios import _common

    monkeypatch.setenv("XLA_FLAGS", "")
    monkeypatch.setattr(scenarios, "load", lambda name: _fake_scenario(2))
    assert main(["run", "demo", "--out", str(tmp_path), "--html"]) == 0
    assert _common._RECORDED.get() is None  # recording stops with the run
    out = capsys.readouterr().out
    for name, title in (("view.html", "demo (1\\u002f2)"), ("view_2.html", "demo (2\\u002f2)")):  # "/" escaped
        html = (tmp_path / name).read_text()
        assert f"3-D view: {tmp_path / name}" in out
        assert html.count('"traces":[0]') == 3 and f'"title":{{"text":"{title}"}}' in html


def test_html_without_a_simulated_motion_fails_with_one_line(tmp_path, capsys, monkeypatch):
    from kane_jax import scenarios

    monkeypatch.setenv("XLA_FLAGS", "")
    monkeypatch.setattr(scenarios, "load", lambda name: _fake_scenario(0))
    assert main(["run", "demo", "--out", str(tmp_path), "--html"]) == 1
    err = capsys.readouterr().err
    assert err.count("error") == 1 and "simulates no chain trajectory" in err
    assert not (tmp_path / "view.html").exists()


def test_xla_flags_are_set_before_the_scenario_module_loads(tmp_path, monkeypatch):
    """A scenario module may start JAX's backend on import (array constants), after which XLA_FLAGS is
    no longer read: the command sets its recommended flags first (000-sim1 once ran without them)."""
    from kane_jax import scenarios
    from kane_jax.xla_flags import RECOMMENDED_CPU_FLAGS

    seen = []

    def load(name):
        seen.append(os.environ.get("XLA_FLAGS", ""))
        return _fake_scenario(1)

    monkeypatch.setenv("XLA_FLAGS", "")
    monkeypatch.setattr(scenarios, "load", load)
    assert main(["run", "demo", "--out", str(tmp_path), "--no-cache"]) == 0
    assert len(seen) == 1
    for flag in RECOMMENDED_CPU_FLAGS:
        assert flag in seen[0], (flag, seen[0])
