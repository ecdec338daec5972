"""URDF import: the serial path of a URDF tree as a :class:`~kane_jax.Chain`, and its joint limits.

One module per *moving* joint (revolute, continuous, prismatic) on the path ``base_link`` → ``tip_link``.
Module ``k``'s proximal and distal frames are the frame of the link joint ``k`` moves (Pinocchio's
joint frame); the last distal frame is ``tip_link``'s. Fixed joints fold in: before the first moving
joint or between two, into the next joint's placement; the links they carry (fixed side branches of
a moved link too) into the moved link's :class:`~kane_jax.RigidBody`; after the last moving joint,
into the last body and its tip. Read: ``<link>``/``<inertial>`` and ``<joint>``; ignored: geometry,
``<dynamics>`` (damping, friction), transmissions, Gazebo tags.

Parser: the standard library's :mod:`xml.etree.ElementTree`; the dynamics need a few attributes of
three elements, and ``yourdfpy`` (0.0.60) would bring ``lxml`` and ``trimesh[easy]`` (scipy, shapely,
networkx, …) into the core dependencies for meshes kane_jax does not use. Parse trusted files only.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import warnings
import xml.etree.ElementTree as ET
from typing import NamedTuple

import numpy as np

from ..bodies.rigid import RigidBody
from ..chain import DEFAULT_GRAVITY, Chain
from ..joints import Prismatic, Revolute

_MOVING = ("revolute", "continuous", "prismatic")
_TYPES = (*_MOVING, "fixed", "floating", "planar")


class _Joint(NamedTuple):
    name: str
    kind: str
    parent: str
    child: str
    origin: np.ndarray  # 4×4 pose of the joint frame in the parent link's frame
    axis: np.ndarray
    limits: tuple[float, float, float, float]  # lower, upper, effort, velocity
    mimic: bool


class _Tree(NamedTuple):  # links: name -> (mass, com, inertia about the com) in the link's frame, or None
    links: dict[str, tuple[float, np.ndarray, np.ndarray] | None]
    parent_joint: dict[str, _Joint]  # child link -> its joint
    child_joints: dict[str, list[_Joint]]  # parent link -> its joints, document order


def _numbers(elem: ET.Element | None, attr: str, n: int, default: tuple[float, ...] | None, where: str) -> np.ndarray:
    text = None if elem is None else elem.get(attr)
    if text is None and default is not None:
        return np.array(default, dtype=float)
    try:
        vals = np.array(text.split(), dtype=float)
    except (AttributeError, ValueError):  # no attribute, or not numbers
        vals = np.array([])
    if vals.shape != (n,) or not np.all(np.isfinite(vals)):
        raise ValueError(f"`source`: {where} needs attribute `{attr}` with {n} finite number(s), got {text!r}.")
    return vals


def _origin(elem: ET.Element | None, where: str) -> np.ndarray:
    """``<origin xyz rpy>`` as a 4×4 pose: ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, y, z)."""
    o = None if elem is None else elem.find("origin")
    rpy = _numbers(o, "rpy", 3, (0.0, 0.0, 0.0), f"{where} <origin>")
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    pose = np.eye(4)
    pose[:3, :3] = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                    [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], [-sp, cp * sr, cp * cr]]
    pose[:3, 3] = _numbers(o, "xyz", 3, (0.0, 0.0, 0.0), f"{where} <origin>")
    return pose


def _limits(limit: ET.Element | None, name: str, kind: str) -> tuple[float, float, float, float]:
    if limit is None and kind in ("revolute", "prismatic"):
        raise ValueError(f"`source`: {kind} joint {name!r} must have a <limit> element (URDF), got none.")
    value = lambda a, d: d if limit is None else float(_numbers(limit, a, 1, (d,), f"joint {name!r} <limit>")[0])
    lower, upper = (-np.inf, np.inf) if kind == "continuous" else (value("lower", 0.0), value("upper", 0.0))
    return lower, upper, value("effort", np.inf), value("velocity", np.inf)


def _read(source) -> ET.Element:
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"`source` must be a URDF file path or an XML string, got {type(source).__name__}.")
    path = None if isinstance(source, str) and source.lstrip().startswith("<") else pathlib.Path(source)
    if path is not None and not path.is_file():
        raise FileNotFoundError(f"`source` must be a URDF file path or an XML string (starting with '<'), "
                                f"got {str(source)!r:.120}, which is neither.")
    try:
        root = ET.fromstring(source if path is None else path.read_bytes())
    except ET.ParseError as err:
        raise ValueError(f"`source` must be well-formed URDF XML, got a parse error: {err}.") from None
    if root.tag != "robot":
        raise ValueError(f"`source` must be a URDF document with a <robot> root element, got <{root.tag}>.")
    return root


def _parse(root: ET.Element) -> _Tree:
    links: dict = {}
    for el in root.findall("link"):
        name = el.get("name")
        if not name or name in links:
            raise ValueError(f"`source`: every <link> needs a unique name, got {name!r} twice or empty.")
        inertial, where, links[name] = el.find("inertial"), f"link {name!r} <inertial>", None
        if inertial is not None:
            mass = float(_numbers(inertial.find("mass"), "value", 1, None, f"{where} <mass>")[0])
            if mass < 0:
                raise ValueError(f"`source`: {where} <mass> must be non-negative, got {mass}.")
            xx, xy, xz, yy, yz, zz = (float(_numbers(inertial.find("inertia"), a, 1, (0.0,), f"{where} <inertia>")[0])
                                      for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
            pose = _origin(inertial, where)  # the inertial frame in the link frame
            inertia = pose[:3, :3] @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ pose[:3, :3].T
            links[name] = (mass, pose[:3, 3], inertia)
    parent_joint: dict[str, _Joint] = {}
    child_joints: dict[str, list[_Joint]] = {name: [] for name in links}
    for el in root.findall("joint"):
        name, kind = el.get("name"), el.get("type")
        if not name or any(j.name == name for j in parent_joint.values()):
            raise ValueError(f"`source`: every <joint> needs a unique name, got {name!r} twice or empty.")
        if kind not in _TYPES:
            raise ValueError(f"`source`: joint {name!r} has type {kind!r}; URDF joint types are {list(_TYPES)}.")
        ends = [None if el.find(end) is None else el.find(end).get("link") for end in ("parent", "child")]
        for end, link in zip(("parent", "child"), ends, strict=True):
            if link not in links:
                raise ValueError(f"`source`: joint {name!r} names {end} link {link!r}, which is not a <link> "
                                 f"of the robot (links: {sorted(links)[:20]}).")
        if ends[1] in parent_joint:
            raise ValueError(f"`source`: link {ends[1]!r} is the child of two joints, "
                             f"{parent_joint[ends[1]].name!r} and {name!r}; a URDF must be a tree.")
        axis = _numbers(el.find("axis"), "xyz", 3, (1.0, 0.0, 0.0), f"joint {name!r} <axis>")
        if kind in _MOVING and np.linalg.norm(axis) < 1e-12:
            raise ValueError(f"`source`: joint {name!r} must have a nonzero <axis xyz>, got {axis.tolist()}.")
        joint = _Joint(name, kind, ends[0], ends[1], _origin(el, f"joint {name!r}"), axis,
                       _limits(el.find("limit"), name, kind), el.find("mimic") is not None)
        parent_joint[ends[1]] = joint
        child_joints[ends[0]].append(joint)
    return _Tree(links, parent_joint, child_joints)


def _path(tree: _Tree, base_link: str | None, tip_link: str | None) -> tuple[str, list[_Joint]]:
    """The joints from ``base_link`` to ``tip_link``, base first (defaults resolved, inputs checked)."""
    roots = [name for name in tree.links if name not in tree.parent_joint]
    if len(roots) != 1:
        raise ValueError(f"`source` must describe one tree of links, got {len(roots)} root links {roots[:20]}.")
    reached, stack = set(roots), list(roots)
    while stack:
        stack += [j.child for j in tree.child_joints[stack.pop()]]
        reached.update(stack)
    if len(reached) != len(tree.links):
        raise ValueError(f"`source` must describe a tree, got links on a cycle {sorted(set(tree.links) - reached)}.")
    for arg, value in (("base_link", base_link), ("tip_link", tip_link)):
        if value is not None and value not in tree.links:
            raise ValueError(f"`{arg}` must name a link of the robot, got {value!r} (links: {list(tree.links)[:20]}).")
    base = roots[0] if base_link is None else base_link
    if tip_link is None:
        leaves, stack = [], [base]
        while stack:  # depth first, document order
            link = stack.pop()
            kids = [j.child for j in tree.child_joints[link]]
            leaves += [] if kids else [link]
            stack += kids[::-1]
        if len(leaves) != 1:
            raise ValueError(f"`tip_link` must be given because the tree below {base!r} branches; "
                             f"got None, and the leaf links are {leaves}.")
        tip_link = leaves[0]
    path, link = [], tip_link
    while link != base:
        if link not in tree.parent_joint:
            raise ValueError(f"`base_link` must be an ancestor of `tip_link`, got {base!r} and {tip_link!r}.")
        path.append(tree.parent_joint[link])
        link = path[-1].parent
    for j in path:
        if j.kind in ("floating", "planar") or j.mimic:
            raise ValueError(f"`source`: joint {j.name!r} on the path to {tip_link!r} must be revolute, continuous, "
                             f"prismatic or fixed without <mimic>, got a {'mimic ' * j.mimic}{j.kind} joint.")
    path.reverse()
    if not any(j.kind in _MOVING for j in path):
        raise ValueError(f"the path from `base_link` {base!r} to `tip_link` {tip_link!r} must contain a moving "
                         f"joint, got joints {[j.name for j in path]} (all fixed or none).")
    return tip_link, path


def _attached(tree: _Tree, link: str, pose: np.ndarray, skip: str | None, dropped: list[str]):
    """``link`` at ``pose`` and every link rigidly attached to it by fixed joints, except ``skip``'s branch."""
    parts = [(pose, link)]
    for j in (j for j in tree.child_joints[link] if j.name != skip):
        if j.kind == "fixed":
            parts += _attached(tree, j.child, pose @ j.origin, None, dropped)
        else:
            dropped.append(j.name)
    return parts


def _body(tree: _Tree, parts, tip: np.ndarray, joint_name: str) -> RigidBody:
    """Merge the links' inertias into one rigid body in the first link's frame (parallel-axis theorem)."""
    data = [(pose, tree.links[ln]) for pose, ln in parts if tree.links[ln] is not None and tree.links[ln][0] != 0]
    names = [ln for _, ln in parts]  # for the messages
    if not data:
        raise ValueError(f"`source`: the links {names} moved by joint {joint_name!r} must have a positive total mass "
                         f"(kane_jax rigid bodies need one), got no <inertial> mass.")
    masses, coms = np.array([m for _, (m, _, _) in data]), np.array([p[:3, :3] @ c + p[:3, 3] for p, (_, c, _) in data])
    mass, com = float(masses.sum()), masses @ coms / masses.sum()
    inertia = np.zeros((3, 3))
    for (pose, (m, _, i_c)), c in zip(data, coms, strict=True):
        d = c - com
        inertia += pose[:3, :3] @ i_c @ pose[:3, :3].T + m * (d @ d * np.eye(3) - np.outer(d, d))
    try:
        return RigidBody(mass, com, None if not inertia.any() else inertia, tip=tip)
    except ValueError as err:
        raise ValueError(f"`source`: the links {names} moved by joint {joint_name!r} give a non-physical "
                         f"rigid body: {err}") from None


@dataclasses.dataclass(frozen=True, eq=False)
class JointLimits:
    """Joint data of a URDF chain, one entry per coordinate (base to tip), for controllers.

    Pinocchio's ``model.names``, ``lowerPositionLimit``, ``upperPositionLimit``, ``effortLimit``,
    ``velocityLimit``. Units: rad or m, N m or N, rad/s or m/s by joint type; continuous joints have
    ``lower = -inf``, ``upper = +inf``; an effort or velocity the URDF does not give is ``inf``.

    Attributes:
        joint_names: URDF names of the moving joints, coordinate order.
        lower, upper, effort, velocity: read-only float64 arrays of shape ``(nq,)``.
        link_names: URDF link of each module's distal frame (rows of :func:`~kane_jax.forward_kinematics`).
    """

    joint_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    effort: np.ndarray
    velocity: np.ndarray
    link_names: tuple[str, ...]

    @classmethod
    def from_urdf(cls, source, *, base_link: str | None = None, tip_link: str | None = None) -> JointLimits:
        """The joint data of ``from_urdf(source, base_link=…, tip_link=…)``: same arguments, same errors."""
        return _build(source, base_link, tip_link)[1]


def _build(source, base_link, tip_link) -> tuple[list, JointLimits]:
    tree = _parse(_read(source))
    tip_link, path = _path(tree, base_link, tip_link)
    on_path = {j.name for j in path}
    joints, bodies, moving, dropped = [], [], [], []
    placement, parts = np.eye(4), None  # fixed transforms since the last moved link; the open body's links
    for j in path:
        placement = placement @ j.origin
        nxt = next((c.name for c in tree.child_joints[j.child] if c.name in on_path), None)
        if j.kind == "fixed":  # a link carried by the open body, or (before any moving joint) by the base
            parts = None if parts is None else parts + _attached(tree, j.child, placement, nxt, dropped)
            continue
        if parts is not None:
            bodies.append(_body(tree, parts, np.eye(4), moving[-1].name))
        joints.append((Prismatic if j.kind == "prismatic" else Revolute)(j.axis, placement))
        moving.append(j)
        placement, parts = np.eye(4), _attached(tree, j.child, np.eye(4), nxt, dropped)
    bodies.append(_body(tree, parts, placement, moving[-1].name))
    limits = [np.array(col, dtype=float) for col in zip(*(j.limits for j in moving), strict=True)]
    for col in limits:  # read-only: JointLimits is frozen
        col.setflags(write=False)
    if dropped:
        warnings.warn(f"from_urdf: the subtrees behind joints {dropped} branch off the path to {tip_link!r} "
                      f"through moving joints and are left out of the chain, their mass too.", stacklevel=3)
    frames = (*(j.child for j in moving[:-1]), tip_link)
    return list(zip(joints, bodies, strict=True)), JointLimits(tuple(j.name for j in moving), *limits, frames)


def from_urdf(source, *, base_link: str | None = None, tip_link: str | None = None,
              gravity=DEFAULT_GRAVITY) -> Chain:
    """A :class:`~kane_jax.Chain` from the serial path ``base_link`` → ``tip_link`` of a URDF robot.

    One ``(Revolute | Prismatic, RigidBody)`` module per moving joint, coordinates in joint order
    from base to tip (a continuous joint is one angle); fixed joints are merged (module docstring).
    Joint names, limits and the links of the modules' frames: :meth:`JointLimits.from_urdf`. A soft
    module attaches after the arm: ``Chain(chain.modules + [(Fixed(), CosseratPCS(...))])``.

    Arguments:
        source: path of a ``.urdf`` file (``str`` or ``os.PathLike``) or the URDF XML as a string.
        base_link: link fixed to the world frame; default the root link.
        tip_link: last link; default the only leaf below ``base_link``.
        gravity: base-frame gravity [m/s²].

    Returns:
        The chain; its last distal frame is ``tip_link``'s frame.

    Raises:
        TypeError: ``source`` neither ``str`` nor path.
        FileNotFoundError: ``source`` neither XML nor an existing file.
        ValueError: not well-formed URDF; unknown ``base_link``/``tip_link``; a branching tree without
            ``tip_link`` (the message lists the leaves); a floating, planar or mimic joint on the path;
            missing links, ``<limit>`` or mass; non-physical inertias.

    Warns:
        UserWarning: naming the joints behind which side branches with moving joints are left out.
    """
    return Chain(_build(source, base_link, tip_link)[0], gravity=gravity)
