"""Maximisers of an acquisition function over the unit view of a :class:`SearchSpace`.

Every optimiser scores only *snapped* points (:meth:`SearchSpace.snap`), so whatever it returns
decodes to a valid configuration: integer, stepped and categorical parameters are never
proposed off their grid. Candidates are scored in batches, never one call per point.

All optimisers avoid returning a configuration listed in ``exclude`` (already evaluated or
pending); only when every scored candidate is excluded (a tiny, exhausted space) do they return
the best one anyway.

:class:`MixedSpaceOptimizer` is the most thorough: global candidates plus local ones around
given anchors, then batched local searches that alternate box-constrained L-BFGS on the
continuous coordinates with exhaustive or neighbourhood searches over each discrete one.
The proposers reach it through one entry point, :func:`maximize_over_space`, and take the
pending-point policy (what to keep away from, and how far) from :mod:`.pending`.
"""

from bore_samplers.optimizers.base import (
    AcquisitionOptimizer,
    DifferentiableUnitCubeScore,
    UnitCubeScore,
    finite_scores,
)
from bore_samplers.optimizers.candidates import (
    DifferentialEvolution,
    FiniteDifferenceGradient,
    MultiStartLBFGS,
    ParzenSearch,
    RandomSearch,
)
from bore_samplers.optimizers.distinct import select_distinct
from bore_samplers.optimizers.maximize import maximize_over_space
from bore_samplers.optimizers.mixed_space import MixedSpaceOptimizer
from bore_samplers.optimizers.pending import keep_away_from_pending, pending_spacing

__all__ = [
    "UnitCubeScore",
    "AcquisitionOptimizer",
    "DifferentialEvolution",
    "DifferentiableUnitCubeScore",
    "FiniteDifferenceGradient",
    "MixedSpaceOptimizer",
    "MultiStartLBFGS",
    "ParzenSearch",
    "RandomSearch",
    "finite_scores",
    "keep_away_from_pending",
    "maximize_over_space",
    "pending_spacing",
    "select_distinct",
]
