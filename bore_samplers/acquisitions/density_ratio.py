"""BORE's acquisition: the class probability of a classifier of the best γ-quantile.

Tiao et al., *BORE: Bayesian Optimization by Density-Ratio Estimation* (ICML 2021): expected
improvement at the γ-quantile τ of the observed values equals, up to a constant, the relative
density ratio ``ℓ(x) / (γ ℓ(x) + (1 - γ) g(x))`` (eq. 4-6), which is ``γ⁻¹ π(x)`` where
``π(x) = P(y ≤ τ | x)`` is the posterior of a classifier trained to tell the best γ-quantile
of the observations from the rest (eq. 8-10). This module has the labels of that
classification (:func:`quantile_labels`, :func:`bore_labels`), LFBO's weighted variant of it
(:func:`ei_weighted_training_set`) and the acquisition itself (:class:`ClassProbability`).

LFBO (Song, Yu, Neiswanger & Ermon, *A General Recipe for Likelihood-free Bayesian
Optimization*, ICML 2022) shows that weighting each positive by its improvement ``τ - y`` makes
the classifier's odds proportional to expected improvement instead of probability of
improvement (their Theorem 2 with the EI utility).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import expit, log_expit

from bore_samplers.acquisitions.base import DifferentiableUnitCubeScore
from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.models.targets import impute_infinite
from bore_samplers.observations import History, TrialState
from bore_samplers.space import SearchSpace

__all__ = [
    "ClassProbability",
    "GammaSchedule",
    "bore_labels",
    "check_gamma",
    "ei_weighted_training_set",
    "quantile_labels",
    "resolve_gamma",
    "tpe_gamma",
]

#: A fixed proportion, or a function of the number of labelled observations returning one.
GammaSchedule = float | Callable[[int], float]


def tpe_gamma(n: int) -> float:
    """Optuna TPE's default split as a proportion: the best ``min(⌈n / 10⌉, 25)`` of ``n``
    observations, at most half of them.

    A fixed γ = 1/3 (the BORE paper's) labels a third of the observations good, and the
    classifier then separates a broad region; TPE's few best keep the good class tight as the
    search narrows.
    """
    return min(min(math.ceil(0.1 * n), 25) / n, 0.5)


def resolve_gamma(gamma: GammaSchedule, n: int) -> float:
    """The proportion γ to use with ``n`` labelled observations.

    Raises
    ------
    ValueError
        If γ is not in the open interval (0, 1).
    """
    value = float(gamma(n)) if callable(gamma) else float(gamma)
    if not 0.0 < value < 1.0:
        raise ValueError(f"gamma must be in (0, 1), got {value}.")
    return value


#: Numbers of observations at which :func:`check_gamma` tries a schedule.
GAMMA_CHECK_SIZES = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 10_000)


def check_gamma(gamma: GammaSchedule) -> None:
    """Raise ``ValueError`` unless ``gamma`` (a proportion, or a schedule tried at
    :data:`GAMMA_CHECK_SIZES`) gives a proportion in (0, 1); a schedule that raises is
    reported with the size it failed at."""
    if not callable(gamma):
        resolve_gamma(gamma, 1)
        return
    for n in GAMMA_CHECK_SIZES:
        try:
            resolve_gamma(gamma, n)
        except Exception as error:
            raise ValueError(f"The gamma schedule fails for n = {n}: {error}") from error


def quantile_labels(values: np.ndarray, gamma: float) -> np.ndarray:
    """Binary labels ``z_n = I[y_n <= τ]`` with τ the γ-quantile of ``values``.

    This is line 2-4 of Algorithm 1 of Tiao et al. (2021). τ is the order statistic at
    position ``floor((N - 1) γ)`` (numpy's ``"lower"`` quantile): it is always an observed value,
    so ``+inf`` or ``-inf`` values never turn τ into NaN. NaN values count as ``+inf`` (worst).
    Ties with τ are labelled positive, so all-equal values give a single class, which callers
    must handle.

    Parameters
    ----------
    values
        Objective values to minimise, shape ``(N,)``.
    gamma
        Proportion in (0, 1).

    Returns
    -------
    numpy.ndarray
        Boolean array, ``True`` for the observations in the best γ-quantile.
    """
    y = np.where(np.isnan(values), math.inf, np.asarray(values, dtype=float))
    if y.size == 0:
        return np.zeros(0, dtype=bool)
    tau = np.quantile(y, gamma, method="lower")
    return y <= tau


def bore_labels(history: History, gamma: GammaSchedule) -> np.ndarray:
    """Binary BORE labels for every row of ``history``.

    The γ split is taken as Optuna's TPE takes it: over the complete and the pruned
    observations, infeasible and pruned ones ranked after every complete feasible one, so
    that only complete feasible observations can be positive, and a study whose trials are
    often pruned keeps as many positives as TPE's "below" set would have (``γ`` is resolved
    with that count). Failed and running observations are labelled 0 and not counted.
    """
    ranked = history.mask(TrialState.COMPLETE) & history.feasible
    counted = history.mask(TrialState.COMPLETE, TrialState.PRUNED)
    labels = np.zeros(len(history), dtype=bool)
    if ranked.any():
        ranked_last = np.where(ranked, history.values, math.inf)[counted]
        labels[counted] = quantile_labels(ranked_last, resolve_gamma(gamma, int(counted.sum())))
        labels &= ranked
    return labels


def ei_weighted_training_set(
    values: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LFBO's training set for the EI utility, built as the authors' code builds it.

    Every observation appears once as class 0 with weight 1, and each positive appears again
    as class 1 with weight ``(τ - y) / mean(τ - y)``; the two groups are then rebalanced by
    their sizes (weights times ``(s0 + s1) / s``) and all weights normalised to mean 1. ``τ`` is
    the midpoint between the worst positive and the best negative value (the authors use the
    interpolated γ-quantile with strict ``y < τ``; the midpoint gives the same labels and no
    positive a zero weight). Infinite values are ranked first
    (:func:`~bore_samplers.models.targets.impute_infinite`).

    Parameters
    ----------
    values
        Objective values of the labelled observations, shape ``(n,)``; NaN only for negatives
        (failed trials).
    labels
        BORE labels of the same observations, with at least one positive and one negative.

    Returns
    -------
    rows, targets, weights
        Row indices into ``values`` (the negatives' copies first), the class of each row and
        its weight; ``len(rows) = n + n_positive``.
    """
    labels = np.asarray(labels, dtype=bool)
    y = impute_infinite(np.asarray(values, dtype=float))
    positive = np.flatnonzero(labels)
    worst_positive = float(np.max(y[positive]))
    negative_values = y[~labels & ~np.isnan(y)]
    best_negative = float(np.min(negative_values)) if negative_values.size else worst_positive
    tau = 0.5 * (worst_positive + max(best_negative, worst_positive))
    improvement = tau - y[positive]
    if not np.all(improvement > 0.0):  # all positives tie with the best negative
        improvement = np.ones(len(positive))
    n_all, n_positive = len(y), len(positive)
    rows = np.concatenate([np.arange(n_all), positive])
    targets = np.concatenate([np.zeros(n_all, dtype=bool), np.ones(n_positive, dtype=bool)])
    total = n_all + n_positive
    weights = np.concatenate(
        [
            np.full(n_all, total / n_all),
            improvement / np.mean(improvement) * total / n_positive,
        ]
    )
    return rows, targets, weights / np.mean(weights)


class ClassProbability(DifferentiableUnitCubeScore):
    """The BORE acquisition ``π(x)`` of a fitted classifier over unit points of a space.

    A :class:`~bore_samplers.acquisitions.base.DifferentiableUnitCubeScore` (what the
    optimisers maximise), not an :class:`~bore_samplers.acquisitions.base.Acquisition` over
    features: BORE's optimisers search unit points, and its gradient exists only for
    differentiable classifiers (:meth:`value_and_grad` raises for trees).

    Scores are ``π(x)`` for tree classifiers and ``log π(x)`` (same ranking) for differentiable
    ones. The log, computed from the logit, does not saturate to exactly 0 where ``π`` rounds to
    1.0 in float64, which would make the best candidates tie and the choice among them
    arbitrary. It is also what a gradient search should climb: ``log π(x) + log p(x)`` is, up
    to a constant, the log density of the good class at ``x`` under a proposal density ``p``
    (Bayes' rule, ``ℓ(x) = π(x) p(x) / γ``), which
    :class:`~bore_samplers.optimizers.MultiStartLBFGS` maximises around the good points; the
    logit, unlike ``log π``, keeps growing where the classifier is already sure.
    """

    def __init__(self, classifier: ProbabilisticClassifier, space: SearchSpace) -> None:
        self.classifier = classifier
        self.space = space
        self._continuous = space.continuous_mask
        # Continuous coordinates are one feature column each, equal to the unit coordinate.
        self._columns = np.array([cols[0] for cols in space.feature_columns()])

    def __call__(self, u: np.ndarray) -> np.ndarray:
        features = self.space.features(u)
        if self.classifier.differentiable:
            return log_expit(self.classifier.logit_and_grad(features)[0])
        return self.classifier.predict_proba(features)

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log π`` and its unit-space gradient, for a differentiable classifier.

        Only the continuous coordinates' gradient is filled in; the others are zero.
        """
        logits, feature_grad = self.classifier.logit_and_grad(self.space.features(u))
        grad = np.zeros_like(u)
        # d log π / d logit = 1 - π = expit(-logit).
        slope = expit(-logits)[:, None]
        grad[:, self._continuous] = slope * feature_grad[:, self._columns[self._continuous]]
        return log_expit(logits), grad
