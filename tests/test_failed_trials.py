"""Which FAILED and PRUNED trials the samplers learn from: ``failed_trials``,
``pruned_trials`` and stale heartbeats.

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
    BinaryOutcomeProposer,
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
from bore_samplers.observations import History, history_from_observations
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


def _check_state_option(
    make: type, option: str, choice: str, observations: list[Observation], state: TrialState
) -> None:
    """A proposal with ``option=choice`` sees the observations in ``state`` for ``"bad"``
    and none of them for ``"ignore"``, and still proposes a full configuration."""
    n_in_state = sum(obs.state is state for obs in observations)
    assert 0 < n_in_state < len(observations)
    proposer = make(n_startup=5, seed=0, **{option: choice})
    config = proposer.propose(SPACE, observations)
    assert set(config) == {"x", "y"}
    seen = int(proposer.seen.mask(state).sum())
    assert seen == (n_in_state if choice == "bad" else 0)


@pytest.mark.parametrize("make", [_BORE, _CMES, _Portfolio])
@pytest.mark.parametrize("failed_trials", ["bad", "ignore"])
def test_failed_trials_option_of_every_proposer(make: type, failed_trials: str) -> None:
    _check_state_option(
        make, "failed_trials", failed_trials, _observations_with_crashes(), TrialState.FAILED
    )


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
    pytest.importorskip("ray")
    from bore_samplers.integrations.ray import BORESearch

    searcher = BORESearch(metric="loss", mode="min", seed=0, failed_trials="ignore")
    assert searcher.proposer.failed_trials == "ignore"
    with pytest.raises(ValueError, match="failed_trials must be one of"):
        BORESearch(metric="loss", mode="min", failed_trials="never")


# ------------------------------------------------------------------------------ pruned trials
# A trial a pruner stopped is evidence that its region is bad (``pruned_trials="bad"``, the
# default of every proposer) or is left out (``"ignore"``). Left out, it leaves no trace in a
# GP's data, and the region's prior uncertainty drew the GP samplers back to be pruned again;
# a retired benchmark measured the difference under Optuna's MedianPruner (docs/benchmarks.md).


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
    _check_state_option(make, "pruned_trials", pruned_trials, observations, TrialState.PRUNED)


@pytest.mark.parametrize("make", [BOREProposer, CMESProposer, PortfolioProposer])
def test_an_unknown_pruned_trials_choice_is_named(make: type) -> None:
    with pytest.raises(ValueError, match="pruned_trials must be one of"):
        make(pruned_trials="retry").validate()


def test_pruned_trials_train_the_gp_crash_classifier() -> None:
    history = history_from_observations(SPACE, _observations_with_pruned())
    models = CMESProposer(seed=0).model_builder().fit(history, np.random.default_rng(0))
    assert models.crash is not None
    # The objective GP learns from the complete trials only; at the pruned ones it believes its
    # own mean, which tells nothing about their values but spends the uncertainty there.
    pruned = SPACE.features(history.u[history.mask(TrialState.PRUNED)])
    n_complete = int(history.mask(TrialState.COMPLETE).sum())
    assert len(models.objective[0].X_train_) == n_complete + len(pruned)
    assert np.all(models.objective[0].predict(pruned)[1] < 1e-2)
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
    assert sum(t.state == OptunaTrialState.PRUNED for t in model_based) <= 4
