"""Independent Euler–Lagrange reference (DESIGN §5).

The tests validate the recursion against it, and scenario ``003-sim3`` times the two.

World positions of every mass point are obtained by composing the joint and body geometry
functions module by module (a Python loop, O(N²) through autodiff); the kinetic energy is
``½ Σ w |ṗ|²`` (plus ``½ mv² + ½ ωᵀ I ω`` for rigid bodies), the potential energy is gravity plus
the bodies' and joints' elastic energies, and the equations of motion follow by autodiff:

    τ = M q̈ + (∂(∂T/∂q̇)/∂q) q̇ − ∂T/∂q + ∂V/∂q + (dissipative forces),

its first two terms as one directional derivative, d/dt (∂T/∂q̇).

The public functions are ``equinox.filter_jit``-ed (one compile per chain structure). It shares
nothing with the recursion except the geometry (``transform``, ``tip``, ``position``,
points, weights, mass, com, inertia) and the constitutive laws.
"""

# ruff: noqa: B023, B905  (the lambdas are called inside the loop)
from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from kane_jax.bodies.rigid import RigidBody
from kane_jax.lie import vee


def _split(chain, q):
    out = []
    for i, (joint, body) in enumerate(chain.modules):
        qi = q[chain.coordinate_slice(i)]
        out.append((joint, body, qi[: joint.nq], qi[joint.nq:]))
    return out


def _frames(chain, q):
    """Per module: (body proximal pose in world, module data)."""
    x = jnp.eye(4, dtype=q.dtype)
    out = []
    for joint, body, qj, qb in _split(chain, q):
        xp = x @ joint.transform(qj)
        out.append((xp, body, qb))
        x = xp @ body.tip(qb)
    return out


def kinetic_energy(chain, q, qd):
    def kinematics(qq):
        """Mass-point positions of every module, and the orientation of the rigid ones."""
        pos, rots = [], []
        for xp, body, qb in _frames(chain, qq):
            if isinstance(body, RigidBody):
                pos.append((xp[:3, :3] @ body.com + xp[:3, 3])[None])
                rots.append(xp[:3, :3])
            else:
                pts = jax.vmap(lambda s: body.position(qb, s))(body.points)
                pos.append(pts @ xp[:3, :3].T + xp[None, :3, 3])
                rots.append(None)
        return pos, rots

    (_, rots), (vel, rots_d) = jax.jvp(kinematics, (q,), (qd,))
    t = 0.0
    for (_, body), v, r, rd in zip(chain.modules, vel, rots, rots_d):
        if isinstance(body, RigidBody):
            omega_b = vee(r.T @ rd)
            t = t + 0.5 * body.mass * jnp.sum(v**2) + 0.5 * omega_b @ body.inertia @ omega_b
        else:
            t = t + 0.5 * jnp.sum(body.weights * jnp.sum(v**2, axis=1))
    return t


def potential_energy(chain, q, gravity=None):
    g = chain.gravity if gravity is None else gravity
    v = 0.0
    for xp, body, qb in _frames(chain, q):
        if isinstance(body, RigidBody):
            v = v - body.mass * g @ (xp[:3, :3] @ body.com + xp[:3, 3])
        else:
            pts = jax.vmap(lambda s: body.position(qb, s))(body.points) @ xp[:3, :3].T + xp[None, :3, 3]
            v = v - jnp.sum(body.weights * (pts @ g))
        v = v + body.energy(qb)
    for joint, _, qj, _ in _split(chain, q):
        v = v + joint.energy(qj)
    return v


def dissipative_force(chain, q, qd):
    parts = []
    for joint, body, qj, qb in _split(chain, q):
        nj = joint.nq
        qdi = qd[: nj]
        qd = qd[nj:]
        qdb, qd = qd[: body.nq], qd[body.nq:]
        parts.append(joint.internal_force(qj, qdi) - joint.internal_force(qj, jnp.zeros_like(qdi)))
        parts.append(body.internal_force(qb, qdb) - body.internal_force(qb, jnp.zeros_like(qdb)))
    return jnp.concatenate(parts)


@eqx.filter_jit
def mass_matrix(chain, q):
    return jax.hessian(lambda v: kinetic_energy(chain, q, v))(jnp.zeros_like(q))


@eqx.filter_jit
def inverse_dynamics(chain, q, qd, qdd, gravity=None):
    """Euler–Lagrange generalized forces, independent of the recursion."""
    dt_dqd = lambda qq, vv: jax.grad(kinetic_energy, argnums=2)(chain, qq, vv)  # noqa: E731
    # d/dt (∂T/∂q̇) = (∂²T/∂q̇²) q̈ + (∂²T/∂q̇∂q) q̇ as one directional derivative of ∂T/∂q̇ along (q̇, q̈),
    # not the two nq × nq Hessian blocks times q̈ and q̇
    _, ddt_dt_dqd = jax.jvp(dt_dqd, (q, qd), (qd, qdd))
    dt_dq = jax.grad(kinetic_energy, argnums=1)(chain, q, qd)
    dv_dq = jax.grad(potential_energy, argnums=1)(chain, q, gravity)
    return ddt_dt_dqd - dt_dq + dv_dq + dissipative_force(chain, q, qd)
