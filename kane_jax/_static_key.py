"""A key for a program from everything that decides it, hashed by value; ``None`` when unsure.

Used by the lowered-program store (:mod:`kane_jax.simulation._stored`): a program stored under
the key of one call may serve a later process only if nothing that shapes the program can differ.
The key covers the package's own source, the versions of the libraries that trace and compile it,
``XLA_FLAGS`` and JAX's precision settings, the backend, and the call's arguments: the pytree's
node types and auxiliary data, the arrays' shapes, dtypes and which leaves are the same array, and
every other leaf by value. Values are hashed only where their value is all there is to them
(numbers, strings, NumPy arrays by their bytes, containers and dataclasses of those, the package's
and its dependencies' functions and classes by name, whose code the versions and the source hash
cover; closures by their code and captured values). Anything else — a user's
function, which may call other user code by global name — makes the key ``None``: no store.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import os
import sys
import types
from pathlib import Path
from typing import Any

import jax
import numpy as np

from ._shared_jit import distinct_leaves

# code from these packages is covered by their versions (or, for kane_jax, its source hash)
_KNOWN = ("kane_jax", "jax", "jaxlib", "numpy", "diffrax", "equinox", "optimistix", "lineax", "optax", "qpax",
          "jaxtyping", "builtins")
_VERSIONED = ("jax", "jaxlib", "numpy", "diffrax", "equinox", "optimistix", "lineax", "optax", "qpax")


class _Unsure(Exception):
    """A value whose hash could not stand for its meaning."""


def _known_module(name: str | None, *, builtins: bool = True) -> bool:
    root = (name or "").split(".")[0]
    return root in _KNOWN and (builtins or root != "builtins")


def _code(code: types.CodeType) -> tuple:
    consts = tuple(_code(c) if isinstance(c, types.CodeType) else _value(c, 0) for c in code.co_consts)
    return ("code", code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars)


def _value(x: Any, depth: int) -> Any:  # noqa: C901  (one branch per kind of value)
    if depth > 60:
        raise _Unsure("too deep")
    d = depth + 1
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return (type(x).__name__, repr(x))
    if isinstance(x, jax.Array):  # a concrete array held as a static value: by its bytes
        if isinstance(x, jax.core.Tracer):
            raise _Unsure("a tracer")
        x = np.asarray(x)
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.ascontiguousarray(x)
        return ("ndarray", a.dtype.str, a.shape, hashlib.sha256(a.tobytes()).hexdigest())
    if isinstance(x, np.dtype):
        return ("dtype", x.str)
    if isinstance(x, enum.Enum):
        return ("enum", _value(type(x), d), x.name)
    if isinstance(x, type):
        if not _known_module(x.__module__):
            raise _Unsure(f"class {x.__qualname__} of {x.__module__}")
        return ("type", x.__module__, x.__qualname__)
    if isinstance(x, functools.partial):
        return ("partial", _value(x.func, d), _value(x.args, d), _value(x.keywords, d))
    if isinstance(x, types.MethodType):
        return ("method", _value(x.__func__, d), _value(x.__self__, d))
    if isinstance(x, types.FunctionType):
        if not _known_module(x.__module__, builtins=False):
            raise _Unsure(f"function {x.__qualname__} of {x.__module__}")
        if "<locals>" not in x.__qualname__ and not x.__closure__:
            return ("function", x.__module__, x.__qualname__)  # its code: the source hash or the versions
        cells = tuple(_value(c.cell_contents, d) for c in (x.__closure__ or ()))
        return ("closure", x.__module__, x.__qualname__, _code(x.__code__), _value(x.__defaults__, d),
                _value(x.__kwdefaults__, d), cells)
    if isinstance(x, (types.BuiltinFunctionType, np.ufunc)):
        return ("builtin", getattr(x, "__module__", None), getattr(x, "__qualname__", getattr(x, "__name__", "")))
    if isinstance(x, (tuple, list)):
        return ("seq", _value(type(x), d), tuple(_value(e, d) for e in x))
    if isinstance(x, dict):
        items = [(_value(k, d), _value(v, d)) for k, v in x.items()]
        return ("dict", _value(type(x), d), tuple(sorted(items, key=repr)))
    if isinstance(x, (set, frozenset)):
        return ("set", tuple(sorted((_value(e, d) for e in x), key=repr)))
    if dataclasses.is_dataclass(x):
        return ("dataclass", _value(type(x), d),
                tuple((f.name, _value(getattr(x, f.name), d)) for f in dataclasses.fields(x)))
    if _known_module(type(x).__module__, builtins=False):
        # a dependency's plain object: a record (its attributes by value) or a stateless sentinel
        # (equinox's ``Missing``: its repr)
        state = getattr(x, "__dict__", None)
        slots = [n for c in type(x).__mro__ for n in getattr(c, "__slots__", ()) if hasattr(x, n)]
        if state or slots:
            return ("object", _value(type(x), d), _value(dict(state or {}), d),
                    tuple((n, _value(getattr(x, n), d)) for n in slots))
        return ("object", _value(type(x), d), repr(x))
    raise _Unsure(f"value of type {type(x).__qualname__}")


def _treedef(treedef: Any, depth: int = 0) -> Any:
    if depth > 200:
        raise _Unsure("tree too deep")
    data = treedef.node_data()
    node = None if data is None else (_value(data[0], 0), _value(data[1], 0))
    return (node, tuple(_treedef(c, depth + 1) for c in treedef.children()))


@functools.cache
def _environment() -> str:
    """The package's source, the libraries' versions, the flags and the backend, hashed once per process."""
    import importlib.metadata as md

    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    for name in _VERSIONED:
        try:
            h.update(f"{name}={md.version(name)}".encode())
        except md.PackageNotFoundError:
            h.update(f"{name}=none".encode())
    h.update(sys.version.encode())
    h.update(os.environ.get("XLA_FLAGS", "").encode())
    for flag in ("jax_enable_x64", "jax_default_matmul_precision", "jax_numpy_rank_promotion", "jax_platforms"):
        h.update(f"{flag}={getattr(jax.config, flag, None)}".encode())
    device = jax.devices()[0]
    h.update(f"{device.platform}:{device.device_kind}:{jax.device_count()}".encode())
    return h.hexdigest()


def program_key(name: str, args: tuple, is_array) -> tuple[str, list, tuple[int, ...]] | None:
    """The key of ``name`` called with ``args``, with the distinct array leaves and how they map.

    Arguments:
        name: the program's name (part of the key).
        args: the call's arguments, a pytree.
        is_array: which leaves are traced arrays (``equinox.is_array``).

    Returns:
        ``(key, unique_arrays, index)``: the hex key; the array leaves, each distinct array once; for
        every array leaf in order, its position in ``unique_arrays``. ``None`` where a value cannot
        be hashed by what it means (see the module docstring).
    """
    leaves, treedef = jax.tree.flatten(args)
    unique, index = distinct_leaves([x for x in leaves if is_array(x)])
    positions = iter(index)
    try:
        parts = [("array", tuple(x.shape), str(x.dtype), bool(getattr(x, "weak_type", False)), next(positions))
                 if is_array(x) else _value(x, 0) for x in leaves]
        tree = _treedef(treedef)
    except _Unsure:
        return None
    h = hashlib.sha256()
    h.update(_environment().encode())
    h.update(name.encode())
    h.update(repr((tree, tuple(parts))).encode())
    return h.hexdigest(), unique, index
