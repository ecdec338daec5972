"""PullOnly: a controller's tendon force re-allocated onto non-negative tensions (SciPy's NNLS as reference)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import nnls

import kane_jax as kj
from kane_jax.control import PullOnly
from kane_jax.lie import make_pose


def _arm():
    """A motorized revolute link carrying a tendon-driven Cosserat segment (3 tendons at 120°)."""
    link = kj.RigidBody(0.5, (0.1, 0.0, 0.0), jnp.diag(jnp.array([1e-4, 2e-3, 2e-3])),
                        tip=make_pose(jnp.eye(3), jnp.array([0.2, 0.0, 0.0])))
    seg = kj.CosseratPCS(0.2, 0.01, strains=("bend_y", "bend_z", "stretch"))
    tendons = [kj.Tendon(1, [(0.008 * np.cos(a), 0.008 * np.sin(a))]) for a in (0.0, 2.1, 4.2)]
    return kj.Chain([(kj.Revolute((0, 0, 1)), link), (kj.Fixed(), seg)], gravity=(0.0, 0.0, -9.81),
                    actuators=[kj.JointMotor([0]), *tendons])


@pytest.fixture(scope="module")
def arm_state():
    ch = _arm()
    q = jnp.array([0.3, 0.8, -0.4, 0.02])
    return ch, q, jnp.zeros(ch.nq), np.asarray(kj.actuation_matrix(ch, q))


def test_pulls_asked_are_kept(arm_state):
    ch, q, qd, _ = arm_state
    asked = jnp.array([1.7, 2.0, 0.5, 1.0])  # motor torque and three positive tensions
    u = eqx.filter_jit(PullOnly(lambda t, q, qd: asked, ch, pulling=(1, 2, 3)))(0.0, q, qd)
    assert float(u[0]) == 1.7  # the motor: exactly as asked
    np.testing.assert_allclose(u[1:], asked[1:], rtol=1e-6, atol=1e-7)


def test_pushes_asked_become_the_nearest_pulls(arm_state):
    ch, q, qd, b = arm_state
    asked = jnp.array([-0.4, 3.0, -2.0, 0.5])  # the second tendon would push
    u = np.asarray(eqx.filter_jit(PullOnly(lambda t, q, qd: asked, ch, pulling=(1, 2, 3)))(0.0, q, qd))
    assert u[0] == -0.4 and u[1:].min() >= -1e-9
    ref, _ = nnls(b[:, 1:], b[:, 1:] @ np.asarray(asked[1:]))  # independent NNLS of the tendon force
    np.testing.assert_allclose(u[1:], ref, rtol=1e-5, atol=1e-6)
    # the force the tendons make is the least-squares nearest to the one asked
    np.testing.assert_allclose(np.linalg.norm(b[:, 1:] @ (u[1:] - np.asarray(asked[1:]))),
                               np.linalg.norm(b[:, 1:] @ (ref - np.asarray(asked[1:]))), rtol=1e-6, atol=1e-9)


def test_bad_arguments_are_named(arm_state):
    ch = arm_state[0]
    with pytest.raises(ValueError, match="pulling"):
        PullOnly(lambda t, q, qd: jnp.zeros(4), ch, pulling=(1, 4))
    with pytest.raises(ValueError, match="pulling"):
        PullOnly(lambda t, q, qd: jnp.zeros(4), ch, pulling=(1, 1))
    with pytest.raises(ValueError, match="chain"):
        PullOnly(lambda t, q, qd: jnp.zeros(1), kj.Chain([(kj.Revolute((0, 0, 1)), _arm().modules[0][1])]))


def test_matching_the_bending_moments_only(arm_state):
    ch, q, qd, b = arm_state
    asked = jnp.array([0.0, 3.0, -2.0, 0.5])
    u = np.asarray(eqx.filter_jit(PullOnly(lambda t, q, qd: asked, ch, pulling=(1, 2, 3), match=(1, 2)))(0.0, q, qd))
    rows = b[1:3, 1:]  # bend_y, bend_z rows of the tendons' columns
    target = rows @ np.asarray(asked[1:])
    # three tendons, two moments: reachable with pulls, so matched exactly, least tension
    np.testing.assert_allclose(rows @ u[1:], target, rtol=1e-6, atol=1e-9)
    assert u[1:].min() >= -1e-9 and np.isclose(u[1:].min(), 0.0, atol=1e-6)
    with pytest.raises(ValueError, match="match"):
        PullOnly(lambda t, q, qd: asked, ch, match=(9,))


def test_nothing_asked_gives_the_pretension_in_the_null_space(arm_state):
    # three tendons, two matched moments: a one-dimensional null space that only the pretension
    # decides; the solver must resolve it (it once stopped at its starting point, ≈ 1 N each)
    ch, q, qd, _ = arm_state
    law = PullOnly(lambda t, q, qd: jnp.zeros(4), ch, pulling=(1, 2, 3), match=(1, 2))
    # all three bounds active: the interior-point solver stops ≈ 3e-6 N inside them (measured)
    np.testing.assert_allclose(eqx.filter_jit(law)(0.0, q, qd), np.zeros(4), atol=1e-5)


def test_pulling_inputs_of_some_actuators_use_their_columns_only():
    # a two-input joint motor (its second input pulling), three tendons (the first not pulling): the
    # law builds B from the owning actuators alone; oracle: the whole chain's actuation matrix, its
    # pulling columns, and the same allocation
    from kane_jax.control import allocate_tensions

    link = kj.RigidBody(0.5, (0.1, 0.0, 0.0), jnp.diag(jnp.array([1e-4, 2e-3, 2e-3])),
                        tip=make_pose(jnp.eye(3), jnp.array([0.2, 0.0, 0.0])))
    seg = kj.CosseratPCS(0.2, 0.01, strains=("bend_y", "bend_z", "stretch"))
    tendons = [kj.Tendon(2, [(0.008 * np.cos(a), 0.008 * np.sin(a))]) for a in (0.0, 2.1, 4.2)]
    ch = kj.Chain([(kj.Revolute((0, 0, 1)), link), (kj.Revolute((0, 1, 0)), link), (kj.Fixed(), seg)],
                  gravity=(0.0, 0.0, -9.81), actuators=[kj.JointMotor([0, 1]), *tendons])
    q, qd = jnp.array([0.3, -0.2, 0.8, -0.4, 0.02]), jnp.zeros(5)
    asked = jnp.array([0.7, 0.4, 1.0, 2.5, -1.5])
    pulling, match = (1, 3, 4), (1, 2, 3)
    u = np.asarray(eqx.filter_jit(PullOnly(lambda t, q, qd: asked, ch, pulling=pulling, match=match))(0.0, q, qd))
    b = np.asarray(kj.actuation_matrix(ch, q))[np.ix_(match, pulling)]
    want = np.asarray(allocate_tensions(jnp.asarray(b.T), jnp.asarray(b @ np.asarray(asked)[list(pulling)]),
                                        minimum=jnp.asarray(0.0)))
    np.testing.assert_allclose(u[list(pulling)], want, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(u[[0, 2]], np.asarray(asked)[[0, 2]])  # the others as asked


def test_tendons_of_two_bodies_are_allocated_body_by_body():
    # two tendon-driven segments, three tendons each: the match of each body's bending moments
    # involves its own tendons only, so the law solves two 3-tendon problems (exactly) instead of one
    # of six; oracle: the same allocation of the whole matrix (qpax's interior point)
    from kane_jax.control import allocate_tensions

    seg = kj.CosseratPCS(0.2, 0.01, strains=("bend_y", "bend_z", "stretch"))
    tendons = [kj.Tendon(i, [(0.008 * np.cos(a), 0.008 * np.sin(a))]) for i in (0, 1) for a in (0.0, 2.1, 4.2)]
    ch = kj.Chain([(kj.Fixed(), seg), (kj.Fixed(), seg)], gravity=(0.0, 0.0, -9.81), actuators=tendons)
    q, qd = jnp.array([0.8, -0.4, 0.02, -0.3, 0.5, 0.01]), jnp.zeros(6)
    match = (0, 1, 3, 4)
    law = PullOnly(lambda t, q, qd: jnp.zeros(6), ch, match=match)
    assert law.blocks == (((0, 1, 2), (0, 1)), ((3, 4, 5), (2, 3)))
    b = np.asarray(kj.actuation_matrix(ch, q))[list(match)]
    for asked in (jnp.array([1.0, 2.5, -1.5, -0.5, 0.3, 2.0]), jnp.array([0.2, 0.1, 0.4, 3.0, -2.0, 0.0])):
        u = np.asarray(eqx.filter_jit(PullOnly(lambda t, q, qd: asked, ch, match=match))(0.0, q, qd))
        want = np.asarray(allocate_tensions(jnp.asarray(b.T), jnp.asarray(b @ np.asarray(asked))))
        assert u.min() >= 0.0
        np.testing.assert_allclose(u, want, rtol=0, atol=1e-6 * np.abs(want).max())
        # and the force each body's tendons make is the NNLS nearest to the asked one (SciPy)
        for cols, rows in ((slice(0, 3), slice(0, 2)), (slice(3, 6), slice(2, 4))):
            ref, _ = nnls(b[rows, cols], b[rows, cols] @ np.asarray(asked[cols]))
            np.testing.assert_allclose(b[rows, cols] @ u[cols], b[rows, cols] @ ref, rtol=0, atol=1e-6)


class _Windows(eqx.Module):
    """A law that switches at its jump times (as 003-sim2's hybrid task does)."""

    switch: jax.Array

    @property
    def jump_times(self):
        return self.switch

    def __call__(self, t, q, qd):
        return jnp.where(t < self.switch[0], 1.0, 2.0) * jnp.ones(4)


def test_the_wrapped_laws_jump_times_are_simulates_jumps(arm_state):
    # reference: the wrapped law's own jump times (the allocation adds no switch of its own), so that
    # simulate's default jump_ts ends the steps there for the wrapper too; none for a law without them
    ch = arm_state[0]
    switch = jnp.array([0.25, 0.75])
    np.testing.assert_array_equal(PullOnly(_Windows(switch), ch, pulling=(1, 2, 3)).jump_times, switch)
    assert PullOnly(lambda t, q, qd: jnp.ones(4), ch).jump_times is None
