"""Improvement-based acquisitions and confidence bounds for minimisation: PI, EI, GP-LCB.

The closed forms follow section II-C of Vasconcelos et al., *No-PASt-BO: Normalized Portfolio
Allocation Strategy for Bayesian Optimization* (ICTAI 2019): probability of improvement
(Kushner, 1964), expected improvement (Močkus et al., 1978) and the lower confidence bound
GP-LCB (Srinivas et al., 2010). EI and PI are also given in log space (log-EI of Ament et al.,
*Unexpected Improvements to Expected Improvement for Bayesian Optimization*, NeurIPS 2023), so
that they stay finite and informative far from the incumbent. Lower objective values are
better; higher acquisition values are better.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr

from bore_samplers.acquisitions.base import Acquisition, ModelAverage, Sum
from bore_samplers.acquisitions.feasibility import VARIANCE_FLOOR, feasibility_of
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.model_set import ModelSet

__all__ = [
    "LogExpectedImprovement",
    "constrained_lcb",
    "constrained_log_ei",
    "constrained_log_pi",
    "LogProbabilityOfImprovement",
    "LowerConfidenceBound",
    "expected_improvement",
    "lcb_beta",
    "log_expected_improvement",
    "log_probability_of_improvement",
    "lower_confidence_bound",
    "probability_of_improvement",
]

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Below this z-score, 1 + z * Φ(z)/φ(z) cancels catastrophically; its asymptotic series
# 1/z² - 3/z⁴ + 15/z⁶ is accurate to ~1e-13 relative there.
_LOG_H_ASYMPTOTIC = -40.0


# ----------------------------------------------------------------------------- closed forms
def _z_score(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float
) -> tuple[np.ndarray, np.ndarray]:
    std = np.sqrt(np.maximum(np.asarray(var, dtype=float), VARIANCE_FLOOR))
    return (incumbent - xi - np.asarray(mean, dtype=float)) / std, std


def probability_of_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """PI of minimisation, ``Φ((μ⁻ - ξ - μ(x)) / σ(x))`` (the paper, eq. 5; Kushner, 1964).

    Parameters
    ----------
    mean, var
        Posterior mean and variance of the latent objective, shape ``(n,)``.
    incumbent
        ``μ⁻``, the smallest posterior mean over the observed points (the paper's choice; the
        best observed value is the other common one).
    xi
        Trade-off ``ξ >= 0``, in the units of the objective: larger values explore more.
    """
    z, _ = _z_score(mean, var, incumbent, xi)
    return ndtr(z)


def log_probability_of_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """``log PI``, finite for every finite input (see :func:`probability_of_improvement`)."""
    z, _ = _z_score(mean, var, incumbent, xi)
    return log_ndtr(z)


def expected_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """EI of minimisation, ``τ Φ(τ/σ) + σ φ(τ/σ)`` with ``τ = μ⁻ - ξ - μ(x)`` (eq. 6).

    Parameters are those of :func:`probability_of_improvement` (Močkus et al., 1978).
    """
    z, std = _z_score(mean, var, incumbent, xi)
    return std * (z * ndtr(z) + np.exp(-0.5 * z**2 - LOG_SQRT_2PI))


def _log_h(z: np.ndarray) -> np.ndarray:
    """``log(z Φ(z) + φ(z))``, accurate for every finite ``z`` (log-EI of Ament et al., 2023).

    For ``z < -1`` it is ``log φ(z) + log(1 + z Φ(z)/φ(z))`` with
    ``Φ(z)/φ(z) = sqrt(π/2) erfcx(-z/√2)``, and the asymptotic series far in the tail.
    """
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    upper = z > -1.0
    zu = z[upper]
    out[upper] = np.log(zu * ndtr(zu) + np.exp(-0.5 * zu**2 - LOG_SQRT_2PI))
    middle = ~upper & (z >= _LOG_H_ASYMPTOTIC)
    zm = z[middle]
    ratio = math.sqrt(math.pi / 2.0) * erfcx(-zm / math.sqrt(2.0))
    out[middle] = -0.5 * zm**2 - LOG_SQRT_2PI + np.log1p(zm * ratio)
    tail = ~upper & ~middle
    zt = z[tail]
    inv2 = 1.0 / zt**2
    out[tail] = -0.5 * zt**2 - LOG_SQRT_2PI + np.log(inv2 * (1.0 - 3.0 * inv2 + 15.0 * inv2**2))
    return out


def log_expected_improvement(
    mean: np.ndarray, var: np.ndarray, incumbent: float, xi: float = 0.0
) -> np.ndarray:
    """``log EI``, finite (and accurate) even where EI underflows to 0 in float64."""
    z, std = _z_score(mean, var, incumbent, xi)
    return np.log(std) + _log_h(z)


def lcb_beta(t: int, n_dims: int, delta: float = 0.1) -> float:
    """``β_t = 2 log(t^(D/2 + 2) π² / (3δ))`` of GP-LCB (the paper, eq. 7; Brochu et al., 2010).

    Parameters
    ----------
    t
        Iteration: the number of observations the GP is conditioned on (at least 1), as in the
        paper's reference implementation.
    n_dims
        Dimension ``D`` of the search space.
    delta
        ``δ ∈ (0, 1)``; smaller values explore more.
    """
    t = max(int(t), 1)
    return 2.0 * ((n_dims / 2.0 + 2.0) * math.log(t) + math.log(math.pi**2 / (3.0 * delta)))


def lower_confidence_bound(mean: np.ndarray, var: np.ndarray, kappa: float) -> np.ndarray:
    """``μ(x) - κ σ(x)`` (the paper, eq. 7, with ``κ = sqrt(ν β_t)``); *lower* is better."""
    std = np.sqrt(np.maximum(np.asarray(var, dtype=float), 0.0))
    return np.asarray(mean, dtype=float) - kappa * std


# ----------------------------------------------------------------------------- with gradients
#: Floor of the predictive variance in the scoring members, on the standardised scale of the
#: targets: keeps z-scores and their derivatives finite at noise-free training points.
SCORING_VARIANCE_FLOOR = 1e-12


def _predict(
    model: GaussianProcessRegressor, X: np.ndarray, with_grad: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Mean and standard deviation at ``X`` and, with ``with_grad``, their gradients."""
    if with_grad:
        mean, var, mean_grad, var_grad = model.predict_with_grad(X)
    else:
        (mean, var), mean_grad, var_grad = model.predict(X), None, None
    clipped = var <= SCORING_VARIANCE_FLOOR
    std = np.sqrt(np.maximum(var, SCORING_VARIANCE_FLOOR))
    std_grad = None
    if var_grad is not None:
        std_grad = np.where(clipped[:, None], 0.0, var_grad / (2.0 * std[:, None]))
    return mean, std, mean_grad, std_grad


def _d_log_h(z: np.ndarray) -> np.ndarray:
    """``d/dz log h(z) = Φ(z) / h(z)``, evaluated in log space (``≈ -z`` far in the tail)."""
    return np.exp(log_ndtr(z) - _log_h(z))


class LogExpectedImprovement(Acquisition):
    """``log EI`` of minimisation over a GP (Ament et al., NeurIPS 2023), with its gradient.

    ``EI = σ h(z)``, ``z = (μ⁻ - ξ - μ(x)) / σ(x)``, ``h(z) = z Φ(z) + φ(z)``; the derivative
    of ``log h`` is ``Φ(z) / h(z)``.

    Parameters
    ----------
    model
        The objective GP (standardised targets).
    incumbent
        ``μ⁻``, the value to improve on, in the model's units.
    xi
        Trade-off ``ξ >= 0`` in the model's units; larger values explore more.
    """

    log_scale = True

    def __init__(self, model: GaussianProcessRegressor, incumbent: float, xi: float = 0.0) -> None:
        self.model = model
        self.incumbent = incumbent
        self.xi = xi

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        mean, std, mean_grad, std_grad = _predict(self.model, X, with_grad)
        z = (self.incumbent - self.xi - mean) / std
        values = np.log(std) + _log_h(z)
        if mean_grad is None or std_grad is None:
            return values, None
        ratio = _d_log_h(z)
        d_mean = -ratio / std
        d_std = (1.0 - ratio * z) / std
        return values, d_mean[:, None] * mean_grad + d_std[:, None] * std_grad


class LogProbabilityOfImprovement(Acquisition):
    """``log PI = log Φ(z)`` of minimisation over a GP, ``z`` as for
    :class:`LogExpectedImprovement`, with its gradient (``d log Φ / dz = φ(z) / Φ(z)``)."""

    log_scale = True

    def __init__(self, model: GaussianProcessRegressor, incumbent: float, xi: float = 0.0) -> None:
        self.model = model
        self.incumbent = incumbent
        self.xi = xi

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        mean, std, mean_grad, std_grad = _predict(self.model, X, with_grad)
        z = (self.incumbent - self.xi - mean) / std
        values = log_ndtr(z)
        if mean_grad is None or std_grad is None:
            return values, None
        hazard = np.exp(-0.5 * z**2 - LOG_SQRT_2PI - values)  # φ(z) / Φ(z)
        d_mean = -hazard / std
        d_std = -hazard * z / std
        return values, d_mean[:, None] * mean_grad + d_std[:, None] * std_grad


class LowerConfidenceBound(Acquisition):
    """The score ``-(μ(x) - κ σ(x)) / scale`` of GP-LCB (higher is better), with its gradient.

    Parameters
    ----------
    model
        The objective GP.
    kappa
        ``κ = sqrt(ν β_t)`` (:func:`lcb_beta`).
    scale
        Unit of the score (the standard deviation of the observed values; 1 for standardised
        targets), so that it is comparable across problems.
    """

    def __init__(self, model: GaussianProcessRegressor, kappa: float, scale: float = 1.0) -> None:
        self.model = model
        self.kappa = kappa
        self.scale = scale

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        mean, std, mean_grad, std_grad = _predict(self.model, X, with_grad)
        values = -(mean - self.kappa * std) / self.scale
        if mean_grad is None or std_grad is None:
            return values, None
        return values, (self.kappa * std_grad - mean_grad) / self.scale


class NegativeMean(Acquisition):
    """``-μ(x)`` of a GP, e.g. minus the predicted log duration of EI per second (Snoek et al.,
    NeurIPS 2012: ``log EI - E[log cost]``), with its gradient."""

    def __init__(self, model: GaussianProcessRegressor) -> None:
        self.model = model

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        mean, _, mean_grad, _ = _predict(self.model, X, with_grad)
        return -mean, None if mean_grad is None else -mean_grad


# ----------------------------------------------------------------------------- on a model set
def _constrained(
    models: ModelSet, member: type[LogExpectedImprovement | LogProbabilityOfImprovement], xi: float
) -> Acquisition:
    feasibility = feasibility_of(models)
    if not models.incumbents:  # no feasible point yet: find one
        assert feasibility is not None
        return feasibility
    averaged = ModelAverage(
        [
            member(model, incumbent, xi)
            for model, incumbent in zip(models.objective, models.incumbents, strict=True)
        ]
    )
    return averaged if feasibility is None else Sum([averaged, feasibility])


def constrained_log_ei(models: ModelSet, xi: float = 0.0) -> Acquisition:
    """``log EI + log PF`` over a model set: constrained EI (Gardner et al., ICML 2014).

    EI is averaged over the objective models (hyperparameter samples) in log space; ``log PF``
    of the constraint GPs and the crash classifier is added when there are any, and alone is
    the acquisition until a feasible point exists. ``xi`` is in standardised units.
    """
    return _constrained(models, LogExpectedImprovement, xi)


def constrained_log_pi(models: ModelSet, xi: float = 0.0) -> Acquisition:
    """``log PI + log PF`` over a model set, as :func:`constrained_log_ei`."""
    return _constrained(models, LogProbabilityOfImprovement, xi)


def constrained_lcb(models: ModelSet, kappa: float) -> Acquisition:
    """The GP-LCB score averaged over the objective models, plus ``log PF`` when there are
    feasibility models: the log of ``exp(-LCB) · PF`` in standardised units."""
    averaged = ModelAverage([LowerConfidenceBound(model, kappa) for model in models.objective])
    feasibility = feasibility_of(models)
    return averaged if feasibility is None else Sum([averaged, feasibility])
