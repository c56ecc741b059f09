"""Multi-objective studies end to end: Optuna studies (constraints, failed trials, the Pareto
front plot), the single-objective samplers' refusal, and Ray Tune runs with several metrics.

Optuna's multi-objective conformance suite runs with the single-objective ones in
``tests/test_optuna_conformance.py`` and ``tests/test_portfolio_sampler.py``. No quality is
asserted here: ``python -m benchmarks run multi-objective`` measures it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState as OptunaTrialState

from bore_samplers import BinaryOutcomeSampler, BORESampler, CMESSampler, PortfolioSampler
from bore_samplers.integrations.reporting import track_proposals
from bore_samplers.observations import TrialState
from bore_samplers.proposers.base import ModelFallbackWarning

optuna.logging.set_verbosity(optuna.logging.WARNING)

N_STARTUP = 8
N_TRIALS = 20
CRASHES = (4, 11, 15)  # trial numbers whose objective raises

SAMPLERS: list[Any] = [
    pytest.param(lambda: BORESampler(seed=0, n_startup_trials=N_STARTUP), id="bore"),
    pytest.param(
        lambda: CMESSampler(seed=0, n_startup_trials=N_STARTUP, n_discretization=200),
        id="cmes",
    ),
    pytest.param(lambda: PortfolioSampler(seed=0, n_startup_trials=N_STARTUP), id="portfolio"),
]


class Crash(RuntimeError):
    pass


def constrained_zdt1(trial: optuna.Trial) -> tuple[float, float]:
    """ZDT1 on three variables (first minimised) with its second objective negated (maximised)
    and a constraint ``x0 + x1 <= 1.5``; some trials crash."""
    x = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(3)]
    trial.set_constraint("budget", x[0] + x[1] - 1.5)
    if trial.number in CRASHES:
        raise Crash("out of memory")
    g = 1.0 + 9.0 * (x[1] + x[2]) / 2.0
    return x[0], -(g * (1.0 - math.sqrt(x[0] / g)))


@pytest.mark.parametrize("make_sampler", SAMPLERS)
def test_two_objective_study_with_constraint_and_crashes(
    make_sampler: Callable[[], Any],
) -> None:
    sampler = make_sampler()
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler)
    sources = track_proposals(sampler)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)  # a silent fallback is a failure
        study.optimize(constrained_zdt1, n_trials=N_TRIALS, catch=(Crash,))
    states = [t.state for t in study.trials]
    assert len(states) == N_TRIALS
    assert [i for i, s in enumerate(states) if s == OptunaTrialState.FAIL] == list(CRASHES)
    # Every trial after the start-up design came from the model.
    counts = sources.counts()
    assert counts["fallback"] == 0
    assert counts["model"] == N_TRIALS - N_STARTUP, sources.summary(N_TRIALS)
    assert study.best_trials  # Optuna's Pareto front of the feasible trials
    # The observations: both values minimised (the second negated back), constraints kept.
    observations = sampler.observations(study)
    for trial, observation in zip(study.trials, observations, strict=True):
        assert observation.constraints == {"budget": trial.constraints["budget"]}
        if trial.state == OptunaTrialState.COMPLETE:
            assert observation.values == (trial.values[0], -trial.values[1])
            assert observation.value == trial.values[0]
        else:
            assert observation.state is TrialState.FAILED and observation.values is None


def test_three_objectives_with_a_pending_trial() -> None:
    sampler = BORESampler(seed=1, n_startup_trials=5)
    study = optuna.create_study(directions=["minimize"] * 3, sampler=sampler)

    def dtlz2(trial: optuna.Trial) -> tuple[float, float, float]:
        x = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(3)]
        g = (x[2] - 0.5) ** 2
        a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
        return (
            (1 + g) * math.cos(a) * math.cos(b),
            (1 + g) * math.cos(a) * math.sin(b),
            (1 + g) * math.sin(a),
        )

    study.optimize(dtlz2, n_trials=10)
    pending = study.ask()  # a RUNNING trial among the observations of the next proposal
    pending.suggest_float("x0", 0.0, 1.0)
    study.optimize(dtlz2, n_trials=3)
    assert sum(t.state == OptunaTrialState.COMPLETE for t in study.trials) == 13


def test_pareto_front_plot_works_on_our_studies() -> None:
    pytest.importorskip("plotly")
    study = optuna.create_study(
        directions=["minimize", "maximize"], sampler=BORESampler(seed=0, n_startup_trials=4)
    )
    study.optimize(constrained_zdt1, n_trials=8, catch=(Crash,))
    figure = optuna.visualization.plot_pareto_front(study)
    assert len(figure.data) >= 1
    assert figure.to_html()


def test_binary_outcomes_refuse_several_objectives_clearly() -> None:
    study = optuna.create_study(
        directions=["maximize", "minimize"], sampler=BinaryOutcomeSampler(seed=0)
    )
    with pytest.raises(ValueError) as caught:
        study.optimize(lambda t: (t.suggest_float("x", 0, 1) > 0.5, 1.0), n_trials=1, catch=())
    message = str(caught.value)
    assert "BinaryOutcomeSampler" in message and "single objective" in message
    assert "multi-objective" in message and "BORESampler" in message


# ------------------------------------------------------------------------------ Ray Tune
def test_ray_searchers_take_lists_of_metrics_and_modes() -> None:
    pytest.importorskip("ray")
    from ray import tune

    from bore_samplers.integrations.ray import BORESearch

    space = {"x": tune.uniform(0.0, 1.0)}
    for metric, mode in ((["a", "b"], "min"), (["a", "b"], ["min"]), ("a", ["min", "max"])):
        with pytest.raises(ValueError, match="list of metrics"):
            BORESearch(space=space, metric=metric, mode=mode)
    with pytest.raises(ValueError, match="'min' or 'max'"):
        BORESearch(space=space, metric=["a", "b"], mode=["min", "up"])
    searcher = BORESearch(
        space=space,
        metric=["a", "b"],
        mode=["min", "max"],
        points_to_evaluate=[{"x": 0.1}, {"x": 0.2}],
        evaluated_rewards=[(1.0, 2.0), (3.0, float("nan"))],
        n_startup_trials=3,
        seed=0,
    )
    searcher.suggest("t1")
    searcher.on_trial_complete("t1", {"a": 0.5, "b": 4.0})
    searcher.suggest("t2")
    searcher.on_trial_complete("t2", {"a": 0.5})  # one metric missing: failed
    searcher.suggest("t3")  # pending
    observations = searcher.observations
    assert observations["evaluated_0"].values == (1.0, -2.0)
    assert observations["evaluated_1"].state is TrialState.FAILED
    assert observations["t1"].values == (0.5, -4.0) and observations["t1"].value == 0.5
    assert observations["t2"].state is TrialState.FAILED and observations["t2"].values is None
    assert observations["t3"].state is TrialState.RUNNING
    for i in range(4, 10):  # past the start-up design: model proposals
        config = searcher.suggest(f"t{i}")
        searcher.on_trial_complete(f"t{i}", {"a": config["x"], "b": (1 - config["x"]) ** 2})


def two_metrics_trainable(config: dict) -> dict:
    from ray import tune

    x, y = config["x"], config["y"]
    if x + y > 1.6:
        raise RuntimeError("out of memory")
    tune.report({"loss": x**2 + y, "accuracy": 1.0 - (x - 1.0) ** 2 - 0.5 * y})
    return {}


@pytest.mark.parametrize("searcher_name", ["BORESearch", "CMESSearch", "PortfolioSearch"])
def test_tuner_run_with_two_metrics(searcher_name: str, ray_session: None, tmp_path: Path) -> None:
    from ray import tune

    from bore_samplers.integrations import ray as ray_integration

    options: dict[str, Any] = {"n_discretization": 200} if searcher_name == "CMESSearch" else {}
    searcher = getattr(ray_integration, searcher_name)(
        space={"x": tune.uniform(0.0, 1.0), "y": tune.uniform(0.0, 1.0)},
        metric=["loss", "accuracy"],
        mode=["min", "max"],
        n_startup_trials=5,
        seed=0,
        **options,
    )
    sources = track_proposals(searcher)
    tuner = tune.Tuner(
        two_metrics_trainable,
        tune_config=tune.TuneConfig(
            search_alg=searcher, num_samples=10, max_concurrent_trials=1, time_budget_s=900.0
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="mo", verbose=0),
    )
    results = tuner.fit()
    assert len(results) == 10
    observations = list(searcher.observations.values())
    crashed = [o.params["x"] + o.params["y"] > 1.6 for o in observations]
    for observation, crash in zip(observations, crashed, strict=True):
        if crash:
            assert observation.state is TrialState.FAILED and observation.values is None
        else:
            x, y = observation.params["x"], observation.params["y"]
            expected = (x**2 + y, -(1.0 - (x - 1.0) ** 2 - 0.5 * y))
            np.testing.assert_allclose(observation.values, expected)
    assert sources.counts()["model"] == 5, sources.summary(len(results))
