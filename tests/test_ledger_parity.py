"""One ledger for both frameworks: the same seeded experiment through Optuna and through Ray
Tune gets the same proposals.

Both adapters turn their trials into the same observations (proposers/ledger.py) and ask the
same proposer. The experiment has a failing trial and, for cMES, a constraint; its first
configuration is given (``enqueue_trial`` / ``points_to_evaluate``), since Optuna samples a
study's first trial with its independent sampler (no search space is known before it).
"""

from __future__ import annotations

import math
from typing import Any

import optuna
import pytest

pytest.importorskip("ray")

from ray import tune  # noqa: E402

from bore_samplers import AutoSampler, BORESampler, CMESSampler  # noqa: E402
from bore_samplers.integrations.ray import AutoSearch, BORESearch, CMESSearch  # noqa: E402

N_TRIALS = 14
FIRST = {"c": "b", "n": 4, "x": 0.25}
TUNE_SPACE = {  # sorted names, as Optuna's intersection search space sorts them
    "c": tune.choice(["a", "b", "c"]),
    "n": tune.randint(1, 9),
    # A stepped float: the same core parameter in both (Tune's uniform excludes its upper
    # bound, Optuna's includes it: their unit codes would differ by an ulp).
    "x": tune.quniform(0.0, 1.0, 0.001),
}
FAST_CMES = {"n_discretization": 200, "n_y_star_samples": 4, "n_candidates": 256}


def evaluate(number: int, config: dict[str, Any]) -> tuple[float, float] | None:
    """Loss and constraint of a configuration; None (a crash) for the fourth trial."""
    if number == 3:
        return None
    x, n, c = config["x"], config["n"], config["c"]
    loss = (x - 0.7) ** 2 + 0.05 * (n - 5) ** 2 + {"a": 0.0, "b": 0.3, "c": 0.1}[c]
    return loss, x + n / 8 - 1.2


def optuna_configs(sampler: optuna.samplers.BaseSampler) -> list[dict[str, Any]]:
    def objective(trial: optuna.Trial) -> float:
        config = {
            "c": trial.suggest_categorical("c", ["a", "b", "c"]),
            "n": trial.suggest_int("n", 1, 8),
            "x": trial.suggest_float("x", 0.0, 1.0, step=0.001),
        }
        outcome = evaluate(trial.number, config)
        if outcome is None:
            raise RuntimeError("crashed")
        trial.set_constraint("g", outcome[1])
        return outcome[0]

    study = optuna.create_study(sampler=sampler)
    study.enqueue_trial(FIRST)
    study.optimize(objective, n_trials=N_TRIALS, catch=(RuntimeError,))
    return [trial.params for trial in study.trials]


def ray_configs(searcher: Any) -> list[dict[str, Any]]:
    configs = []
    for number in range(N_TRIALS):
        config = searcher.suggest(f"t{number}")
        configs.append(config)
        outcome = evaluate(number, config)
        if outcome is None:
            searcher.on_trial_complete(f"t{number}", error=True)
        else:
            result = {"loss": outcome[0], "g": outcome[1], "training_iteration": 1}
            searcher.on_trial_complete(f"t{number}", result)
    return configs


def assert_same(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> None:
    assert len(first) == len(second) == N_TRIALS
    for number, (a, b) in enumerate(zip(first, second, strict=True)):
        assert a["c"] == b["c"] and a["n"] == b["n"], (number, a, b)
        # The same grid point, rounded by each framework in its own way.
        assert math.isclose(a["x"], b["x"], abs_tol=1e-12), (number, a, b)


def test_bore_proposes_alike_in_optuna_and_ray() -> None:
    options = {"n_startup_trials": 5, "seed": 3}
    in_optuna = optuna_configs(BORESampler(**options))
    searcher = BORESearch(
        TUNE_SPACE, "loss", "min", points_to_evaluate=[FIRST], constraints=["g"], **options
    )
    assert_same(in_optuna, ray_configs(searcher))


def test_cmes_with_a_constraint_proposes_alike_in_optuna_and_ray() -> None:
    options = {"n_startup_trials": 5, "seed": 4, **FAST_CMES}
    in_optuna = optuna_configs(CMESSampler(**options))
    searcher = CMESSearch(
        TUNE_SPACE, "loss", "min", points_to_evaluate=[FIRST], constraints=["g"], **options
    )
    assert_same(in_optuna, ray_configs(searcher))


def test_auto_routes_and_proposes_alike_in_optuna_and_ray() -> None:
    options = {"n_startup_trials": 5, "seed": 5}
    in_optuna = optuna_configs(AutoSampler(**options))
    searcher = AutoSearch(
        TUNE_SPACE, "loss", "min", points_to_evaluate=[FIRST], constraints=["g"], **options
    )
    assert_same(in_optuna, ray_configs(searcher))
    assert list(searcher.observations.values())[-1].record["auto_proposer"] == "cei"
