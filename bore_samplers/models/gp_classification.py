"""Gaussian-process classification of binary feedback by Laplace's approximation.

The constraint model of constrained max-value entropy search for binary feedback (Perrone et
al., "Constrained Bayesian Optimization with Max-Value Entropy Search", section 3 and
supplement A.3): a latent function ``c`` with a zero-mean GP prior and ``P(z = +1 | x) =
sigma(c(x))``. The paper approximates the posterior of ``c`` with Laplace's method; here the mode
is found by Newton's method to convergence (Rasmussen & Williams, Algorithm 3.1), predictions
follow Algorithm 3.2 and hyperparameters maximise the Laplace approximation of the marginal
likelihood with its analytic gradient (Algorithm 5.1). The kernel is the Matérn 5/2 ARD kernel of
:mod:`bore_samplers.models.kernels`, including its feature groups for categorical parameters.

Two likelihoods are supported: ``"logistic"`` (``sigma(f) = 1 / (1 + exp(-f))``, the paper's
choice and scikit-learn's) and ``"probit"`` (``Phi(f)``, the Bernoulli-probit model of binary
Bayesian optimisation in Fauvel & Chalk, *Efficient Exploration in Binary and Preferential
Bayesian Optimization*, arXiv preprint, 2021, eq. 2). Both are log-concave, so the Laplace mode
is unique and Newton's method converges.

The machinery lives in :class:`LaplaceGP`, which observes the latent ``f`` through linear
functionals: each binary label ``t_k`` belongs to ``g_k = (A f(P))_k`` for points ``P`` and a
matrix ``A``. Classification is ``A = I``; a duel ``x ≻ x'`` of preference learning is the row
``e_x - e_x'`` (:class:`bore_samplers.models.preference.PreferenceGP`). Every algorithm above
only needs the covariance ``A K A^T`` of ``g``, its hyperparameter derivatives ``A dK A^T`` and
the cross-covariance ``k(x, P) A^T``, so one implementation serves both. For the probit
likelihood the posterior may also be approximated by Expectation Propagation (R&W Algorithm
3.5); its predictions share the Laplace code, since both are a GP conditioned on Gaussian
pseudo-observations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.linalg
from scipy.special import erfcx, expit, log_expit, log_ndtr, ndtr

from bore_samplers.models.fitting import multistart_maximize
from bore_samplers.models.kernels import (
    column_groups,
    matern52_kernel,
    matern52_lengthscale_gradients,
    matern52_with_derivative,
)
from bore_samplers.models.kernels import (
    column_lengthscales as expand_lengthscales,
)
from bore_samplers.models.linalg import cholesky_with_jitter, gaussian_samples, solve_lower
from bore_samplers.models.pathwise import random_fourier_prior
from bore_samplers.models.priors import (
    LATENT_SIGNAL_VARIANCE_PRIOR,
    LENGTHSCALE_BOUNDS,
    LENGTHSCALE_PRIOR,
    SIGNAL_VARIANCE_BOUNDS,
    gamma_log_prior,
)

__all__ = [
    "GPClassifierHyperparameters",
    "GaussianProcessClassifier",
    "LaplaceGP",
    "LatentSamplePath",
]

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class GPClassifierHyperparameters:
    """Kernel hyperparameters of :class:`GaussianProcessClassifier`.

    Attributes
    ----------
    lengthscales
        One lengthscale per feature group (in feature units).
    signal_variance
        Prior variance of the latent function.
    """

    lengthscales: np.ndarray
    signal_variance: float


# Below this z, N(z)/Phi(z) and z + N(z)/Phi(z) (which tends to 0 like -1/z) come from Mills'
# ratio instead of the difference of two nearly equal terms; below the second, 1 + z Phi(z)/N(z)
# comes from its asymptotic series 1/z^2 - 3/z^4 + 15/z^6 - ... (relative error below 1e-14).
_PROBIT_TAIL = -10.0
_PROBIT_ASYMPTOTIC = -40.0


def _probit_ratio(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log Phi(z)``, ``r = N(z) / Phi(z)`` and ``z + r``, accurate for every ``z``.

    ``r (z + r)`` is the curvature ``W`` of ``-log Phi``; formed as written it cancels to 0 or
    below far in the lower tail (``z`` below about -1e3), which would make ``W`` negative.
    There ``r = 1 / M`` and ``z + r = (1 + z M) / M`` with Mills' ratio
    ``M = Phi(z) / N(z) = sqrt(pi/2) erfcx(-z / sqrt 2)``.
    """
    log_cdf = log_ndtr(z)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # used where z < -10
        # N(z) / Phi(z) in log space stays finite far in the lower tail.
        ratio = np.exp(-0.5 * z * z - LOG_SQRT_2PI - log_cdf)
        inv2 = 1.0 / np.square(z)
    shifted = z + ratio
    tail = z < _PROBIT_TAIL
    if np.any(tail):
        zt = z[tail]
        mills = math.sqrt(math.pi / 2.0) * erfcx(-zt / math.sqrt(2.0))
        inv2 = inv2[tail]
        series = inv2 * (
            1.0 - inv2 * (3.0 - inv2 * (15.0 - inv2 * (105.0 - inv2 * (945.0 - 10395.0 * inv2))))
        )
        one_plus = np.where(zt < _PROBIT_ASYMPTOTIC, series, 1.0 + zt * mills)
        ratio[tail] = 1.0 / mills
        shifted[tail] = one_plus / mills
    return log_cdf, ratio, shifted


def _log_likelihood_derivatives(
    f: np.ndarray, t: np.ndarray, likelihood: str
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """``sum log p(t|f)`` and its first three derivatives w.r.t. ``f`` (R&W section 3.4).

    ``t`` holds labels in {0, 1}.
    """
    if likelihood == "logistic":
        pi = expit(f)
        log_lik = float(np.sum(log_expit(np.where(t > 0, f, -f))))
        d2 = -pi * (1.0 - pi)
        return log_lik, t - pi, d2, d2 * (1.0 - 2.0 * pi)
    sign = 2.0 * t - 1.0
    z = sign * f
    log_cdf, ratio, shifted = _probit_ratio(z)
    # d/dz of N(z)/Phi(z); its negative, the curvature of -log Phi, lies in (0, 1) (a truncated
    # normal's variance), but far in the lower tail the product can round to 1 + 1 ulp.
    d_ratio = -np.minimum(ratio * shifted, 1.0)
    d3 = sign * (-ratio - (shifted + ratio) * d_ratio)
    return float(np.sum(log_cdf)), sign * ratio, d_ratio, d3


def _probit_expectation_propagation(
    K: np.ndarray,
    t: np.ndarray,
    start: tuple[np.ndarray, np.ndarray] | None,
    max_sweeps: int,
    tol: float = 1e-10,
) -> dict[str, np.ndarray | float | tuple[np.ndarray, np.ndarray]]:
    """Sequential EP for the probit likelihood (Rasmussen & Williams, Algorithm 3.5).

    Sites ``N(f_i; nu_i / tau_i, 1 / tau_i)`` are updated in turn by moment matching against
    ``Phi(y_i f_i)``, with rank-one updates of the posterior covariance and a fresh
    factorisation after each sweep. Sites of zero prior variance (a duel between identical
    points) carry no information and stay at zero. The returned quantities mirror those of the
    Laplace mode: ``d1 = b`` with ``E[f_* | D] = k_*^T b`` and ``sqrt_W = tau^1/2``
    (R&W Algorithm 3.6), and ``log_z`` is the EP approximation of the log marginal likelihood
    (R&W eq. 3.65, arranged as in the GPML toolbox's ``infEP``).
    """
    n = len(t)
    y = 2.0 * t - 1.0
    active = np.diag(K) > 0.0
    ttau, tnu = (np.zeros(n), np.zeros(n)) if start is None else (start[0].copy(), start[1].copy())

    def posterior() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        sqrt_s = np.sqrt(ttau)
        L, _ = cholesky_with_jitter(np.eye(n) + sqrt_s[:, None] * K * sqrt_s[None, :])
        V = scipy.linalg.solve_triangular(L, sqrt_s[:, None] * K, lower=True, check_finite=False)
        sigma = K - V.T @ V
        return sqrt_s, L, sigma, sigma @ tnu

    sqrt_s, L, sigma, mu = posterior()
    for _ in range(max_sweeps):
        old_tau, old_nu = ttau.copy(), tnu.copy()
        for i in np.flatnonzero(active):
            s_ii = sigma[i, i]
            tau_c = 1.0 / s_ii - ttau[i]
            if not tau_c > 0.0:  # a rounding casualty (or a stale warm start): leave the site
                continue
            nu_c = mu[i] / s_ii - tnu[i]
            mean_c, var_c = nu_c / tau_c, 1.0 / tau_c
            scale = math.sqrt(1.0 + var_c)
            _, ratio_array, shifted = _probit_ratio(np.array([y[i] * mean_c / scale]))
            ratio = float(ratio_array[0])
            mean_hat = mean_c + y[i] * var_c * ratio / scale
            var_hat = var_c - var_c**2 * ratio * float(shifted[0]) / (1.0 + var_c)
            # Probit is log-concave, so tau stays positive; the clip guards rounding.
            new_tau = max(1.0 / var_hat - tau_c, 0.0)
            delta = new_tau - ttau[i]
            ttau[i], tnu[i] = new_tau, mean_hat / var_hat - nu_c
            column = sigma[:, i].copy()
            sigma -= (delta / (1.0 + delta * s_ii)) * np.outer(column, column)
            mu = sigma @ tnu
        sqrt_s, L, sigma, mu = posterior()
        change = max(np.max(np.abs(ttau - old_tau)), np.max(np.abs(tnu - old_nu)), 0.0)
        if change < tol * (1.0 + max(np.max(ttau), np.max(np.abs(tnu)), 0.0)):
            break
    # Cavity parameters of the final posterior, then R&W eq. 3.65 in GPML's arrangement.
    diag = np.diag(sigma)[active]
    tau_a, nu_a = ttau[active], tnu[active]
    tau_n = 1.0 / diag - tau_a
    nu_n = mu[active] / diag - nu_a
    log_cavity = log_ndtr(y[active] * nu_n / tau_n / np.sqrt(1.0 + 1.0 / tau_n))
    log_z = (
        -np.sum(np.log(np.diag(L)))
        + np.sum(log_cavity)
        + (n - np.count_nonzero(active)) * math.log(0.5)  # Phi(0) of the uninformative sites
        + 0.5 * tnu @ sigma @ tnu
        + 0.5 * nu_n @ ((tau_a / tau_n * nu_n - 2.0 * nu_a) / (tau_a + tau_n))
        - 0.5 * np.sum(nu_a**2 / (tau_n + tau_a))
        + 0.5 * np.sum(np.log1p(tau_a / tau_n))
    )
    b = tnu - sqrt_s * scipy.linalg.cho_solve((L, True), sqrt_s * (K @ tnu), check_finite=False)
    return {
        "d1": b,
        "f": mu,
        "sqrt_W": sqrt_s,
        "L": L,
        "log_z": float(log_z),
        "sites": (ttau, tnu),
    }


def _fourier_draw(
    column_lengthscales: np.ndarray,
    signal_variance: float,
    n_features: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frequencies, phases and weights of one Matérn 5/2 prior draw by random Fourier features.

    The spectral sampling of :func:`bore_samplers.models.pathwise.random_fourier_prior`
    (Student-t frequencies with 5 degrees of freedom in lengthscale-scaled coordinates; Rahimi &
    Recht, 2007), kept in double precision here because sample paths are differentiated.
    """
    d = len(column_lengthscales)
    omega = rng.standard_normal((n_features, d)) / np.sqrt(
        rng.chisquare(5.0, (n_features, 1)) / 5.0
    )
    omega = omega / column_lengthscales
    phase = rng.uniform(0.0, 2.0 * np.pi, n_features)
    weights = rng.standard_normal(n_features) * math.sqrt(2.0 * signal_variance / n_features)
    return omega, phase, weights


class LatentSamplePath:
    """One posterior sample path of a latent GP, ``f(x) = g(x) + k(x, P) c``, with gradient.

    ``g`` is a random-Fourier-feature prior draw ``sum_j w_j cos(omega_j . x + b_j)`` (plus a
    constant draw ``offset`` when the prior has a constant term of variance
    ``constant_variance``) and the coefficients ``c`` of the points ``P`` its pathwise update
    (Wilson et al., *Efficiently sampling functions from Gaussian process posteriors*, ICML
    2020). Both parts have analytic gradients: ``-sum_j w_j sin(omega_j . x + b_j) omega_j``
    and the Matérn 5/2 derivative.
    Built by :meth:`LaplaceGP.sample_latent_path`.
    """

    def __init__(
        self,
        omega: np.ndarray,
        phase: np.ndarray,
        weights: np.ndarray,
        points: np.ndarray,
        coefficients: np.ndarray,
        column_lengthscales: np.ndarray,
        signal_variance: float,
        offset: float = 0.0,
        constant_variance: float = 0.0,
    ) -> None:
        self.omega = omega
        self.phase = phase
        self.weights = weights
        self.points = points
        self.coefficients = coefficients
        self.column_lengthscales = column_lengthscales
        self.signal_variance = signal_variance
        self.offset = offset
        self.constant_variance = constant_variance

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Values ``(m,)`` of the path at the rows of ``X`` and, with ``with_grad``, their
        gradient ``(m, d)``."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        angles = X @ self.omega.T + self.phase
        K, D, A, B = matern52_with_derivative(
            X, self.points, self.column_lengthscales, self.signal_variance
        )
        values = (
            np.cos(angles) @ self.weights
            + self.offset
            + (K + self.constant_variance) @ self.coefficients
        )
        if not with_grad:
            return values, None
        Dc = D * self.coefficients
        kernel_grad = -2.0 * (np.sum(Dc, axis=1)[:, None] * A - Dc @ B) / self.column_lengthscales
        return values, -(np.sin(angles) * self.weights) @ self.omega + kernel_grad

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.evaluate(X, with_grad=False)[0]


class LaplaceGP:
    """A latent GP observed through linear functionals with binary labels.

    The shared machinery of :class:`GaussianProcessClassifier` and
    :class:`bore_samplers.models.preference.PreferenceGP`. The latent ``f`` has a zero-mean
    Matérn 5/2 ARD prior (see ``constant_variance`` below); label ``t_k`` has likelihood
    ``p(t_k | g_k)`` (logistic or probit) of ``g = A f(P)``, with ``P`` the rows of
    ``X_train_`` and ``A`` a fixed matrix (``None``: the identity, i.e. classification of the
    points). ``g`` is a GP with covariance ``A K A^T``, so
    R&W Algorithms 3.1, 3.2 and 5.1 apply to it unchanged (none of them inverts the kernel
    matrix, which for duels is singular), and ``f`` follows from the cross-covariance
    ``cov(f(x), g) = k(x, P) A^T``. With ``constant_variance = b > 0`` the prior covariance is
    ``k(x, x') + b``: a constant offset of ``f`` with a ``N(0, b)`` prior, integrated out, so
    that far from the data the latent returns to the level the data support instead of 0.
    With ``approximation = "ep"`` (probit only) the posterior of ``g`` is found by Expectation
    Propagation instead of Laplace's method.

    Subclasses set the constructor parameters documented on :class:`GaussianProcessClassifier`
    (``likelihood`` and ``approximation`` may be class attributes) and call
    :meth:`_fit_observations`.

    Attributes
    ----------
    X_train_ : numpy.ndarray
        The points ``P`` at which the latent is observed (through ``A``).
    hyperparameters_ : GPClassifierHyperparameters
        Fitted hyperparameters.
    theta_ : numpy.ndarray
        ``[log l_1..G, log s]``.
    latent_mode_ : numpy.ndarray
        Posterior mode (EP: mean) of the latent ``f`` at ``X_train_``.
    log_marginal_likelihood_value_ : float
        Approximate log marginal likelihood at ``theta_``.
    """

    feature_groups: Sequence[Sequence[int]] | None
    likelihood: Literal["logistic", "probit"]
    approximation: Literal["laplace", "ep"] = "laplace"
    constant_variance: float = 0.0
    optimize: bool
    hyperparameters: GPClassifierHyperparameters | None
    use_priors: bool
    n_restarts: int
    max_iter: int
    max_newton_iter: int
    seed: int | None

    # ------------------------------------------------------------------ fitting
    def _fit_observations(
        self,
        points: np.ndarray,
        operator: np.ndarray | None,
        t: np.ndarray,
        warm_start: GPClassifierHyperparameters | None,
    ) -> None:
        """Fit hyperparameters and the posterior given labels ``t`` in {0, 1} of ``A f(P)``."""
        if self.approximation not in ("laplace", "ep"):
            raise ValueError(
                f"approximation must be 'laplace' or 'ep', got {self.approximation!r}."
            )
        if self.approximation == "ep" and self.likelihood != "probit":
            raise ValueError("Expectation Propagation is implemented for the probit likelihood.")
        if not (math.isfinite(self.constant_variance) and self.constant_variance >= 0.0):
            raise ValueError(
                f"constant_variance must be a finite number >= 0, got {self.constant_variance!r}."
            )
        self.group_of_column_, self.n_groups_ = column_groups(self.feature_groups, points.shape[1])
        self.X_train_ = points
        self.t_train_ = t
        self._operator = operator
        self._a_start = np.zeros(len(t))
        self._sites_start: tuple[np.ndarray, np.ndarray] | None = None

        start = warm_start if warm_start is not None else self.hyperparameters
        theta = self._theta_from(start)
        if self.optimize:
            theta = self._optimize(theta)
        self._set_posterior(theta)

    def _theta_from(self, hp: GPClassifierHyperparameters | None) -> np.ndarray:
        G = self.n_groups_
        if hp is None:
            return np.concatenate([np.full(G, math.log(0.5)), [0.0]])
        lengthscales = np.broadcast_to(np.asarray(hp.lengthscales, dtype=float), (G,))
        return np.concatenate([np.log(lengthscales), [math.log(hp.signal_variance)]])

    def _kernel(self, theta: np.ndarray, X2: np.ndarray | None = None) -> np.ndarray:
        """Prior covariances of ``f`` between the training points (``X2`` None) or between
        ``X2`` and them: the Matérn 5/2 kernel plus ``constant_variance``."""
        G = self.n_groups_
        column_lengthscales = expand_lengthscales(np.exp(theta[:G]), self.group_of_column_)
        matern = matern52_kernel(
            self.X_train_ if X2 is None else X2,
            None if X2 is None else self.X_train_,
            column_lengthscales,
            math.exp(theta[G]),
        )
        return matern + self.constant_variance if self.constant_variance else matern

    def _observed(self, K: np.ndarray) -> np.ndarray:
        """``K A^T``: covariances with ``f(P)`` turned into covariances with ``g = A f(P)``."""
        return K if self._operator is None else K @ self._operator.T

    def _observed_kernel(self, K: np.ndarray) -> np.ndarray:
        """``A K A^T`` (also for a stack of matrices, e.g. kernel derivatives)."""
        if self._operator is None:
            return K
        return self._operator @ K @ self._operator.T

    def _laplace_mode(self, K: np.ndarray) -> dict[str, np.ndarray | float]:
        """Newton's method for the posterior mode (R&W Algorithm 3.1) and its by-products.

        Steps are halved while the objective ``Psi = -a'Ka/2 + log p(t|Ka)`` would decrease,
        a safeguard the algorithm leaves out; for log-concave likelihoods it rarely triggers.
        """
        t, n = self.t_train_, len(self.t_train_)
        # Start from the previous mode's a (f = K a): during the hyperparameter search
        # consecutive kernels are close, so this saves Newton steps.
        a = self._a_start.copy()
        f = K @ a
        log_lik, d1, d2, _ = _log_likelihood_derivatives(f, t, self.likelihood)
        psi = -0.5 * a @ f + log_lik
        for _ in range(self.max_newton_iter):
            W = -d2
            sqrt_W = np.sqrt(W)
            L, _ = cholesky_with_jitter(np.eye(n) + sqrt_W[:, None] * K * sqrt_W[None, :])
            b = W * f + d1
            a_newton = b - sqrt_W * scipy.linalg.cho_solve(
                (L, True), sqrt_W * (K @ b), check_finite=False
            )
            step = 1.0
            for _ in range(30):
                a_new = a + step * (a_newton - a)
                f_new = K @ a_new
                log_lik_new, d1_new, d2_new, _ = _log_likelihood_derivatives(
                    f_new, t, self.likelihood
                )
                psi_new = -0.5 * a_new @ f_new + log_lik_new
                if psi_new >= psi - 1e-12 * abs(psi):
                    break
                step *= 0.5
            change = np.max(np.abs(f_new - f), initial=0.0)
            a, f, psi, d1, d2 = a_new, f_new, psi_new, d1_new, d2_new
            if change < 1e-10 * (1.0 + np.max(np.abs(f), initial=0.0)):
                break
        # Recompute the Laplace quantities at the final mode.
        log_lik, d1, d2, d3 = _log_likelihood_derivatives(f, t, self.likelihood)
        sqrt_W = np.sqrt(-d2)
        L, _ = cholesky_with_jitter(np.eye(n) + sqrt_W[:, None] * K * sqrt_W[None, :])
        # R&W eq. 3.32: log q(y|X) = -a'f/2 + log p(y|f) - log|B|/2 with a = K^-1 f = d1.
        log_z = -0.5 * d1 @ f + log_lik - np.sum(np.log(np.diag(L)))
        return {
            "a": a,
            "f": f,
            "d1": d1,
            "d3": d3,
            "sqrt_W": sqrt_W,
            "L": L,
            "log_z": float(log_z),
        }

    def _posterior_of(self, K: np.ndarray) -> dict:
        """The Laplace mode or the EP fixed point for the observed kernel ``K``, warm-started
        from the previous call (consecutive kernels of the hyperparameter search are close)."""
        if self.approximation == "ep":
            result = _probit_expectation_propagation(
                K, self.t_train_, self._sites_start, self.max_newton_iter
            )
            self._sites_start = result["sites"]
            return result
        mode = self._laplace_mode(K)
        self._a_start = mode["a"]
        return mode

    def _log_posterior(self, theta: np.ndarray, with_prior: bool) -> tuple[float, np.ndarray]:
        """Approximate log marginal likelihood (+ log priors) and its gradient.

        Laplace: R&W Algorithm 5.1, explicit term plus the implicit one through the mode. EP:
        R&W eq. 5.27, ``(b b^T - W^1/2 B^-1 W^1/2) dK / 2`` traced, exact at the fixed point.
        """
        G = self.n_groups_
        K_points = self._kernel(theta)
        K = self._observed_kernel(K_points)
        mode = self._posterior_of(K)
        d1, sqrt_W, L = (mode[k] for k in ("d1", "sqrt_W", "L"))
        R = sqrt_W[:, None] * scipy.linalg.cho_solve(
            (L, True), np.diag(sqrt_W), check_finite=False
        )
        laplace = self.approximation != "ep"
        if laplace:
            C = scipy.linalg.solve_triangular(
                L, sqrt_W[:, None] * K, lower=True, check_finite=False
            )
            # Implicit part through the mode (R&W eq. 5.23): d log|B| / d f_i involves
            # dW_ii/df_i, which is MINUS the third derivative of log p since W = -grad grad
            # log p; written with d3 = third derivative of log p the factor is therefore +1/2
            # (checked numerically).
            s2 = 0.5 * (np.diag(K) - np.einsum("ij,ij->j", C, C)) * mode["d3"]
        lengthscales = np.exp(theta[:G])
        dK = self._observed_kernel(
            np.concatenate(
                [
                    matern52_lengthscale_gradients(
                        self.X_train_,
                        expand_lengthscales(lengthscales, self.group_of_column_),
                        math.exp(theta[G]),
                        self.group_of_column_,
                        G,
                    ),
                    # dK / d log s: the Matérn part of K.
                    (K_points - self.constant_variance)[None],
                ]
            )
        )
        grad = np.empty(G + 1)
        for j, C_j in enumerate(dK):
            s1 = 0.5 * d1 @ C_j @ d1 - 0.5 * np.sum(R * C_j)
            if laplace:
                b = C_j @ d1
                s3 = b - K @ (R @ b)
                s1 += s2 @ s3
            grad[j] = s1
        value = float(mode["log_z"])
        if with_prior:
            log_prior, d_log_prior = gamma_log_prior(lengthscales, LENGTHSCALE_PRIOR)
            value += log_prior
            grad[:G] += d_log_prior
            log_prior, d_log_prior = gamma_log_prior(
                math.exp(theta[G]), LATENT_SIGNAL_VARIANCE_PRIOR
            )
            value += log_prior
            grad[G] += d_log_prior
        return value, grad

    def _optimize(self, theta0: np.ndarray) -> np.ndarray:
        G = self.n_groups_
        bounds = [tuple(np.log(LENGTHSCALE_BOUNDS))] * G + [tuple(np.log(SIGNAL_VARIANCE_BOUNDS))]
        lower, upper = np.array(bounds).T
        rng = np.random.default_rng(self.seed)
        starts = [np.clip(theta0, lower, upper)]
        for _ in range(self.n_restarts):
            starts.append(
                np.concatenate(
                    [
                        rng.uniform(math.log(0.05), math.log(2.0), G),
                        [rng.uniform(math.log(0.3), math.log(10.0))],
                    ]
                )
            )

        return multistart_maximize(
            lambda theta: self._log_posterior(theta, with_prior=self.use_priors),
            starts,
            bounds,
            self.max_iter,
        )

    def _reset_start(self) -> None:
        self._a_start = np.zeros(len(self.t_train_))
        self._sites_start = None

    def _set_posterior(self, theta: np.ndarray) -> None:
        self.theta_ = np.asarray(theta, dtype=float).copy()
        self._reset_start()  # converge from scratch for the final fit
        K_points = self._kernel(self.theta_)
        mode = self._posterior_of(self._observed_kernel(K_points))
        self._d1 = mode["d1"]
        # Weights of the points in the posterior mean, E[f(x)] = k(x, P) A^T d1.
        self._point_weights = self._d1 if self._operator is None else self._operator.T @ self._d1
        self.latent_mode_ = mode["f"] if self._operator is None else K_points @ self._point_weights
        self._sqrt_W = mode["sqrt_W"]
        self._L = mode["L"]
        self.log_marginal_likelihood_value_ = mode["log_z"]

    def log_marginal_likelihood(
        self, theta: np.ndarray | None = None, eval_gradient: bool = False
    ) -> float | tuple[float, np.ndarray]:
        """Approximate log marginal likelihood (no priors) at ``theta``.

        ``theta`` is ``[log l_1..G, log s]``; ``None``: the fitted one.
        """
        self._check_fitted()
        theta = self.theta_ if theta is None else np.asarray(theta, dtype=float)
        saved = self._a_start, self._sites_start
        self._reset_start()
        try:
            value, grad = self._log_posterior(theta, with_prior=False)
        finally:
            self._a_start, self._sites_start = saved
        return (value, grad) if eval_gradient else value

    # ------------------------------------------------------------------ fitted values
    def _check_fitted(self) -> None:
        if not hasattr(self, "theta_"):
            raise RuntimeError(f"This {type(self).__name__} is not fitted yet; call fit().")

    @property
    def hyperparameters_(self) -> GPClassifierHyperparameters:
        """Fitted hyperparameters."""
        self._check_fitted()
        G = self.n_groups_
        return GPClassifierHyperparameters(
            lengthscales=np.exp(self.theta_[:G]), signal_variance=math.exp(self.theta_[G])
        )

    @property
    def lengthscales_(self) -> np.ndarray:
        """Fitted lengthscale of each feature group."""
        return self.hyperparameters_.lengthscales

    @property
    def signal_variance_(self) -> float:
        """Fitted latent signal variance."""
        return self.hyperparameters_.signal_variance

    # ------------------------------------------------------------------ prediction
    def _column_lengthscales(self) -> np.ndarray:
        return expand_lengthscales(np.exp(self.theta_[: self.n_groups_]), self.group_of_column_)

    def _cross_kernel_with_derivative(
        self, X: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_kernel` between ``X`` and the training points, with the parts of its input
        derivative from :func:`matern52_with_derivative` (the constant term has none)."""
        K, D, A, B = matern52_with_derivative(
            X, self.X_train_, self._column_lengthscales(), math.exp(self.theta_[-1])
        )
        return K + self.constant_variance, D, A, B

    def _prior_variance(self) -> float:
        """Prior variance of ``f(x)``: signal variance plus ``constant_variance``."""
        return math.exp(self.theta_[-1]) + self.constant_variance

    def _latent_mean_and_factor(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # R&W Alg. 3.2: mean K_* grad log p(t | f_hat), and V = L^-1 W^1/2 K_*^T, so that the
        # latent covariance is K_** - V^T V (K_* A^T in place of K_* when observing A f).
        self._check_fitted()
        K_star = self._kernel(self.theta_, X)
        V = solve_lower(self._L, self._sqrt_W[:, None] * self._observed(K_star).T)
        return K_star @ self._point_weights, V

    def _precision_weights(self, K_obs: np.ndarray) -> np.ndarray:
        """``A^T W^1/2 B^-1 W^1/2 K_obs^T``, shape ``(n_points, m)``: the weights of the points
        in the variance reduction ``k_*^T A^T W^1/2 B^-1 W^1/2 A k_*``."""
        u = self._sqrt_W[:, None] * scipy.linalg.cho_solve(
            (self._L, True), self._sqrt_W[:, None] * K_obs.T, check_finite=False
        )
        return u if self._operator is None else self._operator.T @ u

    def predict_latent(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the approximate posterior of the latent ``f`` (R&W Alg. 3.2).

        Returns
        -------
        mean, var
            Shape ``(m,)`` each.
        """
        X = np.atleast_2d(np.asarray(X, dtype=float))
        mean, V = self._latent_mean_and_factor(X)
        var = np.maximum(self._prior_variance() - np.einsum("ij,ij->j", V, V), 0.0)
        return mean, var

    def predict_latent_with_grad(
        self, X: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`predict_latent` with the gradients of both w.r.t. the inputs.

        The mean is ``K_* d1`` and the variance ``s - sum V^2`` with ``V = L^-1 W^1/2 K_*^T``
        (R&W Alg. 3.2), i.e. ``s - k_*^T W^1/2 B^-1 W^1/2 k_*``; with
        ``dk(x*, x_i)/dx* = -2 D (a* - a_i) / l`` (``a = x / l``, ``D = -dk/d(r^2)``) the
        gradients are ``sum_i d1_i dk_i/dx*`` and ``-2 sum_i u_i dk_i/dx*`` with
        ``u = W^1/2 B^-1 W^1/2 k_*`` (``A^T d1`` and ``A^T W^1/2 B^-1 W^1/2 A k_*`` when
        observing ``A f``).

        Returns
        -------
        mean, var, mean_grad, var_grad
            Shapes ``(m,)``, ``(m,)``, ``(m, d)``, ``(m, d)``. Where the variance is clipped at
            0 its gradient is 0.
        """
        self._check_fitted()
        X = np.atleast_2d(np.asarray(X, dtype=float))
        column_lengthscales = self._column_lengthscales()
        K_star, D, A, B = self._cross_kernel_with_derivative(X)
        inv_l = 1.0 / column_lengthscales
        mean = K_star @ self._point_weights
        K_obs = self._observed(K_star)
        V = solve_lower(self._L, self._sqrt_W[:, None] * K_obs.T)
        raw_var = self._prior_variance() - np.einsum("ij,ij->j", V, V)
        # sum_i w_i dk_i/dx* = -2 (rowsum(D w) a* - (D w) B) / l for weights w_i.
        Dw = D * self._point_weights
        mean_grad = -2.0 * (np.sum(Dw, axis=1)[:, None] * A - Dw @ B) * inv_l
        Du = D * self._precision_weights(K_obs).T
        var_grad = 4.0 * (np.sum(Du, axis=1)[:, None] * A - Du @ B) * inv_l
        clipped = raw_var <= 0.0
        var_grad[clipped] = 0.0
        return mean, np.maximum(raw_var, 0.0), mean_grad, var_grad

    def predict_latent_cov(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and joint covariance of the latent posterior at the rows of ``X``.

        Needed for jointly dependent Thompson samples of the constrained minimum (cMES, A.4)
        and for duels between given points.

        Returns
        -------
        mean, cov
            Shapes ``(m,)`` and ``(m, m)``.
        """
        X = np.atleast_2d(np.asarray(X, dtype=float))
        mean, V = self._latent_mean_and_factor(X)
        prior = matern52_kernel(X, None, self._column_lengthscales(), math.exp(self.theta_[-1]))
        return mean, prior + self.constant_variance - V.T @ V

    def predict_duel(self, X1: np.ndarray, X2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of ``f(x1) - f(x2)`` for paired rows of ``X1``, ``X2``.

        From the joint posterior of the pair: mean ``mu1 - mu2`` and variance
        ``s1^2 + s2^2 - 2 cov12``, computed as ``2 (s - k(x1, x2)) - |V1 - V2|^2`` (no
        cancellation between the two marginal variances). ``X1`` may be a single row, shared by
        every row of ``X2``.

        Returns
        -------
        mean, var
            Shape ``(m,)`` each.
        """
        mean, var, _, _ = self._duel(X1, X2, with_grad=False)
        return mean, var

    def predict_duel_with_grad(
        self, X1: np.ndarray, X2: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`predict_duel` with the gradients of mean and variance w.r.t. ``X2``.

        With ``u = A^T W^1/2 B^-1 W^1/2 A (k1 - k2)`` the variance gradient is
        ``-2 dk(x1, x2)/dx2 + 2 sum_i u_i dk(x2, p_i)/dx2``.

        Returns
        -------
        mean, var, mean_grad, var_grad
            Shapes ``(m,)``, ``(m,)``, ``(m, d)``, ``(m, d)``; the variance gradient is 0 where
            the variance is clipped at 0.
        """
        mean, var, mean_grad, var_grad = self._duel(X1, X2, with_grad=True)
        assert mean_grad is not None and var_grad is not None
        return mean, var, mean_grad, var_grad

    def _duel(
        self, X1: np.ndarray, X2: np.ndarray, with_grad: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        self._check_fitted()
        X1 = np.atleast_2d(np.asarray(X1, dtype=float))
        X2 = np.atleast_2d(np.asarray(X2, dtype=float))
        if len(X1) == 1:
            X1 = np.broadcast_to(X1, X2.shape)
        elif X1.shape != X2.shape:
            raise ValueError(
                f"X1 must have one row or the shape of X2, got {X1.shape}, {X2.shape}."
            )
        signal = math.exp(self.theta_[-1])
        column_lengthscales = self._column_lengthscales()
        K1 = self._kernel(self.theta_, X1)
        K2, D2, A2, B2 = self._cross_kernel_with_derivative(X2)
        # k(x1, x2) of each pair: the stationary kernel of the difference against the origin.
        delta = X1 - X2
        k12, D12, _, _ = matern52_with_derivative(
            delta, np.zeros((1, X2.shape[1])), column_lengthscales, signal
        )
        K_diff = self._observed(K1 - K2)
        V = solve_lower(self._L, self._sqrt_W[:, None] * K_diff.T)
        raw_var = 2.0 * (signal - k12[:, 0]) - np.einsum("ij,ij->j", V, V)
        mean = (K1 - K2) @ self._point_weights
        var = np.maximum(raw_var, 0.0)
        if not with_grad:
            return mean, var, None, None
        inv_l = 1.0 / column_lengthscales
        Dw = D2 * self._point_weights
        mean_grad = 2.0 * (np.sum(Dw, axis=1)[:, None] * A2 - Dw @ B2) * inv_l
        Du = D2 * self._precision_weights(K_diff).T
        var_grad = (
            -4.0 * D12 * delta * inv_l**2
            - 4.0 * (np.sum(Du, axis=1)[:, None] * A2 - Du @ B2) * inv_l
        )
        var_grad[raw_var <= 0.0] = 0.0
        return mean, var, mean_grad, var_grad

    def sample_latent_joint(
        self, X: np.ndarray, n_samples: int, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """Exact joint samples of the latent posterior at ``X``, ``O(m^3)``.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_samples, m)``.
        """
        mean, cov = self.predict_latent_cov(X)
        return gaussian_samples(mean, cov, n_samples, np.random.default_rng(rng))

    def sample_latent_pathwise(
        self,
        X: np.ndarray,
        n_samples: int,
        rng: np.random.Generator | int | None = None,
        n_features: int = 512,
    ) -> np.ndarray:
        """Joint samples of the latent posterior at ``X`` by pathwise conditioning.

        The Laplace (or EP) posterior is the GP posterior given pseudo-targets with noise
        ``W^-1``, so Matheron's rule applies (Wilson et al., 2020). Written without ``W^-1``,
        which is huge where the likelihood saturates:
        ``f(x) = k(x, X) d1 + g(x) - k(x, X) W^1/2 B^-1 (W^1/2 g(X) + eta)``, with ``g`` a
        random-Fourier-feature prior draw, ``eta ~ N(0, I)`` and ``B = I + W^1/2 K W^1/2``:
        mean ``k d1`` and covariance ``k** - k W^1/2 B^-1 W^1/2 k`` as in R&W Alg. 3.2 (``k A^T``
        and ``A g(P)`` in place of ``k`` and ``g(X)`` when observing ``A f``). Costs
        ``O(m (n + F) d)``, against the ``O(m^3)`` of :meth:`predict_latent_cov`.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_samples, m)``.
        """
        self._check_fitted()
        rng = np.random.default_rng(rng)
        X = np.atleast_2d(np.asarray(X, dtype=float))
        prior = random_fourier_prior(
            self._column_lengthscales(), math.exp(self.theta_[-1]), n_samples, n_features, rng
        )
        # Drawn only with a constant term, so that without one the random stream is unchanged.
        offsets = (
            rng.standard_normal((n_samples, 1)) * math.sqrt(self.constant_variance)
            if self.constant_variance
            else np.zeros((n_samples, 1))
        )
        eta = rng.standard_normal((n_samples, len(self.t_train_)))
        rhs = self._sqrt_W * self._observed(prior(self.X_train_) + offsets) + eta
        update = self._sqrt_W[:, None] * scipy.linalg.cho_solve(
            (self._L, True), rhs.T, check_finite=False
        )
        K_star = self._kernel(self.theta_, X)
        return (
            K_star @ self._point_weights + prior(X) + offsets - (self._observed(K_star) @ update).T
        )

    def sample_latent_path(
        self, rng: np.random.Generator | int | None = None, n_features: int = 1024
    ) -> LatentSamplePath:
        """One posterior sample path of the latent, as a function with an analytic gradient.

        The pathwise update of :meth:`sample_latent_pathwise` for a single draw, kept as a
        function of ``x``: ``f(x) = g(x) + k(x, P) c`` with
        ``c = A^T (d1 - W^1/2 B^-1 (W^1/2 A g(P) + eta))``. The object to maximise for
        Thompson sampling.
        """
        self._check_fitted()
        rng = np.random.default_rng(rng)
        column_lengthscales = self._column_lengthscales()
        signal = math.exp(self.theta_[-1])
        omega, phase, weights = _fourier_draw(column_lengthscales, signal, n_features, rng)
        offset = (
            float(rng.standard_normal()) * math.sqrt(self.constant_variance)
            if self.constant_variance
            else 0.0
        )
        prior_at_points = np.cos(self.X_train_ @ omega.T + phase) @ weights + offset
        observed_prior = (
            prior_at_points if self._operator is None else self._operator @ prior_at_points
        )
        eta = rng.standard_normal(len(self.t_train_))
        update = self._sqrt_W * scipy.linalg.cho_solve(
            (self._L, True), self._sqrt_W * observed_prior + eta, check_finite=False
        )
        coefficients = self._point_weights - (
            update if self._operator is None else self._operator.T @ update
        )
        return LatentSamplePath(
            omega,
            phase,
            weights,
            self.X_train_,
            coefficients,
            column_lengthscales,
            signal,
            offset=offset,
            constant_variance=self.constant_variance,
        )


class GaussianProcessClassifier(LaplaceGP):
    """Binary GP classifier with Laplace's approximation and a Matérn 5/2 ARD kernel.

    Parameters
    ----------
    feature_groups
        Feature columns sharing one lengthscale (see :class:`bore_samplers.models.gp_regression.
        GaussianProcessRegressor`); ``None``: one lengthscale per column.
    likelihood
        ``"logistic"`` or ``"probit"``.
    optimize
        Fit hyperparameters by maximising the Laplace approximate log marginal likelihood
        (R&W eq. 3.32) plus log priors. If False, ``hyperparameters`` are used as given.
    hyperparameters
        Fixed hyperparameters (``optimize=False``) or the first starting point. ``None``:
        lengthscales 0.5 and signal variance 1.
    use_priors
        Add log priors: lengthscales Gamma(3, 6) (as for regression), latent signal variance
        Gamma(2, 0.5).
    n_restarts
        Random restarts of L-BFGS-B in addition to the first starting point.
    max_iter
        Iteration limit of each L-BFGS-B run.
    max_newton_iter
        Iteration limit of the Newton mode search.
    seed
        Seed of the restart points.
    constant_variance
        Prior variance ``b >= 0`` of a constant offset of the latent (kernel ``k + b``): a
        Gaussian prior on a constant prior mean, integrated out. With the default 0 the prior
        mean is 0, i.e. a probability of 1/2 far from the data whatever the labels say.

    Attributes
    ----------
    hyperparameters_ : GPClassifierHyperparameters
        Fitted hyperparameters.
    theta_ : numpy.ndarray
        ``[log l_1..G, log s]``.
    latent_mode_ : numpy.ndarray
        Posterior mode of the latent function at the training inputs.
    log_marginal_likelihood_value_ : float
        Laplace approximate log marginal likelihood at ``theta_``.
    """

    def __init__(
        self,
        feature_groups: Sequence[Sequence[int]] | None = None,
        *,
        likelihood: Literal["logistic", "probit"] = "logistic",
        optimize: bool = True,
        hyperparameters: GPClassifierHyperparameters | None = None,
        use_priors: bool = True,
        n_restarts: int = 2,
        max_iter: int = 100,
        max_newton_iter: int = 100,
        seed: int | None = None,
        constant_variance: float = 0.0,
    ) -> None:
        self.feature_groups = feature_groups
        self.likelihood = likelihood
        self.optimize = optimize
        self.hyperparameters = hyperparameters
        self.use_priors = use_priors
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.max_newton_iter = max_newton_iter
        self.seed = seed
        self.constant_variance = constant_variance

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        warm_start: GPClassifierHyperparameters | None = None,
    ) -> GaussianProcessClassifier:
        """Fit hyperparameters and the Laplace posterior.

        Parameters
        ----------
        X
            Features, shape ``(n, d)``; duplicated rows are fine.
        y
            Binary labels in {0, 1}, {-1, +1} or booleans; the positive class is 1 / +1 /
            True. A single class is allowed (the latent mode then moves away from 0 only as
            far as the prior lets it).
        warm_start
            Previous hyperparameters, used as the first starting point.
        """
        if self.likelihood not in ("logistic", "probit"):
            raise ValueError(
                f"likelihood must be 'logistic' or 'probit', got {self.likelihood!r}."
            )
        X = np.atleast_2d(np.asarray(X, dtype=float))
        labels = np.asarray(y).ravel()
        if len(X) != len(labels) or len(labels) == 0:
            raise ValueError(f"Need matching, non-empty X and y, got {len(X)} and {len(labels)}.")
        values = set(np.unique(labels.astype(float)).tolist())
        if not (values <= {0.0, 1.0} or values <= {-1.0, 1.0}):
            raise ValueError(f"Labels must be in {{0, 1}} or {{-1, +1}}, got {sorted(values)}.")
        self._fit_observations(X, None, (labels.astype(float) > 0).astype(float), warm_start)
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Probability of the positive class, shape ``(m,)``.

        Probit: exact ``Phi(mu / sqrt(1 + var))``. Logistic: MacKay's approximation
        ``sigma(mu / sqrt(1 + pi var / 8))`` (Bishop, PRML eq. 4.153), within about 0.02 of the
        exact Gaussian average.
        """
        mean, var = self.predict_latent(X)
        if self.likelihood == "probit":
            return ndtr(mean / np.sqrt(1.0 + var))
        return expit(mean / np.sqrt(1.0 + math.pi * var / 8.0))
