"""The benchmarks' robots, defined once.

*Rigid arms* built identically in kane_jax, Pinocchio (in code) and MuJoCo (MJCF string);
*scaling chains*: N identical planar CC segments, N-link random rigid arms, alternating rigid/CC
chains (:data:`FAMILIES`).


An arm is a list of links; link ``i`` has a revolute joint about the z axis of its frame, whose
constant placement in the previous link frame is ``(R_{i-1,i}, r_{i-1,i})`` (the modified
Denavit–Hartenberg frames of paper ``002_…`` §6.2), and a rigid body with mass ``m``, centre of
mass ``c`` and inertia ``I_c`` about the centre of mass, all in link frame ``i``.

*iiwa-like arm*: the frames of paper ``002_…`` §6.2 (eq. 58 and the R/r list), with the KUKA LBR
iiwa 14 R820 offsets ``r3 = 0.42 m`` and ``r5 = 0.40 m``. The paper's Table 1 (identified inertias
of [29]) was lost in the text conversion, so the masses and principal inertias below are
representative iiwa-14 values (the public iiwa14 description's masses and inertias), with centres
of mass placed in the MDH frames. It has the paper's structure, not its exact numbers.

*random arm*: random placements (rotation and translation), masses, centres of mass and physically
valid inertias from a seeded generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

R_PLUS = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # i = 2, 5, 6
R_MINUS = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # i = 3, 4, 7


@dataclass(frozen=True)
class Link:
    rot: np.ndarray  # R_{i-1,i}
    trans: np.ndarray  # r_{i-1,i}
    mass: float
    com: np.ndarray
    inertia: np.ndarray  # about the centre of mass, link-frame axes


def iiwa_like() -> list[Link]:
    """The iiwa-like 7-DoF arm (frames of paper ``002_…`` §6.2; see the module docstring)."""
    r3, r5 = 0.42, 0.40
    rots = [np.eye(3), R_PLUS, R_MINUS, R_MINUS, R_PLUS, R_PLUS, R_MINUS]
    trans = [np.zeros(3), np.zeros(3), np.array([0.0, r3, 0.0]), np.zeros(3), np.array([0.0, -r5, 0.0]),
             np.zeros(3), np.zeros(3)]
    masses = [5.76, 6.35, 3.5, 3.5, 3.5, 1.8, 1.2]
    coms = [(0.0, -0.03, -0.12), (0.0003, 0.059, 0.042), (0.0, 0.03, -0.13), (0.0, 0.067, 0.034),
            (0.0001, 0.021, -0.076), (0.0, 0.0006, 0.0004), (0.0, 0.0, 0.02)]
    diag = [(0.033, 0.0333, 0.0123), (0.0305, 0.0304, 0.011), (0.025, 0.0238, 0.0076), (0.017, 0.0164, 0.006),
            (0.01, 0.0087, 0.00449), (0.0049, 0.0047, 0.0036), (0.001, 0.001, 0.001)]
    return [Link(r, t, m, np.array(c), np.diag(d)) for r, t, m, c, d in zip(rots, trans, masses, coms, diag)]


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def random_arm(n: int = 7, seed: int = 0) -> list[Link]:
    """A random n-link revolute arm (seeded)."""
    rng = np.random.default_rng(seed)
    links = []
    for _ in range(n):
        x, y, z = rng.uniform(0.005, 0.05, 3)
        principal = np.array([y + z, x + z, x + y])  # triangle inequality holds by construction
        q = _random_rotation(rng)
        links.append(Link(_random_rotation(rng), rng.uniform(-0.25, 0.25, 3), float(rng.uniform(0.5, 4.0)),
                          rng.uniform(-0.1, 0.1, 3), q @ np.diag(principal) @ q.T))
    return links


ARMS = {"iiwa-like": iiwa_like, "random": random_arm}


# ------------------------------------------------------------------------------------------
# builders


def kane_chain(links: list[Link], gravity=(0.0, 0.0, -9.81)):
    import kane_jax as kj

    mods = []
    for ln in links:
        placement = np.eye(4)
        placement[:3, :3], placement[:3, 3] = ln.rot, ln.trans
        mods.append((kj.Revolute((0.0, 0.0, 1.0), placement=placement),
                     kj.RigidBody(ln.mass, ln.com, ln.inertia)))
    return kj.Chain(mods, gravity=gravity)


def pinocchio_model(links: list[Link], gravity=(0.0, 0.0, -9.81)):
    import pinocchio as pin

    model = pin.Model()
    parent = 0
    for i, ln in enumerate(links):
        jid = model.addJoint(parent, pin.JointModelRZ(), pin.SE3(ln.rot, ln.trans), f"joint{i + 1}")
        model.appendBodyToJoint(jid, pin.Inertia(ln.mass, ln.com, ln.inertia), pin.SE3.Identity())
        parent = jid
    model.gravity.linear = np.asarray(gravity, dtype=float)
    return model


def mujoco_xml(links: list[Link], gravity=(0.0, 0.0, -9.81)) -> str:
    import mujoco

    def body(i: int) -> str:
        ln = links[i]
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(ln.rot).reshape(-1))
        ic = ln.inertia
        full = " ".join(repr(float(ic[a, b])) for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))
        inner = body(i + 1) if i + 1 < len(links) else ""
        return (f'<body name="link{i + 1}" pos="{" ".join(repr(float(x)) for x in ln.trans)}" '
                f'quat="{" ".join(repr(float(x)) for x in quat)}">'
                f'<joint name="j{i + 1}" type="hinge" axis="0 0 1" limited="false"/>'
                f'<inertial pos="{" ".join(repr(float(x)) for x in ln.com)}" mass="{float(ln.mass)!r}" '
                f'fullinertia="{full}"/>{inner}</body>')

    g = " ".join(repr(float(x)) for x in gravity)
    return (f'<mujoco model="arm"><compiler angle="radian" inertiafromgeom="false" balanceinertia="false"/>'
            f'<option gravity="{g}" timestep="0.001"><flag contact="disable" constraint="disable" '
            f'limit="disable" actuation="disable"/></option>'
            f'<worldbody>{body(0)}</worldbody></mujoco>')


def mujoco_model(links: list[Link], gravity=(0.0, 0.0, -9.81)):
    import mujoco

    return mujoco.MjModel.from_xml_string(mujoco_xml(links, gravity))


# --- scaling chains (bench_scaling, bench_recursive_vs_el, bench_gpu) -----------------------------

def pcc_chain(n: int, *, elongation: bool = False):
    """N identical planar constant-curvature segments (paper ``003_…`` Sim. 3 style), fixed joints.

    Each segment: L = 0.2 m, r = 0.02 m, ρ = 1000 kg/m³, E = 1 MPa, η = 0.01 s (Kelvin–Voigt),
    default quadrature (5 arc nodes × 8 section nodes). Gravity along −y (in the bending plane).
    """
    import kane_jax as kj

    body = kj.PlanarConstantCurvature(length=0.2, radius=0.02, density=1000.0, youngs_modulus=1e6,
                                      damping=0.01, elongation=elongation)
    return kj.Chain([(kj.Fixed(), body)] * n, gravity=(0.0, -9.81, 0.0))


def rigid_chain(n: int, seed: int = 0):
    """An n-link random revolute arm (same generator as the 7-DoF random arm)."""
    return kane_chain(random_arm(n, seed=seed))


def mixed_chain(n: int):
    """Alternating rigid links (revolute z joints) and planar CC segments (fixed joints), n modules."""
    import kane_jax as kj

    body = kj.PlanarConstantCurvature(length=0.2, radius=0.02, density=1000.0, youngs_modulus=1e6,
                                      damping=0.01)
    tip = np.eye(4)
    tip[0, 3] = 0.15
    link = kj.RigidBody(0.5, (0.075, 0.0, 0.0), np.diag([1e-4, 1e-3, 1e-3]), tip=tip)
    mods = [(kj.Revolute((0.0, 0.0, 1.0)), link) if i % 2 == 0 else (kj.Fixed(), body) for i in range(n)]
    return kj.Chain(mods, gravity=(0.0, -9.81, 0.0))


FAMILIES = {"planar CC": pcc_chain, "rigid arm": rigid_chain, "rigid/CC alternating": mixed_chain}


def random_state(chain, seed: int = 0, scale: float = 0.5):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-scale, scale, chain.nq) for _ in range(4))


# --- one soft body of each model (bench_soft_bodies, bench_deforming_sections) ---------------------

def soft_bodies(kj) -> dict:
    """Constructors of one body of each soft model, by row name, for the package ``kj`` (``kane_jax``
    or a past revision of it, :mod:`_baseline`): the rods and the learned body on the default
    quadrature (5 arc nodes × 2 × 4 section points), the variable-radius PCC of paper ``000_…`` Sim. 1
    and an LVP body of paper ``003_…`` (stretch, two shears, twist, two bends; Neo-Hookean)."""
    import importlib

    import jax

    from_lvp = importlib.import_module(kj.__name__ + ".bodies.lvp_primitives")
    rod = dict(order=5, n_radial=2, n_angular=4)
    return {
        "PlanarConstantCurvature (± elongation)": lambda: kj.PlanarConstantCurvature(
            0.2, 0.02, 1000.0, 1e6, 0.1, elongation=True, **rod),
        "SpatialConstantCurvature": lambda: kj.SpatialConstantCurvature(0.2, 0.02, 1000.0, 1e6, 0.1, **rod),
        "CosseratPCS (6 strains)": lambda: kj.CosseratPCS(0.2, 0.01, 1070.0, 1e6, tip_radius=0.005, damping=0.01,
                                                          **rod),
        "CosseratGVS (PGC basis, 6 Magnus steps)": lambda: kj.CosseratGVS(
            0.2, 0.01, 1070.0, 6.66e8, poisson_ratio=0.4, tip_radius=0.005, damping=0.01,
            basis=kj.PiecewiseGaussianCurvature(0.2), **rod),
        "GodageSection": lambda: kj.GodageSection(0.15, 0.0125, 0.1, stiffness=200.0, damping=2.0, **rod),
        "LearnedBody (MLP 16×2)": lambda: kj.LearnedBody(3, length=0.2, radius=0.02, key=jax.random.PRNGKey(0),
                                                         stiffness=5.0, damping=0.1, **rod),
        "VariableRadiusPCC": lambda: kj.VariableRadiusPCC(order=5, n_radial=2, n_angular=8),
        "LVPBody (6 primitives, Neo-Hookean)": lambda: kj.LVPBody(
            [from_lvp.Stretch(), from_lvp.Shear("y"), from_lvp.Shear("z"), from_lvp.Twist(), from_lvp.Bend("y"),
             from_lvp.Bend("z")], 0.1, 0.02, 1000.0, kj.NeoHookean(1e5, 0.5, 0.05), order=4, n_radial=2,
            n_angular=4),
    }

