"""bore-samplers: model-based proposers for Optuna and Ray Tune.

The core (search spaces, observations, models, acquisition optimisers, proposers) imports
neither optuna nor ray. The Optuna samplers are loaded on first access, so
``from bore_samplers import BORESampler`` imports optuna, but never torch or ray.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.auto import AutoProposer
from bore_samplers.proposers.base import Proposer
from bore_samplers.proposers.binary import BinaryOutcomeProposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio.proposer import PortfolioProposer
from bore_samplers.proposers.preferential import PreferentialProposer
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace

if TYPE_CHECKING:
    from bore_samplers.integrations.auto import AutoSampler
    from bore_samplers.integrations.binary import BinaryOutcomeSampler
    from bore_samplers.integrations.optuna import (
        BORESampler,
        CMESSampler,
        PortfolioSampler,
        ProposerSampler,
    )

__version__ = "0.1.0"

# Installed, the root folder integrations/ becomes bore_samplers/integrations (setuptools
# package-dir mapping). Imported straight from a source checkout (``python -m ...`` in the repo
# root puts the checkout first on sys.path), it sits beside this package: look there too.
_here = Path(__file__).resolve().parent
if not (_here / "integrations").is_dir() and (_here.parent / "integrations").is_dir():
    __path__.append(str(_here.parent))  # noqa: F821 - __path__ is set for packages

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

_OPTUNA_SAMPLERS = {"BORESampler", "CMESSampler", "PortfolioSampler", "ProposerSampler"}
_BINARY_SAMPLERS = {"BinaryOutcomeSampler"}


def __getattr__(name: str) -> Any:
    # Lazy, so that the framework-free core can be used without importing optuna.
    if name in _OPTUNA_SAMPLERS:
        from bore_samplers.integrations import optuna as _optuna_integration

        return getattr(_optuna_integration, name)
    if name == "AutoSampler":
        from bore_samplers.integrations.auto import AutoSampler

        return AutoSampler
    if name in _BINARY_SAMPLERS:
        from bore_samplers.integrations import binary as _binary_integration

        return getattr(_binary_integration, name)
    if name == "PreferentialSampler":  # needs bore-samplers[preferential]; not in __all__
        from bore_samplers.integrations.preferential import PreferentialSampler

        return PreferentialSampler
    raise AttributeError(f"module 'bore_samplers' has no attribute {name!r}")
