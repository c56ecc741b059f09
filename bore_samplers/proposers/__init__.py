"""One proposer per algorithm, each with a framework-free ``propose(space, observations)``."""

from bore_samplers.proposers.auto import AutoProposer
from bore_samplers.proposers.base import (
    PROPOSAL_SOURCES,
    Fallback,
    ModelFallbackWarning,
    Proposal,
    Proposer,
    safe_propose,
)
from bore_samplers.proposers.binary import BinaryOutcomeProposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio.proposer import PortfolioProposer
from bore_samplers.proposers.preferential import PreferentialProposal, PreferentialProposer

__all__ = [
    "AutoProposer",
    "PROPOSAL_SOURCES",
    "BOREProposer",
    "BinaryOutcomeProposer",
    "CMESProposer",
    "Fallback",
    "ModelFallbackWarning",
    "PortfolioProposer",
    "Proposal",
    "PreferentialProposal",
    "PreferentialProposer",
    "Proposer",
    "safe_propose",
]
