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
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

from bore_samplers.space import Dimension, IntParam, SearchSpace

__all__ = [
    "Acquisition",
    "AcquisitionOptimizer",
    "DifferentialEvolution",
    "DifferentiableAcquisition",
    "FiniteDifferenceGradient",
    "MixedSpaceOptimizer",
    "MultiStartLBFGS",
    "ParzenSearch",
    "RandomSearch",
    "finite_scores",
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


#: Rows that :func:`select_distinct` checks at a time, best first.
_SELECT_CHUNK = 256


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
    excluded = set(_row_keys(exclude)) if exclude is not None and len(exclude) else None
    spacing = keep_away is not None and len(keep_away) > 0 and radius > 0
    first_allowed = None
    # Walk down the ranking in chunks: the answer is nearly always among the first rows, and
    # hashing every row of a large pool would cost more than the search that produced it.
    for begin in range(0, len(order), _SELECT_CHUNK):
        rows = order[begin : begin + _SELECT_CHUNK]
        chunk = candidates[rows]
        if excluded is None:
            allowed = np.ones(len(rows), dtype=bool)
        else:
            allowed = np.array([key not in excluded for key in _row_keys(chunk)])
        if first_allowed is None and allowed.any():
            first_allowed = rows[np.argmax(allowed)]
        if not spacing:
            if first_allowed is not None:
                return candidates[first_allowed].copy()
            continue
        assert keep_away is not None
        gaps = np.linalg.norm(chunk[:, None, :] - keep_away[None, :, :], axis=-1).min(axis=1)
        spread = allowed & (gaps >= radius)
        if spread.any():
            return candidates[rows[np.argmax(spread)]].copy()
    if first_allowed is not None:
        return candidates[first_allowed].copy()
    return candidates[order[0]].copy()


def _best_first(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``scores``, best first; equal scores (a tree's flat π) in random order, not in
    the candidates' order."""
    return np.lexsort((rng.random(len(scores)), -scores))


def _select_in_order(
    candidates: np.ndarray,
    order: np.ndarray,
    exclude: np.ndarray | None,
    keep_away: np.ndarray | None,
    radius: float,
) -> np.ndarray:
    """:func:`select_distinct` with the preference given as an order (best first), not scores."""
    ranked = np.empty(len(order))
    ranked[order] = -np.arange(len(order), dtype=float)
    return select_distinct(candidates, ranked, exclude, keep_away, radius)


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
        *,
        lengthscales: np.ndarray | None = None,
        anchors: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return one snapped unit point of shape ``(n_dims,)``.

        It is not a row of ``exclude`` and, where possible, at least ``radius`` away from every
        row of ``keep_away`` (see :func:`select_distinct`).

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


class RandomSearch(AcquisitionOptimizer):
    """Score ``n_candidates`` uniform random configurations in one batch and keep the best.

    The BORE paper's choice for tree classifiers on discrete spaces (500 evaluations, App. G.1).
    ``lengthscales`` and ``anchors`` are ignored.
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
        acquisition: Acquisition,
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
        acquisition: Acquisition,
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
        acquisition: Acquisition,
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
        differentiable = isinstance(acquisition, DifferentiableAcquisition)
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
        acquisition: DifferentiableAcquisition,
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


# ------------------------------------------------------------------------------ mixed spaces
#: Curvature pairs kept by the batched L-BFGS (scipy's default).
_LBFGS_MEMORY = 10
#: Trial steps of one backtracking line search before it gives up.
_MAX_LINE_SEARCH = 10
#: Sufficient-decrease constant of the Armijo condition.
_ARMIJO = 1e-4
#: A local search stops once one iteration lowers its value by less than this (relative):
#: scipy's L-BFGS-B default (``factr = 1e7`` times machine epsilon). Smaller values only
#: crawl along the valleys that a constraint's log-feasibility wall makes, at no gain.
_FTOL = 1e7 * float(np.finfo(float).eps)
#: Lengthscales are clipped to this range: beyond it the scaled box is numerically degenerate.
_LENGTHSCALE_RANGE = (1e-4, 1e4)


def finite_scores(scores: np.ndarray) -> np.ndarray:
    """Acquisition scores as a flat float array, NaN replaced by ``-inf``."""
    # NaN would poison argmax and comparisons; it ranks below every real score instead.
    values = np.asarray(scores, dtype=float).reshape(-1)
    return np.where(np.isnan(values), -np.inf, values)


def _two_loop(q: np.ndarray, s: np.ndarray, y: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``H q`` for a batch of L-BFGS inverse-Hessian approximations (Nocedal & Wright, Alg. 7.4).

    ``s``, ``y`` are ``(B, m, n)`` curvature pairs, newest first, ``rho = 1 / (s . y)``; a
    slot not in use has ``rho = 0`` (and finite ``s``, ``y``), which makes its two updates
    exact no-ops, so that one loop serves rows with different numbers of pairs.
    """
    in_use = rho != 0.0
    depth = int(in_use.sum(axis=1).max(initial=0))
    alpha = np.zeros((len(q), depth))
    q = q.copy()
    for i in range(depth):
        a = rho[:, i] * np.einsum("bn,bn->b", s[:, i], q)
        alpha[:, i] = a
        q -= a[:, None] * y[:, i]
    # The usual initial matrix gamma I, gamma = s.y / y.y of the newest pair (Nocedal & Wright,
    # eq. 7.20); the identity without pairs. Stored pairs have s.y > 0, hence y.y > 0.
    gamma = np.ones(len(q))
    newest = in_use[:, 0]
    gamma[newest] = 1.0 / (rho[newest, 0] * np.einsum("bn,bn->b", y[newest, 0], y[newest, 0]))
    r = gamma[:, None] * q
    for i in reversed(range(depth)):
        b = rho[:, i] * np.einsum("bn,bn->b", y[:, i], r)
        r += (alpha[:, i] - b)[:, None] * s[:, i]
    return r


def _batched_lbfgsb(
    fun: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    x0: np.ndarray,
    upper: np.ndarray,
    max_iter: int,
    gtol: float,
    groups: np.ndarray | None = None,
    merge_radius: float = 0.0,
    leaders: np.ndarray | None = None,
) -> np.ndarray:
    """Minimise ``B`` independent problems on the box ``[0, upper]``, one batch call per step.

    A projected L-BFGS with an active set (in the spirit of Kim, Sra & Dhillon, "Tackling
    box-constrained optimization via a new projected quasi-Newton approach", SIAM J. Sci.
    Comput. 2010): coordinates at a bound whose gradient points outwards are held fixed, the
    others follow the L-BFGS direction, and a backtracking Armijo search runs along the projected
    path. Every problem keeps its own curvature pairs, step length and stopping test, while one
    call of ``fun`` evaluates all problems still moving. BoTorch instead hands scipy's L-BFGS-B
    the sum of the problems (``gen_candidates_scipy``): simpler, but one line search and one
    curvature estimate then serve every start, so starts in basins of different curvature slow
    each other down and all must converge before any stops.

    The problems do not wait for each other: every call evaluates each moving problem's next
    trial point, a backtracking step for one, the first step of a new iteration for another.
    Each problem evaluates exactly the points it would alone, but the number of calls is the
    largest number of evaluations of one problem, not the sum over iterations of the longest
    line search (in lockstep, 190-320 calls per constrained cMES proposal in 10-D; about 40 %
    fewer this way).

    Parameters
    ----------
    fun
        ``fun(rows, x) -> (values, gradients)`` of the problems ``rows`` at the points ``x``
        (``(len(rows), n)``).
    x0
        Starting points, ``(B, n)``.
    upper
        Upper bounds, ``(n,)``; the lower bounds are zero.
    max_iter
        Iteration limit of every problem.
    gtol
        A problem stops once its projected gradient's largest entry falls below ``gtol``.
    groups
        Problem labels, ``(B,)``: problems with the same label minimise the same function
        (``None``: all do).
    merge_radius
        A problem stops once it is within this distance (largest coordinate) of a problem of
        its group with a lower value (ties: the lower index), checked whenever a step is
        accepted: both have entered one basin, and the better one finishes the descent.
        Starts in one basin are common (they are the best candidates, often around one
        incumbent), and the slowest problem sets the number of batch calls. 0 never merges.
    leaders
        Mask ``(B,)`` of the problems whose solutions are needed to full precision: the run
        ends once none of them is still moving, and every other problem returns its best point
        so far, so that they add no batch call beyond the leaders' (``None``: every problem
        runs until it stops).

    Returns
    -------
    numpy.ndarray
        The final points, ``(B, n)``.
    """
    x = np.clip(x0, 0.0, upper)
    n_problems, n = x.shape
    f, g = fun(np.arange(n_problems), x)
    f, g = np.array(f, dtype=float), np.array(g, dtype=float)
    s_mem = np.zeros((n_problems, _LBFGS_MEMORY, n))
    y_mem = np.zeros((n_problems, _LBFGS_MEMORY, n))
    rho = np.zeros((n_problems, _LBFGS_MEMORY))
    active = np.isfinite(f) & np.isfinite(g).all(axis=1)
    iterations = np.zeros(n_problems, dtype=int)
    # Line-search state of every problem: its direction, step, longest entry, trials made.
    searching = np.zeros(n_problems, dtype=bool)
    direction = np.zeros((n_problems, n))
    t = np.zeros(n_problems)
    longest = np.zeros(n_problems)
    tries = np.zeros(n_problems, dtype=int)

    def fail(rows: np.ndarray) -> None:
        # A failed search after quasi-Newton steps retries once along the projected gradient.
        # (A problem has curvature pairs iff its newest rho is nonzero: see _two_loop.)
        active[rows[rho[rows, 0] == 0.0]] = False
        rho[rows] = 0.0

    while True:
        # Begin an iteration for every active problem that has no step under trial. An
        # iteration without a trial step (a zero direction) fails at once; its retry follows.
        while True:
            rows = np.flatnonzero(active & ~searching)
            if rows.size == 0:
                break
            active[rows[iterations[rows] >= max_iter]] = False
            projected = np.clip(x[rows] - g[rows], 0.0, upper) - x[rows]
            active[rows[np.abs(projected).max(axis=1) <= gtol]] = False
            rows = rows[active[rows]]
            if rows.size == 0:
                break
            iterations[rows] += 1
            xa, ga = x[rows], g[rows]
            at_lower, at_upper = xa <= 0.0, xa >= upper
            free = ~((at_lower & (ga > 0.0)) | (at_upper & (ga < 0.0)))
            pg = ga * free
            d = -_two_loop(pg, s_mem[rows], y_mem[rows], rho[rows]) * free
            d[(at_lower & (d < 0.0)) | (at_upper & (d > 0.0))] = 0.0
            restart = ~(np.einsum("bn,bn->b", ga, d) < 0.0)
            if restart.any():
                d[restart] = -pg[restart]
                rho[rows[restart]] = 0.0
            size = np.abs(d).max(axis=1)
            direction[rows], longest[rows] = d, size
            t[rows] = np.where(rho[rows, 0] != 0.0, 1.0, 1.0 / np.maximum(size, 1e-300))
            tries[rows] = 0
            searching[rows] = size > 0.0
            fail(rows[size <= 0.0])
        rows = np.flatnonzero(searching)
        if rows.size == 0 or (leaders is not None and not (searching & leaders).any()):
            break
        xa, fa, ga = x[rows], f[rows], g[rows]
        trial = np.clip(xa + t[rows, None] * direction[rows], 0.0, upper)
        ft, gt = fun(rows, trial)
        ft, gt = np.asarray(ft, dtype=float), np.asarray(gt, dtype=float)
        change = np.einsum("bn,bn->b", ga, trial - xa)
        ok = (
            np.isfinite(ft)
            & np.isfinite(gt).all(axis=1)
            & (change < 0.0)
            & (ft <= fa + _ARMIJO * change)
        )
        if not ok.all():
            # Backtrack to the minimiser of the cubic through f and its slope at both ends of
            # the step, kept in [0.1 t, 0.5 t] (Nocedal & Wright, section 3.5): the trial
            # point's gradient is already computed, and the cubic, unlike the parabola through
            # f(0), f'(0) and f(t), uses it, so fewer backtracks fail again.
            back = rows[~ok]
            shrink = _cubic_step(
                fa[~ok],
                change[~ok],
                ft[~ok],
                np.einsum("bn,bn->b", gt[~ok], trial[~ok] - xa[~ok]),
            )
            t[back] *= np.clip(shrink, 0.1, 0.5)
            tries[back] += 1
            given_up = (tries[back] >= _MAX_LINE_SEARCH) | ~(t[back] * longest[back] > 1e-12)
            searching[back[given_up]] = False
            fail(back[given_up])
        moved = rows[ok]
        if moved.size == 0:
            continue
        searching[moved] = False
        step, change_g = trial[ok] - xa[ok], gt[ok] - ga[ok]
        sy = np.einsum("bn,bn->b", step, change_g)
        yy = np.einsum("bn,bn->b", change_g, change_g)
        update = sy > 1e-10 * yy
        target = moved[update]
        # Newest first: shift the pairs one slot back (the oldest drops out).
        s_mem[target, 1:] = s_mem[target, :-1]
        y_mem[target, 1:] = y_mem[target, :-1]
        rho[target, 1:] = rho[target, :-1]
        s_mem[target, 0], y_mem[target, 0] = step[update], change_g[update]
        rho[target, 0] = 1.0 / sy[update]
        stalled = fa[ok] - ft[ok] <= _FTOL * np.maximum(
            np.maximum(np.abs(fa[ok]), np.abs(ft[ok])), 1.0
        )
        x[moved], f[moved], g[moved] = trial[ok], ft[ok], gt[ok]
        active[moved[stalled]] = False
        if merge_radius > 0.0:
            active &= ~_merged(x, f, active, groups, merge_radius)
            searching &= active
    return x


def _cubic_step(
    f0: np.ndarray, slope0: np.ndarray, f1: np.ndarray, slope1: np.ndarray
) -> np.ndarray:
    """Where the line search tries next, as a fraction of the failed step.

    The minimiser of the cubic with values ``f0``, ``f1`` and slopes ``slope0``, ``slope1``
    at the ends 0 and 1 of the step (Nocedal & Wright, eq. 3.59). Where that cubic has no
    minimiser (or a value is not finite), the minimiser of the parabola through ``f0``,
    ``slope0`` and ``f1``; where that has none either, 0.5. Not clipped: the caller keeps
    the result in its safeguard interval.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rise = f1 - f0 - slope0
        parabola = np.where(
            np.isfinite(rise) & (rise > 0.0) & (slope0 < 0.0), -slope0 / (2.0 * rise), 0.5
        )
        a = slope0 + slope1 - 3.0 * (f1 - f0)
        discriminant = a * a - slope0 * slope1
        b = np.sqrt(np.maximum(discriminant, 0.0))
        cubic = 1.0 - (slope1 + b - a) / (slope1 - slope0 + 2.0 * b)
        has_cubic = (
            np.isfinite(f1)
            & np.isfinite(slope1)
            & (discriminant >= 0.0)
            & np.isfinite(cubic)
            & (slope0 < 0.0)
        )
    return np.where(has_cubic, cubic, parabola)


def _merged(
    x: np.ndarray, f: np.ndarray, active: np.ndarray, groups: np.ndarray | None, radius: float
) -> np.ndarray:
    """Mask of the active problems within ``radius`` of a better problem of their group."""
    merged = np.zeros(len(x), dtype=bool)
    live = np.flatnonzero(active)
    if live.size == 0:
        return merged
    index = np.arange(len(x))
    close = np.abs(x[live][:, None, :] - x[None, :, :]).max(axis=2) < radius
    better = (f[None, :] < f[live][:, None]) | (
        (f[None, :] == f[live][:, None]) & (index[None, :] < live[:, None])
    )
    if groups is not None:
        close &= groups[None, :] == groups[live][:, None]
    merged[live] = (close & better).any(axis=1)
    return merged


class _Grid:
    """The valid values of one discrete unit coordinate, as grid indices ``0 .. size - 1``.

    Integer, stepped and categorical parameters have ``size`` equal-width bins whose centres
    ``(k + 0.5) / size`` are their snapped coordinates. Log-scaled integers have one value per
    integer in ``[low, high]`` at non-uniform positions; ranges such as ``1 .. 10**6`` are
    never enumerated, only indexed.
    """

    def __init__(self, column: int, dim: Dimension) -> None:
        self.column = column
        self.categorical = dim.is_categorical
        self._dim = dim
        self._log_low: int | None = None
        if dim.n_bins is not None:
            self.size = dim.n_bins
        else:
            param = dim.param
            assert isinstance(param, IntParam) and param.log
            self.size = param.high - param.low + 1
            self._log_low = param.low

    def to_unit(self, index: np.ndarray) -> np.ndarray:
        """Grid indices -> snapped unit coordinates."""
        if self._log_low is None:
            return (index + 0.5) / self.size
        return self._dim.encode_values(self._log_low + index)

    def to_index(self, u: np.ndarray) -> np.ndarray:
        """Unit coordinates -> grid indices."""
        if self._log_low is None:
            return np.minimum(np.floor(u * self.size), self.size - 1).astype(int)
        return np.asarray(self._dim.decode_values(u), dtype=int) - self._log_low

    def offsets(self) -> np.ndarray:
        """Moves of a neighbourhood search: ``±1, 2, 3, 4, 6, 8, 12, ...`` up to ``size - 1``.

        Doubling steps reach any index in a logarithmic number of moves; with the intermediate
        ``1.5 * 2**k`` steps consecutive step sizes differ by at most half, so one move gets
        within a quarter of the distance to any target index.
        """
        steps, power = set(), 1
        while power < self.size:
            steps.update((power, 3 * power // 2))
            power *= 2
        positive = np.array(sorted(v for v in steps if 0 < v < self.size), dtype=int)
        return np.concatenate([positive, -positive])


def _discrete_grids(space: SearchSpace) -> list[_Grid]:
    grids = [_Grid(j, dim) for j, dim in enumerate(space.dimensions) if not dim.is_continuous]
    return [grid for grid in grids if grid.size > 1]  # a single value leaves nothing to search


def _movable_mask(space: SearchSpace) -> np.ndarray:
    # A float with low == high is continuous but has a single value (snap pins it to 0.5).
    return np.array(
        [dim.is_continuous and dim.param.low != dim.param.high for dim in space.dimensions],
        dtype=bool,
    )


class MixedSpaceOptimizer(AcquisitionOptimizer):
    """Global candidates, then batched local searches over continuous and discrete coordinates.

    Follows Optuna's ``optuna._gp.optim_mixed.optimize_acqf_mixed`` (the optimiser behind
    ``GPSampler``) and extends it:

    1. **Candidates.** ``n_sobol`` scrambled Sobol points plus, around every anchor (the best
       observed points, say), Gaussian perturbations of the continuous coordinates at several
       scales (``perturbation_scales`` and ``lengthscale_perturbation`` times the lengthscales)
       with each discrete coordinate redrawn with probability ``1 / n_dims``, and the anchors
       themselves; all snapped and scored in one batch. Random points rarely land in a narrow
       peak next to the incumbent; these local candidates do (BoTorch mixes perturbations of the
       best points into its initial conditions in the same spirit, ``sample_points_around_best``).
    2. **Starts**, ``n_local`` in all. The best candidate; the best local candidate of each of
       the first ``n_local // 2`` anchors (warm starts, as Optuna's GPSampler starts from its
       best trials: a peak next to the incumbent gets refined even when random candidates
       elsewhere score higher); then greedily the best candidates at least ``start_spacing``
       (in lengthscales) from every start taken, halving the spacing while too few qualify.
       Only the order of the scores matters, so acquisitions on any scale (a log-EI of -700,
       an entropy in [0, 1], a negative LCB) behave alike (Optuna's roulette weights
       ``exp(f - max f)`` presume a log scale); and only distances from the best few hundred
       candidates to the starts are computed.
    3. **Local search** of all starts at once, for up to ``max_rounds`` rounds:

       a. on the continuous coordinates, with a gradient
          (:class:`DifferentiableAcquisition`): box-constrained L-BFGS (a projected variant,
          where Optuna runs scipy's L-BFGS-B) in lengthscale-scaled coordinates ``z = u / l``
          on ``[0, 1 / l]`` (Optuna's preconditioning), every start its own problem but one
          batch evaluation per step; without a gradient: a pattern search of
          coordinate steps (two sizes, shrinking on failure) with a pattern move and a
          curvature (diagonal Newton) step fitted to the last coordinate steps, which also
          refines piecewise-constant scores such as tree classifiers';
       b. for each discrete coordinate in turn: every value when there are at most
          ``exhaustive_limit`` (categoricals: up to ``max_categories``, else a random subset of
          that many), otherwise a neighbourhood on its sorted grid (steps ``±1, 2, 3, 4, 6, 8,
          12, ...`` and ``n_random_values`` random values); one batch call covers all starts.

       A start moves only to a strictly better score. The rounds stop when no discrete move
       improved any start (Optuna's rule: the continuous phase already converged at the point).
    4. **Choice.** The best of every point scored (candidates and local-search points) that
       passes :func:`select_distinct`.

    Parameters
    ----------
    n_sobol
        Scrambled Sobol candidates (Optuna: 2048).
    n_local
        Local searches (Optuna: 10).
    max_rounds
        Limit on the alternations of continuous and discrete searches.
    max_iter
        Iteration limit of L-BFGS per round.
    tol
        L-BFGS stops a start once the largest projected-gradient entry (scaled coordinates,
        of the acquisition's smooth surrogate) is below ``tol``.
    exhaustive_limit
        Ordered discrete coordinates with at most this many values are searched exhaustively
        (Optuna: 16); larger ones by a neighbourhood search.
    max_categories
        Categorical coordinates are searched exhaustively up to this many choices, beyond it
        through as many random choices per start and round.
    n_random_values
        Random grid values added to each neighbourhood search (escapes from local optima).
    n_perturbations
        Local candidates per anchor, split evenly over the perturbation scales.
    perturbation_scales
        Standard deviations (unit coordinates) of the anchors' Gaussian perturbations.
    lengthscale_perturbation
        One more standard deviation, this factor times each coordinate's lengthscale (only when
        ``lengthscales`` are given).
    start_spacing
        Initial minimum distance between starts, in lengthscales (in unit coordinates without
        ``lengthscales``).
    pattern_step
        Initial step of the derivative-free refinement, as a fraction of the lengthscale.
    n_pattern_steps
        Batched steps of the derivative-free refinement per round.
    merge_radius
        An L-BFGS start stops once it comes within this distance (in lengthscales, largest
        coordinate) of a better start of the same acquisition: the two are in one basin. The
        starts often are, and the slowest start sets the number of batch calls (0.01 cut
        them by about a quarter in 10-D while the best value found moved by less than 1e-6 on
        a log scale). 0: never.
    """

    def __init__(
        self,
        n_sobol: int = 2048,
        n_local: int = 10,
        max_rounds: int = 20,
        max_iter: int = 200,
        tol: float = 1e-5,
        exhaustive_limit: int = 16,
        max_categories: int = 256,
        n_random_values: int = 4,
        n_perturbations: int = 128,
        perturbation_scales: tuple[float, ...] = (1e-3, 1e-2, 1e-1),
        lengthscale_perturbation: float = 0.5,
        start_spacing: float = 0.5,
        pattern_step: float = 0.1,
        n_pattern_steps: int = 20,
        merge_radius: float = 0.0,
    ) -> None:
        self.n_sobol = n_sobol
        self.n_local = n_local
        self.max_rounds = max_rounds
        self.max_iter = max_iter
        self.tol = tol
        self.exhaustive_limit = exhaustive_limit
        self.max_categories = max_categories
        self.n_random_values = n_random_values
        self.n_perturbations = n_perturbations
        self.perturbation_scales = perturbation_scales
        self.lengthscale_perturbation = lengthscale_perturbation
        self.start_spacing = start_spacing
        self.pattern_step = pattern_step
        self.n_pattern_steps = n_pattern_steps
        self.merge_radius = merge_radius

    def maximize(
        self,
        acquisition: Acquisition,
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radius: float = 0.0,
        *,
        lengthscales: np.ndarray | None = None,
        anchors: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return one snapped unit point of shape ``(n_dims,)`` (see the class docstring).

        ``lengthscales`` (``(n_dims,)``, unit coordinates) precondition L-BFGS, scale the
        start spacing, the derivative-free steps and one perturbation scale; ``anchors``
        (``(k, n_dims)``) add local candidates around them.

        Raises
        ------
        ValueError
            If ``lengthscales`` or ``anchors`` have the wrong shape, or a lengthscale is not
            positive.
        """
        return self.maximize_each(
            [acquisition],
            space,
            rng,
            exclude,
            keep_away,
            [radius],
            lengthscales=lengthscales,
            anchors=anchors,
        )[0]

    def maximize_each(
        self,
        acquisitions: Sequence[Acquisition],
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radii: Sequence[float] | None = None,
        *,
        lengthscales: np.ndarray | None = None,
        anchors: np.ndarray | None = None,
        primary: int | None = None,
    ) -> list[np.ndarray]:
        """The maximiser of each acquisition, searched side by side (a portfolio's nominees).

        As :meth:`maximize` for each acquisition, except that they share one set of
        candidates and that one batched L-BFGS runs the local searches of all of them: one
        call per step scores the points of every acquisition, so acquisitions over the same
        GPs share its posterior (:meth:`GaussianProcessRegressor.predict_with_grad` reuses
        its last prediction), and the number of calls is that of the slowest search, not
        the sum over acquisitions. ``radii`` are the acquisitions' distances from
        ``keep_away`` (``None``: 0 for every one).

        ``primary``: the index of the one acquisition whose maximiser will be evaluated (a
        portfolio's chosen member, when the choice does not depend on the nominees). The
        L-BFGS runs of the others then end with the primary's, each returning its best point
        so far: the number of calls is that of the primary's slowest start. ``None``: every
        search runs to convergence.
        """
        k = len(acquisitions)
        radii = [0.0] * k if radii is None else [float(r) for r in radii]
        if len(radii) != k:
            raise ValueError(f"Got {len(radii)} radii for {k} acquisitions.")
        if primary is not None and not 0 <= primary < k:
            raise ValueError(f"primary must index one of the {k} acquisitions, got {primary}.")
        d = space.n_dims
        scale = self._scale(lengthscales, d)
        movable = _movable_mask(space)
        grids = _discrete_grids(space)
        candidates, owner = self._candidates(space, rng, lengthscales is not None, scale, anchors)
        searches = []
        for acquisition in acquisitions:
            scores = finite_scores(acquisition(candidates))
            starts = self._starts(candidates, scores, scale, owner)
            searches.append(
                _LocalSearch(acquisition, candidates[starts], scores[starts], candidates, scores)
            )
        lead = None  # the search whose L-BFGS runs set the others' length
        if primary is not None and isinstance(
            searches[primary].acquisition, DifferentiableAcquisition
        ):
            lead = searches[primary]
        for _ in range(self.max_rounds):
            live = [search for search in searches if search.rows.size]
            if not live:
                break
            if movable.any():
                smooth, rough = [], []
                for search in live:
                    differentiable = isinstance(search.acquisition, DifferentiableAcquisition)
                    (smooth if differentiable else rough).append(search)
                if smooth:
                    self._gradient_phase(smooth, space, movable, scale, lead)
                for search in rough:
                    self._pattern_phase(search, space, movable, scale)
            for search in live:
                moved = np.zeros(len(search.x), dtype=bool)
                for grid in grids:
                    moved |= self._grid_phase(search, space, grid, rng)
                # A start whose discrete coordinates stayed is converged: its continuous phase
                # has just run at this very point.
                search.rows = np.flatnonzero(moved)
        return [
            select_distinct(
                np.vstack(search.pool), np.concatenate(search.pool_scores), exclude, keep_away, r
            )
            for search, r in zip(searches, radii, strict=True)
        ]

    # ------------------------------------------------------------------------ candidates
    @staticmethod
    def _scale(lengthscales: np.ndarray | None, d: int) -> np.ndarray:
        if lengthscales is None:
            return np.ones(d)
        scale = np.asarray(lengthscales, dtype=float).reshape(-1)
        if scale.shape != (d,):
            raise ValueError(f"lengthscales must have shape ({d},), got {scale.shape}.")
        if not (np.all(scale > 0) and not np.isnan(scale).any()):
            raise ValueError(f"lengthscales must be positive, got {scale}.")
        return np.clip(scale, *_LENGTHSCALE_RANGE)

    def _candidates(
        self,
        space: SearchSpace,
        rng: np.random.Generator,
        has_lengthscales: bool,
        scale: np.ndarray,
        anchors: np.ndarray | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Snapped candidates and, for each, the index of its anchor (-1: a Sobol point)."""
        d = space.n_dims
        sobol = space.sample_sobol(max(self.n_sobol, 1), seed=int(rng.integers(2**32)))
        if anchors is None or len(anchors) == 0:
            return sobol, np.full(len(sobol), -1)
        centres = np.asarray(anchors, dtype=float)
        if centres.ndim != 2 or centres.shape[1] != d:
            raise ValueError(f"anchors must have shape (k, {d}), got {centres.shape}.")
        centres = space.snap(centres)
        sigmas = [np.full(d, s, dtype=float) for s in self.perturbation_scales]
        if has_lengthscales and self.lengthscale_perturbation > 0:
            sigmas.append(self.lengthscale_perturbation * scale)
        per_scale = self.n_perturbations // max(len(sigmas), 1)
        sigma = np.repeat(np.array(sigmas).reshape(-1, d), per_scale, axis=0)  # (m, d)
        points = np.repeat(centres, len(sigma), axis=0)  # anchor-major, (k * m, d)
        sigma = np.tile(sigma, (len(centres), 1))
        movable = _movable_mask(space)
        points[:, movable] += (sigma * rng.standard_normal(points.shape))[:, movable]
        discrete = np.flatnonzero(~space.continuous_mask)
        if discrete.size and len(points):
            redraw = rng.random(points.shape) < 1.0 / d
            redraw[:, space.continuous_mask] = False
            if not movable.any():
                # Nothing else would change: redraw at least one discrete coordinate per point.
                redraw[np.arange(len(points)), rng.choice(discrete, len(points))] = True
            points[redraw] = rng.random(int(redraw.sum()))
        owner = np.concatenate(
            [
                np.full(len(sobol), -1),
                np.arange(len(centres)),
                np.arange(len(points)) // len(sigma),
            ]
            if len(sigma)
            else [np.full(len(sobol), -1), np.arange(len(centres))]
        )
        return np.vstack([sobol, centres, space.snap(points)]), owner

    def _starts(
        self, candidates: np.ndarray, scores: np.ndarray, scale: np.ndarray, owner: np.ndarray
    ) -> np.ndarray:
        """Indices of the local searches' starting candidates.

        The best candidate; then, for each of the first ``n_local // 2`` anchors, its best
        local candidate (the anchors are warm starts, as in Optuna's
        ``warmstart_normalized_params_array``: their neighbourhood gets refined even when its
        scores rank below the best random candidates elsewhere); then the best candidates at
        least ``start_spacing`` from every start taken.
        """
        n_local = min(max(self.n_local, 0), len(candidates))
        if n_local == 0:
            return np.zeros(0, dtype=int)
        order = np.argsort(-scores, kind="stable")
        chosen = [int(order[0])]
        local = np.flatnonzero(owner >= 0)
        if local.size and n_local > 1:
            # Per anchor, its best candidate: sort by anchor, then by descending score.
            ranked = local[np.lexsort((-scores[local], owner[local]))]
            first = np.flatnonzero(np.diff(owner[ranked], prepend=-1) != 0)
            for index in ranked[first][: n_local // 2]:
                if int(index) not in chosen:
                    chosen.append(int(index))
        # Further starts come from the best few hundred: distances stay O(pool * n_local).
        top = order[: max(32 * n_local, 256)]
        z = candidates[top] / scale
        gap = np.min(
            np.linalg.norm(z[:, None, :] - (candidates[chosen] / scale)[None], axis=-1), axis=1
        )
        spacing = self.start_spacing
        while len(chosen) < n_local and spacing > 1e-9:
            eligible = np.flatnonzero((gap >= spacing) & (gap > 0.0))
            if eligible.size == 0:
                spacing /= 2.0
                continue
            pick = int(eligible[0])
            chosen.append(int(top[pick]))
            gap = np.minimum(gap, np.linalg.norm(z - z[pick], axis=1))
        return np.array(chosen)

    # ------------------------------------------------------------------------ local search
    def _gradient_phase(
        self,
        searches: Sequence[_LocalSearch],
        space: SearchSpace,
        movable: np.ndarray,
        scale: np.ndarray,
        lead: _LocalSearch | None = None,
    ) -> None:
        """Box-constrained L-BFGS on the continuous coordinates of the live starts of every
        search, all in one batched run (in place). With a ``lead`` search, the run ends when
        the lead's starts have stopped (none: no run at all), the others keeping the best
        points they reached."""
        lead_index = None
        if lead is not None:
            matches = [i for i, search in enumerate(searches) if search is lead]
            if not matches:
                return  # the lead has no live start: the others get no calls either
            lead_index = matches[0]
        cols = np.flatnonzero(movable)
        lengths = scale[cols]
        base = np.vstack([search.x[search.rows] for search in searches])
        group = np.concatenate([np.full(search.rows.size, i) for i, search in enumerate(searches)])

        def negative(problems: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            u = base[problems].copy()
            u[:, cols] = np.clip(z * lengths, 0.0, 1.0)
            values, grad = np.empty(len(u)), np.empty_like(u)
            owners = group[problems]
            for i in np.unique(owners):
                # Every acquisition scores all the points: those over the same GP then reuse
                # its posterior, which costs far more than the acquisitions' own arithmetic.
                mine = owners == i
                all_values, all_grad = searches[i].acquisition.value_and_grad(u)
                values[mine], grad[mine] = np.asarray(all_values)[mine], np.asarray(all_grad)[mine]
            # d/dz f(z * l) = l * df/du; scipy's convention: minimise the negated score.
            return -values, -grad[:, cols] * lengths

        z = _batched_lbfgsb(
            negative,
            base[:, cols] / lengths,
            1.0 / lengths,
            self.max_iter,
            self.tol,
            groups=group,
            merge_radius=self.merge_radius,
            leaders=None if lead_index is None else group == lead_index,
        )
        refined = base.copy()
        refined[:, cols] = np.clip(z * lengths, 0.0, 1.0)
        refined = space.snap(refined)
        for i, search in enumerate(searches):
            mine = refined[group == i]
            # The surrogate of value_and_grad need not equal the score: compare actual scores.
            values = finite_scores(search.acquisition(mine))
            search.record(mine, values)
            search.move(search.rows, mine, values)

    def _pattern_phase(
        self, search: _LocalSearch, space: SearchSpace, movable: np.ndarray, scale: np.ndarray
    ) -> None:
        """Derivative-free refinement of the continuous coordinates of the live starts (in place).

        Each step scores, for every live start at once, the coordinate steps ``±h`` and
        ``±h / 4`` along every continuous coordinate, a pattern move repeating the start's last
        move (Hooke & Jeeves, "'Direct search' solution of numerical and statistical problems",
        J. ACM 1961), and the maximiser of the parabolas fitted to the previous step's
        coordinate steps (exact on separable quadratics). A successful coordinate step
        rescales ``h`` around its size; a failure divides it by 16.
        """
        acquisition, x, fx, rows = search.acquisition, search.x, search.fx, search.rows
        cols = np.flatnonzero(movable)
        k, d = len(cols), x.shape[1]
        h0 = self.pattern_step * np.minimum(scale[cols], 1.0)
        factors = np.array([1.0, 0.25])
        # Axis moves, (2 sizes, 2 signs, k, k): size * sign * e_i.
        unit_moves = factors[:, None, None, None] * np.array([1.0, -1.0])[None, :, None, None]
        unit_moves = unit_moves * np.eye(k)[None, None]
        n_axis = 4 * k
        xs, fs = x[rows].copy(), fx[rows].copy()
        multiplier = np.ones(len(rows))
        previous = xs.copy()
        newton: np.ndarray | None = None
        live = np.ones(len(rows), dtype=bool)
        for _ in range(self.n_pattern_steps):
            active = np.flatnonzero(live)
            if active.size == 0:
                break
            base, n_live = xs[active], len(active)
            h = multiplier[active, None] * h0[None, :]  # (L, k)
            points = np.repeat(base[:, None, :], n_axis, axis=1)
            points[:, :, cols] += (unit_moves[None] * h[:, None, None, None, :]).reshape(
                n_live, n_axis, k
            )
            extra = [base + (base - previous[active])]
            if newton is not None:
                extra.append(newton[active])
            points = np.concatenate([points, np.stack(extra, axis=1)], axis=1)
            flat = space.snap(points.reshape(-1, d))
            values = finite_scores(acquisition(flat))
            search.record(flat, values)
            points, values = flat.reshape(n_live, -1, d), values.reshape(n_live, -1)
            newton = xs.copy()
            newton[active] = self._parabola_step(base, fs[active], points, values, cols, h)
            best = np.argmax(values, axis=1)
            best_values = values[np.arange(n_live), best]
            better = best_values > fs[active]
            axis_size = np.where(best < n_axis, factors[np.minimum(best // (2 * k), 1)], 1.0)
            multiplier[active] *= np.where(
                better, np.where(best < n_axis, 2.0 * axis_size, 1.0), 1 / 16
            )
            multiplier[active] = np.minimum(multiplier[active], 1.0 / h0.max())
            moved = active[better]
            previous[active] = base
            xs[moved] = points[better, best[better]]
            fs[moved] = best_values[better]
            live[active] &= multiplier[active] * h0.max() > 1e-9
        x[rows], fx[rows] = xs, fs

    @staticmethod
    def _parabola_step(
        base: np.ndarray,
        f0: np.ndarray,
        points: np.ndarray,
        values: np.ndarray,
        cols: np.ndarray,
        h: np.ndarray,
    ) -> np.ndarray:
        """Maximisers of the per-coordinate parabolas through the ``±h`` steps and the centre."""
        k = len(cols)
        span = np.arange(k)
        up, down = points[:, span, cols], points[:, k + span, cols]  # (L, k)
        f_up, f_down = values[:, :k], values[:, k : 2 * k]
        a = base[:, cols] - down  # distance to the lower point (0 when clipped at a bound)
        b = up - base[:, cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            rise_up, rise_down = (f_up - f0[:, None]) / b, (f_down - f0[:, None]) / a
            curvature = 2.0 * (rise_up + rise_down) / (a + b)
            slope = rise_up - curvature * b / 2.0
            step = -slope / curvature
        fine = (a > 0) & (b > 0) & np.isfinite(step) & (curvature < 0)
        step = np.where(fine, np.clip(step, -4.0 * h, 4.0 * h), 0.0)
        proposal = base.copy()
        proposal[:, cols] += step
        return proposal

    def _grid_phase(
        self, search: _LocalSearch, space: SearchSpace, grid: _Grid, rng: np.random.Generator
    ) -> np.ndarray:
        """Move the live starts along one discrete coordinate where that improves (in place).

        Returns the mask (over all starts) of the starts that moved.
        """
        x, rows = search.x, search.rows
        moved = np.zeros(len(x), dtype=bool)
        if rows.size == 0:
            return moved
        n, j = len(rows), grid.column
        if grid.size <= self.exhaustive_limit or (
            grid.categorical and grid.size <= self.max_categories
        ):
            index = np.broadcast_to(np.arange(grid.size), (n, grid.size))
        elif grid.categorical:
            index = rng.integers(grid.size, size=(n, self.max_categories))
        else:
            current = grid.to_index(x[rows, j])
            index = np.clip(current[:, None] + grid.offsets()[None, :], 0, grid.size - 1)
            if self.n_random_values > 0:
                index = np.hstack([index, rng.integers(grid.size, size=(n, self.n_random_values))])
        width = index.shape[1]
        points = np.repeat(x[rows], width, axis=0)
        points[:, j] = grid.to_unit(index.reshape(-1))
        points = space.snap(points)
        values = finite_scores(search.acquisition(points))
        search.record(points, values)
        values = values.reshape(n, width)
        best = np.argmax(values, axis=1)
        best_points = points.reshape(n, width, -1)[np.arange(n), best]
        better = search.move(rows, best_points, values.max(axis=1))
        moved[rows[better]] = True
        return moved


class _LocalSearch:
    """The local searches of one acquisition in :class:`MixedSpaceOptimizer`.

    ``x``, ``fx``: the starts' current points and scores; ``rows``: the starts still moving;
    ``pool``, ``pool_scores``: every point scored, from which the answer is chosen.
    """

    def __init__(
        self,
        acquisition: Acquisition,
        x: np.ndarray,
        fx: np.ndarray,
        candidates: np.ndarray,
        scores: np.ndarray,
    ) -> None:
        self.acquisition = acquisition
        self.x, self.fx = x, fx
        self.rows = np.arange(len(x))
        self.pool, self.pool_scores = [candidates], [scores]

    def record(self, points: np.ndarray, values: np.ndarray) -> None:
        self.pool.append(points)
        self.pool_scores.append(values)

    def move(self, rows: np.ndarray, points: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Move each start of ``rows`` to its point where that scores strictly better; return
        the mask (over ``rows``) of those that moved."""
        better = values > self.fx[rows]
        self.x[rows[better]], self.fx[rows[better]] = points[better], values[better]
        return better
