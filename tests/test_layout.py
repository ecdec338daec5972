"""The package's layout rules (``docs/architecture.md``, CONTRIBUTING): files of at most 300 lines, no
import cycles between the package's files, no private names in the user-facing docs.

These are read from the source text, so they hold for every platform and need no JAX.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kane_jax"
MAX_LINES = 300


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """Package modules that ``name`` imports anywhere in its text (function bodies included), except
    under ``if TYPE_CHECKING:``."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rsplit(".", 1)[0]
                full = (base + ("." + node.module if node.module else "")) if node.level else (node.module or "")
                out.update(m for m in [full, *(full + "." + a.name for a in node.names)] if m in mods)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in mods)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    visit([child])

    visit(ast.parse(path.read_text()).body)
    return out


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in edges:
        if v not in index:
            connect(v)
    return found


def test_no_package_file_over_300_lines():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"files over {MAX_LINES} lines: {long}"


def test_no_import_cycles_between_package_files():
    mods = _modules()
    # a package's __init__ only re-exports its files; the files themselves must not import in a circle
    files = {n: p for n, p in mods.items() if p.name != "__init__.py"}
    edges = {n: {m for m in _imports(n, p, mods) if m in files} for n, p in files.items()}
    assert sum(len(e) for e in edges.values()) > 100  # the checker sees the package's imports
    assert _cycles(edges) == []


def test_cycle_checker_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_names_in_user_docs():
    private = re.compile(r"\b(?:kj|kane_jax(?:\.[a-z_]+)*)\._[a-z]")
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "notebooks").glob("*.ipynb"))]
    hits = {str(p.relative_to(ROOT)): private.findall(p.read_text()) for p in docs if p.exists()}
    assert len(hits) >= 3
    assert {k: v for k, v in hits.items() if v} == {}
