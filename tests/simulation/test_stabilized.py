"""The stabilized explicit solvers of third and fourth order (``kane_jax/simulation/stabilized.py``).

References: Butcher's order conditions and the stability polynomial computed from the tableau itself,
the observed order of convergence against a tight Dopri8 solution, and, on a chain with a fast damped
Kelvin–Voigt mode, a tight Dopri8 solution of the same simulation.
"""

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import robots

import kane_jax as kj
from kane_jax.simulation.stabilized import StabilizedRK3, StabilizedRK4

METHODS = pytest.mark.parametrize("method", [StabilizedRK3, StabilizedRK4], ids=["rk3", "rk4"])


def _tableau(method):
    tab = method.tableau
    s = len(tab.a_lower) + 1
    a = np.zeros((s, s))
    for i, row in enumerate(tab.a_lower, start=1):
        a[i, :i] = row
    return a, np.asarray(tab.b_sol), np.asarray(tab.b_error), np.r_[0.0, tab.c]


def _stage_polynomials(a, z):
    """Y_i(z) = 1 + z Σ_j a_ij Y_j(z), the stages on y' = λy with z = hλ; the last (FSAL) stage is R(z)."""
    y = np.ones((a.shape[0], z.size))
    for i in range(a.shape[0]):
        y[i] = 1 + z * (a[i, :i] @ y[:i])
    return y


@METHODS
def test_tableau_order_conditions_fsal_and_embedded_estimate(method):
    a, b, d, c = _tableau(method)
    p = method().order(None)
    np.testing.assert_allclose(a.sum(axis=1), c, rtol=0, atol=1e-15)
    # Butcher's conditions up to order 3 (1, c, c², Ac) and, for order 4, (c³, c·Ac, Ac², A²c), to round-off
    third = [b.sum(), b @ c, b @ c**2, b @ a @ c]
    fourth = [b @ c**3, b @ (c * (a @ c)), b @ a @ c**2, b @ a @ a @ c]
    np.testing.assert_allclose(third, [1, 1 / 2, 1 / 3, 1 / 6], rtol=0, atol=1e-15)
    if p == 4:
        np.testing.assert_allclose(fourth, [1 / 4, 1 / 8, 1 / 12, 1 / 24], rtol=0, atol=1e-15)
    else:  # not fourth order: the freedom went to stability
        assert abs(fourth[-1] - 1 / 24) > 1e-3
    # first same as last: the last stage is f at the new state (its row is b, c = 1, weight 0)
    np.testing.assert_array_equal(a[-1, :-1], b[:-1])
    assert b[-1] == 0.0 and c[-1] == 1.0 and method.tableau.fsal
    # the embedded estimate b − d is of order p − 1 and not p: d is O(h^p)
    lower = [d.sum(), d @ c] + ([d @ c**2, d @ a @ c] if p == 4 else [])
    np.testing.assert_allclose(lower, np.zeros(len(lower)), rtol=0, atol=1e-15)
    assert abs((d @ a @ a @ c) if p == 4 else (d @ a @ c)) > 1e-3
    assert np.all(b >= 0) and np.all(c >= 0) and np.all(c <= 1)


@METHODS
def test_stability_interval_on_the_negative_real_axis(method):
    a, *_ = _tableau(method)
    z = -np.linspace(0.0, method.stability_interval, 20_001)
    y = _stage_polynomials(a, z)
    # |R| ≤ 1 on the interval, and every internal stage bounded as well (no growth inside a step)
    assert np.max(np.abs(y[-1])) <= 1 + 1e-12
    assert np.max(np.abs(y)) <= 1 + 1e-12
    # damped inside the interval (away from z = 0), unstable just beyond it
    assert np.max(np.abs(y[-1][z < -2.0])) < 0.96
    assert abs(_stage_polynomials(a, np.array([-1.03 * method.stability_interval]))[-1, 0]) > 1
    # Tsit5's interval for comparison, from its own tableau: ≈ [-3.3, 0] per 6 evaluations
    tsit = diffrax.Tsit5.tableau
    at = np.zeros((7, 7))
    for i, row in enumerate(tsit.a_lower, start=1):
        at[i, :i] = row
    assert abs(_stage_polynomials(at, np.array([-3.7]))[-1, 0]) > 1


@METHODS
def test_order_of_convergence_on_a_nonlinear_ode(method):
    def f(t, y, args):
        return jnp.array([y[1], -y[0] + (1 - y[0] ** 2) * y[1] + jnp.sin(t)])

    term, y0 = diffrax.ODETerm(f), jnp.array([2.0, 0.0])
    ref = diffrax.diffeqsolve(term, diffrax.Dopri8(), 0.0, 2.0, 1e-3, y0, max_steps=100_000,
                              stepsize_controller=diffrax.PIDController(rtol=1e-14, atol=1e-14)).ys[-1]
    errors = [float(jnp.max(jnp.abs(diffrax.diffeqsolve(term, method(), 0.0, 2.0, 2.0 / n, y0).ys[-1] - ref)))
              for n in (20, 40, 80, 160)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    # measured: rk3 3.11, 3.06, 3.03 (errors 2.0e-5 ... 3.5e-8); rk4 4.12, 4.06, 4.03 (9.3e-7 ... 2.0e-10)
    p = method().order(None)
    assert np.all((orders > p - 0.1) & (orders < p + 0.3)), orders


@pytest.fixture(scope="module")
def kelvin_voigt_chain():
    return robots.kelvin_voigt_chain()


def test_fast_damped_mode_costs_fewer_evaluations_at_the_same_accuracy(kelvin_voigt_chain):
    chain, q0, qd0 = kelvin_voigt_chain, jnp.array([-1.2, 0.6]), jnp.zeros(2)
    rate = kj.simulation.stiffness(chain, q0, qd0, 0.3).damped_radius
    assert 1e4 < rate < 3e4, rate  # the mode that holds an explicit solver's steps
    ref = kj.simulate(chain, q0, qd0, 0.3, solver="dopri8", rtol=1e-12, atol=1e-14, n_save=7)
    kw = dict(rtol=1e-6, atol=1e-8, n_save=7, step_control="pi")
    runs = {name: kj.simulate(chain, q0, qd0, 0.3, solver=name, **kw)
            for name in ("tsit5", "stabilized_rk3", "stabilized_rk4")}
    # measured: errors 2.8e-12 / 4.6e-10 / 4.1e-12 on q, 5.2e-8 / 1.6e-7 / 7.4e-8 on q̇ (Tsit5 / rk3 / rk4);
    # 1,676 / 734 / 456 steps
    for traj in runs.values():
        np.testing.assert_allclose(traj.q, ref.q, rtol=0, atol=1e-8)
        np.testing.assert_allclose(traj.qd, ref.qd, rtol=0, atol=1e-6)
    # both take 6 new evaluations a step; Tsit5's steps sit at 3.3/|λ|, the stabilized method's further out
    steps = {name: int(traj.stats["num_steps"]) for name, traj in runs.items()}
    assert 2 * steps["stabilized_rk3"] < steps["tsit5"] and 2 * steps["stabilized_rk4"] < steps["tsit5"], steps
    assert runs["stabilized_rk3"].solver == "stabilized_rk3"
