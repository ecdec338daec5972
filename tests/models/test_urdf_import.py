"""URDF import (``kj.from_urdf``, ``kj.JointLimits``) against Pinocchio reading the same files.

Pinocchio's ``buildModelFromUrdf`` merges fixed joints too, so joint-space quantities compare
directly: ID (``rnea``), M (``crba``), FD (``aba``), link poses (``oMf``) and limits. A continuous
joint is one angle here and ``(cos, sin)`` in Pinocchio. Tolerance 1e-12 relative to the largest
reference entry (float64; measured ≈ 1e-15). The shipped UR10e and iiwa-like files are also checked
against the DH/MDH tables they were written from (``hand_built_arms``).
"""

from importlib import resources

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import rel_err

import kane_jax as kj

pin = pytest.importorskip("pinocchio")

RTOL = 1e-12
SHIPPED = {name: str(resources.files("kane_jax.models") / "urdf" / f"{name}.urdf") for name in ("ur10e", "iiwa_like")}


@eqx.filter_jit
def _dynamics(chain, q, v, a):
    """ID, M, FD (τ = a) and the modules' distal frames, vmapped over states: one compile per structure."""
    def one(q, v, a):
        return (kj.inverse_dynamics(chain, q, v, a), kj.mass_matrix(chain, q), kj.forward_dynamics(chain, q, v, a),
                kj.forward_kinematics(chain, q))
    return jax.vmap(one)(q, v, a)


def _pinocchio(model, names, frames, q, v, a):
    """The same four quantities from Pinocchio, one state at a time, in kane_jax's coordinate order."""
    assert list(model.names)[1:] == list(names)  # same joints, same order
    data = model.createData()
    out = []
    for qk, vk, ak in zip(q, v, a, strict=True):
        q_pin = np.concatenate([[np.cos(x), np.sin(x)] if model.joints[i + 1].nq == 2 else [x]
                                for i, x in enumerate(qk)])
        m = pin.crba(model, data, q_pin)
        pin.framesForwardKinematics(model, data, q_pin)
        poses = [data.oMf[model.getFrameId(f)].homogeneous for f in frames]
        out.append((pin.rnea(model, data, q_pin, vk, ak), np.triu(m) + np.triu(m, 1).T,
                    pin.aba(model, data, q_pin, vk, ak), np.stack(poses)))
    return [np.stack(x) for x in zip(*out, strict=True)]


def _states(rng, n, k=4):
    return rng.uniform(-1.5, 1.5, (3, k, n))


def _assert_close(mine, ref, what):
    for name, x, y in zip(("ID", "M", "FD", "frames"), mine, ref, strict=True):
        err = rel_err(x, y)
        assert err < RTOL, f"{what}: {name} differs from the reference by {err:.2e} (relative)"


# ---------------------------------------------------------------------------------------------
# a URDF with everything the importer folds: rotated origins, full inertias off-axis, a fixed joint
# before the first moving joint, fixed links with mass in the middle, on a side branch and at the end


def _inertial(rng):
    principal = rng.uniform(0.01, 0.05, 3)
    principal[2] = rng.uniform(abs(principal[0] - principal[1]) + 1e-3, principal[0] + principal[1] - 1e-3)
    rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    i = rot @ np.diag(principal) @ rot.T  # full tensor in the inertial frame, itself turned by rpy
    xx, xy, xz, yy, yz, zz = (repr(float(i[r, c])) for r, c in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))
    return (f'<inertial><origin xyz="{_v(rng.uniform(-0.1, 0.1, 3))}" rpy="{_v(rng.uniform(-1, 1, 3))}"/>'
            f'<mass value="{float(rng.uniform(0.5, 3.0))!r}"/><inertia ixx="{xx}" ixy="{xy}" ixz="{xz}" '
            f'iyy="{yy}" iyz="{yz}" izz="{zz}"/></inertial>')


def _v(x):
    return " ".join(repr(float(c)) for c in x)


def _joint(rng, name, kind, parent, child, axis=None, extra=""):
    origin = f'<origin xyz="{_v(rng.uniform(-0.3, 0.3, 3))}" rpy="{_v(rng.uniform(-1.5, 1.5, 3))}"/>'
    ax = "" if axis is None else f'<axis xyz="{_v(axis)}"/>'
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{origin}{ax}'
            f"{extra}</joint>")


def _limit(lo, up, effort, velocity):
    return f'<limit lower="{lo}" upper="{up}" effort="{effort}" velocity="{velocity}"/>'


def rich_urdf(seed=0, *, tail=""):
    rng = np.random.default_rng(seed)
    massive = ["plate", "l1", "l1b", "l2", "sensor", "l3", "l4", "hand"]
    links = "".join(f'<link name="{n}">{_inertial(rng)}</link>' for n in massive)
    joints = "".join([
        _joint(rng, "mount", "fixed", "world", "plate"),
        _joint(rng, "j1", "revolute", "plate", "l1", (0.3, -0.5, 0.8), _limit(-2.5, 2.0, 80, 2.5)),
        _joint(rng, "l1_to_l1b", "fixed", "l1", "l1b"),
        _joint(rng, "j2", "continuous", "l1b", "l2", (0, 1, 0), '<limit effort="40" velocity="3"/>'),
        _joint(rng, "sensor_mount", "fixed", "l2", "sensor"),
        _joint(rng, "j3", "prismatic", "l2", "l3", (0.6, 0.0, -0.8), _limit(-0.2, 0.4, 300, 0.5)),
        _joint(rng, "j4", "revolute", "l3", "l4", (1, 0, 0), _limit(-1.0, 1.5, 20, 4.0)),
        _joint(rng, "flange", "fixed", "l4", "hand"),
        _joint(rng, "tcp_joint", "fixed", "hand", "tcp"),
    ])
    return (f'<?xml version="1.0"?><robot name="rich"><link name="world"/>{links}<link name="tcp"/>{joints}{tail}'
            "</robot>")


RICH_NAMES = ("j1", "j2", "j3", "j4")
RICH_FRAMES = ("l1", "l2", "l3", "tcp")


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ur10e", "iiwa_like"])
def test_shipped_arms_match_pinocchio(name, rng):
    chain, limits = kj.from_urdf(SHIPPED[name]), kj.JointLimits.from_urdf(SHIPPED[name])
    model = pin.buildModelFromUrdf(SHIPPED[name])
    q, v, a = _states(rng, chain.nq)
    _assert_close(_dynamics(chain, q, v, a), _pinocchio(model, limits.joint_names, limits.link_names, q, v, a), name)
    np.testing.assert_allclose(limits.lower, model.lowerPositionLimit, rtol=1e-15)
    np.testing.assert_allclose(limits.upper, model.upperPositionLimit, rtol=1e-15)
    np.testing.assert_allclose(limits.effort, model.effortLimit, rtol=1e-15)
    np.testing.assert_allclose(limits.velocity, model.velocityLimit, rtol=1e-15)


@pytest.mark.parametrize("name", ["ur10e", "iiwa_like"])
def test_models_match_their_dh_tables(name, rng):
    from helpers import hand_built_arms

    g = (0.3, -1.2, -9.5)
    kw = {"gravity": g, "damping": 0.7} if name == "ur10e" else {"gravity": g}
    mine, ref = getattr(kj.models, name)(**kw), getattr(hand_built_arms, name)(**kw)
    q, v, a = _states(rng, mine.nq)
    out_mine, out_ref = _dynamics(mine, q, v, a), _dynamics(ref, q, v, a)
    _assert_close(out_mine[:3] + (out_mine[3][:, -1],), out_ref[:3] + (out_ref[3][:, -1],), name)  # tip frames


def test_rich_urdf_matches_pinocchio(rng):
    xml = rich_urdf()
    chain, limits = kj.from_urdf(xml, tip_link="tcp"), kj.JointLimits.from_urdf(xml, tip_link="tcp")
    assert (chain.n_modules, chain.nq, limits.joint_names, limits.link_names) == (4, 4, RICH_NAMES, RICH_FRAMES)
    model = pin.buildModelFromXML(xml)
    q, v, a = _states(rng, 4)
    _assert_close(_dynamics(chain, q, v, a), _pinocchio(model, RICH_NAMES, RICH_FRAMES, q, v, a), "rich URDF")
    np.testing.assert_array_equal(limits.lower, [-2.5, -np.inf, -0.2, -1.0])
    np.testing.assert_array_equal(limits.upper, [2.0, np.inf, 0.4, 1.5])
    np.testing.assert_allclose(limits.effort, model.effortLimit, rtol=1e-15)
    np.testing.assert_allclose(limits.velocity, model.velocityLimit, rtol=1e-15)
    with pytest.raises(ValueError, match="read-only"):
        limits.lower[0] = 0.0


def test_base_link_inside_the_tree(rng):
    # base l1b: joints j2..j4 with l1b held still; Pinocchio's full model with j1 at rest, gravity in l1b axes
    xml = rich_urdf()
    model = pin.buildModelFromXML(xml)
    data = model.createData()
    q1 = rng.uniform(-1, 1)
    pin.framesForwardKinematics(model, data, np.concatenate([[q1], np.zeros(4)]))
    g_local = data.oMf[model.getFrameId("l1b")].rotation.T @ model.gravity.linear
    chain = kj.from_urdf(xml, base_link="l1b", tip_link="tcp", gravity=g_local)
    q, v, a = _states(rng, 3, k=1)[:, 0]
    q_pin = np.concatenate([[q1, np.cos(q[0]), np.sin(q[0])], q[1:]])
    tau = pin.rnea(model, data, q_pin, np.concatenate([[0.0], v]), np.concatenate([[0.0], a]))
    m = pin.crba(model, data, q_pin)
    assert rel_err(kj.inverse_dynamics(chain, q, v, a), tau[1:]) < RTOL
    assert rel_err(kj.mass_matrix(chain, q), (np.triu(m) + np.triu(m, 1).T)[1:, 1:]) < RTOL


def test_moving_side_branch_is_left_out_with_a_warning(rng):
    branch = ('<link name="finger">' + _inertial(np.random.default_rng(5)) + "</link>"
              + _joint(np.random.default_rng(6), "finger_joint", "revolute", "l3", "finger", (0, 0, 1),
                       _limit(-1, 1, 5, 1)))
    with pytest.warns(UserWarning, match=r"finger_joint"):
        chain = kj.from_urdf(rich_urdf(tail=branch), tip_link="tcp")
    q, v, a = _states(rng, 4)
    ref = _pinocchio(pin.buildModelFromXML(rich_urdf()), RICH_NAMES, RICH_FRAMES, q, v, a)  # without the branch
    _assert_close(_dynamics(chain, q, v, a), ref, "arm without its finger")


def test_soft_module_attaches_after_the_arm(rng):
    # with the rod's coordinates held (bent, q̇ = q̈ = 0) the rod is a rigid body on tool0: the arm's rows of ID
    # are Pinocchio's for the URDF arm with that body appended (mass properties of the rod's mass points)
    arm = kj.from_urdf(SHIPPED["ur10e"])
    rod = kj.PlanarConstantCurvature(length=0.3, radius=0.02)  # compiles in half the time of a CosseratPCS
    hybrid = kj.Chain(arm.modules + [(kj.Fixed(), rod)])
    assert (hybrid.n_modules, hybrid.nq) == (7, 7)
    q_rod = np.array([0.8])  # bending angle [rad]
    pts, w = np.asarray(rod.points_in_frame(jnp.asarray(q_rod))), np.asarray(rod.weights)
    mass = w.sum()
    com = w @ pts / mass
    d = pts - com
    inertia = np.sum(w * np.sum(d * d, axis=1)) * np.eye(3) - (w[:, None] * d).T @ d
    model = pin.buildModelFromUrdf(SHIPPED["ur10e"])
    tool0 = model.frames[model.getFrameId("tool0")]
    model.appendBodyToJoint(tool0.parentJoint, pin.Inertia(mass, com, inertia), tool0.placement)
    data = model.createData()
    q, v, a = rng.uniform(-1.5, 1.5, (3, 6))
    z = np.zeros(1)
    tau = kj.inverse_dynamics(hybrid, np.concatenate([q, q_rod]), np.concatenate([v, z]), np.concatenate([a, z]))
    assert rel_err(tau[:6], pin.rnea(model, data, q, v, a)) < RTOL


@pytest.mark.parametrize("change, exc, match", [
    (lambda x: x.replace('name="l1_to_l1b" type="fixed"', 'name="l1_to_l1b" type="floating"'), ValueError,
     r"joint 'l1_to_l1b'.*floating"),
    (lambda x: x.replace('name="j3" type="prismatic"', 'name="j3" type="planar"'), ValueError, r"joint 'j3'.*planar"),
    (lambda x: x.replace("</joint>", '<mimic joint="j1"/></joint>', 2).replace('<mimic joint="j1"/>', "", 1),
     ValueError, r"joint 'j1'.*mimic"),
    (lambda x: x.replace('type="continuous"', 'type="spherical"'), ValueError, r"joint 'j2' has type 'spherical'"),
    (lambda x: x.replace('<child link="l3"/>', '<child link="l9"/>'), ValueError, r"joint 'j3' names child link 'l9'"),
    (lambda x: x.replace('<limit lower="-1.0" upper="1.5" effort="20" velocity="4.0"/>', ""), ValueError,
     r"revolute joint 'j4' must have a <limit>"),
    (lambda x: x.replace('<link name="l3"><inertial>', '<link name="l3"><ignored>').replace(
        '</inertial></link><link name="l4">', '</ignored></link><link name="l4">'), ValueError, r"\['l3'\].*mass"),
    (lambda x: x.replace("<robot", "<mujoco").replace("</robot>", "</mujoco>"), ValueError, "<robot> root.*<mujoco>"),
    (lambda x: x[:-5], ValueError, "well-formed"),
])
def test_bad_urdf_is_rejected(change, exc, match):
    with pytest.raises(exc, match=match):
        kj.from_urdf(change(rich_urdf()), tip_link="tcp")


def test_bad_arguments_are_rejected(tmp_path):
    xml = rich_urdf()
    with pytest.raises(ValueError, match=r"`tip_link` must be given .* leaf links are \['sensor', 'tcp'\]"):
        kj.from_urdf(xml)
    with pytest.raises(ValueError, match=r"`tip_link` must name a link of the robot, got 'nope'"):
        kj.from_urdf(xml, tip_link="nope")
    with pytest.raises(ValueError, match=r"`base_link` must name a link of the robot, got 'base'"):
        kj.JointLimits.from_urdf(xml, base_link="base", tip_link="tcp")
    with pytest.raises(ValueError, match=r"`base_link` must be an ancestor of `tip_link`, got 'l3' and 'sensor'"):
        kj.from_urdf(xml, base_link="l3", tip_link="sensor")
    with pytest.raises(ValueError, match=r"must contain a moving joint.*\['flange', 'tcp_joint'\]"):
        kj.from_urdf(xml, base_link="l4", tip_link="tcp")
    with pytest.raises(TypeError, match=r"`source` must be a URDF file path or an XML string, got int"):
        kj.from_urdf(3)
    with pytest.raises(FileNotFoundError, match="`source`"):
        kj.from_urdf(tmp_path / "missing.urdf")
    path = tmp_path / "rich.urdf"
    path.write_text(xml)
    assert kj.from_urdf(path, tip_link="tcp").nq == kj.from_urdf(str(path), tip_link="tcp").nq == 4
