"""No-PASt-BO and GP-Hedge: a hedged portfolio of acquisition functions, as a proposer.

:mod:`~bore_samplers.proposers.portfolio.proposer` has the proposer,
:mod:`~bore_samplers.proposers.portfolio.members` the acquisitions it hedges over, and
:mod:`~bore_samplers.proposers.portfolio.rewards` the reward algebra of the papers.
"""

from bore_samplers.proposers.portfolio.members import (
    BORENominee,
    ExpectedImprovement,
    ExpectedImprovementPerSecond,
    LowerConfidenceBoundMember,
    MaxValueEntropySearch,
    NominatingMember,
    PortfolioMember,
    ProbabilityOfImprovement,
    ScoringMember,
)
from bore_samplers.proposers.portfolio.proposer import (
    DEFAULT_PORTFOLIO,
    PortfolioProposer,
)
from bore_samplers.proposers.portfolio.rewards import RewardTable

__all__ = [
    "DEFAULT_PORTFOLIO",
    "BORENominee",
    "ExpectedImprovement",
    "ExpectedImprovementPerSecond",
    "LowerConfidenceBoundMember",
    "MaxValueEntropySearch",
    "NominatingMember",
    "PortfolioMember",
    "PortfolioProposer",
    "ProbabilityOfImprovement",
    "RewardTable",
    "ScoringMember",
]
