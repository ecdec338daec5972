"""A third-order explicit Runge–Kutta method with a long stability interval on the negative real axis.

Soft robots under feedback often have fast *damped* modes: an unactuated Kelvin–Voigt mode of a
soft body (paper ``003_…`` Sim. 1: ``λ ≈ −7.5e3`` 1/s) or the damping that a tendon PD puts on a
light, stiff coordinate (Sim. 2: ``λ ≈ −4.9e4`` 1/s in the closed loop). They decay and need no
resolution, but an explicit solver must keep ``h |λ|`` inside its stability interval: Tsit5's is
``[−3.3, 0]`` for 6 evaluations a step, Bosh3's ``[−2.5, 0]`` for 3. Implicit and Rosenbrock
methods remove the limit but need the closed loop's Jacobian, whose law (a feedback-linearizing
law, a QP allocation) is costly to differentiate, and their unfiltered embedded error estimates
took more steps than Tsit5 there (``docs/architecture.md``).

:class:`StabilizedRK3` spends its stages on stability instead: 6 stages (plus a first-same-as-last
stage, so 6 evaluations a step), order 3, and ``|R(z)| ≤ 1`` on ``[−15.85, 0]`` — 2.64 per
evaluation against Tsit5's 0.55 and Bosh3's 0.84. It is the stabilized explicit idea of the
Runge–Kutta–Chebyshev and ROCK methods (Verwer, Hundsdorfer & Sommeijer; Abdulle) at one fixed
stage count, as an ordinary Butcher tableau, so that diffrax runs it like any FSAL method (dense
output, the saved inputs from its stages, the PI step controller).

How the coefficients were found (reproducible with ``docs/stabilized_rk3_design.py``):

1. The stability polynomial ``R(z) = 1 + z + z²/2 + z³/6 + γ₄z⁴ + γ₅z⁵ + γ₆z⁶`` with the longest
   interval ``[−β, 0]`` on which ``|R| ≤ 1 − 0.05 min(1, |z|/2)`` (a little damping, so that
   eigenvalues near the real axis stay stable): for each ``β`` a linear program in ``γ``,
   bisection on ``β``: ``β = 15.853``.
2. A lower-triangular tableau with those ``bᵀAᵏc``, the four third-order conditions, every internal
   stage polynomial bounded by 1 on the interval, ``0 ≤ c ≤ 1``, small fourth-order error terms and
   small coefficients, by least squares; then Newton on the order and stability conditions alone.
   All weights and coefficients came out positive.
3. The embedded second-order estimate (``b_error``, using the FSAL stage): ``Σd = dᵀc = 0``,
   ``dᵀAc = −1/48`` (Bosh3's scale), and the smallest ``max |E(z)/z|`` on the interval (a linear
   program).

Measured (paper ``003_…``'s closed loops, rtol as the scenarios set it, PI step control, pinned, one
process each; ``docs/architecture.md``): Sim. 1 over its 4 s period 9,230 Tsit5 steps, 19.4 s →
3,136 steps, 6.6 s; Sim. 2 52,383 steps, 19.3 s → 24,664 steps, 9.3 s; the scenarios' checks equal
to 7 or more digits. Where accuracy, not a damped mode, sets the steps, Tsit5 (order 5) remains the
better choice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import diffrax
import numpy as np

# the interval of absolute stability on the negative real axis, [−STABILITY_INTERVAL, 0]
STABILITY_INTERVAL = 15.85

_A_LOWER = (
    (0.11840373438871453,),
    (0.12789075961143362, 0.10604814375076219),
    (0.12471747713255806, 0.13135774231334862, 0.11576502358897879),
    (0.09862308256475742, 0.15514209638748097, 0.1935502820013603, 0.21157449501417983),
    (0.02260258170106057, 0.07074769767962918, 0.12884965037061785, 0.20496845596984767, 0.36046729391354265),
    (0.0669809513496726, 0.12450467123884573, 0.14093132476618933, 0.13472535201560207, 0.13596709786245684,
     0.3968906027672335),
)
_B_ERROR = (-0.01760319281450312, -0.006204802576310123, 0.017335152236677233, -0.05365262596185202,
            0.15424786027512558, -0.04294288253355646, -0.051179508625581085)

_TABLEAU = diffrax.ButcherTableau(
    a_lower=tuple(np.array(row) for row in _A_LOWER),
    b_sol=np.array(_A_LOWER[-1] + (0.0,)),  # first same as last: the last stage is f at the new state
    b_error=np.array(_B_ERROR),
    c=np.array([float(np.sum(row)) for row in _A_LOWER]),
)


class StabilizedRK3(diffrax.AbstractERK):
    """Third-order explicit Runge–Kutta with the stability interval ``[−15.85, 0]`` (6 evaluations a step).

    For closed loops and soft chains whose steps an explicit solver's stability holds far below the
    steps accuracy asks for, because of fast damped modes (real eigenvalues); see the module
    docstring for the method and its measurements. Embedded second-order error estimate, first
    same as last (the saved inputs of :func:`kane_jax.simulate` come from its stages), third-order
    Hermite dense output. By name: ``simulate(…, solver="stabilized_rk3")``.

    Arguments: none.
    """

    tableau: ClassVar[diffrax.ButcherTableau] = _TABLEAU
    interpolation_cls: ClassVar[Callable[..., diffrax.ThirdOrderHermitePolynomialInterpolation]] = \
        diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

    def order(self, terms) -> int:
        del terms
        return 3
