"""Marginalising GP hyperparameters: slice sampling and integrated acquisitions.

A point estimate of the GP hyperparameters (ML-II or MAP, what
:meth:`~bore_samplers.models.gp_regression.GaussianProcessRegressor.fit` computes) ignores how
uncertain they are, which with few observations makes acquisitions overconfident. Snoek, Larochelle
& Adams (2012, section 3.2) instead integrate the acquisition over the hyperparameter posterior,

.. math::

    \\hat a(x) = \\int a(x; \\theta)\\, p(\\theta \\mid \\mathcal D)\\, d\\theta
    \\approx \\frac1M \\sum_{m=1}^M a(x; \\theta_m),\\qquad
    \\theta_m \\sim p(\\theta \\mid \\mathcal D),

with the samples ``theta_m`` drawn by slice sampling (Murray & Adams, 2010; Neal, 2003). This
module provides the three pieces:

* :func:`slice_sample`: a generic slice sampler (stepping out and shrinkage, coordinate-wise or
  along random directions) for any unnormalised log density, numpy only;
* :func:`sample_hyperparameter_models`: posterior samples of the hyperparameters of a fitted
  :class:`~bore_samplers.models.gp_regression.GaussianProcessRegressor` (its :meth:`log_posterior`,
  priors included), returned as GP copies ready to ``predict``;
* the Monte Carlo integrated acquisition above lives with the acquisitions
  (:class:`bore_samplers.acquisitions.base.ModelAverage`).

Cost and warm starts
--------------------
Each evaluation of the log posterior is one Cholesky factorisation of the ``N x N`` kernel
matrix (plus, currently, its gradient, which slice sampling does not use); one coordinate-wise
sweep costs about ``5 (G + 3)`` of them for ``G`` lengthscale groups. The defaults (10 samples,
one sweep apart, after 10 burn-in sweeps from the MAP) thus cost about ``100 (G + 3)``
factorisations. A sampler that proposes
repeatedly can instead continue one chain across proposals, as Spearmint does: pass the last
sample of the previous proposal as ``initial_theta`` (``models[-1].theta_``), and the chain then
needs only a short burn-in (:data:`WARM_BURN_IN` sweeps) to adapt to the one new observation.

References
----------
J. Snoek, H. Larochelle, R. P. Adams. Practical Bayesian optimization of machine learning
algorithms. NeurIPS 2012.

I. Murray, R. P. Adams. Slice sampling covariance hyperparameters of latent Gaussian models.
NeurIPS 2010.

R. M. Neal. Slice sampling. The Annals of Statistics 31(3), 705-767, 2003.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from bore_samplers.models.gp_regression import GaussianProcessRegressor

__all__ = [
    "COLD_BURN_IN",
    "WARM_BURN_IN",
    "default_widths",
    "sample_hyperparameter_models",
    "slice_sample",
]

#: Burn-in sweeps of :func:`sample_hyperparameter_models` when the chain starts at the MAP.
#: The MAP lies in the high-density region, so the chain only has to spread out from the mode
#: into the typical set, which takes a few sweeps (tests check the samples' log posterior).
COLD_BURN_IN = 10
#: Burn-in sweeps when the chain continues from ``initial_theta`` (a sample of the previous
#: proposal's posterior, which differs from the current one by a single observation).
WARM_BURN_IN = 2

# Initial slice widths on the internal scale (Neal's ``w``): about the posterior standard
# deviation of the log hyperparameters with few observations. Too small costs linearly many
# stepping-out evaluations, too large only logarithmically many shrinkage ones, so err large.
LOG_LENGTHSCALE_WIDTH = 1.5
LOG_SIGNAL_VARIANCE_WIDTH = 1.5
LOG_NOISE_VARIANCE_WIDTH = 3.0
MEAN_WIDTH = 1.0

# Safety net of the shrinkage loop. A valid slice always contains the current point, so the
# loop ends with probability one; it can only stall if the density at the current point itself
# changed (non-deterministic density) or raised. 200 halvings exceed double precision.
MAX_SHRINKS = 200


# ------------------------------------------------------------------------------ slice sampling
def _safe_log_density(log_density: Callable[[np.ndarray], float], x: np.ndarray) -> float:
    # Failures (a Cholesky that does not factorise, overflow) and NaN mean "outside the
    # support": the sampler shrinks away from such points instead of aborting.
    try:
        value = float(log_density(x))
    except Exception:
        return -math.inf
    return value if not math.isnan(value) else -math.inf


def _direction_range(
    x: np.ndarray, direction: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> tuple[float, float]:
    """Range of ``t`` for which ``x + t * direction`` stays inside the box ``[lower, upper]``."""
    t_low, t_high = -math.inf, math.inf
    moving = direction != 0
    if np.any(moving):
        # Infinite bounds give infinite ends, which max and min handle.
        to_lower = (lower[moving] - x[moving]) / direction[moving]
        to_upper = (upper[moving] - x[moving]) / direction[moving]
        forward = direction[moving] > 0
        t_low = float(np.max(np.where(forward, to_lower, to_upper)))
        t_high = float(np.min(np.where(forward, to_upper, to_lower)))
    return t_low, t_high


def _slice_step_along(
    log_density: Callable[[np.ndarray], float],
    x: np.ndarray,
    log_density_x: float,
    direction: np.ndarray,
    t_bounds: tuple[float, float],
    max_steps_out: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float]:
    """One univariate slice-sampling update of ``x`` along ``x + t * direction`` (unit width).

    Stepping out (Neal 2003, Fig. 3) then shrinkage (Fig. 5). ``t_bounds`` is the range of
    ``t`` inside the known support: stepping out stops at it without evaluating the density
    there, and the interval is clipped to it. Clipping is a deterministic function of the
    stepped-out interval, so the interval keeps the symmetry Neal's correctness proof needs.
    """
    t_low, t_high = t_bounds
    # The slice level log(y) = log f(x) + log U, and -log U is standard exponential.
    log_level = log_density_x - rng.standard_exponential()

    left = -rng.uniform()
    right = left + 1.0
    steps_left = int(math.floor((max_steps_out + 1) * rng.uniform()))
    steps_right = max_steps_out - steps_left
    while (
        steps_left > 0
        and left > t_low
        and _safe_log_density(log_density, x + left * direction) > log_level
    ):
        left -= 1.0
        steps_left -= 1
    while (
        steps_right > 0
        and right < t_high
        and _safe_log_density(log_density, x + right * direction) > log_level
    ):
        right += 1.0
        steps_right -= 1
    left, right = max(left, t_low), min(right, t_high)

    for _ in range(MAX_SHRINKS):
        t = left + (right - left) * rng.uniform()
        proposal = x + t * direction
        log_density_proposal = _safe_log_density(log_density, proposal)
        if log_density_proposal > log_level:
            return proposal, log_density_proposal
        if t < 0.0:
            left = t
        else:
            right = t
    return x, log_density_x


def slice_sample(
    log_density: Callable[[np.ndarray], float],
    x0: np.ndarray | Sequence[float] | float,
    n_samples: int,
    rng: np.random.Generator | int | None = None,
    *,
    widths: np.ndarray | Sequence[float] | float = 1.0,
    burn_in: int = 0,
    thin: int = 1,
    max_steps_out: int = 10,
    bounds: np.ndarray | Sequence[tuple[float, float]] | None = None,
    method: Literal["coordinate", "random_direction"] = "coordinate",
) -> np.ndarray:
    """Draw from an unnormalised density by slice sampling (Neal, 2003).

    Each *sweep* updates the state with univariate slice sampling, stepping out and shrinkage:
    ``method="coordinate"`` updates every coordinate in turn (``d`` univariate updates per
    sweep); ``method="random_direction"`` makes one update along a random direction (uniform
    on the sphere, scaled per coordinate by ``widths``), as Spearmint does for GP
    lengthscales. Both leave the target invariant; the chain starts at ``x0``.

    Parameters
    ----------
    log_density
        Unnormalised log density of a point of shape ``(d,)``. ``-inf``, NaN and any
        exception raised count as zero density (outside the support).
    x0
        Starting point, shape ``(d,)`` (a scalar for ``d = 1``); its density must be positive.
    n_samples
        Number of returned samples.
    rng
        Random generator or seed.
    widths
        Initial interval width ``w`` per coordinate (scalar or shape ``(d,)``), best about the
        scale of the target along that coordinate. Stepping out corrects a too-small width at
        linear cost, shrinkage a too-large one at logarithmic cost.
    burn_in
        Sweeps discarded before the first returned sample.
    thin
        Sweeps per returned sample (1: every sweep is returned).
    max_steps_out
        At most this many steps of size ``w`` beyond the initial interval, split at random
        between the two sides (Neal's ``m - 1``); 0 disables stepping out.
    bounds
        Optional known support ``[(low, high), ...]`` of shape ``(d, 2)``; the density must be
        zero outside. Intervals are clipped to it, which saves the evaluations that would find
        the density zero there. Coordinates with ``low == high`` stay fixed.
    method
        ``"coordinate"`` or ``"random_direction"``.

    Returns
    -------
    numpy.ndarray
        Samples of shape ``(n_samples, d)``; sample ``k`` is the state after
        ``burn_in + (k + 1) * thin`` sweeps.

    Raises
    ------
    ValueError
        If ``x0`` has zero density (or its evaluation raises), or an argument is invalid.

    References
    ----------
    R. M. Neal. Slice sampling. The Annals of Statistics 31(3), 705-767, 2003 (Fig. 3 stepping
    out, Fig. 5 shrinkage, section 5.2 random directions).
    """
    x = np.atleast_1d(np.asarray(x0, dtype=float)).copy()
    if x.ndim != 1:
        raise ValueError(f"x0 must be a scalar or a vector, got shape {x.shape}.")
    d = len(x)
    widths_ = np.broadcast_to(np.asarray(widths, dtype=float), (d,)).copy()
    if not np.all(np.isfinite(widths_)) or np.any(widths_ <= 0):
        raise ValueError(f"widths must be positive and finite, got {widths_}.")
    if n_samples < 0 or burn_in < 0 or thin < 1 or max_steps_out < 0:
        raise ValueError("Need n_samples >= 0, burn_in >= 0, thin >= 1 and max_steps_out >= 0.")
    if method not in ("coordinate", "random_direction"):
        raise ValueError(f"method must be 'coordinate' or 'random_direction', got {method!r}.")
    if bounds is None:
        lower, upper = np.full(d, -math.inf), np.full(d, math.inf)
    else:
        lower, upper = np.asarray(bounds, dtype=float).reshape(d, 2).T
        if np.any(lower > upper) or np.any(x < lower) or np.any(x > upper):
            raise ValueError("bounds must satisfy low <= x0 <= high in every coordinate.")
    rng = np.random.default_rng(rng)

    # The starting point is evaluated unguarded: an exception here is a bug worth seeing.
    log_density_x = float(log_density(x))
    if not log_density_x > -math.inf:  # also catches NaN
        raise ValueError(f"log_density(x0) must be finite, got {log_density_x}.")

    free = np.flatnonzero(lower < upper)
    samples = np.empty((n_samples, d))
    for sweep in range(burn_in + n_samples * thin):
        if method == "coordinate":
            for j in free:
                direction = np.zeros(d)
                direction[j] = widths_[j]
                t_bounds = ((lower[j] - x[j]) / widths_[j], (upper[j] - x[j]) / widths_[j])
                x, log_density_x = _slice_step_along(
                    log_density, x, log_density_x, direction, t_bounds, max_steps_out, rng
                )
        elif len(free):
            direction = np.zeros(d)
            unit = rng.standard_normal(len(free))
            direction[free] = widths_[free] * unit / np.linalg.norm(unit)
            t_bounds = _direction_range(x, direction, lower, upper)
            x, log_density_x = _slice_step_along(
                log_density, x, log_density_x, direction, t_bounds, max_steps_out, rng
            )
        done = sweep + 1 - burn_in
        if done > 0 and done % thin == 0:
            samples[done // thin - 1] = x
    return samples


# ------------------------------------------------------------------------------ GP hyperparameters
def default_widths(gp: GaussianProcessRegressor) -> np.ndarray:
    """Initial slice widths for the internal hyperparameters ``theta`` of a fitted ``gp``."""
    n_groups = len(gp.hyperparameter_bounds()) - 3
    return np.array(
        [LOG_LENGTHSCALE_WIDTH] * n_groups
        + [LOG_SIGNAL_VARIANCE_WIDTH, LOG_NOISE_VARIANCE_WIDTH, MEAN_WIDTH]
    )


def _log_posterior_value(gp: GaussianProcessRegressor, theta: np.ndarray) -> float:
    # Slice sampling needs only the value: no kernel inverse, no gradient.
    return float(gp.log_posterior(theta, eval_gradient=False))


def _usable_start(gp: GaussianProcessRegressor, theta: np.ndarray | None) -> np.ndarray | None:
    # A warm start from a previous proposal may not fit this model (another search space, a
    # different number of groups, or zero density after a change of mean): fall back to the MAP.
    if theta is None:
        return None
    theta = np.asarray(theta, dtype=float)
    if theta.shape != gp.theta_.shape:
        return None
    theta = theta.copy()
    bounds = gp.hyperparameter_bounds()
    fixed = bounds[:, 0] == bounds[:, 1]
    theta[fixed] = bounds[fixed, 0]
    if not _safe_log_density(lambda t: _log_posterior_value(gp, t), theta) > -math.inf:
        return None
    return theta


def sample_hyperparameter_models(
    gp: GaussianProcessRegressor,
    n_samples: int = 10,
    rng: np.random.Generator | int | None = None,
    *,
    burn_in: int | None = None,
    thin: int = 1,
    initial_theta: np.ndarray | None = None,
    widths: np.ndarray | float | None = None,
    max_steps_out: int = 10,
    method: Literal["coordinate", "random_direction"] = "coordinate",
) -> list[GaussianProcessRegressor]:
    """GP copies whose hyperparameters are slice samples from their posterior.

    The chain targets ``gp.log_posterior`` (log marginal likelihood of the standardised
    targets plus the Gamma log priors when ``gp.use_priors``) within
    ``gp.hyperparameter_bounds()``; the constant mean stays at 0 when ``gp.mean == "zero"``
    (its bounds are ``(0, 0)``). Averaging an acquisition over the returned models
    (:class:`~bore_samplers.acquisitions.base.ModelAverage`) is the integrated acquisition of
    Snoek et al. (2012).

    Parameters
    ----------
    gp
        A fitted GP; its :attr:`theta_` (the MAP after ``fit`` with ``optimize=True``) is the
        default start of the chain.
    n_samples
        Number of models ``M`` (Snoek et al. use 10).
    rng
        Random generator or seed.
    burn_in
        Sweeps discarded first. ``None``: :data:`COLD_BURN_IN` (10) from the MAP,
        :data:`WARM_BURN_IN` (2) when continuing from ``initial_theta``.
    thin
        Sweeps between returned samples. Consecutive sweeps are correlated, but for an
        average over ``M`` models more sweeps buy little at their cost, hence 1.
    initial_theta
        Start of the chain instead of ``gp.theta_``, typically the last sample of the previous
        proposal (``models[-1].theta_``) so that one chain continues across proposals and
        needs only a short burn-in. Ignored (the MAP is used, with the cold burn-in) if its
        shape does not match or its posterior density is zero.
    widths
        Initial slice widths on the internal scale; ``None``: 1.5 for log lengthscales and
        log signal variance, 3 for log noise variance, 1 for the mean.
    max_steps_out
        Stepping-out limit of :func:`slice_sample`.
    method
        ``"coordinate"`` (default) or ``"random_direction"`` updates (:func:`slice_sample`).

    Returns
    -------
    list of GaussianProcessRegressor
        ``gp.with_theta(theta)`` for each sample, in chain order; the last one's ``theta_``
        is the state to continue from.

    References
    ----------
    J. Snoek, H. Larochelle, R. P. Adams. Practical Bayesian optimization of machine learning
    algorithms. NeurIPS 2012, section 3.2.

    I. Murray, R. P. Adams. Slice sampling covariance hyperparameters of latent Gaussian
    models. NeurIPS 2010.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}.")
    bounds = gp.hyperparameter_bounds()  # raises if gp is not fitted
    start = _usable_start(gp, initial_theta)
    if burn_in is None:
        burn_in = COLD_BURN_IN if start is None else WARM_BURN_IN
    if start is None:
        start = gp.theta_
    thetas = slice_sample(
        lambda theta: _log_posterior_value(gp, theta),
        start,
        n_samples,
        rng,
        widths=default_widths(gp) if widths is None else widths,
        burn_in=burn_in,
        thin=thin,
        max_steps_out=max_steps_out,
        bounds=bounds,
        method=method,
    )
    return [gp.with_theta(theta) for theta in thetas]


# ------------------------------------------------------------------------------ acquisitions
