"""The one place that averages an acquisition over models (hyperparameter samples).

Snoek, Larochelle & Adams, *Practical Bayesian Optimization of Machine Learning Algorithms*
(NeurIPS 2012), integrate the acquisition over the posterior of the GP hyperparameters,
``â(x) = (1/M) Σ_m a(x; θ_m)``; a MAP fit is the list of one model. Acquisitions given in log
space are averaged as ``log((1/M) Σ_m exp(a_m))``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from scipy.special import logsumexp

__all__ = ["average_over_models", "log_mean_exp"]

ModelT = TypeVar("ModelT")


def log_mean_exp(log_values: Sequence[np.ndarray]) -> np.ndarray:
    """``log((1/M) Σ_m exp(a_m))``: averages acquisitions given in log space over models."""
    if len(log_values) == 1:
        return np.asarray(log_values[0])
    return logsumexp(np.stack(log_values), axis=0) - math.log(len(log_values))


def average_over_models(
    acquisition_for_model: Callable[[ModelT], Callable[[np.ndarray], np.ndarray]],
    models: Sequence[ModelT],
    *,
    log_scale: bool = False,
) -> Callable[[np.ndarray], np.ndarray]:
    """Integrated acquisition: the mean over ``models`` of the acquisition built on each.

    ``a_hat(x) = (1 / M) sum_m a(x; theta_m)`` (Snoek et al. 2012, eq. for the integrated
    acquisition), the Monte Carlo estimate of the acquisition integrated over the
    hyperparameter posterior when ``models`` come from
    :func:`~bore_samplers.models.hyperparameter_sampling.sample_hyperparameter_models`.

    Parameters
    ----------
    acquisition_for_model
        Builds the acquisition of one model, a function of points ``(n, d) -> (n,)``. Called
        once per model here, so per-model set-up (e.g. cMES's samples of the minimum, which
        depend on the hyperparameters) is done once, not at every evaluation. With plain EI:
        ``lambda m: lambda X: expected_improvement(*m.predict(X), best)``.
    models
        The models, e.g. hyperparameter samples.
    log_scale
        The acquisitions return ``log a`` (log EI, log PI, ...): the result is then
        ``log mean exp`` of them, the log of the integrated acquisition. (Averaging the logs
        themselves would integrate a different, geometric-mean acquisition.)

    Returns
    -------
    Callable
        The integrated acquisition, ``(n, d) -> (n,)``.
    """
    if len(models) == 0:
        raise ValueError("average_over_models needs at least one model.")
    acquisitions = [acquisition_for_model(model) for model in models]
    log_n_models = math.log(len(acquisitions))

    def integrated_acquisition(X: np.ndarray) -> np.ndarray:
        values = np.stack(
            [np.asarray(acquisition(X), dtype=float) for acquisition in acquisitions]
        )
        if not log_scale:
            return np.mean(values, axis=0)
        return logsumexp(values, axis=0) - log_n_models

    return integrated_acquisition
