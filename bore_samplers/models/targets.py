"""Regression targets that do not depend on the units of the objective.

The GP models see standardised targets only, built here from raw observed values:

1. **Infinite values are ranked, not dropped.** ``+inf`` (a diverged run, a failed metric
   returned as infinity) is worse than every finite value and is imputed one robust scale unit
   beyond the worst finite value; ``-inf`` likewise below the best. Dropping them would leave a
   hole in the data, which the model reads as unexplored, and the acquisitions would be drawn
   into it.
2. **Robust standardisation.** Location and scale are computed without squaring raw values, so
   values around ``1e154`` do not overflow, and a spread counts as zero only *relative* to the
   magnitude of the values (``1e-12``), so an objective measured in units of ``1e-15`` is
   modelled like any other.

The map is affine in the finite values, so ``f``, ``a * f`` and ``f + b`` give the same
standardised targets up to rounding, and every acquisition computed on them proposes the same
points.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "RELATIVE_SPREAD_TOLERANCE",
    "impute_infinite",
    "power_warp",
    "robust_location_scale",
    "standardize",
]

#: A spread below this fraction of the values' magnitude is rounding noise: constant values.
RELATIVE_SPREAD_TOLERANCE = 1e-12


def robust_location_scale(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of finite ``values``, computed without overflow.

    The deviations from the median are divided by their largest magnitude before they are
    squared. A spread within :data:`RELATIVE_SPREAD_TOLERANCE` of the median's magnitude
    (or no values) gives a scale of 0.

    Returns
    -------
    location, scale
        ``scale`` is 0 for constant values.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return 0.0, 0.0
    median = float(np.median(values))
    deviations = values - median
    largest = float(np.max(np.abs(deviations)))
    if largest == 0.0 or largest <= RELATIVE_SPREAD_TOLERANCE * abs(median):
        return median, 0.0
    unit = deviations / largest
    return median + largest * float(np.mean(unit)), largest * float(np.std(unit))


def impute_infinite(values: np.ndarray, threshold: float | None = None) -> np.ndarray:
    """A copy of ``values`` with ``±inf`` replaced by finite values of the same rank.

    ``+inf`` becomes the largest finite value plus one robust scale unit (the standard
    deviation of the finite values; their magnitude, or 1, when they are constant); ``-inf``
    the smallest minus one unit. With a ``threshold`` (a constraint's ``c <= 0``), ``+inf``
    is also placed above the threshold and ``-inf`` below it, so that feasibility is kept.
    NaN values are left as they are.

    Parameters
    ----------
    values
        Raw values, shape ``(n,)``.
    threshold
        Optional value that ``+inf`` must exceed and ``-inf`` stay below.
    """
    values = np.array(values, dtype=float)
    infinite = np.isinf(values)
    if not infinite.any():
        return values
    finite = values[np.isfinite(values)]
    if finite.size:
        high, low = float(np.max(finite)), float(np.min(finite))
        unit = robust_location_scale(finite)[1]
        if unit == 0.0:
            unit = abs(high) if high != 0.0 else 1.0
    else:
        high = low = 0.0 if threshold is None else float(threshold)
        unit = 1.0
    if threshold is not None:
        high, low = max(high, threshold), min(low, threshold)
    values[infinite & (values > 0)] = high + unit
    values[infinite & (values < 0)] = low - unit
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
    values = np.asarray(values, dtype=float)
    if np.isnan(values).any():
        raise ValueError("Targets must not contain NaN (leave such observations out).")
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
