"""q-derivatives of ID, M and FD for every body type × joint type × 1–3 identical modules (issue: the
XLA:CPU abort of ``jit(jacfwd)`` on chains of identical soft modules on fixed joints).

The default run covers every soft body type on two or three identical modules behind fixed joints
(the aborting case), rigid bodies behind universal joints, the generic body behind revolute joints
and a mixed chain (:func:`derivative_matrix.cases`), in forward and reverse mode (ID and FD; M as well for the
rigid and generic chains); every joint type × 1 and 3 modules (and 2 behind fixed joints; prismatic joints
with rigid bodies only) in both modes, with M, runs with ``-m slow``.

The cases run in a subprocess (``tests/helpers/derivative_matrix.py --serve``, one per test process, started
again after it dies), so an XLA check failure that kills it is reported as a failing test naming the case,
not as a dead worker.
Reference: five-point central differences of the same jitted map (step 2e-4); the forward- and
reverse-mode Jacobians must agree with them to 1e-6 relative to the largest entry (5e-6 for the
mixed chain, see ``RTOL_KIND``), Hessians to 1e-5, and
every value and derivative must be finite at the straight configuration q = 0.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from helpers.derivative_matrix import KINDS, full_cases

WORKER = Path(__file__).resolve().parents[1] / "helpers" / "derivative_matrix.py"
RTOL = 1e-6
# the mixed chain (rigid link, PCS, Godage section, generic body) has forward-dynamics derivatives of
# 8e8 from light, stiff soft sections: there the five-point differences of FD level off at 7e-7-8e-7
# relative for steps 2e-4 and 6e-4 (the FD values' own round-off through an ill-conditioned M),
# while the ID part of the same Jacobian converges as h² to 1.2e-9 (measured 2026-11-22)
RTOL_KIND = {"mixed": 5e-6}


class _Worker:
    """The process that runs the cases (``derivative_matrix.py --serve``), one per test process for all the
    body types it is handed: its imports and JAX's start-up (≈ 2–3 s) are paid once, not per body type.
    Started again after it dies, so a crash still fails only the body type it happened in."""

    def __init__(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(WORKER.parents[1]), os.environ.get("PYTHONPATH", "")]))
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, str(WORKER), "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)  # end of output: the process ended

    def request(self, args: list[str]) -> tuple[list[str], bool]:
        """The lines answering ``args``, and whether the process finished them (False: it died)."""
        self.proc.stdin.write(" ".join(args) + "\n")
        self.proc.stdin.flush()
        out = []
        while True:
            try:
                line = self.lines.get(timeout=1500)
            except queue.Empty:
                self.proc.kill()
                return out, False
            if line is None or line == "DONE":
                return out, line == "DONE"
            out.append(line)

    def error_tail(self) -> str:
        self.proc.wait(timeout=60)
        self.stderr.seek(0)
        return self.stderr.read()[-3000:]


_WORKER: list[_Worker] = []


def _run(kind: str, *extra: str) -> list[dict]:
    if not _WORKER or _WORKER[0].proc.poll() is not None:
        _WORKER[:] = [_Worker()]
    worker = _WORKER[0]
    lines, finished = worker.request([kind, *extra])
    started = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("START ")]
    results = [json.loads(ln.split(" ", 1)[1]) for ln in lines if ln.startswith("RESULT ")]
    if not finished:
        case = started[-1] if started else "(before the first case)"
        _WORKER.clear()
        tail = worker.error_tail()
        pytest.fail(f"the worker died (exit {worker.proc.poll()}) in case {case}:\n{tail}")
    if "--all" in extra:  # the slow run's long requests: a process each, as many cases as before in one process
        _stop_workers()
    assert len(results) == len(started) and results
    return results


def _stop_workers():
    for worker in _WORKER:
        worker.proc.stdin.close()  # its loop over requests ends
        worker.proc.wait(timeout=60)
    _WORKER.clear()


@pytest.fixture(scope="module", autouse=True)
def _stop_worker():
    yield
    _stop_workers()


HESSIAN_KINDS = ("pcc", "body")  # ID q-Hessians (forward over forward) as well


@pytest.mark.parametrize("kind", KINDS)
def test_derivatives_match_central_differences(kind):
    results = _run(kind, *(["--hessian"] if kind in HESSIAN_KINDS else []))
    tol = RTOL_KIND.get(kind, RTOL)
    for r in results:
        assert r["finite_at_rest"], r
        assert r["fwd"] < tol and r["rev"] < tol, r
        if kind in HESSIAN_KINDS:
            assert r["hess"] < 1e-5, r


# the slow cases longest first, so that pytest-xdist, which hands them out in this order, does not
# start the longest last (by the default run's durations of each body type, 2026-11-28: LVP 105 s,
# variable radius 66 s, …, rigid 23 s)
SLOW_ORDER = ("lvp", "variable_radius", "pcc", "body", "gvs", "pcs", "learned", "godage", "spatial_cc", "rigid")


@pytest.mark.slow
@pytest.mark.parametrize("kind", SLOW_ORDER)
def test_every_joint_and_count(kind):
    """Each joint type × 1 and 3 identical modules, and 2 behind fixed joints, forward and reverse
    mode, ID, M and FD (:func:`derivative_matrix.full_cases`: prismatic joints with rigid bodies
    only, where they differ from revolute ones by more than a constant; heavy: ``-m slow``). 12 cases
    per body type until 2026-11-28, when CI's run of them had grown to within 2 min of its 90-min
    limit; 7 for the soft and generic bodies and 9 for the rigid ones since."""
    results = _run(kind, "--all")
    assert [r["case"] for r in results] == [f"{kind}/{j}/{c}" for j, c in full_cases(kind)]
    for r in results:
        assert r["finite_at_rest"], r
        assert r["fwd"] < RTOL and r["rev"] < RTOL, r


def test_the_slow_set_covers_every_body_type():
    assert sorted(SLOW_ORDER) == sorted(k for k in KINDS if k != "mixed")


def test_reported_reproduction_runs():
    """The issue's own snippet (two bend-only PCS segments on fixed joints, jit(jacfwd) of the ID)."""
    code = """
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
import kane_jax as kj
seg = lambda: kj.CosseratPCS(length=0.15, radius=0.01, strains=("bend_y",))
ch = kj.Chain([(kj.Fixed(), seg()), (kj.Fixed(), seg())], gravity=(0.0, 0.0, -9.81))
q = qd = 0.3 * jnp.ones(ch.nq)
f = lambda q: kj.inverse_dynamics(ch, q, qd, jnp.zeros(ch.nq))
jac = jax.jit(jax.jacfwd(f))(q)
eye = jnp.eye(ch.nq)
fd = jnp.stack([(f(q + 1e-6 * e) - f(q - 1e-6 * e)) / 2e-6 for e in eye], axis=1)
print(float(jnp.max(jnp.abs(jac - fd)) / jnp.max(jnp.abs(fd))))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert float(proc.stdout.strip().splitlines()[-1]) < 1e-6
