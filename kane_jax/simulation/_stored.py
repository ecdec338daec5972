"""Lowered simulation programs kept on disk, so that a later process skips their trace (``jax.export``).

JAX's persistent compilation cache skips XLA's compile on a second run, not JAX's trace and
lowering of the program, which then take most of what is left: the demo's solve 2.1–2.7 s on a
second run with the cache, of which 0.64 s when its lowered program is read back instead
(``docs/architecture.md``, *A stored lowering*). Off unless an application turns it on
(:func:`kane_jax.compilation_cache.enable_lowered_store`; the ``kane-jax`` command does, beside the
compilation cache).

A program is stored under :func:`kane_jax._static_key.program_key` of its call, which covers
everything that shapes it; where a value cannot be hashed by what it means (a user's function),
there is no key and the call takes the usual path. A program compiled with options of its own (the
solves whose law holds the chain's arrays, compiled without loop hoisting: ``_shared_jit``) is
stored the same way and read back under a key that holds those options: they are XLA's, applied
when the read-back program is compiled, not part of the stored lowering. :func:`stored_jit` gives
the same to any function of arrays that returns arrays (the statics of paper ``003_…``'s
Simulation 1). Turned on, the store removes the programs used longest ago beyond
:data:`MAX_BYTES`; a program that cannot be exported is not tried again in the same process.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

import diffrax
import equinox as eqx
import jax

from .._dispatch import _eager
from .._static_key import program_key
from .trajectory import Trajectory

_FOLDER: list[Path] = []  # the store's folder while it is on
_CALLERS: dict[str, Any] = {}  # key -> the jitted call of its exported program, once per process
_FAILED: set[str] = set()  # keys whose program could not be exported: not traced again in this process
# the store's size: beyond it, the programs used longest ago are removed when it is turned on (a
# stored program is 0.2-0.6 MB; every change of the package's source makes new keys)
MAX_BYTES = 256 * 2**20


def enable(folder: str | os.PathLike) -> Path:
    """Store lowered simulation programs in ``folder`` (created if missing); returns it."""
    path = Path(folder).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    _FOLDER[:] = [path]
    prune(path, MAX_BYTES)
    return path


def disable() -> None:
    """Stop storing and reading lowered programs (those already read stay in this process)."""
    _FOLDER.clear()
    _CALLERS.clear()
    _FAILED.clear()


def prune(folder: Path, max_bytes: int) -> list[Path]:
    """Remove the programs used longest ago (their files' modification times: set when a program is
    stored or read) until those left take at most ``max_bytes``; returns the removed files."""
    files = []
    for file in folder.glob("*.jaxexport"):
        try:
            stat = file.stat()
        except OSError:  # removed meanwhile by another process
            continue
        files.append((stat.st_mtime, stat.st_size, file))
    files.sort(key=lambda f: f[0], reverse=True)  # the most recently used first
    removed, total = [], 0
    for _, size, file in files:
        total += size
        if total > max_bytes:
            file.unlink(missing_ok=True)
            removed.append(file)
    return removed


def _parts(traj: Trajectory) -> tuple:
    """A trajectory as standard containers of arrays (what an exported program can return)."""
    (result,) = jax.tree.leaves(traj.result)
    return traj.ts, traj.q, traj.qd, traj.u, result, dict(traj.stats), traj.nonfinite_at


def _trajectory(parts: tuple) -> Trajectory:
    ts, q, qd, u, result, stats, nonfinite_at = parts
    result = jax.tree.unflatten(jax.tree.structure(diffrax.RESULTS.successful), [result])
    return Trajectory(ts, q, qd, u, result, stats, nonfinite_at)


def _load_or_export(key: str, fn, args: tuple, unique: list, index: tuple[int, ...], options: dict | None):
    from jax import export

    file = _FOLDER[0] / f"{key}.jaxexport"
    if file.exists():
        try:
            caller = jax.jit(export.deserialize(bytearray(file.read_bytes())).call, compiler_options=options)
            os.utime(file)  # used now: kept longest by `prune`
            return caller
        except Exception:  # noqa: BLE001  (a damaged or foreign file: store it again)
            file.unlink(missing_ok=True)
    dynamic, static = eqx.partition(args, eqx.is_array)
    treedef = jax.tree.structure(dynamic)

    def flat(*arrays):
        leaves = [arrays[i] for i in index]
        return fn(*eqx.combine(jax.tree.unflatten(treedef, leaves), static))

    jitted = jax.jit(flat)
    try:
        exported = export.export(jitted)(*unique)
    except ValueError:
        # custom calls without JAX's compatibility guarantee (LAPACK's QR in lineax's least squares):
        # the key holds jaxlib's version, so the same jaxlib that wrote the program reads it back
        targets = sorted(set(re.findall(r"custom_call @([\w.]+)", jitted.lower(*unique).as_text())))
        checks = [export.DisabledSafetyCheck.custom_call(t) for t in targets]
        exported = export.export(jitted, disabled_checks=checks)(*unique)
    tmp = file.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(exported.serialize())
    os.replace(tmp, file)  # atomic: a concurrent reader sees the whole file or none
    return jax.jit(exported.call, compiler_options=options)


def call_arrays(name: str, fn, args: tuple, *, compiler_options: dict[str, str] | None = None):
    """``fn(*args)`` through its stored program, storing it first if needed; ``None`` for the usual path.

    Arguments:
        name: the program's name (part of its key).
        fn: the plain (not jitted) function; it returns arrays in tuples, lists and dicts.
        args: its arguments; arrays are traced, every other leaf is part of the program.
        compiler_options: XLA options for compiling the program (part of the key), as
            ``jax.jit(..., compiler_options=...)`` takes them.

    Returns:
        ``fn(*args)``, or ``None`` when the store is off, the call has no key, or exporting fails (a
        host callback, an unsupported operation): the caller then calls ``fn`` its usual way.
    """
    if not _FOLDER:
        return None
    options = dict(sorted((compiler_options or {}).items())) or None
    found = program_key(f"{name} {options}" if options else name, args, eqx.is_array)
    if found is None:
        return None
    key, unique, index = found
    caller = _CALLERS.get(key)
    if caller is None:
        if key in _FAILED:
            return None
        try:
            caller = _load_or_export(key, fn, args, unique, index, options)
        except Exception:  # noqa: BLE001  (not exportable: the usual path, which works or raises itself)
            _FAILED.add(key)
            return None
        _CALLERS[key] = caller
    return caller(*unique)


def call(name: str, fn, args: tuple, *, compiler_options: dict[str, str] | None = None) -> Trajectory | None:
    """:func:`call_arrays` for a function ``fn`` that returns a :class:`Trajectory`."""
    parts = call_arrays(name, lambda *a: _parts(fn(*a)), args, compiler_options=compiler_options)
    return None if parts is None else _trajectory(parts)


def stored_jit(fn):
    """Decorator: ``equinox.filter_jit(fn)``, through the store (:func:`call_arrays`) when it is on.

    For the package's own functions of arrays and static values that return arrays in standard
    containers: the function's module and qualified name stand for it in the key, whose hash of the
    package's source covers its code (a function from elsewhere is not covered). Called under a
    transformation (a caller's ``jit``, ``grad``, ``vmap``), without a key, while the store is off,
    or where the program cannot be exported (a host callback), it is ``equinox.filter_jit(fn)`` itself.
    """
    jitted = eqx.filter_jit(fn)
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def stored(*args, **kwargs):
        out = call_arrays(name, lambda a, k: fn(*a, **k), (args, kwargs)) if _eager() else None
        return jitted(*args, **kwargs) if out is None else out

    return stored
