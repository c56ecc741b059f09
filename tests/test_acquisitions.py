"""Acquisition functions and portfolio members (bore_samplers.acquisitions)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy.stats import norm

from bore_samplers.acquisitions.improvement import (
    expected_improvement,
    lcb_beta,
    log_expected_improvement,
    log_probability_of_improvement,
    lower_confidence_bound,
    probability_of_improvement,
)
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.portfolio.members import (
    AcquisitionContext,
    BORENominee,
    ExpectedImprovement,
    ExpectedImprovementPerSecond,
    LowerConfidenceBound,
    MaxValueEntropySearch,
    ProbabilityOfImprovement,
    make_member,
    resolve_portfolio,
)
from bore_samplers.space import FloatParam, SearchSpace

SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})


def _objective(u: np.ndarray) -> np.ndarray:
    return (u[:, 0] - 0.3) ** 2 + (u[:, 1] - 0.7) ** 2


def _context(
    n: int = 12,
    seed: int = 0,
    constraint: bool = False,
    duration_of: Callable[[np.ndarray], np.ndarray] | None = None,
    models: list[GaussianProcessRegressor] | None = None,
) -> AcquisitionContext:
    rng = np.random.default_rng(seed)
    u = rng.random((n, 2))
    values = _objective(u)
    constraints = u[:, 0] + u[:, 1] - 1.0  # feasible iff x + y <= 1
    durations = None if duration_of is None else duration_of(u)
    observations = [
        Observation(
            {"x": float(a), "y": float(b)},
            float(v),
            TrialState.COMPLETE,
            (float(c),) if constraint else (),
            duration=None if durations is None else float(durations[i]),
        )
        for i, (a, b, v, c) in enumerate(zip(u[:, 0], u[:, 1], values, constraints, strict=True))
    ]
    history = history_from_observations(SPACE, observations)
    features = SPACE.features(history.u)
    gp = GaussianProcessRegressor(SPACE.feature_columns(), seed=0).fit(features, values)
    constraint_models = []
    if constraint:
        constraint_models.append(
            GaussianProcessRegressor(SPACE.feature_columns(), seed=0).fit(features, constraints)
        )
    return AcquisitionContext(
        history=history,
        models=models if models is not None else [gp],
        constraint_models=constraint_models,
        incumbent_features=features[history.feasible],
        n_conditioned=n,
        value_scale=float(np.std(values)),
        rng=np.random.default_rng(seed),
    )


# ------------------------------------------------------------------------------ closed forms
def test_pi_and_ei_match_their_formulas() -> None:
    mean, var = np.array([0.0, 1.0, -2.0]), np.array([1.0, 4.0, 0.25])
    incumbent, xi = 0.5, 0.1
    tau = incumbent - xi - mean
    std = np.sqrt(var)
    np.testing.assert_allclose(
        probability_of_improvement(mean, var, incumbent, xi), norm.cdf(tau / std)
    )
    expected = tau * norm.cdf(tau / std) + std * norm.pdf(tau / std)
    np.testing.assert_allclose(expected_improvement(mean, var, incumbent, xi), expected)
    np.testing.assert_allclose(
        log_probability_of_improvement(mean, var, incumbent, xi), np.log(norm.cdf(tau / std))
    )


def test_log_ei_is_accurate_and_finite_far_in_the_tail() -> None:
    mean = np.linspace(-3.0, 60.0, 2000)  # z from +3 down to -60 (EI underflows near -38)
    var = np.ones_like(mean)
    log_ei = log_expected_improvement(mean, var, 0.0)
    assert np.all(np.isfinite(log_ei))
    assert np.all(np.diff(log_ei) < 0)  # worse mean, lower EI, everywhere
    ei = expected_improvement(mean, var, 0.0)
    representable = ei > 1e-250
    np.testing.assert_allclose(log_ei[representable], np.log(ei[representable]), rtol=1e-9)
    # The branches of log h(z) meet smoothly at z = -1 and z = -40.
    for z in (-1.0, -40.0):
        below, above = log_expected_improvement(np.array([-z + 1e-9, -z - 1e-9]), 1.0, 0.0)
        assert abs(below - above) < 1e-7


def test_gp_lcb_beta_is_equation_seven() -> None:
    t, d, delta = 25, 3, 0.1
    expected = 2 * math.log(t ** (d / 2 + 2) * math.pi**2 / (3 * delta))
    assert lcb_beta(t, d, delta) == pytest.approx(expected, rel=1e-12)
    member = LowerConfidenceBound(delta=delta, nu=0.2)
    assert member.kappa(t, d) == pytest.approx(math.sqrt(0.2 * expected))
    assert lcb_beta(0, d) == lcb_beta(1, d)  # t starts at 1
    np.testing.assert_allclose(lower_confidence_bound([1.0], [4.0], 0.5), [0.0])


# ------------------------------------------------------------------------------ members
def test_scores_are_the_documented_transforms_of_the_acquisitions() -> None:
    context = _context()
    gp = context.models[0]
    u = SPACE.sample_uniform(64, np.random.default_rng(1))
    mean, var = gp.predict(SPACE.features(u))
    best = float(np.min(gp.predict(context.incumbent_features)[0]))
    xi = 0.01 * context.value_scale  # ξ is in units of the observed standard deviation
    np.testing.assert_allclose(
        ProbabilityOfImprovement().scorer(context)(u),
        log_probability_of_improvement(mean, var, best, xi),
    )
    ei_score = ExpectedImprovement().scorer(context)(u)
    ei = expected_improvement(mean, var, best, xi)
    np.testing.assert_allclose(ei_score[ei > 1e-300], np.log(ei[ei > 1e-300]), rtol=1e-9)
    assert np.all(np.isfinite(ei_score))  # also where EI itself underflows
    kappa = LowerConfidenceBound().kappa(context.n_conditioned, 2)
    np.testing.assert_allclose(
        LowerConfidenceBound().scorer(context)(u),
        -lower_confidence_bound(mean, var, kappa) / context.value_scale,
    )


def test_acquisitions_are_averaged_over_the_list_of_models() -> None:
    single = _context()
    gp = single.models[0]
    other = gp.with_theta(gp.theta_ + np.array([0.5, -0.3, 0.2, 0.5, 0.1]))
    pair = _context(models=[gp, other])
    only_other = _context(models=[other])
    u = SPACE.sample_uniform(32, np.random.default_rng(2))
    for member in (ProbabilityOfImprovement(), ExpectedImprovement()):
        a, b = np.exp(member.scorer(single)(u)), np.exp(member.scorer(only_other)(u))
        np.testing.assert_allclose(np.exp(member.scorer(pair)(u)), (a + b) / 2, rtol=1e-9)
    lcb = LowerConfidenceBound()
    np.testing.assert_allclose(
        lcb.scorer(pair)(u), (lcb.scorer(single)(u) + lcb.scorer(only_other)(u)) / 2
    )
    mes = MaxValueEntropySearch(n_discretization=64).scorer(pair)(u)
    assert mes.shape == (32,) and np.all(np.isfinite(mes)) and np.all(mes > -1e-9)


def test_constraints_weight_the_gp_members_by_the_probability_of_feasibility() -> None:
    plain, constrained = _context(constraint=False), _context(constraint=True)
    u = SPACE.sample_uniform(64, np.random.default_rng(3))
    log_pf = constrained.log_feasibility(SPACE.features(u))
    assert np.all(log_pf <= 0) and log_pf.min() < -1.0
    np.testing.assert_allclose(
        LowerConfidenceBound().scorer(constrained)(u),
        LowerConfidenceBound().scorer(plain)(u) + log_pf,
    )
    # PI/EI: the incumbent is now the best *feasible* mean, and log PF is added.
    gp = constrained.models[0]
    best = float(np.min(gp.predict(constrained.incumbent_features)[0]))
    mean, var = gp.predict(SPACE.features(u))
    expected = log_expected_improvement(mean, var, best, 0.01 * constrained.value_scale) + log_pf
    np.testing.assert_allclose(ExpectedImprovement().scorer(constrained)(u), expected, rtol=1e-9)


def test_without_a_feasible_point_improvement_members_seek_feasibility() -> None:
    context = _context(constraint=True)
    context.incumbent_features = np.empty((0, 2))
    u = SPACE.sample_uniform(16, np.random.default_rng(4))
    log_pf = context.log_feasibility(SPACE.features(u))
    for member in (ProbabilityOfImprovement(), ExpectedImprovement()):
        np.testing.assert_allclose(member.scorer(context)(u), log_pf)


def test_ei_per_second_prefers_cheap_regions_and_falls_back_to_ei() -> None:
    # Evaluations get slow as y grows.
    context = _context(n=14, duration_of=lambda u: np.exp(4.0 * u[:, 1]))
    candidates = SPACE.sample_uniform(256, np.random.default_rng(6))
    ei = ExpectedImprovement().scorer(context)(candidates)
    per_second = ExpectedImprovementPerSecond().scorer(context)(candidates)
    cost = per_second - ei  # minus the predicted log duration
    assert np.corrcoef(cost, candidates[:, 1])[0, 1] < -0.9
    # Fewer known durations than min_durations: plain EI.
    no_durations = _context(n=14)
    np.testing.assert_allclose(
        ExpectedImprovementPerSecond().scorer(no_durations)(candidates),
        ExpectedImprovement().scorer(no_durations)(candidates),
    )


def test_bore_nominee_proposes_a_new_point_from_the_history() -> None:
    context = _context(n=15)
    member = BORENominee(classifier="rf")
    point = member.nominate(context.history, np.random.default_rng(0))
    assert point.shape == (2,) and np.all((0 <= point) & (point <= 1))
    assert not np.any(np.all(np.isclose(context.history.u, point), axis=1))
    again = BORENominee(classifier="rf").nominate(context.history, np.random.default_rng(0))
    np.testing.assert_array_equal(point, again)  # seeded by the portfolio's generator


def test_hyperparameter_samples_are_a_list_of_models() -> None:
    marginalization = pytest.importorskip("bore_samplers.models.hyperparameter_sampling")
    context = _context()
    models = marginalization.sample_hyperparameter_models(
        context.models[0], 4, np.random.default_rng(0)
    )
    averaged = _context(models=models)
    u = SPACE.sample_uniform(32, np.random.default_rng(7))
    singles = [np.exp(ExpectedImprovement().scorer(_context(models=[m]))(u)) for m in models]
    np.testing.assert_allclose(
        np.exp(ExpectedImprovement().scorer(averaged)(u)), np.mean(singles, axis=0), rtol=1e-9
    )


# ------------------------------------------------------------------------------ names
def test_names_and_portfolio_resolution() -> None:
    assert [m.name for m in resolve_portfolio(["pi", "ei", "lcb"])] == ["pi", "ei", "lcb"]
    assert ProbabilityOfImprovement(xi=0.1).name == "pi(xi=0.1)"
    assert LowerConfidenceBound(nu=1.0).name == "lcb(nu=1)"
    assert ExpectedImprovement(label="greedy").name == "greedy"
    assert make_member("ei_per_second").name == "ei_per_second"
    assert make_member("bore").name == "bore" and make_member("mes").name == "mes"
    nine = [
        *(ProbabilityOfImprovement(xi) for xi in (0.01, 0.1, 1.0)),
        *(ExpectedImprovement(xi) for xi in (0.01, 0.1, 1.0)),
        *(LowerConfidenceBound(nu=nu) for nu in (0.1, 0.2, 1.0)),
    ]
    assert len({m.name for m in resolve_portfolio(nine)}) == 9


@pytest.mark.parametrize(
    ("portfolio", "error"),
    [
        (["pi", "ucb"], ValueError),
        ([], ValueError),
        (["ei", "ei"], ValueError),
        ([ExpectedImprovement(xi=-1.0)], ValueError),
        ([LowerConfidenceBound(delta=1.5)], ValueError),
        ([LowerConfidenceBound(nu=0.0)], ValueError),
        ([ExpectedImprovementPerSecond(min_durations=1)], ValueError),
        ([MaxValueEntropySearch(n_samples=0)], ValueError),
        ([BORENominee(classifier="svm")], ValueError),
        ([42], TypeError),
    ],
)
def test_invalid_portfolios_are_refused(portfolio: list, error: type[Exception]) -> None:
    with pytest.raises(error):
        resolve_portfolio(portfolio)
