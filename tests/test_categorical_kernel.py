"""The categorical (Hamming) term of the GP kernels, and the prior mean on discrete spaces."""

from __future__ import annotations

import numpy as np
import pytest

from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor, GPHyperparameters
from bore_samplers.models.kernels import column_groups, column_lengthscales, matern52_kernel
from bore_samplers.models.model_set import prior_mean
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace


def _k52(r2: float) -> float:
    rho = np.sqrt(5.0 * r2)
    return float((1.0 + rho + rho**2 / 3.0) * np.exp(-rho))


def _space() -> SearchSpace:
    return SearchSpace(
        {
            "n": IntParam(0, 4),
            "kind": CategoricalParam(("a", "b", "c", "d")),
            "op": CategoricalParam(("x", "y", "z")),
        }
    )


def test_one_changed_choice_is_one_lengthscale_away_like_optuna() -> None:
    # Optuna's GPSampler: sqdist = sum_d [x_d != x'_d] / l_d^2 for categoricals.
    space = _space()
    group_of_column, _ = column_groups(space.feature_columns(), space.n_features)
    lengthscales = np.array([0.3, 0.8, 1.7])
    per_column = column_lengthscales(lengthscales, group_of_column)
    u = space.encode(
        [
            {"n": 2, "kind": "a", "op": "x"},
            {"n": 2, "kind": "b", "op": "x"},  # one choice changed
            {"n": 2, "kind": "d", "op": "x"},  # another choice: the same distance
            {"n": 2, "kind": "c", "op": "z"},  # two parameters changed
        ]
    )
    K = matern52_kernel(space.features(u), None, per_column)
    assert K[0, 1] == pytest.approx(_k52(1 / 0.8**2))
    assert K[0, 2] == pytest.approx(K[0, 1])
    assert K[0, 3] == pytest.approx(_k52(1 / 0.8**2 + 1 / 1.7**2))
    # A numeric column keeps its group's lengthscale.
    assert per_column[0] == pytest.approx(0.3)


@pytest.mark.parametrize("encoding", ["onehot", "index"])
def test_regressor_and_classifier_use_the_hamming_term(encoding: str) -> None:
    space = SearchSpace(
        {"kind": CategoricalParam(("a", "b", "c")), "x": FloatParam(0.0, 1.0)},
        categorical_encoding=encoding,
    )
    rng = np.random.default_rng(0)
    u = space.sample_uniform(30, rng)
    X = space.features(u)
    y = np.sin(6 * u[:, 1]) + (u[:, 0] > 0.5)
    gp = GaussianProcessRegressor(space.feature_columns(), seed=0).fit(X, y)
    expected = column_lengthscales(gp.lengthscales_, gp.group_of_column_)
    np.testing.assert_allclose(gp._column_lengthscales, expected)
    if encoding == "onehot":
        assert expected[0] == pytest.approx(np.sqrt(2.0) * gp.lengthscales_[0])
    else:
        np.testing.assert_allclose(expected, gp.lengthscales_)
    labels = (y > np.median(y)).astype(float)
    classifier = GaussianProcessClassifier(space.feature_columns(), seed=0).fit(X, labels)
    probabilities = classifier.predict_proba(X)
    assert np.all((probabilities >= 0) & (probabilities <= 1))


def test_grouped_fit_matches_the_ungrouped_kernel_with_stretched_columns() -> None:
    space = _space()
    rng = np.random.default_rng(1)
    u = space.sample_uniform(25, rng)
    X = space.features(u)
    y = rng.normal(size=len(u))
    gp = GaussianProcessRegressor(space.feature_columns(), seed=0).fit(X, y)
    hp = gp.hyperparameters_
    ungrouped = GaussianProcessRegressor(
        optimize=False,
        hyperparameters=GPHyperparameters(
            column_lengthscales(hp.lengthscales, gp.group_of_column_),
            hp.signal_variance,
            hp.noise_variance,
            hp.mean,
        ),
    ).fit(X, y)
    X_test = space.features(space.sample_uniform(10, rng))
    np.testing.assert_allclose(ungrouped.predict(X_test)[0], gp.predict(X_test)[0], rtol=1e-9)


def test_objective_prior_mean_is_zero_only_on_categorical_and_discrete_spaces() -> None:
    discrete = _space()
    assert prior_mean(discrete, "objective") == "zero"
    assert prior_mean(discrete, "constraint:c0") == "constant"
    stepped = SearchSpace(
        {
            "x": FloatParam(0.0, 1.0, step=0.1),
            "n": IntParam(1, 100, log=True),
            "kind": CategoricalParam(("a", "b")),
        }
    )
    assert prior_mean(stepped, "objective") == "zero"
    integers = SearchSpace({"n": IntParam(1, 100, log=True), "m": IntParam(0, 9)})
    assert prior_mean(integers, "objective") == "constant"
    mixed = SearchSpace({"x": FloatParam(0.0, 1.0), "kind": CategoricalParam(("a", "b"))})
    assert prior_mean(mixed, "objective") == "constant"
