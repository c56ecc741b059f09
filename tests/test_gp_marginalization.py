"""Slice sampling of GP hyperparameters and integrated acquisitions (Snoek et al. 2012)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.hyperparameter_sampling import sample_hyperparameter_models, slice_sample


def gaussian_log_density(mean: np.ndarray, cov: np.ndarray):  # type: ignore[no-untyped-def]
    precision = np.linalg.inv(cov)

    def log_density(x: np.ndarray) -> float:
        diff = x - mean
        return float(-0.5 * diff @ precision @ diff)

    return log_density


def toy_data(n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, dim))
    return X, np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2 + 0.01 * rng.standard_normal(n)


@pytest.fixture(autouse=True, scope="module")
def single_blas_thread():  # type: ignore[no-untyped-def]
    # Matrices of at most 100 x 100: extra BLAS threads only slow these tests down on a busy
    # machine, and the printed cost is meant per core.
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def gp_60() -> GaussianProcessRegressor:
    return GaussianProcessRegressor(seed=0).fit(*toy_data(60, 2, seed=0))


# ------------------------------------------------------------------------------ slice sampler
@pytest.mark.parametrize("method", ["coordinate", "random_direction"])
def test_slice_sampler_reproduces_a_1d_gaussian(method: str) -> None:
    samples = slice_sample(
        gaussian_log_density(np.array([1.0]), np.array([[4.0]])),
        0.0,
        4000,
        rng=0,
        widths=2.0,
        method=method,
    )
    assert samples.shape == (4000, 1)
    # Slice sampling a 1-D Gaussian is nearly independent: standard errors 0.03 and 0.09.
    assert samples.mean() == pytest.approx(1.0, abs=0.15)
    assert samples.var() == pytest.approx(4.0, rel=0.12)


@pytest.mark.parametrize("method", ["coordinate", "random_direction"])
def test_slice_sampler_reproduces_a_correlated_2d_gaussian(method: str) -> None:
    mean = np.array([-1.0, 2.0])
    cov = np.array([[1.0, 0.6], [0.6, 0.5]])
    samples = slice_sample(
        gaussian_log_density(mean, cov), mean + 1.0, 4000, rng=1, burn_in=20, method=method
    )
    # Correlation 0.85 slows coordinate-wise mixing; these tolerances are many effective SEs.
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.12)
    np.testing.assert_allclose(np.cov(samples.T), cov, atol=0.12)


@pytest.mark.parametrize("use_bounds", [False, True])
def test_slice_sampler_on_a_truncated_gaussian(use_bounds: bool) -> None:
    # Standard normal on [0, inf): zero density left of 0 as -inf, or as known bounds.
    def log_density(x: np.ndarray) -> float:
        return -math.inf if x[0] < 0 else -0.5 * float(x[0]) ** 2

    samples = slice_sample(
        log_density,
        [0.5],
        4000,
        rng=2,
        bounds=[(0.0, math.inf)] if use_bounds else None,
    )
    assert samples.min() >= 0.0
    assert samples.mean() == pytest.approx(math.sqrt(2 / math.pi), abs=0.05)
    assert samples.var() == pytest.approx(1 - 2 / math.pi, rel=0.1)


def test_slice_sampler_on_a_bounded_exponential_treats_exceptions_as_zero_density() -> None:
    # Density exp(-2 x) on [0, 1]; beyond 1 the density raises (like a failed Cholesky).
    def log_density(x: np.ndarray) -> float:
        if x[0] > 1.0:
            raise np.linalg.LinAlgError("outside")
        return -math.inf if x[0] < 0 else -2.0 * float(x[0])

    samples = slice_sample(log_density, [0.9], 4000, rng=3, widths=3.0)
    assert 0.0 <= samples.min() and samples.max() <= 1.0
    rate = 2.0
    mean = 1 / rate - math.exp(-rate) / (1 - math.exp(-rate))
    assert samples.mean() == pytest.approx(mean, abs=0.03)


def test_slice_sampler_keeps_a_fixed_coordinate_and_rejects_a_zero_density_start() -> None:
    samples = slice_sample(
        gaussian_log_density(np.zeros(2), np.eye(2)),
        [0.3, 0.0],
        50,
        rng=0,
        bounds=[(-math.inf, math.inf), (0.0, 0.0)],
    )
    assert np.all(samples[:, 1] == 0.0) and np.unique(samples[:, 0]).size == 50
    with pytest.raises(ValueError, match="finite"):
        slice_sample(lambda x: -math.inf, [0.0], 5, rng=0)


def test_slice_sampler_is_reproducible_and_burn_in_and_thin_index_one_chain() -> None:
    log_density = gaussian_log_density(np.zeros(3), np.diag([1.0, 2.0, 3.0]))
    chain = slice_sample(log_density, np.ones(3), 20, rng=7)
    np.testing.assert_array_equal(chain, slice_sample(log_density, np.ones(3), 20, rng=7))
    assert not np.allclose(chain, slice_sample(log_density, np.ones(3), 20, rng=8))
    thinned = slice_sample(log_density, np.ones(3), 5, rng=7, burn_in=2, thin=3)
    np.testing.assert_array_equal(thinned, chain[4::3][:5])


# ------------------------------------------------------------------------------ GP hyperparameters
def test_hyperparameter_models_are_distinct_within_bounds_and_near_the_map(
    gp_60: GaussianProcessRegressor,
) -> None:
    models = sample_hyperparameter_models(gp_60, n_samples=10, rng=0)
    thetas = np.array([model.theta_ for model in models])
    bounds = gp_60.hyperparameter_bounds()
    assert len(models) == 10 and len(np.unique(thetas, axis=0)) == 10
    assert np.all((thetas >= bounds[:, 0]) & (thetas <= bounds[:, 1]))
    # Under a Gaussian approximation E[log p(theta)] = log p(MAP) - d / 2 (d = 5 here).
    map_log_posterior = gp_60.log_posterior(gp_60.theta_)[0]
    log_posteriors = [gp_60.log_posterior(theta)[0] for theta in thetas]
    assert map_log_posterior - 8.0 < np.mean(log_posteriors) <= map_log_posterior + 1e-6
    X_test = np.random.default_rng(1).uniform(size=(30, 2))
    for model in models:
        mean, var = model.predict(X_test)
        assert np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) and np.all(var >= 0)
    np.testing.assert_array_equal(models[0].X_train_, gp_60.X_train_)


def test_hyperparameter_posterior_is_wider_with_few_observations() -> None:
    def lengthscale_spread(n: int) -> float:
        gp = GaussianProcessRegressor(seed=0).fit(*toy_data(n, 2, seed=n))
        thetas = np.array([m.theta_ for m in sample_hyperparameter_models(gp, 30, rng=0)])
        return float(np.mean(np.std(thetas[:, :2], axis=0)))

    assert lengthscale_spread(5) > 2.0 * lengthscale_spread(60)


def test_zero_mean_stays_fixed_and_sampling_is_seeded() -> None:
    gp = GaussianProcessRegressor(mean="zero", seed=0).fit(*toy_data(15, 2, seed=3))
    models = sample_hyperparameter_models(gp, 5, rng=4)
    assert all(model.theta_[-1] == 0.0 for model in models)
    along_directions = sample_hyperparameter_models(gp, 5, rng=4, method="random_direction")
    assert all(model.theta_[-1] == 0.0 for model in along_directions)
    assert len({tuple(model.theta_) for model in along_directions}) == 5
    again = sample_hyperparameter_models(gp, 5, rng=4)
    for first, second in zip(models, again, strict=True):
        np.testing.assert_array_equal(first.theta_, second.theta_)


def test_warm_start_continues_the_chain_and_falls_back_to_the_map(
    gp_60: GaussianProcessRegressor,
) -> None:
    previous = sample_hyperparameter_models(gp_60, 3, rng=0)[-1].theta_
    # With burn_in=0 the first warm sample is one sweep from initial_theta, not from the MAP.
    warm = sample_hyperparameter_models(gp_60, 3, rng=5, initial_theta=previous, burn_in=0)
    from_map = sample_hyperparameter_models(gp_60, 3, rng=5, burn_in=0)
    assert not np.allclose(warm[0].theta_, from_map[0].theta_)
    # Unusable warm starts (wrong size; outside the bounds) fall back to the MAP.
    for bad in (np.zeros(2), np.full_like(gp_60.theta_, 100.0)):
        fallback = sample_hyperparameter_models(gp_60, 3, rng=5, initial_theta=bad, burn_in=0)
        np.testing.assert_array_equal(fallback[0].theta_, from_map[0].theta_)


def test_a_default_call_continues_its_chain() -> None:
    # Its cost is a benchmark's question (time per trial), not a test's.
    gp = GaussianProcessRegressor(seed=0).fit(*toy_data(100, 5, seed=0))
    cold = sample_hyperparameter_models(gp, rng=0)
    warm = sample_hyperparameter_models(gp, rng=1, initial_theta=cold[-1].theta_)
    assert len(cold) == len(warm) == 10


# ------------------------------------------------------------------------------ acquisitions
