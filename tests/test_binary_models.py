"""Tests of the probit GP classifier and the preference GP for duels.

The oracles: scikit-learn's Laplace classifier (logistic only), the Laplace fixed point and the
dense formulas of Rasmussen & Williams (probit), Chu & Ghahramani's formulation of preference
learning (Newton on f with a non-diagonal W), importance sampling of the exact posterior,
closed forms for a single observation (where EP is exact) and finite differences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import log_ndtr, ndtr
from scipy.stats import spearmanr
from sklearn.gaussian_process import GaussianProcessClassifier as SklearnGPC
from sklearn.gaussian_process.kernels import ConstantKernel, Matern

from bore_samplers.models.gp_classification import (
    GaussianProcessClassifier,
    GPClassifierHyperparameters,
    _log_likelihood_derivatives,
)
from bore_samplers.models.kernels import matern52_kernel
from bore_samplers.models.preference import PreferenceGP
from bore_samplers.space import CategoricalParam, FloatParam, SearchSpace

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _classification_data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    latent = 3.0 * np.sin(4.0 * X[:, 0]) + 2.0 * X[:, 1 % d] - 2.0
    return X, (latent + 0.5 * rng.standard_normal(n) > 0).astype(int)


def _utility(X: np.ndarray) -> np.ndarray:
    """A smooth test utility on the unit cube, of standard deviation about 1."""
    return (
        np.sin(3.0 * X[:, 0])
        + np.cos(2.5 * X[:, 1 % X.shape[1]])
        - 1.5 * (X[:, 2 % X.shape[1]] - 0.4) ** 2
    )


def _duels(
    n: int, d: int, seed: int, scale: float = 2.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random duels whose outcomes follow ``P(first wins) = Phi(scale (u(first) - u(second)))``."""
    rng = np.random.default_rng(seed)
    first, second = rng.random((n, d)), rng.random((n, d))
    p = ndtr(scale * (_utility(first) - _utility(second)))
    return first, second, (rng.random(n) < p).astype(int)


def _hp(lengthscales, signal: float) -> GPClassifierHyperparameters:
    return GPClassifierHyperparameters(np.asarray(lengthscales, dtype=float), signal)


def _fixed_classifier(X, y, lengthscales, signal, likelihood) -> GaussianProcessClassifier:
    return GaussianProcessClassifier(
        likelihood=likelihood, optimize=False, hyperparameters=_hp(lengthscales, signal)
    ).fit(X, y)


def _fixed_preference(first, second, outcomes, lengthscales, signal, approximation="laplace"):
    return PreferenceGP(
        approximation=approximation, optimize=False, hyperparameters=_hp(lengthscales, signal)
    ).fit(first, second, outcomes)


def _probit_derivatives(g: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivatives of ``log Phi(y g)`` w.r.t. ``g`` (labels ``y = +-1``)."""
    z = y * g
    ratio = np.exp(-0.5 * z * z - LOG_SQRT_2PI - log_ndtr(z))
    return y * ratio, -ratio * (z + ratio)


# ----------------------------------------------------------------------- Bernoulli probit
def test_logistic_case_matches_sklearn() -> None:
    X, y = _classification_data(30, 2, seed=1)
    lengthscales, signal = np.array([0.4, 0.7]), 2.0
    kernel = ConstantKernel(signal, "fixed") * Matern(lengthscales, nu=2.5)
    sk = SklearnGPC(kernel, optimizer=None).fit(X, y)
    ours = _fixed_classifier(X, y, lengthscales, signal, "logistic")
    np.testing.assert_allclose(
        ours.latent_mode_, sk.base_estimator_.f_cached, rtol=1e-7, atol=1e-8
    )
    X_test = np.random.default_rng(2).random((20, 2))
    # sklearn averages the logistic with an erf expansion, we use MacKay's probit scaling.
    np.testing.assert_allclose(
        ours.predict_proba(X_test), sk.predict_proba(X_test)[:, 1], atol=0.02
    )


def test_probit_mode_is_the_laplace_fixed_point_and_moments_match_dense_formulas() -> None:
    X, y = _classification_data(25, 2, seed=3)
    lengthscales, signal = [0.3, 0.6], 2.5
    model = _fixed_classifier(X, y, lengthscales, signal, "probit")
    K = matern52_kernel(X, None, np.array(lengthscales), signal)
    f_hat = model.latent_mode_
    d1, d2 = _probit_derivatives(f_hat, 2.0 * y - 1.0)
    # Mode: f = K grad log p(y | f) (R&W eq. 3.17).
    np.testing.assert_allclose(f_hat, K @ d1, rtol=1e-9, atol=1e-10)
    # Posterior at test points from (K^-1 + W)^-1 directly (R&W eq. 3.21, 3.24).
    X_test = np.random.default_rng(4).random((7, 2))
    K_star = matern52_kernel(X_test, X, np.array(lengthscales), signal)
    K_inv = np.linalg.inv(K)
    W = np.diag(-d2)
    cov_f = np.linalg.inv(K_inv + W)
    mean = K_star @ K_inv @ f_hat
    var = signal - np.einsum("ij,jk,ik->i", K_star, K_inv - K_inv @ cov_f @ K_inv, K_star)
    got_mean, got_var = model.predict_latent(X_test)
    np.testing.assert_allclose(got_mean, mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got_var, var, rtol=1e-7, atol=1e-9)
    # Laplace evidence (R&W eq. 3.32).
    log_z = (
        -0.5 * f_hat @ K_inv @ f_hat
        + np.sum(log_ndtr((2.0 * y - 1.0) * f_hat))
        - 0.5 * np.linalg.slogdet(np.eye(len(X)) + np.sqrt(W) @ K @ np.sqrt(W))[1]
    )
    assert model.log_marginal_likelihood() == pytest.approx(log_z, rel=1e-8)


def test_probit_predictions_against_monte_carlo() -> None:
    X, y = _classification_data(30, 2, seed=5)
    model = _fixed_classifier(X, y, [0.3, 0.4], 2.0, "probit")
    X_test = np.random.default_rng(6).random((5, 2))
    mean, var = model.predict_latent(X_test)
    samples = mean + np.sqrt(var) * np.random.default_rng(0).standard_normal((400_000, 5))
    np.testing.assert_allclose(model.predict_proba(X_test), ndtr(samples).mean(0), atol=3e-3)
    # Pathwise and exact joint samples agree with the latent moments.
    draws = model.sample_latent_joint(X_test, 100_000, rng=1)
    np.testing.assert_allclose(draws.mean(0), mean, atol=0.02 * np.sqrt(var.max()))


def test_probit_laplace_is_close_to_the_exact_posterior_when_data_are_few() -> None:
    # Importance sampling of the exact posterior with the prior as proposal.
    X = np.array([[0.1], [0.4], [0.8]])
    y = np.array([1, 0, 1])
    X_test = np.array([[0.25], [0.6]])
    lengthscales, signal = [0.3], 0.7
    model = _fixed_classifier(X, y, lengthscales, signal, "probit")
    points = np.vstack([X, X_test])
    K = matern52_kernel(points, None, np.array(lengthscales), signal)
    draws = np.random.default_rng(0).multivariate_normal(np.zeros(5), K, 400_000)
    weights = np.exp(np.sum(log_ndtr((2.0 * y - 1.0) * draws[:, :3]), axis=1))
    exact = weights @ draws[:, 3:] / weights.sum()
    mean, var = model.predict_latent(X_test)
    np.testing.assert_allclose(mean, exact, atol=0.1 * np.sqrt(var.max()))


@pytest.mark.parametrize("likelihood", ["logistic", "probit"])
def test_fitted_classifier_gradients(likelihood: str) -> None:
    X, y = _classification_data(40, 2, seed=7)
    model = GaussianProcessClassifier(likelihood=likelihood, seed=0).fit(X, y)
    X_test = np.random.default_rng(8).random((6, 2))
    mean, var, mean_grad, var_grad = model.predict_latent_with_grad(X_test)
    h = 1e-6
    for j in range(2):
        step = np.eye(2)[j] * h
        (mp, vp), (mm, vm) = (
            model.predict_latent(X_test + step),
            model.predict_latent(X_test - step),
        )
        np.testing.assert_allclose(mean_grad[:, j], (mp - mm) / (2 * h), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(var_grad[:, j], (vp - vm) / (2 * h), rtol=1e-5, atol=1e-7)


def test_probit_curvature_stays_accurate_far_in_the_tail() -> None:
    # W = r (z + r) with r = N(z)/Phi(z) must stay in (0, 1] where z + r cancels as written.
    f = -np.logspace(0.5, 8, 40)
    _, d1, d2, _ = _log_likelihood_derivatives(f, np.ones(40), "probit")
    W = -d2
    assert np.all((W > 0) & (W <= 1))
    # Mills' ratio asymptotics: r = x + 1/x - 2/x^3 + ..., W = 1 - 1/x^2 + 6/x^4 - ...
    x = -f[f < -1e3]
    np.testing.assert_allclose(d1[f < -1e3], x + 1 / x - 2 / x**3, rtol=1e-14)
    np.testing.assert_allclose(W[f < -1e3], 1 - 1 / x**2 + 6 / x**4, rtol=1e-14)
    # And the first derivative matches a central difference of log Phi where both are accurate.
    f = np.array([-30.0, -12.0, -9.0, -2.0, 0.5, 4.0])
    h = 1e-6
    fd = (log_ndtr(f + h) - log_ndtr(f - h)) / (2 * h)
    np.testing.assert_allclose(
        _log_likelihood_derivatives(f, np.ones(6), "probit")[1], fd, rtol=1e-7
    )
    fd2 = (
        _log_likelihood_derivatives(f + h, np.ones(6), "probit")[1]
        - _log_likelihood_derivatives(f - h, np.ones(6), "probit")[1]
    ) / (2 * h)
    np.testing.assert_allclose(
        _log_likelihood_derivatives(f, np.ones(6), "probit")[2], fd2, rtol=1e-6
    )


# ----------------------------------------------------------------------- preference GP
def _chu_ghahramani(first, second, outcomes, lengthscales, signal, X_test):
    """Laplace on f at the distinct points with W = A^T diag(w) A (Chu & Ghahramani, 2005)."""
    points, index = np.unique(np.vstack([first, second]), axis=0, return_inverse=True)
    index = index.ravel()
    m = len(first)
    A = np.zeros((m, len(points)))
    A[np.arange(m), index[:m]] += 1.0
    A[np.arange(m), index[m:]] -= 1.0
    y = 2.0 * outcomes - 1.0
    K = matern52_kernel(points, None, np.array(lengthscales), signal)
    K_inv = np.linalg.inv(K)
    f = np.zeros(len(points))
    for _ in range(100):
        d1, d2 = _probit_derivatives(A @ f, y)
        W = A.T @ np.diag(-d2) @ A
        f_new = np.linalg.solve(K_inv + W, W @ f + A.T @ d1)
        if np.max(np.abs(f_new - f)) < 1e-13:
            f = f_new
            break
        f = f_new
    d1, d2 = _probit_derivatives(A @ f, y)
    W = A.T @ np.diag(-d2) @ A
    cov = np.linalg.inv(K_inv + W)
    K_star = matern52_kernel(X_test, points, np.array(lengthscales), signal)
    mean = K_star @ K_inv @ f
    var = signal - np.einsum("ij,jk,ik->i", K_star, K_inv - K_inv @ cov @ K_inv, K_star)
    log_z = (
        -0.5 * f @ K_inv @ f
        + np.sum(log_ndtr(y * (A @ f)))
        - 0.5 * np.linalg.slogdet(np.eye(len(points)) + K @ W)[1]
    )
    return f, mean, var, log_z


def test_preference_laplace_equals_chu_ghahramani() -> None:
    first, second, outcomes = _duels(25, 2, seed=10)
    # Reuse some points, so that duels share members (as in batches of the dashboard).
    second[5:10] = first[:5]
    lengthscales, signal = [0.35, 0.5], 1.5
    model = _fixed_preference(first, second, outcomes, lengthscales, signal)
    X_test = np.random.default_rng(11).random((9, 2))
    f, mean, var, log_z = _chu_ghahramani(first, second, outcomes, lengthscales, signal, X_test)
    assert len(model.X_train_) == 45  # the five shared points are merged
    np.testing.assert_allclose(model.latent_mode_, f, rtol=1e-7, atol=1e-9)
    got_mean, got_var = model.predict_latent(X_test)
    np.testing.assert_allclose(got_mean, mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got_var, var, rtol=1e-7, atol=1e-9)
    assert model.log_marginal_likelihood() == pytest.approx(log_z, rel=1e-8)


@pytest.mark.parametrize("approximation", ["laplace", "ep"])
def test_preference_posterior_is_close_to_importance_sampling(approximation: str) -> None:
    rng = np.random.default_rng(12)
    first, second = rng.random((4, 1)), rng.random((4, 1))
    outcomes = np.array([1, 1, 0, 1])
    X_test = np.array([[0.2], [0.5], [0.9]])
    lengthscales, signal = [0.4], 1.0
    model = _fixed_preference(first, second, outcomes, lengthscales, signal, approximation)
    points = np.vstack([first, second, X_test])
    K = matern52_kernel(points, None, np.array(lengthscales), signal)
    draws = np.random.default_rng(0).multivariate_normal(np.zeros(len(points)), K, 400_000)
    g = draws[:, :4] - draws[:, 4:8]
    weights = np.exp(np.sum(log_ndtr((2.0 * outcomes - 1.0) * g), axis=1))
    weights /= weights.sum()
    exact_mean = weights @ draws[:, 8:]
    exact_var = weights @ draws[:, 8:] ** 2 - exact_mean**2
    mean, var = model.predict_latent(X_test)
    scale = np.sqrt(exact_var.max())
    tolerance = {"laplace": 0.1, "ep": 0.015}[approximation]
    np.testing.assert_allclose(mean, exact_mean, atol=tolerance * scale)
    np.testing.assert_allclose(var, exact_var, atol=2 * tolerance * scale**2)


def test_ep_is_exact_for_one_duel_and_matches_moments_at_its_fixed_point() -> None:
    # One probit observation of g ~ N(0, k_g): EP's Gaussian has the exact moments.
    first, second = np.array([[0.2, 0.3]]), np.array([[0.7, 0.6]])
    lengthscales, signal = [0.5, 0.5], 1.3
    model = _fixed_preference(first, second, [1], lengthscales, signal, "ep")
    k_g = model.predict_duel(first, second)
    prior_var = 2.0 * (signal - matern52_kernel(first, second, np.array(lengthscales), signal))
    ratio = 2.0 / math.sqrt(2.0 * math.pi)  # phi(0) / Phi(0)
    exact_mean = prior_var[0, 0] * ratio / math.sqrt(1.0 + prior_var[0, 0])
    exact_var = prior_var[0, 0] - prior_var[0, 0] ** 2 * ratio**2 / (1.0 + prior_var[0, 0])
    np.testing.assert_allclose(k_g[0], exact_mean, rtol=1e-9)
    np.testing.assert_allclose(k_g[1], exact_var, rtol=1e-9)
    assert model.log_marginal_likelihood() == pytest.approx(math.log(0.5), rel=1e-9)
    # Many duels: at convergence every site's tilted moments equal the posterior marginal.
    first, second, outcomes = _duels(15, 2, seed=13)
    model = _fixed_preference(first, second, outcomes, lengthscales, signal, "ep")
    mean, var = model.predict_duel(first, second)
    ttau, tnu = model._sites_start
    tau_c, nu_c = 1.0 / var - ttau, mean / var - tnu
    m_c, v_c = nu_c / tau_c, 1.0 / tau_c
    y = 2.0 * outcomes - 1.0
    z = y * m_c / np.sqrt(1.0 + v_c)
    r = np.exp(-0.5 * z * z - LOG_SQRT_2PI - log_ndtr(z))
    np.testing.assert_allclose(mean, m_c + y * v_c * r / np.sqrt(1.0 + v_c), rtol=1e-7)
    np.testing.assert_allclose(var, v_c - v_c**2 * r * (z + r) / (1.0 + v_c), rtol=1e-7)


@pytest.mark.parametrize("approximation", ["laplace", "ep"])
def test_preference_marginal_likelihood_gradient(approximation: str) -> None:
    first, second, outcomes = _duels(20, 2, seed=14)
    model = _fixed_preference(first, second, outcomes, [0.4, 0.5], 1.2, approximation)
    theta = model.theta_ + np.array([0.1, -0.2, 0.3])
    _, grad = model.log_marginal_likelihood(theta, eval_gradient=True)
    h = 1e-5
    fd = [
        (
            model.log_marginal_likelihood(theta + h * e)
            - model.log_marginal_likelihood(theta - h * e)
        )
        / (2 * h)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("approximation", ["laplace", "ep"])
def test_preference_gradients_duels_and_joint_moments(approximation: str) -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "kind": CategoricalParam(("a", "b", "c"))})
    rng = np.random.default_rng(15)
    first = space.features(space.snap(space.sample_uniform(20, rng)))
    second = space.features(space.snap(space.sample_uniform(20, rng)))
    outcomes = (first[:, 0] + 0.5 * first[:, 2] > second[:, 0] + 0.5 * second[:, 2]).astype(int)
    model = PreferenceGP(
        space.feature_columns(),
        approximation=approximation,
        optimize=False,
        hyperparameters=_hp([0.3, 0.8], 2.0),
    ).fit(first, second, outcomes)
    d = first.shape[1]
    X = np.vstack([rng.random((6, d)), first[:2] + 0.01])
    champion = rng.random((1, d))
    mean, var, mean_grad, var_grad = model.predict_latent_with_grad(X)
    d_mean, d_var, d_mean_grad, d_var_grad = model.predict_duel_with_grad(champion, X)
    # The duel's moments are those of f(x1) - f(x2) under the joint posterior.
    joint_mean, joint_cov = model.predict_latent_cov(np.vstack([champion, X]))
    np.testing.assert_allclose(d_mean, joint_mean[0] - joint_mean[1:], atol=1e-12)
    np.testing.assert_allclose(
        d_var, joint_cov[0, 0] + np.diag(joint_cov)[1:] - 2 * joint_cov[0, 1:], atol=1e-10
    )
    np.testing.assert_allclose(np.diag(joint_cov)[1:], var, atol=1e-10)
    h = 1e-6
    for j in range(d):
        step = np.eye(d)[j] * h
        (mp, vp), (mm, vm) = model.predict_latent(X + step), model.predict_latent(X - step)
        np.testing.assert_allclose(mean_grad[:, j], (mp - mm) / (2 * h), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(var_grad[:, j], (vp - vm) / (2 * h), rtol=1e-5, atol=1e-7)
        (mp, vp), (mm, vm) = (
            model.predict_duel(champion, X + step),
            model.predict_duel(champion, X - step),
        )
        np.testing.assert_allclose(d_mean_grad[:, j], (mp - mm) / (2 * h), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(d_var_grad[:, j], (vp - vm) / (2 * h), rtol=1e-5, atol=1e-7)
    # Paired rows give the same as one champion broadcast.
    paired = model.predict_duel(np.repeat(champion, len(X), axis=0), X)
    np.testing.assert_allclose(paired[0], d_mean, atol=1e-13)
    np.testing.assert_allclose(paired[1], d_var, atol=1e-13)


@pytest.mark.parametrize("approximation", ["laplace", "ep"])
def test_preference_sample_paths(approximation: str) -> None:
    first, second, outcomes = _duels(15, 2, seed=16)
    model = _fixed_preference(first, second, outcomes, [0.3, 0.5], 1.5, approximation)
    points = np.random.default_rng(17).random((4, 2))
    paths = [model.sample_latent_path(rng=seed) for seed in range(3000)]
    draws = np.stack([path(points) for path in paths])
    mean, cov = model.predict_latent_cov(points)
    scale = np.sqrt(np.diag(cov)).max()
    np.testing.assert_allclose(draws.mean(0), mean, atol=0.06 * scale)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.1 * scale**2)
    values, grad = paths[0].evaluate(points, with_grad=True)
    np.testing.assert_array_equal(values, paths[0](points))
    h = 1e-6
    fd = np.stack(
        [(paths[0](points + h * e) - paths[0](points - h * e)) / (2 * h) for e in np.eye(2)], 1
    )
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("approximation", ["laplace", "ep"])
def test_preference_ranks_points_by_the_utility(approximation: str) -> None:
    first, second, outcomes = _duels(80, 3, seed=18)
    model = PreferenceGP(approximation=approximation, seed=0).fit(first, second, outcomes)
    X_test = np.random.default_rng(19).random((300, 3))
    mean, var = model.predict_latent(X_test)
    assert spearmanr(mean, _utility(X_test))[0] > 0.8
    assert np.all(np.isfinite(var)) and np.all(var >= 0)


def test_swapping_winner_and_loser_with_the_outcome_changes_nothing() -> None:
    first, second, outcomes = _duels(20, 2, seed=20)
    X_test = np.random.default_rng(21).random((6, 2))
    model = _fixed_preference(first, second, outcomes, [0.4, 0.4], 1.0)
    swapped = _fixed_preference(second, first, 1 - outcomes, [0.4, 0.4], 1.0)
    for a, b in zip(model.predict_latent(X_test), swapped.predict_latent(X_test), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    # Winners first with the default outcomes is the same data again.
    won = outcomes.astype(bool)[:, None]
    winners = _fixed_preference(
        np.where(won, first, second), np.where(won, second, first), None, [0.4, 0.4], 1.0
    )
    np.testing.assert_allclose(
        winners.predict_latent(X_test)[0], model.predict_latent(X_test)[0], atol=1e-10
    )
    # A fitted model: the duel flips sign with its orientation, and probabilities add to 1.
    fitted = PreferenceGP(seed=0).fit(first, second, outcomes)
    refit = PreferenceGP(seed=0).fit(second, first, 1 - outcomes)
    np.testing.assert_allclose(
        fitted.predict_latent(X_test)[0], refit.predict_latent(X_test)[0], atol=1e-6
    )
    a, b = X_test[:3], X_test[3:]
    (m_ab, v_ab), (m_ba, v_ba) = fitted.predict_duel(a, b), fitted.predict_duel(b, a)
    np.testing.assert_allclose(m_ab, -m_ba, atol=1e-12)
    np.testing.assert_allclose(v_ab, v_ba, atol=1e-12)
    np.testing.assert_allclose(
        fitted.predict_preference(a, b) + fitted.predict_preference(b, a), 1.0, atol=1e-12
    )


@pytest.mark.parametrize("approximation", ["laplace", "ep"])
def test_a_duel_between_identical_points_is_uninformative(approximation: str) -> None:
    first, second, outcomes = _duels(12, 2, seed=22)
    X_test = np.random.default_rng(23).random((5, 2))
    twin = np.array([[0.3, 0.3]])
    base = _fixed_preference(first, second, outcomes, [0.4, 0.4], 1.0, approximation)
    extra = _fixed_preference(
        np.vstack([first, twin]),
        np.vstack([second, twin]),
        np.append(outcomes, 1),
        [0.4, 0.4],
        1.0,
        approximation,
    )
    for a, b in zip(base.predict_latent(X_test), extra.predict_latent(X_test), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    _, grad_base = base.log_marginal_likelihood(eval_gradient=True)
    _, grad_extra = extra.log_marginal_likelihood(eval_gradient=True)
    np.testing.assert_allclose(grad_base, grad_extra, rtol=1e-8, atol=1e-10)
    # Only such duels: the posterior is the prior.
    alone = _fixed_preference(twin, twin, None, [0.4, 0.4], 1.0, approximation)
    mean, var = alone.predict_latent(X_test)
    np.testing.assert_allclose(mean, 0.0, atol=1e-15)
    np.testing.assert_allclose(var, 1.0, atol=1e-12)
    # And the duel of a point with itself has zero mean and variance.
    m, v = base.predict_duel(X_test, X_test)
    np.testing.assert_allclose(m, 0.0, atol=1e-12)
    np.testing.assert_allclose(v, 0.0, atol=1e-10)


def test_preference_input_checks_and_constructor() -> None:
    model = PreferenceGP(approximation="ep", seed=3)
    assert set(vars(model)) == {
        "feature_groups",
        "approximation",
        "optimize",
        "hyperparameters",
        "use_priors",
        "n_restarts",
        "max_iter",
        "max_newton_iter",
        "seed",
    }
    with pytest.raises(RuntimeError):
        model.predict_latent(np.zeros((1, 2)))
    with pytest.raises(ValueError):
        PreferenceGP().fit(np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError):
        PreferenceGP().fit(np.zeros((2, 2)), np.ones((2, 2)), [1, 2])
    with pytest.raises(ValueError):
        PreferenceGP(approximation="vb").fit(np.zeros((1, 2)), np.ones((1, 2)))
