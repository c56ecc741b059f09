"""BinaryOutcomeSampler and BinaryOutcomeSearch in real Optuna studies and Ray Tune runs, and
the BinaryOutcomeProposer under them.

The objectives are Bernoulli draws ``c ~ Bernoulli(Φ(f(x)))`` from a known ``f``, drawn from
the trial number so that every run is reproducible; the tests judge a sampler by the true
success probability where it ends up.
"""

from __future__ import annotations

import math
import pickle
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)
from optuna.trial import TrialState
from scipy.special import ndtr

from bore_samplers.integrations.binary import BinaryOutcomeSampler
from bore_samplers.observations import Observation, history_from_observations
from bore_samplers.observations import TrialState as CoreState
from bore_samplers.proposers.base import ModelFallbackWarning, Proposer
from bore_samplers.proposers.binary import BinaryOutcomeProposer, binary_outcome
from bore_samplers.space import FloatParam, SearchSpace

optuna.logging.set_verbosity(optuna.logging.WARNING)

ROOT = Path(__file__).resolve().parents[1]
# A smaller acquisition search keeps the tests fast on two cores; the algorithm is the same.
FAST: dict[str, Any] = dict(n_candidates=256, n_restarts=3)
ACQUISITIONS = ["ucb_phi", "ucb_f", "binary_ei", "thompson"]


@pytest.fixture(autouse=True)
def _no_model_fallback() -> Iterator[None]:
    # A silent fallback to independent sampling would make the tests below vacuous.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        yield


def success_probability(x: float, y: float) -> float:
    """``Φ(f)`` with a peak of ``Φ(3) ≈ 0.999`` at (0.3, 0.7) and ``Φ(-3)`` far from it."""
    return float(ndtr(3.0 - 24.0 * ((x - 0.3) ** 2 + (y - 0.7) ** 2)))


def bernoulli(trial_number: int, p: float) -> bool:
    return bool(np.random.default_rng(trial_number).random() < p)


def objective(trial: optuna.Trial) -> bool:
    x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
    return bernoulli(trial.number, success_probability(x, y))


def _true_p(params: dict[str, Any]) -> float:
    return success_probability(params["x"], params["y"])


# ----------------------------------------------------------------------------- the core
SPACE_1D = SearchSpace({"x": FloatParam(0.0, 1.0)})


def test_binary_outcome_reads_zero_one_and_bool_and_names_anything_else() -> None:
    assert [binary_outcome(v) for v in (0, 1, 0.0, 1.0, False, True, np.float64(1))] == [
        0,
        1,
        0,
        1,
        0,
        1,
        1,
    ]
    for bad in (0.5, -1, 2, math.inf, math.nan, "yes", None):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            binary_outcome(bad)
    assert [binary_outcome(v, threshold=0.5) for v in (-3.0, 0.5, 0.51, 7)] == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="NaN"):
        binary_outcome(math.nan, threshold=0.5)


def test_the_proposer_rejects_other_values_naming_them_from_the_first_proposal() -> None:
    proposer = BinaryOutcomeProposer(n_startup=10, seed=0)
    observations = [Observation({"x": 0.2}, 0.0), Observation({"x": 0.4}, 0.25)]
    with pytest.raises(ValueError, match=r"got 0\.25 for the configuration \{'x': 0\.4\}"):
        proposer.propose(SPACE_1D, observations)  # a start-up proposal: still checked
    # What a generic adapter passes for a maximised 0/1 objective (-outcome) is refused too,
    # with the way out.
    with pytest.raises(ValueError, match="1 - outcome"):
        proposer.propose(SPACE_1D, [Observation({"x": 0.2}, -1.0)])
    # NaN is a failed observation, not a bad outcome.
    proposer.propose(SPACE_1D, [Observation({"x": 0.2}, math.nan)])


def _one_sided(failed_at_right: bool) -> list[Observation]:
    """Target outcomes (value 0) left of 0.5; failures (FAILED, or value 1) right of it."""
    left = [Observation({"x": x}, 0.0) for x in np.linspace(0.02, 0.45, 8)]
    right = [
        Observation({"x": x}, None, CoreState.FAILED)
        if failed_at_right
        else Observation({"x": x}, 1.0)
        for x in np.linspace(0.55, 0.98, 8)
    ]
    return left + right


def test_each_observation_enters_as_documented() -> None:
    probe = [{"x": 0.1}, {"x": 0.9}]
    bad = BinaryOutcomeProposer(**FAST).target_probability(SPACE_1D, _one_sided(True), probe)
    ones = BinaryOutcomeProposer(**FAST).target_probability(SPACE_1D, _one_sided(False), probe)
    # FAILED counts as the non-target outcome: the same model as for outcomes of 1.
    np.testing.assert_allclose(bad, ones, atol=1e-8)
    assert bad[0] > 0.8 and bad[1] < 0.2
    # failed_trials="ignore": they are left out, so nothing speaks against x = 0.9.
    ignore = BinaryOutcomeProposer(failed_trials="ignore", **FAST)
    ignored = ignore.target_probability(SPACE_1D, _one_sided(True), probe)
    assert ignored[1] > bad[1] + 0.2
    # RUNNING observations carry no outcome, and PRUNED ones none with pruned_trials="ignore"
    # (by default they are non-target outcomes: tests/test_failed_trials.py): the model is
    # unchanged.
    extra = [
        Observation({"x": 0.9}, 0.0, CoreState.PRUNED),
        Observation({"x": 0.95}, None, CoreState.RUNNING),
    ]
    with_extra = BinaryOutcomeProposer(pruned_trials="ignore", **FAST).target_probability(
        SPACE_1D, _one_sided(True) + extra, probe
    )
    np.testing.assert_allclose(with_extra, bad, atol=1e-8)


def test_inferred_best_maximises_the_posterior_success_probability() -> None:
    rng = np.random.default_rng(0)
    xs = rng.random(40)
    observations = [
        Observation({"x": x}, float(rng.random() >= ndtr(2.0 - 40.0 * (x - 0.3) ** 2))) for x in xs
    ]
    proposer = BinaryOutcomeProposer(**FAST)
    best = proposer.inferred_best(SPACE_1D, observations)
    assert abs(best["x"] - 0.3) < 0.12, best
    grid = [{"x": x} for x in np.linspace(0, 1, 201)]
    on_grid = proposer.target_probability(SPACE_1D, observations, grid)
    at_best = proposer.target_probability(SPACE_1D, observations, [best])[0]
    assert at_best >= on_grid.max() - 1e-6
    # A deterministic function of the observations that leaves the proposals alone.
    assert proposer.inferred_best(SPACE_1D, observations) == best
    assert proposer._rng is None
    with pytest.raises(ValueError, match="nothing to infer"):
        proposer.inferred_best(SPACE_1D, [Observation({"x": 0.5}, None, CoreState.RUNNING)])


def test_where_successes_are_rare_an_unexplored_region_is_not_rated_one_half() -> None:
    # The classifier's constant term: far from the data the success probability follows the
    # observed rate (here 2 of 30 near x = 0) instead of the zero prior mean's 1/2.
    xs = np.linspace(0.0, 0.25, 30)
    observations = [Observation({"x": x}, 0.0 if i in (3, 17) else 1.0) for i, x in enumerate(xs)]
    far = BinaryOutcomeProposer(**FAST).target_probability(SPACE_1D, observations, [{"x": 1.0}])
    assert far[0] < 0.35


@pytest.mark.parametrize("acquisition", ACQUISITIONS)
def test_a_pending_point_is_not_proposed_again(acquisition: str) -> None:
    proposer = BinaryOutcomeProposer(acquisition=acquisition, n_startup=4, seed=0, **FAST)
    observations = _one_sided(False)
    first = proposer.propose(SPACE_1D, observations)
    pending = Observation(first, None, CoreState.RUNNING)
    proposer.reseed(0)  # the same random stream: only the pending point differs
    second = proposer.propose(SPACE_1D, [*observations, pending])
    history_radius = Proposer.pending_spacing(
        history_from_observations(SPACE_1D, [*observations, pending])
    )[1]
    assert abs(second["x"] - first["x"]) >= history_radius - 1e-12, (first, second)


def test_expectation_propagation_proposes_and_infers() -> None:
    proposer = BinaryOutcomeProposer(approximation="ep", n_startup=4, seed=0, **FAST)
    observations = _one_sided(False)
    assert 0.0 <= proposer.propose(SPACE_1D, observations)["x"] <= 1.0
    assert proposer.fit_model(SPACE_1D, observations).approximation == "ep"
    assert proposer.inferred_best(SPACE_1D, observations)["x"] < 0.5


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(acquisition="ucb"),
        dict(approximation="vi"),
        dict(beta=-1.0),
        dict(beta=math.inf),
        dict(n_candidates=0),
        dict(failed_trials="retry"),
        dict(n_startup=-1),
    ],
)
def test_bad_settings_fail_at_construction(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        BinaryOutcomeProposer(**kwargs).validate()
    sampler_kwargs = {
        ("n_startup_trials" if k == "n_startup" else k): v for k, v in kwargs.items()
    }
    with pytest.raises(ValueError):
        BinaryOutcomeSampler(**sampler_kwargs)


@pytest.mark.parametrize("threshold", [math.nan, math.inf, "0.5", True])
def test_a_bad_threshold_fails_at_construction(threshold: Any) -> None:
    with pytest.raises(ValueError, match="outcome_threshold"):
        BinaryOutcomeSampler(outcome_threshold=threshold)


# ----------------------------------------------------------------------- Optuna studies
@pytest.mark.parametrize("acquisition", ACQUISITIONS)
def test_each_acquisition_finds_where_runs_succeed(acquisition: str) -> None:
    sampler = BinaryOutcomeSampler(acquisition=acquisition, n_startup_trials=8, seed=0, **FAST)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(objective, n_trials=30)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    best = sampler.inferred_best_params(study)
    assert _true_p(best) > 0.8, best
    assert sampler.success_probability(study, best) > 0.5
    # The model-based trials go where success is likely, the Sobol start-up trials do not.
    startup = np.mean([_true_p(t.params) for t in study.trials[:8]])
    model = np.mean([_true_p(t.params) for t in study.trials[8:]])
    assert model > startup + 0.15, (startup, model)


def test_sqlite_study_resumed_by_a_new_sampler(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'binary.db'}"
    sampler = BinaryOutcomeSampler(n_startup_trials=6, seed=0, **FAST)
    study = optuna.create_study(
        study_name="binary", storage=url, direction="maximize", sampler=sampler
    )
    study.optimize(objective, n_trials=12)
    resumed = optuna.load_study(
        study_name="binary", storage=url, sampler=BinaryOutcomeSampler(seed=1, **FAST)
    )
    resumed.optimize(objective, n_trials=4)
    trials = resumed.trials
    assert len(trials) == 16 and all(t.state == TrialState.COMPLETE for t in trials)
    # Every proposal is published in the storage, where other workers read it.
    assert all("binary:relative_params:0" in t.system_attrs for t in trials[1:])
    params = [tuple(sorted(t.params.items())) for t in trials]
    assert len(set(params)) == 16
    # Any sampler object infers the same answer from the stored trials.
    assert sampler.inferred_best_params(study) == resumed.sampler.inferred_best_params(resumed)


def test_direction_decides_whether_success_is_maximised_or_minimised() -> None:
    results = {}
    for direction in ("maximize", "minimize"):
        sampler = BinaryOutcomeSampler(n_startup_trials=8, seed=0, **FAST)
        study = optuna.create_study(direction=direction, sampler=sampler)
        study.optimize(objective, n_trials=24)
        best = sampler.inferred_best_params(study)
        results[direction] = (_true_p(best), sampler.success_probability(study, best))
        # The core sees 0 for the outcome the study wants.
        values = {o.value for o in sampler.observations(study)}
        assert values <= {0.0, 1.0}
        wanted = [t.value == (direction == "maximize") for t in study.trials]
        assert [o.value == 0.0 for o in sampler.observations(study)] == wanted
    assert results["maximize"][0] > 0.8 and results["maximize"][1] > 0.5, results
    assert results["minimize"][0] < 0.05 and results["minimize"][1] < 0.2, results


def test_a_value_that_is_not_an_outcome_fails_the_next_trial_naming_it() -> None:
    sampler = BinaryOutcomeSampler(n_startup_trials=3, seed=0, **FAST)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(objective, n_trials=3)  # bools are outcomes
    study.optimize(lambda t: t.suggest_float("x", 0, 1) * 0.0 + 0.7, n_trials=1)
    with pytest.raises(ValueError, match=r"Trial#3 returned 0\.7, but BinaryOutcomeSampler"):
        study.optimize(objective, n_trials=1)
    with pytest.raises(ValueError, match=r"Trial#3 returned 0\.7"):
        sampler.inferred_best_params(study)
    # The way out the message names: a threshold reads the value explicitly.
    lenient = BinaryOutcomeSampler(outcome_threshold=0.5, n_startup_trials=3, seed=0, **FAST)
    study.sampler = lenient
    study.optimize(objective, n_trials=1)
    observation = lenient.observations(study)[3]
    assert observation.value == 0.0  # 0.7 > 0.5: a success, the target of "maximize"


def test_a_threshold_reads_scores_as_outcomes() -> None:
    sampler = BinaryOutcomeSampler(outcome_threshold=0.0, n_startup_trials=6, seed=0, **FAST)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    # A score whose sign is the outcome: > 0 is a success.
    study.optimize(lambda t: float(objective(t)) - 0.5 + 0.1 * t.params["x"], n_trials=20)
    outcomes = [int(t.value > 0.0) for t in study.trials]
    assert [1 - int(o.value) for o in sampler.observations(study)] == outcomes
    assert _true_p(sampler.inferred_best_params(study)) > 0.5


def test_seeded_runs_reproduce_and_a_pickled_sampler_continues_identically() -> None:
    def run(seed: int) -> optuna.Study:
        study = optuna.create_study(
            direction="maximize", sampler=BinaryOutcomeSampler(n_startup_trials=5, seed=seed)
        )
        study.optimize(objective, n_trials=10)
        return study

    first, second = run(7), run(7)
    assert [t.params for t in first.trials] == [t.params for t in second.trials]
    assert [t.params for t in run(8).trials] != [t.params for t in first.trials]
    second.sampler = pickle.loads(pickle.dumps(first.sampler))
    assert isinstance(second.sampler, BinaryOutcomeSampler)
    first.optimize(objective, n_trials=3)
    second.optimize(objective, n_trials=3)
    assert [t.params for t in first.trials] == [t.params for t in second.trials]


def test_pending_trials_are_never_proposed_twice() -> None:
    study = optuna.create_study(
        direction="maximize", sampler=BinaryOutcomeSampler(n_startup_trials=6, seed=0, **FAST)
    )
    study.optimize(objective, n_trials=12)
    points = []
    for _ in range(6):  # six workers ask before anyone tells
        trial = study.ask()
        points.append((trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)))
    points_array = np.array(points)
    gaps = np.linalg.norm(points_array[:, None] - points_array[None], axis=-1)
    assert gaps[np.triu_indices(6, 1)].min() > 0.05, points
    assert len(study.get_trials(states=(TrialState.RUNNING,))) == 6


def test_n_jobs_two_threads() -> None:
    study = optuna.create_study(
        direction="maximize", sampler=BinaryOutcomeSampler(n_startup_trials=6, seed=0, **FAST)
    )
    study.optimize(objective, n_trials=16, n_jobs=2)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    params = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(params)) == 16


def crashes_right(trial: optuna.Trial) -> bool:
    x = trial.suggest_float("x", 0, 1)
    if x > 0.6:
        raise RuntimeError("diverged with NaNs")  # a crash: the run did not succeed
    return bernoulli(trial.number, 0.9)


def test_failed_trials_count_as_failures_unless_ignored() -> None:
    at_crash = {}
    for failed_trials in ("bad", "ignore"):
        sampler = BinaryOutcomeSampler(
            failed_trials=failed_trials, n_startup_trials=6, seed=0, **FAST
        )
        study = optuna.create_study(direction="maximize", sampler=sampler)
        study.optimize(crashes_right, n_trials=14, catch=(RuntimeError,))
        assert study.get_trials(states=(TrialState.FAIL,))
        at_crash[failed_trials] = sampler.success_probability(study, {"x": 0.9})
        if failed_trials == "bad":
            assert sampler.inferred_best_params(study)["x"] < 0.6
    # Crashes lower the inferred P(success) where they happened; ignored, they teach nothing
    # (only successes were seen, so nothing speaks against x = 0.9).
    assert at_crash["bad"] < 0.4 and at_crash["ignore"] > at_crash["bad"] + 0.2, at_crash


def test_nothing_to_infer_before_a_trial_finishes_and_multi_objective_is_refused() -> None:
    sampler = BinaryOutcomeSampler()
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(ValueError, match="nothing to infer"):
        sampler.inferred_best_params(study)
    multi = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
    with pytest.raises(ValueError, match="multi-objective"):
        multi.optimize(lambda t: (t.suggest_float("x", 0, 1) > 0.5, 1), n_trials=1, catch=())


# ------------------------------------------------------------ Optuna's conformance suites
# The suites return arbitrary floats; outcome_threshold=0 reads them explicitly (> 0: success).
_CONFORMANCE = [
    pytest.param(dict(acquisition=acq, outcome_threshold=0.0, n_startup_trials=2, **FAST), id=acq)
    for acq in ("ucb_phi", "thompson")
]


class _BinarySamplerFixture:
    @pytest.fixture(params=_CONFORMANCE)
    def sampler(self, request: pytest.FixtureRequest) -> Callable[[], BaseSampler]:
        return lambda: BinaryOutcomeSampler(warn_independent_sampling=False, **request.param)


class TestBinaryBasic(_BinarySamplerFixture, BasicSamplerTestCase):
    pass


class TestBinaryRelative(_BinarySamplerFixture, RelativeSamplerTestCase):
    pass


class TestBinarySingleOnly(_BinarySamplerFixture, SingleOnlySamplerTestCase):
    pass


# ------------------------------------------------------------------------------ Ray Tune
def _search(**kwargs: Any) -> Any:
    pytest.importorskip("ray")
    from ray import tune

    from bore_samplers.integrations.binary import BinaryOutcomeSearch

    space = {"x": tune.uniform(0.0, 1.0), "y": tune.uniform(0.0, 1.0), "const": 3}
    return BinaryOutcomeSearch(**{"space": space, "metric": "ok", **kwargs, **FAST})


def converged_trainable(config: dict) -> None:
    from ray import tune

    assert config["const"] == 3
    p = success_probability(config["x"], config["y"])
    seed = int(config["x"] * 1e6)  # a reproducible draw per configuration
    tune.report({"ok": int(np.random.default_rng(seed).random() < p)})


def test_a_real_tuner_run(ray_session: None, tmp_path: Path) -> None:
    from ray import tune

    searcher = _search(mode="max", n_startup_trials=6, seed=0)
    tuner = tune.Tuner(
        converged_trainable,
        tune_config=tune.TuneConfig(
            search_alg=searcher,
            num_samples=14,
            max_concurrent_trials=2,
            reuse_actors=True,
            time_budget_s=900.0,  # a hang guard, not a speed target: the run takes seconds
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="binary", verbose=0),
    )
    results = tuner.fit()
    assert results.num_errors == 0 and len(results) == 14
    observations = searcher.observations
    assert len(observations) == 14
    assert all(o.state is CoreState.COMPLETE for o in observations.values())
    assert {o.value for o in observations.values()} <= {0.0, 1.0}
    assert len({tuple(sorted(o.params.items())) for o in observations.values()}) == 14
    best = searcher.inferred_best_config()
    assert best["const"] == 3 and 0.0 <= best["x"] <= 1.0
    assert _true_p(best) > 0.3, best  # 14 draws: a rough region already


def _drive(searcher: Any, n: int, outcome: Callable[[dict], Any], offset: int = 0) -> list:
    configs = []
    for i in range(offset, offset + n):
        config = searcher.suggest(f"t{i}")
        configs.append(config)
        searcher.on_trial_complete(f"t{i}", {"ok": outcome(config), "training_iteration": 1})
    return configs


def _draw(config: dict) -> int:
    return int(bernoulli(int(config["x"] * 1e6), success_probability(config["x"], config["y"])))


def test_search_translates_outcomes_and_names_a_bad_value() -> None:
    for mode in ("max", "min"):
        searcher = _search(mode=mode, n_startup_trials=3, seed=0)
        _drive(searcher, 3, lambda c: True)
        assert [o.value for o in searcher.observations.values()] == [
            0.0 if mode == "max" else 1.0
        ] * 3
    _drive(searcher, 1, lambda c: 0.5, offset=3)
    with pytest.raises(ValueError, match=r"Trial 't3' returned 0\.5, but BinaryOutcomeSearch"):
        searcher.suggest("t4")
    lenient = _search(mode="max", outcome_threshold=0.25, n_startup_trials=3, seed=0)
    _drive(lenient, 2, lambda c: 0.5)
    assert [o.value for o in lenient.observations.values()] == [0.0, 0.0]


def test_search_seeds_pickles_and_keeps_pending_apart() -> None:
    pytest.importorskip("ray")
    from ray import cloudpickle

    first = _search(mode="max", n_startup_trials=4, seed=5)
    configs = _drive(first, 6, _draw)
    assert _drive(_search(mode="max", n_startup_trials=4, seed=5), 6, _draw) == configs
    copies = [pickle.loads(pickle.dumps(first)), cloudpickle.loads(cloudpickle.dumps(first))]
    expected = _drive(first, 2, _draw, offset=6)
    for copy in copies:
        assert type(copy).__name__ == "BinaryOutcomeSearch"
        assert _drive(copy, 2, _draw, offset=6) == expected
    pending = [first.suggest(f"p{i}") for i in range(4)]  # four in flight at once
    assert len({(c["x"], c["y"]) for c in pending}) == 4
    assert all(first.observations[f"p{i}"].state is CoreState.RUNNING for i in range(4))


# ------------------------------------------------------------------------------ example
def test_example_runs_in_smoke_mode(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'binary_outcome.db'}"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "binary_outcome.py"), "--smoke"]
        + ["--storage", storage],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=600,
    )
    out = result.stdout
    assert "6 start-up trials, 6 model-based trials" in out, out
    assert out.count("inferred best parameters") == 2 and "RandomSampler" in out
    assert out.count("measured success rate") == 2
    summaries = optuna.get_all_study_summaries(storage)
    assert sorted(s.n_trials for s in summaries) == [12, 12]
