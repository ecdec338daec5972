"""``shared_leaves_jit``: ``equinox.filter_jit`` that hands each distinct array to XLA once.

A simulation's arguments often hold the same arrays several times: the chain, and a control law
that keeps its own reference to the chain (a PFBL, its actuation reference, a ``PullOnly`` wrapper
around it: four copies in ``003-sim1``). ``jit`` makes every leaf its own parameter of the
compiled program, so XLA cannot see that the law's actuation matrix and mass matrix are the very
ones the vector field computes next to them, and computes each again. Passed once, the copies are
one parameter, and XLA's common-subexpression elimination merges the duplicated work: the
vector field of ``003-sim1`` (PFBL in ``PullOnly``, FD of the 24-coordinate chain) runs in 4.2 ms
instead of 9.3 ms and compiles in 46 s instead of 65 s (measured 2026-11-27, `docs/architecture.md`).

Inside a loop (a diffrax solve) that merge needs one more thing: XLA's loop-invariant code motion
runs before its common-subexpression elimination and hoists each copy's invariant part apart, after
which the copies can no longer be merged. ``merge_in_loops`` compiles the calls it selects without
that hoisting (:func:`kane_jax.xla_flags.without_loop_hoisting`): those whose law holds the chain's
own arrays (:func:`shared_arrays`), where duplicated model terms are expected. Elsewhere the
hoisting pays: ``004-godage``'s open-loop solve ran 0.77–0.86 s with it and 0.97–0.99 s without.

Leaves are the same when they are the same Python object (``id``); equal values in different
arrays stay apart. Same compiled program for the same structure and the same pattern of sharing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import equinox as eqx
import jax

from ._dispatch import _eager
from .xla_flags import without_loop_hoisting, without_passes

F = TypeVar("F", bound=Callable[..., Any])


def shared_arrays(a: Any, b: Any) -> bool:
    """Whether the pytrees ``a`` and ``b`` hold a common array leaf (the same object)."""
    ids = {id(x) for x in jax.tree.leaves(a) if eqx.is_array(x)}
    return any(id(x) in ids for x in jax.tree.leaves(b) if eqx.is_array(x))


def distinct_leaves(leaves: list) -> tuple[list, tuple[int, ...]]:
    """Each distinct object of ``leaves`` once (by ``id``, in order of first appearance), and for every
    leaf its position among them: ``leaves[k] is unique[index[k]]``."""
    first: dict[int, int] = {}
    unique: list = []
    index = []
    for x in leaves:
        i = first.setdefault(id(x), len(unique))
        if i == len(unique):
            unique.append(x)
        index.append(i)
    return unique, tuple(index)


def loop_merge_options() -> dict[str, str] | None:
    """The compile options of a program whose identical work in loops is to be merged: XLA's
    loop-invariant code motion off (:func:`kane_jax.xla_flags.without_loop_hoisting`, read when called:
    ``XLA_FLAGS`` may be set after kane_jax is imported) on the CPU; ``None`` on other backends."""
    return without_loop_hoisting() if jax.default_backend() == "cpu" else None


def cheap_code_options() -> dict:
    """XLA:CPU's cheapest compile, for a program called a few times, whose compile is most of its cost: LLVM
    without its expensive optimizations, and without the first of the two identical simplification pipelines
    and the reshape mover (the test suite's choices, ``tests/conftest.py``: the same operations, less
    optimized machine code). ``spectral_radius`` of ``003-sim2``'s closed loop: 10.5 → 8.7 s with the
    last two, 12.8 s with none (pinned, 2026-12-05)."""
    return {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True,
            **without_passes(("simplification", "reshape-mover"))}


def shared_leaves_jit(fn: F, *, merge_in_loops: Callable[..., bool] | None = None, cheap: bool = False) -> F:
    """``eqx.filter_jit(fn)`` with repeated array leaves of the arguments passed once.

    Arguments:
        fn: a function of pytrees, jitted by ``equinox.filter_jit``'s rule (arrays traced, every
            other leaf static).
        merge_in_loops: optional predicate of a call's arguments (``fn``'s signature); where it is
            true and JAX's backend is the CPU, that call's program is compiled without XLA's
            loop-invariant code motion, so that identical work in a loop body is merged (a feedback
            law's model terms and the forward dynamics'). Its own compiled program, cached apart.
            Only for calls outside any transformation: inside a caller's ``jit``, ``grad`` or
            ``vmap`` the caller's program decides (pass the options to its ``jax.jit``).
        cheap: compile called programs (outside transformations, on the CPU) with :func:`cheap_code_options`.

    Returns:
        The compiled function, same signature, docstring and results as ``eqx.filter_jit(fn)``.
    """

    def inner(unique, index, treedef, static):
        dynamic = jax.tree.unflatten(treedef, [unique[i] for i in index])
        args, kwargs = eqx.combine(dynamic, static)
        return fn(*args, **kwargs)

    # the compiled program is named after `fn` (logs, profiles, the persistent cache's file names)
    inner.__name__, inner.__qualname__ = fn.__name__, fn.__qualname__
    plain = eqx.filter_jit(inner)

    @functools.cache
    def without_hoisting(disabled: str):
        return eqx.filter_jit(inner, compiler_options={"xla_disable_hlo_passes": disabled})

    @functools.cache
    def cheaply(options: tuple):
        return eqx.filter_jit(inner, compiler_options=dict(options))

    @functools.wraps(fn)
    def call(*args, **kwargs):
        dynamic, static = eqx.partition((args, kwargs), eqx.is_array)
        leaves, treedef = jax.tree.flatten(dynamic)
        unique, index = distinct_leaves(leaves)
        jitted = plain
        if cheap and _eager() and jax.default_backend() == "cpu":
            jitted = cheaply(tuple(sorted(cheap_code_options().items())))
        # compile options belong to a top-level program only: under a transformation (a caller's jit,
        # grad, vmap; also one that closes over concrete arrays) the caller's program decides (JAX
        # rejects them on a nested jit)
        if merge_in_loops is not None and _eager() and merge_in_loops(*args, **kwargs):
            options = loop_merge_options()
            if options is not None:
                jitted = without_hoisting(options["xla_disable_hlo_passes"])
        return jitted(unique, tuple(index), treedef, static)

    return call  # type: ignore[return-value]
