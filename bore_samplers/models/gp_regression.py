"""Gaussian-process regression with a Matérn 5/2 ARD kernel (numpy + scipy only).

The surrogate of the GP samplers (constrained max-value entropy search and the No-PASt-BO
portfolio), set up as in Perrone et al., *Constrained Bayesian Optimization with Max-Value
Entropy Search* (section 4) and Snoek, Larochelle & Adams, *Practical Bayesian Optimization of
Machine Learning Algorithms* (NeurIPS 2012): a Matérn 5/2 covariance with automatic relevance
determination, hyperparameters by type-II maximum likelihood or MAP (Gamma priors), and
one-hot encoded categorical parameters sharing one lengthscale (a Hamming-distance kernel,
:func:`~bore_samplers.models.kernels.column_lengthscales`).

Notation
--------
``X``, ``feature_groups``, ``l``, ``s``, ``r``
    As in :mod:`bore_samplers.models.kernels`: features of unit points, the columns of each
    parameter, lengthscales per group, signal variance, scaled distance.
``y``, ``z``
    Training targets and their standardisation ``z = (y - y_mean) / y_std``
    (:func:`~bore_samplers.models.targets.robust_location_scale`); every hyperparameter is on
    the standardised scale, so one set of priors and bounds serves every problem.
``σ²``, ``c``
    Observation-noise variance and constant prior mean of ``z``.
``theta``
    The internal hyperparameter vector, ``[log l_1 .. log l_G, log s, log σ², c]`` (length
    ``G + 3`` for ``G`` groups), on the standardised scale. :class:`GPHyperparameters` holds
    the same in the units of ``y``.

Model
-----
.. math::

    z_i = f(x_i) + \\varepsilon_i,\\quad f \\sim GP(c, s\\,k_{5/2}(r)),\\quad
    \\varepsilon_i \\sim N(0, \\sigma^2),\\quad
    k_{5/2}(r) = (1 + \\sqrt5 r + \\tfrac53 r^2) e^{-\\sqrt5 r}

(Rasmussen & Williams, *Gaussian Processes for Machine Learning*, eq. 4.17). Predictions
follow their Algorithm 2.1 and the marginal-likelihood gradient their eq. 5.9.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.linalg

from bore_samplers.models import priors as priors_module
from bore_samplers.models.fitting import multistart_maximize
from bore_samplers.models.kernels import (
    column_groups,
    column_lengthscales,
    matern52_kernel,
    matern52_with_derivative,
)
from bore_samplers.models.linalg import (
    cholesky_with_jitter,
    gaussian_samples,
    inverse_from_cholesky,
    solve_lower,
)
from bore_samplers.models.pathwise import random_fourier_prior
from bore_samplers.models.priors import (
    LENGTHSCALE_BOUNDS,
    MEAN_BOUNDS,
    NOISE_VARIANCE_BOUNDS,
    SIGNAL_VARIANCE_BOUNDS,
    GPPriors,
    Prior,
)
from bore_samplers.models.targets import robust_location_scale

__all__ = ["GPHyperparameters", "GaussianProcessRegressor", "LatentReference"]

LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class GPHyperparameters:
    """Hyperparameters of :class:`GaussianProcessRegressor`, in original units.

    Attributes
    ----------
    lengthscales
        One lengthscale per feature group (in feature units).
    signal_variance
        Prior variance of the latent function, in squared target units.
    noise_variance
        Gaussian observation-noise variance, in squared target units.
    mean
        Constant prior mean in target units; ``None`` means the mean of the training targets.
    """

    lengthscales: np.ndarray
    signal_variance: float
    noise_variance: float
    mean: float | None = None


@dataclass(frozen=True, eq=False)
class LatentReference:
    """The posterior of a GP's latent values at some training rows, as a linear map of
    standard normal draws (:meth:`GaussianProcessRegressor.latent_reference`).

    Attributes
    ----------
    mean
        Posterior mean at the rows, shape ``(r,)``, original units.
    factor
        ``(r, k)``: the draws ``mean + factor @ e``, ``e ~ N(0, I_k)``, have the posterior
        covariance of the rows (its ``k`` directions of non-negligible variance).
    weights
        ``(n, k)``: ``k(x, X) @ weights`` is ``w(x)``, the conditional mean's coefficient on
        ``e`` (original units).
    conditional
        Whether the model's variance at ``x`` is already the variance given a draw (the rows
        hold pseudo-observations, :meth:`GaussianProcessRegressor.fantasy_reference`);
        otherwise it is ``σ²(x) - |w(x)|²``.
    """

    mean: np.ndarray
    factor: np.ndarray
    weights: np.ndarray
    conditional: bool = False

    @property
    def rank(self) -> int:
        """``k``, the number of directions in which the values at the rows are uncertain."""
        return self.factor.shape[1]


class GaussianProcessRegressor:
    """GP regression with a Matérn 5/2 ARD kernel, fitted by ML-II or MAP.

    Hyperparameters (log lengthscales, log signal variance, log noise variance, constant mean)
    maximise the log marginal likelihood (Rasmussen & Williams, eq. 5.8) plus Gamma log priors
    (see ``use_priors``), with analytic gradients (R&W eq. 5.9), L-BFGS-B and random restarts.

    Parameters
    ----------
    feature_groups
        Feature columns sharing one lengthscale, e.g. :meth:`SearchSpace.feature_columns` (one
        group per parameter; one-hot columns of a categorical share theirs). ``None``: one
        lengthscale per column.
    mean
        ``"constant"``: fit a constant prior mean. ``"zero"``: zero mean on the standardised
        targets, i.e. the empirical mean of the training targets. With ``optimize=False`` a
        given ``hyperparameters.mean`` is used either way.
    optimize
        Fit hyperparameters in :meth:`fit`. If False, ``hyperparameters`` are used as given.
    hyperparameters
        Fixed hyperparameters (``optimize=False``) or the first starting point of the
        optimisation. ``None``: lengthscales 0.5, signal variance ``var(y)``, noise
        ``1e-3 var(y)``, mean ``mean(y)``.
    use_priors
        Add the log priors (MAP); False gives plain ML-II (type-II maximum likelihood).
    priors
        The priors on the standardised scale; ``None``:
        :data:`bore_samplers.models.priors.DEFAULT_PRIORS`.
    n_restarts
        Random restarts of L-BFGS-B in addition to the first starting point.
    max_iter
        Iteration limit of each L-BFGS-B run.
    seed
        Seed of the restart points.

    Attributes
    ----------
    hyperparameters_ : GPHyperparameters
        Fitted hyperparameters (original units).
    theta_ : numpy.ndarray
        Fitted hyperparameters on the internal scale: ``[log l_1..G, log s, log noise, c]`` for
        standardised targets.
    """

    def __init__(
        self,
        feature_groups: Sequence[Sequence[int]] | None = None,
        *,
        mean: Literal["constant", "zero"] = "constant",
        optimize: bool = True,
        hyperparameters: GPHyperparameters | None = None,
        use_priors: bool = True,
        priors: GPPriors | None = None,
        n_restarts: int = 2,
        max_iter: int = 200,
        seed: int | None = None,
    ) -> None:
        self.feature_groups = feature_groups
        self.mean = mean
        self.optimize = optimize
        self.hyperparameters = hyperparameters
        self.use_priors = use_priors
        self.priors = priors
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.seed = seed

    # ------------------------------------------------------------------ fitting
    def fit(
        self, X: np.ndarray, y: np.ndarray, warm_start: GPHyperparameters | None = None
    ) -> GaussianProcessRegressor:
        """Standardise the targets, fit the hyperparameters and factorise the kernel matrix.

        Parameters
        ----------
        X
            Features, shape ``(n, d)``, ``n >= 1``; duplicated rows are fine.
        y
            Targets, shape ``(n,)``.
        warm_start
            Previous hyperparameters (e.g. :attr:`hyperparameters_` of the last fit), used as
            the first starting point instead of ``hyperparameters``.
        """
        if self.mean not in ("constant", "zero"):
            raise ValueError(f"mean must be 'constant' or 'zero', got {self.mean!r}.")
        X = np.atleast_2d(np.asarray(X, dtype=float))
        y = np.asarray(y, dtype=float).ravel()
        if len(X) != len(y) or len(y) == 0:
            raise ValueError(f"Need matching, non-empty X and y, got {len(X)} and {len(y)}.")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("X and y must be finite.")
        self.group_of_column_, self.n_groups_ = column_groups(self.feature_groups, X.shape[1])
        # Robust (no overflow, relative tolerance; see bore_samplers.models.targets). Constant
        # targets (or a single one) carry no scale; unit scale keeps the priors sane.
        self.y_mean_, y_std = robust_location_scale(y)
        self.y_std_ = y_std if y_std > 0.0 else 1.0
        self.X_train_ = X
        self.y_train_ = y
        self._z = (y - self.y_mean_) / self.y_std_

        start = warm_start if warm_start is not None else self.hyperparameters
        theta0 = self._theta_from(start)
        if self.optimize:
            theta0 = self._optimize(theta0)
        self._set_posterior(theta0)
        return self

    def _theta_from(self, hp: GPHyperparameters | None) -> np.ndarray:
        """Internal (standardised, log) vector of ``hp``; defaults where ``hp`` is None."""
        G, var = self.n_groups_, self.y_std_**2
        if hp is None:
            return np.concatenate([np.full(G, math.log(0.5)), [0.0, math.log(1e-3), 0.0]])
        lengthscales = np.broadcast_to(np.asarray(hp.lengthscales, dtype=float), (G,))
        mean = 0.0 if hp.mean is None else (hp.mean - self.y_mean_) / self.y_std_
        return np.concatenate(
            [
                np.log(lengthscales),
                [math.log(hp.signal_variance / var), math.log(hp.noise_variance / var), mean],
            ]
        )

    def _bounds(self) -> list[tuple[float, float]]:
        mean_bounds = MEAN_BOUNDS if self.mean == "constant" else (0.0, 0.0)
        return (
            [tuple(np.log(LENGTHSCALE_BOUNDS))] * self.n_groups_
            + [tuple(np.log(SIGNAL_VARIANCE_BOUNDS)), tuple(np.log(NOISE_VARIANCE_BOUNDS))]
            + [mean_bounds]
        )

    def _optimize(self, theta0: np.ndarray) -> np.ndarray:
        bounds = self._bounds()
        lower, upper = np.array(bounds).T
        rng = np.random.default_rng(self.seed)
        G = self.n_groups_
        starts = [np.clip(theta0, lower, upper)]
        for _ in range(self.n_restarts):
            # Restarts cover plausible scales for unit-cube inputs and standardised targets.
            starts.append(
                np.concatenate(
                    [
                        rng.uniform(math.log(0.05), math.log(2.0), G),
                        [rng.uniform(math.log(0.3), math.log(3.0))],
                        [rng.uniform(math.log(1e-5), math.log(1e-1))],
                        [rng.uniform(-1.0, 1.0) if self.mean == "constant" else 0.0],
                    ]
                )
            )

        return multistart_maximize(
            lambda theta: self._log_posterior(theta, with_prior=self.use_priors),
            starts,
            bounds,
            self.max_iter,
        )

    def _log_posterior(self, theta: np.ndarray, with_prior: bool) -> tuple[float, np.ndarray]:
        """Log marginal likelihood of the standardised targets (+ log priors) and gradient."""
        G = self.n_groups_
        X, z, n = self.X_train_, self._z, len(self._z)
        lengthscales = np.exp(theta[:G])
        signal, noise, mean = math.exp(theta[G]), math.exp(theta[G + 1]), theta[G + 2]
        Kf, D, A, _ = matern52_with_derivative(
            X, None, column_lengthscales(lengthscales, self.group_of_column_), signal
        )
        L, _ = cholesky_with_jitter(Kf + noise * np.eye(n))
        residual = z - mean
        alpha = scipy.linalg.cho_solve((L, True), residual, check_finite=False)
        value = -0.5 * residual @ alpha - np.sum(np.log(np.diag(L))) - 0.5 * n * LOG_2PI

        # dL/dtheta_j = 0.5 tr((alpha alpha^T - K^-1) dK/dtheta_j)  (R&W eq. 5.9)
        K_inv = inverse_from_cholesky(L)
        W = np.outer(alpha, alpha) - K_inv
        # dK/dlog l_d = 2 D (a_d - a'_d)^2 with a = x / l; the sum over i, j of
        # M_ij (a_id - a_jd)^2 for symmetric M is 2 (rowsum(M) . a_d^2 - a_d . M a_d).
        M = W * D
        per_column = np.sum(M, axis=1) @ (A * A) - np.einsum("id,id->d", A, M @ A)
        grad_lengthscales = np.bincount(
            self.group_of_column_, weights=2.0 * per_column, minlength=G
        )
        grad = np.concatenate(
            [
                grad_lengthscales,
                [0.5 * np.sum(W * Kf), 0.5 * noise * np.trace(W), np.sum(alpha)],
            ]
        )
        if self.mean == "zero":
            grad[G + 2] = 0.0
        if with_prior:
            for index, value_, prior in self._prior_terms(theta):
                log_prior, d_log_prior = prior.log_density(value_)
                value += log_prior
                grad[index] += d_log_prior
        return float(value), grad

    def _prior_terms(self, theta: np.ndarray) -> list[tuple[slice | int, Any, Prior]]:
        """``(index in theta, hyperparameter value, prior)`` of each prior term."""
        G = self.n_groups_
        priors = self.priors if self.priors is not None else priors_module.DEFAULT_PRIORS
        return [
            (slice(0, G), np.exp(theta[:G]), priors.lengthscale_prior(G)),
            (G, math.exp(theta[G]), priors.signal_variance),
            (G + 1, math.exp(theta[G + 1]), priors.noise_variance),
        ]

    def log_marginal_likelihood(
        self, theta: np.ndarray | None = None, eval_gradient: bool = False
    ) -> float | tuple[float, np.ndarray]:
        """Log marginal likelihood of the standardised training targets (no priors).

        Parameters
        ----------
        theta
            Internal hyperparameter vector ``[log l_1..G, log s, log noise, c]`` (see
            :attr:`theta_`); ``None``: the fitted one.
        eval_gradient
            Also return the gradient w.r.t. ``theta``.
        """
        self._check_fitted()
        theta = self.theta_ if theta is None else np.asarray(theta, dtype=float)
        value, grad = self._log_posterior(theta, with_prior=False)
        return (value, grad) if eval_gradient else value

    def _set_posterior(self, theta: np.ndarray) -> None:
        """Cache what predictions need: Cholesky factor and ``alpha = K^-1 (z - c)``."""
        G = self.n_groups_
        self.theta_ = np.asarray(theta, dtype=float).copy()
        self._column_lengthscales = column_lengthscales(
            np.exp(self.theta_[:G]), self.group_of_column_
        )
        self._signal = math.exp(self.theta_[G])
        self._noise = math.exp(self.theta_[G + 1])
        self._prior_mean = float(self.theta_[G + 2])
        K = matern52_kernel(self.X_train_, None, self._column_lengthscales, self._signal)
        self._L, self.jitter_ = cholesky_with_jitter(K + self._noise * np.eye(len(K)))
        self._alpha = scipy.linalg.cho_solve(
            (self._L, True), self._z - self._prior_mean, check_finite=False
        )
        self._K_inv: np.ndarray | None = None  # formed by the first gradient prediction
        self._last_prediction: tuple | None = None

    # ------------------------------------------------------------------ fitted values
    def _check_fitted(self) -> None:
        if not hasattr(self, "theta_"):
            raise RuntimeError("This GaussianProcessRegressor is not fitted yet; call fit().")

    @property
    def hyperparameters_(self) -> GPHyperparameters:
        """Fitted hyperparameters in original units."""
        self._check_fitted()
        var = self.y_std_**2
        return GPHyperparameters(
            lengthscales=np.exp(self.theta_[: self.n_groups_]),
            signal_variance=self._signal * var,
            noise_variance=self._noise * var,
            mean=self.y_mean_ + self._prior_mean * self.y_std_,
        )

    @property
    def lengthscales_(self) -> np.ndarray:
        """Fitted lengthscale of each feature group."""
        return self.hyperparameters_.lengthscales

    @property
    def signal_variance_(self) -> float:
        """Fitted signal variance (squared target units)."""
        return self.hyperparameters_.signal_variance

    @property
    def noise_variance_(self) -> float:
        """Fitted noise variance (squared target units)."""
        return self.hyperparameters_.noise_variance

    @property
    def mean_(self) -> float:
        """Fitted constant prior mean (target units)."""
        mean = self.hyperparameters_.mean
        assert mean is not None
        return mean

    # ------------------------------------------------------------------ prediction
    def _cross_kernel(
        self, X: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return matern52_with_derivative(X, self.X_train_, self._column_lengthscales, self._signal)

    def _cross_covariance(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return matern52_kernel(X, self.X_train_, self._column_lengthscales, self._signal)

    def predict(self, X: np.ndarray, include_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance at ``X`` (R&W Algorithm 2.1), in original units.

        Parameters
        ----------
        X
            Features, shape ``(m, d)``.
        include_noise
            Add the noise variance (predictive distribution of a new observation) instead of
            returning the variance of the latent function.

        Returns
        -------
        mean, var
            Arrays of shape ``(m,)``.
        """
        self._check_fitted()
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return self._remembered(("predict", include_noise), X, self._predict)

    def _predict(self, X: np.ndarray, include_noise: bool) -> tuple[np.ndarray, np.ndarray]:
        return self._moments(self._cross_covariance(X), include_noise)

    def _moments(self, K_star: np.ndarray, include_noise: bool) -> tuple[np.ndarray, np.ndarray]:
        mean = self._prior_mean + K_star @ self._alpha
        V = solve_lower(self._L, K_star.T)
        var = np.maximum(self._signal - np.einsum("ij,ij->j", V, V), 0.0)
        if include_noise:
            var = var + self._noise
        return self.y_mean_ + self.y_std_ * mean, self.y_std_**2 * var

    def _remembered(self, kind: tuple, X: np.ndarray, compute: Callable[..., tuple]) -> tuple:
        """``compute(X, *kind[1:])``, or its result for the same ``kind`` and ``X`` last time.

        Several acquisitions over one GP (a portfolio's members, EI and its constraint terms)
        score the same points in one optimiser step; the posterior is computed once for all.
        The arrays are returned read-only, as every caller gets the same ones.
        """
        last = self._last_prediction
        if last is not None and last[0] == kind and np.array_equal(last[1], X):
            return last[2]
        result = compute(X, *kind[1:])
        for array in result:
            if array is not None:
                array.setflags(write=False)
        self._last_prediction = (kind, X.copy(), result)
        return result

    def predict_with_grad(
        self, X: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Latent posterior mean and variance with their gradients w.r.t. the inputs.

        Returns
        -------
        mean, var, mean_grad, var_grad
            Shapes ``(m,)``, ``(m,)``, ``(m, d)``, ``(m, d)``, original units. Where the
            variance is clipped at 0 its gradient is 0.
        """
        self._check_fitted()
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return self._remembered(("predict_with_grad",), X, self._predict_with_grad)

    def _predict_with_grad(
        self, X: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._moments_with_grad(*self._cross_kernel(X))

    def _moments_with_grad(
        self, K_star: np.ndarray, D: np.ndarray, A: np.ndarray, B: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        inv_l = 1.0 / self._column_lengthscales
        mean = self._prior_mean + K_star @ self._alpha
        # The values as predict() computes them (bit for bit: optimisers compare the two).
        V = solve_lower(self._L, K_star.T)
        raw_var = self._signal - np.einsum("ij,ij->j", V, V)
        # dk(x*, x_i)/dx* = -2 D (a* - a_i) / l with a = x / l, so for weights w_i
        # sum_i w_i dk_i/dx* = -2 (rowsum(D w) a* - (D w) B) / l.
        Dw = D * self._alpha
        mean_grad = -2.0 * (np.sum(Dw, axis=1)[:, None] * A - Dw @ B) * inv_l
        # dvar/dx* = -2 sum_i (K^-1 k*)_i dk_i/dx*. The optimisers call this on a few points
        # at a time, many times per proposal: a product with the cached K^-1 is cheaper there
        # than two more triangular solves.
        if self._K_inv is None:
            self._K_inv = inverse_from_cholesky(self._L)
        Dv = D * (K_star @ self._K_inv)
        var_grad = 4.0 * (np.sum(Dv, axis=1)[:, None] * A - Dv @ B) * inv_l
        clipped = raw_var <= 0.0
        var_grad[clipped] = 0.0
        var = np.maximum(raw_var, 0.0)
        scale = self.y_std_
        return (
            self.y_mean_ + scale * mean,
            scale**2 * var,
            scale * mean_grad,
            scale**2 * var_grad,
        )

    def predict_cov(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint posterior mean and covariance of the latent function at ``X``.

        Returns
        -------
        mean, cov
            Shapes ``(m,)`` and ``(m, m)``, original units.
        """
        self._check_fitted()
        X = np.atleast_2d(np.asarray(X, dtype=float))
        K_star = self._cross_covariance(X)
        mean = self._prior_mean + K_star @ self._alpha
        V = solve_lower(self._L, K_star.T)
        cov = matern52_kernel(X, None, self._column_lengthscales, self._signal) - V.T @ V
        return self.y_mean_ + self.y_std_ * mean, self.y_std_**2 * cov

    def latent_reference(self, rows: np.ndarray, rank_tol: float = 1e-4) -> LatentReference:
        """The joint posterior of the latent values at training rows, for conditioning on them.

        Draws of ``f(X_R)`` at the rows ``R`` are ``mean + factor @ e`` with ``e ~ N(0, I_k)``.
        Given such a draw, ``f(x)`` is Gaussian with mean ``μ(x) + w(x) · e`` and variance
        ``σ²(x) - |w(x)|²``, where ``w(x)`` (:meth:`predict_with_reference`) is linear in the
        cross-covariance ``k(x, X)``: the fantasy models of noisy EI (Letham et al.,
        *Constrained Bayesian Optimization with Noisy Experiments*, Bayesian Analysis 2019)
        without refitting a model per draw. Directions of the posterior covariance with a
        variance below ``rank_tol`` (standardised units: noise-free rows) are dropped, so
        ``k = 0`` where the values at the rows are known.

        Parameters
        ----------
        rows
            Indices into the training data.
        rank_tol
            Smallest kept eigenvalue of the posterior covariance, standardised units.
        """
        self._check_fitted()
        rows = np.asarray(rows, dtype=int)
        K_rows = matern52_kernel(
            self.X_train_, self.X_train_[rows], self._column_lengthscales, self._signal
        )
        # c(x) = k(x, X_R) - k(x, X) K^-1 K_XR = k(x, X) P, as X_R are training rows.
        P = -scipy.linalg.cho_solve((self._L, True), K_rows, check_finite=False)
        P[rows, np.arange(len(rows))] += 1.0
        cov = K_rows.T @ P  # K_RR - K_RX K^-1 K_XR
        eigenvalues, eigenvectors = np.linalg.eigh(0.5 * (cov + cov.T))
        kept = eigenvalues > rank_tol
        root = np.sqrt(eigenvalues[kept])
        mean = self._prior_mean + K_rows.T @ self._alpha
        return LatentReference(
            mean=self.y_mean_ + self.y_std_ * mean,
            factor=self.y_std_ * eigenvectors[:, kept] * root,
            weights=self.y_std_ * (P @ eigenvectors[:, kept]) / root,
        )

    def fantasy_reference(self, n_rows: int) -> LatentReference:
        """The outcomes at the last ``n_rows`` training rows as unknowns to draw: fantasies.

        For a model conditioned on pseudo-observations at its last rows (the pending points
        of a Kriging believer, :meth:`condition_on` with the predicted means), the outcomes
        there are in truth unknown. Given the other rows they are Gaussian,
        ``y_P = m_P + C e`` with ``e ~ N(0, I)`` and ``C`` the trailing block of the Cholesky
        factor ``L`` (the factor of the Schur complement). Replacing the believed values by
        such a draw moves the posterior mean at ``x`` by ``w(x) · e`` with
        ``w(x) = k(x, X) L^{-T} [0; I]`` and leaves its variance as it is (a GP's variance does
        not depend on the observed values): the Monte Carlo fantasies of pending evaluations
        (Snoek et al., *Practical Bayesian Optimization of Machine Learning Algorithms*,
        NeurIPS 2012) without a model per draw. The reference is therefore ``conditional``.

        Parameters
        ----------
        n_rows
            How many of the last training rows hold pseudo-observations, ``>= 1``.
        """
        self._check_fitted()
        n = len(self._z)
        if not 1 <= n_rows <= n:
            raise ValueError(f"n_rows must be in [1, {n}], got {n_rows}.")
        first = n - n_rows
        trailing = self._L[first:, first:]
        selector = np.zeros((n, n_rows))
        selector[first:] = np.eye(n_rows)
        weights = scipy.linalg.solve_triangular(
            self._L, selector, trans="T", lower=True, check_finite=False
        )
        # z - c = L u, so the rows' values given the rows before them are z_P - C u_P.
        whitened = solve_lower(self._L, (self._z - self._prior_mean)[:, None])[:, 0]
        mean = self._z[first:] - trailing @ whitened[first:]
        return LatentReference(
            mean=self.y_mean_ + self.y_std_ * mean,
            factor=self.y_std_ * trailing,
            weights=self.y_std_ * weights,
            conditional=True,
        )

    def predict_with_reference(
        self, X: np.ndarray, reference: LatentReference, with_grad: bool
    ) -> tuple[np.ndarray, ...]:
        """Latent posterior mean and variance at ``X`` with ``w(x)`` of
        :meth:`latent_reference`, from one cross-covariance.

        Returns
        -------
        mean, var, mean_grad, var_grad, weights, weights_grad
            Shapes ``(m,)``, ``(m,)``, ``(m, d)``, ``(m, d)``, ``(m, k)``, ``(m, k, d)`` in
            original units; the gradients w.r.t. the inputs are ``None`` without
            ``with_grad``.
        """
        self._check_fitted()
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return self._remembered(
            ("predict_with_reference", reference, with_grad), X, self._predict_with_reference
        )

    def _predict_with_reference(
        self, X: np.ndarray, reference: LatentReference, with_grad: bool
    ) -> tuple[np.ndarray | None, ...]:
        weights = reference.weights
        if not with_grad:
            K_star = self._cross_covariance(X)
            return (*self._moments(K_star, False), None, None, K_star @ weights, None)
        K_star, D, A, B = self._cross_kernel(X)
        moments = self._moments_with_grad(K_star, D, A, B)
        # As for the mean in _moments_with_grad, one weight vector per column of weights:
        # sum_i W_ik dk_i/dx* = -2 ((D W)_k a* - sum_i D_i W_ik b_i) / l.
        DW = D @ weights
        weighted = np.matmul((D[:, :, None] * weights[None]).transpose(0, 2, 1), B)
        grad = -2.0 * (DW[:, :, None] * A[:, None, :] - weighted) / self._column_lengthscales
        return (*moments, K_star @ weights, grad)

    def sample_joint(
        self,
        X: np.ndarray,
        n_samples: int,
        rng: np.random.Generator | int | None = None,
    ) -> np.ndarray:
        """Joint samples of the latent function at ``X`` (cMES supplement, section A.4).

        Draws ``mu + L_hat N`` with ``L_hat L_hat^T = K** - M M^T``; the Cholesky factor gets
        jitter when the posterior covariance is numerically singular (e.g. at training inputs
        or duplicated rows of ``X``). Cost ``O(m^3)``.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_samples, m)``, original units.
        """
        mean, cov = self.predict_cov(X)
        return gaussian_samples(mean, cov, n_samples, np.random.default_rng(rng))

    def sample_pathwise(
        self,
        X: np.ndarray,
        n_samples: int,
        rng: np.random.Generator | int | None = None,
        n_features: int = 1024,
    ) -> np.ndarray:
        """Joint posterior samples at ``X`` by pathwise conditioning (Wilson et al., 2020).

        Each sample is a function: a prior draw ``g`` from ``n_features`` random Fourier
        features, updated by Matheron's rule,
        ``f(x) = c + g(x) + k(x, X) (K + σ²I)^{-1} (z - c - g(X) - ε)`` with ``ε ~ N(0, σ²I)``.
        The update is exact; the only approximation is the finite-feature prior (the Matérn
        5/2 spectral density is a Student-t with 5 degrees of freedom). The cost is
        ``O(m (n + F) d)`` instead of the ``O(m^3)`` of :meth:`sample_joint`.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_samples, m)``, original units.
        """
        self._check_fitted()
        rng = np.random.default_rng(rng)
        X = np.atleast_2d(np.asarray(X, dtype=float))
        prior = random_fourier_prior(
            self._column_lengthscales, self._signal, n_samples, n_features, rng
        )
        noise = rng.standard_normal((n_samples, len(self._z))) * math.sqrt(self._noise)
        residual = self._z - self._prior_mean - prior(self.X_train_) - noise
        update = scipy.linalg.cho_solve((self._L, True), residual.T, check_finite=False)
        K_star = self._cross_covariance(X)
        f = self._prior_mean + prior(X) + (K_star @ update).T
        return self.y_mean_ + self.y_std_ * f

    # ------------------------------------------------------------------ fantasies
    def condition_on(self, X_new: np.ndarray, y_new: np.ndarray) -> GaussianProcessRegressor:
        """A copy conditioned on extra (pseudo-)observations, hyperparameters unchanged.

        Used for pending evaluations (Kriging believer / fantasies). The copy keeps this
        model's standardisation, so it equals :meth:`fit` with ``optimize=False`` and
        ``hyperparameters=self.hyperparameters_`` on the augmented data.
        """
        model = self._copy_on(X_new, y_new)
        model._set_posterior(self.theta_)
        return model

    def _copy_on(self, X_new: np.ndarray, y_new: np.ndarray) -> GaussianProcessRegressor:
        """A copy with extra training data and this standardisation; no posterior yet."""
        self._check_fitted()
        X_new = np.atleast_2d(np.asarray(X_new, dtype=float))
        y_new = np.asarray(y_new, dtype=float).ravel()
        if len(X_new) != len(y_new) or X_new.shape[1] != self.X_train_.shape[1]:
            raise ValueError("X_new and y_new do not match each other or the training data.")
        model = GaussianProcessRegressor(
            self.feature_groups,
            mean=self.mean,
            optimize=self.optimize,
            hyperparameters=self.hyperparameters,
            use_priors=self.use_priors,
            priors=self.priors,
            n_restarts=self.n_restarts,
            max_iter=self.max_iter,
            seed=self.seed,
        )
        model.group_of_column_, model.n_groups_ = self.group_of_column_, self.n_groups_
        model.y_mean_, model.y_std_ = self.y_mean_, self.y_std_
        model.X_train_ = np.vstack([self.X_train_, X_new])
        model.y_train_ = np.concatenate([self.y_train_, y_new])
        model._z = (model.y_train_ - model.y_mean_) / model.y_std_
        return model

    # ------------------------------------------------------- hyperparameter access
    def log_posterior(
        self, theta: np.ndarray, eval_gradient: bool = True
    ) -> tuple[float, np.ndarray] | float:
        """Unnormalised log posterior of internal hyperparameters ``theta`` (and its gradient).

        The log marginal likelihood of the standardised training targets plus the Gamma log
        priors when ``use_priors`` (what :meth:`fit` maximises). ``-inf`` outside the bounds,
        so samplers over ``theta`` (slice sampling) see the same support as the optimiser.
        Without the gradient (``eval_gradient=False``, what slice sampling needs) no inverse of
        the kernel matrix is formed: about a third of the cost.
        """
        self._check_fitted()
        theta = np.asarray(theta, dtype=float)
        lower, upper = np.array(self._bounds()).T
        if np.any(theta < lower) or np.any(theta > upper):
            return (-math.inf, np.zeros_like(theta)) if eval_gradient else -math.inf
        if eval_gradient:
            return self._log_posterior(theta, with_prior=self.use_priors)
        return self._log_posterior_value(theta)

    def _log_posterior_value(self, theta: np.ndarray) -> float:
        G = self.n_groups_
        n = len(self._z)
        lengthscales = np.exp(theta[:G])
        signal, noise = math.exp(theta[G]), math.exp(theta[G + 1])
        K = matern52_kernel(
            self.X_train_, None, column_lengthscales(lengthscales, self.group_of_column_), signal
        )
        L, _ = cholesky_with_jitter(K + noise * np.eye(n))
        v = scipy.linalg.solve_triangular(L, self._z - theta[G + 2], lower=True)
        value = -0.5 * v @ v - np.sum(np.log(np.diag(L))) - 0.5 * n * LOG_2PI
        if self.use_priors:
            for _, value_, prior in self._prior_terms(theta):
                value += prior.log_density(value_)[0]
        return float(value)

    def hyperparameter_bounds(self) -> np.ndarray:
        """Bounds of the internal hyperparameters, shape ``(n_groups + 3, 2)``."""
        self._check_fitted()
        return np.array(self._bounds(), dtype=float)

    def with_theta(self, theta: np.ndarray) -> GaussianProcessRegressor:
        """A copy on the same data with internal hyperparameters ``theta`` (no refitting)."""
        model = self._copy_on(np.empty((0, self.X_train_.shape[1])), np.empty(0))
        model._set_posterior(np.asarray(theta, dtype=float))
        return model
