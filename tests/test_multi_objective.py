"""Multi-objective building blocks (Pareto ranks, hypervolumes, scalarisations) and the
proposers' scalarisation of multi-objective observations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from optuna._hypervolume import compute_hypervolume

from bore_samplers.acquisitions.density_ratio import bore_labels
from bore_samplers.multi_objective import (
    augmented_chebyshev,
    hypervolume,
    hypervolume_contributions,
    hypervolume_improvement,
    non_dominated_ranks,
    normalize_objectives,
    parego_history,
    pareto_front_mask,
    pareto_rank_history,
    pareto_rank_scores,
    simplex_weights,
)
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.binary import BinaryOutcomeProposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio import PortfolioProposer
from bore_samplers.space import FloatParam, SearchSpace

SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})


def _random_front(rng: np.random.Generator, n: int, k: int, kind: str) -> np.ndarray:
    points = rng.random((n, k))
    if kind == "sphere":  # mutually non-dominated: a concave front
        points /= np.linalg.norm(points, axis=1, keepdims=True)
    elif kind == "duplicates":
        points = np.vstack([points, points[: max(n // 3, 1)]])
    elif kind == "grid":  # many ties in single coordinates
        points = np.round(points * 4) / 4
    return points


def _brute_force_ranks(points: np.ndarray) -> np.ndarray:
    ranks = np.full(len(points), -1)
    remaining = set(range(len(points)))
    rank = 0
    while remaining:
        front = {
            i
            for i in remaining
            if not any(
                np.all(points[j] <= points[i]) and np.any(points[j] < points[i]) for j in remaining
            )
        }
        for i in front:
            ranks[i] = rank
        remaining -= front
        rank += 1
    return ranks


# ---------------------------------------------------------------------------- sorting
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("kind", ["uniform", "sphere", "duplicates", "grid"])
def test_non_dominated_ranks_match_brute_force(k: int, kind: str) -> None:
    rng = np.random.default_rng(k)
    for _ in range(5):
        points = _random_front(rng, int(rng.integers(1, 40)), k, kind)
        ranks = non_dominated_ranks(points)
        np.testing.assert_array_equal(ranks, _brute_force_ranks(points))
        np.testing.assert_array_equal(pareto_front_mask(points), ranks == 0)


def test_non_dominated_ranks_small_cases() -> None:
    assert non_dominated_ranks(np.empty((0, 2))).shape == (0,)
    points = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [2.0, 2.0], [1.0, 1.0]])
    np.testing.assert_array_equal(non_dominated_ranks(points), [0, 0, 1, 2, 1])


# ------------------------------------------------------------------------ hypervolume
@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("kind", ["uniform", "sphere", "duplicates", "grid"])
def test_hypervolume_matches_optuna(k: int, kind: str) -> None:
    rng = np.random.default_rng(10 * k)
    for _ in range(8):
        points = _random_front(rng, int(rng.integers(1, 25 if k < 5 else 12)), k, kind)
        reference = np.full(k, 1.1) + rng.random(k)
        expected = compute_hypervolume(points, reference)
        assert hypervolume(points, reference) == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_hypervolume_ignores_points_outside_the_box() -> None:
    reference = np.array([1.0, 1.0])
    points = np.array([[0.5, 0.5], [2.0, 0.1], [0.1, 1.0]])
    assert hypervolume(points, reference) == pytest.approx(0.25)
    assert hypervolume(np.empty((0, 2)), reference) == 0.0
    with pytest.raises(ValueError, match="objectives"):
        hypervolume(points, np.ones(3))


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("kind", ["uniform", "sphere", "duplicates"])
def test_hypervolume_contributions_are_what_each_point_alone_adds(k: int, kind: str) -> None:
    rng = np.random.default_rng(k)
    points = _random_front(rng, 14, k, kind)
    reference = np.full(k, 1.2)
    total = hypervolume(points, reference)
    contributions = hypervolume_contributions(points, reference)
    for i in range(len(points)):
        lost = total - hypervolume(np.delete(points, i, axis=0), reference)
        assert contributions[i] == pytest.approx(lost, abs=1e-12)


def test_hypervolume_improvement() -> None:
    rng = np.random.default_rng(3)
    points = _random_front(rng, 10, 3, "sphere")
    candidates = np.vstack([rng.random((4, 3)) * 0.8, points[:1] + 0.01])
    reference = np.full(3, 1.1)
    gains = hypervolume_improvement(candidates, points, reference)
    for candidate, gain in zip(candidates, gains, strict=True):
        joined = hypervolume(np.vstack([points, candidate]), reference)
        assert gain == pytest.approx(joined - hypervolume(points, reference), abs=1e-12)
    assert gains[-1] == 0.0  # dominated by the point it was shifted from


# ---------------------------------------------------------------------- scalarisation
def test_parego_scalarisation() -> None:
    points = np.array([[1.0, 10.0], [3.0, 30.0], [2.0, np.nan]])
    normalized = normalize_objectives(points)
    np.testing.assert_allclose(normalized[:2], [[0.0, 0.0], [1.0, 1.0]])
    assert np.isnan(normalized[2, 1])
    weights = np.array([0.25, 0.75])
    # Knowles (2006), eq. 2: max_i w_i f_i + 0.05 sum_i w_i f_i.
    f = np.array([[0.2, 0.6]])
    expected = max(0.25 * 0.2, 0.75 * 0.6) + 0.05 * (0.25 * 0.2 + 0.75 * 0.6)
    assert augmented_chebyshev(f, weights)[0] == pytest.approx(expected)
    # A constant objective maps to 0, not NaN.
    np.testing.assert_array_equal(normalize_objectives(np.ones((3, 2))), np.zeros((3, 2)))


def test_simplex_weights_are_uniform_on_the_simplex() -> None:
    weights = np.array([simplex_weights(3, np.random.default_rng(i)) for i in range(2000)])
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    assert np.all(weights >= 0)
    # Dirichlet(1, 1, 1): each coordinate has mean 1/3 and P(w_1 > 1/2) = 1/4.
    np.testing.assert_allclose(weights.mean(axis=0), 1 / 3, atol=0.02)
    assert np.mean(weights[:, 0] > 0.5) == pytest.approx(0.25, abs=0.03)


def test_pareto_rank_scores_order_fronts_then_contributions() -> None:
    # Front 0: three points, the middle one of which adds least; front 1: one point.
    points = np.array([[0.0, 1.0], [0.45, 0.45], [1.0, 0.0], [0.5, 0.5], [0.46, 0.46]])
    scores = pareto_rank_scores(points)
    assert len(set(scores)) == len(scores)
    assert np.all(scores[:3] < 1.0) and np.all(scores[3:] >= 1.0)
    ranks = non_dominated_ranks(points)
    np.testing.assert_array_equal(np.floor(scores).astype(int), ranks)
    contributions = hypervolume_contributions(normalize_objectives(points[:3]), np.full(2, 1.1))
    assert list(np.argsort(scores[:3])) == list(np.argsort(-contributions, kind="stable"))
    # Only the first fronts need contributions: the order of the first n_best is the same.
    cheap = pareto_rank_scores(points, n_best=2)
    np.testing.assert_array_equal(np.argsort(cheap)[:3], np.argsort(scores)[:3])


# ---------------------------------------------------------------------- histories
def _observations(rng: np.random.Generator, n: int = 20) -> list[Observation]:
    observations = []
    for i in range(n):
        x, y = rng.random(2)
        params = {"x": x, "y": y}
        if i == 3:
            observations.append(Observation(params, state=TrialState.FAILED))
        elif i == 5:
            observations.append(Observation(params, state=TrialState.RUNNING))
        else:
            values = (x, 1.0 - np.sqrt(x) + y)  # ZDT1-like: a convex front at y = 0
            observations.append(
                Observation(params, values[0], constraints={"c": y - 0.8}, values=values)
            )
    return observations


def test_history_carries_the_objectives() -> None:
    observations = _observations(np.random.default_rng(0))
    history = history_from_observations(SPACE, observations)
    assert history.objectives is not None and history.objectives.shape == (20, 2)
    assert np.isnan(history.objectives[[3, 5]]).all()
    kept = history.without(TrialState.FAILED)
    assert kept.objectives is not None and kept.objectives.shape == (19, 2)
    # A NaN among the values of a complete trial makes it FAILED, as a NaN value does.
    nan = Observation({"x": 0.1, "y": 0.2}, 0.1, values=(0.1, float("nan")))
    assert history_from_observations(SPACE, [nan]).states == [TrialState.FAILED]
    # Single-objective observations have none.
    assert (
        history_from_observations(SPACE, [Observation({"x": 0.1, "y": 0.2}, 1.0)]).objectives
        is None
    )
    with pytest.raises(ValueError, match="objective values"):
        history_from_observations(
            SPACE,
            [
                Observation({"x": 0.1, "y": 0.2}, 1.0, values=(1.0, 2.0)),
                Observation({"x": 0.3, "y": 0.2}, 1.0, values=(1.0, 2.0, 3.0)),
            ],
        )


def test_parego_history_scalarises_complete_rows_only() -> None:
    history = history_from_observations(SPACE, _observations(np.random.default_rng(1)))
    weights = np.array([0.3, 0.7])
    scalar = parego_history(history, weights)
    assert scalar.objectives is None
    assert scalar.states == history.states
    np.testing.assert_array_equal(scalar.constraints, history.constraints)
    complete = history.mask(TrialState.COMPLETE)
    assert np.isnan(scalar.values[~complete]).all()
    expected = augmented_chebyshev(normalize_objectives(history.objectives[complete]), weights)
    np.testing.assert_allclose(scalar.values[complete], expected)


def test_pareto_rank_history_ranks_feasible_complete_rows() -> None:
    history = history_from_observations(SPACE, _observations(np.random.default_rng(2)))
    ranked = pareto_rank_history(history)
    usable = history.mask(TrialState.COMPLETE) & history.feasible
    assert np.isnan(ranked.values[~usable]).all()
    np.testing.assert_allclose(
        ranked.values[usable], pareto_rank_scores(history.objectives[usable])
    )
    labels = bore_labels(ranked, 0.25)
    # Class 1 holds the best by rank: no positive is dominated by a negative feasible row.
    positives, negatives = history.objectives[labels], history.objectives[usable & ~labels]
    for p, q in itertools.product(positives, negatives):
        assert not (np.all(q <= p) and np.any(q < p))


# ----------------------------------------------------------------------- proposers
@pytest.mark.parametrize(
    "proposer",
    [
        pytest.param(lambda: BOREProposer(n_startup=5, seed=0), id="bore"),
        pytest.param(lambda: CMESProposer(n_startup=5, seed=0, n_discretization=32), id="cmes"),
        pytest.param(lambda: PortfolioProposer(n_startup=5, seed=0), id="portfolio"),
    ],
)
def test_proposers_accept_multi_objective_observations(proposer) -> None:
    proposer = proposer()
    params = proposer.propose(SPACE, _observations(np.random.default_rng(3)))
    assert set(params) == {"x", "y"} and all(0.0 <= v <= 1.0 for v in params.values())


def test_gp_proposers_draw_a_fresh_parego_weight_per_proposal() -> None:
    proposer = CMESProposer(n_startup=5, seed=0)
    history = history_from_observations(SPACE, _observations(np.random.default_rng(4)))
    first, second = proposer.scalarized(history), proposer.scalarized(history)
    assert first.objectives is None and not np.allclose(
        first.values, second.values, equal_nan=True
    )


def test_bore_scalarises_by_pareto_rank() -> None:
    proposer = BOREProposer(n_startup=5, seed=0)
    history = history_from_observations(SPACE, _observations(np.random.default_rng(5)))
    scalar = proposer.scalarized(history)
    usable = history.mask(TrialState.COMPLETE) & history.feasible
    order = np.argsort(pareto_rank_scores(history.objectives[usable]))
    np.testing.assert_array_equal(np.argsort(scalar.values[usable])[:3], order[:3])


def test_single_objective_proposers_refuse_several_objectives() -> None:
    proposer = BinaryOutcomeProposer(n_startup=1, seed=0)
    history = history_from_observations(SPACE, _observations(np.random.default_rng(6)))
    with pytest.raises(ValueError, match="single objective"):
        proposer.scalarized(history)
