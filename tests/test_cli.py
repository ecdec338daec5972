"""The ``kane-jax`` command: list, run with a bad name, demo with a short time (in-process main)."""

import subprocess
import sys

import pytest

from kane_jax.__main__ import main


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
    assert main(["demo", "--t1", "0.2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "real-time factor" in out and "wall time" in out and str(tmp_path) in out
    for name in ("demo_configuration.png", "demo_stroboscopic.png", "demo.gif"):
        path = tmp_path / name
        assert path.stat().st_size > 1000, name
