"""Acquisition functions and portfolio members (bore_samplers.acquisitions)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy.stats import norm

from bore_samplers.acquisitions.entropy import (
    Y_STAR_MAX_MARGIN,
    Y_STAR_MIN_MARGIN,
    Y_STAR_NOISE_MARGIN,
    constrained_mes,
    y_star_margin,
)
from bore_samplers.acquisitions.feasibility import (
    _BARRIER_SLOPE,
    CONFIDENT_FEASIBILITY,
    INFEASIBLE_STREAK,
    LogProbabilityOfFeasibility,
    feasibility_of,
    infeasible_streak,
)
from bore_samplers.acquisitions.improvement import (
    constrained_log_ei,
    expected_improvement,
    lcb_beta,
    log_expected_improvement,
    log_probability_of_improvement,
    lower_confidence_bound,
    probability_of_improvement,
)
from bore_samplers.models.hyperparameter_sampling import sample_hyperparameter_models
from bore_samplers.models.model_set import ModelSet, ModelSetBuilder
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.portfolio.members import (
    BORENominee,
    ExpectedImprovement,
    ExpectedImprovementPerSecond,
    LowerConfidenceBoundMember,
    MaxValueEntropySearch,
    ProbabilityOfImprovement,
    make_member,
    resolve_portfolio,
)
from bore_samplers.space import FloatParam, SearchSpace

SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})


def _objective(u: np.ndarray) -> np.ndarray:
    return (u[:, 0] - 0.3) ** 2 + (u[:, 1] - 0.7) ** 2


def _models(
    n: int = 12,
    seed: int = 0,
    constraint: bool = False,
    duration_of: Callable[[np.ndarray], np.ndarray] | None = None,
) -> ModelSet:
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
            {"budget": float(c)} if constraint else {},
            duration=None if durations is None else float(durations[i]),
        )
        for i, (a, b, v, c) in enumerate(zip(u[:, 0], u[:, 1], values, constraints, strict=True))
    ]
    history = history_from_observations(SPACE, observations)
    return ModelSetBuilder().fit(history, rng, durations=duration_of is not None)


def _acquisition(member, models: ModelSet, u: np.ndarray, seed: int = 0) -> np.ndarray:
    return member.acquisition(models, np.random.default_rng(seed))(SPACE.features(u))


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
    member = LowerConfidenceBoundMember(delta=delta, nu=0.2)
    assert member.kappa(t, d) == pytest.approx(math.sqrt(0.2 * expected))
    assert lcb_beta(0, d) == lcb_beta(1, d)  # t starts at 1
    np.testing.assert_allclose(lower_confidence_bound([1.0], [4.0], 0.5), [0.0])


# ------------------------------------------------------------------------------ members
def test_members_score_the_documented_acquisitions() -> None:
    models = _models()
    gp, best = models.objective[0], models.incumbents[0]
    u = SPACE.sample_uniform(64, np.random.default_rng(1))
    mean, var = gp.predict(SPACE.features(u))
    # ξ is in units of the (standardised) observed values: PI's paper default 0.01, EI's 0.
    np.testing.assert_allclose(
        _acquisition(ProbabilityOfImprovement(), models, u),
        log_probability_of_improvement(mean, var, best, 0.01),
    )
    ei_score = _acquisition(ExpectedImprovement(), models, u)
    ei = expected_improvement(mean, var, best, 0.0)
    np.testing.assert_allclose(ei_score[ei > 1e-300], np.log(ei[ei > 1e-300]), rtol=1e-9)
    assert np.all(np.isfinite(ei_score))  # also where EI itself underflows
    kappa = LowerConfidenceBoundMember().kappa(models.n_conditioned, 2)
    np.testing.assert_allclose(
        _acquisition(LowerConfidenceBoundMember(), models, u),
        -lower_confidence_bound(mean, var, kappa),
    )
    # μ⁻ is the smallest posterior mean over the (feasible) observed points.
    observed = SPACE.features(models.history.u)
    assert best == pytest.approx(float(np.min(gp.predict(observed)[0])))


def test_acquisitions_are_averaged_over_the_objective_models() -> None:
    models = _models()
    samples = sample_hyperparameter_models(models.objective[0], 3, np.random.default_rng(0))
    incumbents = [float(np.min(m.predict(SPACE.features(models.history.u))[0])) for m in samples]
    averaged = ModelSet(
        history=models.history, objective=samples, incumbents=incumbents, n_conditioned=12
    )
    singles = [
        ModelSet(history=models.history, objective=[m], incumbents=[b], n_conditioned=12)
        for m, b in zip(samples, incumbents, strict=True)
    ]
    u = SPACE.sample_uniform(32, np.random.default_rng(2))
    for member in (ProbabilityOfImprovement(), ExpectedImprovement()):
        each = [np.exp(_acquisition(member, single, u)) for single in singles]
        np.testing.assert_allclose(
            np.exp(_acquisition(member, averaged, u)), np.mean(each, axis=0), rtol=1e-9
        )
    lcb = LowerConfidenceBoundMember()
    np.testing.assert_allclose(
        _acquisition(lcb, averaged, u),
        np.mean([_acquisition(lcb, single, u) for single in singles], axis=0),
    )
    mes = _acquisition(MaxValueEntropySearch(n_discretization=64), averaged, u)
    assert mes.shape == (32,) and np.all(np.isfinite(mes)) and np.all(mes > -1e-9)


def test_constraints_weight_the_gp_members_by_the_probability_of_feasibility() -> None:
    constrained = _models(constraint=True)
    u = SPACE.sample_uniform(64, np.random.default_rng(3))
    log_pf = feasibility_of(constrained)(SPACE.features(u))
    assert np.all(log_pf <= 0) and log_pf.min() < -1.0
    kappa = LowerConfidenceBoundMember().kappa(constrained.n_conditioned, 2)
    mean, var = constrained.objective[0].predict(SPACE.features(u))
    np.testing.assert_allclose(
        _acquisition(LowerConfidenceBoundMember(), constrained, u),
        -lower_confidence_bound(mean, var, kappa) + log_pf,
    )
    # PI/EI: the incumbent is the best *feasible* mean, and log PF is added.
    gp = constrained.objective[0]
    feasible = SPACE.features(constrained.history.u[constrained.history.feasible])
    best = float(np.min(gp.predict(feasible)[0]))
    assert constrained.incumbents[0] == pytest.approx(best)
    mean, var = gp.predict(SPACE.features(u))
    expected = log_expected_improvement(mean, var, best, 0.0) + log_pf
    np.testing.assert_allclose(
        _acquisition(ExpectedImprovement(), constrained, u), expected, rtol=1e-9
    )


def test_without_a_feasible_point_improvement_members_seek_feasibility() -> None:
    models = _models(constraint=True)
    models.incumbents = []
    u = SPACE.sample_uniform(16, np.random.default_rng(4))
    log_pf = feasibility_of(models)(SPACE.features(u))
    for member in (ProbabilityOfImprovement(), ExpectedImprovement()):
        np.testing.assert_allclose(_acquisition(member, models, u), log_pf)


def _history_with_feasibility(feasible: list[bool | None]):
    """A history whose finished trials are feasible or not in this order (None: running)."""
    observations = [
        Observation(
            {"x": 0.05 * i, "y": 0.5},
            1.0,
            TrialState.RUNNING if ok is None else TrialState.COMPLETE,
            {} if ok is None else {"budget": -1.0 if ok else 1.0},
        )
        for i, ok in enumerate(feasible)
    ]
    return history_from_observations(SPACE, observations)


@pytest.mark.parametrize(
    ("feasible", "streak"),
    [
        ([False, False, False], 0),  # nothing feasible yet: feasibility alone is sought
        ([True, False, False], 2),
        ([False, True, False, True], 0),
        ([True, False, None, False, False], 3),  # running trials do not break a streak
    ],
)
def test_the_infeasible_streak_counts_the_latest_infeasible_trials(
    feasible: list[bool | None], streak: int
) -> None:
    assert infeasible_streak(_history_with_feasibility(feasible)) == streak


def test_the_feasibility_floor_leaves_log_pf_above_it_and_steepens_it_below() -> None:
    constrained = _models(constraint=True)
    plain = LogProbabilityOfFeasibility(constrained.constraints)
    floored = LogProbabilityOfFeasibility(
        constrained.constraints, min_probability=CONFIDENT_FEASIBILITY
    )
    u = SPACE.sample_uniform(256, np.random.default_rng(5))
    X = SPACE.features(u)
    log_pf, grad = plain.evaluate(X, True)
    barrier, barrier_grad = floored.evaluate(X, True)
    above = log_pf >= math.log(CONFIDENT_FEASIBILITY)
    assert above.any() and (~above).any()
    np.testing.assert_allclose(barrier[above], log_pf[above])
    assert np.all(barrier[~above] < log_pf[~above])
    # Below the floor the gradient is log PF's, steepened by the same factor as the values.
    factor = 1.0 + _BARRIER_SLOPE
    np.testing.assert_allclose(barrier_grad[above], grad[above])
    np.testing.assert_allclose(barrier_grad[~above], factor * grad[~above])
    # And it is the barrier's own: central differences where log PF is moderate (in the far
    # tails finite differences lose digits) and away from the kink.
    step = 1e-6
    moderate = (log_pf > -5.0) & (np.abs(log_pf - math.log(CONFIDENT_FEASIBILITY)) > 1e-3)
    assert moderate.sum() >= 10
    for column in range(X.shape[1]):
        shift = np.zeros_like(X)
        shift[:, column] = step
        numeric = (floored(X + shift) - floored(X - shift)) / (2 * step)
        np.testing.assert_allclose(
            barrier_grad[moderate, column], numeric[moderate], rtol=1e-3, atol=1e-6
        )


def test_after_an_infeasible_streak_constrained_ei_needs_confident_feasibility() -> None:
    models = _models(n=16, constraint=True)
    # Only the feasibility flags of the history are read for the streak.
    models.history.feasible[:] = True
    assert feasibility_of(models, floor=True).min_probability is None
    models.history.feasible[-INFEASIBLE_STREAK:] = False
    assert infeasible_streak(models.history) == INFEASIBLE_STREAK
    assert feasibility_of(models, floor=True).min_probability == CONFIDENT_FEASIBILITY
    assert feasibility_of(models).min_probability is None  # PF alone needs no floor
    u = SPACE.sample_uniform(64, np.random.default_rng(6))
    X = SPACE.features(u)
    floored = feasibility_of(models, floor=True)(X)
    unfloored = feasibility_of(models)(X)
    gp = models.objective[0]
    mean, var = gp.predict(X)
    expected = log_expected_improvement(mean, var, models.incumbents[0], 0.0) + floored
    np.testing.assert_allclose(constrained_log_ei(models)(X), expected, rtol=1e-9)
    assert np.any(floored < unfloored)


def test_mes_caps_y_star_below_the_incumbent_by_five_noise_deviations() -> None:
    # Wang & Jegelka's cap. A GP sure of its minimum (15 observations around it) draws every
    # y* within a few posterior deviations of the incumbent; uncapped, the information right
    # next to the incumbent then stays high and MES proposes the incumbent again and again.
    rng = np.random.default_rng(0)
    u = np.vstack([rng.random((25, 2)), [0.3, 0.7] + 0.02 * rng.standard_normal((15, 2))])
    observations = [
        Observation({"x": float(a), "y": float(b)}, float(v), TrialState.COMPLETE)
        for (a, b), v in zip(u, _objective(u), strict=True)
    ]
    history = history_from_observations(SPACE, observations)
    models = ModelSetBuilder().fit(history, rng)
    acquisition = constrained_mes(models, np.random.default_rng(1), n_discretization=256)
    (member,), (objective,) = acquisition.members, models.objective
    margin = y_star_margin(objective.noise_variance_)
    assert Y_STAR_MIN_MARGIN <= margin <= Y_STAR_MAX_MARGIN
    noise_margin = Y_STAR_NOISE_MARGIN * math.sqrt(objective.noise_variance_)
    assert margin == min(max(noise_margin, Y_STAR_MIN_MARGIN), Y_STAR_MAX_MARGIN)
    cap = models.incumbents[0] - margin
    np.testing.assert_array_equal(member.y_star_samples, cap)  # every draw was above the cap
    best = u[np.argmin(_objective(u))]
    near = np.clip(best + [1e-4, -1e-4], 0.0, 1.0)[None]
    far = SPACE.sample_uniform(64, np.random.default_rng(2))
    scores = acquisition(SPACE.features(np.vstack([near, far])))
    assert scores[0] < 1e-3 * scores[1:].max()
    # Without a feasible observation there is nothing to cap at.
    models.incumbents = []
    acquisition = constrained_mes(models, np.random.default_rng(1), n_discretization=256)
    assert np.all(acquisition.members[0].y_star_samples > cap)


def test_ei_per_second_prefers_cheap_regions_and_falls_back_to_ei() -> None:
    # Evaluations get slow as y grows.
    models = _models(n=14, duration_of=lambda u: np.exp(4.0 * u[:, 1]))
    candidates = SPACE.sample_uniform(256, np.random.default_rng(6))
    ei = _acquisition(ExpectedImprovement(), models, candidates)
    per_second = _acquisition(ExpectedImprovementPerSecond(), models, candidates)
    cost = per_second - ei  # minus the predicted log duration
    assert np.corrcoef(cost, candidates[:, 1])[0, 1] < -0.9
    # Fewer known durations than min_durations: plain EI.
    np.testing.assert_allclose(
        _acquisition(ExpectedImprovementPerSecond(min_durations=20), models, candidates), ei
    )
    no_durations = _models(n=14)
    np.testing.assert_allclose(
        _acquisition(ExpectedImprovementPerSecond(), no_durations, candidates),
        _acquisition(ExpectedImprovement(), no_durations, candidates),
    )


def test_bore_nominee_proposes_a_new_point_from_the_history() -> None:
    history = _models(n=15).history
    member = BORENominee(classifier="rf")
    point = member.nominate(history, np.random.default_rng(0))
    assert point.shape == (2,) and np.all((0 <= point) & (point <= 1))
    assert not np.any(np.all(np.isclose(history.u, point), axis=1))
    again = BORENominee(classifier="rf").nominate(history, np.random.default_rng(0))
    np.testing.assert_array_equal(point, again)  # seeded by the portfolio's generator


# ------------------------------------------------------------------------------ names
def test_names_and_portfolio_resolution() -> None:
    assert [m.name for m in resolve_portfolio(["pi", "ei", "lcb"])] == ["pi", "ei", "lcb"]
    assert ProbabilityOfImprovement(xi=0.1).name == "pi(xi=0.1)"
    assert LowerConfidenceBoundMember(nu=1.0).name == "lcb(nu=1)"
    assert ExpectedImprovement(label="greedy").name == "greedy"
    assert make_member("ei_per_second").name == "ei_per_second"
    assert make_member("bore").name == "bore" and make_member("mes").name == "mes"
    nine = [
        *(ProbabilityOfImprovement(xi) for xi in (0.01, 0.1, 1.0)),
        *(ExpectedImprovement(xi) for xi in (0.01, 0.1, 1.0)),
        *(LowerConfidenceBoundMember(nu=nu) for nu in (0.1, 0.2, 1.0)),
    ]
    assert len({m.name for m in resolve_portfolio(nine)}) == 9


@pytest.mark.parametrize(
    ("portfolio", "error"),
    [
        (["pi", "ucb"], ValueError),
        ([], ValueError),
        (["ei", "ei"], ValueError),
        ([ExpectedImprovement(xi=-1.0)], ValueError),
        ([LowerConfidenceBoundMember(delta=1.5)], ValueError),
        ([LowerConfidenceBoundMember(nu=0.0)], ValueError),
        ([ExpectedImprovementPerSecond(min_durations=2)], ValueError),
        ([MaxValueEntropySearch(n_samples=0)], ValueError),
        ([BORENominee(classifier="svm")], ValueError),
        ([42], TypeError),
    ],
)
def test_invalid_portfolios_are_refused(portfolio: list, error: type[Exception]) -> None:
    with pytest.raises(error):
        resolve_portfolio(portfolio)
