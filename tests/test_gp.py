"""Tests of the Matérn 5/2 ARD GP regressor (bore_samplers.models.gp_regression)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from sklearn.gaussian_process import GaussianProcessRegressor as SklearnGPR
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

from bore_samplers.models.gp_regression import GaussianProcessRegressor, GPHyperparameters
from bore_samplers.models.kernels import matern52_kernel
from bore_samplers.models.linalg import cholesky_with_jitter, solve_lower
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace


def _data(n: int, d: int, seed: int, noise: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = 3.0 * np.sin(3.0 * X[:, 0]) + 2.0 * X[:, 1 % d] ** 2 + 10.0
    return X, y + noise * rng.standard_normal(n)


def _fixed_model(X: np.ndarray, y: np.ndarray, lengthscales, signal, noise, mean=None):
    hp = GPHyperparameters(np.asarray(lengthscales, float), signal, noise, mean)
    return GaussianProcessRegressor(optimize=False, hyperparameters=hp).fit(X, y)


def _sklearn_theta_to_ours(sk: SklearnGPR) -> np.ndarray:
    # sklearn's theta is log [constant, lengthscales..., noise] on the normalised targets.
    log_constant, *log_lengthscales, log_noise = sk.kernel_.theta
    return np.array([*log_lengthscales, log_constant, log_noise, 0.0])


# ---------------------------------------------------------------------------- sklearn oracles
@pytest.mark.parametrize("d", [1, 5])
def test_fixed_hyperparameters_match_sklearn_normalised(d: int) -> None:
    X, y = _data(25, d, seed=d)
    lengthscales = np.linspace(0.2, 0.9, d)
    constant, noise = 1.7, 0.03  # on the normalised scale, as sklearn's normalize_y uses them
    kernel = ConstantKernel(constant) * Matern(lengthscales, nu=2.5) + WhiteKernel(noise)
    sk = SklearnGPR(kernel, alpha=0.0, optimizer=None, normalize_y=True).fit(X, y)
    var_y = np.var(y)
    ours = _fixed_model(X, y, lengthscales, constant * var_y, noise * var_y, mean=np.mean(y))

    X_test = np.random.default_rng(7).random((30, d))
    sk_mean, sk_std = sk.predict(X_test, return_std=True)
    mean, var = ours.predict(X_test, include_noise=True)  # sklearn's std includes WhiteKernel
    np.testing.assert_allclose(mean, sk_mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var, sk_std**2, rtol=1e-7, atol=1e-12)
    latent_mean, latent_var = ours.predict(X_test)
    np.testing.assert_allclose(latent_mean, sk_mean, rtol=1e-8)
    np.testing.assert_allclose(latent_var, sk_std**2 - noise * var_y, rtol=1e-6, atol=1e-10)
    # Same objective: log marginal likelihood of the normalised targets.
    assert ours.log_marginal_likelihood() == pytest.approx(sk.log_marginal_likelihood_value_)


def test_fixed_hyperparameters_match_sklearn_unnormalised() -> None:
    # A GP with given original-unit hyperparameters does not depend on the internal scaling.
    X, y = _data(20, 3, seed=3)
    lengthscales, signal, noise = np.array([0.3, 0.6, 1.2]), 4.0, 0.01
    kernel = ConstantKernel(signal) * Matern(lengthscales, nu=2.5) + WhiteKernel(noise)
    sk = SklearnGPR(kernel, alpha=0.0, optimizer=None, normalize_y=False).fit(X, y)
    ours = _fixed_model(X, y, lengthscales, signal, noise, mean=0.0)
    X_test = np.random.default_rng(1).random((15, 3))
    sk_mean, sk_std = sk.predict(X_test, return_std=True)
    mean, var = ours.predict(X_test, include_noise=True)
    np.testing.assert_allclose(mean, sk_mean, rtol=1e-7)
    np.testing.assert_allclose(var, sk_std**2, rtol=1e-6)


# sklearn warns when irrelevant dimensions reach its lengthscale bound, which is expected here.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(
    ("n", "d", "seed"),
    [(30, 1, 0), (40, 3, 2), (60, 5, 1)],  # 5-D: only the first two dimensions matter
)
def test_fitted_likelihood_at_least_sklearns(n: int, d: int, seed: int) -> None:
    X, y = _data(n, d, seed=seed, noise=0.1)
    kernel = ConstantKernel(1.0) * Matern(np.ones(d), nu=2.5) + WhiteKernel(0.1)
    sk = SklearnGPR(kernel, normalize_y=True, n_restarts_optimizer=3, random_state=0).fit(X, y)
    ours = GaussianProcessRegressor(mean="zero", use_priors=False, seed=0).fit(X, y)
    theta_sk = _sklearn_theta_to_ours(sk)
    # Our objective at sklearn's optimum reproduces sklearn's value ...
    assert ours.log_marginal_likelihood(theta_sk) == pytest.approx(
        sk.log_marginal_likelihood_value_, rel=1e-8
    )
    # ... and our optimum is at least as good (up to optimiser tolerance).
    assert ours.log_marginal_likelihood() >= sk.log_marginal_likelihood_value_ - 1e-4
    # A fitted constant mean can only add likelihood.
    with_mean = GaussianProcessRegressor(mean="constant", use_priors=False, seed=0).fit(X, y)
    assert with_mean.log_marginal_likelihood() >= ours.log_marginal_likelihood() - 1e-4
    if d == 5:
        # ARD: the irrelevant dimensions get much longer lengthscales than the relevant ones.
        assert ours.lengthscales_[2:].min() > 3 * ours.lengthscales_[:2].max()


def test_map_fit_recovers_function() -> None:
    X, y = _data(40, 2, seed=4, noise=0.01)
    model = GaussianProcessRegressor(seed=0).fit(X, y)
    X_test, y_test = _data(50, 2, seed=5, noise=0.0)
    mean, var = model.predict(X_test)
    assert np.sqrt(np.mean((mean - y_test) ** 2)) < 0.1 * np.std(y_test)
    assert np.all(var > 0)
    assert model.noise_variance_ < 0.01 * np.var(y)
    assert model.mean_ == pytest.approx(model.hyperparameters_.mean)


# ---------------------------------------------------------------------------- gradients
def test_log_marginal_likelihood_gradient_matches_finite_differences() -> None:
    X, y = _data(30, 3, seed=6)
    groups = [[0], [1, 2]]
    model = GaussianProcessRegressor(groups, seed=0).fit(X, y)
    theta = model.theta_ + 0.3 * np.random.default_rng(0).standard_normal(model.theta_.shape)
    _, grad = model.log_marginal_likelihood(theta, eval_gradient=True)
    h = 1e-6
    fd = [
        (
            model.log_marginal_likelihood(theta + h * e)
            - model.log_marginal_likelihood(theta - h * e)
        )
        / (2 * h)
        for e in np.eye(len(theta))
    ]
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5)


def test_predict_with_grad_matches_finite_differences() -> None:
    X, y = _data(25, 4, seed=8)
    model = _fixed_model(X, y, [0.4, 0.7, 0.5, 1.0], 2.0, 1e-3)
    X_test = np.random.default_rng(2).random((6, 4))
    mean, var, mean_grad, var_grad = model.predict_with_grad(X_test)
    np.testing.assert_allclose((mean, var), model.predict(X_test), rtol=1e-12)
    h = 1e-6
    for j, e in enumerate(np.eye(4)):
        m_plus, v_plus = model.predict(X_test + h * e)
        m_minus, v_minus = model.predict(X_test - h * e)
        np.testing.assert_allclose(mean_grad[:, j], (m_plus - m_minus) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(var_grad[:, j], (v_plus - v_minus) / (2 * h), atol=1e-6)


# ---------------------------------------------------------------------------- joint samples
def test_joint_samples_have_posterior_mean_and_covariance() -> None:
    X, y = _data(12, 2, seed=9)
    model = _fixed_model(X, y, [0.3, 0.5], 3.0, 1e-2)
    X_test = np.random.default_rng(3).random((5, 2))
    samples = model.sample_joint(X_test, 40_000, rng=np.random.default_rng(0))
    assert samples.shape == (40_000, 5)
    mean, cov = model.predict_cov(X_test)
    np.testing.assert_allclose(np.diag(cov), model.predict(X_test)[1], rtol=1e-8)
    scale = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=5 * scale.max() / 200)
    np.testing.assert_allclose(np.cov(samples.T), cov, atol=0.03 * scale.max() ** 2)
    # Same generator seed, same samples.
    np.testing.assert_array_equal(
        model.sample_joint(X_test, 3, rng=1), model.sample_joint(X_test, 3, rng=1)
    )


def test_joint_samples_on_2000_points_and_training_inputs() -> None:
    X, y = _data(50, 3, seed=10)
    model = GaussianProcessRegressor(seed=0).fit(X, y)
    # Sobol-like set of 2000 points that also contains the (noise-free-ish) training inputs.
    X_test = np.vstack([np.random.default_rng(4).random((1950, 3)), X])
    samples = model.sample_joint(X_test, 50, rng=0)
    assert samples.shape == (50, 2000)
    assert np.all(np.isfinite(samples))


# ---------------------------------------------------------------------------- robustness
def test_duplicated_inputs_do_not_crash() -> None:
    X, y = _data(10, 2, seed=11)
    X = np.vstack([X, X, X[:3]])
    y = np.concatenate([y, y + 0.01, y[:3]])
    model = GaussianProcessRegressor(seed=0).fit(X, y)
    mean, var = model.predict(X)
    assert np.all(np.isfinite(mean)) and np.all(var >= 0)
    # Noise at its lower bound with exact duplicates still factorises.
    tiny = _fixed_model(X, y, [0.5, 0.5], np.var(y), 1e-6 * np.var(y))
    assert np.all(np.isfinite(tiny.predict(X)[0]))


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_datasets(n: int) -> None:
    X, y = _data(n, 3, seed=12)
    model = GaussianProcessRegressor(seed=0).fit(X, y)
    mean, var = model.predict(np.random.default_rng(0).random((4, 3)))
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) and np.all(var >= 0)
    assert np.all(np.isfinite(model.sample_joint(X, 3, rng=0)))


def test_constant_targets() -> None:
    X = np.random.default_rng(0).random((6, 2))
    model = GaussianProcessRegressor(seed=0).fit(X, np.full(6, 5.0))
    mean, var = model.predict(X)
    np.testing.assert_allclose(mean, 5.0, atol=1e-6)
    assert np.all(np.isfinite(var))


def test_cholesky_with_jitter_on_singular_matrix() -> None:
    v = np.random.default_rng(0).standard_normal((5, 1))
    L, jitter = cholesky_with_jitter(v @ v.T)  # rank one
    assert jitter > 0
    np.testing.assert_allclose(L @ L.T, v @ v.T + jitter * np.eye(5), atol=1e-12)
    assert cholesky_with_jitter(np.eye(3))[1] == 0.0


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(6, 4), (6,), (6, 0)])
def test_solve_lower_is_scipys_solve_triangular_bit_for_bit(order: str, shape: tuple) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 6))
    L = np.array(np.linalg.cholesky(a @ a.T + np.eye(6)), order=order)
    for B in (rng.standard_normal(shape), rng.standard_normal(shape[::-1]).T):
        expected = scipy.linalg.solve_triangular(L, B, lower=True, check_finite=False)
        np.testing.assert_array_equal(solve_lower(L, B), expected)
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        solve_lower(np.zeros((3, 3)), np.ones((3, 2)))


def test_invalid_input_raises() -> None:
    with pytest.raises(ValueError):
        GaussianProcessRegressor().fit(np.zeros((3, 1)), np.zeros(2))
    with pytest.raises(RuntimeError):
        GaussianProcessRegressor().predict(np.zeros((1, 1)))


def test_constructor_does_no_work() -> None:
    model = GaussianProcessRegressor(mean="zero", n_restarts=5, seed=3)
    assert vars(model) == {
        "feature_groups": None,
        "mean": "zero",
        "optimize": True,
        "hyperparameters": None,
        "use_priors": True,
        "priors": None,
        "n_restarts": 5,
        "max_iter": 200,
        "seed": 3,
    }


# ---------------------------------------------------------------------------- fantasies
def test_condition_on_equals_refit_with_fixed_hyperparameters() -> None:
    X, y = _data(20, 3, seed=13)
    model = GaussianProcessRegressor(seed=0).fit(X, y)
    X_new = np.random.default_rng(5).random((3, 3))
    y_new = model.predict(X_new)[0]  # Kriging believer
    conditioned = model.condition_on(X_new, y_new)
    refit = GaussianProcessRegressor(optimize=False, hyperparameters=model.hyperparameters_).fit(
        np.vstack([X, X_new]), np.concatenate([y, y_new])
    )
    X_test = np.random.default_rng(6).random((10, 3))
    for a, b in zip(conditioned.predict(X_test), refit.predict(X_test), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    # Believer fantasies keep the mean at the pending points and shrink the variance there.
    mean, var = conditioned.predict(X_new)
    np.testing.assert_allclose(mean, y_new, atol=1e-2 * np.std(y))
    assert np.all(var < model.predict(X_new)[1])
    # The original model is untouched.
    assert len(model.X_train_) == 20


def test_warm_start_keeps_a_good_optimum() -> None:
    X, y = _data(40, 3, seed=14)
    first = GaussianProcessRegressor(seed=0).fit(X[:30], y[:30])
    cold = GaussianProcessRegressor(seed=0).fit(X, y)
    warm = GaussianProcessRegressor(n_restarts=0, seed=0).fit(
        X, y, warm_start=first.hyperparameters_
    )
    assert (
        warm._log_posterior(warm.theta_, True)[0]
        >= cold._log_posterior(cold.theta_, True)[0] - 0.5
    )


# ---------------------------------------------------------------------------- categoricals
def test_categorical_groups_share_a_lengthscale() -> None:
    space = SearchSpace(
        {
            "x": FloatParam(0.0, 1.0),
            "n": IntParam(1, 8),
            "kind": CategoricalParam(("a", "b", "c")),
        }
    )
    rng = np.random.default_rng(0)
    u = space.snap(space.sample_uniform(40, rng))
    X = space.features(u)
    configs = space.decode(u)
    offset = {"a": 0.0, "b": 1.0, "c": -1.0}
    y = np.array([np.sin(5 * c["x"]) + 0.1 * c["n"] + offset[c["kind"]] for c in configs])
    groups = space.feature_columns()
    model = GaussianProcessRegressor(groups, seed=0).fit(X, y)
    assert model.lengthscales_.shape == (3,)
    X_test = space.features(space.snap(space.sample_uniform(30, rng)))
    mean, var = model.predict(X_test)
    assert np.all(np.isfinite(mean)) and np.all(var >= 0)
    assert np.sqrt(np.mean((model.predict(X)[0] - y) ** 2)) < 0.2
    # The grouped kernel is the ARD kernel with the group's lengthscale on a numeric column and
    # sqrt(2) times it on each one-hot column: a changed choice adds 1 / l^2 to r^2 (Hamming).
    hp = model.hyperparameters_
    column_lengthscales = np.concatenate(
        [
            np.full(len(g), ls * (np.sqrt(2.0) if len(g) > 1 else 1.0))
            for g, ls in zip(groups, hp.lengthscales, strict=True)
        ]
    )
    ungrouped = GaussianProcessRegressor(
        optimize=False,
        hyperparameters=GPHyperparameters(
            column_lengthscales, hp.signal_variance, hp.noise_variance, hp.mean
        ),
    ).fit(X, y)
    np.testing.assert_allclose(ungrouped.predict(X_test)[0], mean, rtol=1e-9)
    # Different choices are at squared distance 2 / l^2 whatever the pair (Hamming-type).
    onehots = np.eye(3)
    K = matern52_kernel(onehots, None, np.full(3, 0.7))
    assert K[0, 1] == pytest.approx(K[0, 2]) == pytest.approx(K[1, 2])


def test_feature_groups_must_cover_columns() -> None:
    with pytest.raises(ValueError):
        GaussianProcessRegressor([[0]]).fit(np.zeros((3, 2)), np.arange(3.0))


def test_with_theta_and_log_posterior_expose_the_fitted_model() -> None:
    X, y = _data(25, 3, seed=4)
    gp = GaussianProcessRegressor(seed=0).fit(X, y)
    copy = gp.with_theta(gp.theta_)
    np.testing.assert_allclose(copy.predict(X[:5])[0], gp.predict(X[:5])[0])
    value, grad = gp.log_posterior(gp.theta_)
    assert np.isfinite(value) and grad.shape == gp.theta_.shape
    # MAP: the fitted theta is (close to) a maximum of the log posterior.
    assert value >= gp.log_posterior(gp.theta_ + 0.3)[0]
    outside = gp.hyperparameter_bounds()[:, 1] + 1.0
    assert gp.log_posterior(outside)[0] == -np.inf
    other = gp.with_theta(gp.theta_ + 0.5)
    assert not np.allclose(other.predict(X[:5])[1], gp.predict(X[:5])[1])


def test_pathwise_samples_follow_the_exact_posterior() -> None:
    X, y = _data(15, 2, seed=5)
    gp = GaussianProcessRegressor(seed=0).fit(X, y)
    points = np.random.default_rng(1).random((6, 2))
    # One random-feature set per call; over many calls the samples follow the posterior.
    samples = np.vstack([gp.sample_pathwise(points, 20, rng=seed) for seed in range(1000)])
    mean, cov = gp.predict_cov(points)
    scale = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.05 * scale.max())
    np.testing.assert_allclose(np.cov(samples.T), cov, atol=0.08 * scale.max() ** 2)
    np.testing.assert_array_equal(
        gp.sample_pathwise(points, 3, rng=7), gp.sample_pathwise(points, 3, rng=7)
    )


def test_a_one_hot_group_with_one_lengthscale_is_the_hamming_kernel() -> None:
    # Optuna's GPSampler uses a Hamming distance on the category index: squared distance 1
    # between different choices. One-hot columns sharing a lengthscale l give 2 / l^2, so the
    # two kernels are the same family (l_onehot = sqrt(2) l_hamming): which one is "better"
    # is only a question of the lengthscale prior, not of the kernel.
    rng = np.random.default_rng(0)
    index = rng.integers(0, 4, 12)
    x = rng.random(12)
    onehot = np.column_stack([x, np.eye(4)[index]])
    lengthscale, hamming_lengthscale = 0.8, 0.8 / np.sqrt(2.0)
    K_onehot = matern52_kernel(onehot, None, np.array([0.3, *[lengthscale] * 4]))
    squared = ((x[:, None] - x[None, :]) / 0.3) ** 2 + (index[:, None] != index[None, :]) / (
        hamming_lengthscale**2
    )
    r = np.sqrt(squared)
    K_hamming = (1 + np.sqrt(5) * r + 5.0 / 3.0 * squared) * np.exp(-np.sqrt(5) * r)
    np.testing.assert_allclose(K_onehot, K_hamming, rtol=1e-12, atol=1e-14)


def test_a_repeated_prediction_is_shared_read_only_and_forgotten_after_a_refit() -> None:
    rng = np.random.default_rng(0)
    X, y = rng.random((20, 3)), rng.random(20)
    gp = GaussianProcessRegressor().fit(X, y)
    points = rng.random((5, 3))
    first = gp.predict_with_grad(points)
    again = gp.predict_with_grad(points.copy())  # equal points, another array
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert not any(array.flags.writeable for array in first)
    with pytest.raises(ValueError):
        first[0][0] = 1.0
    # predict() and other points are computed afresh, with the same values.
    mean, var = gp.predict(points)
    np.testing.assert_array_equal(mean, first[0])
    np.testing.assert_array_equal(var, first[1])
    assert gp.predict_with_grad(points[:4])[0] is not first[0]
    gp.fit(X, -y)
    np.testing.assert_allclose(gp.predict_with_grad(points)[0], -first[0], atol=1e-3)
    assert gp.predict_with_grad(points)[0] is not first[0]


# ---------------------------------------------------------------------------- fit policy
def _hyperparameter_vector(gp: GaussianProcessRegressor) -> np.ndarray:
    hp = gp.hyperparameters_
    return np.concatenate([hp.lengthscales, [hp.signal_variance, hp.noise_variance, hp.mean]])


@pytest.mark.parametrize(
    ("reoptimize_growth", "reoptimize_after", "expected_reuse"),
    [
        (1.0, 0, [False] * 4),
        # 21 and 25 < 1.3 * 20 reuse the hyperparameters of 20, 27 optimises, 30 < 1.3 * 27
        # reuses.
        (1.3, 0, [True, True, False, True]),
        # Below 25 observations every fit optimises: 21 does, 25 and 27 < 1.3 * 21 reuse.
        (1.3, 25, [False, True, True, False]),
    ],
)
def test_hyperparameters_are_reoptimised_only_after_the_given_growth(
    reoptimize_growth: float, reoptimize_after: int, expected_reuse: list[bool]
) -> None:
    from bore_samplers.models.model_set import FitPolicy, ModelSetBuilder

    space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    rng = np.random.default_rng(0)
    u = rng.random((40, 2))
    values = np.sin(6 * u[:, 0]) + (u[:, 1] - 0.3) ** 2
    # refit_growth out of the way: a full multi-start refit always optimises.
    policy = FitPolicy(
        refit_growth=10.0, reoptimize_growth=reoptimize_growth, reoptimize_after=reoptimize_after
    )
    builder = ModelSetBuilder(policy)
    fitted = {
        n: builder.fit_regressor(space, "objective", u[:n], values[:n], rng)
        for n in (20, 21, 25, 27, 30)
    }
    fits = {n: gp for n, (gp, _, _) in fitted.items()}
    reused = [
        # (reused ones pass through the new data's standardisation: equal up to rounding)
        np.allclose(_hyperparameter_vector(fits[n]), _hyperparameter_vector(fits[previous]))
        for previous, n in [(20, 21), (21, 25), (25, 27), (27, 30)]
    ]
    assert reused == expected_reuse
    # A reused fit is still conditioned on all its data: it predicts its newest point closely.
    gp, location, scale = fitted[25]
    mean, _ = gp.predict(space.features(u[24:25]))
    assert len(gp.X_train_) == 25
    assert abs(location + scale * mean[0] - values[24]) < 0.05 * np.ptp(values)


@pytest.mark.parametrize("growth", [0.5, float("nan"), float("inf")])
def test_growth_factors_below_one_or_not_finite_are_rejected(growth: float) -> None:
    from bore_samplers import CMESSampler, PortfolioSampler
    from bore_samplers.models.model_set import FitPolicy

    with pytest.raises(ValueError, match="reoptimize_growth"):
        FitPolicy(reoptimize_growth=growth)
    with pytest.raises(ValueError, match="refit_growth"):
        FitPolicy(refit_growth=growth)
    with pytest.raises(ValueError, match="reoptimize_growth"):
        CMESSampler(reoptimize_growth=growth)
    with pytest.raises(ValueError, match="reoptimize_growth"):
        PortfolioSampler(reoptimize_growth=growth)


@pytest.mark.parametrize("after", [-1, 2.5, True, None])
def test_reoptimize_after_must_be_a_count(after: object) -> None:
    from bore_samplers import CMESSampler, PortfolioSampler
    from bore_samplers.models.model_set import FitPolicy

    with pytest.raises(ValueError, match="reoptimize_after"):
        FitPolicy(reoptimize_after=after)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reoptimize_after"):
        CMESSampler(reoptimize_after=after)
    with pytest.raises(ValueError, match="reoptimize_after"):
        PortfolioSampler(reoptimize_after=after)
