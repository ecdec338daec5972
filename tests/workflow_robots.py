"""Robots shared by the workflow tests (statics, control, optimization, identification, batch)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import kane_jax as kj
from kane_jax._math import make_pose

HANG = (9.81, 0.0, 0.0)  # gravity along +x: the straight arm hangs at q = 0 (003_… Sim. 1 set-up)


def link(length=0.3, mass=0.5):
    tip = make_pose(jnp.eye(3), jnp.array([length, 0.0, 0.0]))
    inertia = jnp.diag(jnp.stack([1e-4 + 0 * mass, mass * length**2 / 12, mass * length**2 / 12]))
    return kj.RigidBody(mass, (length / 2, 0.02, 0.0), inertia, tip=tip)


def hybrid_arm(*, actuate_body=False, joint_damping=0.3, eta=0.05, gravity=HANG, gains=(1.0, 1.0)):
    """Revolute + rigid link + revolute + planar CC soft segment with elongation; q = [q1, q2, θ, δ]."""
    soft = kj.PlanarConstantCurvature(length=0.4, radius=0.02, density=1100.0, youngs_modulus=2e6,
                                      damping=eta, elongation=True, order=4, n_radial=1, n_angular=3)
    modules = [(kj.Revolute((0, 0, 1), damping=joint_damping), link()),
               (kj.Revolute((0, 0, 1), damping=joint_damping), soft)]
    idx = [0, 1, 2, 3] if actuate_body else [0, 1]
    g = tuple(gains) + (1.0, 1.0) if actuate_body else tuple(gains)
    return kj.Chain(modules, gravity=gravity, actuators=[kj.JointMotor(idx, g)])


def rigid_arm(n=3, *, gravity=(0.0, -9.81, 0.0), masses=None):
    """Planar n-R rigid arm in the x–y plane, all joints motorized (fully actuated)."""
    lengths = [0.4, 0.3, 0.25, 0.2][:n]
    masses = [1.2, 0.8, 0.5, 0.3][:n] if masses is None else masses
    modules = [(kj.Revolute((0, 0, 1)), link(length, mass)) for length, mass in zip(lengths, masses)]
    return kj.Chain(modules, gravity=gravity, actuators=[kj.JointMotor(list(range(n)))])


def soft_arm(*, eta=0.1, gravity=HANG):
    """Underactuated soft arm: two motorized revolute joints each carrying a passive planar CC segment.

    q = [q1, θ1, q2, θ2]; the motors act on q1, q2 (collocated); the segments are elastic and damped.
    """
    seg = kj.PlanarConstantCurvature(length=0.25, radius=0.015, density=1100.0, youngs_modulus=1e6,
                                     damping=eta, order=4, n_radial=1, n_angular=3)
    modules = [(kj.Revolute((0, 0, 1), damping=0.05), seg), (kj.Revolute((0, 0, 1), damping=0.05), seg)]
    return kj.Chain(modules, gravity=gravity, actuators=[kj.JointMotor([0, 2])])
