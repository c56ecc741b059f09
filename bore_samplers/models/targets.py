"""Regression targets that do not depend on the units of the objective.

The GP models see standardised targets only, built here from raw observed values:

1. **Infinite values are ranked, not dropped.** ``+inf`` (a diverged run, a failed metric
   returned as infinity) is worse than every finite value and is imputed one robust scale unit
   beyond the worst finite value; ``-inf`` likewise below the best. Dropping them would leave a
   hole in the data, which the model reads as unexplored, and the acquisitions would be drawn
   into it.
2. **Penalties are moved next to the other values.** An objective's values that lie far
   beyond the rest (``1e10`` returned over part of the space) would set the location and
   scale alone and leave the ordinary values one flat level, so the GP could not tell where
   the optimum is among them. :func:`~bore_samplers.observations.close_outlier_gaps` closes
   such gaps, keeping the order; ordinary objectives have none and are not changed
   (:func:`objective_targets`).
3. **Robust standardisation.** Location and scale are computed without squaring raw values, so
   values around ``1e154`` do not overflow, and a spread counts as zero only *relative* to the
   magnitude of the values (``1e-12``), so an objective measured in units of ``1e-15`` is
   modelled like any other.

Without such outliers the map is affine in the finite values, so ``f``, ``a * f`` and
``f + b`` give the same standardised targets up to rounding, and every acquisition computed on
them proposes the same points (with them, it still commutes with positive affine maps).
"""

from __future__ import annotations

import numpy as np

from bore_samplers.observations import (
    RELATIVE_SPREAD_TOLERANCE,
    close_outlier_gaps,
    impute_infinite,
    robust_location_scale,
)

__all__ = [
    "RELATIVE_SPREAD_TOLERANCE",
    "close_outlier_gaps",
    "impute_infinite",
    "objective_targets",
    "power_warp",
    "robust_location_scale",
    "standardize",
]


def _without_nan(values: np.ndarray) -> np.ndarray:
    """``values`` as floats; ``ValueError`` if any is NaN (``±inf`` are allowed)."""
    values = np.asarray(values, dtype=float)
    if np.isnan(values).any():
        raise ValueError("Targets must not contain NaN (leave such observations out).")
    return values


def standardize(values: np.ndarray, center: bool = True) -> tuple[np.ndarray, float, float]:
    """Scale-free targets from raw ``values`` (``±inf`` allowed, no NaN).

    Parameters
    ----------
    values
        Raw values, shape ``(n,)``.
    center
        Subtract the location (objectives). ``False`` only divides by the scale, which keeps
        a constraint's threshold ``c <= 0`` at 0.

    Returns
    -------
    targets, location, scale
        ``targets = (imputed - location) / scale`` (``location`` is 0 when not centering);
        ``scale`` is 1 for constant values.

    Raises
    ------
    ValueError
        If ``values`` contains NaN.
    """
    values = _without_nan(values)
    imputed = impute_infinite(values, threshold=None if center else 0.0)
    location, scale = robust_location_scale(imputed)
    if scale == 0.0:
        scale = 1.0 if center or location == 0.0 else abs(location)
    location = location if center else 0.0
    return (imputed - location) / scale, location, scale


#: Fewer targets than this are not warped: the transform's parameter would be a guess.
MIN_WARP_TARGETS = 8
#: Bounds of the Yeo-Johnson parameter (1 is the identity; 0 a log-like transform).
WARP_LAMBDA_BOUNDS = (-1.0, 2.0)


def power_warp(targets: np.ndarray) -> np.ndarray:
    """Standardised targets made closer to normal by a Yeo-Johnson power transform.

    Heavy-tailed objectives (a loss that spans orders of magnitude, a valley with steep walls)
    give a GP on the raw values a short lengthscale and a poor fit where it matters, near the
    optimum. A monotone warp keeps the order of the values, so the minimiser and every
    improvement-based acquisition's ranking of observations are unchanged. The parameter
    ``λ`` maximises the normal likelihood of the transformed values (Yeo & Johnson,
    *Biometrika* 2000; HEBO's output warping, Cowen-Rivers et al., JAIR 2022), clipped to
    :data:`WARP_LAMBDA_BOUNDS`; the result is standardised again. Constant targets, or fewer
    than :data:`MIN_WARP_TARGETS`, are returned unchanged.
    """
    from scipy.stats import yeojohnson, yeojohnson_normmax

    targets = np.asarray(targets, dtype=float)
    if len(targets) < MIN_WARP_TARGETS or np.ptp(targets) == 0.0:
        return targets
    lam = float(np.clip(yeojohnson_normmax(targets), *WARP_LAMBDA_BOUNDS))
    warped = yeojohnson(targets, lam)
    location, scale = robust_location_scale(warped)
    return (warped - location) / scale if scale > 0.0 else targets


def objective_targets(values: np.ndarray, warp: bool = True) -> np.ndarray:
    """The GP targets of an objective's raw ``values`` (``±inf`` allowed, no NaN).

    ``±inf`` are ranked (:func:`impute_infinite`), far outliers moved next to the other
    values (:func:`close_outlier_gaps`), the result standardised (:func:`standardize`) and,
    with ``warp``, made closer to normal (:func:`power_warp`). Every step keeps the order of
    the values, and the first two change nothing on ordinary values.

    Raises
    ------
    ValueError
        If ``values`` contains NaN.
    """
    values = _without_nan(values)
    targets = standardize(close_outlier_gaps(impute_infinite(values)))[0]
    return power_warp(targets) if warp else targets
