"""BORE classification targets (Algorithm 1, lines 2-4 of Tiao et al., 2021)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bore_samplers.acquisitions.density_ratio import quantile_labels, resolve_gamma


def _reference_labels(values: list[float], gamma: float) -> list[bool]:
    """z_n = I[y_n <= tau], tau the floor((N - 1) gamma)-th order statistic (0-based)."""
    y = [math.inf if math.isnan(v) else v for v in values]
    tau = sorted(y)[math.floor((len(y) - 1) * gamma)]
    return [v <= tau for v in y]


def test_paper_example_ten_values_one_third() -> None:
    # N = 10, gamma = 1/3: tau is the order statistic at floor(9 / 3) = 3, i.e. the 4th
    # smallest value, so exactly 4 observations are labelled positive.
    values = np.array([7.0, 3.0, 9.0, 1.0, 8.0, 2.0, 6.0, 0.0, 5.0, 4.0])
    labels = quantile_labels(values, 1 / 3)
    assert labels.dtype == bool
    assert labels.sum() == 4
    assert set(values[labels]) == {0.0, 1.0, 2.0, 3.0}


@pytest.mark.parametrize(
    ("n", "gamma", "n_positive"),
    [
        (1, 1 / 3, 1),
        (2, 1 / 3, 1),
        (3, 1 / 3, 1),
        (4, 1 / 3, 2),
        (10, 1 / 3, 4),
        (10, 0.25, 3),
        (10, 0.1, 1),
        (11, 0.1, 2),
        (20, 0.15, 3),
        (100, 1 / 3, 34),
        (7, 0.5, 4),
        (7, 0.99, 6),
        (7, 0.01, 1),
    ],
)
def test_number_of_positives_follows_the_lower_order_statistic(
    n: int, gamma: float, n_positive: int
) -> None:
    values = np.random.default_rng(n).permutation(n).astype(float)
    labels = quantile_labels(values, gamma)
    assert labels.sum() == n_positive == math.floor((n - 1) * gamma) + 1
    # The positives are exactly the smallest values.
    assert values[labels].max() < values[~labels].min() if n_positive < n else labels.all()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("gamma", [0.1, 0.25, 1 / 3, 0.5, 0.9])
def test_matches_the_reference_definition_on_random_values(seed: int, gamma: float) -> None:
    rng = np.random.default_rng(seed)
    # Few distinct values, so that ties are frequent.
    values = rng.integers(0, 6, size=rng.integers(1, 30)).astype(float)
    assert quantile_labels(values, gamma).tolist() == _reference_labels(values.tolist(), gamma)


def test_ties_with_tau_are_all_positive() -> None:
    values = np.array([5.0, 1.0, 2.0, 2.0, 2.0, 9.0, 7.0])
    # floor(6 / 3) = 2: tau = 2.0 (sorted: 1, 2, 2, 2, 5, 7, 9); every 2.0 is positive.
    assert quantile_labels(values, 1 / 3).tolist() == [False, True, True, True, True] + [
        False,
        False,
    ]


def test_all_equal_values_give_a_single_class() -> None:
    labels = quantile_labels(np.full(12, 3.0), 1 / 3)
    assert labels.all()


def test_infinite_values_are_ranked_like_any_value() -> None:
    values = np.array([math.inf, 1.0, -math.inf, 0.5, 2.0, math.inf, 3.0])
    labels = quantile_labels(values, 1 / 3)
    # floor(6 / 3) = 2: sorted -inf, 0.5, 1.0, ... so tau = 1.0.
    assert labels.tolist() == [False, True, True, True, False, False, False]


def test_only_minus_infinity_values_are_positive_when_tau_is_minus_infinity() -> None:
    values = np.array([-math.inf, -math.inf, 0.0, 1.0, 2.0])
    labels = quantile_labels(values, 0.25)
    assert labels.tolist() == [True, True, False, False, False]


def test_nan_counts_as_the_worst_value() -> None:
    values = np.array([math.nan, 4.0, 1.0, math.nan, 2.0, 3.0, math.inf])
    labels = quantile_labels(values, 1 / 3)
    # NaN -> +inf; sorted 1, 2, 3, 4, inf, inf, inf; floor(6 / 3) = 2 -> tau = 3.
    assert labels.tolist() == [False, False, True, False, True, True, False]
    assert quantile_labels(np.array([math.nan, 0.0]), 0.4).tolist() == [False, True]


def test_tau_is_always_an_observed_value_so_never_nan() -> None:
    values = np.array([-math.inf, math.inf, math.nan, 0.0])
    labels = quantile_labels(values, 0.5)
    # floor(3 / 2) = 1: sorted -inf, 0, inf, inf -> tau = 0.
    assert labels.tolist() == [True, False, False, True]


def test_empty_input_gives_empty_labels() -> None:
    labels = quantile_labels(np.array([]), 1 / 3)
    assert labels.shape == (0,)
    assert labels.dtype == bool


def test_accepts_a_list_and_does_not_modify_its_input() -> None:
    values = np.array([3.0, math.nan, 1.0])
    before = values.copy()
    quantile_labels(values, 0.5)
    np.testing.assert_array_equal(values, before)
    assert quantile_labels([3.0, 1.0, 2.0], 0.5).tolist() == [False, True, True]


# ------------------------------------------------------------------------- resolve_gamma
@pytest.mark.parametrize("gamma", [1 / 3, 0.01, 0.5, 0.99])
def test_resolve_gamma_of_a_fixed_value(gamma: float) -> None:
    assert resolve_gamma(gamma, 0) == gamma
    assert resolve_gamma(gamma, 1000) == gamma


def test_resolve_gamma_calls_a_schedule_with_the_number_of_observations() -> None:
    calls: list[int] = []

    def schedule(n: int) -> float:
        calls.append(n)
        return 0.5 if n < 20 else 0.1

    assert resolve_gamma(schedule, 5) == 0.5
    assert resolve_gamma(schedule, 25) == 0.1
    assert calls == [5, 25]


def test_resolve_gamma_returns_a_python_float() -> None:
    assert type(resolve_gamma(np.float32(0.25), 3)) is float
    assert type(resolve_gamma(lambda n: np.float64(0.25), 3)) is float


@pytest.mark.parametrize("gamma", [0.0, 1.0, 1.5, -0.1, math.nan, math.inf])
def test_resolve_gamma_rejects_values_outside_the_open_unit_interval(gamma: float) -> None:
    with pytest.raises(ValueError, match="gamma"):
        resolve_gamma(gamma, 10)


@pytest.mark.parametrize("gamma", [0.0, 1.0, 1.5])
def test_resolve_gamma_rejects_invalid_values_from_a_schedule(gamma: float) -> None:
    with pytest.raises(ValueError, match="gamma"):
        resolve_gamma(lambda n: gamma, 10)
