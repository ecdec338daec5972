"""Shape-annotated array aliases used across kane_jax (jaxtyping)."""

from jaxtyping import Array, ArrayLike, Float, Int

Scalar = Float[Array, ""]
Vec3 = Float[Array, "3"]
Vec6 = Float[Array, "6"]
Mat3 = Float[Array, "3 3"]
Pose = Float[Array, "4 4"]
Config = Float[Array, " nq"]
Points = Float[Array, "K d"]
Weights = Float[Array, " K"]

__all__ = ["Array", "ArrayLike", "Float", "Int", "Scalar", "Vec3", "Vec6", "Mat3", "Pose", "Config", "Points",
           "Weights"]
