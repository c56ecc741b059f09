"""Shared test configuration."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Iterator

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests of the MLP and XGBoost variants need their extras; skip them visibly without.
    for extra in ("torch", "xgboost"):
        if importlib.util.find_spec(extra) is not None:
            continue
        skip = pytest.mark.skip(reason=f"{extra} is not installed (pip install '.[{extra}]')")
        for item in items:
            if extra in item.keywords:
                item.add_marker(skip)


# ------------------------------------------------------------------------------ Ray Tune
def _start_local_ray() -> None:
    import ray

    # A Tuner run in a docs code block leaves its implicit Ray running, which would make this
    # ray.init fail when the docs are collected before the tests.
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")


@pytest.fixture(scope="module")
def ray_session(request: pytest.FixtureRequest) -> Iterator[None]:
    """One quiet local Ray (2 CPUs) for the requesting test module."""
    pytest.importorskip("ray")
    import ray
    from ray import cloudpickle

    quiet = {"RAY_AIR_NEW_OUTPUT": "0", "TUNE_PRINT_ALL_TRIAL_ERRORS": "0"}
    saved = {k: os.environ.get(k) for k in quiet}
    os.environ.update(quiet)
    _start_local_ray()
    # Trainables defined in the module travel to the workers by value (tests/ is not on
    # their path).
    cloudpickle.register_pickle_by_value(request.module)
    yield
    cloudpickle.unregister_pickle_by_value(request.module)
    ray.shutdown()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def restart_ray_if_a_test_left_it_busy() -> Iterator[None]:
    """Give the next test an idle Ray: one that failed mid-run may leave actors holding CPUs.

    Without this, one failed Tuner run made every later run in the module wait for CPUs.
    """
    yield
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return
    for _ in range(60):
        if ray.available_resources().get("CPU", 0.0) >= 2.0:
            return
        time.sleep(0.5)
    ray.shutdown()
    _start_local_ray()
