"""A past revision of kane_jax, importable beside the working tree's, for same-process comparisons.

``load(rev)`` extracts the ``kane_jax`` package of git revision ``rev`` (``git archive``) into a
temporary folder as the package ``kane_jax_<rev>`` and imports it. Both versions then run in one
process, their repeats interleaved (``_common.time_jit_interleaved``): on a shared machine whose
speed drifts between minutes, two processes run at different times do not measure a ratio.
The package's own modules import each other relatively; the few absolute ``kane_jax.`` imports
(the Euler–Lagrange reference) are rewritten to the new name.
"""

from __future__ import annotations

import importlib
import io
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load(rev: str):
    """Import revision ``rev``'s ``kane_jax`` as ``kane_jax_<short hash>`` (a module object).

    Raises:
        ValueError: ``rev`` is not a revision of this repository.
    """
    try:
        short = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", f"{rev}^{{commit}}"], check=True,
                               capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError as err:
        raise ValueError(f"baseline: {rev!r} is not a revision of {REPO}: {err.stderr.strip()}") from None
    name = f"kane_jax_{short}"
    if name in sys.modules:
        return sys.modules[name]
    root = Path(tempfile.mkdtemp(prefix="kane_jax_baseline_"))
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", short, "kane_jax"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as t:
        t.extractall(root, filter="data")
    (root / "kane_jax").rename(root / name)
    for path in (root / name).rglob("*.py"):
        text = path.read_text()
        new = re.sub(r"\b(from|import) kane_jax\b", rf"\1 {name}", text)
        if new != text:
            path.write_text(new)
    sys.path.insert(0, str(root))
    return importlib.import_module(name)
