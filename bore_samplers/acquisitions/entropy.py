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
for any finite input.

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
from scipy.special import expit, log_expit, log_ndtr, logsumexp

from bore_samplers.acquisitions.feasibility import (
    VARIANCE_FLOOR,
    LatentModel,
    binary_feasibility_threshold,
    latent_mean_var,
)
from bore_samplers.models.gp_classification import GaussianProcessClassifier
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.linalg import cholesky_with_jitter

__all__ = [
    "cmes_binary",
    "cmes_information_gain",
    "cmes_real_valued",
    "sample_constrained_minimum",
]

Y_STAR_SAMPLERS = ("joint", "joint_exact", "mean_field")

# z-scores are clipped to +-GAMMA_MAX. Beyond it every probability involved is below e^-450,
# and the cancellation between -log Z and the hazard terms (both ~ gamma^2 / 2) would cost
# about eps * gamma^4 of absolute accuracy; at 30 that is ~1e-10.
GAMMA_MAX = 30.0
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# ---------------------------------------------------------------------------- sampling of y_*
def _latent_mean_cov(model: LatentModel, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(model, GaussianProcessClassifier):
        return model.predict_latent_cov(X)
    return model.predict_cov(X)


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
        if method == "joint" and isinstance(model, GaussianProcessRegressor):
            return model.sample_pathwise(X, n_samples, rng, n_features=n_features)
        if method == "joint":
            return model.sample_latent_pathwise(X, n_samples, rng, n_features=n_features)
        normals = rng.standard_normal((n_samples, len(X)))
        if method != "mean_field":
            mean, cov = _latent_mean_cov(model, X)
            L_hat, _ = cholesky_with_jitter(cov)
            return mean + normals @ L_hat.T
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


def _entropy_reduction_orthant(gammas: np.ndarray) -> np.ndarray:
    """``H[P] - H[P | y_*]`` for ``P | y_* ~ P * (1 - prod_j I{n_j <= gamma_j})``.

    Generalisation of A.1 to ``J`` independent standard-normal coordinates (objective and
    ``K`` constraints), see :func:`cmes_real_valued`:
    ``-log Z - (B / 2) sum_j gamma_j h(-gamma_j)``, ``Z = 1 - prod_j Phi(gamma_j)``,
    ``B = prod_j Phi(gamma_j) / Z``.

    Parameters
    ----------
    gammas
        Shape ``(..., J)``; entries ``+inf`` mean "always below the threshold".
    """
    log_cdf = log_ndtr(gammas)  # log Phi(gamma_j), 0 for +inf
    log_tail = log_ndtr(-gammas)  # log(1 - Phi(gamma_j)), -inf for +inf
    # 1 - prod_j Phi_j = sum_j (1 - Phi_j) prod_{i<j} Phi_i, a sum of non-negative terms, so
    # log Z has no cancellation even when prod_j Phi_j rounds to 1.
    log_prefix = np.cumsum(log_cdf, axis=-1) - log_cdf
    log_z = logsumexp(log_tail + log_prefix, axis=-1)
    log_all = np.sum(log_cdf, axis=-1)
    # Z = 0 only when every gamma_j is +inf (y_* = +inf without constraints): the event that
    # y_* contradicts has probability 1 and no information can be gained; return 0 there.
    degenerate = np.isneginf(log_z)
    log_z = np.where(degenerate, 0.0, log_z)
    log_b = log_all - log_z
    log_hazard, sign = _log_scaled_hazard(gammas)
    hazard_sum = np.sum(sign * np.exp(log_b[..., None] + log_hazard), axis=-1)
    return np.where(degenerate, 0.0, -log_z - 0.5 * hazard_sum)


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
    mean_y = np.atleast_1d(np.asarray(objective_mean, dtype=float))
    n_points = len(mean_y)
    std_y = _effective_std(
        np.atleast_1d(np.asarray(objective_var, dtype=float)), objective_noise_var
    )
    means_c = _as_matrix(constraint_means, n_points)
    vars_c = _as_matrix(constraint_vars, n_points)
    K = means_c.shape[1]
    deltas = np.zeros(K) if constraint_thresholds is None else np.asarray(constraint_thresholds)
    noise_c = np.zeros(K) if constraint_noise_vars is None else np.asarray(constraint_noise_vars)
    y_star = np.atleast_1d(np.asarray(y_star_samples, dtype=float))
    if np.any(np.isnan(y_star)) or np.any(np.isneginf(y_star)):
        raise ValueError("y_star_samples must be finite or +inf.")

    gamma_c = _z_scores(deltas[None, :], means_c, _effective_std(vars_c, noise_c[None, :]))
    gamma_y = _z_scores(y_star[:, None], mean_y[None, :], std_y[None, :])  # (S, n)
    gammas = np.concatenate(
        [gamma_y[..., None], np.broadcast_to(gamma_c, (len(y_star), n_points, K))], axis=-1
    )
    return np.mean(_entropy_reduction_orthant(gammas), axis=0)


# ---------------------------------------------------------------------------- binary feedback
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
    z = np.array([-1.0, 1.0])[:, None]
    kappa = 1.0 / np.sqrt(1.0 + math.pi * var_c / 8.0)
    log_q = log_expit(z * mean_c[None, :] * kappa)
    mode = np.broadcast_to(mean_c, (2, len(mean_c))).copy()
    for _ in range(n_newton_steps):
        curvature = expit(mode) * expit(-mode)
        # Newton step on log sigma(z c) - (c - mu)^2 / (2 s^2), multiplied through by s^2.
        step = (var_c * z * expit(-z * mode) - (mode - mean_c)) / (1.0 + var_c * curvature)
        mode = mode + step
    var = var_c / (1.0 + var_c * expit(mode) * expit(-mode))
    return log_q, mode, var


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
    if objective_observed not in ("always", "if_feasible"):
        raise ValueError("objective_observed must be 'always' or 'if_feasible'.")
    mean_y = np.atleast_1d(np.asarray(objective_mean, dtype=float))
    std_y = np.sqrt(
        np.maximum(np.atleast_1d(np.asarray(objective_var, dtype=float)), VARIANCE_FLOOR)
    )
    mean_c = np.atleast_1d(np.asarray(constraint_latent_mean, dtype=float))
    var_c = np.maximum(
        np.atleast_1d(np.asarray(constraint_latent_var, dtype=float)), VARIANCE_FLOOR
    )
    y_star = np.atleast_1d(np.asarray(y_star_samples, dtype=float))
    if np.any(np.isnan(y_star)) or np.any(np.isneginf(y_star)):
        raise ValueError("y_star_samples must be finite or +inf.")
    delta = binary_feasibility_threshold(confidence)

    # Everything about z_c is independent of y_* (section 3) and computed once.
    log_q, mode, var = _laplace_conditionals(mean_c, var_c, n_newton_steps)
    gamma_c = np.clip((delta - mode) / np.sqrt(var), -GAMMA_MAX, GAMMA_MAX)
    log_f, log_not_f = log_ndtr(gamma_c), log_ndtr(-gamma_c)  # (2, n)
    q, f, not_f = np.exp(log_q), np.exp(log_f), np.exp(log_not_f)
    log_zc = logsumexp(log_q + log_f, axis=0)  # log Z~_c
    log_not_zc = logsumexp(log_q + log_not_f, axis=0)  # log(1 - Z~_c)
    zc = np.exp(log_zc)
    # E_Q[(F - Z~_c) log Q - (1 - F) log(1 - F)]: bounded, the Z~_c^-1 of A.3 moved into B.
    shared_bracket = np.sum(q * (f - zc) * log_q, axis=0)
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
        return np.mean(a3, axis=0)

    # A.5: H[Q(z_c)] - H[P(z_c | y_*)] = -log Z - Z^-1 E_Q[kappa (-log kappa)]
    #      - (Z_y / Z) E_Q[(F - Z~_c) log Q],  kappa(z_c) = 1 - Z_y F(z_c).
    log_kappa = np.logaddexp(log_not_zy[None], log_zy[None] + log_not_f[:, None, :])  # (2,S,n)
    kappa_entropy = np.sum(np.exp(log_q[:, None, :] + log_kappa - log_z[None]) * -log_kappa, 0)
    a5 = -log_z - kappa_entropy - zy_over_z * shared_bracket
    return np.mean(q[0] * a3 + q[1] * a5, axis=0)


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

    A crash classifier alone (binary feedback only) uses the binary formula
    (:func:`cmes_binary`, A.3) with confidence ``binary_confidence``. Otherwise every model's
    latent is a constraint of :func:`cmes_real_valued` (A.1), a classifier's latent with its
    threshold in ``constraint_thresholds`` (``logit(binary_confidence)``,
    :func:`binary_feasibility_threshold`); no constraint model gives plain MES.
    """
    mean, var = objective.predict(features)
    if len(constraint_models) == 1 and isinstance(constraint_models[0], GaussianProcessClassifier):
        latent_mean, latent_var = constraint_models[0].predict_latent(features)
        return cmes_binary(
            mean, var, latent_mean, latent_var, y_star_samples, confidence=binary_confidence
        )
    latents = [latent_mean_var(model, features) for model in constraint_models]
    return cmes_real_valued(
        mean,
        var,
        [m for m, _ in latents],
        [v for _, v in latents],
        y_star_samples,
        constraint_thresholds=constraint_thresholds,
    )
