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

import functools
import math
from typing import Literal

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr, ndtri

from bore_samplers.acquisitions.base import Acquisition, ModelAverage, Sum
from bore_samplers.acquisitions.feasibility import VARIANCE_FLOOR, feasibility_of
from bore_samplers.models.gp_regression import GaussianProcessRegressor, LatentReference
from bore_samplers.models.model_set import ModelSet

__all__ = [
    "LogExpectedImprovement",
    "constrained_lcb",
    "constrained_log_ei",
    "constrained_log_pi",
    "LogProbabilityOfImprovement",
    "LowerConfidenceBound",
    "NoisyLogImprovement",
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


def _floored_std(
    var: np.ndarray, var_grad: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """``sqrt(max(var, SCORING_VARIANCE_FLOOR))`` and its gradient (0 where floored)."""
    clipped = var <= SCORING_VARIANCE_FLOOR
    std = np.sqrt(np.maximum(var, SCORING_VARIANCE_FLOOR))
    std_grad = None
    if var_grad is not None:
        std_grad = np.where(clipped[:, None], 0.0, var_grad / (2.0 * std[:, None]))
    return std, std_grad


def _predict(
    model: GaussianProcessRegressor, X: np.ndarray, with_grad: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Mean and standard deviation at ``X`` and, with ``with_grad``, their gradients."""
    if with_grad:
        mean, var, mean_grad, var_grad = model.predict_with_grad(X)
    else:
        (mean, var), mean_grad, var_grad = model.predict(X), None, None
    std, std_grad = _floored_std(var, var_grad)
    return mean, std, mean_grad, std_grad


def _d_log_h(z: np.ndarray) -> np.ndarray:
    """``d/dz log h(z) = Φ(z) / h(z)``, evaluated in log space (``≈ -z`` far in the tail)."""
    return np.exp(log_ndtr(z) - _log_h(z))


def _log_ei_terms(
    mean: np.ndarray, std: np.ndarray, threshold: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log EI`` of improving on ``threshold`` and its derivatives w.r.t. mean and std
    (``d log h / dz = Φ(z) / h(z)``); every array broadcasts."""
    z = (threshold - mean) / std
    ratio = _d_log_h(z)
    return np.log(std) + _log_h(z), -ratio / std, (1.0 - ratio * z) / std


def _log_pi_terms(
    mean: np.ndarray, std: np.ndarray, threshold: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log PI = log Φ(z)`` and its derivatives w.r.t. mean and std
    (``d log Φ / dz = φ(z) / Φ(z)``); every array broadcasts."""
    z = (threshold - mean) / std
    values = log_ndtr(z)
    hazard = np.exp(-0.5 * z**2 - LOG_SQRT_2PI - values)
    return values, -hazard / std, -hazard * z / std


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
        values, d_mean, d_std = _log_ei_terms(mean, std, self.incumbent - self.xi)
        if mean_grad is None or std_grad is None:
            return values, None
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
        values, d_mean, d_std = _log_pi_terms(mean, std, self.incumbent - self.xi)
        if mean_grad is None or std_grad is None:
            return values, None
        return values, d_mean[:, None] * mean_grad + d_std[:, None] * std_grad


#: The closed forms of noisy EI's and noisy PI's terms, by ``kind``.
_LOG_TERMS = {"ei": _log_ei_terms, "pi": _log_pi_terms}

#: Joint draws of the latent values at the incumbent rows that noisy EI and PI average over.
N_INCUMBENT_DRAWS = 64


@functools.lru_cache(maxsize=64)
def incumbent_draws(rank: int) -> np.ndarray:
    """Fixed quasi-random standard normal draws, shape ``(N_INCUMBENT_DRAWS, rank)``.

    Fixed (scrambled Sobol points with one seed), so that noisy EI and PI are deterministic,
    smooth functions of the candidate for the optimiser, as BoTorch fixes its base samples.
    """
    if rank == 0:
        return np.empty((N_INCUMBENT_DRAWS, 0))
    from scipy.stats import qmc  # here: scipy.stats is slow to import (see space.py)

    unit = qmc.Sobol(rank, scramble=True, seed=1234).random(N_INCUMBENT_DRAWS)
    draws = ndtri(np.clip(unit, 1e-12, 1.0 - 1e-12))
    draws.setflags(write=False)
    return draws


class NoisyLogImprovement(Acquisition):
    """``log`` of noisy EI or noisy PI of minimisation (Letham et al., *Constrained Bayesian
    Optimization with Noisy Experiments*, Bayesian Analysis 2019), with its gradient.

    With noisy observations neither the best observed value (lucky noise) nor the smallest
    posterior mean (a plug-in value that ignores how well it is known) is the value to
    improve on. Noisy EI averages EI over joint posterior draws ``f_s`` of the latent values at
    the incumbent rows ``R``, each with its own best value ``min_R f_s`` and each conditioning
    the GP at the candidate on that draw:
    ``EI(x) = mean_s EI(μ(x) + w(x)·e_s, σ²(x) - |w(x)|²; min_R f_s)``
    (:meth:`~bore_samplers.models.gp_regression.GaussianProcessRegressor.latent_reference`).
    Re-evaluating an incumbent row gains nothing in any draw, so a configuration whose value
    is already known is not proposed again and again, as it is with the plug-in incumbent.
    Where the values at ``R`` are known (noise-free data), there are no draws to average and
    this equals :class:`LogExpectedImprovement` with the plug-in incumbent.

    The same average over the outcomes of pending evaluations (a ``conditional`` reference,
    :meth:`~bore_samplers.models.gp_regression.GaussianProcessRegressor.fantasy_reference`,
    with ``incumbent`` the best value observed) is EI of the candidate given Monte Carlo
    fantasies of the pending outcomes: ``E[max(0, min(incumbent, min f_P) - f(x))]``, the
    expected gain of adding ``x`` to the pending batch (qEI's marginal gain, as BoTorch's
    ``X_pending`` and Optuna's qLogEI score it). A candidate beside a pending point gains
    only where the draws there do not already improve.

    Parameters
    ----------
    model
        The objective GP.
    reference
        The posterior at the incumbent rows (rank ``k >= 1``).
    kind
        ``"ei"`` or ``"pi"``.
    xi
        Trade-off ``ξ >= 0`` in the model's units.
    incumbent
        A known value to improve on in every draw as well (``+inf``: none).
    """

    log_scale = True

    def __init__(
        self,
        model: GaussianProcessRegressor,
        reference: LatentReference,
        kind: Literal["ei", "pi"] = "ei",
        xi: float = 0.0,
        incumbent: float = math.inf,
    ) -> None:
        self.model = model
        self.reference = reference
        self.kind = kind
        self.xi = xi
        self.incumbent = incumbent
        self._thresholds: np.ndarray | None = None  # min over the rows of each draw, minus xi

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        draws = incumbent_draws(self.reference.rank)  # (S, k)
        if self._thresholds is None:
            values_at_rows = self.reference.mean + draws @ self.reference.factor.T
            lowest = np.minimum(np.min(values_at_rows, axis=1), self.incumbent)
            self._thresholds = lowest - self.xi
        mean, var, mean_grad, var_grad, weights, weights_grad = self.model.predict_with_reference(
            X, self.reference, with_grad
        )
        if self.reference.conditional:
            std, std_grad = _floored_std(var, var_grad)
        else:
            conditional_var_grad = None
            if var_grad is not None and weights_grad is not None:
                conditional_var_grad = var_grad - 2.0 * np.einsum(
                    "nk,nkd->nd", weights, weights_grad
                )
            std, std_grad = _floored_std(var - np.sum(weights**2, axis=1), conditional_var_grad)
        log_terms, d_mean, d_std = _LOG_TERMS[self.kind](
            mean[:, None] + weights @ draws.T, std[:, None], self._thresholds[None, :]
        )  # (n, S)
        # The log of the mean over draws, and each draw's share of it (its softmax weight).
        peak = np.max(log_terms, axis=1, keepdims=True)
        exp_terms = np.exp(log_terms - peak)
        total = np.sum(exp_terms, axis=1)
        values = peak[:, 0] + np.log(total / len(draws))
        if mean_grad is None or std_grad is None or weights_grad is None:
            return values, None
        share = exp_terms / total[:, None]
        by_mean = share * d_mean
        grad = (
            np.sum(by_mean, axis=1)[:, None] * mean_grad
            + np.einsum("nk,nkd->nd", by_mean @ draws, weights_grad)
            + np.sum(share * d_std, axis=1)[:, None] * std_grad
        )
        return values, grad


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
#: EI and PI with the plug-in incumbent, by ``kind``.
_PLUG_IN: dict[str, type[LogExpectedImprovement | LogProbabilityOfImprovement]] = {
    "ei": LogExpectedImprovement,
    "pi": LogProbabilityOfImprovement,
}


def _constrained(
    models: ModelSet, kind: Literal["ei", "pi"], xi: float, noisy: bool, fantasize: bool
) -> Acquisition:
    feasibility = feasibility_of(models, floor=True)
    if not models.incumbents:  # no feasible point yet: find one
        assert feasibility is not None
        return feasibility
    members: list[Acquisition] = []
    for index, (model, incumbent) in enumerate(
        zip(models.objective, models.incumbents, strict=True)
    ):
        reference = models.incumbent_reference(index) if noisy else None
        if reference is not None and reference.rank:
            members.append(NoisyLogImprovement(model, reference, kind, xi))
        elif fantasize and models.n_pending:
            members.append(
                NoisyLogImprovement(
                    model,
                    models.pending_reference(index),
                    kind,
                    xi,
                    incumbent=models.observed_incumbents[index],
                )
            )
        else:
            members.append(_PLUG_IN[kind](model, incumbent, xi))
    averaged = ModelAverage(members)
    return averaged if feasibility is None else Sum([averaged, feasibility])


def constrained_log_ei(
    models: ModelSet, xi: float = 0.0, noisy: bool = False, fantasize: bool = False
) -> Acquisition:
    """``log EI + log PF`` over a model set: constrained EI (Gardner et al., ICML 2014).

    EI is averaged over the objective models (hyperparameter samples) in log space; ``log PF``
    of the constraint GPs and the crash classifier is added when there are any, and alone is
    the acquisition until a feasible point exists. ``xi`` is in standardised units. With
    ``noisy``, noisy EI (:class:`NoisyLogImprovement`) instead of the plug-in incumbent. The
    believed outcomes of pending points count for the incumbent (a Kriging believer); with
    ``fantasize``, EI is instead averaged over draws of their outcomes
    (:meth:`ModelSet.pending_reference`) and improves on the best observed value. After a run
    of infeasible trials ``PF`` must reach a floor
    (:data:`~bore_samplers.acquisitions.feasibility.CONFIDENT_FEASIBILITY`).
    """
    return _constrained(models, "ei", xi, noisy, fantasize)


def constrained_log_pi(
    models: ModelSet, xi: float = 0.0, noisy: bool = False, fantasize: bool = False
) -> Acquisition:
    """``log PI + log PF`` over a model set, as :func:`constrained_log_ei`."""
    return _constrained(models, "pi", xi, noisy, fantasize)


def constrained_lcb(models: ModelSet, kappa: float) -> Acquisition:
    """The GP-LCB score averaged over the objective models, plus ``log PF`` when there are
    feasibility models: the log of ``exp(-LCB) · PF`` in standardised units."""
    averaged = ModelAverage([LowerConfidenceBound(model, kappa) for model in models.objective])
    feasibility = feasibility_of(models, floor=True)
    return averaged if feasibility is None else Sum([averaged, feasibility])
