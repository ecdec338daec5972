"""Compile times measured as the run times are: repeated, interleaved, with their spread and their phases.

A compile row compares two libraries' first compile of a program. Measured once per library (as until
2026-12-06) it is one sample of a noisy machine, taken in a fixed order (the first program compiled in a
process also pays JAX's and XLA's one-time set-up). Here each program is compiled ``repeats`` times, the
libraries alternating (a, b, a, b, …), every compile after ``jax.clear_caches()`` (JAX's in-memory trace,
lowering and executable caches emptied, so each is a first compile; a persistent compilation cache must not
be on); the result is the median with min–max, and the median of each phase — trace, lowering, XLA — so
that a compile gap can be read off where it is.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass
class CompileTiming:
    """Seconds of ``jax.jit(fn).trace(*args).lower().compile()``: median, min, max over repeats, and the
    median of each phase."""

    median: float
    min: float
    max: float
    trace: float
    lower: float
    xla: float
    repeats: int

    def fmt(self) -> str:
        from _common import fmt_time

        spread = f" [{fmt_time(self.min)}–{fmt_time(self.max)}]" if self.repeats > 1 else ""
        return (f"{fmt_time(self.median)}{spread} ({fmt_time(self.trace)} + {fmt_time(self.lower)} + "
                f"{fmt_time(self.xla)})")


def compile_interleaved(pairs: Sequence[tuple[Callable, tuple]], *, repeats: int = 1) -> list[CompileTiming]:
    """Compile ``jax.jit(fn)`` for each ``(fn, args)`` ``repeats`` times, interleaved, each after
    ``jax.clear_caches()`` when ``repeats > 1``; the phases timed apart.

    Arguments:
        pairs: the programs, as ``(fn, args)``.
        repeats: compiles of each program (≥ 1).

    Returns:
        One :class:`CompileTiming` per pair, in order.

    Raises:
        ValueError: ``repeats`` below 1.
        RuntimeError: ``repeats`` > 1 with JAX's persistent compilation cache on (the repeats would load
            the first compile's program instead of compiling it).
    """
    import jax

    if repeats < 1:
        raise ValueError(f"repeats: expected at least 1, got {repeats}")
    if repeats > 1 and jax.config.jax_compilation_cache_dir:
        raise RuntimeError("compile_interleaved: JAX's persistent compilation cache is on (jax_compilation_cache_dir="
                           f"{jax.config.jax_compilation_cache_dir!r}); repeated compiles would load from it. Unset "
                           "JAX_COMPILATION_CACHE_DIR, or time one compile per program.")
    samples: list[list[tuple[float, float, float]]] = [[] for _ in pairs]
    for _ in range(repeats):
        for (fn, args), out in zip(pairs, samples):
            if repeats > 1:
                jax.clear_caches()
            t0 = time.perf_counter()
            traced = jax.jit(fn).trace(*args)
            t1 = time.perf_counter()
            lowered = traced.lower()
            t2 = time.perf_counter()
            lowered.compile()
            out.append((t1 - t0, t2 - t1, time.perf_counter() - t2))
    res = []
    for s in samples:
        totals = [sum(x) for x in s]
        res.append(CompileTiming(statistics.median(totals), min(totals), max(totals),
                                 *(statistics.median(x[i] for x in s) for i in range(3)), repeats=len(s)))
    return res
