"""UnitCubeScore maximisers over the unit view of a search space (framework-free core)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bore_samplers.optimizers import (
    AcquisitionOptimizer,
    DifferentiableUnitCubeScore,
    DifferentialEvolution,
    FiniteDifferenceGradient,
    MixedSpaceOptimizer,
    MultiStartLBFGS,
    ParzenSearch,
    RandomSearch,
    select_distinct,
)
from bore_samplers.optimizers.candidates import _Parzen as ParzenEstimator
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
    "mixed": lambda: MixedSpaceOptimizer(n_sobol=256),
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
    assert isinstance(NegativeSquaredDistance(space, [0.5, 0.5]), DifferentiableUnitCubeScore)
    assert not isinstance(PlainAcquisition(space, [0.5, 0.5]), DifferentiableUnitCubeScore)


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
    assert isinstance(wrapped, DifferentiableUnitCubeScore)
    np.testing.assert_array_equal(wrapped(u), score(u))


# ------------------------------------------------------------------------- MixedSpaceOptimizer
class PlainCounting:
    """Wraps a batch score, counting the batch calls and the points scored."""

    def __init__(self, space: SearchSpace, score: Any, gradient: Any = None) -> None:
        self.space, self.score, self.gradient = space, score, gradient
        self.n_calls = 0
        self.n_points = 0

    def __call__(self, u: np.ndarray) -> np.ndarray:
        assert u.ndim == 2 and u.shape[1] == self.space.n_dims
        np.testing.assert_array_equal(self.space.snap(u), u)  # only snapped points are scored
        self.n_calls += 1
        self.n_points += len(u)
        return self.score(u)


class CountingAcquisition(PlainCounting):
    """The same with ``value_and_grad``, whose calls count too."""

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.n_calls += 1
        self.n_points += len(u)
        return self.score(u), self.gradient(u)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _bump(centre: np.ndarray, width: np.ndarray) -> tuple[Any, Any]:
    """A Gaussian bump ``exp(-|(u - centre) / width|^2 / 2)`` and its gradient."""

    def score(u: np.ndarray) -> np.ndarray:
        return np.exp(-0.5 * (((u - centre) / width) ** 2).sum(axis=1))

    def gradient(u: np.ndarray) -> np.ndarray:
        return -score(u)[:, None] * (u - centre) / width**2

    return score, gradient


def test_mixed_is_not_a_differentiable_acquisition_without_gradient() -> None:
    space = _continuous_space(1)
    assert isinstance(CountingAcquisition(space, np.sum), DifferentiableUnitCubeScore)
    assert not isinstance(PlainCounting(space, np.sum), DifferentiableUnitCubeScore)


@pytest.mark.parametrize("preconditioned", [True, False], ids=["lengthscales", "none"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixed_finds_a_narrow_anisotropic_bump_to_high_precision(
    seed: int, preconditioned: bool
) -> None:
    space = _continuous_space(5)
    centre = rng(10 + seed).uniform(0.1, 0.9, 5)
    width = np.array([0.02, 0.05, 0.1, 0.2, 0.04])
    acquisition = CountingAcquisition(space, *_bump(centre, width))
    best = MixedSpaceOptimizer().maximize(
        acquisition, space, rng(seed), lengthscales=width if preconditioned else None
    )
    np.testing.assert_allclose(best, centre, atol=1e-4)
    # One candidate batch, then batched L-BFGS steps: far fewer calls than points.
    assert acquisition.n_calls < 200


def test_mixed_starts_from_warm_starts_and_hands_back_its_local_optima() -> None:
    # One Sobol candidate only: the narrow bump is found from the warm start next to it.
    space = _continuous_space(5)
    centre = rng(3).uniform(0.1, 0.9, 5)
    width = np.full(5, 0.01)
    optimizer = MixedSpaceOptimizer(n_sobol=1, n_local=3)
    warm = np.vstack([centre + 0.005, rng(4).random((2, 5))])
    optima: list[np.ndarray] = []
    best = optimizer.maximize_each(
        [CountingAcquisition(space, *_bump(centre, width))],
        space,
        rng(0),
        warm_starts=warm,
        local_optima=optima,
    )[0]
    np.testing.assert_allclose(best, centre, atol=1e-4)
    assert len(optima) == 1 and optima[0].shape == (3, 5)  # every local search's end point
    assert np.min(np.abs(optima[0] - centre).max(axis=1)) < 1e-4
    with pytest.raises(ValueError, match="warm_starts must have shape"):
        optimizer.maximize_each(
            [CountingAcquisition(space, *_bump(centre, width))],
            space,
            rng(0),
            warm_starts=np.zeros((2, 4)),
        )


def test_mixed_reaches_a_maximiser_on_the_boundary() -> None:
    space = _continuous_space(3)
    target = np.array([1.3, -0.2, 0.4])  # outside the cube: the optimum is its projection
    best = MixedSpaceOptimizer().maximize(
        NegativeSquaredDistance(space, target), space, np.random.default_rng(0)
    )
    np.testing.assert_allclose(best, [1.0, 0.0, 0.4], atol=1e-6)


def test_lengthscales_precondition_a_badly_scaled_problem() -> None:
    # Curvatures 10^6 apart: in z = u / l the bump is round.
    space = _continuous_space(4)
    centre, width = np.array([0.31, 0.62, 0.47, 0.55]), np.array([1e-3, 1.0, 0.3, 0.01])
    acquisition = CountingAcquisition(space, *_bump(centre, width))
    anchor = centre + np.array([2e-3, 0.1, -0.1, 0.02])
    best = MixedSpaceOptimizer().maximize(
        acquisition, space, np.random.default_rng(0), lengthscales=width, anchors=anchor[None]
    )
    assert np.all(np.abs(best - centre) < 1e-3 * width)


def _needle_next_to(anchor: np.ndarray) -> tuple[np.ndarray, Any, Any]:
    """A broad hill far from ``anchor`` (height 0.5) and a needle beside it (height 1)."""
    needle = anchor + 0.004
    hill, hill_grad = _bump(np.full(len(anchor), 0.15), np.full(len(anchor), 0.3))
    spike, spike_grad = _bump(needle, np.full(len(anchor), 0.002))

    def score(u: np.ndarray) -> np.ndarray:
        return 0.5 * hill(u) + spike(u)

    def gradient(u: np.ndarray) -> np.ndarray:
        return 0.5 * hill_grad(u) + spike_grad(u)

    return needle, score, gradient


@pytest.mark.parametrize("differentiable", [True, False], ids=["gradient", "no-gradient"])
def test_anchors_let_the_search_refine_a_needle_next_to_the_incumbent(
    differentiable: bool,
) -> None:
    space = _continuous_space(5)
    anchor = np.array([0.7, 0.8, 0.6, 0.75, 0.65])
    needle, score, gradient = _needle_next_to(anchor)
    kind = CountingAcquisition if differentiable else PlainCounting
    # Random candidates alone end on the broad hill.
    best = MixedSpaceOptimizer().maximize(kind(space, score, gradient), space, rng(0))
    assert score(best[None])[0] < 0.6
    best = MixedSpaceOptimizer().maximize(
        kind(space, score, gradient), space, rng(0), anchors=anchor[None]
    )
    np.testing.assert_allclose(best, needle, atol=1e-5 if differentiable else 1e-4)


def _rich_space() -> SearchSpace:
    return SearchSpace(
        {
            "x": FloatParam(-1.0, 1.0),
            "lr": FloatParam(1e-5, 1.0, log=True),
            "layers": IntParam(0, 99),
            "dropout": FloatParam(0.0, 0.5, step=0.01),
            "batch": IntParam(1, 10**6, log=True),
            "act": CategoricalParam(tuple(f"c{i}" for i in range(12))),
            "fixed": FloatParam(2.0, 2.0),
        }
    )


RICH_OPTIMUM = {"layers": 37, "dropout": 0.23, "batch": 123456, "act": "c7"}


def _rich_score(space: SearchSpace) -> tuple[Any, Any]:
    """Smooth in the floats; its optimum needs one integer, step, log-integer and category."""
    x_star, lr_star = 0.123, 0.77  # in unit coordinates

    def score(u: np.ndarray) -> np.ndarray:
        configs = space.decode(u)
        layers = np.array([c["layers"] for c in configs], dtype=float)
        dropout = np.array([c["dropout"] for c in configs])
        batch = np.array([c["batch"] for c in configs], dtype=float)
        wrong_act = np.array([c["act"] != "c7" for c in configs], dtype=float)
        return (
            -((u[:, 0] - x_star) ** 2)
            - (u[:, 1] - lr_star) ** 2
            - ((layers - 37) / 20) ** 2
            - ((dropout - 0.23) / 0.2) ** 2
            - (np.log(batch) - np.log(123456)) ** 2 / 10
            - 0.5 * wrong_act
        )

    def gradient(u: np.ndarray) -> np.ndarray:
        grad = np.zeros_like(u)
        grad[:, 0], grad[:, 1] = -2 * (u[:, 0] - x_star), -2 * (u[:, 1] - lr_star)
        return grad

    return score, gradient


@pytest.mark.parametrize("differentiable", [True, False], ids=["gradient", "no-gradient"])
@pytest.mark.parametrize("seed", [0, 1])
def test_mixed_optimises_every_kind_of_coordinate(differentiable: bool, seed: int) -> None:
    space = _rich_space()
    score, gradient = _rich_score(space)
    kind = CountingAcquisition if differentiable else PlainCounting
    acquisition = kind(space, score, gradient)
    best = MixedSpaceOptimizer().maximize(acquisition, space, rng(seed))
    np.testing.assert_array_equal(space.snap(best), best[None, :])
    (config,) = space.decode(best)
    for name, value in config.items():
        assert _is_valid(space.params[name], value), (name, value)
    assert {name: config[name] for name in RICH_OPTIMUM} == RICH_OPTIMUM
    assert config["fixed"] == 2.0
    np.testing.assert_allclose(best[:2], [0.123, 0.77], atol=1e-4)
    assert acquisition.n_calls < 200


def test_sobol_candidates_alone_rarely_hit_the_rich_optimum() -> None:
    # What the previous test needs the discrete search for.
    space = _rich_space()
    configs = space.decode(space.sample_sobol(2048, seed=0))
    hits = [all(c[name] == value for name, value in RICH_OPTIMUM.items()) for c in configs]
    assert not any(hits)


@pytest.mark.parametrize(
    ("param", "target"),
    [
        pytest.param(FloatParam(-3.0, 3.0), 1.2345, id="float"),
        pytest.param(FloatParam(1e-4, 1.0, log=True), 0.0123, id="log-float"),
        pytest.param(IntParam(-500, 500), 321, id="int"),
        pytest.param(IntParam(1, 10**6, log=True), 777_777, id="log-int"),
        pytest.param(IntParam(0, 10, step=5), 5, id="int-step"),
        pytest.param(FloatParam(0.0, 1.0, step=1e-4), 0.4321, id="fine-step"),
    ],
)
@pytest.mark.parametrize("differentiable", [True, False], ids=["gradient", "no-gradient"])
def test_mixed_on_a_one_parameter_space(param: Any, target: float, differentiable: bool) -> None:
    space = SearchSpace({"p": param})
    log = getattr(param, "log", False)

    def score(u: np.ndarray) -> np.ndarray:
        values = np.array([c["p"] for c in space.decode(u)], dtype=float)
        if log:
            return -((np.log(values) - np.log(target)) ** 2)
        return -(((values - target) / (param.high - param.low)) ** 2)

    def gradient(u: np.ndarray) -> np.ndarray:
        return FiniteDifferenceGradient(score, space, step=1e-7).value_and_grad(u)[1]

    kind = CountingAcquisition if differentiable else PlainCounting
    acquisition = kind(space, score, gradient)
    best = MixedSpaceOptimizer().maximize(acquisition, space, rng(0))
    assert best.shape == (1,)
    value = space.decode(best)[0]["p"]
    assert value == pytest.approx(target, rel=1e-3)
    assert acquisition.n_calls < 200


def test_mixed_on_a_space_without_continuous_coordinates() -> None:
    space = SearchSpace(
        {
            "n": IntParam(0, 10_000),
            "c": CategoricalParam(("a", "b", "c", "d")),
            "m": IntParam(1, 10**6, log=True),
            "s": FloatParam(0.0, 1.0, step=0.05),
        }
    )

    def score(u: np.ndarray) -> np.ndarray:
        configs = space.decode(u)
        return np.array(
            [
                -abs(c["n"] - 4321) / 100
                - (c["c"] != "c")
                - abs(np.log(c["m"]) - np.log(2024))
                - abs(c["s"] - 0.35)
                for c in configs
            ]
        )

    acquisition = CountingAcquisition(space, score, lambda u: np.zeros_like(u))
    best = MixedSpaceOptimizer(n_sobol=512).maximize(acquisition, space, rng(0))
    config = space.decode(best)[0]
    assert config == {"n": 4321, "c": "c", "m": 2024, "s": pytest.approx(0.35)}
    assert acquisition.n_calls < 200


def test_mixed_returns_the_best_neighbour_of_an_excluded_optimum() -> None:
    # The discrete search scores the optimum's neighbours; they stay in the final pool.
    space = SearchSpace({"n": IntParam(0, 100_000), "c": CategoricalParam(("a", "b"))})

    def score(u: np.ndarray) -> np.ndarray:
        return np.array([-abs(c["n"] - 54_321) - (c["c"] == "b") for c in space.decode(u)])

    exclude = space.encode([{"n": 54_321, "c": "a"}])
    best = MixedSpaceOptimizer(n_sobol=256).maximize(score, space, rng(0), exclude=exclude)
    assert space.decode(best)[0] in ({"n": 54_320, "c": "a"}, {"n": 54_322, "c": "a"})


def test_mixed_keeps_away_from_pending_points() -> None:
    space = _continuous_space(3)
    target = np.array([0.3, 0.6, 0.5])
    acquisition = NegativeSquaredDistance(space, target)
    best = MixedSpaceOptimizer().maximize(
        acquisition, space, rng(0), keep_away=target[None], radius=0.1
    )
    gap = np.linalg.norm(best - target)
    assert gap >= 0.1
    # ... and it is still a good point: among the scored points, close to the radius.
    assert gap < 0.2


def test_mixed_ignores_nan_scores() -> None:
    space = _continuous_space(2)
    target = np.array([0.4, 0.6])
    inner = NegativeSquaredDistance(space, target)

    def score(u: np.ndarray) -> np.ndarray:
        values = inner(u)
        return np.where(u[:, 0] > 0.5, np.nan, values)

    best = MixedSpaceOptimizer().maximize(score, space, rng(0))
    np.testing.assert_allclose(best, target, atol=1e-3)


def test_mixed_is_deterministic_for_a_seed() -> None:
    space = _mixed_space()
    target = np.random.default_rng(5).uniform(0, 1, space.n_dims)
    runs = [
        MixedSpaceOptimizer(n_sobol=256).maximize(
            NegativeSquaredDistance(space, target), space, rng(3), anchors=target[None]
        )
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"lengthscales": np.ones(3)}, "lengthscales must have shape", id="ls-shape"),
        pytest.param({"lengthscales": np.array([1.0, 0.0])}, "positive", id="ls-zero"),
        pytest.param({"anchors": np.ones(2)}, "anchors must have shape", id="anchor-shape"),
    ],
)
def test_mixed_rejects_malformed_hints(kwargs: dict, message: str) -> None:
    space = _continuous_space(2)
    with pytest.raises(ValueError, match=message):
        MixedSpaceOptimizer(n_sobol=16).maximize(
            NegativeSquaredDistance(space, [0.5, 0.5]), space, rng(0), **kwargs
        )


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_accepts_lengthscales_and_anchors(name: str) -> None:
    space = _mixed_space()
    target = space.snap(np.full((1, space.n_dims), 0.5))[0]
    best = OPTIMIZERS[name]().maximize(
        NegativeSquaredDistance(space, target),
        space,
        rng(0),
        lengthscales=np.full(space.n_dims, 0.3),
        anchors=target[None],
    )
    np.testing.assert_array_equal(space.snap(best), best[None, :])


def test_mixed_scores_candidates_in_one_batch_and_refines_in_few_calls() -> None:
    space = _continuous_space(5)
    acquisition = CountingAcquisition(space, *_bump(np.full(5, 0.37), np.full(5, 0.2)))
    MixedSpaceOptimizer(n_sobol=1000, n_perturbations=100).maximize(
        acquisition, space, rng(0), anchors=np.full((2, 5), 0.5)
    )
    # The first batch holds every candidate: Sobol points, the 2 anchors, 2 x 100 perturbations.
    assert acquisition.n_points >= 1202
    assert acquisition.n_calls < 100


# ----------------------------------------------------------- several acquisitions side by side
def test_maximize_each_finds_every_acquisitions_own_maximiser() -> None:
    space = _continuous_space(4)
    width = np.full(4, 0.1)
    centres = [np.full(4, 0.2), np.full(4, 0.7), np.array([0.9, 0.1, 0.5, 0.3])]
    acquisitions = [CountingAcquisition(space, *_bump(c, width)) for c in centres]
    best = MixedSpaceOptimizer(merge_radius=0.01).maximize_each(
        acquisitions, space, rng(0), lengthscales=width
    )
    for point, centre in zip(best, centres, strict=True):
        np.testing.assert_allclose(point, centre, atol=1e-4)
    # One batched local search for all three: while its own starts move, each acquisition
    # scores the points of every one (acquisitions over one GP then share its posterior).
    assert max(a.n_calls for a in acquisitions) < 200
    assert all(a.n_points > 2048 + 10 * (a.n_calls - 2) for a in acquisitions)


def test_maximize_is_maximize_each_of_one_acquisition() -> None:
    space = _continuous_space(3)
    centre, width = np.array([0.3, 0.6, 0.8]), np.array([0.05, 0.2, 0.1])
    one = MixedSpaceOptimizer().maximize(
        CountingAcquisition(space, *_bump(centre, width)), space, rng(4)
    )
    each = MixedSpaceOptimizer().maximize_each(
        [CountingAcquisition(space, *_bump(centre, width))], space, rng(4)
    )
    np.testing.assert_array_equal(one, each[0])


def test_maximize_each_checks_its_radii() -> None:
    space = _continuous_space(2)
    score = NegativeSquaredDistance(space, [0.5, 0.5])
    with pytest.raises(ValueError, match="2 radii for 1 acquisitions"):
        MixedSpaceOptimizer().maximize_each([score], space, rng(0), radii=[0.1, 0.2])


def test_merged_starts_stop_early_and_reach_the_same_minimum() -> None:
    from bore_samplers.optimizers.lbfgsb import _batched_lbfgsb

    # An ill-conditioned quadratic: starts in its one basin take many steps each.
    scales = np.array([1.0, 30.0, 100.0])
    target = np.array([0.4, 0.5, 0.6])
    n_rows = [0]

    def fun(rows: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_rows[0] += len(rows)
        diff = (x - target) * scales
        return (diff**2).sum(axis=1), 2.0 * diff * scales

    x0 = rng(0).random((8, 3))
    upper = np.ones(3)
    plain = _batched_lbfgsb(fun, x0, upper, 200, 1e-9)
    plain_rows, n_rows[0] = n_rows[0], 0
    merged = _batched_lbfgsb(fun, x0, upper, 200, 1e-9, merge_radius=0.05)
    merged_rows, n_rows[0] = n_rows[0], 0
    np.testing.assert_allclose(
        merged[np.argmin(((merged - target) * scales) ** 2 @ np.ones(3))], target, atol=1e-6
    )
    np.testing.assert_allclose(plain, np.tile(target, (8, 1)), atol=1e-6)
    assert merged_rows < plain_rows
    # Problems of different groups never merge: each runs to the minimum as without merging.
    apart = _batched_lbfgsb(fun, x0, upper, 200, 1e-9, groups=np.arange(8), merge_radius=0.05)
    np.testing.assert_allclose(apart, plain, atol=1e-12)
    assert n_rows[0] == plain_rows


def test_a_start_that_cannot_catch_up_with_its_group_stops() -> None:
    from bore_samplers.optimizers.lbfgsb import _batched_lbfgsb

    # A round quadratic with minimum 0 beside a Rosenbrock valley lifted by 1000: the valley's
    # start crawls, and whatever it does it ends above the quadratic's minimum.
    shift = np.array([0.4, 0.5])
    evaluations = np.zeros(2, dtype=int)

    def fun(rows: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        evaluations[rows] += 1
        a, b = 4.0 * (x - shift).T
        valley = 1000.0 + (1.0 - a) ** 2 + 100.0 * (b - a**2) ** 2
        valley_grad = 4.0 * np.column_stack(
            [-2.0 * (1.0 - a) - 400.0 * a * (b - a**2), 200.0 * (b - a**2)]
        )
        is_round = rows == 0
        values = np.where(is_round, ((x - shift) ** 2).sum(axis=1), valley)
        grad = np.where(is_round[:, None], 2.0 * (x - shift), valley_grad)
        return values, grad

    x0 = np.array([[0.9, 0.1], [0.1, 0.9]])
    upper = np.ones(2)
    apart = _batched_lbfgsb(fun, x0, upper, 200, 1e-9, groups=np.arange(2))
    apart_evaluations = evaluations.copy()
    evaluations[:] = 0
    together = _batched_lbfgsb(fun, x0, upper, 200, 1e-9, groups=np.zeros(2, dtype=int))
    # The best problem of the group is not touched; the crawler gives up early.
    np.testing.assert_array_equal(together[0], apart[0])
    assert evaluations[0] == apart_evaluations[0]
    assert evaluations[1] < apart_evaluations[1] / 2
    assert fun(np.array([1]), together[1:])[0][0] > fun(np.array([0]), together[:1])[0][0]


def test_batched_problems_step_as_each_would_alone_in_fewer_calls() -> None:
    from bore_samplers.optimizers.lbfgsb import _batched_lbfgsb

    # Rosenbrock valleys of different shapes, some starts against a bound: the problems need
    # different numbers of iterations and of line-search steps.
    shifts = rng(3).uniform(0.3, 0.7, size=(6, 2))
    calls = [0]

    def fun(rows: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls[0] += 1
        a, b = 4.0 * (x - shifts[rows]).T
        values = (1.0 - a) ** 2 + 100.0 * (b - a**2) ** 2
        grad = np.column_stack([-2.0 * (1.0 - a) - 400.0 * a * (b - a**2), 200.0 * (b - a**2)])
        return values, 4.0 * grad

    x0 = np.vstack([rng(4).random((4, 2)), [[0.0, 1.0], [1.0, 0.0]]])
    upper = np.ones(2)
    alone, evaluations = [], []
    for i in range(len(x0)):
        calls[0] = 0
        one = _batched_lbfgsb(
            lambda rows, x, i=i: fun(np.full(len(rows), i), x), x0[i : i + 1], upper, 200, 1e-9
        )
        alone.append(one[0])
        evaluations.append(calls[0])
    calls[0] = 0
    together = _batched_lbfgsb(fun, x0, upper, 200, 1e-9)
    np.testing.assert_allclose(together, np.array(alone), atol=1e-12)
    # No problem waits for another's line search: one call per evaluation of the longest.
    assert calls[0] == max(evaluations)
    assert len(set(evaluations)) > 1


def test_leaders_end_the_batch_and_the_others_keep_their_best_points() -> None:
    from bore_samplers.optimizers.lbfgsb import _batched_lbfgsb

    # Rosenbrock valleys (slow) beside a round quadratic (fast): with the quadratic leading,
    # the valleys get only the calls that it needs.
    shift = np.array([0.4, 0.5])
    calls = [0]

    def fun(rows: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls[0] += 1
        a, b = 4.0 * (x - shift).T
        valley = (1.0 - a) ** 2 + 100.0 * (b - a**2) ** 2
        valley_grad = 4.0 * np.column_stack(
            [-2.0 * (1.0 - a) - 400.0 * a * (b - a**2), 200.0 * (b - a**2)]
        )
        round_ = ((x - shift) ** 2).sum(axis=1)
        is_round = rows == 0
        values = np.where(is_round, round_, valley)
        grad = np.where(is_round[:, None], 2.0 * (x - shift), valley_grad)
        return values, grad

    x0 = np.array([[0.9, 0.1], [0.1, 0.9], [0.95, 0.95]])
    upper = np.ones(2)
    full = _batched_lbfgsb(fun, x0, upper, 200, 1e-9, groups=np.arange(3))
    full_calls, calls[0] = calls[0], 0
    led = _batched_lbfgsb(
        fun, x0, upper, 200, 1e-9, groups=np.arange(3), leaders=np.array([True, False, False])
    )
    led_calls, calls[0] = calls[0], 0
    # The leader takes exactly the steps it takes without the others' company ...
    alone = _batched_lbfgsb(
        lambda rows, x: fun(np.zeros(len(rows), dtype=int), x), x0[:1], upper, 200, 1e-9
    )
    np.testing.assert_array_equal(led[0], full[0])
    np.testing.assert_array_equal(led[0], alone[0])
    assert led_calls == calls[0] < full_calls
    # ... and the others stop where they had got to (never worse than their starts), short of
    # the minimum that they reach when they run on.
    start_values = fun(np.arange(3), x0)[0]
    led_values, full_values = fun(np.arange(3), led)[0], fun(np.arange(3), full)[0]
    assert np.all(led_values[1:] <= start_values[1:])
    assert np.all(led_values[1:] > full_values[1:])


def test_maximize_each_with_a_primary_finds_its_maximiser_in_fewer_calls() -> None:
    space = _continuous_space(4)
    centre = np.array([0.3, 0.6, 0.8, 0.45])
    # The second acquisition is a narrow, elongated bump: its starts need many more steps.
    shapes = [(centre, np.full(4, 0.2)), (1.0 - centre, np.array([0.01, 0.3, 0.02, 0.5]))]

    def maximise(primary: int | None) -> tuple[list[np.ndarray], list[int]]:
        acquisitions = [CountingAcquisition(space, *_bump(c, w)) for c, w in shapes]
        best = MixedSpaceOptimizer().maximize_each(acquisitions, space, rng(2), primary=primary)
        return best, [a.n_calls for a in acquisitions]

    full, full_calls = maximise(None)
    led, led_calls = maximise(0)
    np.testing.assert_array_equal(led[0], full[0])
    np.testing.assert_allclose(led[0], centre, atol=1e-4)
    assert max(led_calls) < max(full_calls)
    # The other acquisition's nominee still comes from its (shorter) local search.
    assert _bump(*shapes[1])[0](led[1][None])[0] > 0.5
    with pytest.raises(ValueError, match="primary must index one of the 2"):
        MixedSpaceOptimizer().maximize_each(
            [CountingAcquisition(space, *_bump(c, w)) for c, w in shapes], space, rng(2), primary=2
        )


def test_maximize_each_on_a_mixed_space_snaps_and_keeps_each_radius() -> None:
    space = _mixed_space()
    targets = [np.full(space.n_dims, 0.3), np.full(space.n_dims, 0.8)]
    acquisitions: list[Any] = [NegativeSquaredDistance(space, t) for t in targets]
    acquisitions.append(PlainAcquisition(space, np.full(space.n_dims, 0.5)))
    # A pending point at the first acquisition's best snapped point: only the first keeps away.
    pending = space.snap(targets[0][None, :])
    best = MixedSpaceOptimizer(n_sobol=512, merge_radius=0.01).maximize_each(
        acquisitions, space, rng(1), keep_away=pending, radii=[0.2, 0.0, 0.0]
    )
    for point in best:
        np.testing.assert_array_equal(space.snap(point[None, :])[0], point)
        assert all(
            _is_valid(p, v)
            for p, v in zip(
                space.params.values(), space.decode(point[None, :])[0].values(), strict=True
            )
        )
    assert np.linalg.norm(best[0] - pending[0]) >= 0.2
    assert np.linalg.norm(best[1] - space.snap(targets[1][None, :])[0]) < 0.1


def test_line_search_step_is_the_minimiser_of_the_interpolating_cubic() -> None:
    from bore_samplers.optimizers.lbfgsb import _cubic_step

    # phi(s) = c3 s^3 + c2 s^2 + c1 s + c0 with a local minimum in (0, 1): the interpolant
    # through both ends' values and slopes is phi itself.
    coefficients = np.array([[2.0, 1.0, -1.0, 0.5], [1.0, 3.0, -2.0, 0.0], [-1.0, 4.0, -1.5, 2.0]])
    c3, c2, c1, c0 = coefficients.T
    f0, slope0 = c0, c1
    f1, slope1 = c3 + c2 + c1 + c0, 3.0 * c3 + 2.0 * c2 + c1
    step = _cubic_step(f0, slope0, f1, slope1)
    np.testing.assert_allclose(3.0 * c3 * step**2 + 2.0 * c2 * step + c1, 0.0, atol=1e-12)
    assert np.all((step > 0.0) & (step < 1.0))
    assert np.all(6.0 * c3 * step + 2.0 * c2 > 0.0)  # a minimum, not a maximum
    # Without a usable slope at the end: the parabola through f0, slope0 and f1; without a
    # usable value either: half the step.
    # (phi = 1 - s + 2 s^2 through phi(1) = 2: minimiser 1/4)
    parabola = _cubic_step(np.array([1.0]), np.array([-1.0]), np.array([2.0]), np.array([np.nan]))
    np.testing.assert_allclose(parabola, [0.25])
    halved = _cubic_step(np.array([1.0]), np.array([-1.0]), np.array([np.inf]), np.array([1.0]))
    np.testing.assert_allclose(halved, [0.5])


# ------------------------------------------------------------------ Parzen candidates
def _two_clusters(space: SearchSpace) -> np.ndarray:
    """Five anchors near (0.1, 0.1) and five near (0.9, 0.9)."""
    spread = np.linspace(-0.02, 0.02, 5)[:, None]
    return space.snap(np.vstack([0.1 + spread, 0.9 + spread]) * np.ones((1, 2)))


def _off_diagonal_share(points: np.ndarray) -> float:
    return float(np.mean((points[:, 0] < 0.5) != (points[:, 1] < 0.5)))


def test_per_coordinate_candidates_recombine_the_anchors_coordinates() -> None:
    space = _continuous_space(2)
    parzen = ParzenEstimator(space, _two_clusters(space))
    # Whole kernels: off the diagonal only through the broad kernels (the prior's, and the two
    # anchors facing the other cluster); coordinate by coordinate, a point takes its two
    # coordinates from different clusters about half the time.
    assert _off_diagonal_share(parzen.sample(4000, rng(0))) < 0.2
    assert _off_diagonal_share(parzen.sample_per_coordinate(4000, rng(0))) > 0.4


@pytest.mark.parametrize(("share", "n_per_coordinate"), [(0.0, 0), (0.5, 12), (1.0, 24)])
def test_parzen_search_draws_its_share_of_candidates_per_coordinate(
    share: float, n_per_coordinate: int
) -> None:
    space = _continuous_space(2)
    anchors = _two_clusters(space)
    acquisition = NegativeSquaredDistance(space, [0.1, 0.9])
    scored: list[np.ndarray] = []

    def record(u: np.ndarray) -> np.ndarray:
        scored.append(u)
        return acquisition(u)

    ParzenSearch(n_candidates=24, per_coordinate=share).maximize(
        record, space, rng(1), anchors=anchors
    )
    (candidates,) = scored
    assert len(candidates) == 24
    # The whole-kernel candidates come first, then the recombined ones (same generator).
    generator = rng(1)
    parzen = ParzenEstimator(space, anchors)
    expected = np.vstack(
        [
            parzen.sample(24 - n_per_coordinate, generator),
            parzen.sample_per_coordinate(n_per_coordinate, generator),
        ]
    )
    np.testing.assert_array_equal(candidates, expected)


def test_parzen_search_names_an_invalid_per_coordinate_share() -> None:
    space = _continuous_space(2)
    with pytest.raises(ValueError, match="per_coordinate must lie in"):
        ParzenSearch(per_coordinate=1.5).maximize(
            NegativeSquaredDistance(space, [0.5, 0.5]), space, rng(0), anchors=np.full((2, 2), 0.5)
        )
