"""Closed-form jets of constant-strain rods (``AbstractExponentialRod``) and of GVS rods (products of
Magnus steps, ``_exp_jets.product_jets``) against the autodiff path.

Reference: :func:`kane_jax.bodies._moments.distal_section_jets` differentiates the rod's frames by
forward-mode autodiff (the slow, obvious path). The closed form uses the SE(3) right Jacobian and
must give the same pose, generators and curvature (DESIGN §3.1) at the straight configuration, next
to it and at a generic one, with second derivatives finite at q = 0 (GVS: ``test_cosserat.py``'s
smoothness check of the whole dynamics).
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.bodies._moments import distal_section_jets
from kane_jax.bodies.spatial_cc import arc_frame

TOL = 1e-12  # relative to the largest entry of the jet

RODS = {
    "planar_cc": lambda: kj.PlanarConstantCurvature(length=0.2, radius=0.02),
    "planar_cc_elongation": lambda: kj.PlanarConstantCurvature(length=0.2, radius=0.02, elongation=True),
    "spatial_cc": lambda: kj.SpatialConstantCurvature(length=0.2, radius=0.02),
    "pcs_all_strains": lambda: kj.CosseratPCS(length=0.15, radius=0.01),
    "pcs_bend": lambda: kj.CosseratPCS(length=0.15, radius=0.01, strains=("bend_y",)),
    "pcs_bend_stretch": lambda: kj.CosseratPCS(length=0.15, radius=0.01, strains=("bend_y", "bend_z", "stretch")),
    "godage": lambda: kj.GodageSection(length=0.2, radius=0.02),
}
# GVS: twists quadratic in q (the Magnus commutator), a full basis and per-strain bases with a rest strain
GVS_RODS = {
    "gvs_gaussian_curvature": lambda: kj.CosseratGVS(length=0.3, radius=0.02, order=4,
                                                     basis=kj.PiecewiseGaussianCurvature(0.3)),
    "gvs_legendre_rest_strain": lambda: kj.CosseratGVS(
        length=0.3, radius=0.02, order=3, basis=kj.LegendreBasis(2), strains=("bend_y", "bend_z", "twist", "stretch"),
        rest_strain=jnp.array([0.1, 0.2, -0.3, 1.0, 0.05, 0.0])),
}


@eqx.filter_jit  # one program per rod type, shared by the three states (eagerly: one dispatch per operation)
def _closed_and_oracle(rod, q, qd):
    return jax.tree.leaves(rod.element_jets(q, qd)), jax.tree.leaves(distal_section_jets(rod.frames_and_tip, q, qd))


@pytest.mark.parametrize("name", sorted(RODS) + sorted(GVS_RODS))
@pytest.mark.parametrize("where", ["straight", "near_straight", "generic"])
def test_closed_form_jets_match_autodiff(name, where):
    rod = {**RODS, **GVS_RODS}[name]()
    rng = np.random.default_rng(7)
    # dtype given: jnp.full of a Python float is weakly typed, which keys a compiled program of its own
    q = {"straight": jnp.zeros(rod.nq), "near_straight": jnp.full(rod.nq, 1e-9, dtype=jnp.float64),
         "generic": jnp.asarray(0.3 * rng.normal(size=rod.nq))}[where]
    qd = jnp.asarray(rng.normal(size=rod.nq))
    closed, oracle = _closed_and_oracle(rod, q, qd)
    assert len(closed) == len(oracle)
    for a, b in zip(closed, oracle):
        scale = max(1.0, float(jnp.max(jnp.abs(b))))
        np.testing.assert_allclose(a, b, rtol=0, atol=TOL * scale)


@pytest.mark.parametrize("name", sorted(RODS))
def test_second_derivatives_finite_and_symmetric_at_rest(name):
    rod = RODS[name]()

    def f(q):
        return sum(jnp.sum(x ** 2) for x in jax.tree.leaves(rod.element_jets(q, jnp.ones(rod.nq))))

    # forward over forward: reverse mode of the Godage jets compiles for minutes (227 s on 2 cores)
    h = jax.jit(jax.jacfwd(jax.jacfwd(f)))(jnp.zeros(rod.nq))
    assert bool(jnp.all(jnp.isfinite(h)))
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["spatial_cc", "godage"])
def test_exponential_frames_are_the_papers_arc(name):
    # The arc of the PCC papers (Della Santina et al.; Godage et al. 2019, eq. 3) in closed form.
    rod = RODS[name]()
    q = jnp.asarray(0.3 * np.random.default_rng(3).normal(size=rod.nq))
    params = rod.arc_parameters(q) if name == "godage" else rod._params(q)
    for sigma in (0.0, 0.4, 1.0):
        rot, trans = arc_frame(*params, jnp.asarray(sigma))
        rot2, trans2 = rod.frame(q, jnp.asarray(sigma))
        np.testing.assert_allclose(rot2, rot, atol=1e-14)
        np.testing.assert_allclose(trans2, trans, atol=1e-14)


@functools.cache
def _jet_programs(jet, components):
    """Compiled ``(reference, new)`` pairs of values, ``jacfwd``, ``jacrev`` and the forward-over-forward
    Hessian in ``p`` of the jets of twists whose nonzero ``components`` are the columns of ``p``; one
    program each, shared by every θ (eagerly they ran operation by operation, ≈ 10 s per θ)."""
    from kane_jax._exp_jets import exp_jet

    def jets(p, d, qd, form):
        omega = jnp.zeros(p.shape[:-1] + (6,)).at[..., list(components)].set(p)
        return jax.tree.leaves(form(omega, d, qd)) + jax.tree.leaves(form(omega, d, None))

    def program(transform, form):
        return jax.jit(lambda p, d, qd: transform(lambda x: jets(x, d, qd, form))(p))

    return [(program(t, exp_jet), program(t, jet))
            for t in (lambda g: g, jax.jacfwd, jax.jacrev, lambda g: jax.jacfwd(jax.jacfwd(g)))]


def _assert_same_jets(jet, components, p, d, qd):
    """``jet`` against :func:`~kane_jax._exp_jets.exp_jet` on twists whose nonzero ``components`` are the
    columns of ``p``: values, ``jacfwd``, ``jacrev`` and the forward-over-forward Hessian in ``p``."""
    for reference, candidate in _jet_programs(jet, tuple(components)):
        ref = reference(p, jnp.asarray(d), qd)
        new = candidate(p, jnp.asarray(d), qd)
        for a, b in zip(new, ref):
            scale = max(1.0, float(jnp.max(jnp.abs(b))))
            np.testing.assert_allclose(a, b, rtol=0, atol=TOL * scale)


@pytest.mark.parametrize("theta", [0.0, 1e-9, 0.09, 0.11, 1.4, 1.5, 3.0, -6.0])
def test_planar_exp_jet_is_the_se3_jet(theta):
    # The SE(2) closed form (planar CC rods) against the SE(3) right-Jacobian one on planar twists
    # Ω = (0, 0, θ, v_x, v_y, 0) (v_y ≠ 0: the general planar case), with first and second derivatives
    # in the twist; θ across the smooth coefficients' series threshold (θ² = 2) and at rest.
    from kane_jax._exp_jets import planar_exp_jet

    rng = np.random.default_rng(11)
    d = np.zeros((5, 3, 6))
    d[..., 2], d[..., 3:5] = rng.normal(size=(5, 3)), rng.normal(size=(5, 3, 2))
    qd = jnp.asarray(rng.normal(size=3))
    p = jnp.asarray(np.stack([theta * np.linspace(1.0, 0.2, 5), rng.normal(size=5), rng.normal(size=5)], -1))

    _assert_same_jets(planar_exp_jet, (2, 3, 4), p, d, qd)


@pytest.mark.parametrize("theta", [0.0, 1e-9, 0.09, 1.3, 1.5, 3.0, -6.0])
def test_bending_exp_jet_is_the_se3_jet(theta):
    # The bending-and-stretch closed form (spatial CC, Godage, PCS bending rods) against the SE(3)
    # right-Jacobian one on twists Ω = (0, ω_y, ω_z, ℓ, 0, 0) with bending directions off both axes, with
    # first and second derivatives in the twist; θ across the series threshold (θ² = 2), at rest and beyond π.
    from kane_jax._exp_jets import bending_exp_jet

    rng = np.random.default_rng(5)
    d = np.zeros((5, 3, 6))
    d[..., 1:4] = rng.normal(size=(5, 3, 3))
    qd = jnp.asarray(rng.normal(size=3))
    u = rng.normal(size=(5, 2))
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    p = jnp.asarray(np.concatenate([theta * np.linspace(1.0, 0.2, 5)[:, None] * u, rng.normal(size=(5, 1))], -1))

    _assert_same_jets(bending_exp_jet, (1, 2, 3), p, d, qd)


@pytest.mark.parametrize("form", ["planar", "bending"])
@pytest.mark.parametrize("theta", [0.0, 1e-9, 0.3, 1.5, 3.0, -6.0])
def test_exp_pose_is_se3_exp(form, theta):
    # The rods' frames at any arc length (tendon routing points, the tip) through the closed forms:
    # the pose and its first and second derivatives in the form's components against se3_exp, 1e-14
    from kane_jax._exp_poses import exp_pose
    from kane_jax.lie import se3_exp

    rng = np.random.default_rng(2)
    comps = [2, 3, 4] if form == "planar" else [1, 2, 3]
    x = np.zeros(6)
    x[comps] = rng.normal(size=3)
    rotation = comps[:1] if form == "planar" else comps[:2]  # the rotation vector's components
    x[rotation] *= theta / np.linalg.norm(x[rotation])
    x = jnp.asarray(x)

    def restricted(f):
        return lambda y: f(x.at[jnp.asarray(comps)].set(y))

    y0 = x[jnp.asarray(comps)]
    for op in (lambda f: f, jax.jacfwd, lambda f: jax.jacfwd(jax.jacrev(f))):
        got = np.asarray(op(restricted(functools.partial(exp_pose, form)))(y0))
        want = np.asarray(op(restricted(se3_exp))(y0))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14 * max(1.0, np.abs(want).max()))
    with pytest.raises(ValueError, match="form"):
        exp_pose("twist", x)


@pytest.mark.parametrize("scale", [0.0, 1e-4, 1.0, 3.0])
def test_right_jacobian_blocks_equal_the_ad_series(scale):
    """``_exp_jets.right_jacobian_blocks`` (the 3×3 blocks ``[[A, 0], [Q, A]]`` that ``exp_jet``
    applies to its generators) against :func:`kane_jax.lie.se3_right_jacobian` (the ``ad`` power
    series) applied to the six unit twists, at θ = 0, near it and at generic twists; tolerance 1e-14."""
    from kane_jax._right_jacobian import apply_blocks, right_jacobian_blocks, se3_coefficients

    xi = jnp.asarray(np.random.default_rng(7).normal(size=(4, 6))) * scale
    eye = jnp.broadcast_to(jnp.eye(6), (4, 6, 6))
    blocks = right_jacobian_blocks(se3_coefficients(xi), xi)
    got = apply_blocks(blocks[:, None], eye)
    want = kj.lie.se3_right_jacobian(xi[:, None], eye)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=1e-14)


@pytest.mark.parametrize("scale", [0.0, 1e-4, 1.0, 1.414, 3.0])
def test_pose_and_rate_from_the_right_jacobian_coefficients(scale):
    """``exp_jet``'s pose from the right Jacobian's four coefficients (``_right_jacobian.se3_pose``)
    against :func:`kane_jax.lie.se3_exp` with its ``jacfwd``, and ``T η`` in vector form (``se3_rate``,
    whose JVP is the jet's rate) against the 3×3 blocks applied, at θ = 0, near it, at the series'
    threshold θ² = 2 and beyond; tolerances 1e-14 (values) and 1e-12 (derivatives)."""
    from kane_jax._right_jacobian import apply_blocks, right_jacobian_blocks, se3_coefficients, se3_pose, se3_rate

    rng = np.random.default_rng(11)
    xi = jnp.asarray(rng.normal(size=(4, 6)))
    xi = xi.at[:, :3].set(xi[:, :3] / jnp.linalg.norm(xi[:, :3], axis=-1, keepdims=True) * scale)
    eta = jnp.asarray(rng.normal(size=(4, 6)))

    def pose(x):
        rot, trans = se3_pose(se3_coefficients(x), x)
        return jnp.concatenate([rot.reshape(-1), trans.reshape(-1)])

    def reference(x):
        g = kj.lie.se3_exp(x)
        return jnp.concatenate([g[..., :3, :3].reshape(-1), g[..., :3, 3].reshape(-1)])

    for f, tol in ((lambda x: x, 1e-14), (jax.jacfwd, 1e-12)):
        got, want = jax.jit(f(pose))(xi), jax.jit(f(reference))(xi)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=tol)
    coef = se3_coefficients(xi)
    got = se3_rate(coef, xi, eta)
    want = apply_blocks(right_jacobian_blocks(coef, xi), eta)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=1e-14)


@pytest.mark.parametrize("scale", [0.0, 1e-4, 1.0, 3.0])
def test_generators_as_columns_equal_the_general_product(scale):
    """``exp_jet(..., columns=c)`` (a PCS rod: coordinate ``k`` moves the one twist component ``c_k``, its
    generators are scaled columns of ``T``) against the general ``T ∂_k Ω`` on the same one-hot
    ``∂Ω``: every part of the jet, with and without ``q̇``, to 1e-15 of its largest entry (the same
    products, the zeros left out); and its program does at least 10 % less arithmetic (XLA's cost
    analysis; measured with q̇: 6.8k against 8.3k flops for these five twists and seven coordinates)."""
    from kane_jax._exp_jets import exp_jet

    rng = np.random.default_rng(9)
    columns = (4, 0, 1, 5, 2, 3, 0)  # out of order, one component twice
    xi = jnp.asarray(rng.normal(size=(5, 6))) * scale
    d = np.zeros((5, len(columns), 6))
    for k, c in enumerate(columns):
        d[:, k, c] = rng.normal(size=5)
    d = jnp.asarray(d)
    qd = jnp.asarray(rng.normal(size=len(columns)))
    for v in (qd, None):
        general = jax.jit(lambda x, dd, v=v: exp_jet(x, dd, v))
        sparse = jax.jit(lambda x, dd, v=v: exp_jet(x, dd, v, columns=columns))
        for a, b in zip(jax.tree.leaves(sparse(xi, d)), jax.tree.leaves(general(xi, d))):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-15 * max(1.0, float(jnp.max(jnp.abs(b)))))
        flops = [p.lower(xi, d).compile().cost_analysis() for p in (sparse, general)]
        flops = [(f[0] if isinstance(f, list) else f)["flops"] for f in flops]
        assert flops[0] < 0.9 * flops[1], flops
    with pytest.raises(ValueError, match="columns"):
        exp_jet(xi, d, qd, columns=columns[:-1])
