"""Maximisers of an acquisition function over the unit view of a :class:`SearchSpace`.

Every optimiser scores only *snapped* points (:meth:`SearchSpace.snap`), so whatever it returns
decodes to a valid configuration: integer, stepped and categorical parameters are never
proposed off their grid. Candidates are scored in batches, never one call per point.

All optimisers avoid returning a configuration listed in ``exclude`` (already evaluated or
pending); only when every scored candidate is excluded (a tiny, exhausted space) do they return
the best one anyway.
"""

from __future__ import annotations

import abc
from typing import Protocol, runtime_checkable

import numpy as np
from scipy.optimize import minimize

from bore_samplers.space import SearchSpace

__all__ = [
    "Acquisition",
    "AcquisitionOptimizer",
    "DifferentialEvolution",
    "DifferentiableAcquisition",
    "FiniteDifferenceGradient",
    "MultiStartLBFGS",
    "RandomSearch",
    "select_distinct",
]


class Acquisition(Protocol):
    """Scores snapped unit points ``(n, n_dims)``; higher is better."""

    def __call__(self, u: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class DifferentiableAcquisition(Protocol):
    """An acquisition with a gradient with respect to the continuous unit coordinates."""

    def __call__(self, u: np.ndarray) -> np.ndarray: ...

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A smooth surrogate of the score (monotone in it) and its gradient, ``(n, n_dims)``."""
        ...


def _row_keys(u: np.ndarray) -> list[bytes]:
    # Snapped coordinates are reproducible floats; rounding absorbs last-bit noise.
    return [row.tobytes() for row in np.round(np.atleast_2d(u), 9) + 0.0]


def select_distinct(
    candidates: np.ndarray,
    scores: np.ndarray,
    exclude: np.ndarray | None,
    keep_away: np.ndarray | None = None,
    radius: float = 0.0,
) -> np.ndarray:
    """The best-scoring candidate that is not a row of ``exclude``.

    With ``keep_away`` (pending points) and a ``radius``, candidates closer than ``radius``
    (Euclidean, unit coordinates) to any of those points are passed over as well. If no
    candidate qualifies, the best one outside ``exclude`` is returned, and if every candidate is
    excluded (a tiny, exhausted space), the best one. Among equal scores the earliest candidate
    wins, so random candidate order breaks ties.
    """
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    allowed = np.ones(len(candidates), dtype=bool)
    if exclude is not None and len(exclude):
        excluded = set(_row_keys(exclude))
        allowed = np.array([key not in excluded for key in _row_keys(candidates)])
    spread = allowed
    if keep_away is not None and len(keep_away) and radius > 0:
        gaps = np.linalg.norm(candidates[:, None, :] - keep_away[None, :, :], axis=-1)
        spread = allowed & (gaps.min(axis=1) >= radius)
    for mask in (spread, allowed):
        if mask.any():
            return candidates[order[mask[order]][0]].copy()
    return candidates[order[0]].copy()


class AcquisitionOptimizer(abc.ABC):
    """Finds a snapped unit point that (approximately) maximises an acquisition."""

    @abc.abstractmethod
    def maximize(
        self,
        acquisition: Acquisition,
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radius: float = 0.0,
    ) -> np.ndarray:
        """Return one snapped unit point of shape ``(n_dims,)``.

        It is not a row of ``exclude`` and, where possible, at least ``radius`` away from every
        row of ``keep_away`` (see :func:`select_distinct`).
        """


class RandomSearch(AcquisitionOptimizer):
    """Score ``n_candidates`` uniform random configurations in one batch and keep the best.

    The BORE paper's choice for tree classifiers on discrete spaces (500 evaluations, App. G.1).
    """

    def __init__(self, n_candidates: int = 500) -> None:
        self.n_candidates = n_candidates

    def maximize(
        self,
        acquisition: Acquisition,
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radius: float = 0.0,
    ) -> np.ndarray:
        candidates = space.sample_uniform(self.n_candidates, rng)
        return select_distinct(candidates, acquisition(candidates), exclude, keep_away, radius)


class DifferentialEvolution(AcquisitionOptimizer):
    """DE/rand/1/bin (Storn & Price, 1997) on the unit cube with snapping.

    The BORE paper's choice for tree classifiers on continuous spaces (2000 evaluations). Each
    generation scores the whole population in one batch call.

    Parameters
    ----------
    max_evals
        Budget of acquisition evaluations, the initial population included.
    population_size
        Number of individuals.
    mutation, crossover
        Differential weight ``F`` and crossover probability ``CR``.
    """

    def __init__(
        self,
        max_evals: int = 2000,
        population_size: int = 50,
        mutation: float = 0.5,
        crossover: float = 0.7,
    ) -> None:
        self.max_evals = max_evals
        self.population_size = population_size
        self.mutation = mutation
        self.crossover = crossover

    def maximize(
        self,
        acquisition: Acquisition,
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radius: float = 0.0,
    ) -> np.ndarray:
        # The initial population counts against the budget too.
        size, d = max(min(self.population_size, self.max_evals), 4), space.n_dims
        population = space.sample_uniform(size, rng)
        fitness = acquisition(population)
        seen, seen_scores = [population], [fitness]
        n_evals = size
        while n_evals + size <= self.max_evals:
            # Three distinct partners per individual, all different from it.
            partners = np.array([rng.choice(size - 1, 3, replace=False) for _ in range(size)])
            partners += partners >= np.arange(size)[:, None]
            a, b, c = (population[partners[:, k]] for k in range(3))
            mutant = np.clip(a + self.mutation * (b - c), 0.0, 1.0)
            cross = rng.random((size, d)) < self.crossover
            cross[np.arange(size), rng.integers(d, size=size)] = True
            trial = space.snap(np.where(cross, mutant, population))
            trial_fitness = acquisition(trial)
            n_evals += size
            better = trial_fitness >= fitness
            population[better], fitness[better] = trial[better], trial_fitness[better]
            seen.append(trial)
            seen_scores.append(trial_fitness)
        return select_distinct(
            np.vstack(seen), np.concatenate(seen_scores), exclude, keep_away, radius
        )


class MultiStartLBFGS(AcquisitionOptimizer):
    """Random candidates, then L-BFGS-B from the best few on the continuous coordinates.

    The BORE-MLP optimiser (App. J.3: multi-started L-BFGS, three restarts). Integer, stepped
    and categorical coordinates stay at the values of their starting candidate, so they are
    chosen by the random candidates alone and are never relaxed off their grid. Without a
    gradient (or without continuous coordinates) this is :class:`RandomSearch`.

    Parameters
    ----------
    n_candidates
        Uniform random candidates scored first.
    n_restarts
        L-BFGS-B runs, started from the best distinct candidates.
    max_iter
        Iteration limit of each run.
    """

    def __init__(self, n_candidates: int = 500, n_restarts: int = 3, max_iter: int = 100) -> None:
        self.n_candidates = n_candidates
        self.n_restarts = n_restarts
        self.max_iter = max_iter

    def maximize(
        self,
        acquisition: Acquisition,
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radius: float = 0.0,
    ) -> np.ndarray:
        candidates = space.sample_uniform(self.n_candidates, rng)
        scores = acquisition(candidates)
        mask = space.continuous_mask
        if not mask.any() or not isinstance(acquisition, DifferentiableAcquisition):
            return select_distinct(candidates, scores, exclude, keep_away, radius)
        starts = np.argsort(-scores, kind="stable")[: self.n_restarts]
        refined = [self._refine(acquisition, candidates[i], mask) for i in starts]
        refined_u = space.snap(np.array(refined))
        pool = np.vstack([candidates, refined_u])
        pool_scores = np.concatenate([scores, acquisition(refined_u)])
        return select_distinct(pool, pool_scores, exclude, keep_away, radius)

    def _refine(
        self, acquisition: DifferentiableAcquisition, start: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        point = start.copy()

        def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
            point[mask] = x
            value, grad = acquisition.value_and_grad(point[None, :])
            return -float(value[0]), -grad[0, mask]

        result = minimize(
            negative,
            start[mask],
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * int(mask.sum()),
            options={"maxiter": self.max_iter},
        )
        point[mask] = np.clip(result.x, 0.0, 1.0)
        return point


class FiniteDifferenceGradient:
    """Gives a batch acquisition a forward-difference gradient on the continuous coordinates.

    All ``1 + n_continuous`` evaluations of a point are scored in one batch call, so acquisitions
    whose closed form has no analytic gradient (such as cMES) can still be refined by
    :class:`MultiStartLBFGS`. Steps that would leave the unit cube are taken backwards.
    """

    def __init__(self, acquisition: Acquisition, space: SearchSpace, step: float = 1e-5) -> None:
        self.acquisition = acquisition
        self.step = step
        self._continuous = np.flatnonzero(space.continuous_mask)

    def __call__(self, u: np.ndarray) -> np.ndarray:
        return self.acquisition(u)

    def value_and_grad(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        u = np.atleast_2d(u)
        n, k = len(u), len(self._continuous)
        steps = np.where(u[:, self._continuous] + self.step <= 1.0, self.step, -self.step)
        shifted = np.repeat(u[:, None, :], k, axis=1)
        shifted[:, np.arange(k), self._continuous] += steps
        scores = self.acquisition(np.vstack([u, shifted.reshape(n * k, -1)]))
        values, moved = scores[:n], scores[n:].reshape(n, k)
        grad = np.zeros_like(u)
        grad[:, self._continuous] = (moved - values[:, None]) / steps
        return values, grad
