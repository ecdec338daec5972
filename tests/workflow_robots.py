"""Robots shared by the workflow tests (statics, control, optimization, identification, batch)."""

from __future__ import annotations

import jax.numpy as jnp

import kane_jax as kj
from kane_jax.lie import make_pose

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


def reach_arm(*, gravity=HANG):
    """Hybrid 2-DoF arm: a motorized revolute joint carrying a passive damped planar CC segment."""
    seg = kj.PlanarConstantCurvature(length=0.3, radius=0.015, density=1100.0, youngs_modulus=1e6,
                                     damping=0.05, order=3, n_radial=0)
    return kj.Chain([(kj.Revolute((0, 0, 1), damping=0.02), seg)], gravity=gravity,
                    actuators=[kj.JointMotor([0])])


# --- identification robot: revolute + planar CC segment + revolute + rigid link -------------------
TRUE_PARAMS = {
    "mass": jnp.array(0.6),  # rigid link mass [kg]
    "first_moment": jnp.array([0.06, 0.006]),  # m c (x, y) [kg m]
    "izz": jnp.array(0.009),  # inertia about the joint axis [kg m²]
    "density": jnp.array(1100.0),  # soft segment [kg/m³]
    "youngs_modulus": jnp.array(1.0e6),  # [Pa]
    "damping_modulus": jnp.array(5.0e4),  # η E [Pa s]
    "gain": jnp.array(1.5),  # second motor's torque constant × gear ratio
}


def ident_robot(p):
    """Chain built from identification parameters; the ID is affine in every leaf of ``p``."""
    seg = kj.PlanarConstantCurvature(length=0.3, radius=0.015, density=p["density"],
                                     youngs_modulus=p["youngs_modulus"],
                                     damping=p["damping_modulus"] / p["youngs_modulus"], order=3, n_radial=0)
    m, h = p["mass"], p["first_moment"]
    izz_c = p["izz"] - (h[0] ** 2 + h[1] ** 2) / m  # parallel-axis theorem back to the centre of mass
    tip = make_pose(jnp.eye(3), jnp.array([0.2, 0.0, 0.0]))
    link_ = kj.RigidBody(m, jnp.stack([h[0] / m, h[1] / m, 0.0 * m]),
                         jnp.diag(jnp.stack([4e-3 + 0 * m, 4e-3 + 0 * m, izz_c])), tip=tip)
    return kj.Chain([(kj.Revolute((0, 0, 1)), seg), (kj.Revolute((0, 0, 1)), link_)], gravity=(0.0, -9.81, 0.0),
                    actuators=[kj.JointMotor([0, 2], gains=jnp.stack([1.0 + 0 * m, p["gain"]]))])
