"""JAX's persistent compilation cache for applications built on kane_jax (the ``kane-jax`` command,
the notebooks, user scripts).

The library never changes JAX's global configuration on import; an application calls
:func:`enable_compilation_cache` once, before its first compile, and every later run of the same
program (same JAX/XLA version, flags, shapes and dtypes) loads its executables from disk instead of
compiling them again. Physical parameters are array leaves, so new parameter values hit the cache.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_VAR = "KANE_JAX_CACHE_DIR"


def default_cache_dir() -> Path:
    """The per-user cache folder: ``$KANE_JAX_CACHE_DIR`` if set, else the platform's cache folder.

    Returns:
        ``$KANE_JAX_CACHE_DIR``; otherwise ``$XDG_CACHE_HOME/kane_jax/jax`` (``~/.cache`` when
        unset) on Linux, ``~/Library/Caches/kane_jax/jax`` on macOS and
        ``%LOCALAPPDATA%\\kane_jax\\jax`` on Windows.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kane_jax" / "jax"


def _folder(path: str | os.PathLike | None, default: Path, what: str) -> Path:
    folder = Path(path).expanduser() if path is not None else default
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"path: expected a folder for {what}, got the file {str(folder)!r}")
    return folder


def enable_compilation_cache(path: str | os.PathLike | None = None, *, min_compile_time_s: float = 0.5) -> Path:
    """Turn on JAX's persistent compilation cache (changes JAX's global configuration).

    Arguments:
        path: the cache folder, created if missing (default :func:`default_cache_dir`).
        min_compile_time_s: only programs that took at least this long to compile are written
            (small programs compile faster than they load).

    Returns:
        The cache folder in use.

    Raises:
        ValueError: if ``min_compile_time_s`` is negative or ``path`` exists and is not a folder.
    """
    if not min_compile_time_s >= 0:
        raise ValueError(f"min_compile_time_s: expected a non-negative number of seconds, got {min_compile_time_s!r}")
    folder = _folder(path, default_cache_dir(), "the compilation cache")
    folder.mkdir(parents=True, exist_ok=True)
    import jax

    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_time_s))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


def enable_lowered_store(path: str | os.PathLike | None = None) -> Path:
    """Keep :func:`kane_jax.simulate`'s lowered programs (and those of the scenarios' statics) on disk,
    so a later run skips their trace.

    The persistent compilation cache skips XLA's compile, not JAX's trace and lowering, which are
    most of a second run's compile time (the demo's solve 2.1–2.7 s with the cache, 0.64 s with its
    lowered program read back; ``docs/architecture.md``). A program is stored under a key of
    everything that shapes it — this package's source, the libraries' versions, ``XLA_FLAGS``, the
    arguments' structure, shapes and values — and a call whose arguments hold a value that cannot be
    hashed by what it means (a user's function) takes the usual path. Beyond 256 MiB the programs
    used longest ago are removed when the store is turned on. Changes no JAX configuration.

    Arguments:
        path: the folder (created if missing); default ``kane_jax_lowered`` in :func:`default_cache_dir`.

    Returns:
        The folder in use.

    Raises:
        ValueError: if ``path`` exists and is not a folder.
    """
    from .simulation import _stored

    return _stored.enable(_folder(path, default_cache_dir() / "kane_jax_lowered", "the lowered programs"))
