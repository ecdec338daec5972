"""The tests' robots, defined once.

- random rigid, generic-soft and mixed chains for the algorithm and body tests;
- the workflow robots (statics, control, optimization, identification, batch, CLI): hanging hybrid,
  rigid and soft arms and the identification robot (``import helpers.robots as wr``).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import kane_jax as kj
from kane_jax.lie import make_pose, so3_exp


def random_pose(rng, scale=0.3):
    rot = np.asarray(so3_exp(jnp.asarray(rng.normal(size=3))))
    return np.asarray(make_pose(jnp.asarray(rot), jnp.asarray(rng.normal(size=3) * scale)))


def random_inertia(rng, scale=0.1):
    a = rng.normal(size=(3, 3))
    rot, _ = np.linalg.qr(a)
    d = rng.uniform(0.5, 1.0, size=3) * scale
    d[2] = min(d[2], d[0] + d[1])  # triangle inequality
    return rot @ np.diag(d) @ rot.T


def random_rigid(rng):
    return kj.RigidBody(rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2, random_inertia(rng), tip=random_pose(rng))


def make_joint(kind, rng, placement=True):
    p = random_pose(rng) if placement else None
    axis = rng.normal(size=3)
    if kind == "revolute":
        return kj.Revolute(axis, p)
    if kind == "prismatic":
        return kj.Prismatic(axis, p)
    if kind == "helical":
        return kj.Helical(axis, 0.05, p)
    if kind == "fixed":
        return kj.Fixed(p)
    if kind == "universal":
        return kj.Universal(axis, rng.normal(size=3), p)
    if kind == "spherical":
        return kj.Spherical(p)
    if kind == "free":
        return kj.Free(p)
    raise ValueError(kind)


JOINT_KINDS = ("revolute", "prismatic", "helical", "fixed", "universal", "spherical", "free")


# A generic soft body written here, not in the library: a twisting, bending, stretching beam
# with a sinusoidal mode; q = (a, b, c) [-]. Its tip frame follows the end cross section.
def _beam_position(q, s):
    sig, y, z = s[0], s[1], s[2]
    length = 0.4
    bend = q[0] * jnp.sin(0.5 * jnp.pi * sig) * 0.1
    twist = q[1] * sig
    x = length * sig * (1 + 0.2 * q[2])
    cy, sy = jnp.cos(twist), jnp.sin(twist)
    return jnp.stack([x - 0.3 * q[0] * y * sig, bend + cy * y - sy * z, 0.05 * q[2] * sig**2 + sy * y + cy * z])


def _beam_tip(q):
    twist = q[1]
    c, s = jnp.cos(twist), jnp.sin(twist)
    rot = jnp.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]) @ jnp.stack(
        [jnp.stack([1.0 + 0 * c, 0 * c, 0 * c]), jnp.stack([0 * c, c, -s]), jnp.stack([0 * c, s, c])])
    trans = jnp.stack([0.4 * (1 + 0.2 * q[2]), 0.1 * q[0], 0.05 * q[2]])
    return make_pose(rot, trans)


def generic_beam(rng=None, stiffness=None, damping=None):
    rng = rng or np.random.default_rng(0)
    pts = np.stack([rng.uniform(0, 1, 12), rng.uniform(-0.03, 0.03, 12), rng.uniform(-0.03, 0.03, 12)], axis=1)
    w = rng.uniform(0.05, 0.2, 12)
    return kj.Body(_beam_position, _beam_tip, 3, pts, w, stiffness=stiffness, damping=damping)


def _blob_position(q, s):
    # a swelling, shearing blob: quadratic in q (exercises second derivatives)
    return s + jnp.stack([q[0] * s[1] ** 2, q[1] * s[0] + q[0] * q[1] * s[2], q[1] ** 2 * s[0] * 0.5])


def _blob_tip(q):
    return make_pose(jnp.eye(3), jnp.stack([0.2 + 0 * q[0], 0.1 * q[0], 0.05 * q[1] ** 2 + 0.1 * q[1]]))


def generic_blob(rng=None):
    rng = rng or np.random.default_rng(1)
    pts = rng.uniform(-0.1, 0.1, size=(8, 3))
    return kj.Body(_blob_position, _blob_tip, 2, pts, rng.uniform(0.1, 0.3, 8), stiffness=2.0, damping=0.1)


def mixed_chain(rng, gravity=None):
    g = rng.normal(size=3) * 5 if gravity is None else gravity
    mods = [
        (kj.Revolute(rng.normal(size=3), random_pose(rng)), random_rigid(rng)),
        (kj.Universal(rng.normal(size=3), rng.normal(size=3), random_pose(rng)),
         kj.PlanarConstantCurvature(0.3, 0.03, 1100.0, 2e5, 0.05, elongation=True, order=3)),
        (kj.Fixed(random_pose(rng)), generic_beam(rng, stiffness=np.diag([3.0, 2.0, 5.0]), damping=0.2)),
        (kj.Spherical(random_pose(rng), stiffness=1.5, damping=0.05), generic_blob(rng)),
        (kj.Prismatic(rng.normal(size=3), random_pose(rng)), random_rigid(rng)),
    ]
    return kj.Chain(mods, gravity=g)


def planar_cc_chain(n, *, elongation=False, order=3, **kw):
    body = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.0, elongation=elongation, order=order, **kw)
    return kj.Chain([(kj.Fixed() if i == 0 else kj.Fixed(), body) for i in range(n)], gravity=(0.0, -9.81, 0.0))


def random_state(rng, n, scale=1.0):
    return tuple(jnp.asarray(rng.normal(size=n) * scale) for _ in range(3))


# --- workflow robots (statics, control, optimization, identification, batch) ------------------------
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


def kelvin_voigt_chain():
    """A rigid link and a planar constant-curvature body whose Kelvin–Voigt damping puts a damped mode
    near -1.8e4 1/s (tests/simulation/test_simulate.py's chain with 30 times its damping): the mode
    that holds an explicit solver's steps."""
    body = kj.RigidBody(0.3, com=(0.1, 0.0, 0.0), inertia=jnp.diag(jnp.array([1e-4, 1e-3, 1e-3])),
                        tip=jnp.eye(4).at[0, 3].set(0.2))
    soft = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 2e5, 30.0, order=3, n_radial=1, n_angular=3)
    joint = kj.Revolute((0.0, 0.0, 1.0), stiffness=0.5, damping=0.05)
    return kj.Chain([(joint, body), (kj.Fixed(), soft)], gravity=(0.0, -9.81, 0.0))
