"""BORE's acquisition: the class probability of a classifier of the best γ-quantile.

Tiao et al., *BORE: Bayesian Optimization by Density-Ratio Estimation* (ICML 2021): expected
improvement at the γ-quantile τ of the observed values equals, up to a constant, the relative
density ratio ``ℓ(x) / (γ ℓ(x) + (1 - γ) g(x))`` (eq. 4-6), which is ``γ⁻¹ π(x)`` where
``π(x) = P(y ≤ τ | x)`` is the posterior of a classifier trained to tell the best γ-quantile
of the observations from the rest (eq. 8-10). This module has the labels of that
classification (:func:`quantile_labels`, :func:`bore_labels`) and the acquisition itself
(:class:`ClassProbability`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.observations import History, TrialState
from bore_samplers.space import SearchSpace

__all__ = [
    "ClassProbability",
    "GammaSchedule",
    "bore_labels",
    "check_gamma",
    "quantile_labels",
    "resolve_gamma",
]

#: A fixed proportion, or a function of the number of labelled observations returning one.
GammaSchedule = float | Callable[[int], float]


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
    """Binary BORE labels for every row of ``history`` (see the module docstring)."""
    ranked = history.mask(TrialState.COMPLETE) & history.feasible
    labels = np.zeros(len(history), dtype=bool)
    if ranked.any():
        labels[ranked] = quantile_labels(
            history.values[ranked], resolve_gamma(gamma, int(ranked.sum()))
        )
    return labels


class ClassProbability:
    """The BORE acquisition ``π(x)`` of a fitted classifier over unit points of a space.

    Scores are ``π(x)`` for tree classifiers and its logit (same ranking) for differentiable
    ones.
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
            # The logit ranks like π but does not saturate to exactly 1.0 in float64, which
            # would make the best candidates tie and the choice among them arbitrary.
            return self.classifier.logit_and_grad(features)[0]
        return self.classifier.predict_proba(features)

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The logit of ``π`` (monotone in it, better conditioned) and its unit-space gradient.

        Only the continuous coordinates' gradient is filled in; the others are zero.
        """
        logits, feature_grad = self.classifier.logit_and_grad(self.space.features(u))
        grad = np.zeros_like(u)
        grad[:, self._continuous] = feature_grad[:, self._columns[self._continuous]]
        return logits, grad
