"""Input validation shared by joints, bodies and algorithms.

Every check raises ``ValueError``/``TypeError`` with a sentence naming the argument, what was
expected and what came. Value checks (positivity, orthogonality) run only on concrete arrays, so
models can still be built from traced parameters inside ``jax.grad``/``jax.jit``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def is_concrete(x: Any) -> bool:
    """True when ``x`` holds values (not a tracer), so value checks can run."""
    return not isinstance(x, jax.core.Tracer)


def as_float_array(x: Any, name: str, shape: tuple[int, ...] | None = None) -> jax.Array:
    """Convert ``x`` to a floating JAX array and check its shape."""
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"`{name}` must be an array of numbers, got {type(x).__name__}.")
    try:
        arr = jnp.asarray(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be an array of numbers, got {type(x).__name__}: {err}") from None
    if not (jnp.issubdtype(arr.dtype, jnp.floating) or jnp.issubdtype(arr.dtype, jnp.integer)
            or arr.dtype == jnp.bool_):
        raise TypeError(f"`{name}` must be real-valued, got dtype {arr.dtype}.")
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        arr = arr.astype(jnp.result_type(float))
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"`{name}` must have shape {tuple(shape)}, got shape {arr.shape}.")
    return arr


def check_finite(x: jax.Array, name: str) -> None:
    """Raise if a concrete array contains NaN or inf."""
    if is_concrete(x) and not bool(np.all(np.isfinite(np.asarray(x)))):
        raise ValueError(f"`{name}` must be finite, got {np.asarray(x)}.")


def unit_axis(axis: Any, name: str = "axis") -> jax.Array:
    """Normalize a nonzero 3-vector."""
    arr = as_float_array(axis, name, (3,))
    if is_concrete(arr):
        norm = float(np.linalg.norm(np.asarray(arr)))
        if not np.isfinite(norm) or norm < 1e-12:
            raise ValueError(f"`{name}` must be a nonzero finite 3-vector, got {np.asarray(arr)}.")
    return arr / jnp.linalg.norm(arr)


def rigid_transform(x: Any, name: str, *, atol: float = 1e-6) -> jax.Array:
    """Check that ``x`` is a 4×4 rigid transform (orthonormal rotation, det +1, last row 0 0 0 1)."""
    if x is None:
        return jnp.eye(4)
    arr = as_float_array(x, name, (4, 4))
    if is_concrete(arr):
        a = np.asarray(arr, dtype=float)
        rot = a[:3, :3]
        if not np.all(np.isfinite(a)):
            raise ValueError(f"`{name}` must be finite, got {a}.")
        if not np.allclose(a[3], [0, 0, 0, 1], atol=atol):
            raise ValueError(f"`{name}` must be a rigid transform with last row [0, 0, 0, 1], got {a[3]}.")
        if not np.allclose(rot.T @ rot, np.eye(3), atol=atol) or np.linalg.det(rot) < 0:
            raise ValueError(
                f"`{name}` must be a rigid transform (rotation block orthonormal with det +1), "
                f"got rotation block {rot.tolist()} with det {np.linalg.det(rot):.6g}."
            )
    return arr


def positive(x: jax.Array, name: str) -> None:
    """Raise if a concrete array has non-positive entries."""
    if is_concrete(x):
        a = np.asarray(x)
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(f"`{name}` must be positive and finite, got {a}.")


def nonnegative(x: jax.Array, name: str) -> None:
    """Raise if a concrete array has negative entries."""
    if is_concrete(x):
        a = np.asarray(x)
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError(f"`{name}` must be non-negative and finite, got {a}.")


def symmetric_psd(x: jax.Array, name: str, *, definite: bool, rtol: float = 1e-8) -> None:
    """Raise if a concrete square matrix is not symmetric positive (semi)definite."""
    if not is_concrete(x):
        return
    a = np.asarray(x, dtype=float)
    scale = max(1.0, float(np.max(np.abs(a)))) if a.size else 1.0
    if not np.allclose(a, a.T, atol=rtol * scale):
        raise ValueError(f"`{name}` must be symmetric, got {a.tolist()}.")
    eig = np.linalg.eigvalsh(0.5 * (a + a.T)) if a.size else np.zeros(0)
    if definite and np.any(eig <= 0):
        raise ValueError(f"`{name}` must be positive definite, got eigenvalues {eig.tolist()}.")
    if not definite and np.any(eig < -rtol * scale):
        raise ValueError(f"`{name}` must be positive semidefinite, got eigenvalues {eig.tolist()}.")


def vector(x: Any, name: str, n: int) -> jax.Array:
    """A 1-D float array of length ``n``."""
    arr = as_float_array(x, name)
    if arr.shape != (n,):
        raise ValueError(f"`{name}` must have shape ({n},), got shape {arr.shape}.")
    return arr


def count(x: Any, name: str, *, minimum: int = 1) -> int:
    """A Python int ``>= minimum`` (quadrature orders, sample counts); bools are refused."""
    if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or x < minimum:
        kind = {0: "a non-negative int", 1: "a positive int"}.get(minimum, f"an int >= {minimum}")
        raise ValueError(f"`{name}` must be {kind}, got {x!r}.")
    return int(x)


def matrix_or_zeros(x: Any, name: str, n: int) -> jax.Array:
    """An ``(n, n)`` symmetric positive semi-definite matrix from None (zeros), a scalar (times the
    identity), a length-``n`` diagonal or an ``n × n`` matrix (stiffness and damping of joints and bodies).

    Raises:
        ValueError: another shape, or a matrix that is not symmetric positive semi-definite.
    """
    if x is None:
        return jnp.zeros((n, n))
    arr = as_float_array(x, name)
    if arr.ndim == 0:
        arr = arr * jnp.eye(n, dtype=arr.dtype)
    elif arr.shape == (n,):
        arr = jnp.diag(arr)
    if arr.shape != (n, n):
        raise ValueError(f"`{name}` must be a scalar, shape ({n},) or shape ({n}, {n}), got shape {arr.shape}.")
    symmetric_psd(arr, name, definite=False)
    return arr
