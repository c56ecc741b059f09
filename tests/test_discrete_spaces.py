"""Discrete parameters in real Optuna studies: every proposal lies on its grid.

Integer grids with a ``step``, log-scaled integers and one-choice categoricals through each of
the package's samplers; and the acquisition optimiser's answers on such spaces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
import pytest

from bore_samplers import (
    AutoSampler,
    BORESampler,
    CMESSampler,
    PortfolioSampler,
)
from bore_samplers.optimizers import MixedSpaceOptimizer
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace

optuna.logging.set_verbosity(optuna.logging.WARNING)

SAMPLERS: dict[str, Callable[[int], optuna.samplers.BaseSampler]] = {
    "bore": lambda seed: BORESampler(seed=seed, n_startup_trials=5),
    "cmes": lambda seed: CMESSampler(seed=seed, n_startup_trials=5),
    "portfolio": lambda seed: PortfolioSampler(seed=seed, n_startup_trials=5),
    "auto": lambda seed: AutoSampler(seed=seed, n_startup_trials=5),
}


def _grid_objective(trial: optuna.Trial) -> float:
    stepped = trial.suggest_int("stepped", 3, 27, step=4)  # 3, 7, ..., 27
    logged = trial.suggest_int("logged", 1, 1000, log=True)
    single = trial.suggest_categorical("single", ["only"])
    assert single == "only"
    return (stepped - 15) ** 2 / 100.0 + (np.log(logged) - 3.0) ** 2


def _categorical_objective(trial: optuna.Trial) -> float:
    values = [trial.suggest_categorical(f"c{j}", ["a", "b", "c", "d"]) for j in range(4)]
    single = trial.suggest_categorical("single", [7])
    level = trial.suggest_int("level", 0, 12, step=3)
    return float(sum(v == "b" for v in values)) * -1.0 + abs(level - 6) / 6.0 + single * 0.0


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_stepped_log_and_single_choice_parameters_stay_on_their_grid(name: str) -> None:
    study = optuna.create_study(sampler=SAMPLERS[name](0))
    study.optimize(_grid_objective, n_trials=14)
    for trial in study.trials:
        assert trial.state == optuna.trial.TrialState.COMPLETE
        stepped, logged = trial.params["stepped"], trial.params["logged"]
        assert isinstance(stepped, int) and isinstance(logged, int)
        assert stepped in range(3, 28, 4)
        assert 1 <= logged <= 1000
        assert trial.params["single"] == "only"


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_mostly_categorical_study_proposes_valid_choices(name: str) -> None:
    study = optuna.create_study(sampler=SAMPLERS[name](1))
    study.optimize(_categorical_objective, n_trials=14)
    for trial in study.trials:
        assert trial.state == optuna.trial.TrialState.COMPLETE
        assert all(trial.params[f"c{j}"] in "abcd" for j in range(4))
        assert trial.params["single"] == 7
        assert trial.params["level"] in (0, 3, 6, 9, 12)


def test_mixed_space_optimizer_finds_the_best_categorical_combination() -> None:
    # Six categoricals of five choices with an additive table: the local search over one
    # category at a time reaches the maximiser from any start.
    space = SearchSpace({f"c{j}": CategoricalParam(tuple("abcde")) for j in range(6)})
    rng = np.random.default_rng(0)
    table = rng.normal(size=(6, 5))
    columns = space.feature_columns()

    def score(u: np.ndarray) -> np.ndarray:
        features = space.features(u)
        return sum(features[:, cols] @ table[j] for j, cols in enumerate(columns))

    best_u = MixedSpaceOptimizer(n_sobol=64).maximize(score, space, np.random.default_rng(1))
    (config,) = space.decode(best_u[None])
    assert [config[f"c{j}"] for j in range(6)] == ["abcde"[i] for i in table.argmax(axis=1)]


@pytest.mark.parametrize(
    "param, valid",
    [
        (IntParam(3, 27, step=4), set(range(3, 28, 4))),
        (IntParam(1, 1000, log=True), set(range(1, 1001))),
        (FloatParam(0.0, 1.0, step=0.25), {0.0, 0.25, 0.5, 0.75, 1.0}),
        (CategoricalParam(("only",)), {"only"}),
    ],
)
def test_mixed_space_optimizer_answers_on_the_grid(param: Any, valid: set[Any]) -> None:
    space = SearchSpace({"p": param, "x": FloatParam(0.0, 1.0)})

    def score(u: np.ndarray) -> np.ndarray:
        # Peaks between grid points: an optimiser that moved discrete coordinates
        # continuously would stop there.
        return -((u[:, 0] - 0.37) ** 2) - (u[:, 1] - 0.5) ** 2

    u = MixedSpaceOptimizer(n_sobol=32).maximize(score, space, np.random.default_rng(0))
    np.testing.assert_array_equal(space.snap(u[None])[0], u)
    (config,) = space.decode(u[None])
    assert config["p"] in valid


def test_mixed_space_optimizer_on_integer_grids_reaches_the_best_grid_point() -> None:
    # Integers only (one large grid searched by neighbourhood moves), with an interaction.
    space = SearchSpace(
        {
            "a": IntParam(0, 9),
            "b": IntParam(0, 100, step=5),
            "c": IntParam(1, 64, log=True),
            "d": IntParam(0, 40),
        }
    )
    target = {"a": 7, "b": 35, "c": 9, "d": 31}
    goal = space.encode([target])[0]

    def score(u: np.ndarray) -> np.ndarray:
        diff = u - goal
        return -np.sum(diff**2, axis=1) - 0.5 * diff[:, 0] * diff[:, 1]

    u = MixedSpaceOptimizer(n_sobol=64).maximize(score, space, np.random.default_rng(3))
    assert space.decode(u[None])[0] == target
