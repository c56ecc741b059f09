"""Multi-objective building blocks: Pareto ranks, hypervolumes and scalarisations.

Every objective is *minimised* (adapters negate maximised ones), points are rows of an
``(n, k)`` array. The proposers turn a multi-objective history into a single-objective one
with these functions (:meth:`~bore_samplers.proposers.Proposer.scalarized`):

* the GP proposers with ParEGO's augmented Chebyshev scalarisation under a fresh random weight
  per proposal (Knowles, *ParEGO: A Hybrid Algorithm With On-Line Landscape Approximation for
  Expensive Multiobjective Optimization Problems*, IEEE TEVC 10(1), 2006, eq. 2):
  :func:`parego_scalarize`;
* BORE with MBORE's ranking of the observations by Pareto front, ties within a front broken
  by hypervolume contribution (De Ath, Chugh & Rahat, *MBORE: Multi-objective Bayesian
  Optimisation by Density-Ratio Estimation*, GECCO 2022): :func:`pareto_rank_scores`.

The hypervolumes are exact: a sweep in two dimensions, slicing along the last objective in
three, and the WFG recursion beyond (While, Bradstreet & Barone, *A Fast Way of Calculating
Exact Hypervolumes*, IEEE TEVC 16(1), 2012), whose cost grows exponentially with ``k``.
"""

from __future__ import annotations

import bisect
import dataclasses

import numpy as np

from bore_samplers.observations import (
    History,
    TrialState,
    close_outlier_gaps,
    impute_infinite,
)

__all__ = [
    "augmented_chebyshev",
    "hypervolume",
    "hypervolume_contributions",
    "hypervolume_improvement",
    "non_dominated_ranks",
    "normalize_objectives",
    "parego_history",
    "pareto_front_mask",
    "pareto_rank_history",
    "pareto_rank_scores",
    "parego_scalarize",
    "simplex_weights",
]

#: ParEGO's augmentation coefficient ρ (Knowles 2006, eq. 2).
PAREGO_RHO = 0.05
#: Reference point of the hypervolume contributions over objectives normalised to ``[0, 1]``:
#: slightly beyond the worst observed value, so that the extreme points of a front count.
NORMALIZED_REFERENCE = 1.1


def _as_points(points: np.ndarray) -> np.ndarray:
    points = np.asarray(points, dtype=float)
    if points.ndim != 2:
        raise ValueError(f"points must have shape (n, k), got {points.shape}.")
    return points


#: Rows compared at once by the blocked sorting of three or more objectives: the comparison
#: arrays stay within a few MB whatever the number of rows.
_BLOCK_ROWS = 256
_BLOCK_ELEMENTS = 2**21


def non_dominated_ranks(points: np.ndarray) -> np.ndarray:
    """The Pareto front index of each row: 0 for the non-dominated ones, 1 for the front left
    once those are removed, and so on (the non-dominated sorting of Deb et al., *A Fast and
    Elitist Multiobjective Genetic Algorithm: NSGA-II*, IEEE TEVC 6(2), 2002).

    A row's front is one more than the largest front of the rows that dominate it, and in
    lexicographic order every dominating row comes first; the rows are visited in that order.
    With two objectives each front is summarised by its member of smallest second objective,
    and a row joins the first front whose summary does not dominate it, found by bisection
    (Jensen, *Reducing the Run-Time Complexity of Multiobjective EAs: The NSGA-II and Other
    Algorithms*, IEEE TEVC 7(5), 2003): ``O(n log n)``. With more objectives the rows are
    compared block by block with those before them: ``O(n² k)`` time in ``O(n k)`` memory
    (up to a few hundred rows, one dominance matrix).

    Parameters
    ----------
    points
        Objective vectors to minimise, shape ``(n, k)``, without NaN (``±inf`` compare as
        numbers).

    Returns
    -------
    numpy.ndarray
        Integer ranks, shape ``(n,)``. Equal rows share a rank.
    """
    points = _as_points(points)
    n, k = points.shape
    if n == 0:
        return np.full(0, -1, dtype=int)
    if k == 1:  # the fronts are the distinct values
        return np.unique(points[:, 0], return_inverse=True)[1].reshape(n).astype(int)
    if k > 2 and n <= _BLOCK_ROWS:  # small (the hypervolume recursions): one matrix is fastest
        return _matrix_ranks(points)
    # Lexicographic order, first objective first.
    order = np.lexsort(points.T[::-1])
    ranks = np.empty(n, dtype=int)
    if k == 2:
        ranks[order] = _sweep_ranks_2d(points[order])
    else:
        ranks[order] = _blocked_ranks(points[order])
    return ranks


def _dominance(points: np.ndarray) -> np.ndarray:
    """``d[i, j]``: row ``i`` dominates row ``j`` (no worse everywhere, better somewhere)."""
    dominates = np.all(points[:, None, :] <= points[None, :, :], axis=-1)
    dominates &= np.any(points[:, None, :] < points[None, :, :], axis=-1)
    return dominates


def _matrix_ranks(points: np.ndarray) -> np.ndarray:
    """Ranks by peeling fronts off the full dominance matrix: ``O(n² k)`` memory."""
    dominates = _dominance(points)
    n_dominating = dominates.sum(axis=0)
    ranks = np.full(len(points), -1, dtype=int)
    remaining = np.ones(len(points), dtype=bool)
    rank = 0
    while remaining.any():
        front = remaining & (n_dominating == 0)
        ranks[front] = rank
        remaining &= ~front
        n_dominating = n_dominating - dominates[front].sum(axis=0)
        rank += 1
    return ranks


def _sweep_ranks_2d(points: np.ndarray) -> np.ndarray:
    """Ranks of two-objective rows sorted lexicographically.

    Front ``r`` is summarised by ``(y, x)`` of its member with the smallest second objective
    ``y`` (at most one ``x`` per ``y`` in a front). Among earlier rows, some member of front
    ``r`` dominates row ``(x, y)`` exactly when that summary is lexicographically below
    ``(y, x)``; the summaries increase with ``r``, so the row's front is found by bisection.
    """
    summaries: list[tuple[float, float]] = []
    ranks = np.empty(len(points), dtype=int)
    for i, (x, y) in enumerate(points.tolist()):
        key = (y, x)
        rank = bisect.bisect_left(summaries, key)
        if rank == len(summaries):
            summaries.append(key)
        else:
            summaries[rank] = key
        ranks[i] = rank
    return ranks


def _blocked_ranks(points: np.ndarray) -> np.ndarray:
    """Ranks of rows sorted lexicographically, each compared with the rows before it."""
    n, k = points.shape
    ranks = np.empty(n, dtype=int)
    for start in range(0, n, _BLOCK_ROWS):
        block = points[start : start + _BLOCK_ROWS]
        # The largest front among the earlier blocks' rows that dominate each row.
        dominating_rank = np.full(len(block), -1)
        step = max(_BLOCK_ELEMENTS // (len(block) * k), 1)
        for first in range(0, start, step):
            earlier = points[first : min(first + step, start)]
            dominates = np.all(earlier[None, :, :] <= block[:, None, :], axis=-1)
            dominates &= np.any(earlier[None, :, :] < block[:, None, :], axis=-1)
            earlier_ranks = np.where(dominates, ranks[first : first + len(earlier)], -1)
            dominating_rank = np.maximum(dominating_rank, earlier_ranks.max(axis=1))
        for i in range(len(block)):
            before = block[:i]
            dominates = np.all(before <= block[i], axis=1) & np.any(before < block[i], axis=1)
            if dominates.any():
                inner = int(ranks[start : start + i][dominates].max())
                dominating_rank[i] = max(dominating_rank[i], inner)
            ranks[start + i] = dominating_rank[i] + 1
    return ranks


def pareto_front_mask(points: np.ndarray) -> np.ndarray:
    """Whether each row is non-dominated (rank 0 of :func:`non_dominated_ranks`)."""
    points = _as_points(points)
    if points.shape[1] > 2 and len(points) <= _BLOCK_ROWS:
        return ~_dominance(points).any(axis=0)
    return non_dominated_ranks(points) == 0


# ----------------------------------------------------------------------------- hypervolume
def hypervolume(points: np.ndarray, reference: np.ndarray) -> float:
    """The volume dominated by ``points`` and bounded by ``reference`` (minimisation).

    Parameters
    ----------
    points
        Objective vectors, shape ``(n, k)``. Rows that do not strictly dominate the reference
        point in every objective add nothing and are dropped; dominated rows too.
    reference
        The reference point, shape ``(k,)``, finite.

    Returns
    -------
    float
        The hypervolume (0.0 for no point inside the reference box).
    """
    points = _as_points(points)
    reference = np.asarray(reference, dtype=float).reshape(-1)
    if points.shape[1] != len(reference):
        raise ValueError(
            f"points have {points.shape[1]} objectives, the reference point {len(reference)}."
        )
    if not np.all(np.isfinite(reference)):
        raise ValueError("The reference point must be finite.")
    inside = points[np.all(points < reference, axis=1)]
    return _hypervolume(_front(inside), reference)


def _front(points: np.ndarray) -> np.ndarray:
    """The non-dominated rows, each once, sorted by the first objective."""
    if len(points) <= 1:
        return points
    points = np.unique(points, axis=0)  # sorted lexicographically: first objective first
    return points[pareto_front_mask(points)]


def _hypervolume(front: np.ndarray, reference: np.ndarray) -> float:
    """Hypervolume of mutually non-dominated rows inside the reference box."""
    n, k = front.shape
    if n == 0:
        return 0.0
    if n == 1:
        return float(np.prod(reference - front[0]))
    if k == 1:
        return float(reference[0] - front[:, 0].min())
    if k == 2:
        return _hypervolume_2d(front, reference)
    if k == 3:
        return _hypervolume_3d(front, reference)
    # WFG: the sum over rows of what each adds to those after it (any order is exact).
    front = front[np.argsort(front[:, 0])]
    return float(
        sum(_exclusive(front[i], front[i + 1 :], reference) for i in range(n)),
    )


def _hypervolume_2d(front: np.ndarray, reference: np.ndarray) -> float:
    front = front[np.argsort(front[:, 0])]  # second objective then decreases
    widths = np.append(front[1:, 0], reference[0]) - front[:, 0]
    return float(widths @ (reference[1] - front[:, 1]))


def _hypervolume_3d(front: np.ndarray, reference: np.ndarray) -> float:
    """Sum over the grid of the rows' first two coordinates of cell area times height.

    Any rows inside the box will do, dominated or equal ones included.

    The cell above ``(x_i, y_j)`` (rows sorted by each coordinate) is covered up to
    ``r_z - min z`` over the rows with ``x <= x_i`` and ``y <= y_j``: a cumulative maximum of
    the heights along both grid axes, ``O(n²)`` in all.
    """
    n = len(front)
    x_order = np.argsort(front[:, 0])
    y_rank = np.empty(n, dtype=int)
    y_rank[np.argsort(front[:, 1])] = np.arange(n)
    heights = np.zeros((n, n))
    heights[np.arange(n), y_rank[x_order]] = reference[2] - front[x_order, 2]
    heights = np.maximum.accumulate(np.maximum.accumulate(heights, axis=0), axis=1)
    x = np.append(np.sort(front[:, 0]), reference[0])
    y = np.append(np.sort(front[:, 1]), reference[1])
    return float(np.diff(x) @ heights @ np.diff(y))


def _exclusive(point: np.ndarray, others: np.ndarray, reference: np.ndarray) -> float:
    """What ``point`` adds to the hypervolume of ``others`` (WFG's exclusive hypervolume)."""
    inclusive = float(np.prod(reference - point))
    if len(others) == 0:
        return inclusive
    limited = np.maximum(others, point)  # the parts of the others inside point's box
    limited = limited[np.all(limited < reference, axis=1)]
    return inclusive - _hypervolume(_front(limited), reference)


def hypervolume_improvement(
    candidates: np.ndarray, points: np.ndarray, reference: np.ndarray
) -> np.ndarray:
    """What each candidate alone would add to the hypervolume of ``points``.

    Parameters
    ----------
    candidates
        Objective vectors, shape ``(m, k)``.
    points
        The current points, shape ``(n, k)``.
    reference
        The reference point, shape ``(k,)``.

    Returns
    -------
    numpy.ndarray
        Shape ``(m,)``; 0 for a candidate dominated by ``points`` or outside the box.
    """
    candidates, points = _as_points(candidates), _as_points(points)
    reference = np.asarray(reference, dtype=float).reshape(-1)
    inside = points[np.all(points < reference, axis=1)]
    gains = np.zeros(len(candidates))
    for i, candidate in enumerate(candidates):
        if np.all(candidate < reference):
            gains[i] = max(_exclusive(candidate, _front(inside), reference), 0.0)
    return gains


def hypervolume_contributions(points: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The hypervolume each row contributes exclusively: what removing it alone would lose.

    Parameters
    ----------
    points
        Objective vectors, shape ``(n, k)``, usually one Pareto front.
    reference
        The reference point, shape ``(k,)``.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``; 0 for a dominated row, a row outside the box, and for each of equal
        rows.
    """
    points = _as_points(points)
    reference = np.asarray(reference, dtype=float).reshape(-1)
    n, k = points.shape
    contributions = np.zeros(n)
    # Only non-dominated rows inside the box that no equal row shares contribute.
    candidates = np.all(points < reference, axis=1)
    candidates[candidates] = pareto_front_mask(points[candidates])
    _, index, counts = np.unique(points, axis=0, return_inverse=True, return_counts=True)
    candidates &= counts[index.reshape(-1)] == 1
    rows = np.flatnonzero(candidates)
    front = points[rows]
    inside = np.flatnonzero(np.all(points < reference, axis=1))
    if k == 2 and len(rows) == len(inside):  # a front (else a dominated row may fill a gap)
        # Sorted by the first objective, the second decreases: each row owns the rectangle
        # between its neighbours.
        order = np.argsort(front[:, 0])
        x, y = front[order, 0], front[order, 1]
        width = np.append(x[1:], reference[0]) - x
        height = np.insert(y[:-1], 0, reference[1]) - y
        contributions[rows[order]] = width * height
        return contributions
    if k == 3 and len(rows):
        # The grid sweep takes dominated rows as they are: the loss of each row, O(n³).
        total = _hypervolume_3d(points[inside], reference)
        for row in rows:
            others = points[inside[inside != row]]
            lost = total - (_hypervolume_3d(others, reference) if len(others) else 0.0)
            contributions[row] = max(lost, 0.0)
        return contributions
    for row in rows:
        others = points[inside[inside != row]]
        contributions[row] = max(_exclusive(points[row], _front(others), reference), 0.0)
    return contributions


# --------------------------------------------------------------------------- scalarisation
def normalize_objectives(points: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Each objective mapped to ``[0, 1]`` over ``rows`` (default: the rows without NaN).

    ParEGO normalises "with respect to the known (or estimated) limits" of each objective
    (Knowles 2006, Sec. III-A); the observed minimum and maximum are the estimate here. Over
    ``rows``, each objective's extreme values are first treated as a single objective's are
    for the GP: ``±inf`` ranked just beyond the finite values
    (:func:`~bore_samplers.observations.impute_infinite`) and far outliers moved next to the
    others (:func:`~bore_samplers.observations.close_outlier_gaps`), so that one infinite or
    huge value neither makes the map NaN nor squashes every other value to one end; ordinary
    values are mapped exactly as by the plain minimum and maximum. An objective without
    range maps to 0. Rows outside ``rows`` are scaled alike (they may fall outside
    ``[0, 1]``); NaN stays NaN.
    """
    points = _as_points(points)
    if rows is None:
        rows = ~np.isnan(points).any(axis=1)
    rows = np.asarray(rows, dtype=bool)
    tamed = points.copy()
    tamed[rows] = np.column_stack(
        [close_outlier_gaps(impute_infinite(column)) for column in points[rows].T]
    ).reshape(int(rows.sum()), points.shape[1])
    basis = tamed[rows]
    if len(basis) == 0:
        return np.where(np.isnan(points), np.nan, 0.0)
    # Scaled by a power of two per objective: exact, and no difference overflows.
    largest = np.max(np.abs(basis), axis=0)
    exponents = np.frexp(np.where(np.isfinite(largest), largest, 1.0))[1]
    tamed, basis = np.ldexp(tamed, -exponents), np.ldexp(basis, -exponents)
    low, high = basis.min(axis=0), basis.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(high > low, (tamed - low) / span, np.where(np.isnan(points), np.nan, 0.0))


def simplex_weights(k: int, rng: np.random.Generator) -> np.ndarray:
    """A weight vector drawn uniformly on the simplex ``{w ≥ 0, Σ w = 1}`` (Dirichlet(1, ..., 1)).

    ParEGO draws from the ``s + k - 1 choose k - 1`` evenly spaced vectors of the simplex
    (Knowles 2006, Sec. III-A); the uniform draw is its continuous limit.
    """
    return rng.dirichlet(np.ones(k))


def augmented_chebyshev(
    points: np.ndarray, weights: np.ndarray, rho: float = PAREGO_RHO
) -> np.ndarray:
    """ParEGO's augmented Chebyshev scalarisation ``max_i w_i f_i + ρ Σ_i w_i f_i``.

    Knowles 2006, eq. 2, on objectives already normalised to ``[0, 1]``; to be minimised.
    Its minimisers are Pareto optimal, and every Pareto optimal point (non-convex fronts
    included) minimises it for some weight; the augmentation ``ρ`` breaks the ties of the
    plain Chebyshev norm in favour of non-dominated points.
    """
    weighted = _as_points(points) * np.asarray(weights, dtype=float)
    return weighted.max(axis=1) + rho * weighted.sum(axis=1)


def parego_scalarize(
    points: np.ndarray,
    weights: np.ndarray,
    rows: np.ndarray | None = None,
    rho: float = PAREGO_RHO,
) -> np.ndarray:
    """ParEGO's scalar objective: normalise over ``rows`` (:func:`normalize_objectives`),
    then :func:`augmented_chebyshev` under ``weights``. NaN where a row has a NaN objective.
    """
    return augmented_chebyshev(normalize_objectives(points, rows), weights, rho)


def pareto_rank_scores(points: np.ndarray, n_best: int | None = None) -> np.ndarray:
    """A scalar score to minimise that orders rows as MBORE's labelling does.

    Rows are ranked by Pareto front (:func:`non_dominated_ranks`), and within a front by
    decreasing hypervolume contribution within that front (objectives normalised to
    ``[0, 1]`` over the rows, reference point 1.1 in each). The score of a row in front ``r``
    holding ``m`` rows, at place ``j = 0, ..., m - 1`` by contribution, is ``r + j / m``: any
    γ split of the scores keeps whole fronts and, from the front that the split cuts, the
    rows that add most to its hypervolume (the greedy hypervolume-contribution selection of
    SMS-EMOA and NSGA-II's truncation). This is the "rank with hypervolume-contribution
    tie-break" reading of MBORE (De Ath, Chugh & Rahat, GECCO 2022), chosen over its
    hypervolume-improvement labelling because it needs no reference point in the original
    units and keeps the whole first front ahead of the rest. Its differences ``τ - s`` are
    the improvements of BORE's EI weighting: a whole front counts as one unit.

    Parameters
    ----------
    points
        Objective vectors to minimise, shape ``(n, k)``, finite.
    n_best
        Only the fronts that begin among the best ``n_best`` rows (those a γ split can cut)
        are ordered by contribution, which costs hypervolumes; later fronts are ordered by
        the sum of their normalised objectives. ``None``: every front by contribution.

    Returns
    -------
    numpy.ndarray
        Scores, shape ``(n,)``, distinct within each front.
    """
    points = _as_points(points)
    n = len(points)
    scores = np.zeros(n)
    if n == 0:
        return scores
    normalized = normalize_objectives(points, np.ones(n, dtype=bool))
    sums = normalized.sum(axis=1)
    reference = np.full(points.shape[1], NORMALIZED_REFERENCE)
    ranks = non_dominated_ranks(points)
    sizes = np.bincount(ranks)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # By front, then by the sum of the normalised objectives (ties: by row).
    order = np.lexsort((sums, ranks))
    places = np.empty(n)
    places[order] = np.arange(n) - starts[ranks[order]]
    ordered = np.split(order, np.cumsum(sizes)[:-1])
    for rank in np.flatnonzero(starts < (n if n_best is None else n_best)):
        members = np.sort(ordered[rank])
        # Larger contributions first; the sum of objectives breaks equal contributions.
        contributions = hypervolume_contributions(normalized[members], reference)
        by_contribution = np.lexsort((sums[members], -contributions))
        places[members[by_contribution]] = np.arange(len(members))
    scores = ranks + places / sizes[ranks]
    return scores


# ------------------------------------------------------------------------------- histories
def _complete_rows(history: History) -> np.ndarray:
    """COMPLETE rows with every objective value (the rows the objectives are learned from)."""
    assert history.objectives is not None
    return history.mask(TrialState.COMPLETE) & ~np.isnan(history.objectives).any(axis=1)


def parego_history(history: History, weights: np.ndarray, rho: float = PAREGO_RHO) -> History:
    """``history`` with ParEGO's scalar objective as its values, single-objective.

    Each objective is normalised over the COMPLETE rows (feasible or not: the constraints
    are modelled apart), then scalarised by :func:`augmented_chebyshev` under ``weights``.
    Rows without objective values (failed, running, pruned) keep a NaN value; the states,
    constraints and records are unchanged.
    """
    if history.objectives is None:
        return history
    rows = _complete_rows(history)
    values = np.full(len(history), np.nan)
    if rows.any():
        normalized = normalize_objectives(history.objectives, rows)
        values[rows] = augmented_chebyshev(normalized[rows], weights, rho)
    return dataclasses.replace(history, values=values, objectives=None)


def pareto_rank_history(history: History, n_best: int | None = None) -> History:
    """``history`` with MBORE's scores (:func:`pareto_rank_scores`) as its values.

    The COMPLETE feasible rows are ranked among themselves (an infeasible point must not
    dominate, and so hide, a feasible one); every other row gets a NaN value, which BORE's
    labels rank last. ``n_best``: see :func:`pareto_rank_scores`.
    """
    if history.objectives is None:
        return history
    rows = _complete_rows(history) & history.feasible
    values = np.full(len(history), np.nan)
    if rows.any():
        values[rows] = pareto_rank_scores(history.objectives[rows], n_best)
    return dataclasses.replace(history, values=values, objectives=None)
