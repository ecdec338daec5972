"""How the rods' exponential jets are compiled: a nested ``jit``, inline under second derivatives."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import jax
from jax._src import core as _jax_core
from jax._src.interpreters import ad as _jax_ad

from ._dispatch import _STAGING_TRACES, _bottom_trace, _eager

F = TypeVar("F", bound=Callable[..., Any])


def kernel_jit(fn: F | None = None, **options: Any) -> F:
    """``jax.jit`` for the rods' exponential jets (``_exp_jets``): a nested ``jit``, traced once per argument
    shape and transformed as one program, except under two or more levels of differentiation
    (:func:`_derivative_depth`), where it runs inline.

    JAX transforms a nested ``jit`` by re-tracing its program at every level (``jvp_jaxpr``,
    ``batch_jaxpr``, and the custom JVP rules of its series once more per level); inline, each operation
    passes through the stack once. Measured (2026-12-05, pinned, the tests' XLA flags): the full q-Hessian
    (``jacfwd(jacfwd(·))``) of the ID of two planar CC segments and a learned body traces in 4.6–4.8 s
    inline against 7.4–7.8 s nested, of its FD in 4.5–4.8 against 6.5–6.8 s, the same XLA compile; but one
    level (the derivative matrix's ``jacfwd`` of a PCS rod's ID and FD) traced in 0.95–1.05 s inline
    against 0.78–0.88 s nested. The small kernels (``_small``, ``lie``) stay nested everywhere: inline
    under the Hessian as well, its trace shrank by another 0.4 s but its lowering grew by as much.

    Arguments:
        fn: the kernel (``None``: return the decorator, for ``@kernel_jit(static_argnames=...)``).
        options: ``jax.jit``'s keyword arguments.

    Returns:
        The kernel, same signature and docstring.
    """
    if fn is None:
        return functools.partial(kernel_jit, **options)  # type: ignore[return-value]
    jitted = jax.jit(fn, **options)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if not _eager() and _derivative_depth() >= 2:
            return fn(*args, **kwargs)
        return jitted(*args, **kwargs)

    return call  # type: ignore[return-value]


def _derivative_depth() -> int:
    """How many differentiation levels (forward-mode ``JVPTrace``s, reverse mode's ``LinearizeTrace``s) the
    current trace stack holds above a ``jit`` being staged; 0 where the stack runs eagerly (an ``EvalTrace``
    below it, :func:`~kane_jax._dispatch._bottom_trace`: inline code would execute operation by operation)
    or where JAX's private names moved."""
    trace = getattr(getattr(_jax_core, "trace_ctx", None), "trace", None)
    if trace is None or len(_STAGING_TRACES) != 2:
        return 0
    bottom = _bottom_trace(trace)
    if not isinstance(bottom, _STAGING_TRACES[1]):
        return 0
    depth = 0
    while trace is not bottom:
        depth += isinstance(trace, _DIFFERENTIATING_TRACES)
        trace = trace.parent_trace
    return depth


_DIFFERENTIATING_TRACES = tuple(t for t in (getattr(_jax_ad, "JVPTrace", None),
                                            getattr(_jax_ad, "LinearizeTrace", None)) if t is not None)
