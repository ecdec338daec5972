"""Control inputs of :func:`kane_jax.simulate`: a constant, ``u(t)`` or a feedback law ``u(t, q, q̇)``.

Every accepted form becomes one law ``(t, q, q̇) -> u``, checked once by shape evaluation, (mapped to
generalized forces by :func:`kane_jax.algorithms.actuation.generalized_input`, ``000_…`` eq. 57).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.extend.core import Var

from .._types import Array, Config


def _arity(fn: Callable) -> int:
    """Number of positional parameters a control callable takes (1: ``u(t)``, 3: ``u(t, q, q̇)``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 3
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        return 3
    required = [p for p in params if p.default is p.empty]
    if len(required) == 1 or len(params) == 1:
        return 1
    if len(params) >= 3:
        return 3
    raise TypeError(f"`control` must be u(t) or u(t, q, qd), got a callable taking {len(params)} arguments.")


def _control_law(control: Any, size: int, dtype) -> Callable[[Array, Config, Config], Array]:
    """Turn ``control`` (None, constant, ``u(t)`` or ``u(t, q, q̇)``) into ``(t, q, q̇) -> u``."""
    if control is None:
        return lambda t, q, qd: jnp.zeros((0,), dtype=dtype)
    if callable(control) and not eqx.is_array(control):
        law = (lambda t, q, qd: control(t)) if _arity(control) == 1 else control
        return lambda t, q, qd: jnp.atleast_1d(jnp.asarray(law(t, q, qd), dtype=dtype))
    value = jnp.asarray(control, dtype=dtype)
    if value.shape != (size,):
        raise ValueError(f"`control` must be a constant of shape ({size},), u(t) or u(t, q, qd); got shape "
                         f"{value.shape}.")
    return lambda t, q, qd: value


@eqx.filter_jit
def _evaluate_law(control: Any, size: int, dtype, t, q, qd) -> Array:
    """``u(t, q, q̇)`` of ``control`` (any accepted form), jitted: a feedback law may hold a whole
    dynamics program (a PFBL), and its checks, the solve's vector field and the inputs reported
    along the trajectory then share one trace of it instead of tracing it once each."""
    return _control_law(control, size, dtype)(t, q, qd)


def reads_state(law: Callable[[Array, Config, Config], Array], nq: int, dtype) -> bool:
    """Whether the law's output depends on ``q`` or ``q̇`` (a feedback law), from its jaxpr.

    Traced once on abstract values (nothing is compiled or evaluated). The data flow is followed
    equation by equation, into jitted calls (``pjit``: a jitted law, such as
    :func:`_evaluate_law`, is read through); any other equation with a sub-program (``scan``,
    ``cond``, …) counts as depending on all its inputs, so the answer errs towards "feedback".
    Constants, ``u(t)`` and open-loop schedules give False.
    """
    t = jax.ShapeDtypeStruct((), dtype)
    x = jax.ShapeDtypeStruct((nq,), dtype)
    jaxpr = jax.make_jaxpr(lambda t, q, qd: law(t, q, qd))(t, x, x).jaxpr
    return any(_tainted_outputs(jaxpr, [False] + [True] * (len(jaxpr.invars) - 1)))


def _tainted_outputs(jaxpr, tainted_inputs: list[bool]) -> list[bool]:
    """Which outputs of ``jaxpr`` depend on its tainted inputs (jitted calls followed inside)."""
    tainted = {v for v, flag in zip(jaxpr.invars, tainted_inputs, strict=True) if flag}
    for eqn in jaxpr.eqns:
        flags = [isinstance(v, Var) and v in tainted for v in eqn.invars]
        if not any(flags):
            continue
        inner = eqn.params.get("jaxpr") if eqn.primitive.name in ("pjit", "jit") else None
        if inner is None:
            tainted.update(eqn.outvars)
        else:
            inner_flags = _tainted_outputs(inner.jaxpr, flags)
            tainted.update(v for v, flag in zip(eqn.outvars, inner_flags, strict=True) if flag)
    return [isinstance(v, Var) and v in tainted for v in jaxpr.outvars]


def checked_control(control: Any, chain, dtype) -> Any:
    """``control`` as :func:`kane_jax.simulate` takes it: None, a constant as an array of ``dtype``, or a
    callable, checked on states of the chain's shape (:func:`_check_law`)."""
    if control is None:
        return None
    if not callable(control):
        control = jnp.asarray(control, dtype=dtype)
    _check_law(control, chain.nu if chain.nu else chain.nq, chain.nq, dtype)
    return control


def _check_law(control, size: int, nq: int, dtype) -> None:
    t = jax.ShapeDtypeStruct((), dtype)
    x = jax.ShapeDtypeStruct((nq,), dtype)
    _control_law(control, size, dtype)  # a constant of the wrong shape fails here, by name
    try:
        out = jax.eval_shape(lambda t, q, qd: _evaluate_law(control, size, dtype, t, q, qd), t, x, x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`control` failed on (t, q, qd) of shapes ((), ({nq},), ({nq},)): {err}") from None
    if out.shape not in ((size,), (0,)):
        raise ValueError(f"`control` must return shape ({size},), got shape {out.shape}.")
