"""The mixed-space optimiser of the GP proposers: candidates, then batched local searches.

Global candidates plus local ones around given anchors, then batched local searches that
alternate box-constrained L-BFGS on the continuous coordinates (:mod:`.lbfgsb`) with exhaustive
or neighbourhood searches over each discrete coordinate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bore_samplers.optimizers.base import (
    AcquisitionOptimizer,
    DifferentiableUnitCubeScore,
    UnitCubeScore,
    finite_scores,
)
from bore_samplers.optimizers.distinct import select_distinct
from bore_samplers.optimizers.lbfgsb import _batched_lbfgsb
from bore_samplers.space import Dimension, IntParam, SearchSpace

__all__ = ["MixedSpaceOptimizer"]


#: Lengthscales are clipped to this range: beyond it the scaled box is numerically degenerate.
_LENGTHSCALE_RANGE = (1e-4, 1e4)


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


def _scaled_distance(
    points: np.ndarray, point: np.ndarray, scale: np.ndarray, categorical: np.ndarray
) -> np.ndarray:
    """Distances from ``points`` to ``point`` in lengthscales, as the GP kernel measures them.

    A numeric coordinate contributes its difference over its lengthscale; a categorical one
    ``1 / l`` when the choices differ, whatever their positions in the unit view (the kernel's
    Hamming term: the order of the choices means nothing).
    """
    diff = (points - point) / scale
    diff[:, categorical] = (diff[:, categorical] != 0.0) / scale[categorical]
    return np.linalg.norm(diff, axis=1)


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
       (in lengthscales; a changed category counts ``1 / l``, whichever the two choices are,
       as in the kernel) from every start taken, halving the spacing while too few qualify.
       Only the order of the scores matters, so acquisitions on any scale (a log-EI of -700,
       an entropy in [0, 1], a negative LCB) behave alike (Optuna's roulette weights
       ``exp(f - max f)`` presume a log scale); and only distances from the best few hundred
       candidates to the starts are computed.
    3. **Local search** of all starts at once, for up to ``max_rounds`` rounds:

       a. on the continuous coordinates, with a gradient
          (:class:`~bore_samplers.acquisitions.base.DifferentiableUnitCubeScore`):
          box-constrained L-BFGS (a projected variant, where Optuna runs scipy's L-BFGS-B)
          in lengthscale-scaled coordinates ``z = u / l`` on ``[0, 1 / l]`` (Optuna's
          preconditioning), every start its own problem but one batch evaluation per step;
          without a gradient: a pattern search of coordinate steps (two sizes, shrinking on
          failure) with a pattern move and a curvature (diagonal Newton) step fitted to the
          last coordinate steps, which also refines piecewise-constant scores such as tree
          classifiers';
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
        acquisitions: Sequence[UnitCubeScore],
        space: SearchSpace,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
        keep_away: np.ndarray | None = None,
        radii: Sequence[float] | None = None,
        *,
        lengthscales: np.ndarray | None = None,
        anchors: np.ndarray | None = None,
        primary: int | None = None,
        warm_starts: np.ndarray | None = None,
        local_optima: list[np.ndarray] | None = None,
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

        ``warm_starts`` (``(k, n_dims)`` unit points) join the candidates, as the local optima
        of an earlier search of nearly the same acquisitions: a start there converges in a few
        steps. ``local_optima``: a list that receives the local searches' final points (one
        array, every acquisition's), for a later call's ``warm_starts``.
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
        categorical = np.array([dim.is_categorical for dim in space.dimensions], dtype=bool)
        grids = _discrete_grids(space)
        candidates, owner = self._candidates(space, rng, lengthscales is not None, scale, anchors)
        if warm_starts is not None and len(warm_starts):
            warm = np.asarray(warm_starts, dtype=float)
            if warm.ndim != 2 or warm.shape[1] != d:
                raise ValueError(f"warm_starts must have shape (k, {d}), got {warm.shape}.")
            candidates = np.vstack([space.snap(warm), candidates])
            owner = np.concatenate([np.full(len(warm), -1), owner])
        searches = []
        for acquisition in acquisitions:
            scores = finite_scores(acquisition(candidates))
            starts = self._starts(candidates, scores, scale, owner, categorical)
            searches.append(
                _LocalSearch(acquisition, candidates[starts], scores[starts], candidates, scores)
            )
        lead = None  # the search whose L-BFGS runs set the others' length
        if primary is not None and isinstance(
            searches[primary].acquisition, DifferentiableUnitCubeScore
        ):
            lead = searches[primary]
        # Without continuous coordinates a round is one discrete move, so allow as many rounds
        # as the sweeps of the coordinate-by-coordinate search would make moves.
        rounds = self.max_rounds if movable.any() else self.max_rounds * max(len(grids), 1)
        for _ in range(rounds):
            live = [search for search in searches if search.rows.size]
            if not live:
                break
            if not movable.any():
                for search in live:
                    search.rows = np.flatnonzero(
                        self._neighbourhood_phase(search, space, grids, rng)
                    )
                continue
            if movable.any():
                smooth, rough = [], []
                for search in live:
                    differentiable = isinstance(search.acquisition, DifferentiableUnitCubeScore)
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
        if local_optima is not None:
            local_optima.append(np.vstack([search.x for search in searches]))
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
        self,
        candidates: np.ndarray,
        scores: np.ndarray,
        scale: np.ndarray,
        owner: np.ndarray,
        categorical: np.ndarray,
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
        pool = candidates[top]
        gap = np.min(
            [_scaled_distance(pool, candidates[c], scale, categorical) for c in chosen], axis=0
        )
        spacing = self.start_spacing
        while len(chosen) < n_local and spacing > 1e-9:
            eligible = np.flatnonzero((gap >= spacing) & (gap > 0.0))
            if eligible.size == 0:
                spacing /= 2.0
                continue
            pick = int(eligible[0])
            chosen.append(int(top[pick]))
            gap = np.minimum(gap, _scaled_distance(pool, pool[pick], scale, categorical))
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

    def _grid_moves(
        self, x: np.ndarray, grid: _Grid, rng: np.random.Generator
    ) -> tuple[np.ndarray, int]:
        """The points one move along ``grid``'s coordinate from each row of ``x``, row-major,
        and the number of moves per row: every value when there are at most
        ``exhaustive_limit`` (categoricals: ``max_categories``), else a neighbourhood."""
        n, j = len(x), grid.column
        if grid.size <= self.exhaustive_limit or (
            grid.categorical and grid.size <= self.max_categories
        ):
            index = np.broadcast_to(np.arange(grid.size), (n, grid.size))
        elif grid.categorical:
            index = rng.integers(grid.size, size=(n, self.max_categories))
        else:
            current = grid.to_index(x[:, j])
            index = np.clip(current[:, None] + grid.offsets()[None, :], 0, grid.size - 1)
            if self.n_random_values > 0:
                index = np.hstack([index, rng.integers(grid.size, size=(n, self.n_random_values))])
        width = index.shape[1]
        points = np.repeat(x, width, axis=0)
        points[:, j] = grid.to_unit(index.reshape(-1))
        return points, width

    def _neighbourhood_phase(
        self,
        search: _LocalSearch,
        space: SearchSpace,
        grids: Sequence[_Grid],
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Move each live start to its best neighbour, one discrete coordinate changed, where
        that improves (in place); every start's whole neighbourhood in one batch call.

        On a space without continuous coordinates this replaces the coordinate-by-coordinate
        searches of :meth:`_grid_phase`: as many moves, in a sixth of the calls on six
        categoricals (each call costs about as much for 30 points as for 5). Returns the mask
        (over all starts) of the starts that moved.
        """
        x, rows = search.x, search.rows
        moved = np.zeros(len(x), dtype=bool)
        if rows.size == 0 or not grids:
            return moved
        n, d = len(rows), x.shape[1]
        blocks = [self._grid_moves(x[rows], grid, rng) for grid in grids]
        points = np.concatenate([block.reshape(n, width, d) for block, width in blocks], axis=1)
        width = points.shape[1]
        points = space.snap(points.reshape(-1, d))
        values = finite_scores(search.acquisition(points))
        search.record(points, values)
        values = values.reshape(n, width)
        best = np.argmax(values, axis=1)
        best_points = points.reshape(n, width, d)[np.arange(n), best]
        better = search.move(rows, best_points, values.max(axis=1))
        moved[rows[better]] = True
        return moved

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
        n = len(rows)
        points, width = self._grid_moves(x[rows], grid, rng)
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
        acquisition: UnitCubeScore,
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
