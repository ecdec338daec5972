"""Pneumatic chambers: gauge pressures acting through the chambers' volumes (paper ``000_…`` eq. 57).

A chamber at gauge pressure ``p`` does virtual work ``p δV`` on the body, so with work coordinates
``h = V(q)`` the generalized force is ``Q_a = (∂V/∂q)ᵀ u`` — eq. 57, ``Q_a = ∇_q V(q) u``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import equinox as eqx
import jax.numpy as jnp

from .. import _checks
from .._types import Array, Config, Float
from ._base import AbstractActuator

if TYPE_CHECKING:
    from ..chain import Chain


class PneumaticChambers(AbstractActuator):
    """Pressurized chambers inside the body of module ``module``; inputs ``u`` = gauge pressures [Pa].

    The body supplies the chambers' current volumes ``V(q_B)`` [m³]: by default its method
    ``chamber_volumes`` (:class:`~kane_jax.bodies.variable_radius.VariableRadiusPCC`, two chambers)
    or ``cavity_volume`` (:class:`~kane_jax.bodies.lvp.LVPBody` with a hollow core and a
    :class:`~kane_jax.bodies.lvp_primitives.Cavity`, one chamber); or pass ``volume``: the name of
    another body method, or a callable ``(body, q_B) -> (n_chambers,)``.

    Arguments:
        module: chain index of the module whose body holds the chambers.
        n_chambers: number of chambers (inputs), e.g. 2 for the variable-radius PCC.
        volume: ``None``, a method name, or a callable as above.

    Raises:
        ValueError: negative module or non-positive ``n_chambers``; at use, a module index out of
            range, a body without the volume method, or volumes of the wrong shape.
        TypeError: ``volume`` neither None, a string nor a callable.
    """

    module: int = eqx.field(static=True)
    volume: None | str | Callable = eqx.field(static=True)
    nu: int = eqx.field(static=True)

    def __init__(self, module: int, n_chambers: int = 2, *, volume=None):
        _checks.count(module, "module", minimum=0)
        _checks.count(n_chambers, "n_chambers")
        if volume is not None and not isinstance(volume, str) and not callable(volume):
            raise TypeError("`volume` must be None, a method name or a callable (body, q) -> V, "
                            f"got {type(volume).__name__}.")
        self.module, self.nu, self.volume = int(module), int(n_chambers), volume

    def volumes(self, chain: Chain, q: Config) -> Float[Array, " nu"]:
        """Current chamber volumes ``V(q)`` [m³]."""
        if self.module >= chain.n_modules:
            raise ValueError(f"PneumaticChambers `module`={self.module} out of range for {chain.n_modules} modules.")
        return self.module_work_coordinates(*chain.module(self.module), q[chain.coordinate_slice(self.module)])

    def work_coordinates(self, chain: Chain, q: Config) -> Float[Array, " nu"]:
        return self.volumes(chain, q)

    def local_module(self) -> int:
        return self.module

    def module_work_coordinates(self, joint, body, q_module: Config) -> Float[Array, " nu"]:
        """The volumes from the module's own coordinates (what :meth:`volumes` evaluates)."""
        qb = q_module[joint.nq:]
        if callable(self.volume):
            v = self.volume(body, qb)
        else:
            names = (self.volume,) if isinstance(self.volume, str) else ("chamber_volumes", "cavity_volume")
            name = next((n for n in names if hasattr(body, n)), None)
            if name is None:
                raise ValueError(f"PneumaticChambers: body {type(body).__name__} of module {self.module} has no "
                                 f"volume method {names}; pass `volume=`.")
            v = getattr(body, name)(qb)
        v = jnp.atleast_1d(v)
        if v.shape != (self.nu,):
            raise ValueError(f"PneumaticChambers: volumes must have shape ({self.nu},) (`n_chambers`), got {v.shape}.")
        return v
