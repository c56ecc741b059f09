"""AutoSampler: each decision through a real study, Optuna's conformance suites, pickling,
threads and processes on one storage, and AutoSearch in a real Ray Tune run."""

from __future__ import annotations

import logging
import math
import pickle
from collections.abc import Callable
from pathlib import Path

import optuna
import pytest
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)

from bore_samplers import AutoProposer, AutoSampler
from bore_samplers.integrations.auto import AUTO_PROPOSER_KEY, AUTO_REASON_KEY
from bore_samplers.observations import History, TrialState, history_from_observations
from bore_samplers.proposers.auto import StudyProfile, choose_proposer
from bore_samplers.space import FloatParam, SearchSpace

N_STARTUP = 4


def proposers(study: optuna.Study) -> list[str | None]:
    return [t.system_attrs.get(AUTO_PROPOSER_KEY) for t in study.trials]


def run(objective: Callable, n_trials: int = 8, **kwargs: object) -> optuna.Study:
    study = optuna.create_study(
        sampler=AutoSampler(seed=0, n_startup_trials=N_STARTUP),
        direction=kwargs.pop("direction", "minimize"),  # type: ignore[arg-type]
    )
    study.optimize(objective, n_trials=n_trials, catch=(RuntimeError,))
    return study


# ------------------------------------------------------------------ one test per decision
def test_numeric_space_goes_to_the_portfolio() -> None:
    study = run(lambda t: (t.suggest_float("x", -3, 3) - 1) ** 2 + t.suggest_int("n", 0, 9))
    assert proposers(study)[N_STARTUP:] == ["portfolio"] * (8 - N_STARTUP)
    assert "portfolio:probabilities" in study.trials[-1].user_attrs
    assert study.trials[-1].system_attrs[AUTO_REASON_KEY]


def test_constraints_go_to_constrained_ei() -> None:
    def objective(t: optuna.Trial) -> float:
        x, y = t.suggest_float("x", -2, 2), t.suggest_float("y", -2, 2)
        t.set_constraint("sum", x + y - 1)
        return x * x + y * y

    study = run(objective)
    assert proposers(study)[N_STARTUP:] == ["cei"] * (8 - N_STARTUP)
    assert "constraints" in study.trials[-1].system_attrs[AUTO_REASON_KEY]


def test_a_first_crash_moves_the_study_to_cmes() -> None:
    def objective(t: optuna.Trial) -> float:
        x = t.suggest_float("x", 0, 1)
        if t.number == 5:
            raise RuntimeError("out of memory")
        return x

    study = run(objective, n_trials=9)
    assert proposers(study)[N_STARTUP:6] == ["portfolio", "portfolio"]
    assert proposers(study)[6:] == ["cmes"] * 3


def test_mostly_categorical_space_goes_to_the_portfolio() -> None:
    # Measured ahead of BORE and cMES there (the mostly-categorical benchmark).
    def objective(t: optuna.Trial) -> float:
        a = t.suggest_categorical("a", ["p", "q", "r"])
        b = t.suggest_categorical("b", [1, 2, 3])
        return (a == "q") + (b - 2) ** 2 + t.suggest_float("x", 0, 1)

    study = run(objective)
    assert proposers(study)[N_STARTUP:] == ["portfolio"] * (8 - N_STARTUP)


def test_all_categorical_space_goes_to_cmes() -> None:
    def objective(t: optuna.Trial) -> float:
        a = t.suggest_categorical("a", ["p", "q", "r"])
        return (a == "q") + (t.suggest_categorical("b", [1, 2, 3]) - 2) ** 2

    study = run(objective)
    assert proposers(study)[N_STARTUP:] == ["cmes"] * (8 - N_STARTUP)
    assert "every parameter is categorical" in study.trials[-1].system_attrs[AUTO_REASON_KEY]


def test_a_one_choice_categorical_is_no_branch_parameter() -> None:
    # Left out of the joint space, as it has one value, but in every trial: no branch.
    def objective(t: optuna.Trial) -> float:
        a = t.suggest_categorical("a", ["p", "q", "r"])
        t.suggest_categorical("fixed", ["only"])
        return (a == "q") + (t.suggest_categorical("b", [1, 2, 3]) - 2) ** 2

    study = run(objective)
    assert proposers(study)[N_STARTUP:] == ["cmes"] * (8 - N_STARTUP)


def _model_then_its_parameter(t: optuna.Trial) -> float:
    if t.suggest_categorical("model", ["a", "b"]) == "a":
        return t.suggest_float("u", 0, 1)
    return t.suggest_int("v", 0, 10) / 10


def test_categorical_choice_with_branch_parameters_stays_with_bore() -> None:
    # The branch parameters, drawn outside the model, make the choice's value noisy: BORE's
    # quantile labels measured ahead of a noise-free GP there (the conditional benchmark).
    # One choice: each value's share of good trials; several: a forest.
    study = run(_model_then_its_parameter, n_trials=10)
    assert proposers(study)[N_STARTUP + 1 :] == ["bore-lookup"] * (10 - N_STARTUP - 1)

    def two_choices_then_a_parameter(t: optuna.Trial) -> float:
        scale = t.suggest_categorical("scale", [1, 2])
        return scale * _model_then_its_parameter(t)

    study = run(two_choices_then_a_parameter, n_trials=10)
    assert proposers(study)[N_STARTUP + 1 :] == ["bore-choice"] * (10 - N_STARTUP - 1)


def test_conditional_space_models_the_shared_parameters_and_the_branches_by_group() -> None:
    study = run(_model_then_its_parameter, n_trials=12)
    later = proposers(study)[N_STARTUP + 1 :]
    assert later and "tpe" not in later and "start-up" not in later
    assert "proposed group by group by a model" in study.trials[-1].system_attrs[AUTO_REASON_KEY]


def test_a_parameter_that_appears_mid_study_keeps_what_was_learnt() -> None:
    # The shared parameters stay with the model that learnt them; only the new branch
    # parameters are proposed apart, as a group. Handing the whole study to TPE when "use_z"
    # appeared made the median of the last ten trials jump from about 0 to 4-10.
    def objective(t: optuna.Trial) -> float:
        value = (t.suggest_float("x", -5, 5) - 1) ** 2 + (t.suggest_float("y", -5, 5) + 1) ** 2
        if t.number >= 25 and t.suggest_categorical("use_z", [False, True]):
            value += 0.1 * t.suggest_float("z", 0, 1)
        return value

    study = optuna.create_study(sampler=AutoSampler(seed=0))
    study.optimize(objective, n_trials=40)
    later = study.trials[26:]
    assert {t.system_attrs[AUTO_PROPOSER_KEY] for t in later} == {"portfolio"}
    assert "branch) (use_z, z)" in later[-1].system_attrs[AUTO_REASON_KEY]
    assert sorted(t.value for t in later)[len(later) // 2] < 0.5


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_binary_values_go_to_ucb_phi(direction: str) -> None:
    study = run(lambda t: int(t.suggest_float("x", 0, 1) > 0.6), n_trials=8, direction=direction)
    assert proposers(study)[N_STARTUP + 1 :] == ["binary"] * (8 - N_STARTUP - 1)


def test_many_trials_go_to_bore() -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    sampler = AutoSampler(seed=0, n_startup_trials=2, large_study=30)
    study = optuna.create_study(sampler=sampler)
    distributions = {
        "x": optuna.distributions.FloatDistribution(0.0, 1.0),
        "y": optuna.distributions.FloatDistribution(0.0, 1.0),
    }
    for i in range(30):
        x, y = (i * 0.37) % 1, (i * 0.61) % 1
        study.add_trial(
            optuna.trial.create_trial(
                params={"x": x, "y": y}, distributions=distributions, value=x + y
            )
        )
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), 2)
    assert proposers(study)[-2:] == ["bore", "bore"]
    assert space.n_dims == 2


@pytest.mark.parametrize(("constrained", "member"), [(True, "cei"), (False, "cmes")])
def test_several_objectives_go_to_cei_with_constraints_and_to_cmes_without(
    constrained: bool, member: str
) -> None:
    # Without constraints, MES on a ParEGO scalarisation measured ahead of the portfolio
    # (the multi-objective and three-objectives benchmarks).
    def objective(t: optuna.Trial) -> tuple[float, float]:
        x, y = t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)
        if constrained:
            t.set_constraint("c", x + y - 1.5)
        return x + y, (1 - x) ** 2 + y

    study = optuna.create_study(
        sampler=AutoSampler(seed=0, n_startup_trials=N_STARTUP),
        directions=["minimize", "maximize"],
    )
    study.optimize(objective, n_trials=7)
    assert proposers(study)[N_STARTUP:] == [member] * 3
    assert len(study.best_trials) >= 1


@pytest.mark.parametrize(("n_objectives", "member"), [(1, "portfolio"), (2, "cmes"), (3, "cmes")])
def test_the_objectives_choose_between_the_portfolio_and_cmes(
    n_objectives: int, member: str
) -> None:
    profile = StudyProfile(5, 0, 50, False, False, False, n_objectives=n_objectives)
    assert choose_proposer(profile).proposer == member


def test_the_choice_is_logged_once_when_it_changes(caplog: pytest.LogCaptureFixture) -> None:
    def objective(t: optuna.Trial) -> float:
        x = t.suggest_float("x", 0, 1)
        if t.number == 6:
            raise RuntimeError("crash")
        return x

    optuna.logging.enable_propagation()  # Optuna's loggers reach caplog only so
    try:
        with caplog.at_level(logging.INFO, logger="optuna.bore_samplers"):
            run(objective, n_trials=9)
    finally:
        optuna.logging.disable_propagation()
    # pytest 9 also hands records of non-propagating loggers to caplog: with propagation on,
    # each record arrives twice (the same object), so count distinct records.
    records = {id(record): record for record in caplog.records}.values()
    lines = [r.getMessage() for r in records if "AutoSampler" in r.getMessage()]
    assert len(lines) == 2, lines
    assert "portfolio" in lines[0] and "cmes" in lines[1]


# ------------------------------------------------------------------ the rules in the core
def _history(values: list[float]) -> History:
    from bore_samplers.observations import Observation

    space = SearchSpace({"x": FloatParam(0.0, 1.0)})
    observations = [Observation({"x": i / 10}, v) for i, v in enumerate(values)]
    return history_from_observations(space, observations)


@pytest.mark.parametrize(
    ("values", "binary"),
    [([0, 1, 1], True), ([0, -1, 0], True), ([1, 1, 1], False), ([0, 1, 2], False)],
)
def test_binary_values_need_both_outcomes(values: list[float], binary: bool) -> None:
    profile = StudyProfile.from_history(_history([float(v) for v in values]))
    assert profile.binary_values is binary
    assert (choose_proposer(profile).proposer == "binary") is binary


@pytest.mark.parametrize(("n_params", "member"), [(19, "portfolio"), (20, "ei"), (40, "ei")])
def test_ei_alone_proposes_in_twenty_dimensions_or_more(n_params: int, member: str) -> None:
    profile = StudyProfile(n_params, 0, 50, False, False, False)
    assert choose_proposer(profile).proposer == member


def test_a_twenty_parameter_study_runs_ei_alone() -> None:
    def objective(t: optuna.Trial) -> float:
        return sum((t.suggest_float(f"x{i}", -1, 1) - 0.3) ** 2 for i in range(20))

    study = run(objective, n_trials=12)
    assert study.trials[-1].system_attrs[AUTO_PROPOSER_KEY] == "ei"


def test_the_binary_member_sees_the_smaller_value_as_the_target() -> None:
    proposer = AutoProposer(n_startup=2, seed=0)
    history = _history([0.0, -1.0, -1.0, 0.0])  # a maximised outcome arrives negated
    u, record = proposer.propose_from_model_with_record(history)
    assert record["auto_proposer"] == "binary" and u.shape == (1,)
    assert history.mask(TrialState.COMPLETE).all()


def test_bad_options_name_the_option() -> None:
    with pytest.raises(ValueError, match="n_startup_trials"):
        AutoSampler(n_startup_trials=-1)
    with pytest.raises(ValueError, match="large_study"):
        AutoSampler(large_study=0)
    with pytest.raises(ValueError, match="seed"):
        AutoSampler(seed=-1)
    with pytest.raises(TypeError, match="independent_sampler"):
        AutoSampler(independent_sampler="random")  # type: ignore[arg-type]


# ------------------------------------------------------------------ what Optuna users expect
def test_seed_reproduces_and_pickled_samplers_continue_identically() -> None:
    def objective(t: optuna.Trial) -> float:
        return (t.suggest_float("x", -3, 3) - 1) ** 2 + t.suggest_int("n", 0, 5)

    studies = [run(objective, n_trials=7) for _ in range(2)]
    assert [t.params for t in studies[0].trials] == [t.params for t in studies[1].trials]

    sampler = AutoSampler(seed=1, n_startup_trials=3)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=5)
    copy = pickle.loads(pickle.dumps(sampler))
    twin = optuna.create_study(sampler=copy)
    for trial in study.trials:
        twin.add_trial(trial)
    study.optimize(objective, n_trials=2)
    twin.optimize(objective, n_trials=2)
    assert [t.params for t in study.trials[-2:]] == [t.params for t in twin.trials[-2:]]


def test_threads_and_processes_share_one_storage(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'auto.db'}"
    study = optuna.create_study(storage=storage, sampler=AutoSampler(seed=0, n_startup_trials=3))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=10, n_jobs=2)
    other = optuna.load_study(
        study_name=study.study_name, storage=storage, sampler=AutoSampler(seed=1)
    )
    other.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=2)
    trials = other.trials
    assert len(trials) == 12 and all(t.state.is_finished() for t in trials)
    xs = [t.params["x"] for t in trials]
    assert len(set(xs)) == len(xs)  # no configuration proposed twice
    assert all(math.isfinite(t.value) for t in trials)


# ------------------------------------------------------------------ Optuna's conformance suites
class _AutoFixture:
    @pytest.fixture
    def sampler(self) -> Callable[[], BaseSampler]:
        return lambda: AutoSampler(n_startup_trials=2)


class TestAutoBasic(_AutoFixture, BasicSamplerTestCase):
    pass


class TestAutoRelative(_AutoFixture, RelativeSamplerTestCase):
    pass


class TestAutoMultiObjective(_AutoFixture, MultiObjectiveSamplerTestCase):
    pass


# ------------------------------------------------------------------ Ray Tune
def _trainable(config: dict) -> None:
    from ray import tune

    tune.report({"loss": (config["x"] - 0.3) ** 2 + 0.1 * config["n"]})


def test_auto_search_in_a_real_tuner_with_eight_trials_in_flight(
    ray_session: None, tmp_path: Path
) -> None:
    from ray import tune

    from bore_samplers.integrations.ray import AutoSearch

    searcher = AutoSearch(metric="loss", mode="min", seed=0, n_startup_trials=3)
    tuner = tune.Tuner(
        tune.with_resources(_trainable, {"cpu": 0.25}),  # eight at once on two CPUs
        param_space={"x": tune.uniform(0, 1), "n": tune.randint(0, 4)},
        tune_config=tune.TuneConfig(
            search_alg=searcher, num_samples=16, max_concurrent_trials=8, reuse_actors=True
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="auto", verbose=0),
    )
    results = tuner.fit()
    assert len(results) == 16 and not results.errors
    assert results.get_best_result(metric="loss", mode="min").metrics["loss"] < 0.4
    # Each suggestion saw the trials in flight: no configuration twice.
    configurations = {tuple(sorted(o.params.items())) for o in searcher.observations.values()}
    assert len(configurations) == 16


# ------------------------------------------------------------------ fallbacks and the rules
def test_a_model_failure_names_autosampler_and_marks_the_trial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bore_samplers.proposers.base import ModelFallbackWarning

    def broken(self: AutoProposer, history: History) -> tuple:
        raise RuntimeError("the model broke")

    monkeypatch.setattr(AutoProposer, "propose_from_model_with_record", broken)
    with pytest.warns(ModelFallbackWarning, match=r"^AutoSampler could not propose"):
        study = optuna.create_study(sampler=AutoSampler(seed=0, n_startup_trials=3))
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=5)
    last = study.trials[-1]
    assert last.system_attrs["bore_samplers:source"] == "fallback"
    assert last.system_attrs[AUTO_PROPOSER_KEY] == "fallback"
    assert "RandomSampler" in last.system_attrs[AUTO_REASON_KEY]


#: Text of one row of the rule table (split, so that this file does not match it).
RULE_ROW = "a conditional space" + "'s choice"


def test_the_rule_table_has_one_home_and_its_explanation() -> None:
    root = Path(__file__).resolve().parents[1]
    candidates = [root / "README.md", *root.glob("docs/*.md"), *root.glob("bore_samplers/**/*.py")]
    holding = sorted(
        path.relative_to(root).as_posix()
        for path in candidates
        if RULE_ROW in path.read_text(encoding="utf-8")
    )
    assert holding == ["bore_samplers/proposers/auto.py", "docs/auto.md"]
