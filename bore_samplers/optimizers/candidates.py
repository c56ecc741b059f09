"""BORE's candidate searches: score a batch of candidates, optionally refine the best few.

Uniform random candidates (:class:`RandomSearch`), differential evolution
(:class:`DifferentialEvolution`), draws from TPE's Parzen estimator of the good points
(:class:`ParzenSearch`) and those candidates refined by L-BFGS-B (:class:`MultiStartLBFGS`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

from bore_samplers.optimizers.base import (
    AcquisitionOptimizer,
    DifferentiableUnitCubeScore,
    UnitCubeScore,
    finite_scores,
)
from bore_samplers.optimizers.distinct import (
    _best_first,
    _row_keys,
    _select_in_order,
    select_distinct,
)
from bore_samplers.space import SearchSpace

__all__ = [
    "DifferentialEvolution",
    "FiniteDifferenceGradient",
    "MultiStartLBFGS",
    "ParzenSearch",
    "RandomSearch",
]


class RandomSearch(AcquisitionOptimizer):
    """Score ``n_candidates`` uniform random configurations in one batch and keep the best.

    The BORE paper's choice for tree classifiers on discrete spaces (500 evaluations, App. G.1).
    ``lengthscales`` and ``anchors`` are ignored.
    """

    def __init__(self, n_candidates: int = 500) -> None:
        self.n_candidates = n_candidates

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
        candidates = space.sample_uniform(self.n_candidates, rng)
        return select_distinct(candidates, acquisition(candidates), exclude, keep_away, radius)


class DifferentialEvolution(AcquisitionOptimizer):
    """DE/rand/1/bin (Storn & Price, 1997) on the unit cube with snapping.

    The BORE paper's choice for tree classifiers on continuous spaces (2000 evaluations). Each
    generation scores the whole population in one batch call. ``lengthscales`` and ``anchors``
    are ignored.

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


class ParzenSearch(AcquisitionOptimizer):
    """Candidates drawn from a Parzen estimator of the anchors, as TPE draws them.

    A classifier's ``π(x)`` is only trustworthy where it has data: far from the observations,
    trees extend a leaf's value over a whole box and networks extrapolate, so the maximiser of
    ``π`` over uniform candidates lies in an arbitrary corner of a spuriously good region. TPE
    (Bergstra et al., *Algorithms for Hyper-Parameter Optimization*, NeurIPS 2011) instead
    *draws* its candidates from the density of the good observations and only ranks them by
    the density ratio. This optimiser does the same for any acquisition:

    1. ``n_candidates`` points from the Parzen estimator of the anchors (the good
       observations), built as Optuna's multivariate TPE builds ``l(x)``: per-coordinate
       truncated normals as wide as the gap to the neighbouring anchors, clipped to
       ``[1 / min(100, k + 2), 1]`` for ``k`` anchors, categorical kernels that keep the
       anchor's choice, and a broad prior kernel that weighs as much as one anchor (which
       keeps exploring); all snapped to the space. Each is drawn from one kernel, except a
       share ``per_coordinate`` (default 0) drawn as Optuna's default (univariate) TPE draws
       its candidates, each coordinate from a kernel chosen on its own;
    2. the best candidate by score; among equal scores (a tree's piecewise-constant ``π``)
       a random one, never the first drawn.

    Whole-kernel candidates stay near one good point and keep the interactions between its
    coordinates; per-coordinate candidates recombine the coordinates of different good points,
    which can reach the optimum of a separable objective sooner. Half of each did not do
    better than whole kernels alone on problems it was not chosen on (README, *Benchmarks*),
    so the default keeps whole kernels. A small ``n_candidates``
    (TPE's default is 24) keeps the proposal a draw from where the good points are, ranked by
    the model; a large one approaches the model's argmax over that region. Without anchors it
    is :class:`RandomSearch`. ``lengthscales`` are ignored.

    Parameters
    ----------
    n_candidates
        Candidates drawn and scored per proposal.
    per_coordinate
        Share in ``[0, 1]`` of the candidates drawn coordinate by coordinate (rounded to a
        whole number of candidates); 0 draws every candidate from one kernel, as Optuna's
        multivariate TPE does, 1 every coordinate on its own, as its univariate TPE does.
    """

    def __init__(self, n_candidates: int = 24, per_coordinate: float = 0.0) -> None:
        self.n_candidates = n_candidates
        self.per_coordinate = per_coordinate

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
        if anchors is None or len(anchors) == 0:
            candidates = space.sample_uniform(self.n_candidates, rng)
            return select_distinct(candidates, acquisition(candidates), exclude, keep_away, radius)
        if not 0.0 <= self.per_coordinate <= 1.0:
            raise ValueError(f"per_coordinate must lie in [0, 1], got {self.per_coordinate}.")
        anchors = space.snap(np.atleast_2d(anchors))
        parzen = _Parzen(space, anchors)
        n_per_coordinate = round(self.per_coordinate * self.n_candidates)
        candidates = np.vstack(
            [
                parzen.sample(self.n_candidates - n_per_coordinate, rng),
                parzen.sample_per_coordinate(n_per_coordinate, rng),
            ]
        )
        order = _best_first(finite_scores(acquisition(candidates)), rng)
        return _select_in_order(candidates, order, exclude, keep_away, radius)


class _Parzen:
    """TPE's Parzen estimator l(x) over snapped anchor points in the unit view of a space.

    As Optuna's multivariate TPE builds it: one kernel per anchor, a product over
    coordinates; a numerical coordinate's kernel is a normal truncated to the unit interval
    whose width is the larger distance to the neighbouring anchors (the interval's ends count
    as neighbours), clipped to ``[1 / min(100, k + 2), 1]`` (the "magic clip"); a categorical
    kernel keeps the anchor's choice or, with weight ``1 / (k + 1)`` spread over the choices,
    takes any; and a prior kernel (uniform on categoricals, the normal of width 1 centred on
    the interval elsewhere) weighs as much as one anchor.
    """

    def __init__(self, space: SearchSpace, anchors: np.ndarray) -> None:
        self.space = space
        k, d = anchors.shape
        dims = space.dimensions
        self.categorical = np.array([dim.is_categorical for dim in dims])
        self.n_choices = np.array([dim.n_bins if dim.is_categorical else 1 for dim in dims])
        order = np.argsort(anchors, axis=0, kind="stable")
        ordered = np.take_along_axis(anchors, order, axis=0)
        padded = np.vstack([np.zeros((1, d)), ordered, np.ones((1, d))])
        gaps = np.diff(padded, axis=0)
        widths = np.maximum(gaps[:-1], gaps[1:])
        if k >= 2:
            # The outermost anchors look inwards only, as TPE does without consider_endpoints.
            widths[0], widths[-1] = gaps[1], gaps[-2]
        sigma = np.empty_like(widths)
        np.put_along_axis(sigma, order, widths, axis=0)
        sigma = np.clip(sigma, 1.0 / min(100, k + 2), 1.0)
        self.centres = np.vstack([anchors, np.full((1, d), 0.5)])
        self.sigma = np.vstack([sigma, np.ones((1, d))])
        #: Index of the broad prior kernel, after the anchors' ``k``.
        self.prior_kernel = k
        self.flip_weight = 1.0 / (k + 1)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` snapped points drawn from the mixture."""
        return self.sample_with_kernels(n, rng)[0]

    def sample_per_coordinate(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` snapped points whose coordinates each come from a kernel drawn on its own.

        The product of the mixture's marginals, as Optuna's default (univariate) TPE draws
        its candidates: the coordinates of different anchors recombine.
        """
        kernel = rng.integers(0, len(self.centres), (n, self.centres.shape[1]))
        return self._draw(kernel, rng)

    def sample_with_kernels(
        self, n: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """``n`` snapped points drawn from the mixture, and the index of each one's kernel."""
        kernel = rng.integers(0, len(self.centres), n)
        d = self.centres.shape[1]
        return self._draw(np.repeat(kernel[:, None], d, axis=1), rng), kernel

    def _draw(self, kernel: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Snapped points, coordinate ``j`` of point ``i`` drawn from kernel ``kernel[i, j]``."""
        columns = np.arange(kernel.shape[1])[None, :]
        centre, sigma = self.centres[kernel, columns], self.sigma[kernel, columns]
        # Inverse-CDF draws of the normal truncated to [0, 1].
        lower, upper = ndtr(-centre / sigma), ndtr((1.0 - centre) / sigma)
        draw = lower + rng.random(centre.shape) * (upper - lower)
        points = np.clip(centre + sigma * ndtri(np.clip(draw, 1e-300, 1.0 - 1e-16)), 0.0, 1.0)
        prior = kernel == self.prior_kernel
        keep = 1.0 / (1.0 + self.n_choices * self.flip_weight)
        flip = self.categorical & ((rng.random(centre.shape) > keep) | prior)
        chosen = np.where(flip, rng.random(centre.shape), centre)
        points = np.where(self.categorical, chosen, points)
        return self.space.snap(points)


class MultiStartLBFGS(AcquisitionOptimizer):
    """Candidates, then box-constrained L-BFGS from the best few on the continuous coordinates.

    The BORE paper's optimiser for BORE-MLP (Tiao et al., *BORE: Bayesian Optimization by
    Density-Ratio Estimation*, ICML 2021, App. J.3: multi-started L-BFGS, three restarts),
    here ``acquisition_optimizer="lbfgs"``; BORE's default, also for the MLP, is
    :class:`ParzenSearch`, which ranked better on the README's BORE benchmark. Integer, stepped
    and categorical coordinates stay at the values of their starting candidate, so they are
    chosen by the candidates alone and are never relaxed off their grid. Without a gradient
    (or without continuous coordinates) only the candidates are scored.

    *Without anchors*, the candidates are uniform over the unit cube and L-BFGS-B maximises the
    acquisition over the whole cube: a global maximiser of a trustworthy acquisition.

    *With anchors* (BORE passes its good observations), the search stays where the classifier
    has data. An ELU or ReLU network is asymptotically linear, so away from its observations
    its logit keeps growing in some direction, and a search over the whole cube follows that
    extrapolation to the faces of the cube (measured on BORE-MLP: 30 % to 75 % of the proposed
    coordinates on a bound in 6 to 20 dimensions, on problems whose optimum is interior);
    trust regions around the anchors only moved the proposals to the regions' vertices. Here

    1. the candidates are drawn from the anchors' Parzen estimator, as :class:`ParzenSearch`
       draws them (TPE's kernels; 24 by default), and scored;
    2. L-BFGS-B starts from each of the ``n_restarts`` best draws of the anchors' kernels and
       maximises the acquisition plus the log density ``log K(x)`` of a normal centred on the
       start ``s`` with the bandwidths ``σ`` of the kernel it was drawn from,
       ``a(x) - Σ_j (x_j - s_j)² / (2 σ_j²)`` over the continuous coordinates. For BORE-MLP
       ``a = log π`` (:class:`~bore_samplers.acquisitions.density_ratio.ClassProbability`), so
       by Bayes' rule the maximiser is the mode of the good class's density within the kernel,
       ``∝ π(x) K(x)``: it moves from the start up ``π`` by about ``σ² ∇ log π``, a step
       that shrinks as the good points cluster and vanishes where the classifier is already
       sure, so it does not follow the network's extrapolation to a face. A draw of the broad
       prior kernel (TPE's exploration) is scored but not refined;
    3. the best point by acquisition among the candidates and the refined points is returned.

    An optimum on the boundary is still proposed once good points approach it: the kernels
    then reach the face, and the tilt pulls towards it.

    Parameters
    ----------
    n_candidates
        Candidates scored first; ``None``: 24 Parzen candidates with anchors (TPE's number),
        500 uniform ones without.
    n_restarts
        L-BFGS-B runs, started from the best distinct candidates.
    max_iter
        Iteration limit of each run.
    """

    #: Candidates without and with anchors when ``n_candidates`` is ``None``.
    default_candidates: tuple[int, int] = (500, 24)

    def __init__(
        self, n_candidates: int | None = None, n_restarts: int = 3, max_iter: int = 100
    ) -> None:
        self.n_candidates = n_candidates
        self.n_restarts = n_restarts
        self.max_iter = max_iter

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
        anchored = anchors is not None and len(anchors) > 0
        n = self.n_candidates
        if n is None:
            n = self.default_candidates[anchored]
        if anchored:
            parzen = _Parzen(space, space.snap(np.atleast_2d(anchors)))
            candidates, kernel = parzen.sample_with_kernels(n, rng)
            scales = parzen.sigma[kernel]
            # A draw of the broad prior kernel explores; refined, it would follow the
            # extrapolation to a face of the cube, so only the anchors' draws are refined.
            refinable = kernel != parzen.prior_kernel
        else:
            candidates = space.sample_uniform(n, rng)
            scales = np.full_like(candidates, np.inf)
            refinable = np.ones(n, dtype=bool)
        scores = finite_scores(acquisition(candidates))
        mask = space.continuous_mask
        differentiable = isinstance(acquisition, DifferentiableUnitCubeScore)
        if mask.any() and differentiable and self.n_restarts > 0 and refinable.any():
            starts = np.flatnonzero(refinable)
            starts = starts[self._distinct_best(candidates[starts], scores[starts], rng)]
            ends = [self._refine(acquisition, candidates[i], scales[i], mask) for i in starts]
            refined = space.snap(np.array(ends))
            candidates = np.vstack([candidates, refined])
            scores = np.concatenate([scores, finite_scores(acquisition(refined))])
        return _select_in_order(candidates, _best_first(scores, rng), exclude, keep_away, radius)

    def _distinct_best(
        self, candidates: np.ndarray, scores: np.ndarray, rng: np.random.Generator
    ) -> list[int]:
        """Indices of the ``n_restarts`` best candidates, no two at the same point."""
        chosen: list[int] = []
        seen: set[bytes] = set()
        for index in _best_first(scores, rng):
            (key,) = _row_keys(candidates[index])
            if key not in seen:
                seen.add(key)
                chosen.append(int(index))
                if len(chosen) == self.n_restarts:
                    break
        return chosen

    def _refine(
        self,
        acquisition: DifferentiableUnitCubeScore,
        start: np.ndarray,
        scale: np.ndarray,
        mask: np.ndarray,
    ) -> np.ndarray:
        """L-BFGS-B on the continuous coordinates of ``start``, maximising the acquisition
        minus ``Σ (x - start)² / (2 scale²)`` (no penalty where ``scale`` is infinite)."""
        point = start.copy()
        centre, precision = start[mask], 1.0 / np.square(scale[mask])

        def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
            point[mask] = x
            value, grad = acquisition.value_and_grad(point[None, :])
            offset = x - centre
            penalty = 0.5 * float(np.sum(precision * offset**2))
            return penalty - float(value[0]), precision * offset - grad[0, mask]

        result = minimize(
            negative,
            centre,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * len(centre),
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

    def __init__(self, acquisition: UnitCubeScore, space: SearchSpace, step: float = 1e-5) -> None:
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
