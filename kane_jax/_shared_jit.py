"""``shared_leaves_jit``: ``equinox.filter_jit`` that hands each distinct array to XLA once.

A simulation's arguments often hold the same arrays several times: the chain, and a control law
that keeps its own reference to the chain (a PFBL, its actuation reference, a ``PullOnly`` wrapper
around it: four copies in ``003-sim1``). ``jit`` makes every leaf its own parameter of the
compiled program, so XLA cannot see that the law's actuation matrix and mass matrix are the very
ones the vector field computes next to them, and computes each again. Passed once, the copies are
one parameter, and XLA's common-subexpression elimination merges the duplicated work: the
vector field of ``003-sim1`` (PFBL in ``PullOnly``, FD of the 24-coordinate chain) runs in 4.2 ms
instead of 9.3 ms and compiles in 46 s instead of 65 s (measured 2026-11-27, `docs/architecture.md`).

Leaves are the same when they are the same Python object (``id``); equal values in different
arrays stay apart. Same compiled program for the same structure and the same pattern of sharing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import equinox as eqx
import jax

F = TypeVar("F", bound=Callable[..., Any])


def shared_leaves_jit(fn: F) -> F:
    """``eqx.filter_jit(fn)`` with repeated array leaves of the arguments passed once.

    Arguments:
        fn: a function of pytrees, jitted by ``equinox.filter_jit``'s rule (arrays traced, every
            other leaf static).

    Returns:
        The compiled function, same signature, docstring and results as ``eqx.filter_jit(fn)``.
    """

    def inner(unique, index, treedef, static):
        dynamic = jax.tree.unflatten(treedef, [unique[i] for i in index])
        args, kwargs = eqx.combine(dynamic, static)
        return fn(*args, **kwargs)

    # the compiled program is named after `fn` (logs, profiles, the persistent cache's file names)
    inner.__name__, inner.__qualname__ = fn.__name__, fn.__qualname__
    inner = eqx.filter_jit(inner)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        dynamic, static = eqx.partition((args, kwargs), eqx.is_array)
        leaves, treedef = jax.tree.flatten(dynamic)
        first: dict[int, int] = {}
        unique, index = [], []
        for x in leaves:
            i = first.setdefault(id(x), len(unique))
            if i == len(unique):
                unique.append(x)
            index.append(i)
        return inner(unique, tuple(index), treedef, static)

    return call  # type: ignore[return-value]
