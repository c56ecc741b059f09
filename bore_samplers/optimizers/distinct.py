"""Choosing the best candidate that is not excluded and keeps its distance from pending points."""

from __future__ import annotations

import numpy as np

__all__ = ["select_distinct"]


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
