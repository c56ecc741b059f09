"""Encodings of :class:`bore_samplers.space.SearchSpace` (framework-free core)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pytest
from scipy.stats import chisquare

from bore_samplers.space import (
    CategoricalParam,
    FloatParam,
    IntParam,
    SearchSpace,
    choice_index,
)

MIXED_CHOICES = (1, "a", None, True, 2.5)


def _on_grid(value: float, low: float, step: float) -> bool:
    # The check Optuna's FloatDistribution / IntDistribution use for stepped values.
    k = (value - low) / step
    return abs(k - round(k)) < 1e-8


def _is_valid(param: Any, value: Any) -> bool:
    """Whether ``value`` is a valid plain-Python value of ``param``."""
    if isinstance(param, CategoricalParam):
        return any(value == c and type(value) is type(c) for c in param.choices)
    if isinstance(param, IntParam):
        return (
            type(value) is int
            and param.low <= value <= param.high
            and _on_grid(value, param.low, param.step)
        )
    return (
        type(value) is float
        and param.low <= value <= param.high
        and (param.step is None or _on_grid(value, param.low, param.step))
    )


def _typed(config: dict[str, Any]) -> dict[str, tuple[type, Any]]:
    # dict equality alone says True == 1; compare types as well.
    return {name: (type(v), v) for name, v in config.items()}


def _grid(low: float, high: float, step: float) -> list[float]:
    n = int(math.floor((high - low) / step + 1e-9)) + 1
    return [low + k * step for k in range(n)]


ALL_TYPES_SPACE = SearchSpace(
    {
        "float": FloatParam(-3.0, 7.5),
        "float_log": FloatParam(1e-4, 10.0, log=True),
        "float_step": FloatParam(-10.2, 10.2, step=0.1),
        "float_half": FloatParam(-10, 10, step=0.5),
        "float_step_uneven": FloatParam(0.0, 1.0, step=0.3),
        "int": IntParam(-5, 17),
        "int_log": IntParam(1, 1000, log=True),
        "int_step": IntParam(3, 9, step=2),
        "int_step_uneven": IntParam(0, 10, step=3),
        "cat": CategoricalParam(MIXED_CHOICES),
        "const_float": FloatParam(2.5, 2.5),
        "const_int": IntParam(4, 4),
    }
)


# ------------------------------------------------------------------------- round trips
@pytest.mark.parametrize(
    ("param", "values"),
    [
        pytest.param(FloatParam(-3.0, 7.5), [-3.0, -1.25, 0.0, 1.234567, 7.5], id="float"),
        pytest.param(
            FloatParam(1e-4, 10.0, log=True), [1e-4, 3e-3, 0.5, 9.99, 10.0], id="float-log"
        ),
        pytest.param(FloatParam(-1.0, -1.0 + 1e-12), [-1.0, -1.0 + 1e-12], id="float-tiny"),
    ],
)
def test_continuous_float_round_trip(param: FloatParam, values: list[float]) -> None:
    space = SearchSpace({"x": param})
    decoded = [c["x"] for c in space.decode(space.encode([{"x": v} for v in values]))]
    assert all(type(v) is float for v in decoded)
    assert decoded == pytest.approx(values, rel=1e-12, abs=1e-15)
    assert all(param.low <= v <= param.high for v in decoded)


@pytest.mark.parametrize(
    "param",
    [
        pytest.param(FloatParam(-10.2, 10.2, step=0.1), id="step-0.1"),
        pytest.param(FloatParam(-10, 10, step=0.5), id="step-0.5"),
        pytest.param(FloatParam(0.0, 1.0, step=0.3), id="high-off-grid"),
        pytest.param(FloatParam(1e-3, 2e-3, step=1e-4), id="small-step"),
    ],
)
def test_stepped_float_round_trip_over_whole_grid(param: FloatParam) -> None:
    assert param.step is not None
    grid = _grid(param.low, param.high, param.step)
    space = SearchSpace({"x": param})
    u = space.encode([{"x": v} for v in grid])
    decoded = [c["x"] for c in space.decode(u)]
    assert decoded == pytest.approx(grid, abs=1e-9)
    assert all(_is_valid(param, v) for v in decoded)
    # Every grid value has its own bin: no two values collapse onto one.
    assert len(set(decoded)) == len(grid)
    assert decoded[0] == param.low


def test_stepped_float_keeps_the_last_grid_point() -> None:
    # (10.2 - -10.2) / 0.1 is 203.99999999999997 in floating point.
    space = SearchSpace({"x": FloatParam(-10.2, 10.2, step=0.1)})
    values = [c["x"] for c in space.decode(np.array([[0.0], [1.0]]))]
    assert values[0] == -10.2
    assert values[1] == pytest.approx(10.2, abs=1e-12)
    assert values[1] <= 10.2
    assert len({c["x"] for c in space.decode(space.sample_uniform(5000, _rng()))}) == 205


@pytest.mark.parametrize(
    "param",
    [
        pytest.param(IntParam(-5, 17), id="int"),
        pytest.param(IntParam(1, 1000, log=True), id="int-log"),
        pytest.param(IntParam(3, 9, step=2), id="int-step"),
        pytest.param(IntParam(0, 10, step=3), id="int-step-high-off-grid"),
        pytest.param(IntParam(2, 3, log=True), id="int-log-narrow"),
    ],
)
def test_int_round_trip_over_all_values(param: IntParam) -> None:
    values = list(range(param.low, param.high + 1, param.step))
    space = SearchSpace({"i": param})
    u = space.encode([{"i": v} for v in values])
    decoded = [c["i"] for c in space.decode(u)]
    assert decoded == values
    assert all(type(v) is int for v in decoded)
    # Encoded points are already canonical.
    np.testing.assert_array_equal(space.snap(u), u)


def test_int_step_values_are_exactly_the_grid() -> None:
    space = SearchSpace({"i": IntParam(3, 9, step=2)})
    seen = {c["i"] for c in space.decode(np.linspace(-0.01, 1.01, 301)[:, None])}
    assert seen == {3, 5, 7, 9}


def test_mixed_type_categorical_round_trip_keeps_true_and_1_apart() -> None:
    space = SearchSpace({"c": CategoricalParam(MIXED_CHOICES)})
    configs = [{"c": v} for v in MIXED_CHOICES]
    u = space.encode(configs)
    assert len(np.unique(u[:, 0])) == len(MIXED_CHOICES)
    decoded = space.decode(u)
    for original, back in zip(MIXED_CHOICES, decoded, strict=True):
        assert back["c"] is original
        assert type(back["c"]) is type(original)
    # True and 1 are different choices, with different coordinates.
    u_one, u_true = space.encode([{"c": 1}, {"c": True}])[:, 0]
    assert u_one != u_true
    assert space.decode(np.array([[u_true]]))[0]["c"] is True
    one = space.decode(np.array([[u_one]]))[0]["c"]
    assert one == 1 and type(one) is int


def test_categorical_with_nan_choice_round_trips() -> None:
    space = SearchSpace({"c": CategoricalParam((0.5, math.nan, "x"))})
    u = space.encode([{"c": math.nan}])
    value = space.decode(u)[0]["c"]
    assert isinstance(value, float) and math.isnan(value)


@pytest.mark.parametrize(
    "choices",
    [
        ("a", "b", None, 2, 2.5),  # plain and distinct: encoded by a dictionary lookup
        (1, True, 1.0, "1"),  # equal choices: encoded by scanning
        (0.5, math.nan, "x"),
        ((1, 2), "t"),  # a tuple choice: not plain
    ],
)
def test_categorical_encoding_matches_choice_index(choices: tuple[Any, ...]) -> None:
    # The encoder's lookup is a shortcut; it must give choice_index's answer for every value.
    space = SearchSpace({"c": CategoricalParam(choices)})
    values = [*choices, np.float64(2.5), np.int64(2), True, 1, 1.0, math.nan, [1, 2]]
    for value in values:
        try:
            expected = choice_index(choices, value, "c")
        except ValueError:
            with pytest.raises(ValueError, match="not one of the choices"):
                space.encode([{"c": value}])
            continue
        u = space.encode([{"c": value}])[0, 0]
        assert u == (expected + 0.5) / len(choices), (choices, value)


def test_round_trip_of_all_types_together() -> None:
    configs = ALL_TYPES_SPACE.decode(ALL_TYPES_SPACE.sample_uniform(300, _rng(3)))
    again = ALL_TYPES_SPACE.decode(ALL_TYPES_SPACE.encode(configs))
    for before, after in zip(configs, again, strict=True):
        assert _typed(after).keys() == _typed(before).keys()
        for name in before:
            if name in ("float", "float_log"):
                assert after[name] == pytest.approx(before[name], rel=1e-12)
                assert type(after[name]) is float
            else:
                assert _typed(after)[name] == _typed(before)[name]


# ------------------------------------------------------------------------- low == high
@pytest.mark.parametrize(
    ("param", "value"),
    [
        pytest.param(FloatParam(2.5, 2.5), 2.5, id="float"),
        pytest.param(FloatParam(3.0, 3.0, log=True), 3.0, id="float-log"),
        pytest.param(FloatParam(1.0, 1.0, step=0.5), 1.0, id="float-step"),
        pytest.param(IntParam(4, 4), 4, id="int"),
        pytest.param(IntParam(4, 4, log=True), 4, id="int-log"),
        pytest.param(IntParam(4, 4, step=3), 4, id="int-step"),
    ],
)
def test_single_value_parameter(param: FloatParam | IntParam, value: float) -> None:
    space = SearchSpace({"x": param, "i": IntParam(0, 3)})
    u = np.column_stack([np.linspace(-0.1, 1.1, 13), np.full(13, 0.3)])
    decoded = space.decode(u)
    assert all(c["x"] == value and type(c["x"]) is type(value) for c in decoded)
    encoded = space.encode([{"x": value, "i": 1}])
    assert space.decode(encoded)[0] == {"x": value, "i": 1}
    # Every u decodes to the same configuration, so every u must snap to the same point,
    # which is also the encoding of that configuration (otherwise duplicates go unnoticed).
    snapped = space.snap(u)
    np.testing.assert_array_equal(snapped, np.repeat(snapped[:1], len(u), axis=0))
    np.testing.assert_array_equal(snapped[0], encoded[0])


# ------------------------------------------------------------------------- huge categorical
@pytest.mark.parametrize("encoding", ["onehot", "index"])
def test_huge_categorical_round_trip_and_feature_width(encoding: str) -> None:
    choices = tuple(f"choice-{i}" for i in range(5000))
    space = SearchSpace(
        {"c": CategoricalParam(choices), "x": FloatParam(0, 1)}, categorical_encoding=encoding
    )
    configs = [{"c": c, "x": 0.25} for c in choices]
    u = space.encode(configs)
    assert [c["c"] for c in space.decode(u)] == list(choices)
    assert len(np.unique(u[:, 0])) == 5000
    width = 5001 if encoding == "onehot" else 2
    assert space.n_features == width
    features = space.features(u[[0, 1234, 4999]])
    assert features.shape == (3, width)
    if encoding == "onehot":
        np.testing.assert_array_equal(features[:, :5000].sum(axis=1), 1.0)
        assert [int(np.argmax(row[:5000])) for row in features] == [0, 1234, 4999]
        np.testing.assert_array_equal(features[:, 5000], 0.25)


def test_onehot_features_of_a_very_large_categorical_stay_small() -> None:
    # 100 000 choices: a k x k identity would need 80 GB; the features are only n x k.
    space = SearchSpace({"c": CategoricalParam(tuple(range(100_000)))})
    u = space.encode([{"c": 7}, {"c": 99_999}])
    features = space.features(u)
    assert features.shape == (2, 100_000)
    assert features.sum() == 2.0
    assert features[0, 7] == 1.0 and features[1, 99_999] == 1.0


# ------------------------------------------------------------------------- decoding any u
def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _edge_and_random_unit_points(n_dims: int, n_random: int, seed: int) -> np.ndarray:
    rng = _rng(seed)
    eps = np.finfo(float).eps
    edges = np.array([0.0, 1.0, -1e-12, 1.0 + 1e-12, -0.05, 1.05, eps, 1.0 - eps, 0.5])
    edge_rows = np.repeat(edges[:, None], n_dims, axis=1)
    # Exact bin boundaries of every discrete dimension (k / n_bins) are the risky points.
    boundary = np.tile(np.arange(0, 42) / 41.0, (n_dims, 1)).T
    return np.vstack([edge_rows, boundary, rng.uniform(-0.02, 1.02, size=(n_random, n_dims))])


def test_decode_of_arbitrary_u_gives_valid_plain_python_values() -> None:
    space = ALL_TYPES_SPACE
    u = _edge_and_random_unit_points(space.n_dims, 3000, seed=1)
    for config in space.decode(u):
        assert list(config) == space.names
        for name, value in config.items():
            assert _is_valid(space.params[name], value), (name, value)
            assert not isinstance(value, np.generic), (name, type(value))


@pytest.mark.parametrize("seed", [0, 1])
def test_snap_is_idempotent_and_preserves_the_decoded_configuration(seed: int) -> None:
    space = ALL_TYPES_SPACE
    u = _edge_and_random_unit_points(space.n_dims, 1000, seed=seed)
    snapped = space.snap(u)
    assert np.all((snapped >= 0.0) & (snapped <= 1.0))
    np.testing.assert_array_equal(space.snap(snapped), snapped)
    for a, b in zip(space.decode(u), space.decode(snapped), strict=True):
        assert _typed(a) == _typed(b)


def test_points_decoding_to_the_same_configuration_snap_identically() -> None:
    space = SearchSpace(
        {
            "i": IntParam(3, 9, step=2),
            "l": IntParam(1, 50, log=True),
            "f": FloatParam(-1, 1, step=0.5),
            "c": CategoricalParam(MIXED_CHOICES),
        }
    )
    u = _rng(5).random((4000, space.n_dims))
    groups: dict[tuple, set[bytes]] = {}
    for config, row in zip(space.decode(u), space.snap(u), strict=True):
        key = tuple(sorted((k, repr(v)) for k, v in config.items()))
        groups.setdefault(key, set()).add(row.tobytes())
    assert all(len(rows) == 1 for rows in groups.values())
    # And the canonical point is the encoding of the configuration.
    configs = space.decode(u[:50])
    np.testing.assert_array_equal(space.snap(u[:50]), space.encode(configs))


# ------------------------------------------------------------------------- sampling
@pytest.mark.parametrize(
    ("param", "n_values"),
    [
        pytest.param(IntParam(3, 9, step=2), 4, id="int-step"),
        pytest.param(IntParam(0, 9), 10, id="int"),
        pytest.param(FloatParam(-10, 10, step=0.5), 41, id="float-step"),
        pytest.param(CategoricalParam(MIXED_CHOICES), 5, id="categorical"),
    ],
)
def test_uniform_sampling_is_uniform_over_discrete_values(param: Any, n_values: int) -> None:
    space = SearchSpace({"p": param})
    n = 400 * n_values
    counts = Counter(repr(c["p"]) for c in space.decode(space.sample_uniform(n, _rng(11))))
    assert len(counts) == n_values
    observed = np.array(list(counts.values()), dtype=float)
    # Loose: a chi-square p-value this small would mean a grossly non-uniform sampler.
    assert chisquare(observed).pvalue > 1e-4
    assert observed.min() > 0.7 * n / n_values and observed.max() < 1.3 * n / n_values


def test_sample_uniform_returns_snapped_points() -> None:
    u = ALL_TYPES_SPACE.sample_uniform(200, _rng(2))
    assert u.shape == (200, ALL_TYPES_SPACE.n_dims)
    np.testing.assert_array_equal(ALL_TYPES_SPACE.snap(u), u)


@pytest.mark.parametrize("skip", [1, 3, 8, 13])
def test_sample_sobol_with_skip_continues_the_sequence(skip: int) -> None:
    space = SearchSpace(
        {"x": FloatParam(0, 1), "y": FloatParam(-5, 5, log=False), "i": IntParam(0, 100)}
    )
    full = space.sample_sobol(32, seed=7)
    part = space.sample_sobol(5, seed=7, skip=skip)
    np.testing.assert_allclose(part, full[skip : skip + 5], rtol=0, atol=1e-15)


def test_sample_sobol_is_deterministic_per_seed_and_snapped() -> None:
    space = SearchSpace({"x": FloatParam(0, 1), "c": CategoricalParam(("a", "b", "c"))})
    a = space.sample_sobol(8, seed=3)
    np.testing.assert_array_equal(a, space.sample_sobol(8, seed=3))
    assert not np.array_equal(a, space.sample_sobol(8, seed=4))
    np.testing.assert_array_equal(space.snap(a), a)


def test_first_sobol_points_are_stratified() -> None:
    # The first 2^k points of a scrambled Sobol sequence put one point in each 1/2^k bin of
    # every coordinate; uniform random points almost never do.
    space = SearchSpace({"x": FloatParam(0, 1), "y": FloatParam(0, 1), "z": FloatParam(0, 1)})
    u = space.sample_sobol(16, seed=0)
    for j in range(3):
        assert sorted(np.floor(u[:, j] * 16).astype(int)) == list(range(16))


# ------------------------------------------------------------------------- features
def _feature_space(encoding: str = "onehot") -> SearchSpace:
    return SearchSpace(
        {
            "x": FloatParam(0, 10),
            "c": CategoricalParam(("r", "g", "b")),
            "i": IntParam(0, 4),
        },
        categorical_encoding=encoding,
    )


def test_onehot_features_width_and_content() -> None:
    space = _feature_space()
    assert space.n_features == 5
    configs = [{"x": 2.5, "c": "r", "i": 0}, {"x": 10.0, "c": "b", "i": 4}]
    u = space.encode(configs)
    features = space.features(u)
    expected = np.array([[0.25, 1, 0, 0, 0.1], [1.0, 0, 0, 1, 0.9]])
    np.testing.assert_allclose(features, expected)
    cols = space.feature_columns()
    assert [c.tolist() for c in cols] == [[0], [1, 2, 3], [4]]
    for j, c in enumerate(cols):
        if len(c) == 1:
            np.testing.assert_array_equal(features[:, c[0]], u[:, j])


def test_index_features_are_the_unit_coordinates() -> None:
    space = _feature_space("index")
    assert space.n_features == space.n_dims == 3
    u = space.sample_uniform(20, _rng())
    features = space.features(u)
    np.testing.assert_array_equal(features, u)
    features[0, 0] = -1.0  # a copy, not a view of u
    assert u[0, 0] != -1.0
    assert [c.tolist() for c in space.feature_columns()] == [[0], [1], [2]]


def test_continuous_mask_and_is_continuous() -> None:
    space = SearchSpace(
        {
            "a": FloatParam(0, 1),
            "b": FloatParam(1, 2, log=True),
            "c": FloatParam(0, 1, step=0.1),
            "d": IntParam(0, 3),
            "e": CategoricalParam(("x",)),
        }
    )
    assert space.continuous_mask.tolist() == [True, True, False, False, False]
    assert not space.is_continuous
    assert SearchSpace({"a": FloatParam(0, 1), "b": FloatParam(1, 9, log=True)}).is_continuous


# ------------------------------------------------------------------------- errors
def test_empty_space_raises() -> None:
    with pytest.raises(ValueError, match="empty"):
        SearchSpace({})


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: FloatParam(1.0, 0.0), id="float-low>high"),
        pytest.param(lambda: FloatParam(0.0, math.inf), id="float-inf"),
        pytest.param(lambda: FloatParam(math.nan, 1.0), id="float-nan"),
        pytest.param(lambda: FloatParam(0.0, 1.0, log=True), id="float-log-low-0"),
        pytest.param(lambda: FloatParam(-1.0, 1.0, log=True), id="float-log-low-negative"),
        pytest.param(lambda: FloatParam(0.0, 1.0, step=0.0), id="float-step-0"),
        pytest.param(lambda: FloatParam(0.0, 1.0, step=-0.1), id="float-step-negative"),
        pytest.param(lambda: FloatParam(1.0, 2.0, log=True, step=0.1), id="float-log-and-step"),
        pytest.param(lambda: IntParam(5, 1), id="int-low>high"),
        pytest.param(lambda: IntParam(0, 10, step=0), id="int-step-0"),
        pytest.param(lambda: IntParam(0, 10, log=True), id="int-log-low-0"),
        pytest.param(lambda: IntParam(-3, 10, log=True), id="int-log-low-negative"),
        pytest.param(lambda: IntParam(1, 10, log=True, step=2), id="int-log-and-step"),
        pytest.param(lambda: CategoricalParam(()), id="categorical-empty"),
    ],
)
def test_invalid_parameters_raise(make: Any) -> None:
    with pytest.raises(ValueError):
        make()


def test_invalid_categorical_encoding_raises() -> None:
    with pytest.raises(ValueError, match="categorical_encoding"):
        SearchSpace({"x": FloatParam(0, 1)}, categorical_encoding="ordinal")  # type: ignore[arg-type]


def test_unsupported_parameter_type_raises() -> None:
    with pytest.raises(TypeError):
        SearchSpace({"x": (0.0, 1.0)})  # type: ignore[dict-item]


@pytest.mark.parametrize("value", ["b", False, 0, "1", 3.5])
def test_encode_of_an_unknown_categorical_value_raises(value: Any) -> None:
    space = SearchSpace({"c": CategoricalParam(MIXED_CHOICES)})
    with pytest.raises(ValueError, match="not one of the choices"):
        space.encode([{"c": value}])


def test_encode_of_a_missing_parameter_raises_key_error() -> None:
    space = SearchSpace({"x": FloatParam(0, 1), "y": FloatParam(0, 1)})
    with pytest.raises(KeyError):
        space.encode([{"x": 0.5}])


def test_encode_of_no_configuration_has_the_right_shape() -> None:
    assert ALL_TYPES_SPACE.encode([]).shape == (0, ALL_TYPES_SPACE.n_dims)
