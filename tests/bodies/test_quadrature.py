"""Quadrature rules of the slender bodies, and what their constructors compile.

The rules against closed forms (volumes and second moments of disks, cylinders, cones and tubes,
relative 1e-13), their compiled form (``construction_jit``) against the same functions run eagerly
(relative 1e-15), and, in a new process, the number of XLA programs the soft bodies' constructors
compile (issue 17: each eager ``jax.numpy`` operation compiled a program of its own, 28–64 per body
type, 1.2–2.9 s in a fresh process).
"""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kane_jax as kj
from kane_jax.bodies import disk_rule, rod_rule, tube_rule
from kane_jax.bodies._rod import _conical_rule, _material

TOL = 1e-13


@pytest.mark.parametrize("n_radial, n_angular", [(2, 4), (3, 6), (0, 1)])
def test_disk_and_rod_rules_integrate_area_volume_and_second_moments(n_radial, n_angular):
    r, length = 0.03, 0.4
    nodes, area = disk_rule(r, n_radial, n_angular)
    np.testing.assert_allclose(float(jnp.sum(area)), np.pi * r**2, rtol=TOL)
    if n_radial >= 2:  # exact for y², z² (the docstring's claim)
        for k in range(2):
            np.testing.assert_allclose(float(area @ nodes[:, k] ** 2), np.pi * r**4 / 4, rtol=TOL)
    points, vol = rod_rule(length, r, order=3, n_radial=n_radial, n_angular=n_angular)
    np.testing.assert_allclose(float(jnp.sum(vol)), np.pi * r**2 * length, rtol=TOL)
    np.testing.assert_allclose(float(vol @ points[:, 0]), np.pi * r**2 * length / 2, rtol=TOL)  # centroid σ = 1/2


def test_conical_and_tube_rules_integrate_their_volumes():
    length, r0, r1, r_in = 0.3, 0.02, 0.01, 0.004
    mat = _material(length, r0, r1, 1000.0, 1e6, 0.5, None, 0.0)
    _, vol = _conical_rule(mat, order=3, n_radial=2, n_angular=4)  # A(σ) quadratic in σ: exact with 2+ nodes
    np.testing.assert_allclose(float(jnp.sum(vol)), np.pi * length * (r0**2 + r0 * r1 + r1**2) / 3, rtol=TOL)
    _, vol = tube_rule(length, r0, r_in, order=2, n_radial=2, n_angular=3)
    np.testing.assert_allclose(float(jnp.sum(vol)), np.pi * (r0**2 - r_in**2) * length, rtol=TOL)


def test_compiled_rules_equal_their_eager_form():
    """``construction_jit`` changes where the arithmetic runs, not its result."""
    for jitted, args, kwargs in [
        (disk_rule, (0.02, 2, 5), {}),
        (rod_rule, (0.3, 0.02), {"order": 4, "n_radial": 2, "n_angular": 3}),
        (tube_rule, (0.3, 0.02, 0.005), {"order": 3, "n_radial": 2, "n_angular": 4}),
    ]:
        with jax.disable_jit():
            eager = jitted(*args, **kwargs)
        for a, b in zip(jitted(*args, **kwargs), eager):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-15, atol=1e-300)


def test_a_rod_built_inside_grad_has_the_derivative_of_its_closed_form():
    """The compiled constructor arithmetic is traced inline under ``grad``: d(mass)/d(radius) of a
    cylinder, ``2 ρ π r L``."""
    mass = jax.grad(lambda r: jnp.sum(kj.CosseratPCS(0.2, r, 1000.0, 1e6, order=3).weights))(0.01)
    np.testing.assert_allclose(float(mass), 2 * 1000.0 * np.pi * 0.01 * 0.2, rtol=TOL)


# seven soft bodies built in one new process: 172 programs before their constructors' arithmetic was
# compiled as one program per rule (2026-11-28), 21 after
COMPILE_BUDGET = 30


def test_soft_body_constructors_compile_a_few_programs():
    code = """
import logging, jax
jax.config.update("jax_enable_x64", True)
import kane_jax as kj
from kane_jax.bodies import lvp_primitives as P
records = []
h = logging.Handler(); h.emit = records.append; logging.getLogger("jax").addHandler(h)
with jax.log_compiles(True):
    bodies = [kj.PlanarConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01, elongation=True, order=3),
              kj.SpatialConstantCurvature(0.2, 0.02, 1000.0, 1e5, 0.01, order=3),
              kj.CosseratPCS(0.15, 0.01, 1000.0, 1e6, damping=0.01, order=3),
              kj.CosseratGVS(0.15, 0.01, 1000.0, 1e6, basis=kj.LegendreBasis(2), strains=("bend_y", "stretch")),
              kj.GodageSection(stiffness=100.0, damping=1.0, order=3),
              kj.VariableRadiusPCC(order=2, n_radial=1, n_angular=4),
              kj.LVPBody([P.Stretch(), P.Bend("y"), P.Twist()], 0.1, 0.02, order=2, n_radial=1, n_angular=3)]
print(sum("Compiling" in r.getMessage() for r in records))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    count = int(proc.stdout.strip().splitlines()[-1])
    assert count <= COMPILE_BUDGET, f"{count} programs compiled by seven constructors (budget {COMPILE_BUDGET})"


def test_bad_quadrature_sizes_are_named():
    with pytest.raises(TypeError, match="`n_radial` must be an int"):
        kj.PlanarConstantCurvature(n_radial=[2])
    with pytest.raises(ValueError, match="`n_angular` must be >= 1"):
        kj.PlanarConstantCurvature(n_angular=0)
    with pytest.raises(ValueError, match="`order` must be a positive int"):
        rod_rule(0.1, 0.01, order=0)
