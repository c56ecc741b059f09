"""Acquisitions as scoring members (bore_samplers.acquisitions.base, improvement, feasibility)
and the model set they are built on (bore_samplers.models.model_set).

Every gradient is checked against central finite differences; the model set is checked for
what each kind of observation does to the models.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from bore_samplers.acquisitions.base import Acquisition, ModelAverage, OnUnitCube, Sum
from bore_samplers.acquisitions.feasibility import LogProbabilityOfFeasibility
from bore_samplers.acquisitions.improvement import (
    LogExpectedImprovement,
    LogProbabilityOfImprovement,
    LowerConfidenceBound,
    constrained_lcb,
    constrained_log_ei,
    constrained_log_pi,
    log_expected_improvement,
    log_probability_of_improvement,
    lower_confidence_bound,
)
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.models.model_set import FitPolicy, ModelSetBuilder
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace


def _gp(n: int = 12, d: int = 3, seed: int = 0, noise: float = 1e-4) -> GaussianProcessRegressor:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2 - X[:, -1] + noise * rng.standard_normal(n)
    return GaussianProcessRegressor(seed=seed).fit(X, y)


def _finite_difference(f: Callable[[np.ndarray], np.ndarray], X: np.ndarray) -> np.ndarray:
    step = 1e-6
    grad = np.zeros_like(X)
    for j in range(X.shape[1]):
        shift = np.zeros_like(X)
        shift[:, j] = step
        grad[:, j] = (f(X + shift) - f(X - shift)) / (2.0 * step)
    return grad


def _check_gradient(acquisition: Acquisition, X: np.ndarray, rtol: float = 1e-4) -> None:
    values, grad = acquisition.value_and_grad(X)
    np.testing.assert_allclose(values, acquisition(X), rtol=1e-12, atol=1e-12)
    expected = _finite_difference(acquisition, X)
    scale = np.maximum(np.abs(expected), 1.0)
    assert np.all(np.abs(grad - expected) <= rtol * scale), (grad, expected)


X_TEST = np.random.default_rng(11).random((7, 3)) * 0.9 + 0.05


@pytest.mark.parametrize(
    "make",
    [
        lambda gp: LogExpectedImprovement(gp, incumbent=-0.5, xi=0.01),
        lambda gp: LogExpectedImprovement(gp, incumbent=-3.0),  # deep in EI's tail
        lambda gp: LogProbabilityOfImprovement(gp, incumbent=-0.5, xi=0.01),
        lambda gp: LogProbabilityOfImprovement(gp, incumbent=-4.0),
        lambda gp: LowerConfidenceBound(gp, kappa=2.0, scale=0.5),
    ],
    ids=["log_ei", "log_ei_tail", "log_pi", "log_pi_tail", "lcb"],
)
def test_improvement_members_have_exact_gradients(make: Callable) -> None:
    _check_gradient(make(_gp()), X_TEST)


def test_members_match_the_closed_forms() -> None:
    gp = _gp()
    mean, var = gp.predict(X_TEST)
    np.testing.assert_allclose(
        LogExpectedImprovement(gp, -0.5, 0.01)(X_TEST),
        log_expected_improvement(mean, var, -0.5, 0.01),
    )
    np.testing.assert_allclose(
        LogProbabilityOfImprovement(gp, -0.5)(X_TEST),
        log_probability_of_improvement(mean, var, -0.5),
    )
    np.testing.assert_allclose(
        LowerConfidenceBound(gp, 2.0)(X_TEST), -lower_confidence_bound(mean, var, 2.0)
    )


def test_log_probability_of_feasibility_has_an_exact_gradient() -> None:
    constraints = [_gp(seed=1), _gp(seed=2, noise=1e-2)]
    _check_gradient(LogProbabilityOfFeasibility(constraints), X_TEST)
    assert np.all(LogProbabilityOfFeasibility([])(X_TEST) == 0.0)


def test_sum_and_model_average_compose_values_and_gradients() -> None:
    gps = [_gp(seed=s) for s in range(3)]
    members = [LogExpectedImprovement(gp, -0.5) for gp in gps]
    average = ModelAverage(members)
    values = np.stack([m(X_TEST) for m in members])
    # Log-scale members average as the log of the mean of their exponentials.
    np.testing.assert_allclose(average(X_TEST), np.log(np.mean(np.exp(values), axis=0)))
    _check_gradient(average, X_TEST)
    linear = ModelAverage([LowerConfidenceBound(gp, 1.5) for gp in gps])
    np.testing.assert_allclose(
        linear(X_TEST), np.mean([LowerConfidenceBound(gp, 1.5)(X_TEST) for gp in gps], axis=0)
    )
    _check_gradient(linear, X_TEST)
    total = Sum([average, LogProbabilityOfFeasibility([_gp(seed=5)])])
    assert total.log_scale
    _check_gradient(total, X_TEST)


def test_on_unit_cube_fills_the_gradient_of_continuous_coordinates_only() -> None:
    space = SearchSpace(
        {"a": FloatParam(0.0, 1.0), "c": CategoricalParam(("x", "y")), "n": IntParam(1, 5)}
    )
    rng = np.random.default_rng(0)
    u = space.sample_uniform(20, rng)
    y = np.sin(4 * u[:, 0]) + (u[:, 1] > 0.5) + u[:, 2]
    gp = GaussianProcessRegressor(space.feature_columns(), seed=0).fit(space.features(u), y)
    scored = OnUnitCube(LogExpectedImprovement(gp, float(y.min())), space)
    points = space.sample_uniform(6, rng)
    values, grad = scored.value_and_grad(points)
    np.testing.assert_allclose(values, scored(points))
    assert np.all(grad[:, 1:] == 0.0)
    step = 1e-6
    shifted = points.copy()
    shifted[:, 0] += step
    expected = (scored(shifted) - scored(points - np.eye(3)[0] * step)) / (2 * step)
    np.testing.assert_allclose(grad[:, 0], expected, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------------------------ model set
SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})


def _observations(n: int, seed: int = 0, **overrides: dict) -> list[Observation]:
    rng = np.random.default_rng(seed)
    points = rng.random((n, 2))
    return [
        Observation({"x": float(a), "y": float(b)}, float((a - 0.3) ** 2 + (b - 0.7) ** 2))
        for a, b in points
    ]


def test_a_model_set_needs_two_complete_observations() -> None:
    builder = ModelSetBuilder()
    rng = np.random.default_rng(0)
    one = builder.fit(history_from_observations(SPACE, _observations(1)), rng)
    assert not one.has_objective and one.crash is None
    observations = _observations(1) + [Observation({"x": 0.9, "y": 0.9}, state=TrialState.FAILED)]
    crash_only = builder.fit(history_from_observations(SPACE, observations), rng)
    assert not crash_only.has_objective and crash_only.crash is not None


def test_the_model_set_treats_each_kind_of_observation() -> None:
    observations = _observations(10)
    observations[0] = Observation(observations[0].params, 0.1, constraints={"size": -1.0})
    observations[1] = Observation(observations[1].params, 0.2, constraints={"size": 2.0})
    observations[2] = Observation(observations[2].params, 0.3, constraints={"size": -0.5})
    observations.append(Observation({"x": 0.95, "y": 0.95}, state=TrialState.FAILED))
    observations.append(Observation({"x": 0.3, "y": 0.7}, state=TrialState.RUNNING))
    observations.append(Observation({"x": 0.1, "y": 0.1}, 5.0, state=TrialState.PRUNED))
    history = history_from_observations(SPACE, observations)
    models = ModelSetBuilder().fit(history, np.random.default_rng(0), durations=True)
    assert models.has_objective and models.has_feasibility_models
    assert models.constraint_names == ["size"]
    assert models.crash is not None
    assert models.duration is None  # no durations known
    # The objective GP: the 10 complete observations, then its believed means at the failed
    # and pruned points (no value to learn, but no uncertainty left there), then at the
    # pending point, last (where fantasies replace the believed values).
    assert len(models.objective[0].X_train_) == 13
    assert np.allclose(models.objective[0].X_train_[-1], SPACE.features(np.array([[0.3, 0.7]])))
    assert models.n_conditioned == 11  # observations: the complete ones and the pending one
    pending = SPACE.features(np.array([[0.3, 0.7]]))
    believed = models.objective[0].predict(pending)[0][0]
    assert models.incumbents[0] <= believed + 1e-12  # pending values count for μ⁻
    # Anchors are feasible complete observations, best first (the infeasible one is out).
    assert not np.any(np.all(np.isclose(models.anchors, history.u[1]), axis=1))
    assert len(models.lengthscales) == 2


def test_targets_are_standardised_so_the_units_do_not_matter() -> None:
    def incumbents(scale: float, shift: float) -> float:
        observations = [Observation(o.params, scale * o.value + shift) for o in _observations(12)]
        history = history_from_observations(SPACE, observations)
        return ModelSetBuilder().fit(history, np.random.default_rng(0)).incumbents[0]

    reference = incumbents(1.0, 0.0)
    for scale, shift in [(1e-15, 0.0), (1e150, 0.0), (1.0, 1e6)]:
        assert incumbents(scale, shift) == pytest.approx(reference, abs=1e-6)


def test_identical_data_is_fitted_once_and_deterministic_fits_agree() -> None:
    history = history_from_observations(SPACE, _observations(12))
    builder = ModelSetBuilder(FitPolicy(warm_start=False))
    first = builder.fit(history, np.random.default_rng(0))
    again = builder.fit(history, np.random.default_rng(1))
    assert first.objective[0] is again.objective[0]  # cached by data
    other = ModelSetBuilder(FitPolicy(warm_start=False)).fit(history, np.random.default_rng(2))
    np.testing.assert_allclose(other.objective[0].theta_, first.objective[0].theta_)


def test_adaptive_percentile_fills_infeasible_and_failed_observations() -> None:
    observations = _observations(8)
    observations[0] = Observation(observations[0].params, 0.0, constraints={"c": 1.0})
    observations.append(Observation({"x": 0.9, "y": 0.1}, state=TrialState.FAILED))
    history = history_from_observations(SPACE, observations)
    models = ModelSetBuilder().fit(history, np.random.default_rng(0), infeasible_fill=75.0)
    assert not models.has_feasibility_models
    assert len(models.objective[0].X_train_) == 9  # the failed observation is in, filled


def test_marginalised_model_sets_hold_hyperparameter_samples() -> None:
    history = history_from_observations(SPACE, _observations(12))
    builder = ModelSetBuilder(FitPolicy(marginalize=True, n_samples=4))
    models = builder.fit(history, np.random.default_rng(0))
    assert len(models.objective) == len(models.incumbents) == 4
    thetas = np.array([model.theta_ for model in models.objective])
    assert len(np.unique(thetas.round(12), axis=0)) > 1


@pytest.mark.parametrize("build", [constrained_log_ei, constrained_log_pi])
def test_constrained_improvement_on_a_model_set(build: Callable) -> None:
    observations = _observations(10)
    observations = [
        Observation(o.params, o.value, constraints={"c": o.params["x"] - 0.5})
        for o in observations
    ]
    history = history_from_observations(SPACE, observations)
    models = ModelSetBuilder().fit(history, np.random.default_rng(0))
    acquisition = build(models, xi=0.01)
    assert isinstance(acquisition, Sum)
    X = SPACE.features(np.random.default_rng(3).random((6, 2)))
    _check_gradient(acquisition, X)
    # Before any feasible point, the probability of feasibility alone.
    infeasible = [
        Observation(o.params, o.value, constraints={"c": 1.0 + o.params["x"]})
        for o in observations
    ]
    models = ModelSetBuilder().fit(
        history_from_observations(SPACE, infeasible), np.random.default_rng(0)
    )
    assert isinstance(build(models), LogProbabilityOfFeasibility)


def test_constrained_lcb_on_a_model_set() -> None:
    history = history_from_observations(SPACE, _observations(10))
    models = ModelSetBuilder().fit(history, np.random.default_rng(0))
    acquisition = constrained_lcb(models, kappa=2.0)
    assert isinstance(acquisition, ModelAverage)
    _check_gradient(acquisition, SPACE.features(np.random.default_rng(4).random((5, 2))))
