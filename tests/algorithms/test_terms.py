"""Per-module terms (algorithms/_terms.py): chains whose bodies have no coordinates skip the own-coordinate terms;
the forward dynamics computes each term once, and each section angle's sine at most twice (last test).

When no body of a chain has coordinates (rigid arms), ``chain_terms`` leaves the own-coordinate
moments out (None) and the kernels skip their terms. The oracle is the general path, which pads
those moments with zero rows and computes with them (``module_terms(..., own=True)``): the ID (bias
and with accelerations), the composite mass matrix and the mass columns must agree with it to
1e-13 of their largest entry, on the iiwa-like arm and on rigid links behind revolute, prismatic,
helical, universal, fixed and spherical joints at random states.
"""

import math
import re

import helpers.robots as robots
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax._modules import has_body_coordinates, map_modules, n_rows
from kane_jax.algorithms._composite import composite_mass_matrix
from kane_jax.algorithms._recursion import id_recursion, mass_and_bias, mass_columns, tip_wrench
from kane_jax.algorithms._terms import chain_terms, module_terms


def _rigid_arm(rng):
    """Rigid links behind screw joints (closed-form jets) and multi-coordinate joints (padded rows)."""
    kinds = ("revolute", "prismatic", "helical", "universal", "fixed", "spherical")
    return kj.Chain([(robots.make_joint(k, rng), robots.random_rigid(rng)) for k in kinds],
                    gravity=rng.normal(size=3) * 5)


def _outputs(chain, terms, qdd):
    dtype = terms.rot.dtype
    g = -jnp.asarray(chain.gravity, dtype)
    tip = tip_wrench(None, None, dtype)
    return (id_recursion(chain, terms, None, g, tip).tau, id_recursion(chain, terms, qdd, g, tip).tau,
            composite_mass_matrix(chain, terms), mass_columns(chain, terms))


@pytest.mark.parametrize("name", ["iiwa-like", "mixed joints"])
def test_rigid_chain_skips_own_coordinate_terms(name):
    rng = np.random.default_rng(7)
    chain = kj.models.iiwa_like() if name == "iiwa-like" else _rigid_arm(rng)
    assert not has_body_coordinates(chain)
    n_max = n_rows(chain)

    @jax.jit
    def both(q, qd, qdd):
        fast = chain_terms(chain, q, qd)
        padded = map_modules(chain, lambda j, b, x, v: module_terms(j, b, x, v, n_max, own=True), q, qd)
        assert fast.body.jac_first is None and fast.jac_rot is None  # the skipping path is the one taken
        return _outputs(chain, fast, qdd), _outputs(chain, padded, qdd)

    for _ in range(3):
        q, qd, qdd = (jnp.asarray(rng.uniform(-1.5, 1.5, chain.nq)) for _ in range(3))
        for fast, oracle in zip(*both(q, qd, qdd)):
            np.testing.assert_allclose(fast, oracle, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(oracle))))


def test_a_soft_body_keeps_the_general_path():
    chain = kj.Chain([(kj.Revolute((0.0, 0.0, 1.0)), kj.RigidBody(1.0)),
                      (kj.Fixed(), kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01))])
    assert has_body_coordinates(chain)
    terms = jax.eval_shape(lambda q, qd: chain_terms(chain, q, qd), jnp.zeros(chain.nq), jnp.zeros(chain.nq))
    assert terms.body.jac_first.shape == (2, n_rows(chain), 3)


def _flops_of(program) -> float:
    cost = program.cost_analysis()
    return (cost[0] if isinstance(cost, list) else cost)["flops"]


def _flops(fn, *args):
    return _flops_of(jax.jit(fn).lower(*args).compile())


def test_forward_dynamics_computes_each_soft_term_once():
    """The FD of a six-strain PCS rod does no more arithmetic than its parts computed one by one
    (the terms as outputs of their own program, then M and the bias from them): XLA's cost analysis
    of the optimized programs, stated within 15 %. Fused into their readers, the rod's velocity
    moments and the bias behind the Cholesky substitutions were computed again per entry (this rod,
    jaxlib 0.10.2: 48.0k flops against 31.5k for the parts; 33.3k against 31.4k with their buffers).
    And its sines, counted in the optimized program, are at most two per section angle."""
    rod = kj.CosseratPCS(length=0.15, radius=0.01, n_radial=2, n_angular=5)
    chain = kj.Chain([(kj.Fixed(), rod)], gravity=(0.0, 0.0, -9.81))
    n = chain.nq
    rng = np.random.default_rng(4)
    q, qd = jnp.asarray(rng.uniform(-0.3, 0.3, n)), jnp.asarray(rng.normal(size=n))
    terms = jax.jit(lambda q, qd: chain_terms(chain, q, qd))(q, qd)
    parts = (_flops(lambda q, qd: chain_terms(chain, q, qd), q, qd)
             + _flops(lambda t: mass_and_bias(chain, t, gravity=jnp.asarray(chain.gravity),
                                              tip=tip_wrench(None, None, q.dtype)), terms))
    program = jax.jit(lambda q, qd: kj.forward_dynamics(chain, q, qd, jnp.zeros(n), check=False)).lower(q, qd).compile()
    whole = _flops_of(program)
    assert whole <= 1.15 * parts, (whole, parts)
    # each sine and cosine a libm call: at most one of each per section angle and buffer (the rod's
    # tip and 5 sections, each read by the primal and by the derivative path of the coefficients:
    # 12 sines; 24 before ``_series.trig`` shared them, four per angle)
    sines = sum(math.prod(int(d) for d in shape.split(",") if d)
                for shape in re.findall(r"= f64\[([\d,]*)\]\S* sine\(", program.as_text()))
    assert 0 < sines <= 12, sines
