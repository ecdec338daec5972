"""The body hierarchy (DESIGN §2, §3.1, §3.3): every class abstract or final.

What a new body implements (the hooks), by family:

- :class:`AbstractBody` — ``nq``, :meth:`~AbstractBody.tip`, :meth:`~AbstractBody.jets` (the jet of
  the distal frame and the mass moments), :meth:`~AbstractBody.points_in_frame`,
  :meth:`~AbstractBody.internal_force`, :meth:`~AbstractBody.energy`. :class:`RigidBody` fills them
  in closed form.
- :class:`AbstractSoftBody` — a body described by its geometry ``position(q, s)`` and ``tip(q)``;
  :meth:`jets` is implemented here once, from the jets of the body's mass *elements*
  (:mod:`kane_jax.bodies._moments`): subclasses provide :meth:`element_jets` and :meth:`element_rule`.
  - :class:`AbstractPointBody` — elements are material points (user bodies, learned bodies, bodies
    whose cross-sections deform: LVP, variable radius); implements :meth:`element_jets` by one
    autodiff jet of :meth:`points_and_tip`, which subclasses provide.
  - rods (``bodies/_rod.py``: :class:`~kane_jax.bodies._rod.AbstractRod`) — elements are rigid
    cross-sections; their jets come from closed forms where the geometry has one.
- Internal forces: :class:`AbstractLinearElastic` (``K q + D q̇`` from ``stiffness``/``damping``
  arrays) or :class:`~kane_jax.bodies.materials.AbstractMaterialBody` (a strain energy integrated
  over the body's volume).
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp

from .._jets import PoseJet
from .._small import mtv
from .._types import Array, Config, Float, Pose, Vec3
from ._centred_moments import centred_section_moments
from ._moments import BodyMoments, ElementRule, Elements, distal_point_jets, moments


class AbstractBody(eqx.Module):
    """A body of a module: its distal frame, its mass moments and its internal forces."""

    nq: eqx.AbstractVar[int]

    @abc.abstractmethod
    def tip(self, q: Config) -> Pose:
        """Pose ``h(q_B)`` of the distal frame ``{S_i}`` in the body's proximal (joint output) frame."""

    @abc.abstractmethod
    def jets(self, q: Config, qd: Config | None) -> tuple[PoseJet, BodyMoments]:
        """The jet of :meth:`tip` along ``q̇`` and the :class:`BodyMoments` in ``{S_i}``.

        ``qd=None`` asks for the configuration-dependent part only (curvature and ``gyro`` zero),
        which is what the mass matrix needs.
        """

    @abc.abstractmethod
    def points_in_frame(self, q: Config) -> Float[Array, "K 3"]:
        """Positions of the body's material points in its proximal frame, for plotting."""

    @abc.abstractmethod
    def internal_force(self, q: Config, qd: Config) -> Config:
        """Generalized internal (elastic + dissipative) force on the body coordinates."""

    @abc.abstractmethod
    def energy(self, q: Config) -> Array:
        """Elastic (strain) energy stored in the body."""


class AbstractLinearElastic(AbstractBody):
    """Internal force ``K q + D q̇`` and energy ``½ qᵀ K q`` from the ``stiffness``/``damping`` arrays."""

    stiffness: eqx.AbstractVar[Float[Array, "n n"]]
    damping: eqx.AbstractVar[Float[Array, "n n"]]

    def internal_force(self, q: Config, qd: Config) -> Config:
        return jnp.sum(self.stiffness * q[None, :], axis=1) + jnp.sum(self.damping * qd[None, :], axis=1)

    def energy(self, q: Config) -> Array:
        return 0.5 * q @ (self.stiffness @ q)


class AbstractSoftBody(AbstractBody):
    """A body described by its geometry: ``position(q, s)`` of material point ``s`` and ``tip(q)``.

    Everything inertial follows from the jets of its mass elements (DESIGN §3.1, §3.3).
    """

    points: eqx.AbstractVar[Float[Array, "K d"]]
    weights: eqx.AbstractVar[Float[Array, " K"]]

    @abc.abstractmethod
    def position(self, q: Config, s: Array) -> Vec3:
        """Position ``g(q, s)`` of material point ``s`` in the body's proximal frame."""

    @abc.abstractmethod
    def element_jets(self, q: Config, qd: Config | None) -> tuple[PoseJet, Elements | PoseJet]:
        """The distal frame's jet and the jets of the mass elements in the distal frame."""

    @abc.abstractmethod
    def element_rule(self) -> ElementRule:
        """Masses (and, for cross-sections, first and second moments) of the elements."""

    def rotating_coordinates(self) -> int | None:
        """How many leading coordinates can rotate the mass elements (static; the generators of the
        others have ``ω = 0`` in every element's frame), or None: all (the default)."""
        return None

    def centred_sections(self) -> bool:
        """Whether the mass elements are cross-sections symmetric about their centre and their y and
        z axes (static; their moments then leave out the zero first moment and products of inertia,
        :func:`~kane_jax.bodies._centred_moments.centred_section_moments`). False: the default."""
        return False

    def jets(self, q: Config, qd: Config | None) -> tuple[PoseJet, BodyMoments]:
        tip, elements = self.element_jets(q, qd)
        if self.centred_sections() and isinstance(elements, PoseJet):
            return tip, centred_section_moments(elements, self.element_rule(), qd,
                                                rotating=self.rotating_coordinates())
        return tip, moments(elements, self.element_rule(), qd, rotating=self.rotating_coordinates())

    def local_points(self, q: Config) -> Float[Array, "K 3"]:
        """Material points relative to the distal frame, ``p_k = R_hᵀ (g(q, s_k) − t_h)``."""
        h = self.tip(q)
        return mtv(h[:3, :3], self.points_in_frame(q) - h[None, :3, 3])


class AbstractPointBody(AbstractSoftBody):
    """A soft body whose mass elements are its material points ``s_k`` with masses ``weights``."""

    @abc.abstractmethod
    def points_and_tip(self, q: Config) -> tuple[Float[Array, "K 3"], Pose]:
        """:meth:`points_in_frame` and :meth:`tip` together (one trace of the geometry)."""

    def points_in_frame(self, q: Config) -> Float[Array, "K 3"]:
        return self.points_and_tip(q)[0]

    def element_jets(self, q: Config, qd: Config | None) -> tuple[PoseJet, Elements]:
        return distal_point_jets(self.points_and_tip, q, qd)

    def element_rule(self) -> ElementRule:
        return ElementRule(self.weights)


def mapped_points(body: AbstractSoftBody, q: Config, points: Array | None = None) -> Float[Array, "K 3"]:
    """``position(q, s_k)`` at every point (default: the body's quadrature points)."""
    return jax.vmap(lambda s: body.position(q, s))(body.points if points is None else points)
