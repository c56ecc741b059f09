"""Tests of the binary-outcome and preferential acquisitions (bore_samplers.acquisitions.binary).

Every closed form is checked against Monte Carlo, against an independent adaptive quadrature
(where the paper's formula cancels) and its derivatives against central differences, including
extreme latent means and tiny variances; every acquisition's gradient against central
differences in the features.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import ndtr, ndtri, owens_t

from bore_samplers.acquisitions.binary import (
    DEFAULT_UCB_PHI_BETA,
    BatchUncertainChallenge,
    BinaryExpectedImprovement,
    MaximallyUncertainChallenge,
    ThompsonSample,
    UCBLatent,
    UCBPhi,
    aleatoric_variance,
    best_success_probability,
    binary_expected_improvement,
    epistemic_variance,
    owens_t_derivatives,
    success_probability,
    thompson_sample,
)
from bore_samplers.models.gp_classification import (
    GaussianProcessClassifier,
    GPClassifierHyperparameters,
)
from bore_samplers.models.preference import PreferenceGP

CLOSED_FORMS = {
    "success_probability": success_probability,
    "epistemic_variance": epistemic_variance,
    "aleatoric_variance": aleatoric_variance,
    "expected_improvement_0.3": lambda m, v: binary_expected_improvement(m, v, 0.3),
    "expected_improvement_0.97": lambda m, v: binary_expected_improvement(m, v, 0.97),
}
EXTREME_MEANS = [-30.0, -8.0, -1.3, 0.0, 0.7, 5.0, 30.0]
VARIANCES = [1e-10, 1e-4, 0.3, 3.0, 1e3]


def _classifier(seed: int = 0, signal: float = 3.0) -> GaussianProcessClassifier:
    rng = np.random.default_rng(seed)
    X = rng.random((30, 2))
    y = (np.sin(5.0 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(30) > 0.7).astype(int)
    hp = GPClassifierHyperparameters(np.array([0.3, 0.5]), signal)
    return GaussianProcessClassifier(likelihood="probit", optimize=False, hyperparameters=hp).fit(
        X, y
    )


def _preference(seed: int = 0) -> PreferenceGP:
    rng = np.random.default_rng(seed)
    first, second = rng.random((25, 2)), rng.random((25, 2))

    def utility(X: np.ndarray) -> np.ndarray:
        return np.sin(3.0 * X[:, 0]) + np.cos(2.0 * X[:, 1])

    outcomes = (rng.random(25) < ndtr(2.0 * (utility(first) - utility(second)))).astype(int)
    hp = GPClassifierHyperparameters(np.array([0.3, 0.4]), 2.0)
    return PreferenceGP(optimize=False, hyperparameters=hp).fit(first, second, outcomes)


class _StubModel:
    """A latent with prescribed moments, to drive the acquisitions into extreme regimes:
    mean ``c (x0 - 0.3) + x1`` and variance ``v (0.2 + x1²)``."""

    likelihood = "probit"

    def __init__(self, slope: float, variance: float) -> None:
        self.slope = slope
        self.variance = variance

    def predict_latent_with_grad(self, X: np.ndarray):
        mean = self.slope * (X[:, 0] - 0.3) + X[:, 1]
        var = self.variance * (0.2 + X[:, 1] ** 2)
        mean_grad = np.stack([np.full(len(X), self.slope), np.ones(len(X))], axis=1)
        var_grad = np.stack([np.zeros(len(X)), 2.0 * self.variance * X[:, 1]], axis=1)
        return mean, var, mean_grad, var_grad

    def predict_latent(self, X: np.ndarray):
        return self.predict_latent_with_grad(X)[:2]


def _assert_derivative(analytic, fd, value, step) -> None:
    """``analytic`` agrees with the central difference ``fd`` to ``rtol = 1e-5``, up to the
    difference's own round-off, ``~1e-14 |value| / step`` (which dominates where a tiny
    derivative sits on a value of order 1, e.g. a success probability near 1)."""
    analytic, fd = np.asarray(analytic), np.asarray(fd)
    tolerance = 1e-5 * np.abs(fd) + 1e-14 * np.abs(value) / step + 1e-300
    excess = np.abs(analytic - fd) - tolerance
    assert np.all(excess <= 0), (
        analytic.ravel()[np.argmax(excess)],
        fd.ravel()[np.argmax(excess)],
    )


def _check_gradient(acquisition, X: np.ndarray, h: float = 1e-6) -> None:
    values, grad = acquisition.value_and_grad(X)
    np.testing.assert_array_equal(values, acquisition(X))
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(grad))
    for j, e in enumerate(np.eye(X.shape[1])):
        fd = (acquisition(X + h * e) - acquisition(X - h * e)) / (2 * h)
        _assert_derivative(grad[:, j], fd, values, h)


def _epistemic_reference(mean: float, var: float) -> float:
    """``(1/π) ∫_a^1 exp(-h²(1 + x²)/2) / (1 + x²) dx`` by adaptive quadrature (QUADPACK)."""
    h, a = mean / math.sqrt(1.0 + var), 1.0 / math.sqrt(1.0 + 2.0 * var)
    root = math.sqrt(1.0 + 2.0 * var)
    width = 2.0 * var / (root * (1.0 + root))  # 1 - a without cancellation
    # In s = x - a, with the integrand's largest value factored out; break where it decays.
    decay = 1.0 / max(h * h * a, 1e-300)
    points = [p for p in decay * np.array([0.5, 2.0, 8.0, 32.0]) if p < width]
    integral, _ = quad(
        lambda s: math.exp(-0.5 * h * h * s * (s + 2.0 * a)) / (1.0 + (a + s) ** 2),
        0.0,
        width,
        points=points or None,
        epsabs=0.0,
        epsrel=1e-13,
        limit=500,
    )
    return math.exp(-0.5 * h * h * (1.0 + a * a)) / math.pi * integral


# ----------------------------------------------------------------------------- closed forms
def test_owens_t_derivatives_match_finite_differences() -> None:
    h = np.array([-6.0, -2.0, -0.3, 0.0, 0.5, 3.0, 8.0])[:, None]
    a = np.array([0.01, 0.3, 1.0, 2.5])[None, :]
    d_h, d_a = owens_t_derivatives(h, a)
    step = 1e-6
    fd_h = (owens_t(h + step, a) - owens_t(h - step, a)) / (2 * step)
    fd_a = (owens_t(h, a + step) - owens_t(h, a - step)) / (2 * step)
    np.testing.assert_allclose(d_h, fd_h, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(d_a, fd_a, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("mean", [-2.0, -0.5, 0.0, 1.0, 2.5])
@pytest.mark.parametrize("var", [0.05, 0.5, 2.0, 8.0])
def test_variance_decomposition_against_monte_carlo(mean: float, var: float) -> None:
    rng = np.random.default_rng(0)
    normals = rng.standard_normal(200_000)
    f = mean + math.sqrt(var) * np.concatenate([normals, -normals])  # antithetic
    prob = ndtr(f)
    m, v = np.array([mean]), np.array([var])
    assert success_probability(m, v)[0][0] == pytest.approx(prob.mean(), abs=2e-3)
    assert epistemic_variance(m, v)[0][0] == pytest.approx(prob.var(), abs=2e-3)
    assert aleatoric_variance(m, v)[0][0] == pytest.approx(np.mean(prob * (1 - prob)), abs=2e-3)
    for incumbent in (0.2, 0.6, 0.95):
        ei = binary_expected_improvement(m, v, incumbent)[0][0]
        assert ei == pytest.approx(np.mean(np.maximum(prob - incumbent, 0.0)), abs=2e-3)


def test_epistemic_variance_is_eq9_and_stays_accurate_where_eq9_cancels() -> None:
    # Moderate regime: eq. 9 as written, and the decomposition of eq. 7.
    mean = np.array([-2.0, -0.4, 0.0, 0.9, 2.5])[:, None]
    var = np.array([0.1, 1.0, 4.0])[None, :]
    mean, var = np.broadcast_arrays(mean, var)
    mean, var = mean.ravel(), var.ravel()
    h, a = mean / np.sqrt(1 + var), 1 / np.sqrt(1 + 2 * var)
    prob = ndtr(h)
    eq9 = prob * (1 - prob) - 2 * owens_t(h, a)
    epistemic = epistemic_variance(mean, var)[0]
    np.testing.assert_allclose(epistemic, eq9, rtol=1e-9)
    np.testing.assert_allclose(
        epistemic + aleatoric_variance(mean, var)[0], prob * (1 - prob), rtol=1e-12
    )
    # Where eq. 9 loses its digits: adaptive quadrature of the same integral.
    for m in EXTREME_MEANS[1:-1] + [20.0, -25.0]:
        for v in VARIANCES:
            reference = _epistemic_reference(m, v)
            got = epistemic_variance(np.array([m]), np.array([v]))[0][0]
            assert got == pytest.approx(reference, rel=1e-10, abs=1e-300), (m, v)
    # Small variance: the delta method, V ≈ φ(μ)² σ² (1 + O(σ²)).
    for m in (-8.0, -1.0, 0.0, 3.0):
        got = epistemic_variance(np.array([m]), np.array([1e-9]))[0][0]
        density = math.exp(-0.5 * m * m) / math.sqrt(2 * math.pi)
        assert got == pytest.approx(density**2 * 1e-9, rel=1e-6)


def test_expected_improvement_against_quadrature_and_its_limits() -> None:
    for mean in (-6.0, -1.0, 0.0, 0.4, 2.0):
        for var in (1e-6, 0.2, 1.0, 30.0):
            for incumbent in (0.01, 0.5, 0.8, 0.999):
                tau, sd = ndtri(incumbent), math.sqrt(var)
                # E[max(Φ(f) - p*, 0)] = ∫_τ^∞ φ(z) Φ((μ - z)/σ) dz (integration by parts).
                reference, _ = quad(
                    lambda z, mean=mean, sd=sd: (
                        math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * ndtr((mean - z) / sd)
                    ),
                    tau,
                    np.inf,
                    epsabs=1e-17,
                    epsrel=1e-11,
                    limit=500,
                )
                got = binary_expected_improvement(np.array([mean]), np.array([var]), incumbent)
                assert got[0][0] == pytest.approx(reference, rel=1e-7, abs=1e-15)
    # Zero variance: the improvement of the mean; non-negative everywhere.
    mean = np.linspace(-3, 3, 13)
    value = binary_expected_improvement(mean, np.zeros(13), 0.6)[0]
    np.testing.assert_allclose(value, np.maximum(ndtr(mean) - 0.6, 0.0), atol=1e-15)
    assert np.all(binary_expected_improvement(mean, np.full(13, 2.0), 0.99)[0] >= 0.0)


@pytest.mark.parametrize("name", list(CLOSED_FORMS))
def test_closed_form_derivatives_match_finite_differences(name: str) -> None:
    function = CLOSED_FORMS[name]
    mean, var = np.meshgrid(EXTREME_MEANS, VARIANCES)
    mean, var = mean.ravel(), var.ravel()
    value, d_mean, d_var = function(mean, var)
    assert np.all(np.isfinite(value)) and np.all(value >= 0)
    step_mean = 1e-6 * np.maximum(1.0, np.abs(mean))
    fd_mean = (function(mean + step_mean, var)[0] - function(mean - step_mean, var)[0]) / (
        2 * step_mean
    )
    _assert_derivative(d_mean, fd_mean, value, step_mean)
    # Below σ² ~ 1e-6 a relative step in σ² is lost in 1 + σ²; see the next test there.
    usable = var >= 1e-6
    step_var = 1e-6 * var[usable]
    fd_var = (
        function(mean[usable], var[usable] + step_var)[0]
        - function(mean[usable], var[usable] - step_var)[0]
    ) / (2 * step_var)
    _assert_derivative(d_var[usable], fd_var, value[usable], step_var)


def test_variance_derivatives_at_tiny_variance_follow_the_delta_method() -> None:
    # σ² -> 0: μ_c = Φ(μ) - φ(μ) μ σ²/2, V = φ(μ)² σ² and A = μ_c (1 - μ_c) - V, up to
    # relative corrections O(μ² σ²) (2e-8 at μ = -8).
    mean = np.array([-8.0, -1.3, 0.0, 0.7, 5.0])
    var = np.full(5, 1e-10)
    density, prob = np.exp(-0.5 * mean**2) / math.sqrt(2 * math.pi), ndtr(mean)
    d_prob = -density * mean / 2
    np.testing.assert_allclose(success_probability(mean, var)[2], d_prob, rtol=1e-8)
    np.testing.assert_allclose(epistemic_variance(mean, var)[2], density**2, rtol=1e-7)
    np.testing.assert_allclose(
        aleatoric_variance(mean, var)[2], (1 - 2 * prob) * d_prob - density**2, rtol=1e-6
    )


@pytest.mark.parametrize("name", list(CLOSED_FORMS))
def test_closed_forms_are_finite_for_any_finite_input(name: str) -> None:
    mean, var = np.meshgrid(
        [-1e8, -200.0, -38.5, -1e-300, 0.0, 1e-8, 40.0, 1e8],
        [0.0, 1e-300, 1e-16, 1e-9, 1.0, 1e9, 1e300],
    )
    for result in CLOSED_FORMS[name](mean.ravel(), var.ravel()):
        assert np.all(np.isfinite(result)), name


# ----------------------------------------------------------------------------- acquisitions
def test_binary_acquisitions_equal_their_closed_forms_and_have_exact_gradients() -> None:
    model = _classifier()
    rng = np.random.default_rng(1)
    X = np.vstack([rng.random((10, 2)), model.X_train_[:4] + 1e-3, [[3.0, -2.0]]])
    mean, var = model.predict_latent(X)
    incumbent = best_success_probability(model, model.X_train_)
    assert incumbent == pytest.approx(np.max(model.predict_proba(model.X_train_)))
    expected = {
        "ucb_phi": success_probability(mean, var)[0]
        + DEFAULT_UCB_PHI_BETA * np.sqrt(epistemic_variance(mean, var)[0]),
        "ucb_f": mean + 2.0 * np.sqrt(var),
        "ei": binary_expected_improvement(mean, var, incumbent)[0],
    }
    acquisitions = {
        "ucb_phi": UCBPhi(model),
        "ucb_f": UCBLatent(model, beta=2.0),
        "ei": BinaryExpectedImprovement(model, incumbent),
    }
    for name, acquisition in acquisitions.items():
        np.testing.assert_allclose(acquisition(X), expected[name], rtol=1e-12, err_msg=name)
        _check_gradient(acquisition, X)
    assert DEFAULT_UCB_PHI_BETA == pytest.approx(2.3263478740)


@pytest.mark.parametrize("slope", [0.5, 60.0])
@pytest.mark.parametrize("variance", [1e-9, 1e-4, 50.0])
def test_binary_acquisitions_in_extreme_regimes(slope: float, variance: float) -> None:
    # Means from about -18 to +42 with slope 60, tiny to large variances.
    model = _StubModel(slope, variance)
    X = np.random.default_rng(2).random((15, 2))
    for acquisition in (
        UCBPhi(model),
        UCBLatent(model),
        BinaryExpectedImprovement(model, 0.5),
        BinaryExpectedImprovement(model, 1e-4),
    ):
        _check_gradient(acquisition, X)


def test_ucb_phi_gradient_is_zero_not_nan_where_the_epistemic_variance_vanishes() -> None:
    model = _StubModel(slope=1e4, variance=1e-12)  # |h| in the thousands: V underflows
    X = np.array([[0.9, 0.5], [0.0, 0.5]])
    values, grad = UCBPhi(model).value_and_grad(X)
    np.testing.assert_allclose(values, [1.0, 0.0])
    assert np.all(np.isfinite(grad))


def test_models_with_the_wrong_link_or_incumbent_are_refused() -> None:
    X = np.random.default_rng(3).random((10, 2))
    logistic = GaussianProcessClassifier(seed=0).fit(X, X[:, 0] > 0.5)
    with pytest.raises(ValueError):
        UCBPhi(logistic)
    with pytest.raises(ValueError):
        BinaryExpectedImprovement(_classifier(), 1.0)
    UCBLatent(logistic)  # the latent bound needs no link


# ----------------------------------------------------------------------------- Thompson
def test_thompson_sample_is_a_differentiable_posterior_draw() -> None:
    model = _classifier()
    X = np.random.default_rng(4).random((8, 2))
    acquisition = thompson_sample(model, rng=7)
    assert isinstance(acquisition, ThompsonSample)
    np.testing.assert_array_equal(acquisition(X), thompson_sample(model, rng=7)(X))
    _check_gradient(acquisition, X)
    draws = np.stack([thompson_sample(model, rng=seed)(X[:3]) for seed in range(3000)])
    mean, cov = model.predict_latent_cov(X[:3])
    scale = np.sqrt(np.diag(cov)).max()
    np.testing.assert_allclose(draws.mean(0), mean, atol=0.06 * scale)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.1 * scale**2)


# ----------------------------------------------------------------------------- challenges
def test_maximally_uncertain_challenge_against_monte_carlo_and_gradients() -> None:
    model = _preference()
    rng = np.random.default_rng(5)
    grid = rng.random((200, 2))
    champion = grid[np.argmax(model.predict_latent(grid)[0])]
    challengers = np.vstack([rng.random((6, 2)), champion + 1e-3])
    acquisition = MaximallyUncertainChallenge(model, champion)
    values = acquisition(challengers)
    for x, value in zip(challengers, values, strict=True):
        samples = model.sample_latent_joint(np.vstack([champion, x]), 400_000, rng=0)
        assert value == pytest.approx(np.var(ndtr(samples[:, 0] - samples[:, 1])), abs=2e-3)
    _check_gradient(acquisition, challengers)
    # A duel of the champion against itself tells nothing.
    value, grad = acquisition.value_and_grad(champion[None])
    np.testing.assert_allclose(value, 0.0, atol=1e-12)
    assert np.all(np.isfinite(grad))
    # It uses the joint posterior: independent marginals would give another value.
    mean, var = model.predict_latent(np.vstack([champion, challengers[0]]))
    independent = epistemic_variance(np.array([mean[0] - mean[1]]), np.array([var.sum()]))[0]
    assert abs(independent[0] - values[0]) > 1e-4


def test_batch_challenge_sums_the_duels_with_every_fixed_member() -> None:
    model = _preference(seed=1)
    rng = np.random.default_rng(6)
    fixed = rng.random((3, 2))
    X = rng.random((8, 2))
    batch = BatchUncertainChallenge(model, fixed)
    total = sum(MaximallyUncertainChallenge(model, member)(X) for member in fixed)
    np.testing.assert_allclose(batch(X), total, rtol=1e-12)
    _check_gradient(batch, X)
    # Greedy selection of two challengers after the champion.
    candidates = rng.random((300, 2))
    members = [candidates[np.argmax(model.predict_latent(candidates)[0])]]
    for _ in range(2):
        scores = BatchUncertainChallenge(model, np.array(members))(candidates)
        members.append(candidates[np.argmax(scores)])
    assert len({tuple(m) for m in members}) == 3
    # The variance of a duel does not depend on its orientation.
    a, b = X[:4], X[4:]
    forward = [
        MaximallyUncertainChallenge(model, x)(y[None])[0] for x, y in zip(a, b, strict=True)
    ]
    backward = [
        MaximallyUncertainChallenge(model, y)(x[None])[0] for x, y in zip(a, b, strict=True)
    ]
    np.testing.assert_allclose(forward, backward, rtol=1e-10)
    with pytest.raises(ValueError):
        MaximallyUncertainChallenge(model, fixed)
