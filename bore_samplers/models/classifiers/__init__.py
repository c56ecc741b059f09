"""Probabilistic classifiers for BORE, and the names that build them.

:class:`ProbabilisticClassifier` is the interface (:mod:`~bore_samplers.models.classifiers.base`);
:mod:`~bore_samplers.models.classifiers.trees` has XGBoost (the ``xgboost`` extra) and the
random forest, :mod:`~bore_samplers.models.classifiers.lookup` a lookup table of each
configuration's share for small finite spaces, and :mod:`~bore_samplers.models.classifiers.mlp`
the torch MLP (imported only when asked for).
"""

from __future__ import annotations

from typing import Any

from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.models.classifiers.lookup import LookupClassifier
from bore_samplers.models.classifiers.trees import RandomForestClassifier, XGBoostClassifier

__all__ = [
    "CLASSIFIERS",
    "LookupClassifier",
    "ProbabilisticClassifier",
    "RandomForestClassifier",
    "XGBoostClassifier",
    "make_classifier",
]


def _mlp_classifier(**options: Any) -> ProbabilisticClassifier:
    from bore_samplers.models.classifiers.mlp import MLPClassifier

    return MLPClassifier(**options)


CLASSIFIERS = {
    "xgboost": XGBoostClassifier,
    "rf": RandomForestClassifier,
    "mlp": _mlp_classifier,
    "lookup": LookupClassifier,
}


def make_classifier(
    classifier: str | ProbabilisticClassifier, options: dict[str, Any] | None = None
) -> ProbabilisticClassifier:
    """A classifier instance from a name in :data:`CLASSIFIERS` or an instance (kept as is).

    Raises
    ------
    ValueError
        For an unknown name, an unknown option, or options given with an instance.
    ImportError
        For ``"mlp"`` without torch installed (``pip install torch``). For
        ``"xgboost"`` without xgboost, the classifier's ``check_params`` and ``fit`` raise it
        (``pip install xgboost``).
    """
    if isinstance(classifier, ProbabilisticClassifier):
        if options:
            raise ValueError(
                "classifier_options apply to a classifier given by name; set the options of a "
                f"{type(classifier).__name__} instance in its constructor."
            )
        return classifier
    if classifier not in CLASSIFIERS:
        raise ValueError(
            f"Unknown classifier {classifier!r}; choose one of {sorted(CLASSIFIERS)} "
            "or pass a ProbabilisticClassifier instance."
        )
    try:
        return CLASSIFIERS[classifier](**(options or {}))
    except TypeError as error:  # an unknown keyword: name it
        raise ValueError(f"Invalid classifier_options for {classifier!r}: {error}") from error
