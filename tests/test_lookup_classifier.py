"""The lookup classifier: each configuration's smoothed share of class 1, in real studies too."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from bore_samplers import BORESampler
from bore_samplers.models.classifiers import LookupClassifier, make_classifier

optuna.logging.set_verbosity(optuna.logging.WARNING)


def test_shares_are_smoothed_toward_the_overall_share_and_unseen_rows_get_it() -> None:
    features = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 5)
    labels = np.array([True, True, False, False, False, False, False, True])
    classifier = LookupClassifier(prior_weight=2.0)
    classifier.fit(features, labels, seed=0)
    overall = 3 / 8
    expected = [(2 + 2 * overall) / (3 + 2), (1 + 2 * overall) / (5 + 2), overall]
    proba = classifier.predict_proba(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    np.testing.assert_allclose(proba, expected)


def test_sample_weights_count_as_rows() -> None:
    features = np.array([[0.0], [0.0], [1.0]])
    labels = np.array([True, False, False])
    weighted = LookupClassifier()
    weighted.fit(features, labels, seed=0, sample_weight=np.array([3.0, 1.0, 1.0]))
    repeated = LookupClassifier()
    repeated.fit(np.array([[0.0]] * 4 + [[1.0]]), np.array([True] * 3 + [False] * 2), seed=0)
    points = np.array([[0.0], [1.0]])
    np.testing.assert_allclose(weighted.predict_proba(points), repeated.predict_proba(points))


@pytest.mark.parametrize("prior_weight", [0, -1.0, float("nan"), "1", True])
def test_a_bad_prior_weight_is_refused_when_the_sampler_is_built(prior_weight: object) -> None:
    with pytest.raises(ValueError, match="prior_weight"):
        BORESampler(classifier="lookup", classifier_options={"prior_weight": prior_weight})
    with pytest.raises(ValueError, match="prior_weight"):
        make_classifier("lookup", {"prior_weight": prior_weight}).check_params()


def test_bore_with_the_lookup_classifier_finds_the_best_choice() -> None:
    scores = {"a": 3.0, "b": 0.0, "c": 2.0, "d": 1.0}
    rng = np.random.default_rng(0)

    def objective(trial: optuna.Trial) -> float:
        return scores[trial.suggest_categorical("choice", list(scores))] + rng.normal(0, 0.5)

    sampler = BORESampler(classifier="lookup", n_startup_trials=8, seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=30)
    later = [t.params["choice"] for t in study.trials[15:]]
    assert later.count("b") > len(later) / 2
