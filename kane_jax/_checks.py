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


def on_host(x: Any) -> bool:
    """True for an array whose values NumPy can work on with the same result as an eager JAX
    operation: a NumPy array, or a concrete, strongly typed, uncommitted JAX array (not a tracer).

    Eager JAX operations compile a small program per operation, shape and dtype in every new
    process (20–40 ms each on the 2-core machine; ``jnp.asarray`` of a NumPy array too), and a
    chain's construction ran about a hundred of them; NumPy's result goes back by ``jax.device_put``,
    which compiles nothing (``docs/architecture.md``, *Set-up compiles no eager programs*).
    """
    if isinstance(x, np.ndarray):
        return True
    return isinstance(x, jax.Array) and is_concrete(x) and not x.weak_type and not x.committed


def pose_parts(pose: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Rotation block and translation of a 4×4 pose, sliced on the host when :func:`on_host`."""
    if on_host(pose):
        a = np.asarray(pose)
        return jax.device_put(a[:3, :3]), jax.device_put(a[:3, 3])
    return pose[:3, :3], pose[:3, 3]


def _host_input(x: Any) -> bool:
    """Lists, tuples and NumPy arrays of concrete numbers: ``jnp.asarray`` makes them strongly typed
    arrays, as ``jax.device_put`` of their NumPy array does without a program. (Python scalars stay on
    JAX's path: ``jnp.asarray`` makes them weakly typed, which NumPy cannot.)"""
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fiub"
    return isinstance(x, (list, tuple)) and not any(isinstance(v, jax.Array) for v in jax.tree.leaves(x))


def _host_float_array(x: Any) -> jax.Array:
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":  # complex, strings, objects: JAX's path and its messages
        return jnp.asarray(x)
    if a.dtype.kind != "f":  # as as_float_array's astype(result_type(float)) on JAX's path
        a = a.astype(np.float64)
    return jax.device_put(a)


def as_float_array(x: Any, name: str, shape: tuple[int, ...] | None = None) -> jax.Array:
    """Convert ``x`` to a floating JAX array and check its shape."""
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"`{name}` must be an array of numbers, got {type(x).__name__}.")
    try:
        arr = _host_float_array(x) if _host_input(x) else jnp.asarray(x)
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
    if on_host(arr):  # the same operations as jnp.linalg.norm: sqrt of the sum of squares
        a = np.asarray(arr)
        return jax.device_put(a / np.sqrt(np.sum(a * a)))
    return arr / jnp.linalg.norm(arr)


def rigid_transform(x: Any, name: str, *, atol: float = 1e-6) -> jax.Array:
    """Check that ``x`` is a 4×4 rigid transform (orthonormal rotation, det +1, last row 0 0 0 1)."""
    if x is None:
        return jax.device_put(np.eye(4))  # as jnp.eye(4) (float64, or float32 without x64), no program
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


def flag(x: Any, name: str) -> bool:
    """A Python or NumPy bool (a switch of the program's structure, never traced)."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a bool, got {type(x).__name__} {x!r}.")
    return bool(x)


def matrix_or_zeros(x: Any, name: str, n: int) -> jax.Array:
    """An ``(n, n)`` symmetric positive semi-definite matrix from None (zeros), a scalar (times the
    identity), a length-``n`` diagonal or an ``n × n`` matrix (stiffness and damping of joints and bodies).

    Raises:
        ValueError: another shape, or a matrix that is not symmetric positive semi-definite.
    """
    if x is None:
        return jax.device_put(np.zeros((n, n)))  # as jnp.zeros((n, n)), without a program
    arr = as_float_array(x, name)
    host = on_host(arr)
    if arr.ndim == 0:
        eye = np.eye(n, dtype=arr.dtype)
        arr = jax.device_put(np.asarray(arr) * eye) if host else arr * jnp.asarray(eye)
    elif arr.shape == (n,):
        arr = jax.device_put(np.diag(np.asarray(arr))) if host else jnp.diag(arr)
    if arr.shape != (n, n):
        raise ValueError(f"`{name}` must be a scalar, shape ({n},) or shape ({n}, {n}), got shape {arr.shape}.")
    symmetric_psd(arr, name, definite=False)
    return arr
