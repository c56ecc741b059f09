"""One proposer per algorithm, each with a framework-free ``propose(space, observations)``."""

from bore_samplers.proposers.base import Proposer
from bore_samplers.proposers.bore import BOREProposer

__all__ = ["BOREProposer", "Proposer"]
