"""bore-samplers: model-based proposers for Optuna and Ray Tune.

The core (search spaces, observations, models, acquisition optimisers, proposers) imports
neither optuna nor ray. Every name below is loaded on first access (PEP 562), so that
``import bore_samplers`` costs only the standard library: the proposers pull in scipy, whose
``scipy.stats`` alone takes most of a second to import. ``from bore_samplers import
BORESampler`` imports optuna (and the proposers), but never torch or ray.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bore_samplers.integrations.auto import AutoSampler
    from bore_samplers.integrations.binary import BinaryOutcomeSampler
    from bore_samplers.integrations.optuna import (
        BORESampler,
        CMESSampler,
        PortfolioSampler,
        ProposerSampler,
    )
    from bore_samplers.observations import Observation, TrialState
    from bore_samplers.proposers.auto import AutoProposer
    from bore_samplers.proposers.base import Proposer
    from bore_samplers.proposers.binary import BinaryOutcomeProposer
    from bore_samplers.proposers.bore import BOREProposer
    from bore_samplers.proposers.cmes import CMESProposer
    from bore_samplers.proposers.portfolio.proposer import PortfolioProposer
    from bore_samplers.proposers.preferential import PreferentialProposer
    from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace

__version__ = "0.1.0"

__all__ = [
    "AutoProposer",
    "AutoSampler",
    "BOREProposer",
    "BORESampler",
    "BinaryOutcomeProposer",
    "BinaryOutcomeSampler",
    "CMESProposer",
    "CMESSampler",
    "CategoricalParam",
    "FloatParam",
    "IntParam",
    "Observation",
    "PortfolioProposer",
    "PortfolioSampler",
    "PreferentialProposer",
    "Proposer",
    "ProposerSampler",
    "SearchSpace",
    "TrialState",
]

#: Where each public name lives, imported on first access.
_LOCATIONS = {
    "AutoProposer": "bore_samplers.proposers.auto",
    "AutoSampler": "bore_samplers.integrations.auto",
    "BOREProposer": "bore_samplers.proposers.bore",
    "BORESampler": "bore_samplers.integrations.optuna",
    "BinaryOutcomeProposer": "bore_samplers.proposers.binary",
    "BinaryOutcomeSampler": "bore_samplers.integrations.binary",
    "CMESProposer": "bore_samplers.proposers.cmes",
    "CMESSampler": "bore_samplers.integrations.optuna",
    "CategoricalParam": "bore_samplers.space",
    "FloatParam": "bore_samplers.space",
    "IntParam": "bore_samplers.space",
    "Observation": "bore_samplers.observations",
    "PortfolioProposer": "bore_samplers.proposers.portfolio.proposer",
    "PortfolioSampler": "bore_samplers.integrations.optuna",
    "PreferentialProposer": "bore_samplers.proposers.preferential",
    "Proposer": "bore_samplers.proposers.base",
    "ProposerSampler": "bore_samplers.integrations.optuna",
    "SearchSpace": "bore_samplers.space",
    "TrialState": "bore_samplers.observations",
    # Needs optuna-dashboard (the preferential extra); not in __all__.
    "PreferentialSampler": "bore_samplers.integrations.preferential",
}

#: Subpackages and modules reachable as attributes before they are imported explicitly, as they
#: were when this module imported them eagerly.
_SUBMODULES = {"acquisitions", "models", "observations", "optimizers", "proposers", "space"}


def __getattr__(name: str) -> Any:
    # Lazy, so that importing the package is cheap and the framework-free core can be used
    # without importing optuna; the value is cached in the module's namespace.
    if name in _LOCATIONS:
        value = getattr(importlib.import_module(_LOCATIONS[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'bore_samplers' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})
