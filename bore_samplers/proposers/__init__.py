"""One proposer per algorithm, each with a framework-free ``propose(space, observations)``."""

from bore_samplers.proposers.base import ModelFallbackWarning, Proposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio import PortfolioProposer

__all__ = [
    "BOREProposer",
    "CMESProposer",
    "ModelFallbackWarning",
    "PortfolioProposer",
    "Proposer",
]
