"""A serial chain of modules (joint + body), stored so that identical modules compile once.

Modules with the same structure (same classes, static fields and array shapes) are stacked into
*groups*: each array leaf gets a leading axis over the group's members, and the per-module terms of
DESIGN §3.1 are evaluated with one ``vmap`` per group. A chain of 64 identical modules is one
group, so tracing and compiling do not grow with the number of modules.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from . import _checks
from ._checks import on_host
from ._modules import group_by_structure, stack
from ._types import Array, Vec3
from .actuation._base import AbstractActuator
from .bodies._base import AbstractBody
from .joints import AbstractJoint

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


@dataclasses.dataclass(frozen=True)
class Layout:
    """Static bookkeeping: how modules, groups and coordinates line up."""

    n_modules: int
    nq: int
    n_max: int  # largest number of coordinates of one module
    module_nq: tuple[int, ...]  # n_i, chain order
    offsets: tuple[int, ...]  # first coordinate of module i in q
    members: tuple[tuple[int, ...], ...]  # module indices of each group
    group_nq: tuple[tuple[int, int], ...]  # (n_joint, n_body) of each group
    order: tuple[int, ...]  # chain position -> row in the concatenation of groups

    def group_index(self, g: int) -> np.ndarray:
        """``(G, n)`` indices into ``q`` of the coordinates of group ``g``'s members."""
        n = sum(self.group_nq[g])
        return np.array([[self.offsets[i] + j for j in range(n)] for i in self.members[g]], dtype=np.int32).reshape(
            len(self.members[g]), n
        )

    def flat_index(self) -> np.ndarray:
        """Indices into the ``(N, n_max)`` padded per-module array of the ``nq`` coordinates."""
        return np.array(
            [i * self.n_max + j for i in range(self.n_modules) for j in range(self.module_nq[i])], dtype=np.int32
        )


def _index(x: Any, k: int) -> Any:
    """``x[k]`` for an array leaf of a group (on the host when :func:`~kane_jax._checks.on_host`: an eager
    index compiles two small programs per shape in every new process); other leaves as they are."""
    if not eqx.is_array(x):
        return x
    if isinstance(x, np.ndarray) or not on_host(x):
        return x[k]
    return jax.device_put(np.asarray(x)[k])  # not jnp.asarray, which compiles (lax.stage)


class Chain(eqx.Module):
    """A serial chain ``[(joint_1, body_1), …, (joint_N, body_N)]`` with gravity.

    Coordinates are ordered module by module, joint first: ``q = [q_J1, q_B1, q_J2, q_B2, …]``
    (DESIGN §2). Gravity is a base-frame vector [m/s²]; it enters the recursion as the base
    acceleration ``a_0 = −g`` (paper ``000_…`` §V-A).

    Arguments:
        modules: non-empty sequence of ``(joint, body)`` pairs.
        gravity: 3-vector, default ``(0, 0, −9.81)``.
        actuators: sequence of :class:`~kane_jax.actuation.AbstractActuator` (joint motors,
            tendons, chambers, …); their inputs ``u`` are concatenated in this order and enter
            as ``Q_a = A(q)ᵀ u`` (see :func:`~kane_jax.actuation_matrix`).

    Raises:
        TypeError: a module that is not a ``(joint, body)`` pair of kane_jax objects.
        ValueError: no modules, or a gravity that is not a finite 3-vector.
    """

    groups: tuple[tuple[AbstractJoint, AbstractBody], ...]
    gravity: Vec3
    actuators: tuple
    layout: Layout = eqx.field(static=True)

    def __init__(self, modules, gravity=DEFAULT_GRAVITY, actuators=()):
        try:
            modules = list(modules)
        except TypeError:
            raise TypeError("`modules` must be a sequence of (joint, body) pairs, "
                            f"got {type(modules).__name__}.") from None
        if not modules:
            raise ValueError("`modules` must contain at least one (joint, body) pair, got an empty sequence.")
        for i, m in enumerate(modules):
            if not (isinstance(m, (tuple, list)) and len(m) == 2):
                raise TypeError(f"`modules[{i}]` must be a (joint, body) pair, got {type(m).__name__} {m!r:.80}.")
            if not isinstance(m[0], AbstractJoint):
                raise TypeError(f"`modules[{i}][0]` must be a kane_jax joint, got {type(m[0]).__name__}.")
            if not isinstance(m[1], AbstractBody):
                raise TypeError(f"`modules[{i}][1]` must be a kane_jax body, got {type(m[1]).__name__}.")
        actuators = tuple(actuators)
        for k, a in enumerate(actuators):
            if not isinstance(a, AbstractActuator):
                raise TypeError(f"`actuators[{k}]` must be a kane_jax actuator, got {type(a).__name__}.")
        self.actuators = actuators
        self.gravity = _checks.as_float_array(gravity, "gravity", (3,))
        _checks.check_finite(self.gravity, "gravity")

        members = tuple(tuple(v) for v in group_by_structure([tuple(m) for m in modules]))
        self.groups = tuple(stack([tuple(modules[i]) for i in mem]) for mem in members)
        module_nq = tuple(m[0].nq + m[1].nq for m in modules)
        offsets = tuple(int(x) for x in np.concatenate([[0], np.cumsum(module_nq)[:-1]]))
        concat = [i for mem in members for i in mem]
        order = tuple(int(x) for x in np.argsort(concat))
        self.layout = Layout(
            n_modules=len(modules), nq=int(sum(module_nq)), n_max=max(max(module_nq), 1), module_nq=module_nq,
            offsets=offsets, members=members,
            group_nq=tuple((modules[mem[0]][0].nq, modules[mem[0]][1].nq) for mem in members), order=order,
        )

    @property
    def nq(self) -> int:
        """Number of generalized coordinates."""
        return self.layout.nq

    @property
    def nu(self) -> int:
        """Number of actuation inputs (sum over ``actuators``)."""
        return sum(a.nu for a in self.actuators)

    @property
    def n_modules(self) -> int:
        """Number of modules N."""
        return self.layout.n_modules

    def module(self, i: int) -> tuple[AbstractJoint, AbstractBody]:
        """The ``(joint, body)`` pair of module ``i`` (0-based)."""
        n = self.layout.n_modules
        if not isinstance(i, (int, np.integer)) or not -n <= i < n:
            raise ValueError(f"`i` must be an int in [-{n}, {n}), got {i!r}.")
        i = int(i) % n
        for g, mem in enumerate(self.layout.members):
            if i in mem:
                k = mem.index(i)
                return jax.tree.map(lambda x: _index(x, k), self.groups[g])
        raise AssertionError("unreachable")

    @property
    def modules(self) -> list[tuple[AbstractJoint, AbstractBody]]:
        """All ``(joint, body)`` pairs in chain order."""
        return [self.module(i) for i in range(self.n_modules)]

    def coordinate_slice(self, i: int) -> slice:
        """Slice of ``q`` holding module ``i``'s coordinates (joint first, then body)."""
        o = self.layout.offsets[i]
        return slice(o, o + self.layout.module_nq[i])

    def check_state(self, x: Any, name: str) -> Array:
        """Validate a configuration-sized vector (shape ``(nq,)``), in the chain's precision where that is higher
        (float32 states of a float64 chain: every algorithm, integrator and solver then works in float64, as
        JAX's promotion of their products with the chain's parameters would)."""
        arr = _checks.as_float_array(x, name)
        if arr.shape != (self.nq,):
            hint = " (use jax.vmap for batches)" if arr.ndim == 2 and arr.shape[-1] == self.nq else ""
            raise ValueError(f"`{name}` must have shape ({self.nq},) for this chain, got shape {arr.shape}{hint}.")
        dtype = jnp.promote_types(arr.dtype, self.gravity.dtype)
        return arr if dtype == arr.dtype else arr.astype(dtype)
