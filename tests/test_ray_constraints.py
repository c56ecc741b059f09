"""Constraints in Ray Tune: metrics the trainable reports, feasible iff <= 0.

A real ``tune.Tuner`` (one local Ray with 2 CPUs, trials one at a time) minimises
``(x - 0.9)² + (y - 0.9)²`` on the unit square subject to ``c = x + y - 1 <= 0`` (optimum 0.32 at
x = y = 0.5), with ``CMESSearch`` and ``AutoSearch``; the Searcher API tests say how missing
and NaN constraint values enter.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")

from ray import tune  # noqa: E402

from bore_samplers.integrations.ray import AutoSearch, CMESSearch  # noqa: E402
from bore_samplers.observations import TrialState  # noqa: E402
from bore_samplers.validation import InvalidOptionError  # noqa: E402

SPACE = {"x": tune.uniform(0.0, 1.0), "y": tune.uniform(0.0, 1.0)}
# Small models keep cMES's proposals fast on CI's two cores.
FAST_CMES = {"n_discretization": 500, "n_y_star_samples": 5}


def constrained_trainable(config: dict) -> None:
    x, y = config["x"], config["y"]
    tune.report({"loss": (x - 0.9) ** 2 + (y - 0.9) ** 2, "c": x + y - 1.0})


def run(searcher: Any, tmp_path: Path, num_samples: int) -> tune.ResultGrid:
    tuner = tune.Tuner(
        constrained_trainable,
        param_space=SPACE,
        tune_config=tune.TuneConfig(
            search_alg=searcher,
            metric="loss",
            mode="min",
            num_samples=num_samples,
            max_concurrent_trials=1,
            # A hang guard, not a speed target.
            time_budget_s=900.0,
        ),
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="constrained", verbose=0),
    )
    return tuner.fit()


def last_constraints(searcher: Any) -> list[float]:
    """The constraint values of the last 10 trials, in the order suggested."""
    return [o.constraints["c"] for o in list(searcher.observations.values())[-10:]]


def best_feasible(searcher: Any) -> float:
    observations = searcher.observations.values()
    return min((o.value for o in observations if o.is_feasible), default=math.inf)


SEARCHERS = {
    "CMESSearch": lambda: CMESSearch(constraints=["c"], seed=0, **FAST_CMES),
    "AutoSearch": lambda: AutoSearch(constraints=["c"], seed=0),
}


@pytest.fixture(scope="module", params=list(SEARCHERS))
def constrained_run(
    request: pytest.FixtureRequest, ray_session: None, tmp_path_factory: Any
) -> Any:
    """A 30-trial Tuner run of each searcher, shared by the tests below."""
    searcher = SEARCHERS[request.param]()
    results = run(searcher, tmp_path_factory.mktemp(request.param), num_samples=30)
    assert results.num_errors == 0 and len(results) == 30
    return searcher


def test_a_tuner_finds_the_feasible_optimum(constrained_run: Any) -> None:
    searcher = constrained_run
    assert best_feasible(searcher) <= 0.35  # the optimum is 0.32, at x = y = 0.5
    observations = list(searcher.observations.values())
    assert all(set(o.constraints) == {"c"} for o in observations)
    if isinstance(searcher, AutoSearch):  # routed as AutoSampler routes constrained studies
        assert observations[-1].record["auto_proposer"] == "cei"
        # Constrained EI refines the optimum on the boundary: every late trial is on it.
        assert sum(c <= 1e-4 for c in last_constraints(searcher)) >= 7


def test_most_late_trials_are_strictly_feasible(constrained_run: Any) -> None:
    # The probability of feasibility keeps a small margin, so trials on the boundary land on
    # its feasible side.
    assert sum(c <= 0 for c in last_constraints(constrained_run)) >= 7


# ------------------------------------------------------------------ the Searcher API
def drive(searcher: Any, results: list[dict | None]) -> None:
    for i, result in enumerate(results):
        searcher.suggest(f"t{i}")
        searcher.on_trial_complete(f"t{i}", result)


def test_missing_and_nan_constraints_enter_as_in_an_optuna_study() -> None:
    searcher = CMESSearch(SPACE, metric="loss", mode="min", constraints=["c", "d"], seed=0)
    drive(
        searcher,
        [
            {"loss": 1.0, "c": 0.5, "d": -1.0},  # infeasible
            {"loss": 2.0, "c": -0.5},  # d unknown here: feasible as far as known
            {"loss": 3.0, "c": math.nan, "d": 0.0},  # set_constraint(NaN) fails the trial
            {"loss": 4.0, "c": -math.inf, "d": math.inf},  # ±inf kept
        ],
    )
    first, second, third, fourth = searcher.observations.values()
    assert first.constraints == {"c": 0.5, "d": -1.0} and not first.is_feasible
    assert second.constraints == {"c": -0.5} and second.is_feasible
    assert third.state is TrialState.FAILED and third.value is None
    assert fourth.constraints == {"c": -math.inf, "d": math.inf} and not fourth.is_feasible


def test_constraints_are_checked_in_the_constructor() -> None:
    with pytest.raises(InvalidOptionError, match="constraints"):
        CMESSearch(metric="loss", mode="min", constraints="c")
    with pytest.raises(InvalidOptionError, match="distinct metrics other than the objective"):
        CMESSearch(metric="loss", mode="min", constraints=["loss"])
    with pytest.raises(InvalidOptionError, match="distinct"):
        AutoSearch(metric="loss", mode="min", constraints=["c", "c"])


def test_the_tuner_metric_may_not_be_a_constraint() -> None:
    searcher = CMESSearch(constraints=["loss"])
    with pytest.raises(InvalidOptionError, match="other than the objective"):
        searcher.set_search_properties("loss", "min", SPACE)


def test_an_evaluated_point_brings_its_constraints() -> None:
    searcher = CMESSearch(metric="loss", mode="min", constraints=["c"], seed=0)
    searcher.add_evaluated_point({"x": 0.9, "y": 0.9}, 0.0, constraints={"c": 0.8})
    searcher.set_search_properties(None, None, SPACE)  # the space comes after the point
    (observation,) = searcher.observations.values()
    assert observation.constraints == {"c": 0.8} and not observation.is_feasible
