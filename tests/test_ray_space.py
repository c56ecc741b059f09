"""Tune search spaces -> core search spaces, without starting Ray.

Every supported domain must translate to a core parameter whose values are exactly the values
Tune's own sampler draws (``ray/tune/search/sample.py``): the proposers never suggest a value
the domain could not have produced, and can reach every value it can.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ray")

from ray import tune  # noqa: E402
from ray.tune.search.sample import Categorical  # noqa: E402

from bore_samplers.integrations.ray import TuneParam, search_space_from_tune  # noqa: E402
from bore_samplers.space import CategoricalParam, FloatParam, IntParam

# domain, expected core parameter (the conversion table of search_space_from_tune).
TABLE = [
    (tune.uniform(-1, 2), FloatParam(-1.0, math.nextafter(2.0, -math.inf))),
    (tune.loguniform(1e-3, 1), FloatParam(1e-3, math.nextafter(1.0, -math.inf), log=True)),
    (tune.quniform(-1, 1, 0.1), FloatParam(-1.0, 1.0, step=0.1)),
    (tune.quniform(0, 10, 2.5), FloatParam(0.0, 10.0, step=2.5)),
    (tune.qloguniform(0.1, 10, 0.1), IntParam(1, 100, log=True)),
    (tune.randint(0, 5), IntParam(0, 4)),
    (tune.randint(-3, -1), IntParam(-3, -2)),
    (tune.lograndint(1, 20), IntParam(1, 19, log=True)),
    (tune.qrandint(0, 5, 1), IntParam(0, 4)),
    (tune.qrandint(1, 10, 3), IntParam(3, 9, step=3)),
    (tune.qrandint(0, 10, 5), IntParam(0, 10, step=5)),
    (tune.qlograndint(1, 9, 1), IntParam(1, 8, log=True)),
    (tune.qlograndint(2, 40, 4), IntParam(1, 10, log=True)),
    (tune.choice(["a", "b", "c"]), CategoricalParam((0, 1, 2))),
]


@pytest.mark.parametrize(("domain", "expected"), TABLE, ids=lambda x: str(x))
def test_conversion_table(domain: object, expected: object) -> None:
    converted = search_space_from_tune({"p": domain})
    assert converted.space.params == {"p": expected}


def _core_values(domain: object, n: int = 4001) -> list:
    """Every value the proposers can produce for ``domain`` (decoded on a fine unit grid)."""
    converted = search_space_from_tune({"p": domain})
    param: TuneParam = converted.params["p"]
    unit = np.linspace(0, 1, n)[:, None]
    return [param.to_tune(c["p"]) for c in converted.space.decode(unit)]


@pytest.mark.parametrize(
    "domain",
    [
        tune.quniform(-1, 1, 0.1),
        tune.quniform(0.5, 3.5, 0.5),
        tune.qloguniform(0.1, 10, 0.1),
        tune.qloguniform(1, 64, 1),
        tune.randint(0, 5),
        tune.randint(-3, 4),
        tune.lograndint(1, 20),
        tune.qrandint(0, 5, 1),
        tune.qrandint(1, 10, 3),
        tune.qrandint(-7, 7, 2),
        tune.qlograndint(1, 9, 1),
        tune.qlograndint(2, 40, 4),
        tune.qlograndint(3, 50, 5),
    ],
    ids=str,
)
def test_discrete_values_are_exactly_tunes(domain: object) -> None:
    ours = _core_values(domain)
    tunes = domain.sample(size=20000, random_state=0)  # type: ignore[attr-defined]
    assert set(ours) == {x.item() if hasattr(x, "item") else x for x in tunes}
    # Same Python types as Tune's own draws (int for integer domains, float for floats).
    assert {type(v) for v in ours} == {type(domain.sample(random_state=1))}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "domain", [tune.uniform(-1, 2), tune.loguniform(1e-3, 1), tune.uniform(0, 1e-9)], ids=str
)
def test_continuous_values_stay_inside_tunes_half_open_range(domain: object) -> None:
    values = _core_values(domain)
    assert min(values) == domain.lower  # type: ignore[attr-defined]
    assert max(values) < domain.upper  # type: ignore[attr-defined]
    assert all(isinstance(v, float) for v in values)


def test_choice_round_trips_any_object() -> None:
    array = np.array([1, 2])
    categories = [None, (1, 2), "a", 1, True, 1.0, array, {"nested": [1]}]
    converted = search_space_from_tune({"c": tune.choice(categories)})
    param = converted.params["c"]
    for i, category in enumerate(categories):
        assert param.to_tune(i) is category
        assert param.to_core(category, "c") == i
    # Type-aware: True is not the category 1, 1.0 is not 1.
    assert param.to_core(True, "c") == 4 and param.to_core(1, "c") == 3
    assert param.to_core(1.0, "c") == 5
    assert param.to_core((1, 2), "c") == 1  # an equal tuple, not the same object
    with pytest.raises(ValueError, match="not one of the choices"):
        param.to_core("z", "c")


def test_nested_dicts_flatten_and_constants_pass_through() -> None:
    config = {
        "lr": tune.loguniform(1e-4, 1e-1),
        "model": {"width": tune.randint(8, 64), "act": tune.choice(["relu", None]), "depth": 2},
        "data": {"path": "/tmp/x", "splits": [0.8, 0.2], "empty": {}},
        "seed": 7,
    }
    converted = search_space_from_tune(config)
    assert converted.space.names == ["lr", "model/width", "model/act"]
    params = {"lr": 0.01, "model/width": 10, "model/act": 1}
    assert converted.to_config(params) == {
        "lr": 0.01,
        "model": {"width": 10, "act": None, "depth": 2},
        "data": {"path": "/tmp/x", "splits": [0.8, 0.2], "empty": {}},
        "seed": 7,
    }
    # A user point, nested or with flat "a/b" keys, is read back in Tune values.
    nested = {"lr": 0.02, "model": {"width": 12, "act": None}}
    flat = {"lr": 0.02, "model/width": 12, "model/act": None, "seed": 7}
    assert converted.read_point(nested) == converted.read_point(flat)
    assert converted.read_point({"lr": 0.1}) == {"lr": 0.1}  # partial points are allowed
    with pytest.raises(ValueError, match="Unknown parameter"):
        converted.read_point({"lr": 0.1, "model": {"widht": 3}})


def test_a_choice_of_dicts_is_a_value_not_a_nesting() -> None:
    converted = search_space_from_tune({"opt": tune.choice([{"name": "sgd"}, {"name": "adam"}])})
    assert converted.read_point({"opt": {"name": "adam"}}) == {"opt": {"name": "adam"}}
    assert converted.params["opt"].to_core({"name": "adam"}, "opt") == 1


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"a": {"g": tune.grid_search([1, 2])}}, "a/g"),
        ({"s": tune.sample_from(lambda _: 1)}, "s"),
        ({"n": {"r": tune.randn(0, 1)}}, "n/r"),
        ({"q": tune.qrandn(0, 1, 0.5)}, "q"),
        ({"e": {"eval": "1 + 1"}}, "e"),
        ({"lst": [tune.uniform(0, 1), 3]}, "lst"),
        ({"g": Categorical([1, 2]).grid()}, "g"),
        ({"x": tune.uniform(0, 1), "empty": tune.randint(3, 3)}, "empty"),
        ({"x": tune.qrandint(1, 2, 5)}, "x"),
    ],
    ids=["grid_search", "sample_from", "randn", "qrandn", "eval", "list", "grid", "empty", "q"],
)
def test_unsupported_domains_are_named(config: dict, key: str) -> None:
    with pytest.raises(ValueError, match=f"'{key}'"):
        search_space_from_tune(config)


def test_a_space_without_domains_is_an_error() -> None:
    with pytest.raises(ValueError, match="no Tune domain"):
        search_space_from_tune({"a": 1, "b": {"c": 2}})


def test_names_that_collide_after_flattening_are_an_error() -> None:
    with pytest.raises(ValueError, match="same name 'a/b'"):
        search_space_from_tune({"a": {"b": tune.uniform(0, 1)}, "a/b": tune.uniform(0, 1)})
