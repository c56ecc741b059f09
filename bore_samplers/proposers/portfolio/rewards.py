"""The reward algebra of No-PASt-BO and GP-Hedge.

Vasconcelos et al., *No-PASt-BO: Normalized Portfolio Allocation Strategy for Bayesian
Optimization* (ICTAI 2019), Algorithm 2, which generalises GP-Hedge (Hoffman, Brochu & de
Freitas, *Portfolio Allocation for Bayesian Optimization*, UAI 2011; the paper's Algorithm 1):
rewards ``G_j ← m G_j - μ(x_j)`` (eq. 8), normalised to ``[-1, 0]`` (eq. 9), and a softmax with
inverse temperature ``η`` over them (eq. 10).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RewardTable", "hedge_probabilities", "normalize_rewards", "update_rewards"]


def normalize_rewards(rewards: np.ndarray) -> np.ndarray | None:
    """``r_j = (G_j - max G) / (max G - min G)`` in ``[-1, 0]`` (the paper, eq. 9).

    Returns ``None`` when every reward is equal (the paper then sets equal probabilities).
    """
    rewards = np.asarray(rewards, dtype=float)
    high, low = float(np.max(rewards)), float(np.min(rewards))
    if not high > low:
        return None
    return (rewards - high) / (high - low)


def hedge_probabilities(rewards: np.ndarray, eta: float, normalize: bool = True) -> np.ndarray:
    """Probability of choosing each member: ``softmax(η r)`` (eq. 10) or ``softmax(η G)``.

    Parameters
    ----------
    rewards
        The rewards ``G`` of the members, shape ``(J,)``.
    eta
        Inverse temperature ``η >= 0`` (No-PASt-BO: 4; ``0`` is the uniform random portfolio).
    normalize
        Normalise ``G`` to ``[-1, 0]`` first (No-PASt-BO, eq. 9; equal rewards give uniform
        probabilities); ``False`` is GP-Hedge's ``p ∝ exp(η G)`` (Algorithm 1).
    """
    rewards = np.asarray(rewards, dtype=float)
    if normalize:
        normalized = normalize_rewards(rewards)
        if normalized is None:
            return np.full(len(rewards), 1.0 / len(rewards))
        rewards = normalized
    logits = eta * rewards
    weights = np.exp(logits - np.max(logits))  # shifted: exp never overflows
    return weights / weights.sum()


def update_rewards(rewards: np.ndarray, means: np.ndarray, memory: float) -> np.ndarray:
    """``G_j ← m G_j - μ(x_j)`` (the paper, eq. 8; GP-Hedge's update for ``m = 1``).

    ``means`` are the refitted GP's posterior means at the members' nominees; minimisation
    rewards a nominee predicted low.
    """
    return memory * np.asarray(rewards, dtype=float) - np.asarray(means, dtype=float)


@dataclass(frozen=True)
class RewardTable:
    """The rewards of a portfolio's members, rebuilt from the observations.

    Attributes
    ----------
    names
        Member names, in portfolio order.
    rewards
        ``G`` after the last event, shape ``(J,)`` (zeros before the first).
    trace
        ``G`` after each event, shape ``(n_events, J)``.
    event_rows
        Position (in the observations that fit the search space) of each event.
    """

    names: list[str]
    rewards: np.ndarray
    trace: np.ndarray
    event_rows: list[int]

    def probabilities(self, eta: float, normalize: bool = True) -> np.ndarray:
        """The probabilities the next proposal uses (:func:`hedge_probabilities`)."""
        return hedge_probabilities(self.rewards, eta, normalize)

    def as_dict(self) -> dict[str, float]:
        """Member name -> reward ``G``."""
        return {name: float(g) for name, g in zip(self.names, self.rewards, strict=True)}
