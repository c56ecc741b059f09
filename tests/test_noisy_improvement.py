"""Noisy EI and PI (Letham et al., 2019) on the GP core: the joint posterior at the incumbent
rows, the conditional closed forms against Monte Carlo and finite differences, and a real
Optuna study with the ``noisy_*`` portfolio members."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest

from bore_samplers import PortfolioSampler
from bore_samplers.acquisitions.improvement import (
    LogExpectedImprovement,
    NoisyLogImprovement,
    constrained_log_ei,
)
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.model_set import ModelSetBuilder
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.portfolio.members import make_member, resolve_portfolio
from bore_samplers.space import FloatParam, SearchSpace


def _noisy_gp(seed: int = 0) -> tuple[GaussianProcessRegressor, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((30, 3))
    y = np.sin(5.0 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_normal(30)
    gp = GaussianProcessRegressor(seed=seed).fit(X, y)
    assert gp.noise_variance_ > 1e-2  # the fit sees the noise
    return gp, X


def _near_best(gp: GaussianProcessRegressor, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(1)
    return np.clip(X[rows[:5]] + 0.08 * rng.standard_normal((5, X.shape[1])), 0.0, 1.0)


def test_latent_reference_reproduces_the_joint_posterior() -> None:
    gp, X = _noisy_gp()
    rows = np.argsort(gp.predict(X)[0])[:8]
    reference = gp.latent_reference(rows)
    assert reference.rank == 8
    queries = _near_best(gp, X, rows)
    mean, cov = gp.predict_cov(np.vstack([queries, X[rows]]))
    np.testing.assert_allclose(reference.mean, mean[5:], atol=1e-10)
    np.testing.assert_allclose(reference.factor @ reference.factor.T, cov[5:, 5:], atol=1e-10)
    *moments, weights, weights_grad = gp.predict_with_reference(queries, reference, True)
    np.testing.assert_allclose(weights @ reference.factor.T, cov[:5, 5:], atol=1e-10)
    np.testing.assert_allclose(moments[0], gp.predict(queries)[0], atol=1e-12)
    step = 1e-6
    for j in range(X.shape[1]):
        shift = np.zeros(X.shape[1])
        shift[j] = step
        up = gp.predict_with_reference(queries + shift, reference, False)[4]
        down = gp.predict_with_reference(queries - shift, reference, False)[4]
        np.testing.assert_allclose(weights_grad[:, :, j], (up - down) / (2 * step), atol=1e-6)


@pytest.mark.parametrize("kind", ["ei", "pi"])
def test_noisy_improvement_matches_monte_carlo_and_finite_differences(kind: str) -> None:
    gp, X = _noisy_gp()
    rows = np.argsort(gp.predict(X)[0])[:8]
    acquisition = NoisyLogImprovement(gp, gp.latent_reference(rows), kind)
    queries = _near_best(gp, X, rows)
    values, grad = acquisition.value_and_grad(queries)
    rng = np.random.default_rng(2)
    for i in range(2):
        mean, cov = gp.predict_cov(np.vstack([queries[i : i + 1], X[rows]]))
        draws = rng.multivariate_normal(mean, cov, size=200_000, method="eigh")
        improvement = draws[:, 1:].min(axis=1) - draws[:, 0]
        oracle = (
            np.mean(np.maximum(improvement, 0.0)) if kind == "ei" else np.mean(improvement > 0)
        )
        # 64 quasi-random draws of 8 correlated values: a few percent of error in PI, more in
        # the tail-driven EI.
        assert values[i] == pytest.approx(math.log(oracle), abs=0.25)
    step = 1e-6
    for j in range(X.shape[1]):
        shift = np.zeros(X.shape[1])
        shift[j] = step
        numeric = (acquisition(queries + shift) - acquisition(queries - shift)) / (2 * step)
        np.testing.assert_allclose(grad[:, j], numeric, rtol=1e-4, atol=1e-5)


def test_noisy_ei_does_not_reward_repeating_a_known_incumbent() -> None:
    gp, X = _noisy_gp()
    rows = np.argsort(gp.predict(X)[0])[:8]
    noisy = NoisyLogImprovement(gp, gp.latent_reference(rows), "ei")
    plug_in = LogExpectedImprovement(gp, float(gp.predict(X[rows])[0].min()))
    best = X[rows[:1]]
    # The plug-in incumbent credits re-evaluating the best row with sigma * phi(0); noisy EI
    # knows that its value there is the incumbent of every draw.
    assert noisy(best)[0] < plug_in(best)[0] - 5.0


def test_noise_free_data_give_the_plug_in_incumbent() -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    rng = np.random.default_rng(0)
    u = rng.random((12, 2))
    observations = [
        Observation(
            {"x": float(a), "y": float(b)},
            float((a - 0.3) ** 2 + (b - 0.7) ** 2),
            TrialState.COMPLETE,
        )
        for a, b in u
    ]
    history = history_from_observations(space, observations)
    models = ModelSetBuilder().fit(history, np.random.default_rng(0))
    assert models.incumbent_reference(0).rank == 0
    assert models.incumbent_reference(0) is models.incumbent_reference(0)  # computed once
    features = space.features(rng.random((50, 2)))
    np.testing.assert_array_equal(
        constrained_log_ei(models, noisy=True)(features), constrained_log_ei(models)(features)
    )


def test_noisy_members_have_names_and_run_a_real_study() -> None:
    assert [m.name for m in resolve_portfolio(["noisy_pi", "noisy_ei", "lcb"])] == [
        "noisy_pi",
        "noisy_ei",
        "lcb",
    ]
    assert make_member("noisy_ei").noisy and not make_member("ei").noisy
    noise = np.random.default_rng(0)

    def objective(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", -2.0, 3.0), trial.suggest_float("y", 0.0, 1.0)
        return (x - 1.0) ** 2 + (y - 0.3) ** 2 + 0.3 * noise.standard_normal()

    sampler = PortfolioSampler(portfolio=["noisy_pi", "noisy_ei", "lcb"], seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=25)
    params = [tuple(t.params.values()) for t in study.trials]
    assert len(set(params)) == len(params)
    best = study.best_trial.params
    assert abs(best["x"] - 1.0) < 1.0
