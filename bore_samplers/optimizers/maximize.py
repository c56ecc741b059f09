"""The one entry point through which the proposers maximise acquisitions over a space."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bore_samplers.acquisitions.base import Acquisition, OnUnitCube
from bore_samplers.optimizers.mixed_space import MixedSpaceOptimizer
from bore_samplers.space import SearchSpace

__all__ = ["maximize_over_space"]


def maximize_over_space(
    acquisitions: Sequence[Acquisition],
    space: SearchSpace,
    rng: np.random.Generator,
    *,
    exclude: np.ndarray | None = None,
    keep_away: np.ndarray | None = None,
    radii: Sequence[float] | None = None,
    lengthscales: np.ndarray | None = None,
    anchors: np.ndarray | None = None,
    n_candidates: int = 2048,
    n_local: int = 10,
    merge_radius: float = 0.0,
    max_iter: int = 200,
    tol: float = 1e-5,
    primary: int | None = None,
    warm_starts: np.ndarray | None = None,
    local_optima: list[np.ndarray] | None = None,
    reparametrize: Callable[[OnUnitCube], Any] | None = None,
) -> list[np.ndarray]:
    """The maximiser of each acquisition over the unit view of ``space``, one snapped point each.

    Every acquisition (a score of feature rows) is scored on snapped unit points
    (:class:`~bore_samplers.acquisitions.base.OnUnitCube`) and maximised by the mixed-space
    optimiser (:meth:`MixedSpaceOptimizer.maximize_each`): ``n_candidates`` Sobol points plus
    perturbations of the ``anchors``, then ``n_local`` local searches, all acquisitions side by
    side so that those over the same GPs share its posterior computations.

    Parameters
    ----------
    acquisitions
        The acquisitions over features to maximise.
    space
        The search space.
    rng
        Source of all randomness.
    exclude
        Unit points never returned while another candidate exists (evaluated and pending).
    keep_away, radii
        Points to keep away from, and each acquisition's distance from them (``None``: 0);
        :func:`~bore_samplers.optimizers.pending.keep_away_from_pending` gives both for
        pending points.
    lengthscales, anchors
        The model's per-coordinate lengthscales and the points worth searching around.
    n_candidates, n_local, merge_radius, max_iter, tol, primary
        :class:`MixedSpaceOptimizer`'s ``n_sobol``, ``n_local``, ``merge_radius``,
        ``max_iter`` and ``tol``, and the index of the acquisition whose maximiser will be
        evaluated (see :meth:`MixedSpaceOptimizer.maximize_each`).
    warm_starts, local_optima
        Earlier local optima to start from, and a list that receives this search's (see
        :meth:`MixedSpaceOptimizer.maximize_each`).
    reparametrize
        A map of each unit-cube score to the score the optimiser searches (e.g. one that reads
        its unit point through a map into a sub-box); ``None``: searched as it is.
    """
    optimizer = MixedSpaceOptimizer(
        n_sobol=n_candidates,
        n_local=n_local,
        max_iter=max_iter,
        tol=tol,
        merge_radius=merge_radius,
    )
    return optimizer.maximize_each(
        [
            OnUnitCube(acquisition, space)
            if reparametrize is None
            else reparametrize(OnUnitCube(acquisition, space))
            for acquisition in acquisitions
        ],
        space,
        rng,
        exclude=exclude,
        keep_away=keep_away,
        radii=radii,
        lengthscales=lengthscales,
        anchors=anchors,
        primary=primary,
        warm_starts=warm_starts,
        local_optima=local_optima,
    )
