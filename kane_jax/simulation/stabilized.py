"""Explicit Runge–Kutta methods with long stability intervals on the negative real axis.

Soft robots under feedback often have fast *damped* modes: an unactuated Kelvin–Voigt mode of a
soft body (paper ``003_…`` Sim. 1: ``λ ≈ −7.5e3`` 1/s) or the damping that a tendon PD puts on a
light, stiff coordinate (Sim. 2: ``λ ≈ −4.9e4`` 1/s in the closed loop). They decay and need no
resolution, but an explicit solver must keep ``h |λ|`` inside its stability interval: Tsit5's is
``[−3.3, 0]`` for 6 evaluations a step, Bosh3's ``[−2.5, 0]`` for 3. Implicit and Rosenbrock
methods remove the limit but need the closed loop's Jacobian, whose law (a feedback-linearizing
law, a QP allocation) is costly to differentiate, and their unfiltered embedded error estimates
took more steps than Tsit5 there (``docs/architecture.md``).

These methods spend their stages on stability instead (first same as last, so ``s`` evaluations a
step for ``s`` stages):

- :class:`StabilizedRK3`: order 3, 6 stages, ``|R(z)| ≤ 1`` on ``[−15.85, 0]`` (2.64 per evaluation
  against Tsit5's 0.55 and Bosh3's 0.84);
- :class:`StabilizedRK4`: order 4, 8 stages, ``[−19.74, 0]`` (2.47 per evaluation), for tighter
  tolerances, where the third-order method's steps are set by accuracy.

It is the stabilized explicit idea of the Runge–Kutta–Chebyshev and ROCK methods (Verwer,
Hundsdorfer & Sommeijer; Abdulle) at one fixed stage count, as an ordinary Butcher tableau, so that
diffrax runs it like any FSAL method (dense output, the saved inputs from its stages, the PI step
controller). How the coefficients were found (reproducible, bit for bit, with
``docs/stabilized_rk_design.py``):

1. The stability polynomial ``R(z) = Σ_{k≤p} z^k/k! + Σ_{k>p} γ_k z^k`` with the longest interval
   ``[−β, 0]`` on which ``|R| ≤ 1 − 0.05 min(1, |z|/2)`` (a little damping, so that eigenvalues near
   the real axis stay stable): for each ``β`` a linear program in ``γ``, bisection on ``β``.
2. A lower-triangular tableau with those ``bᵀAᵏc``, Butcher's conditions up to order ``p``, every
   internal stage polynomial bounded by 1 on the interval, ``0 ≤ c ≤ 1``, small fourth-order error
   terms and small coefficients, by least squares; then Newton on the equalities alone. All weights
   and coefficients came out positive.
3. The embedded estimate of order ``p − 1`` (``b_error``, using the FSAL stage) with the smallest
   ``max |E(z)/z|`` on the interval (a linear program).

Measured (paper ``003_…``'s closed loops through ``kane-jax run``, PI step control, pinned; the
numbers in ``docs/architecture.md``, *A stabilized explicit solver*): Sim. 1 over its 4 s period
Tsit5 9,230 steps and 19.4–19.9 s of run → ``StabilizedRK3`` 3,140 steps, 6.6–6.7 s; Sim. 2 (rtol
1e-7) 52,383 steps, 19.2–19.7 s → ``StabilizedRK4`` 15,029 steps, 7.2–7.6 s; the scenarios' checks equal
to 4 or more digits. Since stop 88 Sim. 2's phase after T₁ caps the steps just below the limit
(``simulate(max_step=…)``, :mod:`~kane_jax.simulation.spectral`): its error control cycled across it,
a quarter of the steps rejected. Where accuracy, not a damped mode, sets the steps, Tsit5 (order 5)
remains the better choice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import diffrax
import numpy as np

_A_LOWER_3 = (
    (0.11840373438871453,),
    (0.12789075961143362, 0.10604814375076219),
    (0.12471747713255806, 0.13135774231334862, 0.11576502358897879),
    (0.09862308256475742, 0.15514209638748097, 0.1935502820013603, 0.21157449501417983),
    (0.02260258170106057, 0.07074769767962918, 0.12884965037061785, 0.20496845596984767, 0.36046729391354265),
    (0.0669809513496726, 0.12450467123884573, 0.14093132476618933, 0.13472535201560207, 0.13596709786245684,
     0.3968906027672335),
)
_B_ERROR_3 = (-0.01760319281450312, -0.006204802576310123, 0.017335152236677233, -0.05365262596185202,
            0.15424786027512558, -0.04294288253355646, -0.051179508625581085)

_A_LOWER_4 = (
    (0.09940441941374538,),
    (0.11945487248710396, 0.08831421868860206),
    (0.09720666236503957, 0.10321001386303591, 0.09077126903431361),
    (0.09083249306198163, 0.14237982410029706, 0.15340066931482638, 0.1637795064054317),
    (0.036549259651712254, 0.021088971841225122, 0.07756517809840682, 0.10300681762722573, 0.1339515768717109),
    (0.029741498971494685, 0.0411318430211179, 0.07208956037622688, 0.11626220235190937, 0.23065760634449797,
     0.16915350678681768),
    (0.09743176265618456, 0.0677324419819257, 0.04988420482910498, 0.05556791729247134, 0.11548153718707029,
     0.1618361598686031, 0.30064467767119396),
    (0.02284770157902278, 0.10123989887893746, 0.1356289186122148, 0.12835455322494113, 0.06065117815906119,
     0.11738906925689155, 0.11014344959898179, 0.3237452306899493),
)
_B_ERROR_4 = (0.2988775474943502, -0.21096108401583127, 0.04286573978630003, -0.31518560906867726,
              0.12501427135607054, -0.18268771945586887, 0.4543372767785945, -0.10474560363731499,
              -0.1075148192376229)


def _tableau(a_lower, b_error) -> diffrax.ButcherTableau:
    return diffrax.ButcherTableau(
        a_lower=tuple(np.array(row) for row in a_lower),
        b_sol=np.array(a_lower[-1] + (0.0,)),  # first same as last: the last stage is f at the new state
        b_error=np.array(b_error),
        c=np.array([float(np.sum(row)) for row in a_lower]),
    )


class AbstractStabilizedRK(diffrax.AbstractERK):
    """An explicit FSAL Runge–Kutta method whose stages buy a long stability interval (the module docstring).

    Subclasses set ``tableau``, ``stability_interval`` (``|R(z)| ≤ 1`` on ``[−stability_interval, 0]``) and
    ``method_order``. Third-order Hermite dense output from the first and last stages.
    """

    stability_interval: ClassVar[float]
    method_order: ClassVar[int]
    interpolation_cls: ClassVar[Callable[..., diffrax.ThirdOrderHermitePolynomialInterpolation]] = \
        diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

    def order(self, terms) -> int:
        del terms
        return self.method_order


class StabilizedRK3(AbstractStabilizedRK):
    """Third-order explicit Runge–Kutta with the stability interval ``[−15.85, 0]`` (6 evaluations a step).

    For closed loops and soft chains whose steps an explicit solver's stability holds far below the
    steps accuracy asks for, because of fast damped modes (real eigenvalues); see the module
    docstring for the method and its measurements. Embedded second-order error estimate, first
    same as last (the saved inputs of :func:`kane_jax.simulate` come from its stages). By name:
    ``simulate(…, solver="stabilized_rk3")``.

    Arguments: none.
    """

    stability_interval: ClassVar[float] = 15.85
    method_order: ClassVar[int] = 3
    tableau: ClassVar[diffrax.ButcherTableau] = _tableau(_A_LOWER_3, _B_ERROR_3)


class StabilizedRK4(AbstractStabilizedRK):
    """Fourth-order explicit Runge–Kutta with the stability interval ``[−19.74, 0]`` (8 evaluations a step).

    As :class:`StabilizedRK3`, for tighter tolerances (paper ``003_…`` Sim. 2 at rtol 1e-7, where the
    third-order method's steps were set by accuracy: 24,694 steps against this method's 15,029).
    Embedded third-order error estimate, first same as last. By name:
    ``simulate(…, solver="stabilized_rk4")``.

    Arguments: none.
    """

    stability_interval: ClassVar[float] = 19.74
    method_order: ClassVar[int] = 4
    tableau: ClassVar[diffrax.ButcherTableau] = _tableau(_A_LOWER_4, _B_ERROR_4)
