"""Worker of ``tests/algorithms/test_derivative_matrix.py``: q-derivatives of ID, M and FD for one body type.

Run as ``python tests/helpers/derivative_matrix.py KIND [--hessian] [--all]``, or with ``--serve`` for one
such request per line of its input (each answered by its lines and ``DONE``). For the cases of
:func:`cases` (the default suite's set) or, with ``--all``, every joint type (fixed, revolute,
prismatic, universal) × 1 and 3 identical modules (and 2 behind fixed joints), it compiles
``jit(jacfwd)`` and ``jit(jacrev)`` (:func:`derivative_programs`) of ``q ↦ (ID(q, q̇, q̈), FD(q, q̇, τ)[, M(q)])``, with
``--hessian`` the forward-over-forward q-Hessian of the ID, evaluates them at a random q and at
q = 0, compares them with central differences of the compiled map (the reference) and prints one
JSON line per case. A line ``START name`` precedes each compile, so that when XLA aborts the
process (as it once did: ``dot_op_emitter.cc: Check failed: … IsMonotonicWithDim0Major``) the
parent names the case.
"""

from __future__ import annotations

import json
import os
import sys
import zlib

if "xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false").strip()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
import helpers.robots as chains  # noqa: E402
import kane_jax as kj  # noqa: E402
from helpers.checks import with_value  # noqa: E402
from kane_jax.bodies import lvp_primitives as P  # noqa: E402

KINDS = ("rigid", "body", "pcc", "spatial_cc", "pcs", "gvs", "godage", "variable_radius", "lvp", "learned", "mixed")
JOINTS = ("fixed", "revolute", "prismatic", "universal")
_MOVING = ("revolute", "prismatic", "universal")
MASS_BY_DEFAULT = ("rigid", "body")  # M(q) in the map by default (every type with --all)


def cases(kind: str, *, full: bool = False) -> list[tuple[str, int]]:
    """(joint, count) cases of one body type.

    The default suite runs every soft body type on two or three identical modules behind fixed
    joints (the case that aborted XLA), rigid bodies behind universal joints, the generic body
    behind revolute joints and a mixed chain (revolute, fixed, prismatic); ``full`` gives the whole
    product of joint types × 1 and 3 modules, and 2 behind fixed joints (:func:`full_cases`, ``-m slow``).
    """
    if kind == "mixed":
        return [("mixed", 4)]
    if full:
        return full_cases(kind)
    if kind == "rigid":  # rigid modules behind fixed joints have no coordinates
        return [("universal", 3)]
    if kind == "body":
        return [("revolute", 2)]
    return [("fixed", 2 + KINDS.index(kind) % 2)]


def full_cases(kind: str) -> list[tuple[str, int]]:
    """The ``--all`` cases: 1 and 3 identical modules behind each joint type, and 2 behind fixed
    joints (the case that aborted XLA; 2 and 3 modules are the same program shape, one scan over a
    group). Prismatic joints only for rigid bodies: a prismatic and a revolute joint are the same
    closed-form screw jet (``AbstractJoint.jet``) with another constant screw, so on a soft body
    they compile the same program shape; the rigid chains keep every joint type."""
    joints = JOINTS if kind == "rigid" else tuple(j for j in JOINTS if j != "prismatic")
    return [(j, c) for j in joints for c in ((1, 2, 3) if j == "fixed" else (1, 3))]


H = 2e-4  # step of the five-point stencil (truncation ~ h⁴, round-off ~ eps/h)


def make_body(kind: str, rng):
    if kind == "rigid":
        return chains.random_rigid(rng)
    if kind == "body":
        return chains.generic_beam(rng, stiffness=np.diag([3.0, 2.0, 5.0]), damping=0.2)
    if kind == "pcc":
        return kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01, elongation=True, order=3)
    if kind == "spatial_cc":
        return kj.SpatialConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01, order=3)
    if kind == "pcs":
        return kj.CosseratPCS(0.15, 0.01, 1000.0, 1e6, damping=0.01, order=3)
    if kind == "gvs":
        return kj.CosseratGVS(0.15, 0.01, 1000.0, 1e6, basis=kj.LegendreBasis(2), strains=("bend_y", "stretch"),
                              order=3)
    if kind == "godage":
        return kj.GodageSection(stiffness=100.0, damping=1.0, order=3)
    if kind == "variable_radius":
        return kj.VariableRadiusPCC(order=2, n_radial=1, n_angular=4, chamber_order=2, chamber_across=1,
                                    chamber_along=2)
    if kind == "lvp":
        return kj.LVPBody([P.Stretch(), P.Bend("y"), P.Twist()], 0.1, 0.02, order=2, n_radial=1, n_angular=3)
    if kind == "learned":
        return kj.LearnedBody(2, key=jax.random.PRNGKey(0), width_size=8, depth=1, order=2, n_radial=1,
                              n_angular=3, stiffness=1.0)
    raise ValueError(kind)


def dynamics_map(chain, qd, qdd, tau, *, mass: bool):
    def f(q):
        parts = [kj.inverse_dynamics(chain, q, qd, qdd), kj.forward_dynamics(chain, q, qd, tau)]
        return jnp.concatenate(parts + ([kj.mass_matrix(chain, q).ravel()] if mass else []))
    return f


def central_differences(f, q):
    """(∂f/∂q) by fourth-order central differences (five-point stencil), calling the compiled ``f``.

    Fourth order because the forward dynamics of stiff, light soft modules has entries of 1e9 and
    large higher derivatives: second-order differences there are limited to ≈ 1e-5 relative by
    truncation and round-off together (measured on the mixed chain), while the ID part of the same
    Jacobian converges as h² down to 1e-9.
    """
    def col(j):
        e = jnp.zeros_like(q).at[j].set(H)
        return (8 * (f(q + e) - f(q - e)) - (f(q + 2 * e) - f(q - 2 * e))) / (12 * H)
    return jnp.stack([col(j) for j in range(q.shape[0])], axis=-1)


def derivative_programs(f, tau_of_q, *, hessian: bool):
    """Compiled derivative programs; each is compiled once and evaluated at q and at q = 0.

    ``jit(jacfwd)`` (the mode that aborted XLA, and the one linearization, Newton statics and
    implicit solvers use) and ``jit(jacrev)`` (gradients: identification, trajectory optimization)
    for every case. Reverse mode of a soft chain once compiled ≈ 6× longer than forward mode (90 s
    for two PCS modules on the idle 2-core machine) and ran only with ``--all``; since the right
    Jacobian and the 3×3 kernels broadcast once (2026-11-24) it compiles in about twice the
    forward mode's time and runs for every body type by default.
    The Hessian (forward over forward) is that of the ID alone, ``tau_of_q``.

    The forward-mode programs also return the values they differentiate (their primal, as aux):
    the central differences evaluate those, so no separate program of the values is compiled
    (one compile less per case, two with ``hessian``: pinned, 2026-11-26, pcs 21.0 → 19.7 s,
    pcc with the Hessian 19.4 → 17.1 s).
    """
    progs = {"fwd": jax.jit(jax.jacfwd(with_value(f), has_aux=True)), "rev": jax.jit(jax.jacrev(f))}
    if hessian:
        progs["hess"] = jax.jit(jax.jacfwd(with_value(jax.jacfwd(tau_of_q)), has_aux=True))
    return progs


def derivatives(progs, q):
    out = {"rev": progs["rev"](q)}
    out["fwd"], out["value"] = progs["fwd"](q)
    out["fd"] = central_differences(lambda x: progs["fwd"](x)[1], q)
    if "hess" in progs:
        out["hess"], out["jac_id"] = progs["hess"](q)
        out["hess_fd"] = central_differences(lambda x: progs["hess"](x)[1], q)
    return out


def rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def make_chain(kind: str, joint: str, count: int, rng) -> kj.Chain:
    gravity = rng.normal(size=3) * 5
    if kind == "mixed":  # rigid, soft and generic modules behind different joints
        return kj.Chain([(chains.make_joint("revolute", rng), make_body("rigid", rng)),
                         (kj.Fixed(), make_body("pcs", rng)), (kj.Fixed(), make_body("godage", rng)),
                         (chains.make_joint("prismatic", rng), make_body("body", rng))], gravity=gravity)
    body = make_body(kind, rng)
    first = chains.make_joint(joint, rng)
    rest = [chains.make_joint(joint, rng, placement=joint != "fixed") for _ in range(count - 1)]
    if joint == "fixed" and kind == "rigid":  # a chain of fixed rigid modules has no coordinates
        first = kj.Revolute(rng.normal(size=3))
    return kj.Chain([(first, body)] + [(j, body) for j in rest], gravity=gravity)


def run_case(kind: str, joint: str, count: int, *, hessian: bool, full: bool) -> dict:
    rng = np.random.default_rng(zlib.crc32(f"{kind}/{joint}/{count}".encode()))
    chain = make_chain(kind, joint, count, rng)
    n = chain.nq
    q = jnp.asarray(rng.uniform(-0.3, 0.3, n))
    qd, qdd, tau = (jnp.asarray(rng.normal(size=n)) for _ in range(3))
    f = dynamics_map(chain, qd, qdd, tau, mass=full or kind in MASS_BY_DEFAULT)
    progs = derivative_programs(f, lambda x: kj.inverse_dynamics(chain, x, qd, qdd), hessian=hessian)
    res = derivatives(progs, q)
    at_rest = derivatives(progs, jnp.zeros(n))
    out = {"nq": n, "fwd": rel(res["fwd"], res["fd"]), "rev": rel(res["rev"], res["fd"]),
           "finite_at_rest": bool(all(np.all(np.isfinite(np.asarray(v))) for v in at_rest.values()))}
    if hessian:
        out["hess"] = rel(res["hess"], res["hess_fd"])
    return out


def run_kind(argv) -> None:
    """The cases of one body type (``KIND [--hessian] [--all]``), a ``START`` and a ``RESULT`` line each."""
    kind, hessian = argv[0], "--hessian" in argv
    todo = cases(kind, full="--all" in argv)
    for joint, count in todo:
        name = f"{kind}/{joint}/{count}"
        print(f"START {name}", flush=True)
        out = run_case(kind, joint, count, hessian=hessian, full="--all" in argv)
        print("RESULT " + json.dumps({"case": name, **out}), flush=True)
        jax.clear_caches()


def main(argv) -> int:
    from kane_jax._gc import collect_less_often

    collect_less_often()  # as tests/conftest.py does for the suite's own processes
    if argv[:1] != ["--serve"]:
        run_kind(argv)
        return 0
    # one process for many body types (its imports and start-up paid once): a request per line on stdin,
    # its cases' lines, then DONE
    for line in sys.stdin:
        run_kind(line.split())
        print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
