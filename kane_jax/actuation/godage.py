"""Godage's pressure-to-force map for three-actuator continuum sections (paper ``004_…`` §IV-D).

Each section of a :func:`~kane_jax.bodies.godage.godage_arm` is driven by three extending pneumatic
muscle actuators. The paper maps the input pressures to the joint-space forces by ``τ = P A``
(``A = 2.2·10⁻⁴ m²`` the actuator cross-sectional area). As work coordinates that is
``h = A ⊙ (L + l) `` — area times actuator length — whose virtual change times the pressure is the
actuator's virtual work, ``P A δl``; hence ``Q_a = (∂h/∂q)ᵀ P`` puts ``A_j P_j`` on ``l_j``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .. import _checks
from .._modules import module_coordinates
from .._types import Array, Config, Float
from ._base import AbstractActuator

if TYPE_CHECKING:
    from ..chain import Chain


class GodagePressureActuator(AbstractActuator):
    """Pressures ``u`` [Pa] (gauge) in the three actuators of each listed Godage section.

    Inputs are ordered section by section, actuator ``j = 1, 2, 3`` within a section (the order of
    the section's coordinates ``l_j``). Work coordinates ``h = A ⊙ L_act(q)`` [m³] with
    ``L_act = L + l`` the actuator lengths, so ``Q_a = Aᵀ u`` gives the force ``A_j u_j`` [N] on
    ``l_j``.

    Arguments:
        modules: chain indices (0-based) of the :class:`~kane_jax.bodies.godage.GodageSection`
            modules driven, an int or a sequence of ints.
        area: actuator cross-sectional area [m²]: a scalar or one value per input (default 2.2e-4,
            the paper's value). An array leaf, so it can be identified with optax.

    Raises:
        ValueError: empty or negative ``modules``; ``area`` of the wrong shape or not positive; at
            use, a listed module that is not a Godage section.
    """

    modules: tuple[int, ...] = eqx.field(static=True)
    area: Float[Array, " nu"]
    nu: int = eqx.field(static=True)

    def __init__(self, modules, area=2.2e-4):
        idx = tuple(int(i) for i in np.atleast_1d(np.asarray(modules)))
        if not idx or any(i < 0 for i in idx):
            raise ValueError(f"`modules` must be a non-empty sequence of non-negative ints, got {modules!r}.")
        self.modules = idx
        self.nu = 3 * len(idx)
        a = _checks.as_float_array(area, "area")
        if a.ndim == 0:
            a = a * jnp.ones(self.nu, dtype=a.dtype)
        if a.shape != (self.nu,):
            raise ValueError(f"`area` must be a scalar or have shape ({self.nu},), got shape {a.shape}.")
        _checks.positive(a, "area")
        self.area = a

    def work_coordinates(self, chain: Chain, q: Config) -> Float[Array, " nu"]:
        from ..bodies.godage import GodageSection

        lengths = []
        for i in self.modules:
            if i >= chain.n_modules:
                raise ValueError(f"GodagePressureActuator `modules` {self.modules} out of range for a chain "
                                 f"with {chain.n_modules} modules.")
            joint, body = chain.module(i)
            if not isinstance(body, GodageSection):
                raise ValueError(f"GodagePressureActuator: module {i} must be a GodageSection, "
                                 f"got {type(body).__name__}.")
            lengths.append(body.actuator_lengths(module_coordinates(chain, i, q)[joint.nq:]))
        return self.area * jnp.concatenate(lengths)
