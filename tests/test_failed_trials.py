"""Which FAILED trials the samplers learn from: ``failed_trials`` and stale heartbeats.

A trial whose objective raised is a crash to learn from (``failed_trials="bad"``, the default)
or a transient failure to leave out (``"ignore"``). A trial that Optuna's heartbeat monitor
failed (its worker died or stalled) is never learned from: the storage is real (SQLite through
``RDBStorage`` with heartbeats) and the stale trial is failed by Optuna's own
``fail_stale_trials``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState as OptunaTrialState

from bore_samplers import (
    BOREProposer,
    BORESampler,
    CMESProposer,
    CMESSampler,
    Observation,
    PortfolioProposer,
    PortfolioSampler,
    SearchSpace,
    TrialState,
)
from bore_samplers.integrations.ray import BORESearch
from bore_samplers.observations import History
from bore_samplers.space import FloatParam

SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
GRACE_PERIOD_S = 1


def _quadratic(trial: optuna.Trial) -> float:
    x, y = trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)
    if x > 0.9:
        raise MemoryError("out of memory")  # a crash the objective reports
    return (x - 0.3) ** 2 + (y - 0.6) ** 2


def _fail_by_heartbeat(study: optuna.Study, params: dict[str, float]) -> int:
    """A worker asks, records heartbeats, then dies; another worker fails the trial as stale."""
    study.enqueue_trial(params)
    trial = study.ask()
    for name in params:
        trial.suggest_float(name, 0.0, 1.0)
    study._storage.record_heartbeat(trial._trial_id)
    time.sleep(GRACE_PERIOD_S + 1.5)  # longer than the grace period: the heartbeat is stale
    optuna.storages.fail_stale_trials(study)
    (stale,) = [t for t in study.get_trials() if t.number == trial.number]
    assert stale.state == OptunaTrialState.FAIL
    return trial.number


@pytest.mark.filterwarnings("ignore:Heartbeat of storage is supposed to be used")
@pytest.mark.parametrize("make", [BORESampler, CMESSampler, PortfolioSampler])
def test_a_trial_failed_by_a_stale_heartbeat_is_left_out(make: type, tmp_path: Path) -> None:
    storage = optuna.storages.RDBStorage(
        f"sqlite:///{tmp_path / 'study.db'}", heartbeat_interval=1, grace_period=GRACE_PERIOD_S
    )
    sampler = make(n_startup_trials=4, seed=0)
    study = optuna.create_study(storage=storage, sampler=sampler)
    study.enqueue_trial({"x": 0.95, "y": 0.5})  # the objective raises: a reported crash
    study.optimize(_quadratic, n_trials=6, catch=(MemoryError,))
    stale = _fail_by_heartbeat(study, {"x": 0.1, "y": 0.1})
    study.optimize(_quadratic, n_trials=1, catch=(MemoryError,))  # proposals go on

    by_params = {
        (obs.params["x"], obs.params["y"]): obs.state
        for obs in make(seed=1).observations(study)  # a fresh sampler: read from storage only
    }
    assert by_params[(0.95, 0.5)] is TrialState.FAILED  # learned from
    assert (0.1, 0.1) not in by_params  # lost to the heartbeat: retried, not learned from
    assert study.trials[stale].state == OptunaTrialState.FAIL
    assert len(by_params) == len(study.trials) - 1


def test_without_heartbeats_every_failed_trial_is_a_crash() -> None:
    study = optuna.create_study(sampler=BORESampler(seed=0))
    study.enqueue_trial({"x": 0.95, "y": 0.5})
    study.optimize(_quadratic, n_trials=3, catch=(MemoryError,))
    # A trial failed outside this sampler (told FAIL by another process, say) still counts.
    trial = study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)})
    optuna.create_study(
        study_name=study.study_name, storage=study._storage, load_if_exists=True
    ).tell(trial, state=OptunaTrialState.FAIL)
    states = [obs.state for obs in BORESampler(seed=1).observations(study)]
    assert states.count(TrialState.FAILED) == 2


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


def _observations_with_crashes() -> list[Observation]:
    rng = np.random.default_rng(0)
    observations = []
    for x, y in rng.random((14, 2)):
        if x > 0.7:
            observations.append(Observation({"x": x, "y": y}, None, TrialState.FAILED))
        else:
            observations.append(Observation({"x": x, "y": y}, (x - 0.3) ** 2 + y))
    return observations


@pytest.mark.parametrize("make", [_BORE, _CMES, _Portfolio])
@pytest.mark.parametrize("failed_trials", ["bad", "ignore"])
def test_failed_trials_option_of_every_proposer(make: type, failed_trials: str) -> None:
    observations = _observations_with_crashes()
    n_failed = sum(obs.state is TrialState.FAILED for obs in observations)
    assert 0 < n_failed < len(observations)
    proposer = make(n_startup=5, seed=0, failed_trials=failed_trials)
    config = proposer.propose(SPACE, observations)
    assert set(config) == {"x", "y"}
    failed_seen = int(proposer.seen.mask(TrialState.FAILED).sum())
    assert failed_seen == (n_failed if failed_trials == "bad" else 0)


@pytest.mark.parametrize("make", [BORESampler, CMESSampler, PortfolioSampler])
def test_ignored_failures_do_not_stall_the_start_up_design(make: type) -> None:
    # Ignored failures once left the Sobol position where it was, so the same crashing
    # configuration was proposed again and again (38 of 40 trials in a Tune example).
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        if x > 0.3:
            raise RuntimeError("out of memory")
        return x

    study = optuna.create_study(sampler=make(failed_trials="ignore", seed=0))
    study.optimize(objective, n_trials=12, catch=(RuntimeError,))
    xs = [t.params["x"] for t in study.trials]
    assert len(set(xs)) == len(xs)


@pytest.mark.parametrize("make", [BORESampler, CMESSampler, PortfolioSampler])
def test_an_unknown_failed_trials_choice_is_named(make: type) -> None:
    with pytest.raises(ValueError, match="failed_trials must be one of"):
        make(failed_trials="retry")


def test_ray_searcher_ignores_errored_trials_when_asked() -> None:
    searcher = BORESearch(metric="loss", mode="min", seed=0, failed_trials="ignore")
    assert searcher.proposer.failed_trials == "ignore"
    with pytest.raises(ValueError, match="failed_trials must be one of"):
        BORESearch(metric="loss", mode="min", failed_trials="never")
