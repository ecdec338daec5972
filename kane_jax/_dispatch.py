"""How the public entry points are compiled: ``equinox.filter_jit``'s rule at ``jax.jit``'s dispatch cost.

The entry points take the chain as an argument, so a new parameter value (a mass, a stiffness)
does not recompile: the array leaves of the arguments are traced, everything else (the chain's
structure, a user's geometry function, Python numbers, ``None`` options) is static and selects the
compiled program. That is ``equinox.filter_jit``'s rule, which this module keeps; what it changes
is the price of a call. ``filter_jit`` partitions the argument pytrees with ``eqx.partition`` and
re-hashes their static parts on every call: ≈ 130 µs of Python per call on the 2-core CPU,
measured on the 7-DoF arm's inverse dynamics (161 µs per call, of which the compiled program is
≈ 30 µs). Here one ``jax.tree.flatten`` splits the leaves, the static ones and the tree definition
key a dictionary of ``jax.jit`` functions of the array leaves alone, and ``jax.jit``'s C++ fast
path does the rest.

Under a transformation (``jit``, ``vmap``, ``grad``) the same function is traced inline, as
``filter_jit``'s would be.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import equinox as eqx
import jax

F = TypeVar("F", bound=Callable[..., Any])


def _rebuild(treedef, mask: tuple[bool, ...], static: tuple, dynamic: list) -> tuple[tuple, dict]:
    it = iter(dynamic)
    leaves = [next(it) if m else s for m, s in zip(mask, static)]
    return jax.tree.unflatten(treedef, leaves)


def entry_jit(fn: F) -> F:
    """Compile ``fn`` once per argument structure, tracing only array leaves (``filter_jit``'s rule).

    Arguments:
        fn: a function of pytrees (the chain first) whose outputs are arrays.

    Returns:
        The compiled function, same signature and docstring. Arguments whose static leaves cannot be
        hashed (unusual user data) fall back to ``equinox.filter_jit``.
    """
    compiled: dict[Any, Callable] = {}
    fallback = eqx.filter_jit(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        leaves, treedef = jax.tree.flatten((args, kwargs))
        mask = tuple(eqx.is_array(x) for x in leaves)
        static = tuple(None if m else x for m, x in zip(mask, leaves))
        key = (treedef, mask, static)
        try:
            jitted = compiled.get(key)
        except TypeError:  # an unhashable static leaf
            return fallback(*args, **kwargs)
        if jitted is None:
            def run(dynamic, treedef=treedef, mask=mask, static=static):
                a, k = _rebuild(treedef, mask, static, dynamic)
                return fn(*a, **k)

            jitted = compiled[key] = jax.jit(run)
        return jitted([x for m, x in zip(mask, leaves) if m])

    return call  # type: ignore[return-value]
