"""A lookup-table classifier for small finite spaces: each configuration's share of good rows."""

from __future__ import annotations

import numpy as np

from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.validation import check_float

__all__ = ["LookupClassifier"]


class LookupClassifier(ProbabilisticClassifier):
    """``P(z = 1 | x)``: the weighted share of class 1 among the rows equal to ``x``, smoothed.

    For a configuration seen with class-1 weight ``w₁`` out of total weight ``w``,
    ``π(x) = (w₁ + a p̄) / (w + a)``, where ``p̄`` is the class-1 share of all rows and ``a``
    (``prior_weight``) counts pseudo-rows at that share; an unseen configuration gets ``p̄``.
    These are the smoothed counts with which TPE estimates a categorical parameter (Bergstra
    et al., 2011), as a classifier: on a single categorical parameter a random forest's fully
    grown trees estimate the same shares, with bootstrap noise, at a hundred times the cost.
    Rows are matched exactly, so it does not generalise between configurations: it suits
    spaces of a few configurations, each seen several times (the parameter that selects the
    branch of a conditional space).

    Parameters
    ----------
    prior_weight
        Pseudo-rows ``a > 0`` at the overall share that every configuration's share is
        shrunk toward.
    """

    def __init__(self, prior_weight: float = 1.0) -> None:
        self.prior_weight = prior_weight
        self._table: dict[bytes, float] = {}
        self._default = 0.5

    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        seed: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        features = np.ascontiguousarray(features, dtype=float)
        labels = np.asarray(labels, dtype=bool)
        weights = np.ones(len(labels)) if sample_weight is None else np.asarray(sample_weight)
        rows, inverse = np.unique(features, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        total = np.bincount(inverse, weights=weights, minlength=len(rows))
        good = np.bincount(inverse, weights=weights * labels, minlength=len(rows))
        share = float(good.sum() / total.sum())
        a = self.prior_weight
        smoothed = (good + a * share) / (total + a)
        self._table = {row.tobytes(): float(p) for row, p in zip(rows, smoothed, strict=True)}
        self._default = share

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        features = np.ascontiguousarray(features, dtype=float)
        return np.array([self._table.get(row.tobytes(), self._default) for row in features])

    def check_params(self) -> None:
        check_float("prior_weight", self.prior_weight, low=0.0, low_open=True)
