"""Parameter identification: linear least squares on the ID regressor, and optax on ID/simulation losses."""

from .gradient import FitResult as FitResult
from .gradient import fit as fit
from .gradient import id_residual_loss as id_residual_loss
from .gradient import simulation_loss as simulation_loss
from .linear import LinearFit as LinearFit
from .linear import Samples as Samples
from .linear import id_residual as id_residual
from .linear import linear_least_squares as linear_least_squares
from .linear import regressor as regressor

__all__ = ["FitResult", "LinearFit", "Samples", "fit", "id_residual", "id_residual_loss", "linear_least_squares",
           "regressor", "simulation_loss"]
