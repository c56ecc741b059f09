"""The pending-point policy: which points proposals keep away from, and how far.

Pending (RUNNING) observations are configurations being evaluated by other workers. Every
proposal excludes their exact configurations (and the evaluated ones) while another candidate
exists; proposals whose score would otherwise pile onto a pending point (BORE's classifier,
entropy search, binary outcomes) also keep :func:`pending_spacing`'s distance from them. Every
proposer takes both from here, so the rule is the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bore_samplers.observations import History, TrialState

__all__ = ["keep_away_from_pending", "pending_spacing"]


def pending_spacing(history: History) -> tuple[np.ndarray, float]:
    """Pending points and the distance that proposals should keep from them.

    The radius is half the expected nearest-neighbour distance of as many uniform points as
    there are observations (unit cube, Euclidean): a scale-free notion of "too close to a
    point already being evaluated" that needs no pairwise distances over the history.

    Returns
    -------
    pending, radius
        The pending unit points ``(k, n_dims)`` (possibly none) and the radius.
    """
    pending = history.u[history.mask(TrialState.RUNNING)]
    n, d = max(len(history), 1), history.space.n_dims
    unit_ball = math.pi ** (d / 2) / math.gamma(d / 2 + 1)
    nearest = math.gamma(1 + 1 / d) / (n * unit_ball) ** (1 / d)
    return pending, 0.5 * min(nearest, math.sqrt(d))


def keep_away_from_pending(
    history: History, space_out: Sequence[bool]
) -> tuple[np.ndarray | None, list[float]]:
    """The points to keep away from, and the radius of each acquisition's proposal.

    What :func:`~bore_samplers.optimizers.maximize.maximize_over_space` takes as
    ``keep_away`` and ``radii``.

    Parameters
    ----------
    history
        The observations, pending ones included.
    space_out
        Per acquisition, whether its proposal keeps :func:`pending_spacing`'s distance from
        the pending points (otherwise its radius is 0).

    Returns
    -------
    keep_away, radii
        The pending points (``None`` when no acquisition spaces out) and one radius per
        acquisition.
    """
    if not any(space_out):
        return None, [0.0] * len(space_out)
    pending, radius = pending_spacing(history)
    return pending, [radius if spaced else 0.0 for spaced in space_out]
