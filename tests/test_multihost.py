"""Multi-process batch rollouts: two JAX processes on localhost against one process.

Two workers (``helpers/multihost_worker.py``) join a ``jax.distributed`` system whose coordinator
listens on 127.0.0.1 (loopback only), each with two CPU devices, and run the same batch with
:func:`kane_jax.batch_simulate`, sharded over the four devices of both processes; the test
compares what they gathered with the plain single-process ``vmap`` of the same batch.
"""

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "helpers" / "multihost_worker.py"
TIMEOUT_S = 180  # measured ≈ 25 s for the whole test on the 2-core VM


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_workers(tmp_path, n: int):
    port = _free_port()
    path = [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join(path).rstrip(os.pathsep))
    procs = []
    for i in range(n):
        log = open(tmp_path / f"worker{i}.log", "w")  # closed in _finish
        procs.append((subprocess.Popen([sys.executable, str(WORKER), str(port), str(i), str(n),
                                        str(tmp_path / f"out{i}.npz")], cwd=ROOT, env=env, stdout=log,
                                       stderr=subprocess.STDOUT), log))
    return procs


def _finish(procs, tmp_path) -> list[int]:
    """Wait for every worker (bounded); kill the ones still running; return the exit codes."""
    codes = []
    try:
        for proc, _ in procs:
            codes.append(proc.wait(timeout=TIMEOUT_S))
    finally:
        for proc, log in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
            log.close()
    return codes


def test_two_processes_gather_the_single_process_batch(tmp_path):
    from helpers.multihost_worker import B, batch, rollouts

    procs = _start_workers(tmp_path, 2)
    try:
        # the reference, computed meanwhile in this process: the plain vmap on one device
        ref1, ref2 = rollouts(*batch(), sharded=False)
        ref = {"q1": ref1.q, "qd1": ref1.qd, "q2": ref2.q, "qd2": ref2.qd}
    finally:
        codes = _finish(procs, tmp_path)
    logs = [(tmp_path / f"worker{i}.log").read_text()[-3000:] for i in range(2)]
    assert codes == [0, 0], logs
    assert np.all(np.isfinite(ref["q2"])) and float(np.ptp(ref["q2"][:, :, 0])) > 0.1  # a real motion
    for i in range(2):
        res = np.load(tmp_path / f"out{i}.npz")
        assert int(res["n_devices"]) == 4 and int(res["n_local"]) == 2
        # the batch was split: this process holds (and computed) only its own half of the rows ...
        assert not bool(res["fully_addressable"])
        assert res["local_rows"].tolist() == [[4 * i, 4 * i + 2], [4 * i + 2, 4 * i + 4]]
        np.testing.assert_allclose(res["local_q"], ref["q2"][4 * i:4 * i + 4], rtol=0, atol=1e-12)
        # ... and the gathered batch (both halves of the rollouts) equals the single-process one
        for name, value in ref.items():
            assert res[name].shape == (B, 5, 2)
            np.testing.assert_allclose(res[name], value, rtol=0, atol=1e-12, err_msg=f"process {i}, {name}")
