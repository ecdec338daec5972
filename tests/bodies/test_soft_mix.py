"""Every soft model of issue 3 (part A) in one chain with a rigid module: ID == Euler–Lagrange."""

import jax
import numpy as np
import pytest
from helpers.checks import check_against_el

import kane_jax as kj
from kane_jax.bodies.cosserat import CosseratGVS, CosseratPCS
from kane_jax.bodies.godage import GodageSection
from kane_jax.bodies.learned import LearnedBody
from kane_jax.bodies.spatial_cc import SpatialConstantCurvature
from kane_jax.bodies.strain_bases import GaussianBasis

SMALL = dict(order=2, n_radial=1, n_angular=3)


@pytest.mark.slow  # one EL compile of a 6-module chain: 23 s alone, pinned (2026-11-26; ~17 min on a loaded box)
def test_mixed_soft_rigid_chain_matches_euler_lagrange(rng):
    rigid = kj.RigidBody(0.5, (0.05, 0.0, 0.01), np.diag([1e-3, 2e-3, 2e-3]), tip=np.eye(4))
    mods = [
        (kj.Revolute((0.0, 0.0, 1.0)), rigid),
        (kj.Fixed(), SpatialConstantCurvature(0.2, 0.02, damping=0.01, **SMALL)),
        (kj.Revolute((1.0, 0.0, 0.0)), CosseratPCS(0.15, 0.01, tip_radius=0.006,
                                                    strains=("twist", "bend_y", "stretch"), **SMALL)),
        (kj.Fixed(), CosseratGVS(0.15, 0.008, basis=GaussianBasis(2), strains=("bend_z",), **SMALL)),
        (kj.Fixed(), GodageSection(0.1, 0.01, 0.05, stiffness=20.0, **SMALL)),
        (kj.Fixed(), LearnedBody(1, length=0.1, radius=0.01, key=jax.random.PRNGKey(1), width_size=4, depth=1,
                                 **SMALL)),
    ]
    chain = kj.Chain(mods, gravity=(0.5, -1.0, -9.81))
    check_against_el(chain, rng, n_states=1, scale=0.3)


def test_cosserat_and_learned_bodies_in_a_mixed_chain_match_euler_lagrange(rng):
    """Default-run mixed check of the models no other default mixed test holds (Cosserat PCS and
    GVS, learned), between a rigid link and each other; the other models are mixed in
    test_godage, test_lvp, test_variable_radius and tests/algorithms/test_inverse_dynamics."""
    rigid = kj.RigidBody(0.3, (0.04, 0.0, 0.01), np.diag([1e-3, 2e-3, 2e-3]), tip=np.eye(4))
    mods = [
        (kj.Revolute((0.0, 0.0, 1.0)), rigid),
        (kj.Revolute((1.0, 0.0, 0.0)), CosseratPCS(0.15, 0.01, tip_radius=0.006, strains=("bend_y", "stretch"),
                                                    **SMALL)),
        (kj.Fixed(), CosseratGVS(0.12, 0.008, basis=GaussianBasis(2), strains=("bend_z",), **SMALL)),
        (kj.Fixed(), LearnedBody(1, length=0.1, radius=0.01, key=jax.random.PRNGKey(1), width_size=4, depth=1,
                                 **SMALL)),
    ]
    check_against_el(kj.Chain(mods, gravity=(0.5, -1.0, -9.81)), rng, n_states=1, scale=0.3)
