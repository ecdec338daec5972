"""The independent Euler–Lagrange reference used by the tests (DESIGN §5).

It lives in the package (:mod:`kane_jax.reference.euler_lagrange`, also timed by scenario
``003-sim3``); it shares nothing with the recursion except the geometry and constitutive laws.
"""

from kane_jax.reference.euler_lagrange import (  # noqa: F401
    dissipative_force,
    inverse_dynamics,
    kinetic_energy,
    mass_matrix,
    potential_energy,
)
