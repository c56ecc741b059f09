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


class _YeoJohnson:
    """SciPy's ``yeojohnson`` and ``yeojohnson_normmax`` on fixed finite data, with the
    logarithms that do not depend on ``λ`` computed once.

    The arithmetic is SciPy's (``scipy.stats._morestats``, 1.16), step for step, so ``λ`` and
    the transformed values are the same to the last bit; SciPy's generic array wrappers cost
    about a millisecond per likelihood evaluation, which made the warp a sizeable part of
    every model fit.
    """

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.positive = data >= 0
        self.log1p_positive = np.log1p(data[self.positive])
        self.log1p_negative = np.log1p(-data[~self.positive])
        self.sign_log_sum = np.sum(np.sign(data) * np.log1p(np.abs(data)), axis=0)

    def __call__(self, lam: float) -> np.ndarray:
        eps = np.finfo(float).eps
        out = np.zeros_like(self.data)
        if abs(lam) < eps:
            out[self.positive] = self.log1p_positive
        else:
            out[self.positive] = np.expm1(lam * self.log1p_positive) / lam
        if abs(lam - 2) > eps:
            out[~self.positive] = -np.expm1((2 - lam) * self.log1p_negative) / (2 - lam)
        else:
            out[~self.positive] = -self.log1p_negative
        return out

    def _negative_log_likelihood(self, lam: float) -> float:
        variance = np.var(self(lam), axis=0)
        with np.errstate(divide="ignore"):
            log_variance = np.log(variance) if variance >= np.finfo(float).tiny else -np.inf
        n = self.data.shape[0]
        log_likelihood = -n / 2 * log_variance + (lam - 1) * self.sign_log_sum
        # As SciPy: an infinite likelihood (a vanishing variance) is rejected.
        return np.inf if np.isinf(log_likelihood) else -log_likelihood

    def normmax(self) -> float:
        """The maximum-likelihood ``λ`` (SciPy's bounds and tolerance for ``fminbound``)."""
        from scipy.optimize import fminbound

        if np.all(self.data == 0):
            return 1.0
        finfo = np.finfo(float)
        log1p_max_x = np.log1p(20 * np.max(np.abs(self.data)))
        log_eps = np.log(finfo.eps)
        log_tiny_float = (np.log(finfo.tiny) - log_eps) / 2
        log_max_float = (np.log(finfo.max) + log_eps) / 2
        lower = log_tiny_float / log1p_max_x
        upper = log_max_float / log1p_max_x
        if np.all(self.data < 0):
            lower, upper = 2 - upper, 2 - lower
        elif np.any(self.data < 0):
            lower, upper = max(2 - upper, lower), min(2 - lower, upper)
        return fminbound(self._negative_log_likelihood, lower, upper, xtol=1.48e-08)


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
    targets = np.asarray(targets, dtype=float)
    if len(targets) < MIN_WARP_TARGETS or np.ptp(targets) == 0.0:
        return targets
    transform = _YeoJohnson(targets)
    lam = float(np.clip(transform.normmax(), *WARP_LAMBDA_BOUNDS))
    warped = transform(lam)
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
