"""The one recursion helper: a scan over the modules of a chain (base to tip or tip to base)."""

from __future__ import annotations

from typing import Callable, TypeVar

import jax

Carry = TypeVar("Carry")
X = TypeVar("X")
Y = TypeVar("Y")


def scan_modules(
    step: Callable[[Carry, X], tuple[Carry, Y]], init: Carry, xs: X, *, reverse: bool = False, unroll: int = 1
) -> tuple[Carry, Y]:
    """Run ``step`` over the leading (module) axis of ``xs``; ``reverse=True`` goes tip to base.

    A thin wrapper around :func:`jax.lax.scan` so that every recursion in the library is traced
    once whatever the number of modules.
    """
    return jax.lax.scan(step, init, xs, reverse=reverse, unroll=unroll)
