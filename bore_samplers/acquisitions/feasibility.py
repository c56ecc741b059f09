"""The probability of feasibility, from constraint GPs and a crash classifier.

Constraints ``c_k(x) <= 0`` observed as real values are modelled by GP regressors; crashes
(binary feedback) by a GP classifier whose latent ``c`` gives ``P(crash | x) = sigma(c)``
(Perrone et al., *Constrained Bayesian Optimization with Max-Value Entropy Search*, section 2).
A point counts as feasible for the latent when ``c <= delta`` with ``delta = logit(p)`` for a
confidence ``p`` (:func:`binary_feasibility_threshold`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.special import expit, log_expit, log_ndtr, logit, ndtri

from bore_samplers.acquisitions.base import Acquisition
from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.model_set import ModelSet
from bore_samplers.models.priors import NOISE_VARIANCE_BOUNDS
from bore_samplers.observations import History, TrialState

__all__ = [
    "CONFIDENT_FEASIBILITY",
    "FEASIBILITY_MARGIN",
    "INFEASIBLE_STREAK",
    "VARIANCE_FLOOR",
    "LogProbabilityOfFeasibility",
    "LatentModel",
    "binary_feasibility_threshold",
    "feasibility_of",
    "infeasible_streak",
    "needs_confident_feasibility",
    "latent_mean_var",
]

#: A constraint model: a GP regressor (real-valued feedback) or classifier (binary feedback).
LatentModel = GaussianProcessRegressor | GaussianProcessClassifier

# Floor of posterior variances, so that zero variance (e.g. at noise-free training inputs) turns
# into a large but finite z-score instead of 0 / 0.
VARIANCE_FLOOR = 1e-300

#: Margin, in standardised constraint units, that a point's constraint must clear to count as
#: feasible in ``PF``. Where the optimum lies on a boundary, proposals converge onto it and,
#: without a margin, about half of them land a rounding error on the wrong side (c = +1e-6):
#: infeasible trials. The margin is the GP's smallest noise deviation (1e-5), the finest
#: difference its fit resolves. A margin ten times that was paid at every active constraint:
#: with 16 constraints GPSampler, without a margin, ended ahead in every run.
FEASIBILITY_MARGIN = math.sqrt(NOISE_VARIANCE_BOUNDS[0])

#: The probability of feasibility that a proposal must reach once :data:`INFEASIBLE_STREAK`
#: trials in a row have come back infeasible: the probabilistic constraint
#: ``PF(x) >= 1 - delta`` of Gelbart, Snoek and Adams (*Bayesian Optimization with Unknown
#: Constraints*, UAI 2014). Constrained EI weighs a large predicted improvement by PF, and far
#: from the data the constraint GPs revert towards their mean: on thin feasible regions in
#: 10-D (bbob-constrained f8, 0.025 % of the box) every proposal after the first feasible
#: trial went to such a point with PF about 0.2, and none was feasible.
CONFIDENT_FEASIBILITY = 0.5

#: Infeasible trials in a row (after the first feasible one) from which proposals need
#: :data:`CONFIDENT_FEASIBILITY`. Not from the start: refining an optimum on a constraint's
#: boundary takes proposals with PF below one half, and with the floor always on the 3-D
#: constrained kind refined such optima to fewer digits. Streaks of 2, 3 and 5 measured alike.
INFEASIBLE_STREAK = 3

# Slope of the barrier below CONFIDENT_FEASIBILITY, in units of log PF: steep enough that
# the maximiser of EI + log PF stays above the floor wherever some point reaches it, and
# finite so that where none does, log PF's own gradient still leads towards feasibility.
_BARRIER_SLOPE = 2.0


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


class LogProbabilityOfFeasibility(Acquisition):
    """``log PF(x)`` of real-valued constraints and crashes, independent, with its gradient.

    ``Σ_k log Φ((-m - μ_k(x)) / σ_k(x))`` over the GPs of the real-valued constraints
    (``c_k <= 0`` feasible; ``m`` is :data:`FEASIBILITY_MARGIN`), plus
    ``log(1 - P(crash | x))`` of the Laplace GP classifier of failed trials, with MacKay's
    probit approximation ``P(crash) = σ(μ κ)``, ``κ = (1 + π s² / 8)^{-1/2}``
    (Bishop, *Pattern Recognition and Machine Learning*, eq. 4.153). Zero without either:
    the weight that constrained EI (Gardner et al., *Bayesian Optimization with Inequality
    Constraints*, ICML 2014) puts on a candidate.

    Parameters
    ----------
    constraint_models
        One GP per real-valued constraint, fitted on values whose threshold is 0.
    crash_model
        The classifier of crashes (failed trials as the positive class), or ``None``.
    min_probability
        A floor on ``PF``: below it, ``log PF`` falls ``_BARRIER_SLOPE`` times faster, so that
        a sum with log EI prefers any point above the floor (see
        :data:`CONFIDENT_FEASIBILITY`). ``None``: no floor.
    """

    log_scale = True

    def __init__(
        self,
        constraint_models: Sequence[GaussianProcessRegressor],
        crash_model: GaussianProcessClassifier | None = None,
        min_probability: float | None = None,
    ) -> None:
        self.constraint_models = list(constraint_models)
        self.crash_model = crash_model
        self.min_probability = min_probability

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        values, grad = self._log_pf(X, with_grad)
        if self.min_probability is None:
            return values, grad
        shortfall = math.log(self.min_probability) - values
        below = shortfall > 0.0
        values = values - _BARRIER_SLOPE * np.where(below, shortfall, 0.0)
        if grad is not None:
            grad = grad * np.where(below, 1.0 + _BARRIER_SLOPE, 1.0)[:, None]
        return values, grad

    def _log_pf(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        values = np.zeros(len(X))
        grad = np.zeros_like(X) if with_grad else None
        for gp in self.constraint_models:
            if grad is None:
                mean, var = gp.predict(X)
            else:
                mean, var, mean_grad, var_grad = gp.predict_with_grad(X)
            std = np.sqrt(np.maximum(var, VARIANCE_FLOOR))
            z = (-FEASIBILITY_MARGIN - mean) / std
            log_cdf = log_ndtr(z)
            values += log_cdf
            if grad is not None:
                hazard = np.exp(-0.5 * z**2 - 0.5 * math.log(2.0 * math.pi) - log_cdf)
                # dz/dμ = -1/σ, dz/dvar = -z / (2 var) (zero where the variance is clipped)
                d_var = np.where(var > VARIANCE_FLOOR, -z / (2.0 * std**2), 0.0)
                grad += hazard[:, None] * (-mean_grad / std[:, None] + d_var[:, None] * var_grad)
        if self.crash_model is not None:
            if grad is None:
                mean, var = self.crash_model.predict_latent(X)
            else:
                mean, var, mean_grad, var_grad = self.crash_model.predict_latent_with_grad(X)
            spread = 1.0 + math.pi * var / 8.0
            kappa = 1.0 / np.sqrt(spread)
            values += log_expit(-mean * kappa)
            if grad is not None:
                p_crash = expit(mean * kappa)
                d_kappa = -(math.pi / 16.0) * spread ** (-1.5)
                grad -= p_crash[:, None] * (
                    kappa[:, None] * mean_grad + (mean * d_kappa)[:, None] * var_grad
                )
        return values, grad


def infeasible_streak(history: History) -> int:
    """Finished trials in a row, up to the latest, that broke a constraint, counted only once
    some trial was feasible (0 before: then feasibility alone is sought)."""
    feasible = history.feasible[history.mask(TrialState.COMPLETE)]
    if not feasible.any():
        return 0
    return int(np.argmax(feasible[::-1]))


def needs_confident_feasibility(models: ModelSet) -> bool:
    """Whether proposals must reach :data:`CONFIDENT_FEASIBILITY`: the study has real-valued
    constraints and its latest :data:`INFEASIBLE_STREAK` finished trials broke one."""
    return bool(models.constraints) and infeasible_streak(models.history) >= INFEASIBLE_STREAK


def feasibility_of(models: ModelSet, floor: bool = False) -> LogProbabilityOfFeasibility | None:
    """``log PF`` of a model set's constraint GPs and crash classifier; ``None`` without.

    With ``floor``, after :data:`INFEASIBLE_STREAK` infeasible trials in a row ``PF`` gets the
    floor :data:`CONFIDENT_FEASIBILITY` (for sums with an improvement term, which would
    otherwise keep trading feasibility for improvement).
    """
    if not models.has_feasibility_models:
        return None
    confident = floor and needs_confident_feasibility(models)
    return LogProbabilityOfFeasibility(
        models.constraints,
        models.crash,
        min_probability=CONFIDENT_FEASIBILITY if confident else None,
    )
