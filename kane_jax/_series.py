"""The smooth coefficient functions behind :mod:`kane_jax.lie`: Taylor series in ``θ²`` near zero, closed forms away.

Ratios such as ``sin θ/θ`` or the SE(3) right Jacobian's coefficients are evaluated as a Taylor series
in ``θ²`` (Horner's rule) below a threshold and in closed form above it, behind the double-``where``
trick, with custom JVPs whose tangents are functions of the same kind (DESIGN §3.5). Exact rational
series for the right Jacobian's coefficients are generated here from the trigonometric series.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from ._small import materialize
from ._types import Array

FACT = [math.factorial(k) for k in range(40)]
# The smooth coefficients are Taylor series in θ² below SERIES_BELOW and closed forms above it. A
# soft body's dynamics Hessian differentiates them four times in θ², and a closed form's k-th
# derivative cancels digits like θ^(-2k): at the former threshold θ² = 1e-2, the fourth derivative
# of (θ − sin θ)/θ³ just above it was 39 % off, the second 1.4e-7 (tests/test_lie.py). From θ² = 2
# on, the closed forms' derivatives are good to 8e-14 / 4e-12 / 3e-10 / 2e-8 (orders 1-4), and 13
# terms (to θ²⁴) keep the series as accurate below. (θ² = 4 with 16 terms: 8e-15 … 2e-10, but 9 %
# more operations in a rod's dynamics and 3-5 % more run time; θ² = 1 with 12 terms: up to 8e-8.)
SERIES_BELOW = 2.0
TERMS = 13


def series_in_sq(theta2: Array, exact, coeffs, threshold: float = SERIES_BELOW) -> Array:
    """An even function of θ given θ², as a Taylor series where θ² < threshold (double-``where``).

    ``jnp.sinc`` alone is not enough: its derivatives are exact at 0 but garbage just off it
    (``d²/dx² sinc`` ≈ 4e28 at x = 1e-22); and a closed form's derivatives lose digits near 0 (see
    ``SERIES_BELOW``). The series is evaluated by Horner's rule.

    The derivative in θ² is a function of the same kind (the series' term-wise derivative and the
    closed form's derivative, behind the same ``where``), given to JAX as a custom JVP: nested
    derivatives (a Hessian of a soft body's dynamics differentiates these four times) trace one
    shorter series per order instead of differentiating every term of the series again at every
    order. Measured on the dynamics Hessian of two planar CC segments (2026-11-24, with the inline
    entry points of ``_dispatch``): 123,509 → 115,056 lines of optimized HLO. Each order's value is
    materialized (``_small.materialize``): XLA:CPU otherwise fuses the Horner chain into every kernel
    that reads it — 185 chains of 13 terms survived in the variable-radius body's dynamics Hessian,
    most of them scalar copies of the same few. Materialized (2026-11-30, tests' flags): that program
    65.2k → 52.5k optimized instructions, its compile 15.4 / 15.4 → 13.4 / 13.5 s; two planar CC
    segments' 45.7k → 43.9k, 12.2 / 13.3 → 11.9 / 11.9 s; rods' FD the same numbers bit for bit, run
    time within the spread.
    """
    return _analytic_in_sq(exact, tuple(float(c) for c in coeffs), threshold)(theta2)


def _horner(coeffs: tuple, x: Array) -> Array:
    if not coeffs:
        return jnp.zeros_like(x)
    out = jnp.full_like(x, coeffs[-1])
    for c in coeffs[-2::-1]:
        out = out * x + c
    return out


def _analytic_in_sq(exact, coeffs: tuple, threshold: float):
    """The custom-JVP function of :func:`series_in_sq` (its tangent is the next derivative's)."""

    @jax.custom_jvp
    def f(theta2):
        small = theta2 < threshold
        safe = jnp.where(small, jnp.full_like(theta2, threshold), theta2)
        return materialize(jnp.where(small, _horner(coeffs, theta2), exact(safe)))

    @f.defjvp
    def f_jvp(primals, tangents):
        (theta2,), (d_theta2,) = primals, tangents
        derivative = _analytic_in_sq(lambda t2: jax.jvp(exact, (t2,), (jnp.ones_like(t2),))[1],
                                     tuple(k * c for k, c in enumerate(coeffs))[1:], threshold)
        return f(theta2), derivative(theta2) * d_theta2

    return f


def series_stack(theta2: Array, exact, rows, threshold: float = SERIES_BELOW) -> Array:
    """Several functions of :func:`series_in_sq`'s kind of one ``θ²`` at once, stacked on a new leading axis.

    ``exact(t2)`` returns the closed forms stacked (``(k,) + t2.shape``), ``rows`` their ``k``
    coefficient series (equal lengths). The series share one Horner evaluation on the stacked array
    and the closed forms their square root, sine and cosine; each row is computed by the same
    operations in the same order as on its own. Used for the four coefficients of the SE(3) right
    Jacobian, which as separate series were a fifth of the equations of a PCS rod's ID and FD
    (2026-11-25, two 6-strain PCS rods, ID and FD: 11,737 → 10,417 equations; the tests' ``jit(jacfwd)``
    / ``jit(jacrev)`` of them trace + compile in 16.4–17.0 / 25.7–26.8 s instead of 17.6–18.5 /
    29.0 s, optimized HLO 47,508 / 69,544 → 44,033 / 66,842 lines). Not used for
    :func:`rotvec_coefficients`: stacked, the bending rods' FD ran 10 % slower.
    """
    rows = tuple(tuple(float(c) for c in r) for r in rows)
    return _analytic_stack(exact, rows, threshold)(theta2)


def _horner_stack(coeffs: np.ndarray, x: Array) -> Array:
    """``Σ_i coeffs[:, i] x^i`` for stacked ``x`` (``(k,) + shape``), by Horner's rule per row."""
    if coeffs.shape[1] == 0:
        return jnp.zeros_like(x)
    shape = (coeffs.shape[0],) + (1,) * (x.ndim - 1)
    out = jnp.broadcast_to(jnp.asarray(coeffs[:, -1].reshape(shape), x.dtype), x.shape)
    for i in range(coeffs.shape[1] - 2, -1, -1):
        out = out * x + jnp.asarray(coeffs[:, i].reshape(shape), x.dtype)
    return out


def _analytic_stack(exact, rows: tuple, threshold: float):
    """The custom-JVP function of :func:`series_stack` (its tangent is the next derivative's)."""
    coeffs = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)

    @jax.custom_jvp
    def f(theta2):
        small = theta2 < threshold
        safe = jnp.where(small, jnp.full_like(theta2, threshold), theta2)
        stacked = jnp.broadcast_to(theta2, (len(rows),) + theta2.shape)
        return materialize(jnp.where(small[None], _horner_stack(coeffs, stacked), exact(safe)))

    @f.defjvp
    def f_jvp(primals, tangents):
        (theta2,), (d_theta2,) = primals, tangents
        derivative = _analytic_stack(lambda t2: jax.jvp(exact, (t2,), (jnp.ones_like(t2),))[1],
                                     tuple(tuple(k * c for k, c in enumerate(r))[1:] for r in rows), threshold)
        return f(theta2), derivative(theta2) * d_theta2[None]

    return f


def quotient_series(numerator: dict[int, Fraction], power: int, n_terms: int = TERMS) -> list[float]:
    """Coefficients in ``θ²`` of ``Σ_k numerator[k] θᵏ / θ^power`` (the low orders cancel exactly)."""
    return [float(numerator.get(power + 2 * m, Fraction(0))) for m in range(n_terms)]


def trig_series(sin_coef: Fraction, sin_shift: int, cos_coef: Fraction, cos_shift: int, poly: dict[int, Fraction],
                order: int = 40) -> dict[int, Fraction]:
    """Power series of ``sin_coef θ^sin_shift sin θ + cos_coef θ^cos_shift cos θ + Σ poly[k] θᵏ``."""
    out: dict[int, Fraction] = dict(poly)
    for k in range(order):
        s_pow, c_pow = 2 * k + 1 + sin_shift, 2 * k + cos_shift
        out[s_pow] = out.get(s_pow, Fraction(0)) + sin_coef * Fraction((-1) ** k, FACT_BIG[2 * k + 1])
        out[c_pow] = out.get(c_pow, Fraction(0)) + cos_coef * Fraction((-1) ** k, FACT_BIG[2 * k])
    return out


FACT_BIG = [math.factorial(k) for k in range(90)]
F = Fraction
# Barfoot's closed forms of the SE(3) Jacobian, numerators over 2 θ^power (see se3_right_jacobian)
_C1 = quotient_series({k: v / 2 for k, v in trig_series(F(-1), 1, F(-4), 0, {0: F(4)}).items()}, 2)
_C2 = quotient_series({k: v / 2 for k, v in trig_series(F(-5), 0, F(1), 1, {1: F(4)}).items()}, 3)
_C3 = quotient_series({k: v / 2 for k, v in trig_series(F(-1), 1, F(-2), 0, {0: F(2)}).items()}, 4)
_C4 = quotient_series({k: v / 2 for k, v in trig_series(F(-3), 0, F(1), 1, {1: F(2)}).items()}, 5)


@jax.custom_jvp
def trig(theta2: Array) -> tuple[Array, Array, Array]:
    """``θ``, ``sin θ`` and ``cos θ`` from ``θ²``, computed once into one buffer.

    The closed forms of :func:`~kane_jax.lie.rotvec_coefficients` (``b = (1 − cos θ)/θ²``, which
    needs no half angle where the closed form is used, θ² ≥ 2) and of the right Jacobian's
    coefficients, and their derivatives, all read these three at the same ``θ²``: XLA merges the
    calls, and the buffer keeps its fusion pass from evaluating the sine and cosine again in every
    kernel that reads them (a call to libm each: 9 % of a six-strain rod's batched FD in a
    ``perf`` profile). Its JVP reuses the buffer. One FD of a six-strain PCS rod computed 24 sines
    and 12 cosines before (four sines and two cosines per section angle), 12 and 12 now (the
    closed forms are evaluated even where the series is selected: both sides of a ``where`` run).

    Arguments:
        theta2: ``θ² ≥ 0`` (any shape; the closed forms call it at ``θ² ≥`` :data:`SERIES_BELOW`).

    Returns:
        ``(θ, sin θ, cos θ)``, each of ``theta2``'s shape.
    """
    th = jnp.sqrt(theta2)
    out = materialize(jnp.stack([th, jnp.sin(th), jnp.cos(th)]))
    return out[0], out[1], out[2]


@trig.defjvp
def _trig_jvp(primals, tangents):
    """``dθ = dθ²/(2θ)``, ``d sin θ = cos θ dθ``, ``d cos θ = −sin θ dθ`` from the primal buffer."""
    (theta2,), (d_theta2,) = primals, tangents
    th, s, c = trig(theta2)
    d_th = d_theta2 / (2 * th)
    return (th, s, c), (d_th, c * d_th, -s * d_th)


@jax.custom_jvp
def sincos(x: Array) -> tuple[Array, Array]:
    """``sin x`` and ``cos x`` computed once into one buffer (:func:`~kane_jax._small.materialize`).

    XLA:CPU fuses a sine into every kernel that reads it, and a jet reads it in many (its tangents,
    every product downstream): the LVP primitives' angles were evaluated 15–50 times each in one
    vector field of ``003-sim1`` (191 sine and 155 cosine operations for the bending angle alone,
    2026-12-03). Its JVP reuses the buffer, at every order of nested jets.

    Arguments:
        x: angles (any shape).

    Returns:
        ``(sin x, cos x)``, each of ``x``'s shape.
    """
    out = materialize(jnp.stack([jnp.sin(x), jnp.cos(x)]))
    return out[0], out[1]


@sincos.defjvp
def _sincos_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    s, c = sincos(x)
    return (s, c), (c * dx, -s * dx)


def _right_jacobian_closed(x: Array) -> Array:
    """Barfoot's closed forms of the four coefficients of :func:`se3_right_jacobian`, ``x = θ²``, stacked."""
    th, s, c = trig(x)
    return jnp.stack([(4 - th * s - 4 * c) / (2 * x), (4 * th - 5 * s + th * c) / (2 * x * th),
                      (2 - th * s - 2 * c) / (2 * x * x), (2 * th - 3 * s + th * c) / (2 * x * x * th)])


def right_jacobian_coefficients(t2: Array) -> tuple[Array, Array, Array, Array]:
    """Coefficients of ``T = 1 − c1 ad + c2 ad² − c3 ad³ + c4 ad⁴`` (exact on SE(3): ``ad_ξ`` satisfies
    ``x (x² + θ²)² = 0``), Barfoot's closed forms for θ² ≥ 2 and Taylor series to θ²⁴ below."""

    # one buffer for the four: read by every entry of T η (and of its tangents)
    c1, c2, c3, c4 = materialize(series_stack(t2, _right_jacobian_closed, (_C1, _C2, _C3, _C4)))
    return c1, c2, c3, c4
