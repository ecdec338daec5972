"""Abstract bodies and the model-agnostic soft body (DESIGN §2, §3.1, §3.3).

A body exposes, for its own coordinates ``q_B``, the configuration- and motion-dependent inertial
*moments* of its mass points expressed in its distal frame ``{S_i}``. With them the recursion of
DESIGN §3 needs only 3-vector algebra, whatever the number of quadrature points (§3.3):

- ``f_i = m a + ω̇ × c + ω × (ω × c) + 2 ω × v̄ + ā``
- ``τ_i = c × a + I ω̇ + ω × (I ω) + 2 (tr(H) ω − H ω) + Σ w p × p̈``
- ``π_i = Jw a − Jp ω̇ + T : (ω ωᵀ − |ω|² 1) − 2 Jv ω + Ja``

where ``p_k`` are the points in ``{S_i}`` and ``J_k = ∂p_k/∂q_B`` (paper ``003_…`` §5,
``000_…`` eqs. 36–45).
"""

from __future__ import annotations

import abc
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from .._jets import Jet, PoseJet, jet, points_in_moving_frame, pose_jet
from .._math import skew
from .._types import Array, Config, Float, Mat3, Pose, Vec3


class BodyMoments(NamedTuple):
    """Mass moments of a body in its distal frame ``{S_i}`` (rows: the body's ``nq`` coordinates)."""

    mass: Float[Array, ""]  # Σ w
    first: Vec3  # Σ w p
    inertia: Mat3  # Σ w (|p|² 1 − p pᵀ), about the origin of {S_i}
    vel_first: Vec3  # Σ w ṗ
    acc_first: Vec3  # Σ w p̈
    vel_outer: Mat3  # H = Σ w ṗ pᵀ
    acc_moment: Vec3  # Σ w p × p̈
    proj_lin: Float[Array, "n 3"]  # Σ w J_kᵀ
    proj_rot: Float[Array, "n 3"]  # Σ w J_kᵀ [p_k]×
    proj_quad: Float[Array, "n 3 3"]  # T[j, a, b] = Σ w J_k[a, j] p_k[b]
    proj_cor: Float[Array, "n 3"]  # Σ w J_kᵀ [ṗ_k]×
    proj_acc: Float[Array, " n"]  # Σ w J_kᵀ p̈_k


class AbstractBody(eqx.Module):
    """A body of a module: its distal frame, its mass moments and its internal forces.

    Concrete bodies implement :meth:`tip`, :meth:`moments` and :meth:`points_in_frame`;
    internal forces default to zero.
    """

    nq: eqx.AbstractVar[int]

    @abc.abstractmethod
    def tip(self, q: Config) -> Pose:
        """Pose ``h(q_B)`` of the distal frame ``{S_i}`` in the body's proximal (joint output) frame."""

    @abc.abstractmethod
    def moments(self, q: Config, qd: Config, qdd: Config) -> BodyMoments:
        """Mass moments of the body in ``{S_i}`` for the motion ``(q, q̇, q̈)`` of its coordinates."""

    @abc.abstractmethod
    def points_in_frame(self, q: Config) -> Float[Array, "K 3"]:
        """Positions of the body's material (quadrature) points in its proximal frame, for plotting."""

    def tip_jet_and_moments(self, q: Config, qd: Config, qdd: Config) -> tuple[PoseJet, BodyMoments]:
        """The jet of :meth:`tip` along ``q̇`` and :meth:`moments`, as the recursion consumes them.

        Soft bodies override this to take both from one jet of their geometry.
        """
        return pose_jet(self.tip, q, qd), self.moments(q, qd, qdd)

    def internal_force(self, q: Config, qd: Config) -> Config:
        """Generalized internal (elastic + dissipative) force on the body coordinates."""
        return jnp.zeros_like(q)

    def energy(self, q: Config) -> Array:
        """Elastic (strain) energy stored in the body."""
        return jnp.zeros((), dtype=q.dtype)


class AbstractSoftBody(AbstractBody):
    """A body described only by its geometry: ``position(q, s)`` and ``tip(q)``.

    Everything inertial follows by ``jax.jacfwd``/``jax.jvp`` (DESIGN §3.1). Internal forces are
    ``K q + D q̇`` from the ``stiffness``/``damping`` matrices unless a subclass overrides
    :meth:`internal_force` and :meth:`energy`.
    """

    points: eqx.AbstractVar[Float[Array, "K d"]]
    weights: eqx.AbstractVar[Float[Array, " K"]]
    # ``stiffness`` and ``damping`` ((nq, nq) arrays) are fields of most bodies and properties of
    # those whose internal force comes from a material (tangent matrices at rest). They are not
    # declared here as ``eqx.AbstractVar``: equinox then lists them as dataclass fields of every
    # subclass and reads each one when an instance is built, which for a property means compiling
    # and evaluating two energy Hessians per construction (≈ 11 s for an 8-DoF LVP body).

    @abc.abstractmethod
    def position(self, q: Config, s: Array) -> Vec3:
        """Position ``g(q, s)`` of material point ``s`` in the body's proximal frame."""

    def points_in_frame(self, q: Config) -> Float[Array, "K 3"]:
        return jax.vmap(lambda s: self.position(q, s))(self.points)

    def points_and_tip(self, q: Config) -> tuple[Float[Array, "K 3"], Pose]:
        """:meth:`points_in_frame` and :meth:`tip` together; override to share work between them."""
        return self.points_in_frame(q), self.tip(q)

    def local_points(self, q: Config) -> Float[Array, "K 3"]:
        """Material points relative to the distal frame, ``p_k = R_hᵀ (g(q, s_k) − t_h)``."""
        pts, h = self.points_and_tip(q)
        return (pts - h[None, :3, 3]) @ h[:3, :3]

    def tip_jet_and_moments(self, q: Config, qd: Config, qdd: Config) -> tuple[PoseJet, BodyMoments]:
        """One jet of ``(g(q, s_k), h(q))`` gives both the distal frame's jet and, by the product rule
        for ``p_k = R_hᵀ (g_k − t_h)`` (:func:`~kane_jax._jets.points_in_moving_frame`), the moments."""

        def geometry(x):
            pts, h = self.points_and_tip(x)
            return pts, h[:3, :3], h[:3, 3]

        g = jet(geometry, q, qd)
        frame = PoseJet(g.value[1], g.value[2], g.jac[1], g.jac[2], g.curv[1], g.curv[2])
        local = points_in_moving_frame(Jet(g.value[0], g.jac[0], g.curv[0]), frame, qd)
        return frame, self._moments_of_points(local, qd, qdd)

    def moments(self, q: Config, qd: Config, qdd: Config) -> BodyMoments:
        return self.tip_jet_and_moments(q, qd, qdd)[1]

    def _moments_of_points(self, points: Jet, qd: Config, qdd: Config) -> BodyMoments:
        """The moments of DESIGN §3.3 from the jet of the points ``p_k`` in ``{S_i}``."""
        w = self.weights
        p, jac = points.value, points.jac  # (K, 3), (K, 3, n)
        pd = jac @ qd
        pdd = points.curv + jac @ qdd  # D²p[q̇, q̇] + Dp[q̈]
        wp = w[:, None] * p
        mass = jnp.sum(w)
        eye = jnp.eye(3, dtype=p.dtype)
        inertia = jnp.sum(w * jnp.sum(p * p, axis=1)) * eye - wp.T @ p
        wj = w[:, None, None] * jac  # (K, 3, n)
        return BodyMoments(
            mass=mass,
            first=jnp.sum(wp, axis=0),
            inertia=inertia,
            vel_first=w @ pd,
            acc_first=w @ pdd,
            vel_outer=(w[:, None] * pd).T @ p,
            acc_moment=jnp.sum(jnp.cross(wp, pdd), axis=0),
            proj_lin=jnp.sum(wj, axis=0).T,
            proj_rot=jnp.einsum("kan,kab->nb", wj, jax.vmap(skew)(p)),
            proj_quad=jnp.einsum("kan,kb->nab", wj, p),
            proj_cor=jnp.einsum("kan,kab->nb", wj, jax.vmap(skew)(pd)),
            proj_acc=jnp.einsum("kan,ka->n", wj, pdd),
        )

    def internal_force(self, q: Config, qd: Config) -> Config:
        return self.stiffness @ q + self.damping @ qd

    def energy(self, q: Config) -> Array:
        return 0.5 * q @ (self.stiffness @ q)
