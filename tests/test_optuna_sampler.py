"""BORESampler in real Optuna studies: storages, parallel workers, pickling, seeds, bad input."""

from __future__ import annotations

import json
import math
import multiprocessing
import pickle
import time
import warnings
from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.storages import JournalStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from bore_samplers import BORESampler
from bore_samplers.integrations.optuna import ProposerSampler, search_space_from_distributions
from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.proposers.base import ModelFallbackWarning

optuna.logging.set_verbosity(optuna.logging.WARNING)

CLASSIFIERS = ["xgboost", "rf", pytest.param("mlp", marks=pytest.mark.torch)]


def mixed_objective(trial: optuna.Trial) -> float:
    """A cheap mixed-type objective with its minimum 0 at x=1, n=3, kind="b", lr=1e-2."""
    x = trial.suggest_float("x", -5.0, 5.0)
    n = trial.suggest_int("n", 0, 10)
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    lr = trial.suggest_float("lr", 1e-5, 1.0, log=True)
    step = trial.suggest_float("step", 0.0, 1.0, step=0.25)
    return (x - 1) ** 2 + (n - 3) ** 2 + (kind != "b") + math.log10(lr / 1e-2) ** 2 + step


def _param_tuples(study: optuna.Study) -> list[tuple]:
    return [tuple(sorted(t.params.items())) for t in study.trials]


def _assert_clean(study: optuna.Study, n_trials: int) -> None:
    """Every trial finished, none stuck RUNNING, no configuration proposed twice."""
    trials = study.trials
    assert len(trials) == n_trials
    assert all(t.state == TrialState.COMPLETE for t in trials), [t.state for t in trials]
    params = _param_tuples(study)
    assert len(set(params)) == len(params)


def _storage(kind: str, tmp_path: Path) -> optuna.storages.BaseStorage | None:
    if kind == "inmemory":
        return None
    if kind == "sqlite":
        return RDBStorage(f"sqlite:///{tmp_path / 'study.db'}")
    return JournalStorage(JournalFileBackend(str(tmp_path / "study.journal")))


@pytest.mark.parametrize("storage_kind", ["inmemory", "sqlite", "journal"])
def test_real_study_on_each_storage(storage_kind: str, tmp_path: Path) -> None:
    storage = _storage(storage_kind, tmp_path)
    study = optuna.create_study(storage=storage, sampler=BORESampler(n_startup_trials=5, seed=1))
    study.optimize(mixed_objective, n_trials=15)
    _assert_clean(study, 15)
    # Model-based trials publish their whole proposal for other workers.
    published = [t for t in study.trials if "bore:relative_params:0" in t.system_attrs]
    assert len(published) == 14  # every trial but the first (which is independent)
    # Reloading the study from its storage gives the same, uncorrupted trials.
    if storage is not None:
        again = optuna.load_study(study_name=study.study_name, storage=storage)
        assert [t.params for t in again.trials] == [t.params for t in study.trials]
        assert again.best_value == study.best_value


@pytest.mark.parametrize("classifier", CLASSIFIERS)
def test_model_beats_its_startup(classifier: str) -> None:
    study = optuna.create_study(sampler=BORESampler(classifier=classifier, seed=0))
    study.optimize(mixed_objective, n_trials=40)
    startup_best = min(t.value for t in study.trials[:10])
    assert study.best_value < startup_best
    assert study.best_value < 5.0


def test_maximize_direction() -> None:
    study = optuna.create_study(direction="maximize", sampler=BORESampler(seed=0))
    study.optimize(lambda t: -((t.suggest_float("x", -5, 5) - 2) ** 2), n_trials=30)
    assert study.best_value > -0.1


@pytest.mark.parametrize("classifier", CLASSIFIERS)
def test_seeded_runs_reproduce_exactly(classifier: str) -> None:
    runs = []
    for _ in range(2):
        sampler = BORESampler(classifier=classifier, n_startup_trials=5, seed=42)
        study = optuna.create_study(sampler=sampler)
        study.optimize(mixed_objective, n_trials=12)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


def test_pickle_round_trip_continues_the_study() -> None:
    sampler = BORESampler(n_startup_trials=5, seed=3)
    study = optuna.create_study(sampler=sampler)
    study.optimize(mixed_objective, n_trials=8)
    restored = pickle.loads(pickle.dumps(study.sampler))
    assert isinstance(restored, BORESampler)
    study.sampler = restored
    study.optimize(mixed_objective, n_trials=7)
    _assert_clean(study, 15)


def test_each_trial_records_where_its_proposal_came_from() -> None:
    # Trial 0: no joint search space yet, the independent sampler draws it and nothing is
    # recorded; 1-2: the Sobol start-up; 3-4: all values equal, so BORE's labels are of one
    # class and it falls back to a random point; 5: the model.
    values = iter([1.0] * 4 + [0.5, 0.0])
    sampler = BORESampler(classifier="rf", n_startup_trials=3, seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: t.suggest_float("x", 0, 1) * 0 + next(values), n_trials=6)
    sources = [t.system_attrs.get("bore_samplers:source") for t in study.trials]
    assert sources == [None, "start-up", "start-up", "fallback", "fallback", "model"]
    assert sampler.last_study is study
    assert pickle.loads(pickle.dumps(sampler)).last_study is None


def test_n_jobs_two_threads() -> None:
    study = optuna.create_study(sampler=BORESampler(n_startup_trials=5, seed=0))
    study.optimize(mixed_objective, n_trials=24, n_jobs=2)
    _assert_clean(study, 24)


def _worker(url: str, study_name: str, seed: int, n_trials: int) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name=study_name, storage=url, sampler=BORESampler(n_startup_trials=5, seed=seed)
    )
    study.optimize(mixed_objective, n_trials=n_trials)


def test_two_processes_share_one_sqlite_study(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    optuna.create_study(study_name="shared", storage=url)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_worker, args=(url, "shared", s, 10)) for s in (0, 1)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=240)
        assert w.exitcode == 0
    study = optuna.load_study(study_name="shared", storage=url)
    _assert_clean(study, 20)


def test_pending_trials_are_visible_and_not_repeated(tmp_path: Path) -> None:
    """8 simultaneous asks (as 8 workers would make) give 8 distinct, spread points.

    Two study objects on one storage stand for two processes: the second sees the first's
    pending proposal through the published system attributes.
    """
    url = f"sqlite:///{tmp_path / 'pending.db'}"
    study = optuna.create_study(storage=url, sampler=BORESampler(n_startup_trials=5, seed=0))
    study.optimize(
        lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2 + t.suggest_float("y", 0, 1), n_trials=15
    )
    other = optuna.load_study(
        study_name=study.study_name, storage=url, sampler=BORESampler(n_startup_trials=5, seed=0)
    )
    points = []
    for i in range(8):
        worker = (study, other)[i % 2]  # alternate "processes"
        trial = worker.ask()
        points.append((trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)))
    points = np.array(points)
    distances = np.linalg.norm(points[:, None] - points[None], axis=-1)[np.triu_indices(8, 1)]
    assert distances.min() > 1e-3, points
    running = other.get_trials(states=(TrialState.RUNNING,))
    assert len(running) == 8
    assert all("bore:relative_params:0" in t.system_attrs for t in running)


def test_failed_trials_teach_the_sampler_to_avoid_them() -> None:
    def crashes_right(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", 0.0, 1.0)
        if x > 0.5:
            raise MemoryError("out of memory")  # a crash, as in a too-large model
        return (x - 0.5) ** 2 + (y - 0.5) ** 2

    study = optuna.create_study(sampler=BORESampler(seed=0))
    study.optimize(crashes_right, n_trials=40, catch=(MemoryError,))
    states = [t.state for t in study.trials]
    early = states[:10].count(TrialState.FAIL) / 10
    late = states[20:].count(TrialState.FAIL) / 20
    assert late < early
    assert TrialState.COMPLETE in states


def test_all_trials_failing_never_crashes_the_study() -> None:
    def always_fails(trial: optuna.Trial) -> float:
        trial.suggest_float("x", 0, 1)
        raise RuntimeError("broken objective")

    study = optuna.create_study(sampler=BORESampler(n_startup_trials=3, seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        study.optimize(always_fails, n_trials=8, catch=(RuntimeError,))
    assert [t.state for t in study.trials] == [TrialState.FAIL] * 8


def test_nan_and_constant_values_use_the_documented_fallbacks() -> None:
    values = iter([float("nan")] * 4 + [1.0] * 20)
    study = optuna.create_study(sampler=BORESampler(n_startup_trials=3, seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        study.optimize(lambda t: t.suggest_float("x", 0, 1) * 0 + next(values), n_trials=12)
    assert len(study.trials) == 12
    assert sum(t.state == TrialState.FAIL for t in study.trials) == 4


def test_constraints_steer_proposals_to_the_feasible_region() -> None:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", 0.0, 1.0)
        trial.set_constraint("budget", x + y - 0.8)  # feasible iff x + y <= 0.8
        return -(x + y)  # the unconstrained optimum is infeasible

    study = optuna.create_study(sampler=BORESampler(seed=0))
    study.optimize(objective, n_trials=40)
    late = study.trials[20:]
    feasible = [all(v <= 0 for v in t.constraints.values()) for t in late]
    assert np.mean(feasible) >= 0.5
    assert study.best_trial.constraints["budget"] <= 0


def test_multi_objective_study_is_refused_clearly() -> None:
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=BORESampler())
    with pytest.raises(ValueError, match="multi-objective"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.0), n_trials=1, catch=())


def test_unsupported_distribution_is_named() -> None:
    class OddDistribution(FloatDistribution):
        pass

    space = search_space_from_distributions({"x": FloatDistribution(0, 1)})
    assert space.names == ["x"]
    with pytest.raises(ValueError, match="'weird'"):
        search_space_from_distributions({"weird": object()})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(gamma=0.0), ValueError),
        (dict(gamma=1.5), ValueError),
        (dict(classifier="svm"), ValueError),
        (dict(acquisition_optimizer="cma"), ValueError),
        (dict(acquisition_optimizer="lbfgs", classifier="xgboost"), ValueError),
        (dict(n_candidates=0), ValueError),
        (dict(n_startup_trials=-1), ValueError),
    ],
)
def test_bad_settings_fail_at_construction(kwargs: dict, error: type[Exception]) -> None:
    with pytest.raises(error):
        BORESampler(**kwargs)


class _BrokenClassifier(ProbabilisticClassifier):
    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        seed: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        raise np.linalg.LinAlgError("singular")

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        raise AssertionError("never fitted")


def test_a_model_failure_falls_back_without_crashing_the_study() -> None:
    study = optuna.create_study(
        sampler=BORESampler(classifier=_BrokenClassifier(), n_startup_trials=2, seed=0)
    )
    with pytest.warns(ModelFallbackWarning, match="singular"):
        study.optimize(mixed_objective, n_trials=5)
    _assert_clean(study, 5)


def test_quiet_by_default(caplog: pytest.LogCaptureFixture) -> None:
    optuna.logging.set_verbosity(optuna.logging.INFO)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning of ours, scipy's or xgboost's
            study = optuna.create_study(sampler=BORESampler(n_startup_trials=3, seed=0))
            study.optimize(mixed_objective, n_trials=6)
    finally:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
    ours = [r for r in caplog.records if r.name.startswith("bore_samplers")]
    assert ours == []


def test_pruned_trials_under_a_real_pruner() -> None:
    """Pruned trials (class 0, see the proposer docs) never break the model's proposals."""

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", -3.0, 3.0)
        value = 0.0
        for step in range(5):
            value = (x - 1.0) ** 2 + 1.0 / (step + 1)
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return value

    study = optuna.create_study(
        sampler=BORESampler(n_startup_trials=5, seed=0),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=1),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        study.optimize(objective, n_trials=25)
    states = {t.state for t in study.trials}
    assert TrialState.PRUNED in states and TrialState.COMPLETE in states
    assert abs(study.best_params["x"] - 1.0) < 0.5


def test_proposal_records_are_stored_with_the_trial_and_handed_back() -> None:
    # A proposer that counts its own earlier model proposals from their records alone.
    from bore_samplers.proposers.bore import BOREProposer

    class CountingProposer(BOREProposer):
        uses_records = True

        def propose_from_model_with_record(self, history):  # type: ignore[no-untyped-def]
            previous = [r.get("count", 0) for r in history.records]
            return self.propose_from_model(history), {"count": max(previous, default=0) + 1}

    sampler = ProposerSampler(CountingProposer(n_startup=3, seed=0, classifier="rf"))
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=8)
    counts = [
        json.loads(t.system_attrs["bore:record:0"])["count"]
        for t in study.trials
        if "bore:record:0" in t.system_attrs
    ]
    # Trial 0 is independent and trials 1-2 are startup points (no records), then 1..5.
    assert counts == [1, 2, 3, 4, 5]


def test_observations_carry_trial_durations() -> None:
    sampler = BORESampler(seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    observation = sampler._observation(study.trials[0], 1.0)
    assert observation.duration is not None and observation.duration >= 0


@pytest.mark.parametrize("sampler_name", ["bore", "cmes", "portfolio"])
def test_threads_never_propose_the_same_configuration(sampler_name: str) -> None:
    # Reading the trials, proposing and publishing happen under one lock: a thread that asks
    # while another is proposing sees that proposal as pending (startup points included).
    from bore_samplers import CMESSampler, PortfolioSampler

    make = {
        "bore": lambda: BORESampler(seed=0, n_startup_trials=4, classifier="rf"),
        "cmes": lambda: CMESSampler(seed=0, n_startup_trials=4, n_discretization=64),
        "portfolio": lambda: PortfolioSampler(seed=0, n_startup_trials=4),
    }[sampler_name]

    def objective(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        time.sleep(0.01)  # let the threads overlap
        return (x - 0.3) ** 2 + (y - 0.6) ** 2

    study = optuna.create_study(sampler=make())
    study.optimize(objective, n_trials=16, n_jobs=4)
    configurations = [(t.params["x"], t.params["y"]) for t in study.trials]
    assert len(set(configurations)) == len(configurations)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


def conditional_objective(trial: optuna.Trial) -> float:
    """Every kind of parameter, and a model family whose own parameters exist only for it."""
    family = trial.suggest_categorical("family", ["linear", "tree", None])
    x = trial.suggest_float("x", -3.0, 3.0)
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    width = trial.suggest_int("width", 1, 1000, log=True)
    n = trial.suggest_int("n", 2, 20, step=3)
    q = trial.suggest_float("q", -1.0, 1.0, step=0.25)
    value = (x - 0.5) ** 2 + math.log10(lr / 1e-2) ** 2 + abs(math.log10(width) - 2) + (n - 8) ** 2
    value += q**2
    if family == "tree":
        value += abs(trial.suggest_int("depth", 1, 8) - 3)
    elif family == "linear":
        value += abs(math.log10(trial.suggest_float("alpha", 1e-6, 1e-1, log=True)) + 3)
    else:
        value += 1.0
    return value


# Every candidate generator BORE offers, with the classifiers it serves.
CANDIDATE_GENERATORS = [
    ("xgboost", "parzen"),
    ("xgboost", "random"),
    ("xgboost", "de"),
    ("rf", "parzen"),
    pytest.param("mlp", "lbfgs", marks=pytest.mark.torch),
    pytest.param("mlp", "parzen", marks=pytest.mark.torch),
]


@pytest.mark.parametrize(("classifier", "optimizer"), CANDIDATE_GENERATORS)
def test_every_candidate_generator_proposes_valid_configurations_on_a_conditional_space(
    classifier: str, optimizer: str
) -> None:
    from bore_samplers.integrations.reporting import track_proposals

    sampler = BORESampler(
        classifier=classifier,
        acquisition_optimizer=optimizer,
        n_startup_trials=8,
        seed=0,
        warn_independent_sampling=False,
    )
    sources = track_proposals(sampler)
    study = optuna.create_study(sampler=sampler)
    study.optimize(conditional_objective, n_trials=30)
    assert sources.counts()["model"] >= 20, sources.counts()
    for trial in study.trials:
        assert trial.state == TrialState.COMPLETE, trial
        for name, value in trial.params.items():
            distribution = trial.distributions[name]
            # The type Optuna's own samplers return, and a value of the distribution (its
            # range, its step or log grid, or one of its choices).
            if isinstance(distribution, optuna.distributions.IntDistribution):
                assert type(value) is int, (name, value)
            elif isinstance(distribution, FloatDistribution):
                assert type(value) is float, (name, value)
            assert distribution._contains(distribution.to_internal_repr(value)), (name, value)
        assert ("depth" in trial.params) == (trial.params["family"] == "tree")
        assert ("alpha" in trial.params) == (trial.params["family"] == "linear")
    # The joint (relative) proposals never repeat a configuration.
    shared = ("family", "x", "lr", "width", "n", "q")
    joint = [tuple(t.params[name] for name in shared) for t in study.trials]
    assert len(set(joint)) == len(joint)
