"""Acquisition maximisers over the unit view of a search space (framework-free core)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bore_samplers.optimizers import (
    AcquisitionOptimizer,
    DifferentiableAcquisition,
    DifferentialEvolution,
    FiniteDifferenceGradient,
    MultiStartLBFGS,
    RandomSearch,
    select_distinct,
)
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace


class NegativeSquaredDistance:
    """``-||u - target||^2`` with its gradient; checks that scored points are snapped.

    Records every batch it scores, so that tests can look at how it was called.
    """

    def __init__(self, space: SearchSpace, target: np.ndarray) -> None:
        self.space = space
        self.target = np.asarray(target, dtype=float)
        self.batches: list[int] = []
        self.n_gradient_calls = 0

    def __call__(self, u: np.ndarray) -> np.ndarray:
        assert u.ndim == 2 and u.shape[1] == self.space.n_dims
        np.testing.assert_array_equal(self.space.snap(u), u)  # only snapped points are scored
        self.batches.append(len(u))
        return -((u - self.target) ** 2).sum(axis=1)

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.n_gradient_calls += 1
        diff = u - self.target
        return -(diff**2).sum(axis=1), -2.0 * diff


class PlainAcquisition:
    """The same score without a gradient."""

    def __init__(self, space: SearchSpace, target: np.ndarray) -> None:
        self.inner = NegativeSquaredDistance(space, target)

    def __call__(self, u: np.ndarray) -> np.ndarray:
        return self.inner(u)


OPTIMIZERS = {
    "random": lambda: RandomSearch(n_candidates=500),
    "de": lambda: DifferentialEvolution(max_evals=2000),
    "lbfgs": lambda: MultiStartLBFGS(n_candidates=200),
}


def _continuous_space(d: int) -> SearchSpace:
    # Alternating linear and log-scaled floats: both are continuous unit coordinates.
    params = {
        f"x{j}": FloatParam(-5.0, 5.0) if j % 2 else FloatParam(1e-3, 1.0, log=True)
        for j in range(d)
    }
    return SearchSpace(params)


def _mixed_space() -> SearchSpace:
    return SearchSpace(
        {
            "int": IntParam(-3, 12),
            "int_step": IntParam(3, 9, step=2),
            "float_step": FloatParam(-10.2, 10.2, step=0.1),
            "int_log": IntParam(1, 1000, log=True),
            "cat": CategoricalParam((1, "a", None, True, 2.5)),
            "x": FloatParam(0.0, 1.0),
            "y": FloatParam(1e-3, 1.0, log=True),
        }
    )


def _is_valid(param: Any, value: Any) -> bool:
    if isinstance(param, CategoricalParam):
        return any(value == c and type(value) is type(c) for c in param.choices)
    ok_type = type(value) is (int if isinstance(param, IntParam) else float)
    if not (ok_type and param.low <= value <= param.high):
        return False
    if param.step is None or getattr(param, "log", False):
        return True
    k = (value - param.low) / param.step
    return abs(k - round(k)) < 1e-8


# ------------------------------------------------------------------------- continuous optimum
def test_differentiable_acquisition_protocol() -> None:
    space = _continuous_space(2)
    assert isinstance(NegativeSquaredDistance(space, [0.5, 0.5]), DifferentiableAcquisition)
    assert not isinstance(PlainAcquisition(space, [0.5, 0.5]), DifferentiableAcquisition)


@pytest.mark.parametrize(
    ("name", "optimizer", "d", "tolerance"),
    [
        # 4000 uniform points in 2-D: the nearest lies ~0.01 from any target.
        pytest.param("random", RandomSearch(n_candidates=4000), 2, 0.05, id="random-2d"),
        pytest.param("de", DifferentialEvolution(max_evals=2000), 2, 1e-2, id="de-2d"),
        pytest.param("de", DifferentialEvolution(max_evals=2000), 3, 2e-2, id="de-3d"),
        pytest.param("lbfgs", MultiStartLBFGS(n_candidates=100), 2, 1e-5, id="lbfgs-2d"),
        pytest.param("lbfgs", MultiStartLBFGS(n_candidates=100), 5, 1e-5, id="lbfgs-5d"),
    ],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_finds_the_maximiser_on_a_continuous_space(
    name: str, optimizer: AcquisitionOptimizer, d: int, tolerance: float, seed: int
) -> None:
    space = _continuous_space(d)
    target = np.random.default_rng(100 + seed).uniform(0.05, 0.95, size=d)
    acquisition = NegativeSquaredDistance(space, target)
    best = optimizer.maximize(acquisition, space, np.random.default_rng(seed))
    assert best.shape == (d,)
    assert np.linalg.norm(best - target) < tolerance, (name, best, target)
    if name == "lbfgs":
        assert acquisition.n_gradient_calls > 0


def test_lbfgs_reaches_a_maximiser_on_the_boundary() -> None:
    space = _continuous_space(3)
    target = np.array([1.3, -0.2, 0.4])  # outside the cube: the optimum is its projection
    best = MultiStartLBFGS(n_candidates=50).maximize(
        NegativeSquaredDistance(space, target), space, np.random.default_rng(0)
    )
    np.testing.assert_allclose(best, [1.0, 0.0, 0.4], atol=1e-6)


def test_lbfgs_without_gradient_falls_back_to_random_candidates() -> None:
    space = _continuous_space(2)
    target = np.array([0.3, 0.7])
    acquisition = PlainAcquisition(space, target)
    best = MultiStartLBFGS(n_candidates=300).maximize(acquisition, space, np.random.default_rng(0))
    # One batch of candidates, no refinement: the best random candidate.
    assert acquisition.inner.batches == [300]
    assert np.linalg.norm(best - target) < 0.1


def test_random_search_scores_one_batch() -> None:
    space = _mixed_space()
    acquisition = NegativeSquaredDistance(space, np.full(space.n_dims, 0.5))
    RandomSearch(n_candidates=321).maximize(acquisition, space, np.random.default_rng(0))
    assert acquisition.batches == [321]


def test_differential_evolution_scores_whole_generations_within_budget() -> None:
    space = _continuous_space(3)
    acquisition = NegativeSquaredDistance(space, np.full(3, 0.5))
    DifferentialEvolution(max_evals=500, population_size=25).maximize(
        acquisition, space, np.random.default_rng(0)
    )
    assert set(acquisition.batches) == {25}
    assert sum(acquisition.batches) <= 500
    assert len(acquisition.batches) == 500 // 25


# ------------------------------------------------------------------------- mixed spaces
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_returned_points_are_snapped_and_decode_to_valid_values(name: str, seed: int) -> None:
    space = _mixed_space()
    rng = np.random.default_rng(seed)
    # A target off every grid, so an unsnapped optimum would be strictly better.
    acquisition = NegativeSquaredDistance(space, rng.uniform(-0.1, 1.1, space.n_dims))
    best = OPTIMIZERS[name]().maximize(acquisition, space, rng)
    assert best.shape == (space.n_dims,)
    np.testing.assert_array_equal(space.snap(best), best[None, :])
    (config,) = space.decode(best)
    for param_name, value in config.items():
        assert _is_valid(space.params[param_name], value), (param_name, value)


def test_lbfgs_refines_only_the_continuous_coordinates_on_a_mixed_space() -> None:
    space = _mixed_space()
    mask = space.continuous_mask
    target = space.snap(np.full((1, space.n_dims), 0.5))[0]
    target[mask] = [0.123, 0.789]
    acquisition = NegativeSquaredDistance(space, target)
    best = MultiStartLBFGS(n_candidates=300).maximize(acquisition, space, np.random.default_rng(0))
    np.testing.assert_allclose(best[mask], target[mask], atol=1e-5)


# ------------------------------------------------------------------------- exclude
def _discrete_space() -> SearchSpace:
    return SearchSpace({"i": IntParam(0, 9), "c": CategoricalParam(("a", "b"))})


def _score_of(space: SearchSpace, u: np.ndarray) -> np.ndarray:
    # Best configuration: i = 4, c = "a"; then the neighbours of i = 4.
    configs = space.decode(u)
    return np.array([-abs(c["i"] - 4) - (0.5 if c["c"] == "b" else 0.0) for c in configs])


class DiscreteScore:
    def __init__(self, space: SearchSpace) -> None:
        self.space = space

    def __call__(self, u: np.ndarray) -> np.ndarray:
        return _score_of(self.space, u)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_excluded_points_are_not_returned_while_an_alternative_exists(
    name: str, seed: int
) -> None:
    space = _discrete_space()
    acquisition = DiscreteScore(space)
    best = OPTIMIZERS[name]().maximize(acquisition, space, np.random.default_rng(seed))
    assert space.decode(best)[0] == {"i": 4, "c": "a"}
    excluded_configs = [{"i": 4, "c": "a"}, {"i": 3, "c": "a"}, {"i": 5, "c": "a"}]
    exclude = space.encode(excluded_configs)
    best = OPTIMIZERS[name]().maximize(
        acquisition, space, np.random.default_rng(seed), exclude=exclude
    )
    config = space.decode(best)[0]
    assert config not in excluded_configs
    # The best remaining configuration (i = 4, c = "b") is among any few hundred samples.
    assert config == {"i": 4, "c": "b"}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_exclusion_also_matches_unsnapped_rows_of_the_same_point(name: str) -> None:
    space = _discrete_space()
    exclude = space.encode([{"i": 4, "c": "a"}]) + 1e-13  # last-bit noise
    best = OPTIMIZERS[name]().maximize(
        DiscreteScore(space), space, np.random.default_rng(0), exclude=exclude
    )
    assert space.decode(best)[0] != {"i": 4, "c": "a"}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_point_is_returned_when_every_candidate_is_excluded(name: str) -> None:
    space = SearchSpace({"c": CategoricalParam(("left", "right"))})
    exclude = space.encode([{"c": "left"}, {"c": "right"}])

    def prefer_right(u: np.ndarray) -> np.ndarray:
        return np.array([1.0 if c["c"] == "right" else 0.0 for c in space.decode(u)])

    best = OPTIMIZERS[name]().maximize(
        prefer_right, space, np.random.default_rng(0), exclude=exclude
    )
    assert best.shape == (1,)
    # Nothing new is left: the best scoring (already excluded) point comes back.
    assert space.decode(best)[0] == {"c": "right"}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_continuous_space_with_excluded_optimum_returns_a_different_point(name: str) -> None:
    space = _continuous_space(2)
    target = space.snap(np.array([[0.25, 0.75]]))[0]
    acquisition = NegativeSquaredDistance(space, target)
    best = OPTIMIZERS[name]().maximize(
        acquisition, space, np.random.default_rng(0), exclude=target[None, :]
    )
    assert not np.array_equal(best, target)


# ------------------------------------------------------------------------- select_distinct
CANDIDATES = np.array([[0.1], [0.2], [0.3], [0.4]])
SCORES = np.array([1.0, 5.0, 5.0, 2.0])


@pytest.mark.parametrize(
    ("exclude", "expected"),
    [
        pytest.param(None, 0.2, id="no-exclude"),
        pytest.param(np.empty((0, 1)), 0.2, id="empty-exclude"),
        pytest.param(np.array([[0.9]]), 0.2, id="unrelated-exclude"),
        pytest.param(np.array([[0.2]]), 0.3, id="tie-goes-to-the-next-earliest"),
        pytest.param(np.array([[0.2], [0.3]]), 0.4, id="next-best-score"),
        pytest.param(np.array([[0.3], [0.2], [0.4]]), 0.1, id="last-remaining"),
        pytest.param(CANDIDATES.copy(), 0.2, id="all-excluded-gives-best"),
    ],
)
def test_select_distinct(exclude: np.ndarray | None, expected: float) -> None:
    chosen = select_distinct(CANDIDATES, SCORES, exclude)
    assert chosen.tolist() == [expected]


def test_select_distinct_breaks_ties_by_candidate_order() -> None:
    candidates = np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5]])
    assert select_distinct(candidates, np.zeros(3), None).tolist() == [0.9, 0.1]
    assert select_distinct(candidates[::-1], np.zeros(3), None).tolist() == [0.5, 0.5]


def test_select_distinct_treats_minus_zero_and_noise_as_the_same_row() -> None:
    candidates = np.array([[-0.0, 0.5], [0.25, 0.5]])
    exclude = np.array([[0.0, 0.5 + 1e-12]])
    chosen = select_distinct(candidates, np.array([2.0, 1.0]), exclude)
    assert chosen.tolist() == [0.25, 0.5]


def test_select_distinct_returns_a_copy() -> None:
    candidates = CANDIDATES.copy()
    chosen = select_distinct(candidates, SCORES, None)
    chosen[0] = -1.0
    np.testing.assert_array_equal(candidates, CANDIDATES)


def test_select_distinct_accepts_list_scores() -> None:
    assert select_distinct(CANDIDATES, [0, 0, 3, 3], None).tolist() == [0.3]


def test_select_distinct_keeps_away_from_pending_points_while_it_can() -> None:
    candidates = np.array([[0.50, 0.50], [0.52, 0.50], [0.90, 0.10]])
    scores = np.array([3.0, 2.0, 1.0])
    pending = np.array([[0.51, 0.50]])
    chosen = select_distinct(candidates, scores, None, keep_away=pending, radius=0.1)
    np.testing.assert_array_equal(chosen, [0.90, 0.10])
    # When nothing is far enough, the best non-excluded candidate is still returned.
    chosen = select_distinct(candidates, scores, candidates[:1], keep_away=pending, radius=1.0)
    np.testing.assert_array_equal(chosen, [0.52, 0.50])


def test_finite_difference_gradient_matches_the_analytic_one() -> None:
    space = SearchSpace(
        {"a": FloatParam(0.0, 1.0), "n": IntParam(0, 4), "b": FloatParam(0.0, 1.0)}
    )

    def score(u: np.ndarray) -> np.ndarray:
        return np.sin(3.0 * u[:, 0]) * np.exp(u[:, 2]) + u[:, 1]

    wrapped = FiniteDifferenceGradient(score, space, step=1e-7)
    u = space.snap(np.random.default_rng(0).random((5, 3)))
    u[0, 2] = 1.0  # at the upper bound the step is taken backwards
    values, grad = wrapped.value_and_grad(u)
    np.testing.assert_allclose(values, score(u))
    expected = np.column_stack(
        [3.0 * np.cos(3.0 * u[:, 0]) * np.exp(u[:, 2]), np.zeros(5), score(u) - u[:, 1]]
    )
    np.testing.assert_allclose(grad, expected, atol=1e-5)
    assert isinstance(wrapped, DifferentiableAcquisition)
    np.testing.assert_array_equal(wrapped(u), score(u))
