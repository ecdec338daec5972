"""LVP-primitive bodies (paper 003 Sims. 1–2, Xu & Chirikjian): volume preservation, frames, ID vs EL."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.checks import check_against_el_at, check_body_smooth_at_rest, check_smooth_at

import kane_jax as kj
from kane_jax.bodies import lvp_primitives as P
from kane_jax.bodies.lvp import LVPBody
from kane_jax.bodies.variable_radius import VariableRadiusPCC
from kane_jax.lie import make_pose, so3_exp

L, R = 0.1, 0.02
ALL_PRIMITIVES = [P.Cavity(2), P.Stretch(2), P.Shear("y", 2), P.Shear("z", 2), P.Twist(2), P.Bend("y", 2),
                  P.Bend("z", 2)]


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=lambda p: type(p).__name__ + getattr(p, "plane", "")
                         + getattr(p, "direction", ""))
def test_each_primitive_preserves_volume(prim, rng):
    det = jax.jit(jax.vmap(lambda a, x: P.primitive_jacobian_det(prim, a, x, L, R)))
    a = jnp.asarray(rng.uniform(-0.5, 0.5, (20, prim.n_modes)))
    r = rng.uniform(0.002, R, 20)
    ang = rng.uniform(0, 2 * np.pi, 20)
    x = jnp.asarray(np.stack([rng.uniform(0, L, 20), r * np.cos(ang), r * np.sin(ang)], axis=1))
    d = np.asarray(det(a, x))
    assert np.max(np.abs(d - 1)) < 1e-12, np.max(np.abs(d - 1))


def test_composed_body_preserves_volume(rng):
    body = LVPBody(ALL_PRIMITIVES, L, R, inner_radius=0.004)
    q = jnp.asarray(rng.uniform(-0.4, 0.4, body.nq))
    s = jnp.asarray(np.stack([rng.uniform(0, 1, 10), rng.uniform(-0.01, 0.01, 10), rng.uniform(-0.01, 0.01, 10)], 1))
    det = jax.jit(jax.vmap(lambda x: jnp.linalg.det(jax.jacfwd(body.position, argnums=1)(q, x)) / L))(s)
    assert np.max(np.abs(np.asarray(det) - 1)) < 1e-12
    # hence the deformed mass equals the reference mass: Σ det F · ρ dV = Σ ρ dV (volume integral)


def test_frame_from_points(rng):
    rot = so3_exp(jnp.asarray(rng.normal(size=3)))
    t = jnp.asarray(rng.normal(size=3))
    pose = make_pose(rot, t)
    p0, p1, p2 = t, t + 0.3 * rot[:, 1], t + 0.2 * rot[:, 2]
    np.testing.assert_allclose(kj.frame_from_points(p0, p1, p2), pose, atol=1e-14)
    # a slightly skewed second direction is Gram–Schmidt-corrected
    np.testing.assert_allclose(kj.frame_from_points(p0, p1, p2 + 0.05 * rot[:, 1]), pose, atol=1e-14)
    with pytest.raises(ValueError, match="p1"):
        kj.frame_from_points(p0, p1[:2], p2)


def _offset_formula(x):
    lam, kappa, y = x
    s = jnp.sqrt(lam**2 - 2 * kappa * y)
    return jnp.stack([2 * y / (lam + s), s])


@pytest.mark.parametrize("case", ["offset", "offset at rest", "unit"])
def test_implicit_jvps_equal_autodiff_of_the_formulas(case, rng):
    # Bend's fibre offset and frame_from_points' normalization carry JVP rules written in their own
    # outputs (every higher derivative reuses them); oracle: autodiff of the plain formulas, four
    # nested forward orders and a reverse-over-forward Hessian, at a bent state and at rest (y = κ = 0)
    from kane_jax.bodies.frames import _unit
    from kane_jax.bodies.lvp_primitives import _section_offset

    if case == "unit":
        def new(x):
            u, r = _unit(x)
            return jnp.concatenate([u, r[None]])

        def ref(x):
            return jnp.concatenate([x / jnp.linalg.norm(x), 1 / jnp.linalg.norm(x)[None]])

        x0 = jnp.asarray(rng.normal(size=3))
    else:
        def new(x):
            return jnp.stack(_section_offset(x[0], x[1], x[2]))

        ref = _offset_formula
        x0 = jnp.array([1.0, 0.0, 0.0]) if case == "offset at rest" else jnp.array([1.02, 2.5, 0.015])
    @jax.jit
    def derivatives(x):  # every order of both, one compiled program (eagerly ≈ 200-300 small ones)
        out, d_new, d_ref = [], new, ref
        for _ in range(1, 5):
            d_new, d_ref = jax.jacfwd(d_new), jax.jacfwd(d_ref)
            out.append((d_new(x), d_ref(x)))
        out.append((jax.jacrev(jax.jacfwd(lambda y: new(y)[0]))(x), jax.hessian(lambda y: ref(y)[0])(x)))
        return out

    for order, (got, want) in enumerate(derivatives(x0), start=1):
        got, want = np.asarray(got), np.asarray(want)
        name = f"order {order}" if order < 5 else "reverse-over-forward Hessian"
        assert np.all(np.isfinite(got)), f"{name} not finite"
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * max(1.0, np.abs(want).max()), err_msg=name)


def test_tips_of_single_primitives():
    a = 0.8

    def tip_of(prim, amp):
        body = LVPBody([prim], L, R)
        return jax.jit(lambda x: body.tip(x))(jnp.array([amp]))

    # constant-curvature bend in x–y: tip rotated by a about z, at the arc's end
    tip = tip_of(P.Bend("y"), a)
    np.testing.assert_allclose(tip[:3, 3], L * np.array([np.sin(a), 1 - np.cos(a), 0]) / a, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(tip[:3, :3], so3_exp(jnp.array([0, 0, a])), atol=1e-10)
    # bend in x–z: rotation about −y
    tip = tip_of(P.Bend("z"), a)
    np.testing.assert_allclose(tip[:3, :3], so3_exp(jnp.array([0, -a, 0])), atol=1e-10)
    # twist: rotation about x by ψ(1) = a; stretch: tip at L(1 + a), frame unrotated
    tip = tip_of(P.Twist(), a)
    np.testing.assert_allclose(tip[:3, :3], so3_exp(jnp.array([a, 0, 0])), atol=1e-14)
    tip = tip_of(P.Stretch(), 0.3)
    np.testing.assert_allclose(tip, make_pose(jnp.eye(3), jnp.array([1.3 * L, 0, 0])), atol=1e-15)
    # shear: the section translates, the frame does not rotate
    tip = tip_of(P.Shear("z"), 0.2)
    np.testing.assert_allclose(tip, make_pose(jnp.eye(3), jnp.array([L, 0, 0.2 * L])), atol=1e-15)


def test_cavity_volume_closed_form():
    body = LVPBody([P.Cavity(2), P.Stretch(), P.Bend("y")], L, R, inner_radius=0.005)
    q = jnp.array([0.03, -0.01, 0.2, 0.5])
    # ∫₀¹ sin((2k−1)πσ) dσ = 2/((2k−1)π)
    ref = np.pi * L * (0.005**2 + R**2 * (0.03 * 2 / np.pi - 0.01 * 2 / (3 * np.pi)))
    np.testing.assert_allclose(jax.jit(lambda x: body.cavity_volume(x))(q), ref, rtol=1e-9)
    with pytest.raises(ValueError, match="Cavity"):
        LVPBody([P.Stretch(), P.Cavity()], L, R, inner_radius=0.005).cavity_volume(jnp.zeros(2))


def _states(rng, nq, n=2, scale=0.3):
    return [jnp.asarray(rng.normal(size=(n, nq)) * scale) for _ in range(3)]


def test_id_matches_euler_lagrange_alone(rng):
    body = LVPBody([P.Stretch(), P.Bend("y"), P.Twist()], L, R, 1000.0, kj.NeoHookean(1e5, 0.5, 0.05),
                   order=2, n_radial=1, n_angular=3)
    chain = kj.Chain([(kj.Revolute((0, 1, 0)), body)])
    check_against_el_at(chain, _states(rng, chain.nq))


# in the default run again since the EL reference's d/dt(∂T/∂q̇) is one jvp: 12 s alone, pinned (46 s before; 2026-11-26)
def test_id_matches_euler_lagrange_all_primitives(rng):
    body = LVPBody(ALL_PRIMITIVES, L, R, 1000.0, kj.NeoHookean(1e5, 0.5, 0.05), inner_radius=0.004,
                   order=2, n_radial=1, n_angular=3)
    chain = kj.Chain([(kj.Fixed(), body)])
    q, qd, qdd = _states(rng, chain.nq, scale=0.15)
    # the cavity's map needs r_in² + R² f(σ) > 0 (docstring of Cavity): with r_in = 0.2 R its
    # amplitudes must stay well below 0.04, or the inner points cross the axis and g is NaN
    q = q.at[:, :2].multiply(0.1)
    check_against_el_at(chain, (q, qd, qdd))


def test_id_matches_euler_lagrange_mixed(rng):
    # rigid + planar CC + variable-radius PCC + LVP in one chain
    rigid = kj.RigidBody(0.3, (0.05, 0, 0), np.diag([1e-4, 2e-4, 2e-4]), tip=np.array(
        [[1, 0, 0, 0.1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]))
    cc = kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.05, elongation=True, order=3, n_radial=1, n_angular=3)
    vr = VariableRadiusPCC(order=3, n_radial=1, n_angular=4, chamber_order=2, chamber_across=1, chamber_along=2)
    lvp = LVPBody([P.Stretch(), P.Bend("z")], L, R, 1000.0, kj.LinearElastic(1e5, 0.4, 0.05), order=2, n_radial=1,
                  n_angular=3)
    chain = kj.Chain([(kj.Revolute((0, 1, 0)), rigid), (kj.Revolute((1, 0, 0)), cc), (kj.Fixed(), vr),
                      (kj.Revolute((0, 0, 1)), lvp)])
    q, qd, qdd = _states(rng, chain.nq)
    scale = np.ones(chain.nq)
    scale[4:8] = [1.0, 0.05, 0.01, 0.01]
    check_against_el_at(chain, (q * jnp.asarray(scale)[None, :], qd, qdd))


def test_body_functions_smooth_at_rest(rng):
    body = LVPBody([P.Cavity(), P.Stretch(), P.Bend("y"), P.Twist()], L, R, 1000.0, kj.NeoHookean(1e5, 0.5, 0.05),
                   inner_radius=0.004, order=2, n_radial=1, n_angular=3)
    check_body_smooth_at_rest(body, rng)


def test_smooth_at_rest(rng):
    body = LVPBody([P.Stretch(), P.Bend("y")], L, R, 1000.0, kj.NeoHookean(1e5, 0.5, 0.05), order=2, n_radial=1,
                   n_angular=3)
    chain = kj.Chain([(kj.Fixed(), body)])
    check_smooth_at(chain, jnp.zeros(chain.nq), rng)


def test_bad_input():
    with pytest.raises(ValueError, match="primitives"):
        LVPBody([], L, R)
    with pytest.raises(TypeError, match="primitives\\[1\\]"):
        LVPBody([P.Stretch(), "bend"], L, R)
    with pytest.raises(ValueError, match="inner_radius"):
        LVPBody([P.Stretch()], L, R, inner_radius=0.03)
    with pytest.raises(ValueError, match="plane"):
        P.Bend("x")
    with pytest.raises(ValueError, match="modes"):
        P.Twist(2, modes=lambda s: jnp.stack([s, s**2, s**3]))
    with pytest.raises(ValueError, match="n_modes"):
        P.Stretch(0)


class _PlainAxial(P.Stretch):
    """A Stretch that does not declare ``keeps_sections``: a following Bend is then evaluated per point."""

    keeps_sections = False


class _OwnBend(P.Bend):
    """A Bend subclass with its own ``apply``: applied as it is, never through the shared section terms."""

    def apply(self, a, x, length, radius):
        return super().apply(a, x, length, radius)


@pytest.mark.parametrize("prims, shared", [
    ([P.Stretch(1), P.Bend("y", 2), P.Bend("z", 2), P.Twist(1), P.Shear("y", 1), P.Shear("z", 1)], 1),  # 003-sim1
    ([P.Cavity(1), P.Twist(1), P.Bend("y", 1)], 2),
    ([P.Bend("z", 3), P.Stretch(2)], 0),
    ([_PlainAxial(1), P.Bend("y", 1)], None),
    ([P.Stretch(1), _OwnBend("y", 1)], None),
    ([P.Stretch(1), P.Twist(1)], None),
], ids=["sim003-1", "cavity-first", "bend-first", "undeclared", "own-apply", "no-bend"])
def test_section_shared_bend_equals_pointwise(prims, shared, rng):
    """The first Bend's axial terms once per cross-section (points, distal frame and deformation gradients
    with their q-derivatives, the internal force) against the point-by-point map (`position`), 1e-13."""
    from kane_jax.bodies import materials as mat
    from kane_jax.bodies.frames import frame_from_points

    body = LVPBody(prims, L, R, 1000.0, mat.NeoHookean(1e6, 0.5, 0.2), inner_radius=0.004, order=2, n_radial=1,
                   n_angular=3)
    assert body._shared_bend() == shared

    def pointwise(q):
        x = jax.vmap(lambda s: body.position(q, s))(jnp.concatenate([body.points, body._frame_coords()]))
        return x[:-3], frame_from_points(x[-3], x[-2], x[-1])

    def grads(q):
        return mat.deformation_gradients(body.position, q, body.points, body.reference_inverse())

    def force(q, qd):
        return mat.internal_force(body.material, body.position, q, qd, body.points, body.volumes,
                                  body.reference_inverse())

    qd = jnp.asarray(rng.uniform(-1, 1, body.nq))
    # cavity amplitudes small enough that r² + R² f > 0 on the inner nodes (r ≥ 4 mm)
    scale = np.concatenate([np.full(b - a, 0.05 if isinstance(p, P.Cavity) else 0.3)
                            for p, (a, b) in zip(body.primitives, body.slices)])
    qs = jnp.stack([jnp.zeros(body.nq), jnp.asarray(rng.uniform(-1, 1, body.nq) * scale)])

    def outputs(points_and_tip, gradients, internal):
        return lambda q: (points_and_tip(q), jax.jacfwd(lambda x: points_and_tip(x)[0])(q),
                          jax.hessian(lambda x: points_and_tip(x)[0][:, 1].sum())(q), gradients(q),
                          jax.jacfwd(gradients)(q), internal(q, qd))

    fast = jax.jit(jax.vmap(outputs(lambda q: body.points_and_tip(q), lambda q: body.deformation_gradients(q),
                                    lambda q, v: body.internal_force(q, v))))(qs)
    slow = jax.jit(jax.vmap(outputs(pointwise, grads, force)))(qs)
    for a, b in zip(jax.tree.leaves(fast), jax.tree.leaves(slow)):
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13 * max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("prim", [P.Bend("y", 3), P.Stretch(3), P.Twist(2)], ids=lambda p: type(p).__name__)
def test_default_modes_equal_given_modes(prim, rng):
    """The default monomial modes (powers by products, the field's slope and the Bend's backbone stretch in
    closed form) against the same modes passed as a callable (the generic path: the field node by node and
    its σ-derivatives by autodiff), with their first and second q-derivatives (1e-14) and the point's
    Jacobian ∂X'/∂X with its q-derivative (the deformation gradient and its rate: the σ-derivatives of the
    closed forms, 1e-13)."""
    given = type(prim)(*([prim.plane] if isinstance(prim, P.Bend) else []), prim.n_modes,
                       modes=lambda s: jnp.stack([s ** k for k in range(1, prim.n_modes + 1)]))
    a = jnp.asarray(rng.uniform(-0.6, 0.6, prim.n_modes))
    x = jnp.asarray([0.7 * L, 0.3 * R, -0.4 * R])
    v = jnp.asarray(rng.uniform(-1, 1, prim.n_modes))
    np.testing.assert_allclose(prim.default_modes(jnp.asarray(0.5)), 0.5 ** np.arange(1, prim.n_modes + 1),
                               rtol=0, atol=1e-16)

    def second(p):
        path = lambda t: p.apply(a + t * v, x, L, R)  # noqa: E731
        return jax.jvp(lambda t: jax.jvp(path, (t,), (1.0,)), (0.0,), (1.0,))

    def gradient(p):
        return jax.jvp(lambda t: jax.jacfwd(lambda y: p.apply(a + t * v, y, L, R))(x), (0.0,), (1.0,))

    # both forms' jets in one compiled program (eagerly ≈ 130 small programs)
    ((y0, d0), (_, c0)), ((y1, d1), (_, c1)), grad_default, grad_given = jax.jit(
        lambda: (second(prim), second(given), gradient(prim), gradient(given)))()
    for u, w in ((y0, y1), (d0, d1), (c0, c1)):
        np.testing.assert_allclose(u, w, rtol=1e-14, atol=1e-14 * L)

    for u, w in zip(grad_default, grad_given):
        assert np.all(np.isfinite(u)) and np.max(np.abs(w)) > 0.1
        np.testing.assert_allclose(u, w, rtol=0, atol=1e-13)
