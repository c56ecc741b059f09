"""BORESearch, CMESSearch and PortfolioSearch in real Ray Tune runs and through the Searcher API.

The Tuner tests start one local Ray (2 CPUs) for the module and keep every run small; the
others drive ``suggest``/``on_trial_complete`` themselves, which is the Searcher API Tune
itself calls (no mock of Ray anywhere).
"""

from __future__ import annotations

import math
import pickle
import statistics
import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")

from ray import cloudpickle, tune  # noqa: E402
from ray.tune.experiment import Trial  # noqa: E402
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler  # noqa: E402

from bore_samplers.integrations.ray import BORESearch, CMESSearch, PortfolioSearch
from bore_samplers.observations import TrialState  # noqa: E402
from bore_samplers.proposers.base import ModelFallbackWarning, Proposal

ROOT = Path(__file__).resolve().parents[1]

# Small models keep cMES's proposals fast on CI's two cores; the algorithms are tested elsewhere.
FAST_CMES = {"n_discretization": 200, "n_y_star_samples": 4}


def make_searcher(cls: type, **kwargs: Any) -> BORESearch | CMESSearch | PortfolioSearch:
    if cls is CMESSearch:
        kwargs = {**FAST_CMES, **kwargs}
    return cls(**kwargs)


SEARCHERS = [BORESearch, CMESSearch, PortfolioSearch]
RUN_TIME_BUDGET_S = 900.0


def run(
    trainable: Any,
    searcher: Any,
    tmp_path: Path,
    *,
    num_samples: int,
    param_space: dict | None = None,
    name: str = "exp",
    concurrency: int = 2,
    **tune_config: Any,
) -> tune.ResultGrid:
    tuner = tune.Tuner(
        trainable,
        param_space=param_space,
        tune_config=tune.TuneConfig(
            search_alg=searcher,
            num_samples=num_samples,
            max_concurrent_trials=concurrency,
            reuse_actors=True,
            # A hang guard, not a speed target: these runs take seconds, but a run Tune never
            # ends (a scheduler that leaves a trial paused) would stall CI. Out of budget, Tune
            # stops the run and the test's trial counts fail.
            time_budget_s=RUN_TIME_BUDGET_S,
            **tune_config,
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name=name, verbose=0),
    )
    return tuner.fit()


# ------------------------------------------------------------------ real Tuner runs
MIXED_SPACE = {
    "x": tune.uniform(-2.0, 2.0),
    "opt": {
        "lr": tune.loguniform(1e-3, 10.0),
        "n": tune.randint(0, 6),
        "k": tune.qrandint(2, 20, 2),
    },
    "act": tune.choice([None, ("tanh", 1), "relu"]),
    "seed": 7,
    "data": {"splits": [0.8, 0.2]},
}


def mixed_trainable(config: dict) -> None:
    """Minimum 0 at x=0.5, lr=0.1, n=3, act=None; checks every value is a valid Tune value."""
    assert config["seed"] == 7 and config["data"] == {"splits": [0.8, 0.2]}
    x, opt, act = config["x"], config["opt"], config["act"]
    assert isinstance(x, float) and -2.0 <= x < 2.0
    assert isinstance(opt["n"], int) and 0 <= opt["n"] <= 5
    assert isinstance(opt["k"], int) and opt["k"] % 2 == 0 and 2 <= opt["k"] <= 20
    assert act is None or act == "relu" or act == ("tanh", 1)
    loss = (x - 0.5) ** 2 + 0.1 * math.log10(opt["lr"] / 0.1) ** 2 + 0.1 * (opt["n"] - 3) ** 2
    tune.report({"loss": loss + (0.0 if act is None else 0.5), "act": repr(act)})


@pytest.mark.parametrize("cls", SEARCHERS)
def test_mixed_nested_space_with_two_trials_in_flight(
    cls: type, ray_session: None, tmp_path: Path
) -> None:
    searcher = make_searcher(cls, n_startup_trials=6, seed=0)
    results = run(
        mixed_trainable,
        searcher,
        tmp_path,
        num_samples=16,
        param_space=MIXED_SPACE,
        metric="loss",
        mode="min",
    )
    assert results.num_errors == 0 and len(results) == 16
    # Choices round-trip as the objects themselves (a tuple and None are not JSON values).
    assert {r.metrics["act"] for r in results} <= {"None", "('tanh', 1)", "'relu'"}
    observations = searcher.observations
    assert len(observations) == 16
    assert all(o.state is TrialState.COMPLETE for o in observations.values())
    assert all(o.duration is not None and o.duration >= 0 for o in observations.values())
    configs = {tuple(sorted(o.params.items())) for o in observations.values()}
    assert len(configs) == 16  # no configuration suggested twice, also with two in flight
    # The model-based trials are better than the Sobol ones they learnt from. (On 16 trials
    # the best value alone does not separate BORE-XGB from random search, whose median best
    # of 16 here is 0.44; Optuna's BORESampler does the same on this budget.)
    values = [o.value for o in observations.values()]
    assert statistics.median(values[7:]) < statistics.mean(values[:6]), values
    best = results.get_best_result(metric="loss", mode="min").metrics["loss"]
    assert best < 1.0, best


def crashing_trainable(config: dict) -> None:
    """Minimum at (0.4, 0.4); configurations with x + y > 1.1 raise (a third of the square)."""
    x, y = config["x"], config["y"]
    if x + y > 1.1:
        raise MemoryError("the model does not fit")
    tune.report({"loss": (x - 0.4) ** 2 + (y - 0.4) ** 2})


@pytest.mark.parametrize("cls", SEARCHERS)
def test_crashing_configurations_are_failed_and_avoided(
    cls: type, ray_session: None, tmp_path: Path
) -> None:
    # Space, metric and mode in the constructor; no param_space for the Tuner.
    space = {"x": tune.uniform(0.0, 1.0), "y": tune.uniform(0.0, 1.0)}
    # BORE with a random forest: the default XGBoost needs more than 16 trials to learn a
    # region (over 8 seeds it still crashed in 1-5 of 14 model-based trials, RF in none).
    options = {"classifier": "rf"} if cls is BORESearch else {}
    searcher = make_searcher(
        cls, space=space, metric="loss", mode="min", n_startup_trials=6, seed=1, **options
    )
    n = 16
    results = run(crashing_trainable, searcher, tmp_path, num_samples=n, concurrency=1)
    observations = list(searcher.observations.values())
    assert len(results) == n == len(observations)
    crashed = [o.params["x"] + o.params["y"] > 1.1 for o in observations]
    failed = [o.state is TrialState.FAILED for o in observations]
    assert crashed == failed and results.num_errors == sum(failed)
    assert all(o.value is None for o, f in zip(observations, failed, strict=True) if f)
    # The model-based trials crash far less often than the region's share of the square
    # (0.405: four of ten for random search). The portfolio does not model crashes.
    if cls is not PortfolioSearch:
        assert sum(crashed[6:]) <= 1, crashed


def epochs_trainable(config: dict) -> None:
    for epoch in range(1, 5):
        tune.report({"loss": (config["x"] - 0.3) ** 2 + 1.0 / epoch, "epoch": epoch})


class PauseAtEpochTwoThenStop(FIFOScheduler):
    """Pauses the trials with ``x > 0.5`` at epoch 2, then stops them while paused.

    This is what synchronous HyperBand does to the losers of a rung, but deterministically: Ray's
    ``HyperBandScheduler`` sometimes left a trial PAUSED forever here (about one run in four on
    an idle machine), and ``Tuner.fit`` never returned.
    """

    def on_trial_result(self, tune_controller: Any, trial: Trial, result: dict) -> str:
        if result["epoch"] == 2 and trial.config["x"] > 0.5:
            return self.PAUSE
        return self.CONTINUE

    def choose_trial_to_run(self, tune_controller: Any) -> Trial | None:
        trials = tune_controller.get_trials()
        for trial in trials:
            if trial.status == Trial.PENDING:
                return trial
        # Nothing left to start: stop the paused trials, as HyperBand stops a rung's losers.
        for trial in trials:
            if trial.status == Trial.PAUSED:
                tune_controller.stop_trial(trial)
        return None


@pytest.mark.parametrize(
    ("cls", "scheduler"),
    [
        (BORESearch, "asha"),
        (CMESSearch, "asha"),
        (PortfolioSearch, "asha"),
        (BORESearch, "pause-then-stop"),
        (CMESSearch, "pause-then-stop"),
    ],
)
def test_early_stopped_trials_enter_as_pruned(
    cls: type, scheduler: str, ray_session: None, tmp_path: Path
) -> None:
    # ASHA stops trials at a rung (on_trial_complete with their last result); a pausing
    # scheduler such as synchronous HyperBand stops them later (on_trial_complete(None)).
    searcher = make_searcher(cls, n_startup_trials=4, seed=2)
    schedulers = {
        "asha": ASHAScheduler(max_t=4, grace_period=1),
        "pause-then-stop": PauseAtEpochTwoThenStop(),
    }
    results = run(
        epochs_trainable,
        searcher,
        tmp_path,
        num_samples=12,
        param_space={"x": tune.uniform(0.0, 1.0)},
        metric="loss",
        mode="min",
        scheduler=schedulers[scheduler],
    )
    assert results.num_errors == 0 and len(results) == 12
    final_iteration = {r.metrics["trial_id"]: r.metrics["training_iteration"] for r in results}
    final_loss = {r.metrics["trial_id"]: r.metrics["loss"] for r in results}
    observations = searcher.observations
    assert set(observations) == set(final_iteration)
    for trial_id, obs in observations.items():
        # Only full-length trials are ranked; the others keep their last value, as PRUNED.
        expected = TrialState.COMPLETE if final_iteration[trial_id] == 4 else TrialState.PRUNED
        assert obs.state is expected, (trial_id, final_iteration[trial_id], obs)
        assert obs.value == final_loss[trial_id]
    states = [o.state for o in observations.values()]
    assert TrialState.PRUNED in states and TrialState.COMPLETE in states
    if scheduler == "pause-then-stop":  # stopped while paused: on_trial_complete(result=None)
        assert all(
            (o.state is TrialState.PRUNED) == (o.params["x"] > 0.5) for o in observations.values()
        )


def quadratic_trainable(config: dict) -> None:
    tune.report({"score": -((config["x"] - 0.2) ** 2) - (config["c"] != "b")})


@pytest.mark.parametrize("cls", SEARCHERS)
def test_save_and_restore_into_a_new_tuner(cls: type, ray_session: None, tmp_path: Path) -> None:
    space = {"x": tune.uniform(-1.0, 1.0), "c": tune.choice(["a", "b", "c"])}
    first = make_searcher(cls, n_startup_trials=4, seed=3)
    run(
        quadratic_trainable,
        first,
        tmp_path,
        num_samples=6,
        param_space=space,
        metric="score",
        mode="max",
        name="first",
    )
    restored = make_searcher(cls)  # no space, metric or mode: all come from the checkpoint
    restored.restore_from_dir(str(tmp_path / "first"))
    assert restored.observations == first.observations
    assert restored.metric == "score" and restored.mode == "max"
    # The best trial is the minimum of the negated score.
    values = [o.value for o in restored.observations.values()]
    assert all(v is not None and v >= 0 for v in values)

    run(quadratic_trainable, restored, tmp_path, num_samples=4, name="second")
    observations = restored.observations
    assert len(observations) == 10
    assert list(observations)[:6] == list(first.observations)  # the same history, continued
    assert all(o.state is TrialState.COMPLETE for o in observations.values())
    configs = {tuple(sorted(o.params.items())) for o in observations.values()}
    assert len(configs) == 10


def warm_start_trainable(config: dict) -> None:
    if config["x"] == 0.25:
        tune.report({"loss": float("nan")})
    elif config["x"] == 0.5:
        return  # reports nothing: no metric in the final result
    else:
        tune.report({"loss": (config["x"] - 0.7) ** 2, "n": config["n"]})


@pytest.mark.parametrize("cls", SEARCHERS)
def test_warm_start_given_points_nan_and_missing_metric(
    cls: type, ray_session: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # By default Tune itself aborts the run on a result without the metric; this lets it through.
    monkeypatch.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    points = [{"x": 0.25, "n": 2}, {"x": 0.5}, {"x": 0.75, "n": 4}]
    searcher = make_searcher(
        cls, points_to_evaluate=points, n_startup_trials=3, seed=4, metric="loss", mode="min"
    )
    searcher.add_evaluated_point({"x": 0.1, "n": 1}, 0.36)
    searcher.add_evaluated_point({"x": 0.9, "n": 3}, 1.0, error=True)
    results = run(
        warm_start_trainable,
        searcher,
        tmp_path,
        num_samples=4,
        param_space={"x": tune.uniform(0.0, 1.0), "n": tune.randint(1, 5)},
        concurrency=1,
    )
    assert results.num_errors == 0 and len(results) == 4
    observations = list(searcher.observations.values())
    states = [o.state for o in observations]
    assert (
        states
        == [TrialState.COMPLETE, TrialState.FAILED]
        + [TrialState.FAILED] * 2
        + [TrialState.COMPLETE] * 2
    )
    # Given points are suggested first and exactly as given (a partial one is completed).
    assert [o.params["x"] for o in observations[2:5]] == [0.25, 0.5, 0.75]
    assert observations[2].params["n"] == 2 and observations[4].params["n"] == 4
    assert 1 <= observations[3].params["n"] <= 4


# ----------------------------------------------------------- the Searcher API directly
SPACE = {
    "x": tune.uniform(-3.0, 3.0),
    "deep": {"n": tune.qrandint(0, 10, 2), "c": tune.choice(["a", None, (1, 2)])},
    "lr": tune.qloguniform(1e-3, 1.0, 1e-3),
}


def loss_of(config: dict) -> float:
    return (
        (config["x"] - 1) ** 2
        + (config["deep"]["n"] - 4) ** 2 / 10
        + (config["deep"]["c"] is not None)
    )


def drive(searcher: Any, n: int, offset: int = 0) -> list[dict]:
    """Sequential trials through the Searcher API, as Tune calls it."""
    configs = []
    for i in range(offset, offset + n):
        config = searcher.suggest(f"t{i}")
        searcher.on_trial_result(f"t{i}", {"loss": loss_of(config), "training_iteration": 1})
        result = {"loss": loss_of(config), "training_iteration": 1, "time_total_s": 0.01}
        searcher.on_trial_complete(f"t{i}", result)
        configs.append(config)
    return configs


@pytest.mark.parametrize("cls", SEARCHERS)
def test_seed_gives_reproducible_suggestions(cls: type) -> None:
    def new(seed: int | None) -> Any:
        return make_searcher(
            cls, space=SPACE, metric="loss", mode="min", n_startup_trials=3, seed=seed
        )

    first = drive(new(0), 6)
    assert drive(new(0), 6) == first
    assert drive(new(1), 6) != first
    assert all(c["lr"] == round(c["lr"] / 1e-3) * 1e-3 for c in first)  # Tune's own rounding


@pytest.mark.parametrize("cls", SEARCHERS)
def test_pickled_and_restored_searchers_continue_identically(cls: type, tmp_path: Path) -> None:
    searcher = make_searcher(
        cls, space=SPACE, metric="loss", mode="min", n_startup_trials=3, seed=5
    )
    drive(searcher, 4)
    copies = [pickle.loads(pickle.dumps(searcher)), cloudpickle.loads(cloudpickle.dumps(searcher))]
    searcher.save(str(tmp_path / "state.pkl"))
    restored = make_searcher(cls)
    restored.restore(str(tmp_path / "state.pkl"))
    copies.append(restored)
    expected = drive(searcher, 2, offset=4)
    for copy in copies:
        assert copy.observations.keys() == {f"t{i}" for i in range(4)}
        assert drive(copy, 2, offset=4) == expected


@pytest.mark.parametrize("cls", SEARCHERS)
def test_pending_trials_are_running_observations_and_never_repeated(cls: type) -> None:
    searcher = make_searcher(
        cls, space=SPACE, metric="loss", mode="min", n_startup_trials=4, seed=6
    )
    drive(searcher, 4)
    pending = [searcher.suggest(f"p{i}") for i in range(4)]  # four in flight at once
    observations = searcher.observations
    assert [observations[f"p{i}"].state for i in range(4)] == [TrialState.RUNNING] * 4
    assert all(observations[f"p{i}"].value is None for i in range(4))
    keys = {repr(sorted(_flatten(c).items())) for c in pending}
    assert len(keys) == 4


def _flatten(config: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}/"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def test_outcomes_enter_as_documented() -> None:
    searcher = BORESearch(space=SPACE, metric="acc", mode="max", n_startup_trials=100, seed=0)
    for i in range(7):
        searcher.suggest(f"t{i}")
    searcher.on_trial_complete("t0", {"acc": 0.9, "training_iteration": 3, "time_total_s": 2.0})
    searcher.on_trial_result("t1", {"acc": 0.1, "training_iteration": 1, "time_total_s": 0.5})
    searcher.on_trial_complete("t1", error=True)
    searcher.on_trial_complete("t2", {"acc": float("nan"), "training_iteration": 3})
    searcher.on_trial_complete("t3", {"training_iteration": 3})  # no metric
    searcher.on_trial_complete("t4")  # stopped while pending: never evaluated
    # t5: a scheduler stopped it at iteration 1 (that result never reached on_trial_result).
    searcher.on_trial_complete("t5", {"acc": 0.4, "training_iteration": 1})
    observations = searcher.observations
    assert "t4" not in observations
    expected = {
        "t0": (TrialState.COMPLETE, -0.9, 2.0),
        "t1": (TrialState.FAILED, None, 0.5),
        "t2": (TrialState.FAILED, None, None),
        "t3": (TrialState.FAILED, None, None),
        "t5": (TrialState.PRUNED, -0.4, None),
        "t6": (TrialState.RUNNING, None, None),
    }
    assert {k: (o.state, o.value, o.duration) for k, o in observations.items()} == expected
    # A trial that ends on its own after fewer iterations is complete, not pruned.
    searcher.suggest("t7")
    searcher.on_trial_result("t7", {"acc": 0.5, "training_iteration": 2})
    searcher.on_trial_complete("t7", {"acc": 0.5, "training_iteration": 2})
    assert searcher.observations["t7"].state is TrialState.COMPLETE
    # Paused after two results, then stopped without a result (HyperBand): cut short.
    searcher.suggest("t8")
    searcher.on_trial_result("t8", {"acc": 0.3, "training_iteration": 2, "time_total_s": 1.5})
    searcher.on_trial_complete("t8")
    t8 = searcher.observations["t8"]
    assert (t8.state, t8.value, t8.duration) == (TrialState.PRUNED, -0.3, 1.5)


def test_records_are_kept_and_handed_back() -> None:
    searcher = BORESearch(space=SPACE, metric="loss", mode="min", n_startup_trials=0, seed=0)
    seen: list = []
    proposer = searcher._proposer
    original = proposer.next_proposal

    def recording(space: Any, observations: Any) -> Proposal:
        seen.append([dict(o.record) for o in observations])
        proposal = original(space, observations)
        return Proposal(proposal.params, {"call": len(seen)}, proposal.source)

    proposer.next_proposal = recording  # type: ignore[method-assign]
    searcher.suggest("a")
    searcher.suggest("b")  # "a" is pending: its record comes back with it
    searcher.on_trial_complete("a", {"loss": 1.0})
    searcher.suggest("c")
    assert seen == [[], [{"call": 1}], [{"call": 1}, {"call": 2}]]


def test_metric_mode_and_space_from_the_tuner_or_the_constructor() -> None:
    searcher = BORESearch(metric="loss", mode="min")
    with pytest.raises(RuntimeError, match="no search space"):
        searcher.suggest("t0")
    # Ray passes None for what the Tuner does not set: the constructor's values stay.
    assert searcher.set_search_properties(None, None, SPACE) is True
    assert (searcher.metric, searcher.mode) == ("loss", "min")
    assert searcher.set_search_properties("loss", "min", SPACE) is False  # space already set
    # A conflicting metric or mode raises, as Tune does for schedulers: never a silent switch.
    with pytest.raises(ValueError, match="mode='min'.*mode='max'"):
        searcher.set_search_properties(None, "max", SPACE)
    with pytest.raises(ValueError, match="metric='loss'.*metric='acc'"):
        searcher.set_search_properties("acc", None, SPACE)
    assert (searcher.metric, searcher.mode) == ("loss", "min")
    assert searcher.suggest("t0") is not None

    unnamed = BORESearch(space=SPACE)
    with pytest.raises(RuntimeError, match="metric"):
        unnamed.suggest("t0")
    # Several metrics: lists of the same length (tests/test_multi_objective_studies.py).
    with pytest.raises(ValueError, match="list of metrics"):
        BORESearch(metric=["a", "b"], mode=["min"])
    with pytest.raises(ValueError, match="mode"):
        BORESearch(metric="a", mode="maximise")
    with pytest.raises(ValueError, match="'deep/g'"):
        BORESearch().set_search_properties("a", "min", {"deep": {"g": tune.grid_search([1])}})
    with pytest.raises(ValueError, match="'s'"):
        CMESSearch(space={"s": tune.sample_from(lambda _: 1)})
    with pytest.raises(ValueError, match="same length"):
        BORESearch(points_to_evaluate=[{"x": 0.0}], evaluated_rewards=[1.0, 2.0])
    with pytest.raises(ValueError, match="Unknown parameter"):
        BORESearch(space=SPACE, points_to_evaluate=[{"z": 1.0}])
    with pytest.raises(ValueError, match="classifier"):
        BORESearch(classifier="svm")
    with pytest.raises(ValueError, match="acquisition"):
        CMESSearch(acquisition="ucb")


def test_evaluated_points_before_the_space_is_known() -> None:
    points = [{"x": 1.0, "deep": {"n": 4, "c": None}, "lr": 0.5}, {"x": 0.0, "deep/n": 2}]
    searcher = BORESearch(points_to_evaluate=points[:1], evaluated_rewards=[0.0], seed=0)
    searcher.add_evaluated_point(points[1] | {"deep/c": (1, 2), "lr": 0.01}, 3.0, pruned=True)
    searcher.add_evaluated_point(points[1] | {"deep/c": "a", "lr": 0.02}, None, True, False, [5.0])
    assert searcher.observations == {}
    searcher.set_search_properties("loss", "min", SPACE)
    observations = searcher.observations
    assert [o.state for o in observations.values()] == [
        TrialState.COMPLETE,
        TrialState.PRUNED,
        TrialState.FAILED,
    ]
    assert observations["evaluated_0"].params == {"x": 1.0, "deep/n": 4, "deep/c": 1, "lr": 500}
    assert observations["evaluated_1"].value == 3.0
    with pytest.raises(ValueError, match="misses"):
        searcher.add_evaluated_point({"x": 1.0}, 1.0)


def test_a_model_failure_warns_and_falls_back_to_random() -> None:
    searcher = BORESearch(space=SPACE, metric="loss", mode="min", n_startup_trials=0, seed=0)

    def broken(space: Any, observations: Any) -> Proposal:
        raise error

    error = FloatingPointError("singular matrix")
    searcher._proposer.next_proposal = broken  # type: ignore[method-assign]
    with pytest.warns(ModelFallbackWarning, match="FloatingPointError: singular matrix"):
        config = searcher.suggest("t0")
    assert -3.0 <= config["x"] < 3.0 and config["deep"]["c"] in ("a", None, (1, 2))
    assert searcher.proposal_sources == {"t0": "fallback"}


def test_quiet_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drive(BORESearch(space=SPACE, metric="loss", mode="min", n_startup_trials=3, seed=0), 5)
    assert capsys.readouterr() == ("", "")


# ------------------------------------------------------------------ bad inputs, real Tuners
def diverging_trainable(config: dict) -> None:
    """A run that diverges (loss +inf) for x > 0.5; the best loss lies next to that region."""
    x, y = config["x"], config["y"]
    tune.report({"loss": math.inf if x > 0.5 else (x - 0.45) ** 2 + (y - 0.3) ** 2})


@pytest.mark.parametrize("cls", [CMESSearch, PortfolioSearch])
def test_a_metric_of_plus_inf_is_learned_and_avoided(
    cls: type, ray_session: None, tmp_path: Path
) -> None:
    # +inf metrics were dropped as unusable, and the GP searchers kept proposing in the hole
    # they left.
    searcher = make_searcher(cls, metric="loss", mode="min", n_startup_trials=10, seed=0)
    space = {"x": tune.uniform(0.0, 1.0), "y": tune.uniform(0.0, 1.0)}
    results = run(
        diverging_trainable, searcher, tmp_path, num_samples=24, param_space=space, concurrency=1
    )
    configs = [searcher.observations[t].params for t in list(searcher.observations)[10:]]
    assert len(results) == 24 and len(configs) == 14
    assert sum(c["x"] > 0.5 for c in configs) <= 4


def test_a_point_to_evaluate_outside_a_choice_fails_before_any_trial(
    ray_session: None, tmp_path: Path
) -> None:
    # The constructor accepted it and Tuner.fit aborted mid-run when the point's turn came.
    space = {"x": tune.uniform(0.0, 1.0), "act": tune.choice(["relu", "tanh"])}
    points = [{"x": 0.1, "act": "relu"}, {"x": 0.2, "act": "gelu"}]
    with pytest.raises(ValueError, match="points_to_evaluate.*'gelu'"):
        BORESearch(space=space, metric="loss", mode="min", points_to_evaluate=points)
    searcher = BORESearch(points_to_evaluate=points)  # the space comes from the Tuner
    started: list[dict] = []
    with pytest.raises(Exception, match="points_to_evaluate.*'gelu'"):
        run(
            lambda config: started.append(config) or tune.report({"loss": config["x"]}),
            searcher,
            tmp_path,
            num_samples=4,
            param_space=space,
            metric="loss",
            mode="min",
        )
    assert not list(tmp_path.glob("exp/*/result.json"))  # no trial ran


def test_a_conflicting_mode_raises_instead_of_switching(ray_session: None, tmp_path: Path) -> None:
    # A searcher built with mode="min" was silently switched by TuneConfig(mode="max").
    searcher = BORESearch(metric="loss", mode="min")
    space = {"x": tune.uniform(0.0, 1.0)}
    with pytest.raises(Exception, match="mode='min'.*mode='max'"):
        run(
            lambda config: tune.report({"loss": config["x"]}),
            searcher,
            tmp_path,
            num_samples=2,
            param_space=space,
            metric="loss",
            mode="max",
        )
    # The same metric and mode in both places is no conflict.
    agreeing = BORESearch(metric="loss", mode="min", seed=0)
    results = run(
        lambda config: tune.report({"loss": config["x"]}),
        agreeing,
        tmp_path,
        num_samples=2,
        param_space=space,
        name="agree",
        metric="loss",
        mode="min",
    )
    assert len(results) == 2


# ------------------------------------------------------------------ input checks
def test_a_point_outside_the_domain_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"points_to_evaluate: x=9.0 is not a number in"):
        BORESearch({"x": tune.uniform(-5, 5)}, "loss", "min", points_to_evaluate=[{"x": 9.0}])
    searcher = BORESearch(points_to_evaluate=[{"x": 9.0}])
    with pytest.raises(ValueError, match="x=9.0"):  # checked once the Tuner gives the space
        searcher.set_search_properties("loss", "min", {"x": tune.uniform(-5, 5)})


def test_a_single_objective_searcher_rejects_several_metrics() -> None:
    from bore_samplers.integrations.ray import BinaryOutcomeSearch

    with pytest.raises(ValueError, match="BinaryOutcomeSearch optimises a single objective"):
        BinaryOutcomeSearch(metric=["ok", "fast"], mode=["max", "max"])
    searcher = BinaryOutcomeSearch()
    with pytest.raises(ValueError, match="single objective"):
        searcher.set_search_properties(["ok", "fast"], ["max", "max"], {"x": tune.uniform(0, 1)})


def test_a_metric_named_twice_is_rejected() -> None:
    with pytest.raises(ValueError, match="each objective once"):
        BORESearch(metric=["loss", "loss"], mode=["min", "max"])
