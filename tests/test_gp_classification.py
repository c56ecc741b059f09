"""Tests of the Laplace GP classifier (bore_samplers.models.gp_classification)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, ndtr
from sklearn.gaussian_process import GaussianProcessClassifier as SklearnGPC
from sklearn.gaussian_process.kernels import ConstantKernel, Matern

from bore_samplers.models.gp_classification import (
    GaussianProcessClassifier,
    GPClassifierHyperparameters,
)
from bore_samplers.space import CategoricalParam, FloatParam, SearchSpace


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    latent = 3.0 * np.sin(4.0 * X[:, 0]) + 2.0 * X[:, 1 % d] - 2.0
    return X, (latent + 0.5 * rng.standard_normal(n) > 0).astype(int)


def _fixed(
    X, y, lengthscales, signal, likelihood="logistic", constant_variance=0.0
) -> GaussianProcessClassifier:
    hp = GPClassifierHyperparameters(np.asarray(lengthscales, float), signal)
    return GaussianProcessClassifier(
        likelihood=likelihood,
        optimize=False,
        hyperparameters=hp,
        constant_variance=constant_variance,
    ).fit(X, y)


@pytest.mark.parametrize("d, constant_variance", [(1, 0.0), (3, 0.0), (3, 1.5)])
def test_fixed_hyperparameters_match_sklearn_laplace(d: int, constant_variance: float) -> None:
    X, y = _data(40, d, seed=d)
    lengthscales, signal = np.linspace(0.3, 0.8, d), 2.5
    kernel = ConstantKernel(signal, "fixed") * Matern(lengthscales, nu=2.5)
    if constant_variance:
        kernel = kernel + ConstantKernel(constant_variance, "fixed")
    sk = SklearnGPC(kernel, optimizer=None).fit(X, y)
    ours = _fixed(X, y, lengthscales, signal, constant_variance=constant_variance)
    base = sk.base_estimator_

    np.testing.assert_allclose(ours.latent_mode_, base.f_cached, rtol=1e-7, atol=1e-8)
    X_test = np.random.default_rng(0).random((25, d))
    # sklearn's latent predictive moments (R&W Algorithm 3.2), recomputed from its internals.
    K_star = base.kernel_(base.X_train_, X_test)
    sk_mean = K_star.T @ (base.y_train_ - base.pi_)
    v = np.linalg.solve(base.L_, base.W_sr_[:, None] * K_star)
    sk_var = base.kernel_.diag(X_test) - np.einsum("ij,ij->j", v, v)
    mean, var = ours.predict_latent(X_test)
    np.testing.assert_allclose(mean, sk_mean, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(var, sk_var, rtol=1e-6, atol=1e-8)
    # sklearn averages the logistic with an erf expansion, we use MacKay's probit scaling.
    np.testing.assert_allclose(
        ours.predict_proba(X_test), sk.predict_proba(X_test)[:, 1], atol=0.02
    )
    assert ours.log_marginal_likelihood() == pytest.approx(
        base.log_marginal_likelihood_value_, rel=1e-6
    )


def test_labels_in_plus_minus_one_and_bool_are_equivalent() -> None:
    X, y = _data(20, 2, seed=5)
    reference = _fixed(X, y, [0.5, 0.5], 1.0).predict_latent(X)
    for labels in (2 * y - 1, y.astype(bool)):
        np.testing.assert_allclose(_fixed(X, labels, [0.5, 0.5], 1.0).predict_latent(X), reference)
    with pytest.raises(ValueError):
        _fixed(X, y + 1, [0.5, 0.5], 1.0)


@pytest.mark.parametrize("constant_variance", [0.0, 1.0])
@pytest.mark.parametrize("likelihood", ["logistic", "probit"])
def test_laplace_likelihood_gradient_matches_finite_differences(
    likelihood: str, constant_variance: float
) -> None:
    X, y = _data(30, 3, seed=6)
    model = _fixed(X, y, [0.4, 0.6, 0.8], 2.0, likelihood, constant_variance)
    theta = model.theta_ + np.array([0.1, -0.2, 0.3, 0.2])
    _, grad = model.log_marginal_likelihood(theta, eval_gradient=True)
    h = 1e-5
    fd = [
        (
            model.log_marginal_likelihood(theta + h * e)
            - model.log_marginal_likelihood(theta - h * e)
        )
        / (2 * h)
        for e in np.eye(len(theta))
    ]
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("likelihood", ["logistic", "probit"])
def test_fit_beats_starting_point_and_classifies(likelihood: str) -> None:
    X, y = _data(60, 2, seed=7)
    model = GaussianProcessClassifier(likelihood=likelihood, use_priors=False, seed=0).fit(X, y)
    start = model.log_marginal_likelihood(np.log([0.5, 0.5, 1.0]))
    assert model.log_marginal_likelihood() >= start
    X_test, y_test = _data(200, 2, seed=8)
    proba = model.predict_proba(X_test)
    assert np.all((proba > 0) & (proba < 1))
    assert np.mean((proba > 0.5) == y_test) > 0.8


def test_probit_predict_proba_is_the_exact_gaussian_average() -> None:
    X, y = _data(25, 2, seed=9)
    model = _fixed(X, y, [0.3, 0.3], 3.0, "probit")
    X_test = np.random.default_rng(1).random((5, 2))
    mean, var = model.predict_latent(X_test)
    samples = mean + np.sqrt(var) * np.random.default_rng(0).standard_normal((200_000, 5))
    np.testing.assert_allclose(model.predict_proba(X_test), ndtr(samples).mean(axis=0), atol=5e-3)
    logistic = _fixed(X, y, [0.3, 0.3], 3.0)
    mean, var = logistic.predict_latent(X_test)
    samples = mean + np.sqrt(var) * np.random.default_rng(0).standard_normal((200_000, 5))
    np.testing.assert_allclose(
        logistic.predict_proba(X_test), expit(samples).mean(axis=0), atol=0.02
    )


def test_duplicates_single_class_and_tiny_data_do_not_crash() -> None:
    X, y = _data(8, 2, seed=10)
    X_dup = np.vstack([X, X])
    y_dup = np.concatenate([y, 1 - y])  # contradicting labels at the same inputs
    for X_fit, y_fit in ((X_dup, y_dup), (X, np.ones(8)), (X[:1], y[:1]), (X[:2], [0, 1])):
        model = GaussianProcessClassifier(seed=0).fit(X_fit, y_fit)
        mean, var = model.predict_latent(X)
        assert np.all(np.isfinite(mean)) and np.all(var >= 0)
        assert np.all(np.isfinite(model.predict_proba(X)))
    all_feasible = GaussianProcessClassifier(seed=0).fit(X, np.ones(8))
    assert np.all(all_feasible.predict_proba(X) > 0.5)


def test_categorical_groups() -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "kind": CategoricalParam(("a", "b", "c"))})
    rng = np.random.default_rng(0)
    u = space.snap(space.sample_uniform(60, rng))
    configs = space.decode(u)
    y = np.array([(c["kind"] == "b") or c["x"] > 0.7 for c in configs])
    model = GaussianProcessClassifier(space.feature_columns(), seed=0).fit(space.features(u), y)
    assert model.lengthscales_.shape == (2,)
    test = [{"x": 0.2, "kind": "b"}, {"x": 0.2, "kind": "a"}, {"x": 0.9, "kind": "c"}]
    proba = model.predict_proba(space.features(space.encode(test)))
    assert proba[0] > 0.5 > proba[1] and proba[2] > 0.5


def test_constructor_does_no_work_and_unfitted_raises() -> None:
    model = GaussianProcessClassifier(likelihood="probit", seed=1)
    assert set(vars(model)) == {
        "feature_groups",
        "likelihood",
        "optimize",
        "hyperparameters",
        "use_priors",
        "n_restarts",
        "max_iter",
        "max_newton_iter",
        "seed",
        "constant_variance",
    }
    with pytest.raises(RuntimeError):
        model.predict_latent(np.zeros((1, 2)))


@pytest.mark.parametrize(
    "likelihood, constant_variance", [("logistic", 0.0), ("probit", 0.0), ("probit", 1.0)]
)
def test_pathwise_latent_samples_follow_the_laplace_posterior(
    likelihood: str, constant_variance: float
) -> None:
    rng = np.random.default_rng(3)
    X = rng.random((25, 2))
    t = (X[:, 0] + 0.3 * rng.standard_normal(25) > 0.5).astype(int)
    hp = GPClassifierHyperparameters(np.array([0.3, 0.5]), 3.0)
    model = GaussianProcessClassifier(
        likelihood=likelihood,
        optimize=False,
        hyperparameters=hp,
        constant_variance=constant_variance,
    )
    model.fit(X, t)
    points = rng.random((6, 2))
    samples = np.vstack([model.sample_latent_pathwise(points, 20, rng=s) for s in range(1000)])
    mean, cov = model.predict_latent_cov(points)
    scale = np.sqrt(np.diag(cov)).max()
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.05 * scale)
    np.testing.assert_allclose(np.cov(samples.T), cov, atol=0.08 * scale**2)


@pytest.mark.parametrize(
    "likelihood, constant_variance", [("logistic", 0.0), ("probit", 0.0), ("probit", 1.0)]
)
def test_latent_gradients_match_finite_differences(
    likelihood: str, constant_variance: float
) -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "kind": CategoricalParam(("a", "b", "c"))})
    rng = np.random.default_rng(4)
    u = space.snap(space.sample_uniform(30, rng))
    X = space.features(u)
    y = (X[:, 0] + 0.3 * rng.standard_normal(30) + 0.5 * X[:, 2] > 0.6).astype(int)
    hp = GPClassifierHyperparameters(np.array([0.3, 0.8]), 3.0)
    model = GaussianProcessClassifier(
        space.feature_columns(),
        likelihood=likelihood,
        optimize=False,
        hyperparameters=hp,
        constant_variance=constant_variance,
    ).fit(X, y)
    # Test points off the training inputs, including the one-hot columns (continuous there).
    X_test = np.vstack([rng.random((8, X.shape[1])), X[:2] + 0.01])
    mean, var, mean_grad, var_grad = model.predict_latent_with_grad(X_test)
    np.testing.assert_array_equal(np.stack([mean, var]), np.stack(model.predict_latent(X_test)))
    h = 1e-6
    for j in range(X.shape[1]):
        step = np.zeros(X.shape[1])
        step[j] = h
        (mean_plus, var_plus), (mean_minus, var_minus) = (
            model.predict_latent(X_test + step),
            model.predict_latent(X_test - step),
        )
        np.testing.assert_allclose(
            mean_grad[:, j], (mean_plus - mean_minus) / (2 * h), rtol=1e-5, atol=1e-7
        )
        np.testing.assert_allclose(
            var_grad[:, j], (var_plus - var_minus) / (2 * h), rtol=1e-5, atol=1e-7
        )


def test_constant_term_lets_the_level_far_from_the_data_follow_the_labels() -> None:
    # Mostly failures in one corner: with a zero prior mean the far corner reverts to 1/2, with
    # a constant term to the low rate the data support (below the zero-mean model's).
    rng = np.random.default_rng(11)
    X = 0.3 * rng.random((30, 2))
    y = (rng.random(30) < 0.15).astype(int)
    far = np.array([[1.0, 1.0]])
    zero_mean = _fixed(X, y, [0.2, 0.2], 1.0, "probit")
    constant = _fixed(X, y, [0.2, 0.2], 1.0, "probit", constant_variance=1.0)
    assert zero_mean.predict_proba(far)[0] == pytest.approx(0.5, abs=1e-3)
    assert constant.predict_proba(far)[0] < 0.4
    # Its prior variance is the signal variance plus the constant's.
    assert constant.predict_latent(far)[1][0] < 2.0
    assert constant.predict_latent(far)[1][0] > zero_mean.predict_latent(far)[1][0] - 1e-9
    with pytest.raises(ValueError, match="constant_variance"):
        _fixed(X, y, [0.2, 0.2], 1.0, "probit", constant_variance=-1.0)


def test_constant_term_duels_and_sample_paths_agree_with_the_joint_posterior() -> None:
    rng = np.random.default_rng(12)
    X = rng.random((25, 2))
    y = (X[:, 0] + 0.3 * rng.standard_normal(25) > 0.5).astype(int)
    model = _fixed(X, y, [0.3, 0.5], 2.0, "probit", constant_variance=1.0)
    X1, X2 = rng.random((4, 2)), rng.random((4, 2))
    mean, var = model.predict_duel(X1, X2)
    for i in range(4):
        joint_mean, cov = model.predict_latent_cov(np.vstack([X1[i], X2[i]]))
        assert mean[i] == pytest.approx(joint_mean[0] - joint_mean[1], abs=1e-9)
        assert var[i] == pytest.approx(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1], abs=1e-8)
    # Sample paths (with their constant draw) average to the posterior mean and variance.
    points = rng.random((3, 2))
    values = np.array([model.sample_latent_path(rng=s)(points) for s in range(3000)])
    post_mean, post_var = model.predict_latent(points)
    scale = np.sqrt(post_var).max()
    np.testing.assert_allclose(values.mean(axis=0), post_mean, atol=0.08 * scale)
    np.testing.assert_allclose(values.var(axis=0), post_var, rtol=0.12)
