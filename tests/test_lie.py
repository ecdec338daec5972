"""The smooth coefficient functions of :mod:`kane_jax.lie` and their derivatives to fourth order.

The coefficients (``sin θ/θ``, ``(1 − cos θ)/θ²``, … and the SE(3) right Jacobian's) are short Taylor
series in ``θ²`` below a threshold and closed forms above it, with a custom JVP whose tangent is the
next derivative of the same kind. A soft body's dynamics Hessian differentiates them four times
(two orders in the body's jets, two in the Hessian). Reference: the 40-term Taylor series of each
function, summed exactly (``math.fsum``) in Python, differentiated term by term — independent of
both the short series and the closed forms, on both sides of the thresholds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from kane_jax import _series, lie

N_TERMS = 40


def _rotvec_series(shift: int) -> list[Fraction]:
    """Taylor coefficients in x = θ² of Σ (−x)ᵏ/(2k + shift)! (a: shift 1, b: 2, c: 3)."""
    return [Fraction((-1) ** k, math.factorial(2 * k + shift)) for k in range(N_TERMS)]


def _right_jacobian_series() -> list[list[Fraction]]:
    """Coefficients in θ² of the right Jacobian's c1…c4, from the trigonometric series in exact rationals."""
    F = Fraction
    specs = [((F(-1), 1, F(-4), 0, {0: F(4)}), 2), ((F(-5), 0, F(1), 1, {1: F(4)}), 3),
             ((F(-1), 1, F(-2), 0, {0: F(2)}), 4), ((F(-3), 0, F(1), 1, {1: F(2)}), 5)]
    out = []
    for args, power in specs:
        num = _series.trig_series(*args, order=45)  # θ powers to 90, enough for 40 terms in θ²
        out.append([num.get(power + 2 * m, F(0)) / 2 for m in range(N_TERMS)])
    return out


def _reference(coeffs: list[Fraction], x: float, order: int) -> float:
    """``order``-th derivative in x of Σ cₖ xᵏ at x, term by term."""
    terms = [float(c * math.perm(k, order)) * x ** (k - order) for k, c in enumerate(coeffs) if k >= order]
    return math.fsum(terms)


def _derivatives(fn, xs, mode: str) -> list[np.ndarray]:
    """``fn`` and its first four derivatives at the points ``xs`` by nested forward or reverse mode."""
    fns = [fn]
    for _ in range(4):
        f = fns[-1]
        if mode == "forward":
            fns.append(lambda t, f=f: jax.jvp(f, (t,), (jnp.ones_like(t),))[1])
        else:
            fns.append(jax.grad(f))
    return list(np.asarray(jax.jit(lambda x: jnp.stack([jax.vmap(f)(x) for f in fns]))(jnp.asarray(xs))))


# the straight configuration, the series (θ² < 2), either side of its end and of the former
# thresholds (θ² = 1e-2 for the rotation coefficients, 1 for the right Jacobian's), the closed forms
POINTS = (0.0, 1e-9, 3e-3, 1.01e-2, 0.3, 0.99, 1.01, 1.99, 2.01, 6.0)
# relative error bound per derivative order. Observed (2026-11-24): 2.8e-15 / 8.0e-14 / 3.7e-12 /
# 2.6e-10 / 1.7e-8, the largest just above θ² = 2, where a closed form's k-th derivative cancels
# digits like θ^(-2k). With the former thresholds the closed forms' derivatives just above θ² = 1e-2
# were off by 2.6e-11 / 1.4e-7 / 3.4e-5 / 0.39 (orders 1-4, (θ − sin θ)/θ³).
RTOL = (1e-14, 1e-12, 3e-11, 3e-9, 2e-7)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_coefficients_and_four_derivatives_match_their_taylor_series(mode):
    series = {f"rotvec_{name}": _rotvec_series(shift) for name, shift in (("a", 1), ("b", 2), ("c", 3))}
    series.update({f"right_jacobian_c{i + 1}": s for i, s in enumerate(_right_jacobian_series())})
    funcs = {f"rotvec_{name}": (lambda t, i=i: lie.rotvec_coefficients(t)[i]) for i, name in enumerate("abc")}
    funcs.update({f"right_jacobian_c{i + 1}": (lambda t, i=i: _series.right_jacobian_coefficients(t)[i])
                  for i in range(4)})
    for name, fn in funcs.items():
        got = _derivatives(fn, POINTS, mode)
        for order, values in enumerate(got):
            for x, value in zip(POINTS, values):
                ref = _reference(series[name], x, order)
                err = abs(value - ref) / max(abs(ref), 1e-300)
                assert np.isfinite(value), f"{name}: derivative {order} at θ² = {x} is not finite ({mode})"
                assert err < RTOL[order], (f"{name}: derivative {order} at θ² = {x}: {value!r} vs {ref!r}, "
                                           f"relative error {err:.2e} >= {RTOL[order]:.0e} ({mode})")


def test_rotation_and_right_jacobian_hessians_are_finite_and_continuous_at_zero():
    """Second derivatives of ``se3_exp`` and of the right Jacobian at ω = 0 and 1e-9 from it agree
    to 1e-9 (a naive ``sin θ/θ`` gives NaN at 0 or loses half its digits here)."""
    rng = np.random.default_rng(5)
    eta = jnp.asarray(rng.normal(size=6))
    direction = jnp.asarray(rng.normal(size=6))

    def fn(xi):
        return jnp.concatenate([lie.se3_exp(xi).ravel(), lie.se3_right_jacobian(xi, eta)])

    hess = jax.jit(jax.jacfwd(jax.jacrev(fn)))
    h0 = np.asarray(hess(jnp.zeros(6)))
    h1 = np.asarray(hess(1e-9 * direction / jnp.linalg.norm(direction)))
    assert np.all(np.isfinite(h0))
    np.testing.assert_allclose(h1, h0, rtol=0, atol=1e-9 * np.max(np.abs(h0)))


def test_compose_poses_equals_the_matrix_product():
    """``lie.compose_poses`` (component-wise, no dot kernel) against ``a @ b``, batched and broadcast."""
    from kane_jax import lie

    rng = np.random.default_rng(7)
    a = lie.se3_exp(jnp.asarray(rng.normal(size=(4, 6))))
    b = lie.se3_exp(jnp.asarray(rng.normal(size=(4, 6))))
    assert float(jnp.max(jnp.abs(lie.compose_poses(a, b) - a @ b))) <= 1e-15 * 8
    assert float(jnp.max(jnp.abs(lie.compose_poses(a[0], b) - a[0] @ b))) <= 1e-15 * 8


def test_trig_and_its_derivatives():
    """``_series.trig`` (θ, sin θ, cos θ from θ², one buffer) against NumPy, its first and second
    derivatives in θ² against the chain rule's closed forms (1e-14 / 1e-13 relative), and the
    rotation coefficient ``b = (1 − cos θ)/θ²`` it feeds against ``2 sin²(θ/2)/θ²`` (no cancellation
    where the closed form is used, θ² ≥ 2: 1e-13 relative up to θ = 6.2, near a full turn)."""
    t2 = jnp.asarray([2.0, 2.5, 6.0, 20.0, 6.2**2, 100.0])
    th = np.sqrt(np.asarray(t2))
    got = _series.trig(t2)
    for value, ref in zip(got, (th, np.sin(th), np.cos(th))):
        np.testing.assert_allclose(np.asarray(value), ref, rtol=1e-15, atol=0)
    d1 = jax.vmap(jax.jacfwd(_series.trig))(t2)
    d2 = jax.vmap(jax.jacfwd(jax.jacrev(_series.trig)))(t2)
    dth = 1 / (2 * th)
    refs1 = (dth, np.cos(th) * dth, -np.sin(th) * dth)
    ddth = -1 / (4 * th**3)
    refs2 = (ddth, -np.sin(th) * dth**2 + np.cos(th) * ddth, -np.cos(th) * dth**2 - np.sin(th) * ddth)
    for value, ref in zip(d1, refs1):
        np.testing.assert_allclose(np.asarray(value), ref, rtol=1e-14, atol=0)
    for value, ref in zip(d2, refs2):
        np.testing.assert_allclose(np.asarray(value), ref, rtol=1e-13, atol=0)
    b = np.asarray(lie.rotvec_coefficients(t2)[1])
    np.testing.assert_allclose(b, 2 * np.sin(th / 2) ** 2 / np.asarray(t2), rtol=1e-13, atol=0)


def test_sincos_values_derivatives_and_one_evaluation():
    """``_series.sincos`` against NumPy (1e-15), its first and second derivatives against ``cos``,
    ``−sin`` and ``−sin``, ``−cos`` (1e-15), and the point of it: a second-order jet whose tangents
    read the sine and cosine in several kernels evaluates each once in the compiled program, where
    ``jnp.sin``/``jnp.cos`` are evaluated again by each reader (counted in the optimized HLO)."""
    x = jnp.asarray([-2.5, -0.3, 0.0, 1e-9, 0.7, 3.1])
    s, c = _series.sincos(x)
    np.testing.assert_allclose(np.asarray(s), np.sin(np.asarray(x)), rtol=1e-15, atol=0)
    np.testing.assert_allclose(np.asarray(c), np.cos(np.asarray(x)), rtol=1e-15, atol=0)
    d1 = jax.vmap(jax.jacfwd(_series.sincos))(x)
    d2 = jax.vmap(jax.jacfwd(jax.jacrev(_series.sincos)))(x)
    xs = np.asarray(x)
    for value, ref in zip(d1 + d2, (np.cos(xs), -np.sin(xs), -np.sin(xs), -np.cos(xs))):
        np.testing.assert_allclose(np.asarray(value), ref, rtol=1e-15, atol=1e-300)

    def reader(pair):
        def f(z):
            sn, cs = pair(z)
            return jnp.stack([sn * z, cs * z * z, sn * cs + z])
        return f

    def transcendentals(pair):
        def jet(z, v):
            return jax.jvp(lambda y: jax.jvp(reader(pair), (y,), (v,))[1], (z,), (v,))
        text = jax.jit(jet).lower(x, jnp.ones_like(x)).compile().as_text()
        return text.count(" sine(") + text.count(" cosine(")

    once, plain = transcendentals(_series.sincos), transcendentals(lambda z: (jnp.sin(z), jnp.cos(z)))
    assert once == 2 < plain, (once, plain)
