"""Independent reference implementations (for validation and the scaling scenario, not for speed)."""

from . import euler_lagrange as euler_lagrange
