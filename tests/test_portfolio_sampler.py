"""PortfolioSampler: Optuna's conformance suites and real studies (storages, processes, attrs)."""

from __future__ import annotations

import json
import math
import multiprocessing
import pickle
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)
from optuna.trial import TrialState

from bore_samplers import PortfolioSampler
from bore_samplers.proposers.base import ModelFallbackWarning
from bore_samplers.proposers.portfolio.members import (
    BORENominee,
    ExpectedImprovement,
    MaxValueEntropySearch,
)

# A hang guard, not a speed check: generous, so that a busy machine never trips it.
HANG_GUARD_S = 600

optuna.logging.set_verbosity(optuna.logging.WARNING)

# ---------------------------------------------------------------------------- conformance
# n_startup_trials=2 makes the suites' short studies reach the GP; the mixed portfolio uses a
# small y* discretisation and BORE, so that nominating members are covered too.
_CONFIGS = [
    pytest.param(dict(n_startup_trials=2), id="no-past-bo"),
    pytest.param(
        dict(
            n_startup_trials=2,
            memory=1.0,
            normalize=False,
            portfolio=[ExpectedImprovement(), MaxValueEntropySearch(n_discretization=16), "bore"],
        ),
        id="mixed-gp-hedge",
    ),
    pytest.param(dict(n_startup_trials=2, selection="entropy"), id="entropy-search-portfolio"),
    pytest.param(
        dict(n_startup_trials=2, portfolio=["noisy_pi", "noisy_ei", "lcb"]), id="noisy-incumbent"
    ),
]


class _PortfolioSamplerFixture:
    @pytest.fixture(params=_CONFIGS)
    def sampler(self, request: pytest.FixtureRequest) -> Callable[[], BaseSampler]:
        return lambda: PortfolioSampler(warn_independent_sampling=False, **request.param)


class TestPortfolioBasic(_PortfolioSamplerFixture, BasicSamplerTestCase):
    pass


class TestPortfolioRelative(_PortfolioSamplerFixture, RelativeSamplerTestCase):
    pass


# Multi-objective studies are supported (scalarised by the proposer).
class TestPortfolioMultiObjective(_PortfolioSamplerFixture, MultiObjectiveSamplerTestCase):
    pass


# ---------------------------------------------------------------------------- real studies
@pytest.fixture
def _no_model_fallback() -> Iterator[None]:
    # A silent fallback to independent sampling would make the tests below vacuous.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        yield


def quadratic(trial: optuna.Trial) -> float:
    x, y = trial.suggest_float("x", -2.0, 3.0), trial.suggest_float("y", 0.0, 1.0)
    return (x - 1.0) ** 2 + (y - 0.3) ** 2 + 0.1 * math.sin(5 * x)


def _records(study: optuna.Study) -> dict[int, dict]:
    out = {}
    for trial in study.trials:
        chunks, i = [], 0
        while (chunk := trial.system_attrs.get(f"portfolio:record:{i}")) is not None:
            chunks.append(chunk)
            i += 1
        if chunks:
            out[trial.number] = json.loads("".join(chunks))
    return out


@pytest.mark.usefixtures("_no_model_fallback")
@pytest.mark.parametrize("storage_kind", ["inmemory", "sqlite"])
def test_real_study_exposes_probabilities_and_arm(storage_kind: str, tmp_path: Path) -> None:
    storage = None if storage_kind == "inmemory" else f"sqlite:///{tmp_path / 'study.db'}"
    sampler = PortfolioSampler(seed=0)
    study = optuna.create_study(storage=storage, sampler=sampler)
    empty = sampler.reward_table(study)  # nothing finished yet
    assert empty.names == ["pi", "ei", "lcb"] and not empty.rewards.any()
    study.optimize(quadratic, n_trials=16)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert study.best_value < 0.0  # the minimum is about -0.096 near x = 0.95
    records = _records(study)
    assert sorted(records) == list(range(5, 16))  # after the random first and 4 LHS trials
    for number, record in records.items():
        attrs = study.trials[number].user_attrs
        probabilities = attrs["portfolio:probabilities"]
        assert list(probabilities) == ["pi", "ei", "lcb"]
        assert sum(probabilities.values()) == pytest.approx(1.0)
        assert attrs["portfolio:arm"] == record["arm"] in probabilities
        assert list(attrs["portfolio:rewards"].values()) == record["rewards"]
        assert study.trials[number].params == record["nominees"][record["arm"]]
    # The last table the sampler rebuilds from the study matches what a new trial would use.
    table = sampler.reward_table(study)
    assert table.event_rows == list(range(5, 16))


def test_maximize_direction_rewards_high_values() -> None:
    study = optuna.create_study(direction="maximize", sampler=PortfolioSampler(seed=1))
    study.optimize(lambda t: -quadratic(t), n_trials=14)
    assert study.best_value > 0.0


def test_records_match_a_fresh_recomputation_with_pending_trials(tmp_path: Path) -> None:
    """Two study objects (two "workers") ask and tell out of order on one SQLite study.

    Before every ask, a brand-new sampler rebuilds the reward table from the storage alone;
    the worker's proposal (with its warm caches) must have used exactly that table.
    """
    url = f"sqlite:///{tmp_path / 'pending.db'}"
    kwargs = dict(n_startup_trials=3)
    first = optuna.create_study(storage=url, sampler=PortfolioSampler(seed=0, **kwargs))
    second = optuna.load_study(
        study_name=first.study_name, storage=url, sampler=PortfolioSampler(seed=1, **kwargs)
    )
    first.optimize(quadratic, n_trials=4)
    values: dict[int, float] = {}
    pending: list[tuple[optuna.Study, optuna.Trial]] = []
    for step in range(12):
        worker = (first, second)[step % 2]
        expected = PortfolioSampler(**kwargs).reward_table(worker).rewards
        trial = worker.ask()
        values[trial.number] = quadratic(trial)  # the first suggest makes the proposal
        record = _records(worker)[trial.number]
        np.testing.assert_allclose(record["rewards"], expected, rtol=1e-9)
        pending.append((worker, trial))
        if step % 3 == 2:  # finish the two oldest: one or two trials stay pending
            for _ in range(2):
                owner, oldest = pending.pop(0)
                owner.tell(oldest, values[oldest.number])
    assert len(first.get_trials(states=(TrialState.RUNNING,))) == len(pending) > 0
    assert PortfolioSampler(**kwargs).reward_table(first).event_rows  # events were folded in


def _worker(url: str, study_name: str, seed: int, n_trials: int, total: int, out: str) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = PortfolioSampler(n_startup_trials=3, seed=seed)
    study = optuna.load_study(study_name=study_name, storage=url, sampler=sampler)
    study.optimize(quadratic, n_trials=n_trials)
    deadline = time.monotonic() + HANG_GUARD_S
    while len(study.get_trials(states=(TrialState.COMPLETE,))) < total:
        if time.monotonic() > deadline:
            raise TimeoutError("the other worker did not finish")
        time.sleep(0.05)
    table = sampler.reward_table(study)  # with this process's warm caches
    Path(out).write_text(json.dumps({"rewards": table.rewards.tolist(), "rows": table.event_rows}))


def test_two_processes_share_one_reward_table(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    optuna.create_study(study_name="shared", storage=url)
    context = multiprocessing.get_context("spawn")
    outputs = [tmp_path / f"worker{seed}.json" for seed in (0, 1)]
    workers = [
        context.Process(target=_worker, args=(url, "shared", seed, 7, 14, str(out)))
        for seed, out in zip((0, 1), outputs, strict=True)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=240)
        assert worker.exitcode == 0
    study = optuna.load_study(study_name="shared", storage=url)
    assert len(study.trials) == 14 and all(t.state == TrialState.COMPLETE for t in study.trials)
    records = _records(study)
    assert len(records) >= 8  # both processes made model-based proposals
    fresh = PortfolioSampler(n_startup_trials=3).reward_table(study)  # one process, from storage
    assert fresh.event_rows == sorted(records)
    for out in outputs:
        reported = json.loads(out.read_text())
        assert reported["rows"] == fresh.event_rows
        np.testing.assert_allclose(reported["rewards"], fresh.rewards, rtol=1e-9)


def test_seeded_runs_reproduce_and_pickle() -> None:
    runs = []
    for _ in range(2):
        study = optuna.create_study(sampler=PortfolioSampler(seed=5))
        study.optimize(quadratic, n_trials=9)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]
    restored = pickle.loads(pickle.dumps(study.sampler))
    assert isinstance(restored, PortfolioSampler)
    study.sampler = restored
    study.optimize(quadratic, n_trials=2)
    assert len(study.trials) == 11 and "portfolio:arm" in study.trials[-1].user_attrs


def test_n_jobs_two_threads() -> None:
    study = optuna.create_study(sampler=PortfolioSampler(seed=0))
    study.optimize(quadratic, n_trials=12, n_jobs=2)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    params = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(params)) == len(params)


def test_constraints_enter_the_study() -> None:
    def constrained(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        trial.set_constraint("budget", x + y - 1.0)
        return (x - 0.8) ** 2 + (y - 0.8) ** 2  # constrained optimum 0.18 at (0.5, 0.5)

    study = optuna.create_study(sampler=PortfolioSampler(seed=0, n_startup_trials=6))
    study.optimize(constrained, n_trials=20)
    assert study.best_trial.constraints["budget"] <= 0 and study.best_value < 0.3


def test_failed_trials_train_the_crash_model() -> None:
    def crashes_outside(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        if x + y > 1.0:
            raise MemoryError("out of memory")  # the trial is FAILED: binary feedback
        return (x - 0.8) ** 2 + (y - 0.8) ** 2  # best 0.18 at (0.5, 0.5)

    study = optuna.create_study(sampler=PortfolioSampler(seed=0, n_startup_trials=6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        study.optimize(crashes_outside, n_trials=16, catch=(MemoryError,))
    # Seed 0's first 7 trials all crash; with fewer than 2 values the next ones are uniform
    # (documented fallback), then the GP members take over, crash model included.
    model_trials = [t for t in study.trials if "portfolio:arm" in t.user_attrs]
    assert len(model_trials) >= 5
    assert study.best_value < 0.4


def test_bad_settings_are_refused() -> None:
    # Multi-objective studies are accepted: tests/test_multi_objective_studies.py.
    for bad in (
        dict(portfolio=["ei", "ucb"]),
        dict(eta=-1.0),
        dict(memory=2.0),
        dict(portfolio=[BORENominee(classifier="svm")]),
    ):
        with pytest.raises(ValueError):
            PortfolioSampler(**bad)
