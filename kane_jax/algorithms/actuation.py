"""Actuation by virtual work at the chain level: ``Q_a = A(q)ᵀ u`` with ``A = ∂h/∂q`` (paper ``000_…`` eq. 57).

Every actuator (:mod:`kane_jax.actuation`) exposes work coordinates ``h(q)`` conjugate to its
inputs; the chain's are concatenated in the order of ``chain.actuators``. Kernels
(:func:`work_coordinates`, :func:`input_matrix`, :func:`input_force`, :func:`generalized_input`)
serve the controllers, the statics and the simulation; :func:`actuation_matrix` and
:func:`actuation_force` are the validated entry points.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp

from .._dispatch import entry_jit
from .._modules import map_grouped, structure_key
from .._types import Array, Config, Float


def work_coordinates(chain, q: Config) -> Float[Array, " nu"]:
    """All actuators' work coordinates ``h(q)``, concatenated in the order of ``chain.actuators``.

    Actuators that differ only in their parameters (the three tendons of one body, say) are
    evaluated by one ``vmap``: one trace of the body's geometry instead of one per actuator. So are
    module-local actuators (``local_module()``: a body's chambers, a tendon within one body) of the
    same kind on identical modules, whatever the module: 000-sim1's chambers in three equal
    sections, 003-sim1's nine tendons in three equal bodies.
    """
    if not chain.actuators:
        return jnp.zeros((0,), dtype=q.dtype)
    return jnp.concatenate(_per_actuator(chain, q, lambda h: h(q), lambda h, qm: h(qm)))


def input_matrix(chain, q: Config) -> Float[Array, "nq nu"]:
    """``B(q) = A(q)ᵀ = (∂h/∂q)ᵀ`` (kernel of :func:`actuation_matrix`).

    A module-local actuator's rows are its module's coordinates only: its block is the forward-mode
    Jacobian with respect to those (``003-sim1``'s tendons: 8 tangents each instead of the chain's
    24), padded to the chain's rows; other actuators' columns are the Jacobian over all of ``q``.
    """
    if not chain.actuators:
        return jnp.zeros((chain.nq, 0), dtype=q.dtype)
    blocks = _per_actuator(chain, q, lambda h: _jacobian(h, q).T, lambda h, qm: _jacobian(h, qm).T)
    cols = []
    for a, block in zip(chain.actuators, blocks):
        m = a.local_module()
        if m is not None:  # (n_m, nu) rows of module m, zero elsewhere
            rows = chain.coordinate_slice(m)
            block = jnp.pad(block, ((rows.start, chain.nq - rows.stop), (0, 0)))
        cols.append(block)
    return jnp.concatenate(cols, axis=1)


def _jacobian(h, x: Array) -> Array:
    """``∂h/∂x`` in the cheaper mode: reverse (one pullback per output) when ``h`` has fewer
    outputs than inputs (a tendon's length of its body's coordinates), forward otherwise."""
    out = jax.eval_shape(h, x)
    return jax.jacrev(h)(x) if out.size < x.size else jax.jacfwd(h)(x)


def _local_and_reverse(chain, actuator) -> bool:
    """Whether ``actuator`` is one input acting within one module of more coordinates (a tendon in its
    body): its block of :func:`input_matrix` is then one pullback, as its share of a vector–Jacobian
    product is. (Two chambers of one body would take two pullbacks for ``B u`` against one:
    ``000-sim1``'s simulation 1.58–1.61 → 1.98–1.99 s, measured, so they keep the product.)"""
    m = actuator.local_module()
    return m is not None and m < chain.n_modules and actuator.nu == 1 < chain.layout.module_nq[m]


def _per_actuator(chain, q: Config, on_chain, on_module) -> list[Array]:
    """``on_chain(h)`` or ``on_module(h, q_m)`` for each actuator, in the order of ``chain.actuators``.

    ``h`` is the actuator's work-coordinate map: of the chain's ``q`` for ordinary actuators
    (grouped by structure), of its module's ``q_m`` for module-local ones (grouped with the module
    index left out, :func:`_local_key`; ``on_module`` runs under the group's ``vmap``, so it must
    not depend on which module).
    """
    acts = list(chain.actuators)
    local = [i for i, a in enumerate(acts) if a.local_module() is not None]
    other = [i for i, a in enumerate(acts) if a.local_module() is None]
    out: list = [None] * len(acts)
    for i, r in zip(other, map_grouped([acts[i] for i in other],
                                       lambda a: on_chain(lambda x: a.work_coordinates(chain, x)))):
        out[i] = r
    items = []
    for i in local:
        m = acts[i].local_module()
        if m >= chain.n_modules:
            raise ValueError(f"{type(acts[i]).__name__} (actuators[{i}]) acts on module {m}, out of range for "
                             f"{chain.n_modules} modules.")
        items.append((acts[i], *chain.module(m), q[chain.coordinate_slice(m)]))

    def one(item):
        a, joint, body, qm = item

        def h(x):
            return a.module_work_coordinates(joint, body, x)

        return on_module(h, qm)

    for i, r in zip(local, map_grouped(items, one, key=_local_key)):
        out[i] = r
    return out


def _local_key(item) -> tuple:
    """Group key of ``(actuator, joint, body, q_module)``: the whole structure but the module index."""
    act, *module = item
    names = {f.name for f in dataclasses.fields(act) if f.metadata.get("static", False)}
    static = tuple((n, getattr(act, n)) for n in sorted(names - {"module", "modules"}))
    arrays = tuple((tuple(x.shape), str(x.dtype)) for x in jax.tree.leaves(eqx.filter(act, eqx.is_array)))
    key = (type(act), static, arrays, structure_key(tuple(module)))
    try:
        hash(key)
    except TypeError:
        return ("unique", id(act))
    return key


def input_force(chain, q: Config, u: Float[Array, " nu"]) -> Config:
    """``Q_a = A(q)ᵀ u`` (kernel of :func:`actuation_force`): one vector–Jacobian product, or
    ``B(q) u`` when every actuator is one input within one module (tendons in their bodies) —
    :func:`input_matrix` then takes one pullback per actuator as well, and a
    controller that forms ``B(q)`` itself (a PFBL, ``PullOnly``) shares it within one program."""
    u = u.astype(jnp.result_type(q, u))
    if all(_local_and_reverse(chain, a) for a in chain.actuators):
        return input_matrix(chain, q) @ u
    _, vjp = jax.vjp(lambda x: work_coordinates(chain, x), q)
    return vjp(u)[0]


def generalized_input(chain, q: Config, u: Array) -> Config:
    """``Q_a = A(q)ᵀ u`` through the chain's actuators, ``u`` itself when ``chain.nu == 0``, zeros for no input."""
    if u.shape == (0,):
        return jnp.zeros_like(q)
    if chain.nu == 0:
        return u
    return input_force(chain, q, u)


@entry_jit
def actuation_matrix(chain, q: Config) -> Float[Array, "nq nu"]:
    """The matrix ``B(q) = A(q)ᵀ = (∂h/∂q)ᵀ`` mapping inputs to generalized forces, ``Q_a = B u``.

    Arguments:
        chain: a chain built with ``actuators=[...]``. q: configuration ``(nq,)``.

    Returns:
        ``(nq, nu)`` matrix (``nu = chain.nu``).

    Raises:
        ValueError: ``q`` of the wrong shape.
    """
    return input_matrix(chain, chain.check_state(q, "q"))


@entry_jit
def actuation_force(chain, q: Config, u: Float[Array, " nu"]) -> Config:
    """Generalized actuation force ``Q_a = A(q)ᵀ u`` (paper ``000_…`` eq. 57).

    Arguments:
        chain: a chain with actuators. q: configuration ``(nq,)``. u: inputs ``(nu,)``.

    Returns:
        ``(nq,)`` generalized force.

    Raises:
        ValueError: ``q`` or ``u`` of the wrong shape.
    """
    q = chain.check_state(q, "q")
    u = jnp.asarray(u)
    if u.shape != (chain.nu,):
        raise ValueError(f"`u` must have shape ({chain.nu},) for this chain's actuators, got shape {u.shape}.")
    return input_force(chain, q, u)
