"""The probability of feasibility, from constraint GPs and a crash classifier.

Constraints ``c_k(x) <= 0`` observed as real values are modelled by GP regressors; crashes
(binary feedback) by a GP classifier whose latent ``c`` gives ``P(crash | x) = sigma(c)``
(Perrone et al., *Constrained Bayesian Optimization with Max-Value Entropy Search*, section 2).
A point counts as feasible for the latent when ``c <= delta`` with ``delta = logit(p)`` for a
confidence ``p`` (:func:`binary_feasibility_threshold`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.special import log_ndtr, logit, ndtri

from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor

__all__ = [
    "VARIANCE_FLOOR",
    "LatentModel",
    "binary_feasibility_threshold",
    "latent_mean_var",
    "log_probability_of_feasibility",
]

#: A constraint model: a GP regressor (real-valued feedback) or classifier (binary feedback).
LatentModel = GaussianProcessRegressor | GaussianProcessClassifier

# Floor of posterior variances, so that zero variance (e.g. at noise-free training inputs) turns
# into a large but finite z-score instead of 0 / 0.
VARIANCE_FLOOR = 1e-300


def binary_feasibility_threshold(
    confidence: float = 0.5, likelihood: Literal["logistic", "probit"] = "logistic"
) -> float:
    """Latent threshold ``delta`` of binary feedback for a confidence ``p = sigma(delta)``.

    A point counts as feasible for ``y_*`` (eq. 1, section 2) when its latent constraint value
    satisfies ``c <= delta``, i.e. ``P(z_c = +1 | c) <= p``. ``p = 0.5`` gives ``delta = 0``;
    the paper's experiments (Tables 4-6) favour ``p = 0.9`` in the unobserved-objective setting.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}.")
    return float(logit(confidence) if likelihood == "logistic" else ndtri(confidence))


def latent_mean_var(model: LatentModel, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Marginal posterior mean and variance of a constraint model's latent at ``X``."""
    if isinstance(model, GaussianProcessClassifier):
        return model.predict_latent(X)
    return model.predict(X)


def log_probability_of_feasibility(
    features: np.ndarray,
    constraint_models: Sequence[GaussianProcessRegressor],
    crash_model: GaussianProcessClassifier | None = None,
) -> np.ndarray:
    """``log PF(x)``: constraints and crashes treated as independent.

    ``Σ_k log Φ(-μ_k(x) / σ_k(x))`` over the GPs of the real-valued constraints (``c_k <= 0``
    feasible), plus ``log(1 - P(crash | x))`` of a classifier trained on which trials failed.
    Zeros without either. The weight that constrained EI (Gardner et al., 2014) and the
    portfolio's GP members put on a candidate.
    """
    log_pf = np.zeros(len(features))
    for gp in constraint_models:
        mean, var = gp.predict(features)
        log_pf += log_ndtr(-mean / np.sqrt(np.maximum(var, VARIANCE_FLOOR)))
    if crash_model is not None:
        log_pf += np.log(np.clip(1.0 - crash_model.predict_proba(features), VARIANCE_FLOOR, 1.0))
    return log_pf
