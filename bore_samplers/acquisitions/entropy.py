"""Constrained max-value entropy search (cMES) acquisition functions.

Perrone et al., "Constrained Bayesian Optimization with Max-Value Entropy Search" (the paper):
section 3 and supplement A.1-A.6. We minimise an objective ``y(x)`` subject to constraints
``c_k(x) <= delta_k``; ``y_*`` is the constrained minimum (eq. 1). The acquisition is the mutual
information between what an evaluation at ``x`` reveals and ``y_*``, averaged over Monte Carlo
samples of ``y_*``:

* :func:`sample_constrained_minimum` draws ``y_*`` by jointly dependent Thompson sampling on a
  finite candidate set (section 3, A.4); an independent "mean-field" sampler is available for
  ablations only.
* :func:`cmes_real_valued` is the closed form for real-valued constraint feedback (A.1), for any
  number of independent constraints, with the optional noisy-target variant of A.2.
* :func:`cmes_binary` is the closed form for binary feedback (section 3, A.3) with the Laplace
  approximation ``Q(z_c) Q(c | z_c)``, and the "objective observed only where feasible" mixture
  of A.6 (using the constraint-only score of A.5).

Both acquisitions take posterior marginals (means and variances) at a batch of points, return
shape ``(n_points,)``, higher is better, and are computed in log space so that they stay finite
for any finite input. :func:`cmes_real_valued_with_grad` and :func:`cmes_binary_with_grad` also
return the exact derivatives with respect to those means and variances (the same computation
with the chain rule carried along), and :func:`cmes_information_gain_with_grad` the gradient
with respect to the features, so that a gradient-based optimiser needs no finite differences.

Binary feedback convention: ``z_c = +1`` means infeasible (a crashed trial),
``P(z_c = +1 | c) = sigma(c)``, and the latent threshold is ``delta = logit(p)`` for the
confidence parameter ``p = sigma(delta)`` (section 2); fit the
:class:`~bore_samplers.models.gp_classification.GaussianProcessClassifier` with crashed trials as
the positive class.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.special import expit, log_expit, log_ndtr

from bore_samplers.acquisitions.base import Acquisition, ModelAverage
from bore_samplers.acquisitions.feasibility import (
    FEASIBILITY_MARGIN,
    VARIANCE_FLOOR,
    LatentModel,
    binary_feasibility_threshold,
    latent_mean_var,
)
from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.model_set import ModelSet

__all__ = [
    "ConstrainedMaxValueEntropy",
    "constrained_mes",
    "cmes_binary",
    "cmes_binary_with_grad",
    "cmes_information_gain",
    "cmes_information_gain_with_grad",
    "cmes_real_valued",
    "cmes_real_valued_with_grad",
    "sample_constrained_minimum",
    "y_star_margin",
]

Y_STAR_SAMPLERS = ("joint", "joint_exact", "mean_field")

# z-scores are clipped to +-GAMMA_MAX. Beyond it every probability involved is below e^-450,
# and the cancellation between -log Z and the hazard terms (both ~ gamma^2 / 2) would cost
# about eps * gamma^4 of absolute accuracy; at 30 that is ~1e-10.
GAMMA_MAX = 30.0
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Samples of ``y*`` lie at least this many noise deviations below the incumbent, and at least
#: ``Y_STAR_MIN_MARGIN``, but never need to lie more than ``Y_STAR_MAX_MARGIN`` (standardised
#: units) below it (see :func:`constrained_mes`). The minimum is the margin at a noise variance
#: of 1e-6: a GP fitted to noise-free values now reaches 1e-10 (models/priors.py), and five of
#: its noise deviations would no longer keep MES off the incumbent.
Y_STAR_NOISE_MARGIN = 5.0
Y_STAR_MIN_MARGIN = 0.005
Y_STAR_MAX_MARGIN = 0.01


# ---------------------------------------------------------------------------- sampling of y_*
def sample_constrained_minimum(
    objective_model: GaussianProcessRegressor,
    constraint_models: Sequence[LatentModel],
    candidate_features: np.ndarray,
    *,
    n_samples: int = 10,
    constraint_thresholds: Sequence[float] | None = None,
    method: Literal["joint", "joint_exact", "mean_field"] = "joint",
    rng: np.random.Generator | int | None = None,
    n_features: int = 512,
) -> np.ndarray:
    """Samples of the constrained minimum ``y_*`` by Thompson sampling on a finite set (A.4).

    For each sample, one joint posterior draw of the objective and of every constraint latent is
    taken on ``candidate_features`` (the paper uses 2000 Sobol points; add the observed points),
    and ``y_*`` is the smallest sampled objective value among the points where every sampled
    constraint satisfies ``c_k <= delta_k``; ``+inf`` when no point is feasible in that draw.

    Parameters
    ----------
    objective_model
        Fitted GP of the objective (for binary feedback with the objective observed only where
        feasible, A.6, fitted on the feasible trials only).
    constraint_models
        Fitted constraint models: a :class:`GaussianProcessRegressor` for real-valued feedback,
        a :class:`GaussianProcessClassifier` (crashed = positive class) for binary feedback, whose
        latent Laplace posterior is sampled jointly
        (:meth:`GaussianProcessClassifier.predict_latent_cov`).
    candidate_features
        Feature matrix of the discretisation set, shape ``(m, d)``, e.g.
        ``space.features(space.sample_sobol(2000, seed))`` stacked with the observed features.
    n_samples
        Number of ``y_*`` samples ``K`` (the paper finds 10 enough, Tables 5-6).
    constraint_thresholds
        ``delta_k`` per constraint; default 0 (``c_k <= 0``; for binary feedback ``p = 0.5``,
        see :func:`binary_feasibility_threshold`).
    method
        ``"joint"`` (default): jointly dependent sampling (the paper's method, section 3), with
        every model sampled by pathwise conditioning
        (:meth:`GaussianProcessRegressor.sample_pathwise`,
        :meth:`GaussianProcessClassifier.sample_latent_pathwise`: an exact posterior update of
        a random-Fourier-feature prior draw, ``O(m (n + F))``). ``"joint_exact"``: every
        model sampled exactly from its joint posterior on the set, ``O(m^3)`` (a quarter
        second per model for ``m = 2200``; the two agree on the distribution of ``y_*``, see
        ``tests/test_cmes.py``).
        ``"mean_field"``: every point sampled independently from its marginal, the
        factorised approximation of Wang & Jegelka the paper shows to be biased low and
        divergent as ``m`` grows (Fig. 1). For ablations only.
    n_features
        Random Fourier features of the pathwise prior draws (``method="joint"``).
    rng
        Generator or seed; equal seeds give equal samples.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_samples,)``, possibly containing ``+inf``.
    """
    if method not in Y_STAR_SAMPLERS:
        raise ValueError(f"method must be one of {Y_STAR_SAMPLERS}, got {method!r}.")
    rng = np.random.default_rng(rng)
    X = np.atleast_2d(np.asarray(candidate_features, dtype=float))
    thresholds = (
        np.zeros(len(constraint_models))
        if constraint_thresholds is None
        else np.asarray(constraint_thresholds, dtype=float)
    )
    if len(thresholds) != len(constraint_models):
        raise ValueError("Need one threshold per constraint model.")

    def draw(model: LatentModel) -> np.ndarray:
        regressor = isinstance(model, GaussianProcessRegressor)
        if method == "joint" and regressor:
            return model.sample_pathwise(X, n_samples, rng, n_features=n_features)
        if method == "joint":
            return model.sample_latent_pathwise(X, n_samples, rng, n_features=n_features)
        if method == "joint_exact":
            if regressor:
                return model.sample_joint(X, n_samples, rng)
            return model.sample_latent_joint(X, n_samples, rng)
        normals = rng.standard_normal((n_samples, len(X)))
        mean, var = latent_mean_var(model, X)
        return mean + normals * np.sqrt(np.maximum(var, 0.0))

    objective_samples = draw(objective_model)
    feasible = np.ones_like(objective_samples, dtype=bool)
    for model, delta in zip(constraint_models, thresholds, strict=True):
        feasible &= draw(model) <= delta
    return np.min(np.where(feasible, objective_samples, np.inf), axis=1)


# ---------------------------------------------------------------------------- closed forms
def _z_scores(threshold: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``(threshold - mean) / std``, clipped to ``+-GAMMA_MAX`` except that ``+inf`` stays.

    ``threshold = +inf`` (``y_* = +inf``: no feasible point in the sample) is the exact limit
    "every value is below the threshold" and is handled by the callers.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gamma = (threshold - mean) / std
    return np.where(np.isposinf(threshold), np.inf, np.clip(gamma, -GAMMA_MAX, GAMMA_MAX))


def _z_score_partials(
    gamma: np.ndarray,
    raw_var: np.ndarray,
    var: np.ndarray,
    noise_var: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``d gamma / d mean`` and ``d gamma / d raw_var`` of ``gamma = (t - mean) / (sigma rho)``.

    ``var = max(raw_var, VARIANCE_FLOOR)`` and ``sigma rho = var / sqrt(var + noise)`` (A.2;
    ``sigma`` without noise), so ``d log(sigma rho) / d var = (var + 2 noise) / (2 var (var +
    noise))``. Both derivatives are 0 where :func:`_z_scores` clipped ``gamma`` or it is
    ``+inf`` (the value is constant there), the variance one also where the floor applies.
    """
    active = np.abs(gamma) < GAMMA_MAX
    safe = np.where(active, gamma, 0.0)
    d_mean = np.where(active, -1.0 / _effective_std(var, noise_var), 0.0)
    # gamma / var times a factor in [1, 2]: no var**2, which would underflow near the floor.
    d_var = -0.5 * safe / var * ((var + 2.0 * noise_var) / (var + noise_var))
    return d_mean, np.where(active & (raw_var >= VARIANCE_FLOOR), d_var, 0.0)


def _log_scaled_hazard(gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log |gamma h(-gamma)|`` and ``sign(gamma)``, with ``h(x) = N(x) / Phi(-x)``.

    ``gamma h(-gamma) = gamma N(gamma) / Phi(gamma)`` is the hazard term of A.1; it vanishes
    at ``gamma = 0`` and ``gamma = +inf`` (log value ``-inf``).
    """
    finite = np.isfinite(gamma)
    safe = np.where(finite, gamma, 0.0)
    with np.errstate(divide="ignore"):
        log_abs = np.log(np.abs(safe)) - 0.5 * safe**2 - LOG_SQRT_2PI - log_ndtr(safe)
    return np.where(finite, log_abs, -np.inf), np.sign(safe)


def _entropy_reduction_orthant(
    gammas: np.ndarray, with_grad: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """``H[P] - H[P | y_*]`` for ``P | y_* ~ P * (1 - prod_j I{n_j <= gamma_j})``.

    Generalisation of A.1 to ``J`` independent standard-normal coordinates (objective and
    ``K`` constraints), see :func:`cmes_real_valued`:
    ``E = -log Z - (B / 2) sum_j gamma_j h(-gamma_j)``, ``Z = 1 - prod_j Phi(gamma_j)``,
    ``B = prod_j Phi(gamma_j) / Z``.

    Derivatives (``with_grad``): with ``r_j = h(-gamma_j) = N(gamma_j) / Phi(gamma_j)``,
    ``P = prod_j Phi(gamma_j)`` and ``S = sum_i gamma_i r_i``, ``dP / dgamma_j = P r_j`` gives
    ``d(-log Z) / dgamma_j = B r_j`` and ``dB / dgamma_j = B r_j / Z = B r_j (1 + B)``, and
    ``dr / dgamma = -r (gamma + r)`` gives ``d(gamma r) / dgamma = r (1 - gamma (gamma + r))``;
    together

    ``dE / dgamma_j = (B r_j / 2) (1 + gamma_j (gamma_j + r_j) - (1 + B) S)``.

    ``B r_j <= h(gamma_j)`` is moderate, but ``1 + B = 1 / Z`` reaches ``1e197`` where ``S``
    is ``1e-196`` (every ``gamma`` near ``GAMMA_MAX``), so ``(1 + B) S`` is formed from
    ``-log Z`` and ``log |S|``.

    Parameters
    ----------
    gammas
        Shape ``(..., J)``; entries ``+inf`` mean "always below the threshold".
    with_grad
        Also return ``dE / dgamma_j``, shape ``(..., J)``, 0 at the ``+inf`` entries.

    Returns
    -------
    value, d_gammas
        ``E`` of shape ``gammas.shape[:-1]``; its derivatives or ``None``.
    """
    log_cdf = log_ndtr(gammas)  # log Phi(gamma_j), 0 for +inf
    log_tail = log_ndtr(-gammas)  # log(1 - Phi(gamma_j)), -inf for +inf
    # 1 - prod_j Phi_j = sum_j (1 - Phi_j) prod_{i<j} Phi_i, a sum of non-negative terms, so
    # log Z has no cancellation even when prod_j Phi_j rounds to 1.
    log_prefix = np.cumsum(log_cdf, axis=-1) - log_cdf
    # logaddexp's reduction, not scipy's logsumexp: equal here, at a quarter of the cost on the
    # few points per call of the acquisition optimiser.
    log_z = np.logaddexp.reduce(log_tail + log_prefix, axis=-1)
    log_all = np.sum(log_cdf, axis=-1)
    # Z = 0 only when every gamma_j is +inf (y_* = +inf without constraints): the event that
    # y_* contradicts has probability 1 and no information can be gained; return 0 there.
    degenerate = np.isneginf(log_z)
    log_z = np.where(degenerate, 0.0, log_z)
    log_b = log_all - log_z
    log_hazard, sign = _log_scaled_hazard(gammas)
    hazard_sum = np.sum(sign * np.exp(log_b[..., None] + log_hazard), axis=-1)
    value = np.where(degenerate, 0.0, -log_z - 0.5 * hazard_sum)
    if not with_grad:
        return value, None

    finite = np.isfinite(gammas)
    safe = np.where(finite, gammas, 0.0)
    log_ratio = -0.5 * safe**2 - LOG_SQRT_2PI - log_cdf  # log r_j (garbage at +inf, masked)
    log_b_ratio = log_b[..., None] + log_ratio
    # S = exp(shift) * scaled_s, a signed sum scaled by its largest term.
    shift = np.max(log_hazard, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    scaled_s = np.sum(sign * np.exp(log_hazard - shift), axis=-1, keepdims=True)
    own = np.exp(log_b_ratio) * (1.0 + safe * (safe + np.exp(log_ratio)))
    shared = scaled_s * np.exp(log_b_ratio - log_z[..., None] + shift)  # B r_j (1 + B) S
    d_gammas = 0.5 * (own - shared)
    return value, np.where(finite & ~degenerate[..., None], d_gammas, 0.0)


def _as_matrix(values: np.ndarray | Sequence[np.ndarray], n_points: int) -> np.ndarray:
    """Constraint statistics as shape ``(n_points, K)`` (K may be 0).

    An array is read as ``(n_points, K)``; a list or tuple as ``K`` arrays of shape
    ``(n_points,)`` (stacked as columns, so that ``K == n_points`` is not ambiguous).
    """
    if isinstance(values, np.ndarray):
        array = values.astype(float)
        array = array[:, None] if array.ndim == 1 else array
    elif len(values) == 0:
        array = np.zeros((n_points, 0))
    else:
        array = np.column_stack([np.asarray(v, dtype=float).ravel() for v in values])
    if array.ndim != 2 or array.shape[0] != n_points:
        raise ValueError(
            f"Constraint statistics must have shape (n_points, K) = ({n_points}, K), "
            f"got {array.shape}."
        )
    return array


def _effective_std(var: np.ndarray, noise_var: np.ndarray | float) -> np.ndarray:
    """``sigma rho`` of A.2: ``sigma^2 / sqrt(sigma^2 + noise)``; ``sigma`` without noise."""
    var = np.maximum(var, VARIANCE_FLOOR)
    return var / np.sqrt(var + noise_var)


def _check_y_star(y_star_samples: np.ndarray) -> np.ndarray:
    y_star = np.atleast_1d(np.asarray(y_star_samples, dtype=float))
    if np.any(np.isnan(y_star)) or np.any(np.isneginf(y_star)):
        raise ValueError("y_star_samples must be finite or +inf.")
    return y_star


def _cmes_real_valued(
    objective_mean: np.ndarray,
    objective_var: np.ndarray,
    constraint_means: np.ndarray | Sequence[np.ndarray],
    constraint_vars: np.ndarray | Sequence[np.ndarray],
    y_star_samples: np.ndarray,
    constraint_thresholds: Sequence[float] | None,
    objective_noise_var: float,
    constraint_noise_vars: Sequence[float] | None,
    with_grad: bool,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None]:
    """:func:`cmes_real_valued` and, ``with_grad``, its derivatives with respect to the means
    and variances (chain rule from :func:`_entropy_reduction_orthant` through
    :func:`_z_score_partials`)."""
    mean_y = np.atleast_1d(np.asarray(objective_mean, dtype=float))
    n_points = len(mean_y)
    raw_var_y = np.atleast_1d(np.asarray(objective_var, dtype=float))
    var_y = np.maximum(raw_var_y, VARIANCE_FLOOR)
    means_c = _as_matrix(constraint_means, n_points)
    raw_vars_c = _as_matrix(constraint_vars, n_points)
    vars_c = np.maximum(raw_vars_c, VARIANCE_FLOOR)
    K = means_c.shape[1]
    deltas = np.zeros(K) if constraint_thresholds is None else np.asarray(constraint_thresholds)
    noise_c = np.zeros(K) if constraint_noise_vars is None else np.asarray(constraint_noise_vars)
    y_star = _check_y_star(y_star_samples)

    gamma_c = _z_scores(deltas[None, :], means_c, _effective_std(vars_c, noise_c[None, :]))
    std_y = _effective_std(var_y, objective_noise_var)
    gamma_y = _z_scores(y_star[:, None], mean_y[None, :], std_y[None, :])  # (S, n)
    gammas = np.concatenate(
        [gamma_y[..., None], np.broadcast_to(gamma_c, (len(y_star), n_points, K))], axis=-1
    )
    values, d_gammas = _entropy_reduction_orthant(gammas, with_grad)
    value = np.mean(values, axis=0)
    if d_gammas is None:
        return value, None
    d_mean_y, d_var_y = _z_score_partials(gamma_y, raw_var_y, var_y, objective_noise_var)
    d_mean_c, d_var_c = _z_score_partials(gamma_c, raw_vars_c, vars_c, noise_c[None, :])
    d_gamma_y = d_gammas[..., 0]
    d_gamma_c = np.mean(d_gammas[..., 1:], axis=0)  # gamma_c is the same for every y_*
    return value, (
        np.mean(d_gamma_y * d_mean_y, axis=0),
        np.mean(d_gamma_y * d_var_y, axis=0),
        d_gamma_c * d_mean_c,
        d_gamma_c * d_var_c,
    )


def cmes_real_valued(
    objective_mean: np.ndarray,
    objective_var: np.ndarray,
    constraint_means: np.ndarray | Sequence[np.ndarray],
    constraint_vars: np.ndarray | Sequence[np.ndarray],
    y_star_samples: np.ndarray,
    *,
    constraint_thresholds: Sequence[float] | None = None,
    objective_noise_var: float = 0.0,
    constraint_noise_vars: Sequence[float] | None = None,
) -> np.ndarray:
    """cMES for real-valued constraint feedback (A.1, eq. 3), any number of constraints.

    For fixed ``y_*``, conditioning on it says: if ``x`` is feasible it cannot beat ``y_*``,
    ``P(y, c | y_*) = Z^-1 P(y) prod_k P(c_k) kappa`` with
    ``kappa = 1 - I{y <= y_*} prod_k I{c_k <= delta_k}``. With the standardised coordinates
    ``n_j`` and z-scores ``gamma_y = (y_* - mu_y) / sigma_y``,
    ``gamma_k = (delta_k - mu_k) / sigma_k`` (``j`` running over the objective and the ``K``
    constraints, all independent a posteriori), the derivation of A.1 goes through unchanged:

    * ``Z = E[kappa] = 1 - Z_y prod_k Z_k`` with ``Z_j = Phi(gamma_j)`` (the probability of
      being feasible and better becomes the product over all coordinates);
    * ``E[prod_i I{n_i <= gamma_i} n_j^2] = (prod_{i != j} Z_i)(Z_j - gamma_j N(gamma_j))``
      ``= Z_all (1 - gamma_j h(-gamma_j))`` with ``Z_all = prod_i Z_i`` and
      ``h(x) = N(x) / Phi(-x)``, so the ``J = K + 1`` quadratic terms add up;

    which gives

    ``H[P(y, c)] - H[P(y, c | y_*)] = -log Z - (B / 2) sum_j gamma_j h(-gamma_j)``,
    ``B = Z_all / Z = 1 / (exp(-log Z_y - sum_k log Z_k) - 1)``.

    For ``K = 1`` this is A.1's formula and for ``K = 0`` MES (minimisation form). The result
    is averaged over the ``y_*`` samples (the Monte Carlo estimate of the expectation in eq. 3).
    ``y_* = +inf`` (no feasible point in a sample) is the limit ``Z_y = 1``,
    ``gamma_y h(-gamma_y) = 0``: only the information about feasibility remains.

    Numerics: ``log Z`` is a log-sum-exp of non-negative terms
    (``1 - prod Phi_j = sum_j Phi(-gamma_j) prod_{i<j} Phi_i``), ``B gamma_j h(-gamma_j)`` is
    exponentiated from a sum of logs, and z-scores are clipped to ``+-GAMMA_MAX``.

    Parameters
    ----------
    objective_mean, objective_var
        Posterior marginals of the (latent) objective, shape ``(n,)``.
    constraint_means, constraint_vars
        Posterior marginals of the constraints, shape ``(n, K)`` or a list of ``K`` arrays of
        shape ``(n,)``.
    y_star_samples
        Samples of ``y_*``, shape ``(S,)``; ``+inf`` allowed.
    constraint_thresholds
        ``delta_k``; default 0.
    objective_noise_var, constraint_noise_vars
        Gaussian observation noise variances for the noisy-target variant of A.2 (eq. 4 with
        ``P(y | z_y)`` collapsed to its mean): every ``sigma`` becomes
        ``sigma rho = sigma^2 / sqrt(sigma^2 + noise)``. 0 (default): the noise-free eq. 3.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``; higher is better; non-negative up to rounding (tested).
    """
    return _cmes_real_valued(
        objective_mean,
        objective_var,
        constraint_means,
        constraint_vars,
        y_star_samples,
        constraint_thresholds,
        objective_noise_var,
        constraint_noise_vars,
        with_grad=False,
    )[0]


def cmes_real_valued_with_grad(
    objective_mean: np.ndarray,
    objective_var: np.ndarray,
    constraint_means: np.ndarray | Sequence[np.ndarray],
    constraint_vars: np.ndarray | Sequence[np.ndarray],
    y_star_samples: np.ndarray,
    *,
    constraint_thresholds: Sequence[float] | None = None,
    objective_noise_var: float = 0.0,
    constraint_noise_vars: Sequence[float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`cmes_real_valued` (eq. 3 via A.1, A.2 with noise) and its exact derivatives.

    Per ``y_*`` sample the value is ``E(gamma) = -log Z - (B / 2) sum_j gamma_j r_j`` with
    ``r_j = N(gamma_j) / Phi(gamma_j)``, whose partials are (derived in
    :func:`_entropy_reduction_orthant`)

    ``dE / dgamma_j = (B r_j / 2) (1 + gamma_j (gamma_j + r_j) - (1 + B) S)``,
    ``S = sum_i gamma_i r_i``;

    the chain rule through ``gamma_y = (y_* - mu_y) / sigma_y``,
    ``gamma_k = (delta_k - mu_k) / sigma_k``, ``sigma = sqrt(var)`` gives
    ``dgamma / dmu = -1 / sigma`` and ``dgamma / dvar = -gamma / (2 var)``. Where a z-score is
    clipped at ``+-GAMMA_MAX`` or is ``+inf`` (``y_* = +inf``) its derivatives are 0, as are
    those with respect to a variance below ``VARIANCE_FLOOR``, consistently with the value.
    Every product of a huge and a tiny factor is formed in log space, so that the result is
    finite for finite inputs.

    Parameters
    ----------
    objective_mean, objective_var, constraint_means, constraint_vars, y_star_samples,
    constraint_thresholds, objective_noise_var, constraint_noise_vars
        As for :func:`cmes_real_valued`.

    Returns
    -------
    value, d_objective_mean, d_objective_var, d_constraint_means, d_constraint_vars
        The value (equal to :func:`cmes_real_valued`'s) and its partial derivatives with
        respect to the posterior means and *variances*; shapes ``(n,)``, ``(n,)``, ``(n,)``,
        ``(n, K)``, ``(n, K)``.
    """
    value, grads = _cmes_real_valued(
        objective_mean,
        objective_var,
        constraint_means,
        constraint_vars,
        y_star_samples,
        constraint_thresholds,
        objective_noise_var,
        constraint_noise_vars,
        with_grad=True,
    )
    assert grads is not None
    return (value, *grads)


# ---------------------------------------------------------------------------- binary feedback
def _laplace(
    mean_c: np.ndarray, var_c: np.ndarray, n_newton_steps: int, with_grad: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...] | None]:
    """:func:`_laplace_conditionals` plus, ``with_grad``, the tangents of its three outputs
    along ``(mean_c, var_c)``, each of shape ``(2, n, 2)`` (forward mode through every step).
    """
    z = np.array([-1.0, 1.0])[:, None]
    kappa = 1.0 / np.sqrt(1.0 + math.pi * var_c / 8.0)
    log_q = log_expit(z * mean_c[None, :] * kappa)
    mode = np.broadcast_to(mean_c, (2, len(mean_c))).copy()
    if with_grad:
        # Tangent directions on a last axis: d mean_c = (1, 0), d var_c = (0, 1).
        d_mean, d_var = np.array([1.0, 0.0]), np.array([0.0, 1.0])
        d_kappa = (-(math.pi / 16.0) * kappa**3)[:, None] * d_var  # kappa = (1 + pi v / 8)^-1/2
        d_a = z[..., None] * (kappa[:, None] * d_mean + mean_c[:, None] * d_kappa)
        d_log_q = expit(-z * mean_c[None, :] * kappa)[..., None] * d_a  # (log sigma)' = sigma(-a)
        d_mode = np.broadcast_to(d_mean, (2, len(mean_c), 2))
    for _ in range(n_newton_steps):
        curvature = expit(mode) * expit(-mode)
        # Newton step on log sigma(z c) - (c - mu)^2 / (2 s^2), multiplied through by s^2.
        numerator = var_c * z * expit(-z * mode) - (mode - mean_c)
        denominator = 1.0 + var_c * curvature
        step = numerator / denominator
        if with_grad:
            # sigma(-z m)' = -z curvature (z^2 = 1), curvature' = -curvature tanh(m / 2).
            d_curvature = (-curvature * np.tanh(0.5 * mode))[..., None] * d_mode
            d_numerator = (
                (z * expit(-z * mode))[..., None] * d_var
                - (var_c * curvature + 1.0)[..., None] * d_mode
                + d_mean
            )
            d_denominator = curvature[..., None] * d_var + var_c[:, None] * d_curvature
            d_mode = (
                d_mode + (d_numerator - step[..., None] * d_denominator) / denominator[..., None]
            )
        mode = mode + step
    var = var_c / (1.0 + var_c * expit(mode) * expit(-mode))
    if not with_grad:
        return log_q, mode, var, None
    # var = v / (1 + v c): d var = (dv - v^2 dc) / (1 + v c)^2, written without v^2.
    curvature = expit(mode) * expit(-mode)
    shrink = var / var_c
    d_curvature = (-curvature * np.tanh(0.5 * mode))[..., None] * d_mode
    d_post_var = (shrink**2)[..., None] * d_var - (var**2)[..., None] * d_curvature
    return log_q, mode, var, (d_log_q, d_mode, d_post_var)


def _laplace_conditionals(
    mean_c: np.ndarray, var_c: np.ndarray, n_newton_steps: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log Q(z_c)`` and the Gaussians ``Q(c | z_c)`` for ``z_c = (-1, +1)`` (section 3, A.3).

    ``Q(z_c)``: MacKay's probit approximation of ``int sigma(z_c c) N(c | mu, s^2) dc``
    (Bishop, PRML sect. 4.5.2). ``Q(c | z_c)``: Laplace's approximation of
    ``sigma(z_c c) N(c | mu, s^2)``, the mode found by Newton steps from ``mu`` (the paper uses a
    single step) and the variance ``1 / (s^-2 + sigma(c) sigma(-c))`` at that mode.

    Returns
    -------
    log_q, mode, var
        Each of shape ``(2, n)``, row 0 for ``z_c = -1`` (feasible), row 1 for ``+1``.
    """
    log_q, mode, var, _ = _laplace(mean_c, var_c, n_newton_steps, with_grad=False)
    return log_q, mode, var


def _on_four_inputs(tangent: np.ndarray, first: int) -> np.ndarray:
    """Tangents along two inputs placed at ``first, first + 1`` of the four directions
    ``(objective_mean, objective_var, latent_mean, latent_var)``."""
    padded = np.zeros((*tangent.shape[:-1], 4))
    padded[..., first : first + 2] = tangent
    return padded


def _floor_latent_var(grad: np.ndarray, raw_var_c: np.ndarray) -> np.ndarray:
    """Zero derivative along the latent variance where ``VARIANCE_FLOOR`` replaced it."""
    grad[:, 3] = np.where(raw_var_c >= VARIANCE_FLOOR, grad[:, 3], 0.0)
    return grad


def _cmes_binary(
    objective_mean: np.ndarray,
    objective_var: np.ndarray,
    constraint_latent_mean: np.ndarray,
    constraint_latent_var: np.ndarray,
    y_star_samples: np.ndarray,
    confidence: float,
    objective_observed: str,
    n_newton_steps: int,
    with_grad: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`cmes_binary` and, ``with_grad``, its derivatives, shape ``(n, 4)``, along
    ``(objective_mean, objective_var, latent_mean, latent_var)``.

    The derivatives are propagated forward through each step of the value computation (the
    tangent of every intermediate is an array with a last axis of size 4), by the chain rule
    written out by hand; ``d log Phi(g) = (N(g) / Phi(g)) dg``, log-sum-exps differentiate to
    softmax weights, and ``d x = x d log x`` keeps the log-space structure of the value.
    """
    if objective_observed not in ("always", "if_feasible"):
        raise ValueError("objective_observed must be 'always' or 'if_feasible'.")
    mean_y = np.atleast_1d(np.asarray(objective_mean, dtype=float))
    raw_var_y = np.atleast_1d(np.asarray(objective_var, dtype=float))
    var_y = np.maximum(raw_var_y, VARIANCE_FLOOR)
    std_y = np.sqrt(var_y)
    mean_c = np.atleast_1d(np.asarray(constraint_latent_mean, dtype=float))
    raw_var_c = np.atleast_1d(np.asarray(constraint_latent_var, dtype=float))
    var_c = np.maximum(raw_var_c, VARIANCE_FLOOR)
    y_star = _check_y_star(y_star_samples)
    delta = binary_feasibility_threshold(confidence)

    # Everything about z_c is independent of y_* (section 3) and computed once.
    log_q, mode, var, laplace_tangents = _laplace(mean_c, var_c, n_newton_steps, with_grad)
    gamma_c = np.clip((delta - mode) / np.sqrt(var), -GAMMA_MAX, GAMMA_MAX)
    log_f, log_not_f = log_ndtr(gamma_c), log_ndtr(-gamma_c)  # (2, n)
    q, not_f = np.exp(log_q), np.exp(log_not_f)
    log_zc = np.logaddexp.reduce(log_q + log_f, axis=0)  # log Z~_c
    log_not_zc = np.logaddexp.reduce(log_q + log_not_f, axis=0)  # log(1 - Z~_c)
    # E_Q[(F - Z~_c) log Q - (1 - F) log(1 - F)]: bounded, the Z~_c^-1 of A.3 moved into B.
    # F - Z~_c is written (1 - Z~_c) - (1 - F): where F and Z~_c round to 1 their difference
    # would be rounding noise, which Z_y / Z ~ 1 / (1 - Z~_c) amplifies.
    shared_bracket = np.sum(q * (np.exp(log_not_zc) - not_f) * log_q, axis=0)
    a3_bracket = shared_bracket - np.sum(q * not_f * log_not_f, axis=0)

    gamma_y = _z_scores(y_star[:, None], mean_y[None, :], std_y[None, :])  # (S, n)
    log_zy, log_not_zy = log_ndtr(gamma_y), log_ndtr(-gamma_y)
    # Z = 1 - Z_y Z~_c = (1 - Z_y) + Z_y (1 - Z~_c): log-sum-exp without cancellation.
    log_z = np.logaddexp(log_not_zy, log_zy + log_not_zc)
    log_hazard, sign = _log_scaled_hazard(gamma_y)
    b_hazard = sign * np.exp(log_zy + log_zc - log_z + log_hazard)
    zy_over_z = np.exp(log_zy - log_z)
    a3 = -log_z - 0.5 * b_hazard - zy_over_z * a3_bracket
    if objective_observed == "always":
        value = np.mean(a3, axis=0)
    else:
        # A.5: H[Q(z_c)] - H[P(z_c | y_*)] = -log Z - Z^-1 E_Q[kappa (-log kappa)]
        #      - (Z_y / Z) E_Q[(F - Z~_c) log Q],  kappa(z_c) = 1 - Z_y F(z_c).
        log_kappa = np.logaddexp(log_not_zy[None], log_zy[None] + log_not_f[:, None, :])
        posterior = np.exp(log_q[:, None, :] + log_kappa - log_z[None])  # P(z_c | y_*), (2,S,n)
        kappa_entropy = np.sum(posterior * -log_kappa, axis=0)
        a5 = -log_z - kappa_entropy - zy_over_z * shared_bracket
        value = np.mean(q[0] * a3 + q[1] * a5, axis=0)
    if laplace_tangents is None:
        return value, None

    # ---- constraint side: tangents of shape (2, n, 4), nonzero along latent_mean, latent_var
    d_log_q, d_mode, d_mode_var = (_on_four_inputs(t, 2) for t in laplace_tangents)
    active_c = (np.abs(gamma_c) < GAMMA_MAX)[..., None]  # clipped z-scores are constant
    d_gamma_c = -d_mode / np.sqrt(var)[..., None] - (0.5 * gamma_c / var)[..., None] * d_mode_var
    d_gamma_c = np.where(active_c, d_gamma_c, 0.0)
    log_pdf_c = -0.5 * gamma_c**2 - LOG_SQRT_2PI
    d_log_f = np.exp(log_pdf_c - log_f)[..., None] * d_gamma_c
    d_log_not_f = -np.exp(log_pdf_c - log_not_f)[..., None] * d_gamma_c
    d_log_zc = np.sum(np.exp(log_q + log_f - log_zc)[..., None] * (d_log_q + d_log_f), axis=0)
    d_log_not_zc = np.sum(
        np.exp(log_q + log_not_f - log_not_zc)[..., None] * (d_log_q + d_log_not_f), axis=0
    )
    # The brackets get multiplied by Z_y / Z, up to ~1 / (1 - Z~_c): their tangents are formed
    # from 1 - F and 1 - Z~_c (tiny there) rather than F and Z~_c (~1 with rounding noise).
    # F - Z~_c = (1 - Z~_c) - (1 - F), and d Z~_c = -d(1 - Z~_c) as sum_z q = 1.
    not_zc = np.exp(log_not_zc)
    d_not_zc = not_zc[:, None] * d_log_not_zc
    d_not_f = not_f[..., None] * d_log_not_f
    # d[q (F - Z~_c) log q] = q [(F - Z~_c)(log q + 1) d log q + (d(1 - Z~_c) - d(1 - F)) log q]
    d_shared = np.sum(
        q[..., None]
        * (
            ((not_zc - not_f) * (log_q + 1.0))[..., None] * d_log_q
            + log_q[..., None] * (d_not_zc - d_not_f)
        ),
        axis=0,
    )
    # d[q (1 - F) log(1 - F)] = q (1 - F) [(d log q + d log(1 - F)) log(1 - F) + d log(1 - F)]
    d_a3_bracket = d_shared - np.sum(
        (q * not_f)[..., None] * ((d_log_q + d_log_not_f) * log_not_f[..., None] + d_log_not_f),
        axis=0,
    )

    # ---- objective side: tangents of shape (S, n, 4), nonzero along objective_mean, _var
    d_mean_y, d_var_y = _z_score_partials(gamma_y, raw_var_y, var_y)
    d_gamma_y = _on_four_inputs(np.stack([d_mean_y, d_var_y], axis=-1), 0)
    safe_y = np.where(np.isfinite(gamma_y), gamma_y, 0.0)  # +inf has zero tangents
    log_pdf_y = -0.5 * safe_y**2 - LOG_SQRT_2PI
    log_ratio_y = log_pdf_y - log_ndtr(safe_y)  # log r_y, r_y = N(gamma_y) / Phi(gamma_y)
    d_log_zy = np.exp(log_ratio_y)[..., None] * d_gamma_y
    d_log_not_zy = -np.exp(log_pdf_y - log_ndtr(-safe_y))[..., None] * d_gamma_y

    # ---- both: (S, n, 4)
    d_log_z = np.exp(log_not_zy - log_z)[..., None] * d_log_not_zy + np.exp(
        log_zy + log_not_zc - log_z
    )[..., None] * (d_log_zy + d_log_not_zc)
    # b_hazard = B gamma_y r_y with log B = log Z_y + log Z~_c - log Z, and
    # d(gamma r) / dgamma = r (1 - gamma (gamma + r)).
    log_b = log_zy + log_zc - log_z
    d_b_hazard = (
        b_hazard[..., None] * (d_log_zy + d_log_zc - d_log_z)
        + (np.exp(log_b + log_ratio_y) * (1.0 - safe_y * (safe_y + np.exp(log_ratio_y))))[
            ..., None
        ]
        * d_gamma_y
    )
    d_zy_over_z = zy_over_z[..., None] * (d_log_zy - d_log_z)
    d_a3 = (
        -d_log_z
        - 0.5 * d_b_hazard
        - d_zy_over_z * a3_bracket[:, None]
        - zy_over_z[..., None] * d_a3_bracket
    )
    if objective_observed == "always":
        return value, _floor_latent_var(np.mean(d_a3, axis=0), raw_var_c)

    # kappa = (1 - Z_y) + Z_y (1 - F): softmax weights of the two terms.
    d_log_kappa = np.exp(log_not_zy[None] - log_kappa)[..., None] * d_log_not_zy[None] + np.exp(
        log_zy[None] + log_not_f[:, None, :] - log_kappa
    )[..., None] * (d_log_zy[None] + d_log_not_f[:, None])
    # posterior = q kappa / Z sums to 1 over z_c: bounded weights.
    d_kappa_entropy = np.sum(
        posterior[..., None]
        * ((d_log_q[:, None] + d_log_kappa - d_log_z[None]) * -log_kappa[..., None] - d_log_kappa),
        axis=0,
    )
    d_a5 = (
        -d_log_z
        - d_kappa_entropy
        - d_zy_over_z * shared_bracket[:, None]
        - zy_over_z[..., None] * d_shared
    )
    d_q = q[..., None] * d_log_q  # (2, n, 4)
    d_value = (
        d_q[0] * a3[..., None]
        + q[0][:, None] * d_a3
        + d_q[1] * a5[..., None]
        + q[1][:, None] * d_a5
    )
    return value, _floor_latent_var(np.mean(d_value, axis=0), raw_var_c)


def cmes_binary(
    objective_mean: np.ndarray,
    objective_var: np.ndarray,
    constraint_latent_mean: np.ndarray,
    constraint_latent_var: np.ndarray,
    y_star_samples: np.ndarray,
    *,
    confidence: float = 0.5,
    objective_observed: Literal["always", "if_feasible"] = "always",
    n_newton_steps: int = 1,
) -> np.ndarray:
    """cMES for binary constraint feedback (section 3, A.3 eq. 5; A.6).

    With ``Q(z_c) Q(c | z_c) ~ P(z_c | c) P(c)`` (:func:`_laplace_conditionals`),
    ``F(z_c) = Q(c <= delta | z_c) = Phi(gamma_c(z_c))``, ``Z~_c = E_Q[F]``,
    ``Z = 1 - Z_y Z~_c`` and ``B = Z_y Z~_c / Z``, A.3 gives

    ``H[P(y)] + H[Q(z_c)] - H[P(y, z_c | y_*)] = -log Z - B (gamma_y h(-gamma_y) / 2
    + Z~_c^-1 E_Q[(1 - F)(-log(1 - F)) + (F - Z~_c) log Q])``.

    The second part is evaluated as ``(Z_y / Z) E_Q[...]`` (the ``Z~_c`` cancel), whose
    bracket is bounded, so that a point that is almost surely infeasible does not produce
    ``0 * inf``. ``objective_observed="if_feasible"`` (A.6, the objective is not observed for
    crashed trials) uses the paper's mixture ``Q(-1) * A.3 + Q(+1) * A.5``, where A.5 is the
    information from ``z_c`` alone, ``H[Q(z_c)] - H[P(z_c | y_*)]`` with
    ``P(z_c | y_*) = Q(z_c) (1 - Z_y F(z_c)) / Z``.

    Parameters
    ----------
    objective_mean, objective_var
        Posterior marginals of the objective, shape ``(n,)``.
    constraint_latent_mean, constraint_latent_var
        Laplace posterior marginals of the latent constraint (``predict_latent``), shape
        ``(n,)``; ``P(z_c = +1 | c) = sigma(c)`` (logistic likelihood).
    y_star_samples
        Samples of ``y_*``, shape ``(S,)``; ``+inf`` allowed (then ``Z_y = 1`` and only the
        feasibility information remains).
    confidence
        ``p = sigma(delta)``; must match the threshold used to sample ``y_*``.
    objective_observed
        ``"always"`` (eq. 5) or ``"if_feasible"`` (A.6 mixture).
    n_newton_steps
        Newton steps for the Laplace modes of ``Q(c | z_c)``; 1 as in the paper.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``; higher is better.
    """
    return _cmes_binary(
        objective_mean,
        objective_var,
        constraint_latent_mean,
        constraint_latent_var,
        y_star_samples,
        confidence,
        objective_observed,
        n_newton_steps,
        with_grad=False,
    )[0]


def cmes_binary_with_grad(
    objective_mean: np.ndarray,
    objective_var: np.ndarray,
    constraint_latent_mean: np.ndarray,
    constraint_latent_var: np.ndarray,
    y_star_samples: np.ndarray,
    *,
    confidence: float = 0.5,
    objective_observed: Literal["always", "if_feasible"] = "always",
    n_newton_steps: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`cmes_binary` (section 3, A.3 eq. 5; A.6) and its exact derivatives.

    Every step of the value, including the constraint side (MacKay's ``Q(z_c)``, the Newton
    steps towards the Laplace modes of ``Q(c | z_c)`` and their variances, ``F(z_c)``,
    ``Z~_c``) is differentiated by the chain rule, in forward mode along the four inputs.
    Derivatives are 0 where a z-score is clipped at ``+-GAMMA_MAX`` or ``+inf``
    (``y_* = +inf``), and along a variance below ``VARIANCE_FLOOR``, consistently with the
    value; the result is finite for finite inputs.

    Parameters
    ----------
    objective_mean, objective_var, constraint_latent_mean, constraint_latent_var,
    y_star_samples, confidence, objective_observed, n_newton_steps
        As for :func:`cmes_binary`.

    Returns
    -------
    value, d_objective_mean, d_objective_var, d_latent_mean, d_latent_var
        The value (equal to :func:`cmes_binary`'s) and its partial derivatives with respect
        to the posterior means and *variances* of the objective and of the constraint latent;
        each of shape ``(n,)``.
    """
    value, grad = _cmes_binary(
        objective_mean,
        objective_var,
        constraint_latent_mean,
        constraint_latent_var,
        y_star_samples,
        confidence,
        objective_observed,
        n_newton_steps,
        with_grad=True,
    )
    assert grad is not None
    return value, grad[:, 0], grad[:, 1], grad[:, 2], grad[:, 3]


def _latent_mean_var_with_grad(
    model: LatentModel, X: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`latent_mean_var` with the gradients of both w.r.t. the rows of ``X``."""
    if isinstance(model, GaussianProcessClassifier):
        return model.predict_latent_with_grad(X)
    return model.predict_with_grad(X)


def _noise_variances(
    objective: GaussianProcessRegressor, constraint_models: Sequence[LatentModel]
) -> tuple[float, list[float]]:
    """Observation-noise variances of the objective and the constraints (A.2); a classifier's
    latent is not observed with Gaussian noise (0)."""
    return objective.noise_variance_, [
        model.noise_variance_ if isinstance(model, GaussianProcessRegressor) else 0.0
        for model in constraint_models
    ]


def cmes_information_gain(
    features: np.ndarray,
    objective: GaussianProcessRegressor,
    constraint_models: Sequence[LatentModel],
    y_star_samples: np.ndarray,
    *,
    constraint_thresholds: Sequence[float] | None = None,
    binary_confidence: float = 0.5,
) -> np.ndarray:
    """cMES at ``features`` from fitted models, whichever feedback they learned from.

    A crash classifier alone (binary feedback only) uses the binary formula with confidence
    ``binary_confidence`` in the paper's A.6 form, since a crashed trial reports no objective
    value: ``Q(-1) · A.3 + Q(+1) · A.5`` (:func:`cmes_binary`, ``objective_observed=
    "if_feasible"``). Otherwise every model's latent is a constraint of
    :func:`cmes_real_valued` (A.1), a classifier's latent with its threshold in
    ``constraint_thresholds`` (``logit(binary_confidence)``,
    :func:`binary_feasibility_threshold`); no constraint model gives plain MES. Observations
    are noisy as the GPs' fitted noise variances say (A.2).
    """
    return _information_gain(
        features,
        objective,
        constraint_models,
        y_star_samples,
        constraint_thresholds,
        binary_confidence,
        with_grad=False,
    )[0]


def cmes_information_gain_with_grad(
    features: np.ndarray,
    objective: GaussianProcessRegressor,
    constraint_models: Sequence[LatentModel],
    y_star_samples: np.ndarray,
    *,
    constraint_thresholds: Sequence[float] | None = None,
    binary_confidence: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cmes_information_gain` and its gradient with respect to the rows of ``features``.

    The derivatives with respect to each model's posterior mean and variance
    (:func:`cmes_binary_with_grad`, :func:`cmes_real_valued_with_grad`) are chained with the
    models' input gradients (:meth:`GaussianProcessRegressor.predict_with_grad`,
    :meth:`GaussianProcessClassifier.predict_latent_with_grad`).

    Returns
    -------
    value, grad
        Shapes ``(n,)`` and ``(n, n_features)``; ``value`` equals
        :func:`cmes_information_gain`'s.
    """
    value, grad = _information_gain(
        features,
        objective,
        constraint_models,
        y_star_samples,
        constraint_thresholds,
        binary_confidence,
        with_grad=True,
    )
    assert grad is not None
    return value, grad


def _information_gain(
    features: np.ndarray,
    objective: GaussianProcessRegressor,
    constraint_models: Sequence[LatentModel],
    y_star_samples: np.ndarray,
    constraint_thresholds: Sequence[float] | None,
    binary_confidence: float,
    with_grad: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    if with_grad:
        mean, var, mean_grad, var_grad = objective.predict_with_grad(features)
    else:
        mean, var = objective.predict(features)
    if len(constraint_models) == 1 and isinstance(constraint_models[0], GaussianProcessClassifier):
        classifier = constraint_models[0]
        options = {"confidence": binary_confidence, "objective_observed": "if_feasible"}
        if not with_grad:
            latent_mean, latent_var = classifier.predict_latent(features)
            return cmes_binary(mean, var, latent_mean, latent_var, y_star_samples, **options), None
        latent_mean, latent_var, latent_mean_grad, latent_var_grad = (
            classifier.predict_latent_with_grad(features)
        )
        value, d_mean, d_var, d_latent_mean, d_latent_var = cmes_binary_with_grad(
            mean, var, latent_mean, latent_var, y_star_samples, **options
        )
        grad = (
            d_mean[:, None] * mean_grad
            + d_var[:, None] * var_grad
            + d_latent_mean[:, None] * latent_mean_grad
            + d_latent_var[:, None] * latent_var_grad
        )
        return value, grad
    objective_noise, constraint_noises = _noise_variances(objective, constraint_models)
    options = {
        "constraint_thresholds": constraint_thresholds,
        "objective_noise_var": objective_noise,
        "constraint_noise_vars": constraint_noises,
    }
    if not with_grad:
        latents = [latent_mean_var(model, features) for model in constraint_models]
        means, variances = [m for m, _ in latents], [v for _, v in latents]
        return cmes_real_valued(mean, var, means, variances, y_star_samples, **options), None
    latents_with_grad = [_latent_mean_var_with_grad(m, features) for m in constraint_models]
    value, d_mean, d_var, d_means_c, d_vars_c = cmes_real_valued_with_grad(
        mean,
        var,
        [m for m, _, _, _ in latents_with_grad],
        [v for _, v, _, _ in latents_with_grad],
        y_star_samples,
        **options,
    )
    grad = d_mean[:, None] * mean_grad + d_var[:, None] * var_grad
    for k, (_, _, latent_mean_grad, latent_var_grad) in enumerate(latents_with_grad):
        grad += d_means_c[:, k, None] * latent_mean_grad + d_vars_c[:, k, None] * latent_var_grad
    return value, grad


# ---------------------------------------------------------------------------- as an acquisition
class ConstrainedMaxValueEntropy(Acquisition):
    """cMES of one objective model for fixed samples of ``y*``, with its exact gradient.

    :func:`cmes_information_gain` and :func:`cmes_information_gain_with_grad` as an
    :class:`~bore_samplers.acquisitions.base.Acquisition`: plain MES without feasibility
    models, the binary formula (A.3) with a crash classifier alone, the real-valued one (A.1)
    otherwise.
    """

    def __init__(
        self,
        objective: GaussianProcessRegressor,
        feasibility_models: Sequence[LatentModel],
        y_star_samples: np.ndarray,
        *,
        thresholds: Sequence[float],
        binary_confidence: float = 0.5,
        every_sample_capped: bool = False,
    ) -> None:
        self.objective = objective
        self.feasibility_models = list(feasibility_models)
        self.y_star_samples = y_star_samples
        self.thresholds = list(thresholds)
        self.binary_confidence = binary_confidence
        #: Whether every sample of ``y*`` was capped below the incumbent
        #: (:func:`constrained_mes`): no draw found an improvement beyond the cap.
        self.every_sample_capped = every_sample_capped

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        arguments = (X, self.objective, self.feasibility_models, self.y_star_samples)
        options = {
            "constraint_thresholds": self.thresholds,
            "binary_confidence": self.binary_confidence,
        }
        if with_grad:
            return cmes_information_gain_with_grad(*arguments, **options)
        return cmes_information_gain(*arguments, **options), None


#: Scales (unit-cube units, times the lengthscale) of the points around the best observations
#: that join the Sobol set on which ``y*`` is sampled.
LOCAL_DISCRETIZATION_SCALES = (0.03, 0.1, 0.3)


def y_star_margin(noise_variance: float, minimum: float = Y_STAR_MIN_MARGIN) -> float:
    """How far below the incumbent MES caps its samples of ``y*`` (standardised units).

    ``minimum`` is ``Y_STAR_MIN_MARGIN`` for plain MES and 0 with real-valued constraints,
    where the noise margin alone applies (at least ``5e-5`` at the GP's noise floor).
    """
    noise_margin = Y_STAR_NOISE_MARGIN * math.sqrt(noise_variance)
    return min(max(noise_margin, minimum), Y_STAR_MAX_MARGIN)


def _local_discretization(models: ModelSet, n_points: int, rng: np.random.Generator) -> np.ndarray:
    """Points around the best feasible observations (the model set's anchors).

    A Sobol set of ``m`` points leaves gaps of about ``m^(-1/d)`` per coordinate, so the
    minimum of a posterior draw on it rarely sees an improvement within that distance of the
    incumbent, and the samples of ``y*`` say that none is to be had there. Gaussian steps of a
    few sizes, scaled by the objective's lengthscales, fill that neighbourhood.
    """
    anchors, space = models.anchors, models.fitted_history.space
    if n_points <= 0 or anchors.size == 0:
        return np.empty((0, space.n_dims))
    lengthscales = np.minimum(np.asarray(models.lengthscales, dtype=float), 1.0)
    centres = anchors[rng.integers(len(anchors), size=n_points)]
    scales = np.asarray(LOCAL_DISCRETIZATION_SCALES)[rng.integers(3, size=n_points)]
    steps = rng.standard_normal(centres.shape) * scales[:, None] * lengthscales
    return space.snap(np.clip(centres + steps, 0.0, 1.0))


def constrained_mes(
    models: ModelSet,
    rng: np.random.Generator,
    *,
    n_samples: int = 10,
    n_discretization: int = 2000,
    method: Literal["joint", "joint_exact", "mean_field"] = "joint",
    binary_confidence: float = 0.5,
) -> Acquisition:
    """cMES on a model set, averaged over its objective models (Perrone et al., eq. 3).

    For every objective model, ``n_samples`` samples of the constrained minimum ``y*`` are
    drawn jointly with the feasibility models on ``n_discretization`` Sobol points plus the
    observed points (A.4, :func:`sample_constrained_minimum`). Real-valued constraints count as
    feasible at ``c <= -FEASIBILITY_MARGIN`` (standardised, as in ``PF``); the crash
    classifier's latent at ``c <= logit(p)`` with ``p = binary_confidence``
    (:func:`binary_feasibility_threshold`). Without feasibility models this is MES in its
    minimisation form.

    Without feasibility models (plain MES), every sample of ``y*`` is capped at the model's
    incumbent (the smallest posterior mean at the feasible observations) minus
    ``Y_STAR_NOISE_MARGIN`` noise deviations, at least ``Y_STAR_MIN_MARGIN`` and at most
    ``Y_STAR_MAX_MARGIN`` (the objective models see standardised targets), as Wang & Jegelka's
    reference code of MES caps its samples above the best observation
    (``utils/sampleMaximumValues.m``). The cap matters for a nearly noise-free model: a draw
    whose minimum sits at the incumbent puts ``y*`` within a posterior deviation of the mean
    right next to it, where the information stays high however small that deviation, and
    proposals repeat the incumbent (on Branin, 33 of 50 sequential trials within 1e-3 of a
    local minimum). A noisy model needs no cap (the noisy-target form of A.2 gives little
    information where the posterior deviation is below the noise).

    With real-valued constraints the cap is the noise margin alone: the refinement next to an
    incumbent on the feasibility boundary is what finds a constrained minimum there, in steps
    below ``Y_STAR_MIN_MARGIN``, but uncapped samples let cMES re-propose an incumbent far
    from any boundary (on Gardner's problem, 35 of 50 trials at one local minimum). With a
    crash classifier alone the samples stay uncapped: capped, cMES spent more of its trials on
    crashes. With feasibility models ``n_discretization / 4`` points around the best feasible
    observations join the set (:func:`_local_discretization`), so that the draws see the
    improvements to be had next to the incumbent.
    """
    # The observed points the models were fitted on (in a long study a subset that holds
    # the best ones, where the minimum is; every row would only cost).
    history = models.fitted_history
    space = history.space
    feasibility_models: list[LatentModel] = list(models.constraints)
    thresholds = [-FEASIBILITY_MARGIN] * len(feasibility_models)
    if models.crash is not None:
        feasibility_models.append(models.crash)
        thresholds.append(binary_feasibility_threshold(binary_confidence))
    discretization = space.sample_sobol(n_discretization, seed=int(rng.integers(2**31)))
    # Without feasibility models the cap below does this work (see the docstring).
    n_local = n_discretization // 4 if feasibility_models else 0
    local = _local_discretization(models, n_local, rng)
    candidates = space.features(np.vstack([discretization, local, history.u]))
    members = []
    for index, objective in enumerate(models.objective):
        y_star = sample_constrained_minimum(
            objective,
            feasibility_models,
            candidates,
            n_samples=n_samples,
            constraint_thresholds=thresholds,
            method=method,
            rng=rng,
        )
        every_sample_capped = False
        if models.incumbents and (models.constraints or not feasibility_models):
            minimum = 0.0 if models.constraints else Y_STAR_MIN_MARGIN
            cap = models.incumbents[index] - y_star_margin(objective.noise_variance_, minimum)
            every_sample_capped = bool(np.all(y_star >= cap))
            y_star = np.minimum(y_star, cap)
        members.append(
            ConstrainedMaxValueEntropy(
                objective,
                feasibility_models,
                y_star,
                thresholds=thresholds,
                binary_confidence=binary_confidence,
                every_sample_capped=every_sample_capped,
            )
        )
    return ModelAverage(members)
