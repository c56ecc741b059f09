"""Shared test configuration."""

from __future__ import annotations

import importlib.util

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests of the MLP variant need the torch extra; skip them visibly without it.
    if importlib.util.find_spec("torch") is not None:
        return
    skip = pytest.mark.skip(reason="torch is not installed (pip install 'bore-samplers[torch]')")
    for item in items:
        if "torch" in item.keywords:
            item.add_marker(skip)
