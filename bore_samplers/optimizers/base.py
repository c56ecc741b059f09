"""The contracts of the optimisers: what they maximise, how scores are read, and their base.

An optimiser maximises a batch score of snapped unit points
(:class:`~bore_samplers.acquisitions.base.UnitCubeScore`); a score with a gradient
(:class:`~bore_samplers.acquisitions.base.DifferentiableUnitCubeScore`) can also be refined
by L-BFGS-B. Both protocols are defined in the acquisitions layer and re-exported here.
"""

from __future__ import annotations

import abc

import numpy as np

from bore_samplers.acquisitions.base import DifferentiableUnitCubeScore, UnitCubeScore
from bore_samplers.space import SearchSpace

__all__ = [
    "AcquisitionOptimizer",
    "DifferentiableUnitCubeScore",
    "UnitCubeScore",
    "finite_scores",
]


def finite_scores(scores: np.ndarray) -> np.ndarray:
    """Scores of a :class:`UnitCubeScore` as a flat float array, NaN replaced by ``-inf``."""
    # NaN would poison argmax and comparisons; it ranks below every real score instead.
    values = np.asarray(scores, dtype=float).reshape(-1)
    return np.where(np.isnan(values), -np.inf, values)


class AcquisitionOptimizer(abc.ABC):
    """Finds a snapped unit point that (approximately) maximises an acquisition."""

    @abc.abstractmethod
    def maximize(
        self,
        acquisition: UnitCubeScore,
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radius: float = 0.0,
        *,
        lengthscales: np.ndarray | None = None,
        anchors: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return one snapped unit point of shape ``(n_dims,)``.

        It is not a row of ``exclude`` and, where possible, at least ``radius`` away from every
        row of ``keep_away`` (see :func:`~bore_samplers.optimizers.distinct.select_distinct`).

        Parameters
        ----------
        acquisition
            The batch score to maximise.
        space
            The search space whose unit view is searched.
        rng
            Source of all randomness.
        exclude
            Unit points that must not be returned while an alternative exists (evaluated or
            pending configurations).
        keep_away, radius
            Points to stay at least ``radius`` away from where possible.
        lengthscales
            Optional per-coordinate lengthscales of the model, shape ``(n_dims,)``, in unit
            coordinates: a hint about how fast the acquisition varies along each coordinate.
            Optimisers that cannot use it ignore it.
        anchors
            Optional unit points, shape ``(k, n_dims)``, worth searching around (e.g. the best
            observed configurations). Optimisers that cannot use them ignore them.
        """
