"""Time derivatives of the ID, Ṁ/M̈ and the Coriolis matrix against independent references.

References: the closed-form 2R expressions of paper ``002_…`` §6.1 (transcribed below), finite
differences of τ along an analytic trajectory, and the Euler–Lagrange reference differentiated in
time by autodiff (shares only the geometry with the recursion).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.algorithms.time_derivatives import taylor_derivatives, taylor_path
from kane_jax.models import iiwa_like, planar_2r
from kane_jax.reference import euler_lagrange as el

ID_DERIVS = eqx.filter_jit(lambda chain, d: kj.inverse_dynamics_derivatives(chain, d, order=2))


def rel_err(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


# --- closed forms of 002_… §6.1 (gravity along −y, links along x at q = 0) ---------------------
def tau_2r(L1, L2, m1, m2, g, q, qd, qdd):
    q1, q2 = q
    d1, d2 = qd
    a1, a2 = qdd
    s2, c2, c1, s1 = np.sin(q2), np.cos(q2), np.cos(q1), np.sin(q1)
    c12 = np.cos(q1 + q2)
    t1 = (L1**2 * a1 * m1 + L1**2 * a1 * m2 + L2**2 * a1 * m2 + L2**2 * a2 * m2 + L2 * g * m2 * c12
          + L1 * g * m1 * c1 + L1 * g * m2 * c1 - L1 * L2 * d2**2 * m2 * s2 + 2 * L1 * L2 * a1 * m2 * c2
          + L1 * L2 * a2 * m2 * c2 - 2 * L1 * L2 * d1 * d2 * m2 * s2)
    t2 = L2 * m2 * (L1 * s2 * d1**2 + L2 * a1 + L2 * a2 + g * c12 + L1 * a1 * c2)
    del s1
    return np.array([t1, t2])


def tau_dot_2r(L1, L2, m1, m2, g, q, qd, qdd, q3):
    q1, q2 = q
    d1, d2 = qd
    a1, a2 = qdd
    j1, j2 = q3
    s2, c2, s1 = np.sin(q2), np.cos(q2), np.sin(q1)
    s12 = np.sin(q1 + q2)
    t1 = (L1**2 * j1 * m1 + L1**2 * j1 * m2 + L2**2 * j1 * m2 + L2**2 * j2 * m2 - L2 * d1 * g * m2 * s12
          - L2 * d2 * g * m2 * s12 + 2 * L1 * L2 * j1 * m2 * c2 + L1 * L2 * j2 * m2 * c2 - L1 * d1 * g * m1 * s1
          - L1 * d1 * g * m2 * s1 - L1 * L2 * d2**3 * m2 * c2 - 4 * L1 * L2 * a1 * d2 * m2 * s2
          - 2 * L1 * L2 * a2 * d1 * m2 * s2 - 3 * L1 * L2 * a2 * d2 * m2 * s2 - 2 * L1 * L2 * d1 * d2**2 * m2 * c2)
    t2 = L2 * m2 * (L2 * j1 + L2 * j2 - d1 * g * s12 - d2 * g * s12 + L1 * j1 * c2 + 2 * L1 * a1 * d1 * s2
                    - L1 * a1 * d2 * s2 + L1 * d1**2 * d2 * c2)
    return np.array([t1, t2])


def tau_ddot_2r(L1, L2, m1, m2, g, q, qd, qdd, q3, q4):
    q1, q2 = q
    d1, d2 = qd
    a1, a2 = qdd
    j1, j2 = q3
    f1, f2 = q4
    s2, c2, s1, c1 = np.sin(q2), np.cos(q2), np.sin(q1), np.cos(q1)
    s12, c12 = np.sin(q1 + q2), np.cos(q1 + q2)
    LL = L1 * L2
    t1 = (L1**2 * f1 * m1 + L1**2 * f1 * m2 + L2**2 * f1 * m2 + L2**2 * f2 * m2 - 3 * LL * a2**2 * m2 * s2
          + LL * d2**4 * m2 * s2 - L1 * d1**2 * g * m1 * c1 - L1 * d1**2 * g * m2 * c1 - L2 * a1 * g * m2 * s12
          - L2 * a2 * g * m2 * s12 + 2 * LL * f1 * m2 * c2 + LL * f2 * m2 * c2 - L1 * a1 * g * m1 * s1
          - L1 * a1 * g * m2 * s1 - L2 * d1**2 * g * m2 * c12 - L2 * d2**2 * g * m2 * c12
          - 6 * LL * a1 * a2 * m2 * s2 - 6 * LL * j1 * d2 * m2 * s2 - 2 * LL * j2 * d1 * m2 * s2
          - 4 * LL * j2 * d2 * m2 * s2 - 6 * LL * a1 * d2**2 * m2 * c2 - 6 * LL * a2 * d2**2 * m2 * c2
          + 2 * LL * d1 * d2**3 * m2 * s2 - 2 * L2 * d1 * d2 * g * m2 * c12 - 6 * LL * a2 * d1 * d2 * m2 * c2)
    t2 = -L2 * m2 * (d1**2 * g * c12 - L2 * f2 - L2 * f1 + d2**2 * g * c12 - 2 * L1 * a1**2 * s2 + a1 * g * s12
                     + a2 * g * s12 - L1 * f1 * c2 + L1 * d1**2 * d2**2 * s2 + 2 * d1 * d2 * g * c12
                     + L1 * a1 * a2 * s2 - 2 * L1 * j1 * d1 * s2 + 2 * L1 * j1 * d2 * s2 + L1 * a1 * d2**2 * c2
                     - L1 * a2 * d1**2 * c2 - 4 * L1 * a1 * d1 * d2 * c2)
    return np.array([t1, t2])


def test_planar_2r_closed_forms(rng):
    # 002_… §6.1: τ, τ̇, τ̈ to 1e-12 relative on random states and parameters
    for _ in range(5):
        L1, L2, m1, m2 = rng.uniform(0.3, 2.0, 4)
        g = 9.81
        chain = planar_2r(L1, L2, m1, m2, g)
        d = [rng.uniform(-2, 2, 2) for _ in range(5)]
        tau, tau_d, tau_dd = ID_DERIVS(chain, d)
        p = (L1, L2, m1, m2, g)
        assert rel_err(tau, tau_2r(*p, *d[:3])) < 1e-12
        assert rel_err(tau_d, tau_dot_2r(*p, *d[:4])) < 1e-12
        assert rel_err(tau_dd, tau_ddot_2r(*p, *d[:5])) < 1e-12


# --- random chains --------------------------------------------------------------------------------
def _pose(rng, scale=0.3):
    a = rng.normal(size=3)
    x = np.eye(4)
    x[:3, :3] = np.asarray(kj.lie.so3_exp(jnp.asarray(a)))
    x[:3, 3] = rng.normal(size=3) * scale
    return x


def _rigid(rng):
    x, y, z = rng.uniform(0.005, 0.03, 3)  # principal moments (x+y, y+z, z+x): triangle inequality holds
    rot = np.asarray(kj.lie.so3_exp(jnp.asarray(rng.normal(size=3))))
    inertia = rot @ np.diag([x + y, y + z, z + x]) @ rot.T
    return kj.RigidBody(rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2, inertia, tip=_pose(rng))


def _soft(rng, damping=0.0):
    return kj.PlanarConstantCurvature(0.3, 0.03, 1000.0, 2e5, damping, elongation=True, order=3,
                                      n_radial=1, n_angular=3)


def make_chain(kind, rng):
    if kind == "rigid":
        mods = [(kj.Revolute(rng.normal(size=3), _pose(rng)), _rigid(rng)),
                (kj.Prismatic(rng.normal(size=3), _pose(rng)), _rigid(rng)),
                (kj.Universal(placement=_pose(rng)), _rigid(rng))]
    elif kind == "soft":
        mods = [(kj.Fixed(_pose(rng)), _soft(rng)), (kj.Fixed(), _soft(rng))]
    elif kind == "small":
        mods = [(kj.Revolute(rng.normal(size=3), _pose(rng), stiffness=3.0, damping=0.2), _rigid(rng)),
                (kj.Revolute((0, 0, 1), _pose(rng)), _soft(rng, damping=0.05))]
    else:
        mods = [(kj.Revolute(rng.normal(size=3), _pose(rng), stiffness=3.0, damping=0.2), _rigid(rng)),
                (kj.Revolute((0, 0, 1), _pose(rng)), _soft(rng, damping=0.05)),
                (kj.Spherical(_pose(rng)), _rigid(rng))]
    return kj.Chain(mods, gravity=rng.normal(size=3) * 5)


@eqx.filter_jit
def _along_trajectory(chain, params, t0, h):
    """Recursion derivatives at t0 and τ at t0 + k h (k = −2..2) along an analytic trajectory."""
    derivs = trajectory_derivs(params)
    mine = kj.inverse_dynamics_derivatives(chain, [x(t0) for x in derivs], order=2)
    ks = jnp.arange(-2, 3, dtype=t0.dtype)
    samples = jax.vmap(lambda t: kj.inverse_dynamics(chain, *[x(t) for x in derivs[:3]]))(t0 + ks * h)
    return mine, samples


@eqx.filter_jit
def el_derivatives(chain, d):
    """(τ, τ̇, τ̈) from the Euler–Lagrange reference differentiated in time along the Taylor path of d.

    τ = d/dt ∂T/∂q̇ − ∂T/∂q + ∂V/∂q + dissipation, so τ⁽ᵏ⁾ = p⁽ᵏ⁺¹⁾ + r⁽ᵏ⁾ with p = ∂T/∂q̇ and r
    the rest, each a function of t through (q(t), q̇(t)) — nested jvp over one reverse pass.
    """
    path = taylor_path(d)

    def p(t):
        q, qd = path(t)[:2]
        return jax.grad(el.kinetic_energy, argnums=2)(chain, q, qd)

    def rest(t):
        q, qd = path(t)[:2]
        return (-jax.grad(el.kinetic_energy, argnums=1)(chain, q, qd)
                + jax.grad(el.potential_energy, argnums=1)(chain, q) + el.dissipative_force(chain, q, qd))

    pp = taylor_derivatives(p, 3, jnp.zeros((), d[0].dtype))
    rr = taylor_derivatives(rest, 2, jnp.zeros((), d[0].dtype))
    return [pp[k + 1] + rr[k] for k in range(3)]


def trajectory_derivs(params, n=5):
    """q(t) = a + b sin(ω t + φ) + c t² and its first n − 1 derivatives, as functions of t."""
    a, b, c, w, ph = params
    fns = [lambda t: a + b * jnp.sin(w * t + ph) + c * t**2]
    for _ in range(n - 1):
        fns.append(jax.jacfwd(fns[-1]))
    return fns


def check_against_fd_and_el(kind, rng, with_el=True):
    chain = make_chain(kind, rng)
    params = (*rng.uniform(-0.5, 0.5, (3, chain.nq)), rng.uniform(0.5, 2.0, chain.nq),
              rng.uniform(0, 2 * np.pi, chain.nq))
    h = 1e-3
    (tau, tau_d, tau_dd), f = _along_trajectory(chain, params, jnp.asarray(0.37), jnp.asarray(h))
    f = np.asarray(f)
    fd1 = (-f[4] + 8 * f[3] - 8 * f[1] + f[0]) / (12 * h)  # O(h⁴)
    fd2 = (-f[4] + 16 * f[3] - 30 * f[2] + 16 * f[1] - f[0]) / (12 * h**2)
    # finite differences: truncation ~h⁴, round-off ~1e-16/h² — 1e-7/1e-6 relative is comfortable
    assert rel_err(tau, f[2]) < 1e-14
    assert rel_err(tau_d, fd1) < 1e-7
    assert rel_err(tau_dd, fd2) < 1e-6
    if with_el:  # Euler–Lagrange reference differentiated in time by nested jvp: exact to round-off
        ref = el_derivatives(chain, [x(jnp.asarray(0.37)) for x in trajectory_derivs(params)])
        for mine, theirs in zip((tau, tau_d, tau_dd), ref, strict=True):
            assert rel_err(mine, theirs) < 1e-10


@pytest.mark.slow  # ~100 s of compilation on a loaded 2-core machine
def test_small_mixed_chain_derivatives_match_finite_differences(rng):
    # rigid link on an elastic, damped joint + damped soft CC segment with elongation
    check_against_fd_and_el("small", rng, with_el=False)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["small", "rigid", "soft", "mixed"])
def test_derivatives_match_finite_differences_and_el(kind, rng):
    check_against_fd_and_el(kind, rng)


@eqx.filter_jit
def _coriolis_checks(chain, q, qd, qdd):
    c = kj.coriolis_matrix(chain, q, qd)
    m = kj.mass_matrix_derivatives(chain, (q, qd, qdd), order=2)
    z = jnp.zeros_like(q)
    cqd = (kj.inverse_dynamics_full(chain, q, qd, z, internal=False).tau
           - kj.inverse_dynamics_full(chain, q, z, z, internal=False).tau)
    return c, m, cqd


@eqx.filter_jit
def el_mass_derivatives(chain, q, qd, qdd):
    return taylor_derivatives(lambda t: el.mass_matrix(chain, q + t * qd + 0.5 * t**2 * qdd), 2, jnp.zeros(()))


def check_coriolis(kind, rng, with_el=True):
    chain = make_chain(kind, rng)
    q, qd, qdd = rng.uniform(-0.6, 0.6, (3, chain.nq))
    c, (m, m_d, m_dd), cqd = _coriolis_checks(chain, q, qd, qdd)
    skew = np.asarray(m_d - 2 * c)
    assert np.max(np.abs(skew + skew.T)) < 1e-12 * max(1.0, np.max(np.abs(m_d)))
    assert rel_err(c + c.T, m_d) < 1e-12
    # C q̇ = velocity-product terms of the ID (gravity and internal forces off)
    assert rel_err(c @ qd, cqd) < 1e-11
    # M, Ṁ, M̈ against the EL mass matrix differentiated along q(t) = q + t q̇ + t²/2 q̈
    if with_el:
        for mine, theirs in zip((m, m_d, m_dd), el_mass_derivatives(chain, q, qd, qdd), strict=True):
            assert rel_err(mine, theirs) < 1e-10
    else:  # symmetry and positive definiteness at least
        assert rel_err(m_dd, m_dd.T) < 1e-14 and np.all(np.linalg.eigvalsh(np.asarray(m)) > 0)


@pytest.mark.slow  # ~150 s of compilation on a loaded 2-core machine
def test_small_mixed_chain_coriolis_matrix(rng):
    check_coriolis("small", rng, with_el=False)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["small", "rigid", "soft", "mixed"])
def test_coriolis_matrix_and_mass_matrix_derivatives(kind, rng):
    check_coriolis(kind, rng)


# in the default run again since the EL reference's d/dt(∂T/∂q̇) is one jvp: 8 s alone, pinned (2026-11-26)
def test_iiwa_second_order_against_el(rng):
    chain = iiwa_like()
    d = [rng.uniform(-1, 1, 7) for _ in range(5)]
    mine = ID_DERIVS(chain, d)
    ref = el_derivatives(chain, [jnp.asarray(x) for x in d])
    for a, b in zip(mine, ref, strict=True):
        assert rel_err(a, b) < 1e-10


def test_planar_2r_coriolis_and_mass_derivatives(rng):
    # textbook 2R: h = −L1 L2 m2 sin q2, C = [[h q̇2, h (q̇1 + q̇2)], [−h q̇1, 0]] (Christoffel arrangement)
    L1, L2, m1, m2 = rng.uniform(0.3, 2.0, 4)
    chain = planar_2r(L1, L2, m1, m2, 9.81)
    q, qd, qdd = rng.uniform(-2, 2, (3, 2))
    c, (m, m_d, m_dd), cqd = _coriolis_checks(chain, q, qd, qdd)
    h = -L1 * L2 * m2 * np.sin(q[1])
    assert rel_err(c, [[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]]) < 1e-12
    skew = np.asarray(m_d - 2 * c)
    assert np.max(np.abs(skew + skew.T)) < 1e-12 * np.max(np.abs(m_d))
    assert rel_err(c @ qd, cqd) < 1e-12
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    a = L1 * L2 * m2
    assert rel_err(m, [[L1**2 * (m1 + m2) + L2**2 * m2 + 2 * a * c2, L2**2 * m2 + a * c2],
                       [L2**2 * m2 + a * c2, L2**2 * m2]]) < 1e-12
    assert rel_err(m_d, -a * s2 * qd[1] * np.array([[2, 1], [1, 0]])) < 1e-12
    m_dd_ref = (-a * c2 * qd[1] ** 2 - a * s2 * qdd[1]) * np.array([[2, 1], [1, 0]])
    assert rel_err(m_dd, m_dd_ref) < 1e-12


def test_input_validation():
    chain = planar_2r()
    z = np.zeros(2)
    with pytest.raises(ValueError, match="needs the first 5"):
        kj.inverse_dynamics_derivatives(chain, (z, z, z, z), order=2)
    with pytest.raises(ValueError, match="order"):
        kj.inverse_dynamics_derivatives(chain, (z, z, z), order=-1)
    with pytest.raises(ValueError, match="order"):
        kj.mass_matrix_derivatives(chain, (z, z), order=1.5)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        kj.inverse_dynamics_derivatives(chain, (z, z, np.zeros(3)), order=0)
    with pytest.raises(TypeError, match="sequence"):
        kj.inverse_dynamics_derivatives(chain, None, order=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        kj.coriolis_matrix(chain, z, np.zeros(3))
    # extra derivatives are accepted and ignored; a stacked (k, nq) array works too
    d = np.ones((5, 2)) * np.array([[0.3], [0.2], [-0.5], [1.0], [2.0]])
    out = ID_DERIVS(chain, d)
    assert len(out) == 3
    assert rel_err(out[0], tau_2r(1.0, 1.0, 1.0, 1.0, 9.81, *d[:3])) < 1e-12
