"""Test chains for the scaling benchmarks: planar CC (PCC) chains, N-link rigid arms, mixed chains."""

from __future__ import annotations

import numpy as np


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
    import _arms

    return _arms.kane_chain(_arms.random_arm(n, seed=seed))


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
