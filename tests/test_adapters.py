"""The generic adapters: any proposer as an Optuna sampler or a Ray Tune searcher, and the
publication of proposals between workers (bore_samplers.integrations.publication)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.testing.pytest_samplers import BasicSamplerTestCase, RelativeSamplerTestCase

from bore_samplers import BOREProposer, Proposer
from bore_samplers.integrations.optuna import ProposerSampler
from bore_samplers.integrations.publication import (
    SYSTEM_ATTR_MAX_LENGTH,
    holds,
    publish,
    read_published,
    trials_if_taken,
)
from bore_samplers.observations import History, TrialState


class ShrinkingBoxProposer(Proposer):
    """A user's own proposer: uniform points in a box around the best observation."""

    name = "shrinking_box"

    def propose_from_model(self, history: History) -> np.ndarray:
        complete = history.mask(TrialState.COMPLETE)
        best = history.u[complete][np.argmin(history.values[complete])]
        width = 0.5 / np.sqrt(complete.sum())
        candidate = best + self.rng.uniform(-width, width, history.space.n_dims)
        return history.space.snap(candidate[None, :])[0]


def _quadratic(trial: optuna.Trial) -> float:
    return (trial.suggest_float("x", -2.0, 2.0) - 0.5) ** 2 + trial.suggest_int("n", 0, 9) / 10


def test_a_users_own_proposer_runs_a_study_through_the_generic_sampler() -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = ProposerSampler(ShrinkingBoxProposer(n_startup=4, seed=0))
    study = optuna.create_study(sampler=sampler)
    study.optimize(_quadratic, n_trials=20)
    assert sampler.proposer.name == "shrinking_box"
    published = [t for t in study.trials if "shrinking_box:relative_params:0" in t.system_attrs]
    # Every trial but the first (no search space yet) came from the proposer: its Sobol
    # start-up points, then its model.
    assert len(published) == 19


def test_the_generic_sampler_checks_its_proposer() -> None:
    with pytest.raises(TypeError, match="Proposer"):
        ProposerSampler(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="gamma"):
        ProposerSampler(BOREProposer(gamma=1.5))
    with pytest.raises(ValueError, match="n_startup"):
        ProposerSampler(ShrinkingBoxProposer(n_startup=-1))


class TestUsersProposerBasic(BasicSamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Any:
        return lambda: ProposerSampler(
            ShrinkingBoxProposer(n_startup=2), warn_independent_sampling=False
        )


class TestUsersProposerRelative(RelativeSamplerTestCase):
    @pytest.fixture
    def sampler(self) -> Any:
        return lambda: ProposerSampler(
            ShrinkingBoxProposer(n_startup=2), warn_independent_sampling=False
        )


def test_the_generic_searcher_takes_any_proposer() -> None:
    ray_search = pytest.importorskip("bore_samplers.integrations.ray")
    from ray import tune

    searcher = ray_search.ProposerSearch(
        ShrinkingBoxProposer(n_startup=3, seed=0),
        space={"x": tune.uniform(-2.0, 2.0)},
        metric="loss",
        mode="min",
    )
    for i in range(8):
        config = searcher.suggest(f"t{i}")
        searcher.on_trial_complete(f"t{i}", {"loss": (config["x"] - 0.5) ** 2})
    assert searcher.proposer.name == "shrinking_box"
    assert len(searcher.observations) == 8


# ------------------------------------------------------------------------------ publication
def _study_with_running_trial() -> tuple[optuna.Study, optuna.trial.FrozenTrial]:
    study = optuna.create_study()
    trial = study.ask()  # running, nothing suggested yet
    return study, study._storage.get_trial(trial._trial_id)


def test_a_payload_round_trips_through_chunks() -> None:
    study, trial = _study_with_running_trial()
    payload = {"x": 0.25, "text": "a" * (3 * SYSTEM_ATTR_MAX_LENGTH)}
    n_chunks = publish(study, trial, "key", payload)
    assert n_chunks == 4
    stored = study._storage.get_trial(trial._trial_id)
    assert all(len(v) <= SYSTEM_ATTR_MAX_LENGTH for v in stored.system_attrs.values())
    assert read_published(stored, "key") == payload
    # A shorter payload republished empties the leftover chunks: the same JSON text.
    assert publish(study, stored, "key", {"x": 0.5}, previous_chunks=n_chunks) == n_chunks
    assert read_published(study._storage.get_trial(trial._trial_id), "key") == {"x": 0.5}


def test_a_torn_write_reads_as_nothing() -> None:
    study, trial = _study_with_running_trial()
    study._storage.set_trial_system_attr(trial._trial_id, "key:0", '{"x": 0.')
    assert read_published(study._storage.get_trial(trial._trial_id), "key") == {}
    assert read_published(trial, "absent") == {}


def test_a_running_trial_holds_its_published_proposal() -> None:
    study, trial = _study_with_running_trial()
    assert not holds(trial, {"x": 0.25}, "key")
    publish(study, trial, "key", {"x": 0.25})
    stored = study._storage.get_trial(trial._trial_id)
    assert holds(stored, {"x": 0.25}, "key")
    assert not holds(stored, {"x": 0.5}, "key")


def test_the_later_trial_gives_a_shared_configuration_up() -> None:
    study = optuna.create_study()
    first, second = study.ask(), study.ask()
    first_t, second_t = (study._storage.get_trial(t._trial_id) for t in (first, second))
    for trial in (first_t, second_t):
        publish(study, trial, "key", {"x": 0.75})
    # The larger number gives up at once: the smaller one holds the configuration.
    assert trials_if_taken(study, second_t, {"x": 0.75}, [], patience=5.0, key="key")
    # The smaller number waits for the larger one to give up, and keeps it when it does.
    kept: list[Any] = []
    waiter = threading.Thread(
        target=lambda: kept.append(
            trials_if_taken(study, first_t, {"x": 0.75}, [], patience=30.0, key="key")
        )
    )
    waiter.start()
    publish(study, second_t, "key", {"x": 0.125}, previous_chunks=1)
    waiter.join()
    assert kept == [None]
    # A configuration nobody else holds is not taken.
    assert trials_if_taken(study, first_t, {"x": 0.3}, [], patience=1.0, key="key") is None


def test_the_intersection_search_space_matches_optunas_at_every_step() -> None:
    """Same intersection as Optuna's own class, incrementally, on dynamic ranges, categorical
    NaN choices, pruned, running and failed trials."""
    from optuna.distributions import CategoricalDistribution as Categorical
    from optuna.distributions import FloatDistribution as Float
    from optuna.distributions import IntDistribution as Int
    from optuna.search_space import IntersectionSearchSpace as OptunaIntersection
    from optuna.trial import TrialState as State
    from optuna.trial import create_trial

    from bore_samplers.integrations.optuna_base import IntersectionSearchSpace

    nan = float("nan")
    kinds = [
        {"x": Float(0, 1), "c": Categorical([nan, "a"]), "n": Int(1, 9)},
        {"x": Float(0, 1), "c": Categorical([nan, "a"]), "n": Int(1, 9, log=True)},
        {"x": Float(0, 2), "c": Categorical([nan, "a"])},
        {"c": Categorical([float("nan"), "a"]), "n": Int(1, 9)},  # another NaN object
    ]
    values = {"x": 0.5, "c": "a", "n": 3}
    rng = np.random.default_rng(0)
    study = optuna.create_study()
    for include_pruned in (False, True):
        ours, theirs = IntersectionSearchSpace(include_pruned), OptunaIntersection(include_pruned)
        for step in range(40):
            distributions = kinds[int(rng.integers(len(kinds))) if step > 8 else 0]
            params = {name: values[name] for name in distributions}
            state = [State.COMPLETE, State.PRUNED, State.FAIL, State.RUNNING][rng.integers(4)]
            study.add_trial(
                create_trial(
                    params=params,
                    distributions=distributions,
                    value=0.0 if state is State.COMPLETE else None,
                    state=state,
                )
            )
            assert repr(ours.calculate(study)) == repr(theirs.calculate(study))
    with pytest.raises(ValueError, match="single study"):
        ours.calculate(optuna.create_study(storage=study._storage))
