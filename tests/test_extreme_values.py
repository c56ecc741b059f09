"""Infinite and huge objective values: the models keep learning from the other values.

Single-objective ``±inf`` are ranked (imputed beyond the finite values); the same holds for
every objective of a multi-objective study. A huge penalty (``1e10`` over part of the box)
must not flatten the GP's view of the ordinary values: the GP samplers find the optimum as
BORE does.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
import pytest

from bore_samplers import AutoSampler, CMESSampler, PortfolioSampler
from bore_samplers.integrations.reporting import track_proposals
from bore_samplers.models.targets import close_outlier_gaps, objective_targets, standardize
from bore_samplers.multi_objective import normalize_objectives, parego_scalarize
from bore_samplers.proposers.base import ModelFallbackWarning

optuna.logging.set_verbosity(optuna.logging.WARNING)

PENALTY = 1e10


# ------------------------------------------------------------------- the value transforms
def test_outlier_gaps_are_left_alone_on_ordinary_values() -> None:
    rng = np.random.default_rng(0)
    samples = [
        rng.normal(size=50),
        np.exp(3.0 * rng.normal(size=50)),  # heavy tailed: the power warp's business
        np.sum((rng.random((40, 2)) * 4 - 2) ** 2, axis=1) ** 2,
        np.array([1.0, 1.0, 1.0, 5.0]),
        np.array([3.0]),
        np.array([]),
    ]
    for values in samples:
        np.testing.assert_array_equal(close_outlier_gaps(values), values)


def test_a_penalty_plateau_is_moved_next_to_the_other_values() -> None:
    rng = np.random.default_rng(1)
    ordinary = 1.0 + rng.random(12)
    values = np.concatenate([ordinary, np.full(5, PENALTY), [3 * PENALTY, -PENALTY]])
    closed = close_outlier_gaps(values)
    np.testing.assert_array_equal(closed[:12], ordinary)  # the bulk is untouched
    order = np.argsort(values, kind="stable")
    assert np.all(np.diff(closed[order]) >= 0)  # the order is kept, ties stay ties
    assert np.all(closed[12:17] == closed[12])
    median = np.median(values)
    assert closed.max() - closed.min() < 10 * (ordinary.max() - ordinary.min())
    assert closed[12] > ordinary.max() and closed[-2] > closed[12] and closed[-1] < median
    # Units do not matter: the map commutes with positive affine maps and negation.
    np.testing.assert_allclose(close_outlier_gaps(7.0 * values - 3.0), 7.0 * closed - 3.0)
    np.testing.assert_allclose(close_outlier_gaps(-values), -closed)


def test_objective_targets_spread_the_ordinary_values_despite_a_penalty() -> None:
    rng = np.random.default_rng(2)
    ordinary = 1.0 + rng.random(12)
    targets = objective_targets(np.concatenate([ordinary, np.full(8, PENALTY), [math.inf]]))
    assert np.all(np.isfinite(targets))
    assert np.ptp(targets[:12]) > 0.2 * np.ptp(targets)
    # Ordinary values: the plain standardisation.
    np.testing.assert_array_equal(
        objective_targets(ordinary, warp=False), standardize(ordinary)[0]
    )


def test_normalised_objectives_rank_infinite_and_huge_values() -> None:
    rng = np.random.default_rng(3)
    points = rng.random((12, 2))
    points[3, 0] = math.inf
    points[5, 1] = -math.inf
    points[7, 0] = 1e308
    points[8, 0] = -1e308
    normalized = normalize_objectives(points, np.ones(len(points), dtype=bool))
    assert np.all(np.isfinite(normalized))
    assert normalized.min() == 0.0 and normalized.max() == 1.0
    for column in range(2):  # the order of each objective is kept
        order = np.argsort(points[:, column], kind="stable")
        assert np.all(np.diff(normalized[order, column]) >= 0)
    # The ordinary values keep a spread: the extremes do not squash them to one value.
    ordinary = np.setdiff1d(np.arange(12), [3, 5, 7, 8])
    assert np.all(np.ptp(normalized[ordinary], axis=0) > 0.2)
    assert np.all(np.isfinite(parego_scalarize(points, np.array([0.5, 0.5]))))
    # Ordinary points: the plain min-max map.
    plain = rng.random((10, 3))
    expected = (plain - plain.min(axis=0)) / np.ptp(plain, axis=0)
    np.testing.assert_allclose(normalize_objectives(plain), expected)


# ------------------------------------------------------------ multi-objective studies
MULTI_OBJECTIVE_SAMPLERS: list[Any] = [
    pytest.param(lambda: CMESSampler(seed=0, n_discretization=200), id="cmes"),
    pytest.param(lambda: PortfolioSampler(seed=0), id="portfolio"),
    pytest.param(lambda: AutoSampler(seed=0), id="auto"),
]


def _two_objectives_with(bad: float) -> Callable[[optuna.Trial], tuple[float, float]]:
    def objective(trial: optuna.Trial) -> tuple[float, float]:
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", 0.0, 1.0)
        if trial.number == 3:
            return bad, 1.0
        if trial.number == 5:
            return 0.5, -bad
        return x**2 + y, (1.0 - x) ** 2 + y

    return objective


@pytest.mark.parametrize("make_sampler", MULTI_OBJECTIVE_SAMPLERS)
@pytest.mark.parametrize("bad", [math.inf, 1e300], ids=["inf", "huge"])
def test_extreme_values_in_a_multi_objective_study_leave_the_model_on(
    make_sampler: Callable[[], Any], bad: float
) -> None:
    sampler = make_sampler()
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    sources = track_proposals(sampler)
    n_trials = 18
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)  # a silent fallback is a failure
        study.optimize(_two_objectives_with(bad), n_trials=n_trials)
    counts = sources.counts()
    assert counts["fallback"] == 0, sources.summary(n_trials)
    assert counts["model"] >= 8 and counts["model"] + counts["start-up"] == n_trials
    # Learning goes on: the model's proposals stay near the front (y = 0) of the others.
    proposals = [t.params["y"] for t in study.trials[-8:]]
    assert np.median(proposals) < 0.25


# -------------------------------------------------------------------- a huge penalty
X_STAR = np.array([0.3, 0.7, 0.4])


def _penalised(region: str) -> Callable[[optuna.Trial], float]:
    """``1 + 4 |x - x*|²`` on the unit cube (optimum 1.0), ``1e10`` on a region of it."""

    def objective(trial: optuna.Trial) -> float:
        x = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(3)])
        if region == "slab" and x[0] > 0.6:
            return PENALTY
        if region == "quarter" and x[1] < 0.5 and x[2] > 0.5:
            return PENALTY
        return 1.0 + 4.0 * float(np.sum((x - X_STAR) ** 2))

    return objective


@pytest.mark.parametrize(
    "make_sampler",
    [
        pytest.param(lambda seed: CMESSampler(seed=seed), id="cmes"),
        pytest.param(lambda seed: PortfolioSampler(seed=seed), id="portfolio"),
    ],
)
@pytest.mark.parametrize("region", ["slab", "quarter"])
def test_gp_samplers_find_the_optimum_beside_a_huge_penalty(
    make_sampler: Callable[[int], Any], region: str
) -> None:
    for seed in (0, 1, 2):
        study = optuna.create_study(sampler=make_sampler(seed))
        study.optimize(_penalised(region), n_trials=40)
        assert study.best_value <= 1.05, (seed, study.best_value)
