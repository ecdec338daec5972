"""Any controller, with its tendons made to pull only (non-negative allocation of its force)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._types import Array, Config
from ..algorithms.actuation import input_matrix
from ..chain import Chain
from .allocation import allocate_tensions


class PullOnly(eqx.Module):
    """Wraps a controller ``u(t, q, q̇)`` so that the inputs ``pulling`` (tendons) never push.

    The wrapped law asks for ``u``; its generalized force ``τ_d = B(q) u`` (``B = A(q)ᵀ``, the
    actuation matrix) is re-allocated: the other inputs (motors, pressures) are kept as asked,
    and the pulling ones solve :func:`~kane_jax.control.allocate_tensions`, the bounded
    least-squares match (on the coordinates ``match``) of the force they were asked for (``B``'s
    columns of the pulling inputs only, formed from the actuators that own them). Where the
    law asks only for pulls the result is
    the law itself (to the QP's tolerance); where it asks a tendon to push, the nearest force the
    tendons can make replaces it, so tracking degrades by what the pulls cannot produce.
    Tendons within one body act on that body's coordinates only: when every pulling input is such
    a module-local one and they sit in several bodies, the match separates into one problem per
    body (``blocks`` of :func:`~kane_jax.control.allocate_tensions`; ``003-sim1``: three exact
    3-tendon problems instead of one 9-tendon interior point).

    Arguments:
        controller: a callable ``u(t, q, q̇)`` of ``chain.nu`` inputs.
        chain: the chain the controller drives (its actuators give ``B(q)``).
        pulling: indices of the inputs that only pull (default: all).
        match: indices of the generalized coordinates whose force is matched (default: all). The
            match is least squares in generalized forces, so coordinates with large levers (a
            tendon's axial force, ~1/offset times its bending moment) dominate it; leave out what
            the tendons need not control (e.g. a segment's elongation), and the pretension then
            sets the co-contraction that the left-out coordinates absorb.
        minimum: least tension (scalar or per pulling input; default 0).
        maximum: optional greatest tension.
        pretension: tensions preferred among equally good ones (the co-contraction; default
            ``minimum``).

    Raises:
        ValueError: a chain without actuators, ``pulling`` indices outside ``0 … nu − 1`` or
            repeated, ``match`` indices outside ``0 … nq − 1`` or repeated.
    """

    controller: Callable
    chain: Chain
    pulling: tuple[int, ...] = eqx.field(static=True)
    match: tuple[int, ...] = eqx.field(static=True)
    # the actuators that own a pulling input, and each pulling input's column among theirs
    owners: tuple[int, ...] = eqx.field(static=True)
    columns: tuple[int, ...] = eqx.field(static=True)
    # independent groups (pulling inputs, matched rows): the tendons of each body on its coordinates
    blocks: tuple | None = eqx.field(static=True)
    minimum: Array
    maximum: Array | None
    pretension: Array | None

    def __init__(self, controller: Callable, chain: Chain, *, pulling: Sequence[int] | None = None,
                 match: Sequence[int] | None = None, minimum=0.0, maximum=None, pretension=None):
        if chain.nu == 0:
            raise ValueError("chain: expected a chain with actuators (nu > 0), got nu = 0")
        idx = tuple(range(chain.nu)) if pulling is None else tuple(int(i) for i in pulling)
        if not idx or len(set(idx)) != len(idx) or min(idx) < 0 or max(idx) >= chain.nu:
            raise ValueError(f"pulling: expected distinct input indices in 0..{chain.nu - 1}, got {pulling!r}")
        rows = tuple(range(chain.nq)) if match is None else tuple(int(i) for i in match)
        if not rows or len(set(rows)) != len(rows) or min(rows) < 0 or max(rows) >= chain.nq:
            raise ValueError(f"match: expected distinct coordinate indices in 0..{chain.nq - 1}, got {match!r}")
        self.match = rows
        self.controller = controller
        self.chain = chain
        self.pulling = idx
        self.owners, self.columns = _owning_actuators(chain, idx)
        self.blocks = _independent_groups(chain, idx, rows)
        self.minimum = jnp.asarray(minimum, dtype=float)
        self.maximum = None if maximum is None else jnp.asarray(maximum, dtype=float)
        self.pretension = None if pretension is None else jnp.asarray(pretension, dtype=float)

    @property
    def jump_times(self):
        """The wrapped controller's ``jump_times`` (where its law switches; ``simulate``'s default
        ``jump_ts``), or None: the allocation is continuous in time."""
        return getattr(self.controller, "jump_times", None)

    def __call__(self, t, q: Config, qd: Config) -> Array:
        u = self.controller(t, q, qd)
        # B's columns of the pulling inputs only (003-sim2: its tendons', not its gripper's pressure
        # through an LVP body): the actuators that own them, as a chain of their own
        owners = eqx.tree_at(lambda c: c.actuators, self.chain, tuple(self.chain.actuators[i] for i in self.owners))
        b = input_matrix(owners, q)[jnp.asarray(self.match)][:, jnp.asarray(self.columns)]  # (rows matched, pulling)
        pull = jnp.asarray(self.pulling)
        tau_d = b @ u[pull]  # what the pulling inputs were asked to produce
        tension = allocate_tensions(b.T, tau_d, minimum=self.minimum.astype(q.dtype),
                                    maximum=None if self.maximum is None else self.maximum.astype(q.dtype),
                                    pretension=None if self.pretension is None else self.pretension.astype(q.dtype),
                                    blocks=self.blocks)
        return u.at[pull].set(tension.astype(u.dtype))


def _owner_of(chain: Chain, inputs: tuple[int, ...]) -> list[int]:
    """The index into ``chain.actuators`` of the actuator that owns each input."""
    starts = np.cumsum([0] + [a.nu for a in chain.actuators])
    return [int(np.searchsorted(starts, i, side="right")) - 1 for i in inputs]


def _owning_actuators(chain: Chain, inputs: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The actuators (indices into ``chain.actuators``, in order) that own the inputs ``inputs``, and
    each input's column in the input matrix of those actuators alone."""
    starts = np.cumsum([0] + [a.nu for a in chain.actuators])
    owner_of = _owner_of(chain, inputs)
    owners = tuple(sorted(set(owner_of)))
    offset = dict(zip(owners, np.cumsum([0] + [chain.actuators[k].nu for k in owners])))
    return owners, tuple(int(offset[k] + i - starts[k]) for i, k in zip(inputs, owner_of))


def _independent_groups(chain: Chain, inputs: tuple[int, ...], rows: tuple[int, ...]) -> tuple | None:
    """The allocation's independent groups ``(inputs, rows)``, positions in ``inputs`` and ``rows``: the
    pulling inputs of each module-local actuator (a tendon within one body) act on that module's
    coordinates only, so the match of those rows involves that module's inputs only. None when an
    input's actuator spans modules, or when there is only one group (nothing to separate)."""
    by_module: dict[int, list[int]] = {}
    for k, owner in enumerate(_owner_of(chain, inputs)):
        m = chain.actuators[owner].local_module()
        if m is None:
            return None
        by_module.setdefault(m, []).append(k)
    if len(by_module) < 2:
        return None
    groups = []
    for m, ks in by_module.items():
        sl = chain.coordinate_slice(m)
        groups.append((tuple(ks), tuple(r for r, j in enumerate(rows) if sl.start <= j < sl.stop)))
    return tuple(groups)
