"""Tree-ensemble classifiers for BORE: gradient-boosted trees (XGBoost) and a random forest.

The defaults follow App. J of Tiao et al. (2021): the libraries' own defaults, written out so
that a library upgrade does not silently change them. Every classifier runs single-threaded:
samplers may be called from several Optuna worker threads at once, and the fits are small.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from bore_samplers.models.classifiers.base import ProbabilisticClassifier, tiny_training_set

__all__ = ["RandomForestClassifier", "XGBoostClassifier", "stratified_subsample"]

#: What to install for :class:`XGBoostClassifier`: xgboost is an extra, not a dependency.
XGBOOST_MISSING = (
    "classifier='xgboost' needs xgboost, which the base install does not include: "
    'pip install xgboost (the default classifier, "rf", needs only '
    "scikit-learn)."
)


def import_xgboost() -> Any:
    """The ``xgboost`` module, imported on first use (it takes about a second).

    Raises
    ------
    ImportError
        Without xgboost installed; the message names the extra that installs it.
    """
    try:
        import xgboost
    except ImportError as error:
        raise ImportError(XGBOOST_MISSING) from error
    return xgboost


class XGBoostClassifier(ProbabilisticClassifier):
    """Gradient-boosted trees (BORE-XGB, App. J.2); needs xgboost (the ``xgboost`` extra).

    Parameters
    ----------
    n_estimators, learning_rate, max_depth
        Boosting rounds, shrinkage η and maximum tree depth: the paper's settings.
    min_child_weight
        Minimum hessian per leaf. XGBoost's default of 1 forbids any split around two or three
        positives among a few dozen observations (each positive's hessian ``p (1 - p)`` is
        about 0.1), so with a small γ the classifier stayed constant and BORE proposed at
        random for the first tens of trials; 0.1 lets it separate them.
    max_bin
        Histogram bins per feature. With at most ``max_bin`` observations the splits are the
        exact ones; 64 bins halve the fit time at 1000 observations compared with XGBoost's
        256, which matters for suggestion latency in large studies.
    **options
        Further XGBoost training parameters (``xgboost.train`` names).
    """

    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.3,
        max_depth: int = 6,
        min_child_weight: float = 0.1,
        max_bin: int = 64,
        **options: Any,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_child_weight = min_child_weight
        self.max_bin = max_bin
        self.options = options
        self._booster: Any = None

    def _params(self, seed: int) -> dict[str, Any]:
        return {
            "objective": "binary:logistic",
            "eta": self.learning_rate,
            "max_depth": self.max_depth,
            "min_child_weight": self.min_child_weight,
            "tree_method": "hist",
            "max_bin": self.max_bin,
            "nthread": 1,
            "seed": seed,
            "verbosity": 0,
            **self.options,
        }

    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        seed: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        xgboost = import_xgboost()
        # xgboost.train on a plain DMatrix: the scikit-learn wrapper adds overhead to each fit.
        data = xgboost.DMatrix(
            features, label=labels.astype(float), weight=sample_weight, nthread=1
        )
        self._booster = xgboost.train(self._params(seed), data, num_boost_round=self.n_estimators)

    def check_params(self) -> None:
        """Fit one round on a tiny set, and reject options that XGBoost would ignore.

        XGBoost accepts any parameter name and silently ignores the unknown ones, so the names
        are checked against the configuration of the fitted booster (which lists every
        parameter it knows, aliases included).

        Raises
        ------
        ValueError
            For settings XGBoost rejects or option names it does not know.
        ImportError
            Without xgboost installed (``pip install xgboost``).
        """
        xgboost = import_xgboost()
        if self.n_estimators < 1:
            raise ValueError(f"XGBoost n_estimators must be >= 1, got {self.n_estimators}.")
        features, labels = tiny_training_set()
        try:
            data = xgboost.DMatrix(features, label=labels.astype(float), nthread=1)
            booster = xgboost.train(self._params(0), data, num_boost_round=1)
        except xgboost.core.XGBoostError as error:
            first_line = str(error).strip().splitlines()[0]
            raise ValueError(f"Invalid XGBoost classifier settings: {first_line}") from error
        known = _config_keys(json.loads(booster.save_config())) | _XGBOOST_NAMES_NOT_IN_CONFIG
        unknown = sorted(set(self.options) - known)
        if unknown:
            raise ValueError(
                f"Unknown XGBoost option(s) {unknown} in classifier_options; XGBoost would "
                "silently ignore them. See the XGBoost parameter documentation."
            )

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        # inplace_predict skips the DMatrix construction: one cheap call for a whole batch.
        return np.asarray(self._booster.inplace_predict(features), dtype=float)


class RandomForestClassifier(ProbabilisticClassifier):
    """A random forest (BORE-RF, App. J.1): 100 fully grown trees.

    Parameters
    ----------
    n_estimators, min_samples_split, max_depth
        Number of trees, minimum samples to split a node and maximum depth (unlimited).
    max_bootstrap_samples
        Largest training set the trees are grown on; with fewer observations each tree sees
        a bootstrap sample of all of them, as in the paper. Fully grown trees cost about
        ``n log n`` each: on 10 000 observations the forest took about 0.45 s a fit, so a
        larger training set is first cut down to this many rows, stratified by class: every
        row of class 1 (at most half the rows) and a random subset of the others, each row
        weighted by its class's count over the rows kept, so that both classes keep their
        total weight. (A uniform subsample would leave each tree with about 2 of the 25 good
        observations that TPE's split labels in 10 000.) ``None``: no limit.
    **options
        Passed on to :class:`sklearn.ensemble.RandomForestClassifier`.
    """

    def __init__(
        self,
        n_estimators: int = 100,
        min_samples_split: int = 2,
        max_depth: int | None = None,
        max_bootstrap_samples: int | None = 1000,
        **options: Any,
    ) -> None:
        self.n_estimators = n_estimators
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth
        self.max_bootstrap_samples = max_bootstrap_samples
        self.options = options
        self._model: Any = None

    def _forest(self, seed: int, n_estimators: int | None = None) -> Any:
        from sklearn.ensemble import RandomForestClassifier as _Forest

        return _Forest(
            n_estimators=self.n_estimators if n_estimators is None else n_estimators,
            min_samples_split=self.min_samples_split,
            max_depth=self.max_depth,
            n_jobs=1,
            random_state=seed,
            **self.options,
        )

    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        seed: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        limit = self.max_bootstrap_samples
        if limit is not None and len(labels) > limit:
            rows, sample_weight = stratified_subsample(
                labels, sample_weight, limit, np.random.default_rng(seed)
            )
            features, labels = features[rows], labels[rows]
        self._model = self._forest(seed)
        self._model.fit(features, labels.astype(int), sample_weight=sample_weight)

    def check_params(self) -> None:
        """Build the forest (unknown names) and fit one tree on a tiny set (invalid values)."""
        if not (isinstance(self.n_estimators, int) and self.n_estimators >= 1):
            raise ValueError(f"Random forest n_estimators must be >= 1, got {self.n_estimators}.")
        limit = self.max_bootstrap_samples
        if limit is not None and not (isinstance(limit, int) and limit >= 2):
            raise ValueError(
                "Random forest max_bootstrap_samples must be an integer >= 2 or None, "
                f"got {limit!r}."
            )
        try:
            self._forest(0, n_estimators=1).fit(*tiny_training_set())
        except (TypeError, ValueError) as error:
            raise ValueError(f"Invalid random forest classifier settings: {error}") from error

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        proba = self._model.predict_proba(features)
        # Column of class 1, not column 0 (the defect of an earlier implementation).
        return proba[:, list(self._model.classes_).index(1)]


def stratified_subsample(
    labels: np.ndarray, sample_weight: np.ndarray | None, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a class-stratified subsample of ``size`` rows and their reweighted weights.

    Every row of class 1, up to ``size // 2``, and random rows of class 0 for the rest (more
    of class 1 if class 0 runs short); each kept row's weight (1 without ``sample_weight``)
    is multiplied by its class's count over the number kept, so that each class keeps its
    total weight in expectation. Rows are returned in their original order.
    """
    labels = np.asarray(labels, dtype=bool)
    weights = np.ones(len(labels)) if sample_weight is None else np.asarray(sample_weight)
    positive, negative = np.flatnonzero(labels), np.flatnonzero(~labels)
    keep_negative = min(len(negative), size - min(len(positive), size // 2))
    keep_positive = min(len(positive), size - keep_negative)
    kept, factor = np.zeros(len(labels), dtype=bool), np.ones(len(labels))
    for members, keep in ((negative, keep_negative), (positive, keep_positive)):
        chosen = rng.choice(members, size=keep, replace=False) if keep < len(members) else members
        kept[chosen] = True
        factor[members] = len(members) / max(keep, 1)
    rows = np.flatnonzero(kept)
    return rows, weights[rows] * factor[rows]


# Valid XGBoost training parameters that a fitted booster's configuration does not list.
_XGBOOST_NAMES_NOT_IN_CONFIG = frozenset(
    {"verbosity", "eval_metric", "validate_parameters", "nthread", "n_jobs", "seed", "silent"}
)


def _config_keys(node: Any) -> set[str]:
    """Every key of a nested JSON configuration."""
    if isinstance(node, dict):
        return set(node) | {key for value in node.values() for key in _config_keys(value)}
    if isinstance(node, list):
        return {key for value in node for key in _config_keys(value)}
    return set()
