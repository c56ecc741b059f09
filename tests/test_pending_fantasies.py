"""Monte Carlo fantasies of pending trials for EI and PI: the fantasy reference against models
conditioned on drawn outcomes, the acquisition against Monte Carlo qEI and finite
differences, the model set's wiring, and a real Optuna study with trials in flight."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest

from bore_samplers import PortfolioSampler
from bore_samplers.acquisitions.base import ModelAverage
from bore_samplers.acquisitions.improvement import (
    LogExpectedImprovement,
    LogProbabilityOfImprovement,
    NoisyLogImprovement,
    constrained_log_ei,
    constrained_log_pi,
)
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.model_set import ModelSetBuilder
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.portfolio import ExpectedImprovement, ProbabilityOfImprovement
from bore_samplers.space import FloatParam, SearchSpace


def _believer(seed: int = 3) -> tuple[GaussianProcessRegressor, GaussianProcessRegressor, float]:
    """A GP on a wiggly 2-D function, the same GP believing its means at three pending
    points, and the best posterior mean at the observations."""
    rng = np.random.default_rng(seed)
    X = rng.random((8, 2))
    gp = GaussianProcessRegressor(seed=0).fit(X, np.sin(9.0 * X).sum(axis=1))
    pending = rng.random((3, 2))
    believer = gp.condition_on(pending, gp.predict(pending)[0])
    return gp, believer, float(gp.predict(X)[0].min())


def test_fantasy_reference_equals_conditioning_on_drawn_outcomes() -> None:
    gp, believer, _ = _believer()
    pending = believer.X_train_[-3:]
    reference = believer.fantasy_reference(3)
    assert reference.conditional and reference.rank == 3
    np.testing.assert_allclose(reference.mean, gp.predict(pending)[0], atol=1e-10)
    # The draws have the predictive covariance of the outcomes (latent plus noise).
    _, latent_cov = gp.predict_cov(pending)
    noise = gp.noise_variance_
    np.testing.assert_allclose(
        reference.factor @ reference.factor.T, latent_cov + noise * np.eye(3), atol=1e-10
    )
    queries = np.random.default_rng(0).random((6, 2))
    mean, var, _, _, weights, _ = believer.predict_with_reference(queries, reference, False)
    for e in np.random.default_rng(1).standard_normal((3, 3)):
        fantasy = gp.condition_on(pending, reference.mean + reference.factor @ e)
        fantasy_mean, fantasy_var = fantasy.predict(queries)[:2]
        np.testing.assert_allclose(fantasy_mean, mean + weights @ e, atol=1e-10)
        np.testing.assert_allclose(fantasy_var, var, atol=1e-12)


def test_fantasy_reference_rejects_a_bad_row_count() -> None:
    _, believer, _ = _believer()
    for n_rows in (0, len(believer.X_train_) + 1):
        with pytest.raises(ValueError, match="n_rows"):
            believer.fantasy_reference(n_rows)


@pytest.mark.parametrize("kind", ["ei", "pi"])
def test_fantasized_improvement_matches_monte_carlo_qei(kind: str) -> None:
    gp, believer, incumbent = _believer()
    reference = believer.fantasy_reference(3)
    acquisition = NoisyLogImprovement(believer, reference, kind, incumbent=incumbent)
    pending = believer.X_train_[-3:]
    # Where improvement is likely enough to matter: the acquisition's peak, and beside two
    # pending points.
    queries = np.array(
        [[0.5, 0.55], [0.53, 0.51], pending[0] + [0.0, 0.05], pending[2] + [0.05, 0.0]]
    )
    values, grad = acquisition.value_and_grad(queries)
    rng = np.random.default_rng(2)
    for i, query in enumerate(queries):
        mean, cov = gp.predict_cov(np.vstack([query, pending]))
        cov[1:, 1:] = reference.factor @ reference.factor.T
        draws = rng.multivariate_normal(mean, cov, size=400_000, method="eigh")
        # qEI's marginal gain: improvement on the best of the incumbent and the pending draws.
        improvement = np.minimum(incumbent, draws[:, 1:].min(axis=1)) - draws[:, 0]
        oracle = (
            np.mean(np.maximum(improvement, 0.0)) if kind == "ei" else np.mean(improvement > 0)
        )
        assert values[i] == pytest.approx(math.log(oracle), abs=0.15)
    step = 1e-6
    for j in range(2):
        shift = np.zeros(2)
        shift[j] = step
        numeric = (acquisition(queries + shift) - acquisition(queries - shift)) / (2 * step)
        np.testing.assert_allclose(grad[:, j], numeric, rtol=1e-4, atol=1e-6)


def _history_with_pending(n_pending: int):
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    rng = np.random.default_rng(0)
    observations = [
        Observation(
            {"x": float(a), "y": float(b)},
            float((a - 0.3) ** 2 + (b - 0.7) ** 2),
            TrialState.COMPLETE,
        )
        for a, b in rng.random((10, 2))
    ]
    observations += [
        Observation({"x": 0.3 + 0.02 * k, "y": 0.7}, None, TrialState.RUNNING)
        for k in range(n_pending)
    ]
    return space, history_from_observations(space, observations)


def test_model_set_draws_the_pending_outcomes_for_ei_and_pi() -> None:
    space, history = _history_with_pending(2)
    models = ModelSetBuilder().fit(history, np.random.default_rng(0))
    assert models.n_pending == 2
    model = models.objective[0]
    complete = model.X_train_[:10]
    assert models.observed_incumbents[0] == pytest.approx(model.predict(complete)[0].min())
    # The believed outcomes beside the optimum count for the Kriging believer's incumbent only.
    assert models.incumbents[0] <= models.observed_incumbents[0]
    assert models.pending_reference(0) is models.pending_reference(0)  # computed once
    for build, plug_in in (
        (constrained_log_ei, LogExpectedImprovement),
        (constrained_log_pi, LogProbabilityOfImprovement),
    ):
        fantasized = build(models, fantasize=True)
        assert isinstance(fantasized, ModelAverage)
        (member,) = fantasized.members
        assert isinstance(member, NoisyLogImprovement) and member.reference.conditional
        assert member.incumbent == models.observed_incumbents[0]
        (believed,) = build(models).members
        assert isinstance(believed, plug_in)
    # Without pending points nothing changes: the plug-in incumbent.
    _, complete_only = _history_with_pending(0)
    models = ModelSetBuilder().fit(complete_only, np.random.default_rng(0))
    assert models.n_pending == 0 and models.observed_incumbents == []
    features = space.features(np.random.default_rng(1).random((20, 2)))
    np.testing.assert_array_equal(
        constrained_log_ei(models)(features), constrained_log_ei(models, fantasize=True)(features)
    )


def test_fantasizing_members_have_names_and_run_a_study_with_trials_in_flight() -> None:
    assert ProbabilityOfImprovement(fantasize=True).name == "pi(fantasize=True)"
    assert ExpectedImprovement().name == "ei"
    fantasies = [
        ProbabilityOfImprovement(fantasize=True),
        ExpectedImprovement(fantasize=True),
        "lcb",
    ]

    def objective(x: float, y: float) -> float:
        return (x - 0.3) ** 2 + (y - 0.7) ** 2

    study = optuna.create_study(sampler=PortfolioSampler(portfolio=fantasies, seed=0))
    for _ in range(6):  # four trials in flight at every ask, as four workers have
        trials = [study.ask() for _ in range(4)]
        for trial in trials:
            x, y = trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)
            study.tell(trial, objective(x, y))
    params = [tuple(t.params.values()) for t in study.trials]
    assert len(set(params)) == len(params) == 24
    assert study.best_value < 0.05
