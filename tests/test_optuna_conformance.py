"""Optuna's own reusable sampler test suites, run against every sampler of the package."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from optuna.samplers import BaseSampler
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)

from bore_samplers import BORESampler, CMESSampler

_CONFIGS = [
    # n_startup_trials=2 makes the suites' short studies reach the classifier.
    pytest.param(
        dict(classifier="xgboost", n_startup_trials=2), id="xgboost", marks=pytest.mark.xgboost
    ),
    pytest.param(dict(classifier="rf", n_startup_trials=2), id="rf"),
    pytest.param(dict(classifier="mlp", n_startup_trials=2), id="mlp", marks=pytest.mark.torch),
    pytest.param(dict(), id="defaults"),
]

# A small y* discretisation keeps the GP-based suites fast; the algorithm is the same.
_CMES_CONFIGS = [
    pytest.param(dict(acquisition=acq, n_startup_trials=2, n_discretization=64), id=acq)
    for acq in ("cmes", "cei", "ap")
]


class _BORESamplerFixture:
    @pytest.fixture(params=_CONFIGS)
    def sampler(self, request: pytest.FixtureRequest) -> Callable[[], BaseSampler]:
        return lambda: BORESampler(warn_independent_sampling=False, **request.param)


class TestBasic(_BORESamplerFixture, BasicSamplerTestCase):
    pass


class TestRelative(_BORESamplerFixture, RelativeSamplerTestCase):
    pass


# Multi-objective studies are supported (scalarised by the proposer).
class TestMultiObjective(_BORESamplerFixture, MultiObjectiveSamplerTestCase):
    pass


class _CMESSamplerFixture:
    @pytest.fixture(params=_CMES_CONFIGS)
    def sampler(self, request: pytest.FixtureRequest) -> Callable[[], BaseSampler]:
        return lambda: CMESSampler(warn_independent_sampling=False, **request.param)


class TestCMESBasic(_CMESSamplerFixture, BasicSamplerTestCase):
    pass


class TestCMESRelative(_CMESSamplerFixture, RelativeSamplerTestCase):
    pass


# Multi-objective studies are supported (scalarised by the proposer).
class TestCMESMultiObjective(_CMESSamplerFixture, MultiObjectiveSamplerTestCase):
    pass
