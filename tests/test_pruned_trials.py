"""What the samplers learn from PRUNED trials: ``pruned_trials``.

A trial a pruner stopped is evidence that its region is bad (``pruned_trials="bad"``, the
default of every proposer) or is left out (``"ignore"``). Left out, it leaves no trace in a
GP's data, and the region's prior uncertainty drew the GP samplers back to be pruned again;
``benchmarks.pruning`` measures the difference under Optuna's MedianPruner.
"""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from bore_samplers import (
    BinaryOutcomeProposer,
    BOREProposer,
    CMESProposer,
    CMESSampler,
    Observation,
    PortfolioProposer,
    PortfolioSampler,
    SearchSpace,
    TrialState,
)
from bore_samplers.observations import History, history_from_observations
from bore_samplers.space import FloatParam

SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})


class _RecordingMixin:
    """Keeps the history each model-based proposal was made from."""

    def propose_from_model(self, history: History) -> np.ndarray:
        self.seen = history
        return super().propose_from_model(history)  # type: ignore[misc]


class _BORE(_RecordingMixin, BOREProposer):
    pass


class _CMES(_RecordingMixin, CMESProposer):
    pass


class _Portfolio(_RecordingMixin, PortfolioProposer):
    def propose_from_model_with_record(self, history: History) -> tuple[np.ndarray, dict]:
        self.seen = history
        return super().propose_from_model_with_record(history)


class _Binary(_RecordingMixin, BinaryOutcomeProposer):
    pass


def _observations_with_pruned(binary: bool = False) -> list[Observation]:
    """Trials with ``x > 0.7`` were pruned (some with a last intermediate value, some not)."""
    rng = np.random.default_rng(0)
    observations = []
    for i, (x, y) in enumerate(rng.random((16, 2))):
        params = {"x": x, "y": y}
        if x > 0.7:
            observations.append(Observation(params, None if i % 2 else 5.0, TrialState.PRUNED))
        elif binary:
            observations.append(Observation(params, float(y > 0.5)))
        else:
            observations.append(Observation(params, (x - 0.3) ** 2 + (y - 0.6) ** 2))
    return observations


@pytest.mark.parametrize("make", [_BORE, _CMES, _Portfolio, _Binary])
@pytest.mark.parametrize("pruned_trials", ["bad", "ignore"])
def test_pruned_trials_option_of_every_proposer(make: type, pruned_trials: str) -> None:
    observations = _observations_with_pruned(binary=make is _Binary)
    n_pruned = sum(obs.state is TrialState.PRUNED for obs in observations)
    assert 0 < n_pruned < len(observations)
    proposer = make(n_startup=5, seed=0, pruned_trials=pruned_trials)
    config = proposer.propose(SPACE, observations)
    assert set(config) == {"x", "y"}
    pruned_seen = int(proposer.seen.mask(TrialState.PRUNED).sum())
    assert pruned_seen == (n_pruned if pruned_trials == "bad" else 0)


@pytest.mark.parametrize("make", [BOREProposer, CMESProposer, PortfolioProposer])
def test_an_unknown_pruned_trials_choice_is_named(make: type) -> None:
    with pytest.raises(ValueError, match="pruned_trials must be one of"):
        make(pruned_trials="retry").validate()


def test_pruned_trials_train_the_gp_crash_classifier() -> None:
    history = history_from_observations(SPACE, _observations_with_pruned())
    models = CMESProposer(seed=0).model_builder().fit(history, np.random.default_rng(0))
    assert models.crash is not None
    # The objective GP is trained on the complete trials only.
    assert len(models.objective[0].X_train_) == int(history.mask(TrialState.COMPLETE).sum())
    latent = models.crash.predict_latent(SPACE.features(np.array([[0.2, 0.5], [0.9, 0.5]])))[0]
    assert latent[1] > latent[0]  # pruned (the positive class) on the right


def test_binary_outcomes_count_a_pruned_trial_as_a_non_target_outcome() -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0)})
    successes = [Observation({"x": x}, 0.0) for x in np.linspace(0.0, 0.4, 8)]
    pruned = [Observation({"x": x}, None, TrialState.PRUNED) for x in np.linspace(0.6, 1.0, 8)]
    probe = [{"x": 0.9}]
    options = {"n_candidates": 256, "n_restarts": 2, "seed": 0}
    bad = BinaryOutcomeProposer(**options).target_probability(space, successes + pruned, probe)
    ignore = BinaryOutcomeProposer(pruned_trials="ignore", **options)
    ignored = ignore.target_probability(space, successes + pruned, probe)
    assert bad[0] < 0.3 < ignored[0]


@pytest.mark.parametrize("make", [CMESSampler, PortfolioSampler])
@pytest.mark.parametrize("seed", [0, 1])
def test_gp_samplers_leave_a_region_where_trials_get_pruned(make: type, seed: int) -> None:
    # Left out, the pruned trials drew 12-14 of the 20 model-based trials of cMES back into
    # x > 0.6 (seeds 0 and 1), to be pruned again.
    def objective(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)
        trial.report(x, 0)
        if x > 0.6:
            raise optuna.TrialPruned()
        return (x - 0.3) ** 2 + (y - 0.6) ** 2

    study = optuna.create_study(sampler=make(seed=seed))
    study.optimize(objective, n_trials=30)
    model_based = study.trials[10:]
    assert sum(t.state == optuna.trial.TrialState.PRUNED for t in model_based) <= 4
