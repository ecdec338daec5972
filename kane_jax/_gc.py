"""Python's cyclic garbage collector run less often while JAX traces, for applications and the tests.

Tracing allocates millions of short-lived Python objects (tracers, equations, abstract values), and
CPython runs a young-generation collection every 700 net allocations by default, and older ones
after every 10 of those: a cyclic collection walks every container object of its generations. In a
trace of the derivative matrix's programs (``jit(jacrev)`` of ID and FD, 32,559 equations for two
LVP modules) that is 10–25 % of the time: ``jax.jit(jax.jacrev(f)).trace(q).lower()`` 9.6–12.2 →
9.6–11.2 s (LVP),
7.2–7.4 → 5.7–6.3 s (PCS), 9.8–12.1 → 6.9–9.6 s (the mixed chain), and the ``jacfwd`` programs
5.8–6.5 → 3.7–4.9 / 2.3–2.6 → 2.1–2.5 / 3.0–3.4 → 2.2–3.3 s (one pinned process, caches cleared,
three rounds alternating, 2026-12-02). A ``perf`` profile of ``kane-jax run 003-sim2`` had 5.5 %
of its samples in the collector. With the young generation at :data:`YOUNG` objects the same
garbage is collected in fewer, larger passes; the memory it holds meanwhile is a few MB.

The library never calls this (it never changes a process's global state on import); the
``kane-jax`` command and the test suite (``tests/conftest.py``, the derivative matrix's workers) do.
"""

from __future__ import annotations

import gc

YOUNG = 50_000  # objects allocated (net) between young-generation collections (CPython: 700)
MIDDLE = 20  # young collections between middle-generation ones (CPython: 10)
OLD = 100  # middle collections between full ones (CPython: 10)


def collect_less_often() -> tuple[int, int, int]:
    """Set the collector's thresholds to ``(YOUNG, MIDDLE, OLD)`` (a process-wide setting).

    Returns:
        The previous thresholds, for ``gc.set_threshold(*previous)``.
    """
    previous = gc.get_threshold()
    gc.set_threshold(YOUNG, MIDDLE, OLD)
    return previous
