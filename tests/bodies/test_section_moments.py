"""Mass moments of rigid cross-sections in closed form (``section_moments``) against two oracles.

1. The sums of the affine fields over the same sections (:func:`moments` of
   :func:`elements_from_pose_jets`: ``∂R`` formed, every pair of fields multiplied), the path this
   closed form replaced.
2. The body's material points themselves (:func:`distal_point_jets` of ``points_in_frame`` and
   ``tip``, masses ``weights``): an autodiff jet per point, no section algebra at all.

Both must agree to 1e-12 relative to the largest entry of each moment, at the straight
configuration, next to it and at a generic state, with and without the velocity.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.bodies._centred_moments import centred_section_moments
from kane_jax.bodies._moments import (
    ElementRule,
    distal_point_jets,
    elements_from_pose_jets,
    moments,
    section_moments,
)

TOL = 1e-12

RODS = {
    "planar_cc": lambda: kj.PlanarConstantCurvature(length=0.2, radius=0.02, elongation=True),
    "spatial_cc": lambda: kj.SpatialConstantCurvature(length=0.2, radius=0.02),
    "pcs_all_strains": lambda: kj.CosseratPCS(length=0.15, radius=0.01, n_radial=2, n_angular=5),
    "godage": lambda: kj.GodageSection(length=0.2, radius=0.02),
    "gvs": lambda: kj.CosseratGVS(0.15, 0.01, basis=kj.LegendreBasis(2), strains=("bend_y", "stretch", "twist")),
    "conical_pcs": lambda: kj.CosseratPCS(length=0.15, radius=0.02, tip_radius=0.01),
}


def _state(rod, where):
    rng = np.random.default_rng(11)
    # dtype given: jnp.full of a Python float is weakly typed, which keys a compiled program of its own
    q = {"straight": jnp.zeros(rod.nq), "near_straight": jnp.full(rod.nq, 1e-9, dtype=jnp.float64),
         "generic": jnp.asarray(0.4 * rng.normal(size=rod.nq))}[where]
    return q, jnp.asarray(rng.normal(size=rod.nq))


def _close(a, b):
    for x, y in zip(a, b):
        scale = max(1e-300, float(jnp.max(jnp.abs(y))))
        np.testing.assert_allclose(x, y, rtol=0, atol=TOL * scale)


@eqx.filter_jit  # one program per rod type and velocity option, shared by the three states
def _closed_and_oracles(rod, q, qd):
    _, sections = rod.element_jets(q, qd)
    rule = rod.element_rule()
    closed = section_moments(sections, rule, qd)
    via_fields = moments(elements_from_pose_jets(sections, qd), rule, qd)
    _, points = distal_point_jets(lambda x: (rod.points_in_frame(x), rod.tip(x)), q, qd)
    return closed, via_fields, moments(points, ElementRule(rod.weights), qd)


@pytest.mark.parametrize("name", sorted(RODS))
@pytest.mark.parametrize("where", ["straight", "near_straight", "generic"])
@pytest.mark.parametrize("with_velocity", [True, False])
def test_section_moments_match_both_oracles(name, where, with_velocity):
    rod = RODS[name]()
    q, qd = _state(rod, where)
    closed, via_fields, via_points = _closed_and_oracles(rod, q, qd if with_velocity else None)
    _close(closed, via_fields)
    _close(closed, via_points)


def test_section_moments_smooth_at_rest():
    rod = RODS["pcs_all_strains"]()

    def f(q):
        _, sections = rod.element_jets(q, jnp.ones(rod.nq))
        return sum(jnp.sum(x ** 2) for x in jax.tree.leaves(section_moments(sections, rod.element_rule(),
                                                                             jnp.ones(rod.nq))))

    h = jax.jit(jax.jacfwd(jax.jacfwd(f)))(jnp.zeros(rod.nq))
    assert bool(jnp.all(jnp.isfinite(h)))
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-10)


def _pcs(*strains):
    return lambda: kj.CosseratPCS(length=0.15, radius=0.01, n_radial=2, n_angular=5,
                                  **({"strains": strains} if strains else {}))


@pytest.mark.parametrize("make, rotating", [
    (_pcs(), 3), (_pcs("twist", "stretch", "shear_y"), 1), (_pcs("bend_z", "shear_z"), 1),
    (_pcs("stretch", "shear_y"), None), (_pcs("bend_y", "stretch"), 1), (_pcs("bend_y", "bend_z", "stretch"), 2),
    (lambda: kj.SpatialConstantCurvature(length=0.2, radius=0.02, elongation=True), 2),
    (lambda: kj.PlanarConstantCurvature(length=0.2, radius=0.02, elongation=True), 1),
    (lambda: kj.GodageSection(length=0.2, radius=0.02), None)], ids=lambda x: None if callable(x) else str(x))
@pytest.mark.parametrize("with_velocity", [True, False])
def test_translating_generators_left_out_give_the_same_moments(make, rotating, with_velocity):
    """A rod's moments with the ω terms of its translating generators left out (PCS stretch and
    shear, CC elongation: ``rotating_coordinates``) against the same closed form of the same jets
    with every term (:func:`section_moments`, and ``centred_section_moments``, the rods' own
    path): equal to 1e-15 of each moment's
    largest entry (the products left out are exact zeros), in the SE(3), bending and planar closed
    forms; a rod without rotation, and Godage's (lengths move every component), keep every term."""
    rod = make()
    assert rod.rotating_coordinates() == rotating
    q, qd = _state(rod, "generic")
    qd = qd if with_velocity else None

    @jax.jit
    def pairs(q, qd):
        _, sections = rod.element_jets(q, qd)
        rule, r = rod.element_rule(), rod.rotating_coordinates()
        return ((section_moments(sections, rule, qd, rotating=r), section_moments(sections, rule, qd)),
                (centred_section_moments(sections, rule, qd, rotating=r), centred_section_moments(sections, rule, qd)))

    for fast, full in pairs(q, qd):  # the general closed form, and the centred sections' (the rods' own path)
        for x, y in zip(fast, full):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-15 * max(1e-300, float(jnp.max(jnp.abs(y)))))


@pytest.mark.parametrize("name", sorted(RODS))
@pytest.mark.parametrize("with_velocity", [True, False])
def test_centred_sections_give_the_moments_of_every_term(name, with_velocity):
    """Rods' sections from ``disk_rule`` with at least two angles are symmetric: their moments
    (``centred_section_moments``, the bodies' own path) leave out the first moment and the products
    of inertia, which the rule computes as ≈ 1e-18 of the section's size. Against
    :func:`section_moments` of the same jets with every term, at a generic state: 1e-12 of each
    moment's largest entry. A rule with one angle is off-centre and keeps the general path."""
    rod = RODS[name]()
    assert rod.centred_sections()
    first = rod.element_rule().first
    assert float(jnp.max(jnp.abs(first))) <= 1e-15 * float(jnp.max(rod.radius))
    q, qd = _state(rod, "generic")
    qd = qd if with_velocity else None

    @jax.jit
    def both(q, qd):
        _, sections = rod.element_jets(q, qd)
        full = section_moments(sections, rod.element_rule(), qd, rotating=rod.rotating_coordinates())
        return rod.jets(q, qd)[1], full

    _close(*both(q, qd))
    off = kj.CosseratPCS(length=0.15, radius=0.01, n_radial=1, n_angular=1)
    assert not off.centred_sections()
    assert float(jnp.max(jnp.abs(off.element_rule().first))) > 1e-5
