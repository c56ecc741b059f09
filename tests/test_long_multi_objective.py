"""Pareto ranking of long multi-objective histories: exact, and light in memory.

The reference is the textbook non-dominated sorting over a full dominance matrix; the
library's sorting (a sweep for two objectives, a blocked pass beyond) must give the same
ranks on random data with ties and duplicates, and rank a 10,000-trial history.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from bore_samplers.acquisitions.density_ratio import bore_labels
from bore_samplers.multi_objective import (
    non_dominated_ranks,
    pareto_front_mask,
    pareto_rank_history,
    pareto_rank_scores,
)
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.space import FloatParam, SearchSpace


def _matrix_ranks(points: np.ndarray) -> np.ndarray:
    """Non-dominated sorting by peeling fronts off the full dominance matrix."""
    no_worse = np.all(points[:, None, :] <= points[None, :, :], axis=-1)
    better = np.any(points[:, None, :] < points[None, :, :], axis=-1)
    dominates = no_worse & better
    ranks = np.full(len(points), -1)
    remaining = np.ones(len(points), dtype=bool)
    rank = 0
    while remaining.any():
        front = remaining & ~dominates[remaining].any(axis=0)
        ranks[front] = rank
        remaining &= ~front
        rank += 1
    return ranks


def _points(rng: np.random.Generator, n: int, k: int, kind: str) -> np.ndarray:
    points = rng.random((n, k))
    if kind == "grid":  # many ties in single coordinates and many equal rows
        points = np.round(points * 5) / 5
    elif kind == "duplicates":
        points = np.vstack([points, points[rng.integers(0, n, n // 2)]])
        points = points[rng.permutation(len(points))]
    elif kind == "chain":  # every row dominates the next: n fronts
        points = np.sort(points, axis=0)[rng.permutation(n)]
    elif kind == "front":  # one front
        points[:, -1] = 1.0 - points[:, :-1].sum(axis=1)
    elif kind == "infinite":
        points[rng.random((n, k)) < 0.1] = np.inf
        points[rng.random((n, k)) < 0.05] = -np.inf
    return points


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("kind", ["uniform", "grid", "duplicates", "chain", "front", "infinite"])
def test_ranks_match_the_dominance_matrix(k: int, kind: str) -> None:
    rng = np.random.default_rng(10 * k + len(kind))
    for n in (1, 2, 3, 17, 150, 700):
        points = _points(rng, n, k, kind)
        expected = _matrix_ranks(points)
        np.testing.assert_array_equal(non_dominated_ranks(points), expected, err_msg=kind)
        np.testing.assert_array_equal(pareto_front_mask(points), expected == 0)


def test_a_ten_thousand_trial_history_ranks() -> None:
    rng = np.random.default_rng(0)
    n = 10_000
    x = rng.random((n, 3))
    points = np.column_stack([x[:, 0] + 0.1 * x[:, 2], 1.0 - np.sqrt(x[:, 0]) + x[:, 1]])
    points[::97] = np.round(points[::97], 1)  # some ties
    # Memory light: no n x n matrix (which alone would be 100 MB here).
    tracemalloc.start()
    try:
        ranks = non_dominated_ranks(points)
        assert tracemalloc.get_traced_memory()[1] < 10e6
    finally:
        tracemalloc.stop()
    # Each row of front r > 0 is dominated by a row of front r - 1, and no row of a front
    # dominates another of the same front (checked on a sample of rows, in slices).
    for i in rng.choice(n, 300, replace=False):
        dominators = np.all(points <= points[i], axis=1) & np.any(points < points[i], axis=1)
        assert not np.any(dominators & (ranks >= ranks[i]))
        if ranks[i] > 0:
            assert np.any(dominators & (ranks == ranks[i] - 1))
    # MBORE's scores of the history rank the same fronts first, and label the best of them.
    space = SearchSpace({f"x{i}": FloatParam(0.0, 1.0) for i in range(3)})
    observations = [
        Observation(
            params={f"x{j}": float(x[i, j]) for j in range(3)},
            state=TrialState.COMPLETE,
            value=float(points[i, 0]),
            values=(float(points[i, 0]), float(points[i, 1])),
        )
        for i in range(n)
    ]
    history = history_from_observations(space, observations)
    proposer = BOREProposer(seed=0)
    scored = proposer.scalarized(history)
    np.testing.assert_array_equal(np.floor(scored.values).astype(int), ranks)
    labels = bore_labels(scored, proposer.gamma)
    assert labels.any() and not labels.all()
    assert ranks[labels].max() <= ranks[~labels].min()
    # The scores without a cut agree with those for the γ split on the fronts that matter.
    full = pareto_rank_scores(points)
    best = ranks <= ranks[labels].max()
    np.testing.assert_array_equal(full[best], scored.values[best])
    assert np.all(np.isfinite(pareto_rank_history(history).values))
