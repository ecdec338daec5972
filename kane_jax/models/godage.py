"""Godage's multisection continuum arm (paper ``004_…`` Fig. 2): sections, fixed joints, pressure actuators."""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp

from .. import _checks
from ..actuation.godage import GodagePressureActuator
from ..bodies.godage import GodageSection
from ..chain import Chain
from ..joints import Fixed
from ..lie import make_pose, rot_axis


def _per_section(x, n: int, name: str) -> list:
    if isinstance(x, (list, tuple)):
        if len(x) != n:
            raise ValueError(f"`{name}` must be a scalar or a sequence of {n} values (one per section), got {len(x)}.")
        return list(x)
    return [x] * n


def godage_arm(n_sections: int = 3, *, length=0.15, radius=0.0125, mass=0.1, stiffness=None, damping=None,
               offset=0.0, twist=0.0, base=None, gravity=(0.0, 0.0, -9.81), area=2.2e-4, actuated: bool = True,
               order: int = 5, n_radial: int = 2, n_angular: int = 4):
    """A multisection continuum arm of :class:`GodageSection` s (paper ``004_…`` Fig. 2).

    Section ``i+1`` is attached to the end plate of section ``i`` by a fixed joint that translates by
    ``offset`` [m] along and rotates by ``twist`` [rad] about the backbone (the paper's ``σ_i``,
    ``γ_i``); the first by ``base`` (a 4×4 placement in the world, default identity: backbone along
    world +x). Coordinates: ``q = (l₁₁, l₁₂, l₁₃, l₂₁, …)``.

    Arguments:
        n_sections: number of sections. length, radius, mass, stiffness, damping, offset, twist:
            scalars or per-section sequences (see :class:`GodageSection`). gravity: base-frame vector.
        area: actuator cross-sectional area [m²] (paper: 2.2e-4), for the pressure actuator.
        actuated: attach a :class:`~kane_jax.actuation.godage.GodagePressureActuator` on all sections
            (inputs: ``3 n`` pressures [Pa], ``τ = P A``).

    Returns:
        A :class:`~kane_jax.Chain`.

    Raises:
        ValueError: ``n_sections`` not a positive int; per-section sequences of the wrong length.
    """
    _checks.count(n_sections, "n_sections")
    n = int(n_sections)
    pars = {k: _per_section(v, n, k) for k, v in dict(length=length, radius=radius, mass=mass, stiffness=stiffness,
                                                      damping=damping, offset=offset, twist=twist).items()}
    modules = []
    for i in range(n):
        if i == 0:
            joint = Fixed(base)
        else:
            off = _checks.as_float_array(pars["offset"][i - 1], "offset", ())
            tw = _checks.as_float_array(pars["twist"][i - 1], "twist", ())
            ex = jnp.array([1.0, 0.0, 0.0], dtype=off.dtype)
            joint = Fixed(make_pose(rot_axis(ex, tw), off * ex))
        body = GodageSection(pars["length"][i], pars["radius"][i], pars["mass"][i], stiffness=pars["stiffness"][i],
                             damping=pars["damping"][i], order=order, n_radial=n_radial, n_angular=n_angular)
        modules.append((joint, body))
    actuators: Sequence = (GodagePressureActuator(tuple(range(n)), area),) if actuated else ()
    return Chain(modules, gravity=gravity, actuators=actuators)
