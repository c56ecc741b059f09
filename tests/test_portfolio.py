"""PortfolioProposer: No-PASt-BO, GP-Hedge, rewards rebuilt from records, asks, constraints."""

from __future__ import annotations

import math
import pickle
from typing import Any

import numpy as np
import pytest

from bore_samplers.acquisitions.feasibility import feasibility_of
from bore_samplers.models.gp_regression import GaussianProcessRegressor
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.portfolio.members import (
    BORENominee,
    ExpectedImprovement,
    ExpectedImprovementPerSecond,
    MaxValueEntropySearch,
)
from bore_samplers.proposers.portfolio.proposer import PortfolioProposer
from bore_samplers.proposers.portfolio.rewards import (
    hedge_probabilities,
    normalize_rewards,
    update_rewards,
)
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, SearchSpace

SPACE = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
# Fewer candidates than the default keep every test fast; the algorithm is the same.
FAST = dict(n_candidates=200, n_restarts=2)


def objective(params: dict[str, Any]) -> float:
    x, y = params["x"], params["y"]
    return (x - 0.3) ** 2 + (y - 0.7) ** 2 + 0.1 * math.sin(8 * x)


def run(proposer: PortfolioProposer, n: int, f: Any = objective) -> list[Observation]:
    observations: list[Observation] = []
    for _ in range(n):
        params, record = proposer.propose_with_record(SPACE, observations)
        observations.append(Observation(params, f(params), record=record))
    return observations


# ------------------------------------------------------------------------------ reward algebra
def test_normalised_rewards_span_minus_one_to_zero() -> None:
    rewards = np.array([-3.0, -1.0, -2.0])
    np.testing.assert_allclose(normalize_rewards(rewards), [-1.0, 0.0, -0.5])
    # Invariant to the scale and offset of the objective (what GP-Hedge is not).
    np.testing.assert_allclose(
        hedge_probabilities(rewards, 4.0), hedge_probabilities(100 * rewards - 7, 4.0)
    )
    assert not np.allclose(
        hedge_probabilities(rewards, 4.0, normalize=False),
        hedge_probabilities(100 * rewards, 4.0, normalize=False),
    )
    p = hedge_probabilities(rewards, 4.0)
    np.testing.assert_allclose(p, np.exp([-4.0, 0.0, -2.0]) / np.exp([-4.0, 0.0, -2.0]).sum())


def test_equal_rewards_and_zero_eta_give_uniform_probabilities() -> None:
    assert normalize_rewards(np.array([2.0, 2.0])) is None
    np.testing.assert_allclose(hedge_probabilities(np.full(3, 5.0), 4.0), np.full(3, 1 / 3))
    np.testing.assert_allclose(hedge_probabilities(np.array([0.0, -9.0]), 0.0), [0.5, 0.5])
    # GP-Hedge's raw softmax never overflows.
    p = hedge_probabilities(np.array([1e6, 0.0]), 4.0, normalize=False)
    np.testing.assert_allclose(p, [1.0, 0.0])


def test_reward_update_rewards_low_predicted_values() -> None:
    rewards = update_rewards(np.array([1.0, 1.0]), np.array([0.2, 0.9]), memory=0.5)
    np.testing.assert_allclose(rewards, [0.3, -0.4])  # G <- m G - mu: lower mu, higher G
    assert np.argmax(hedge_probabilities(rewards, 4.0)) == 0


def _record(nominees: dict[str, dict[str, float]]) -> dict[str, Any]:
    return {"portfolio": list(nominees), "nominees": nominees}


def test_reward_table_from_records_favours_the_member_nominating_low_values() -> None:
    rng = np.random.default_rng(0)
    observations = [
        Observation({"x": float(x), "y": float(y)}, objective({"x": x, "y": y}))
        for x, y in rng.random((8, 2))
    ]
    good, bad = {"x": 0.3, "y": 0.7}, {"x": 1.0, "y": 0.0}
    for i in range(3):
        record = _record({"pi": good, "ei": bad, "lcb": bad})
        observations.append(Observation({"x": 0.1 * i, "y": 0.5}, 0.3, record=record))
    proposer = PortfolioProposer(seed=0)
    table = proposer.reward_table(SPACE, observations)
    assert table.names == ["pi", "ei", "lcb"]
    assert table.event_rows == [8, 9, 10]
    assert table.rewards[0] > table.rewards[1] == pytest.approx(table.rewards[2])
    p = table.probabilities(4.0)
    assert p[0] > 0.9 and p[1] == pytest.approx(p[2])
    # memory = 0 keeps the last event only: G = -mu of the GP fitted on all the data.
    last = PortfolioProposer(memory=0.0).reward_table(SPACE, observations)
    features = SPACE.features(SPACE.encode([o.params for o in observations]))
    gp = GaussianProcessRegressor(SPACE.feature_columns(), seed=0).fit(
        features, [o.value for o in observations]
    )
    expected = -gp.predict(SPACE.features(SPACE.encode([good, bad, bad])))[0]
    np.testing.assert_allclose(last.rewards, expected, rtol=1e-10)


@pytest.mark.parametrize("theta", [[0.1, 0.2], ["a", "b", "c", "d", "e"], [float("nan")] * 5])
def test_a_record_with_unusable_hyperparameters_gets_the_deterministic_fit(theta: Any) -> None:
    rng = np.random.default_rng(2)
    observations = [
        Observation({"x": float(x), "y": float(y)}, objective({"x": x, "y": y}))
        for x, y in rng.random((6, 2))
    ]
    nominees = {"pi": {"x": 0.2, "y": 0.2}, "ei": {"x": 0.5, "y": 0.5}, "lcb": {"x": 0.9, "y": 0}}
    plain = [*observations, Observation({"x": 0.4, "y": 0.6}, 0.5, record=_record(nominees))]
    broken = [*observations[:6], Observation(plain[6].params, 0.5, record=_record(nominees))]
    broken[6].record["theta"] = theta
    expected = PortfolioProposer().reward_table(SPACE, plain).rewards
    actual = PortfolioProposer().reward_table(SPACE, broken).rewards
    np.testing.assert_array_equal(actual, expected)


def test_reward_events_skip_pending_foreign_and_failed_data() -> None:
    rng = np.random.default_rng(1)
    base = [
        Observation({"x": float(x), "y": float(y)}, objective({"x": x, "y": y}))
        for x, y in rng.random((6, 2))
    ]
    record = _record(
        {"pi": {"x": 0.2, "y": 0.2}, "ei": {"x": 0.5, "y": 0.5}, "lcb": {"x": 0.9, "y": 0.1}}
    )
    foreign = _record({"pi": {"x": 0.2, "y": 0.2}, "mes": {"x": 0.5, "y": 0.5}})
    observations = [
        *base,
        Observation({"x": 0.11, "y": 0.9}, 0.5, record=record),  # event
        Observation({"x": 0.12, "y": 0.9}, None, TrialState.RUNNING, record=record),  # pending
        Observation({"x": 0.13, "y": 0.9}, 0.4, record=foreign),  # another portfolio's record
        Observation({"x": 0.14, "y": 0.9}, None, TrialState.FAILED, record=record),  # event
    ]
    table = PortfolioProposer(memory=1.0).reward_table(SPACE, observations)
    assert table.event_rows == [6, 9]
    # Event 6 uses the GP on rows 0-6; the failed event 9 adds no data, so its GP is the one on
    # the complete rows up to it: 0-6 and 8 (7 is pending).
    nominees = SPACE.features(SPACE.encode([record["nominees"][n] for n in ("pi", "ei", "lcb")]))
    expected = np.zeros(3)
    for rows in ([0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 6, 8]):
        used = [observations[i] for i in rows]
        gp = GaussianProcessRegressor(SPACE.feature_columns(), seed=0).fit(
            SPACE.features(SPACE.encode([o.params for o in used])), [o.value for o in used]
        )
        expected = expected - gp.predict(nominees)[0]
    np.testing.assert_allclose(table.rewards, expected, rtol=1e-10)
    # Once the pending trial finishes it becomes an event, in its place in the order.
    finished = list(observations)
    finished[7] = Observation({"x": 0.12, "y": 0.9}, 0.45, record=record)
    assert PortfolioProposer().reward_table(SPACE, finished).event_rows == [6, 7, 9]


# ------------------------------------------------------------------------------ GP-Hedge
@pytest.mark.parametrize(
    ("memory", "normalize", "eta"),
    [
        pytest.param(1.0, False, 2.0, id="gp-hedge"),
        pytest.param(1.0, False, 1e4, id="gp-hedge-hard-max"),
        pytest.param(0.7, True, 4.0, id="no-past-bo"),
    ],
)
def test_independent_gp_hedge_and_no_past_bo_agree_exactly(
    memory: float, normalize: bool, eta: float
) -> None:
    """An independent GP-Hedge (Hoffman et al., 2011; the paper's Algorithm 1) agrees exactly.

    GP-Hedge keeps gains ``g_j`` (start 0), chooses nominee ``j`` with probability
    ``exp(η g_j) / Σ exp(η g)``, and after each evaluation adds ``-μ(x_j)`` of the GP refitted
    on all data to every ``g_j``. No-PASt-BO (Algorithm 2) decays the gains by ``m`` first and
    normalises them to ``[-1, 0]`` before the softmax. The GP recipe (Matérn 5/2 ARD with the
    hyperparameters recorded by the proposal) is the package's; the bookkeeping is not.
    """
    proposer = PortfolioProposer(
        memory=memory, normalize=normalize, eta=eta, n_startup=4, seed=3, **FAST
    )
    names = ["pi", "ei", "lcb"]
    gains = np.zeros(3)
    observations: list[Observation] = []
    n_hedge_steps = 0
    for _ in range(14):
        params, record = proposer.propose_with_record(SPACE, observations)
        observations.append(Observation(params, objective(params), record=record))
        if not record:
            continue
        n_hedge_steps += 1
        logits = eta * gains
        if normalize:  # eq. 9; equal gains give equal probabilities
            spread = gains.max() - gains.min()
            logits = eta * (gains - gains.max()) / spread if spread > 0 else np.zeros(3)
        expected = np.exp(logits - logits.max())
        expected /= expected.sum()
        # The package conditions on standardised targets and this oracle on raw ones: equal up
        # to rounding.
        np.testing.assert_allclose(record["probabilities"], expected, rtol=1e-6, atol=1e-300)
        assert record["nominees"][record["arm"]] == params
        if eta > 100 and np.ptp(gains) > 1e-3:  # a hard max: GP-Hedge's choice is the argmax
            assert record["arm"] == names[int(np.argmax(gains))]
        features = SPACE.features(SPACE.snap(SPACE.encode([o.params for o in observations])))
        # The GP of eq. 8 "refitted" on all data: the proposal's hyperparameters (recorded),
        # conditioned on the data including the new evaluation.
        gp = (
            GaussianProcessRegressor(SPACE.feature_columns(), optimize=False)
            .fit(features, np.array([o.value for o in observations]))
            .with_theta(np.array(record["theta"]))
        )
        nominees = SPACE.snap(SPACE.encode([record["nominees"][name] for name in names]))
        gains = memory * gains - gp.predict(SPACE.features(nominees))[0]
    assert n_hedge_steps == 10
    np.testing.assert_allclose(proposer.reward_table(SPACE, observations).rewards, gains)


# ------------------------------------------------------------------------------ proposals
def test_initial_design_is_a_latin_hypercube_continued_by_concurrent_asks() -> None:
    proposer = PortfolioProposer(n_startup=5, seed=0)
    observations: list[Observation] = []
    for _ in range(5):  # all pending: as five workers asking at once
        params = proposer.propose(SPACE, observations)
        observations.append(Observation(params, None, TrialState.RUNNING))
    u = SPACE.encode([o.params for o in observations])
    for column in u.T:  # one point in each of the five strata of every coordinate
        assert sorted(np.floor(column * 5).astype(int)) == [0, 1, 2, 3, 4]


def test_eight_simultaneous_asks_are_distinct_and_spread() -> None:
    proposer = PortfolioProposer(seed=0, n_startup=5, **FAST)
    observations = run(proposer, 10)
    points = []
    for _ in range(8):
        params, record = proposer.propose_with_record(SPACE, observations)
        observations.append(Observation(params, None, TrialState.RUNNING, record=record))
        points.append((params["x"], params["y"]))
    points = np.array(points)
    gaps = np.linalg.norm(points[:, None] - points[None], axis=-1)[np.triu_indices(8, 1)]
    assert gaps.min() > 1e-3, points


def test_follow_up_asks_of_a_batch_reuse_the_first_asks_local_optima() -> None:
    proposer = PortfolioProposer(seed=0, n_startup=5, **FAST)
    observations = run(proposer, 10)
    memory = proposer._round_starts
    # A sequential ask (no pending point) is never a follow-up.
    assert memory.follow_up(history_from_observations(SPACE, observations)) is None
    points = []
    for _ in range(4):  # four workers asking at once: one full search, three follow-ups
        params, record = proposer.propose_with_record(SPACE, observations)
        observations.append(Observation(params, None, TrialState.RUNNING, record=record))
        points.append((params["x"], params["y"]))
    assert memory.n_finished == 10 and not memory.pending  # the first ask's full search
    assert memory.local_optima.shape[1] == 2 and len(set(points)) == 4
    assert memory.follow_up(history_from_observations(SPACE, observations)) is not None

    def tell(i: int) -> None:
        params = dict(zip("xy", points[i], strict=True))
        at = next(k for k, o in enumerate(observations) if o.params == params)
        observations[at] = Observation(params, objective(params))

    # A trial proposed since the last full search ends: the next search is full, and sees
    # the other three trials pending.
    tell(0)
    assert memory.follow_up(history_from_observations(SPACE, observations)) is None
    params, record = proposer.propose_with_record(SPACE, observations)
    observations.append(Observation(params, None, TrialState.RUNNING, record=record))
    assert memory.n_finished == 11 and len(memory.pending) == 3
    # One of those ends (a driver filling its slot): the batch is still coming in.
    tell(1)
    assert memory.follow_up(history_from_observations(SPACE, observations)) is not None
    # The memory travels with the proposer, and the copy proposes as the original does.
    copy = pickle.loads(pickle.dumps(proposer))
    assert copy.propose(SPACE, observations) == proposer.propose(SPACE, observations)


def test_mixed_portfolio_with_mes_bore_and_ei_per_second() -> None:
    portfolio = [
        "lcb",
        ExpectedImprovement(xi=0.1),
        MaxValueEntropySearch(n_discretization=128),
        BORENominee(classifier="rf"),
        ExpectedImprovementPerSecond(),
    ]
    proposer = PortfolioProposer(portfolio=portfolio, seed=0, n_startup=5, **FAST)

    observations: list[Observation] = []
    for i in range(14):
        params, record = proposer.propose_with_record(SPACE, observations)
        duration = 1.0 + 5 * params["y"]  # a cost model for EI per second to learn
        observations.append(
            Observation(params, objective(params), record=record, duration=duration)
        )
        assert i < 5 or record
    names = ["lcb", "ei(xi=0.1)", "mes", "bore", "ei_per_second"]
    records = [o.record for o in observations if o.record]
    for record in records:
        assert record["portfolio"] == names and set(record["nominees"]) == set(names)
        assert sum(record["probabilities"]) == pytest.approx(1.0)
        for nominee in record["nominees"].values():
            assert 0 <= nominee["x"] <= 1 and 0 <= nominee["y"] <= 1
    assert len(PortfolioProposer(portfolio=portfolio).reward_table(SPACE, observations).trace) == 9
    assert min(o.value for o in observations) < 0.05


def test_constraints_steer_proposals_to_the_feasible_region() -> None:
    def constrained(params: dict[str, Any]) -> tuple[float, float]:
        x, y = params["x"], params["y"]
        return (x - 0.8) ** 2 + (y - 0.8) ** 2, x + y - 1.0  # optimum 0.18 at (0.5, 0.5)

    proposer = PortfolioProposer(seed=0, n_startup=6, **FAST)
    observations: list[Observation] = []
    for _ in range(22):
        params, record = proposer.propose_with_record(SPACE, observations)
        value, constraint = constrained(params)
        observations.append(Observation(params, value, constraints=(constraint,), record=record))
    feasible = [o.value for o in observations if o.is_feasible]
    assert min(feasible) < 0.25
    assert np.mean([o.is_feasible for o in observations[6:]]) > 0.5  # the model-based ones


def _crashes_outside(params: dict[str, Any]) -> float | None:
    x, y = params["x"], params["y"]
    if x + y > 1.0:  # e.g. out of memory: no value at all
        return None
    return (x - 0.8) ** 2 + (y - 0.8) ** 2  # best 0.18 at (0.5, 0.5), at the crash edge


def _run_with_crashes(seed: int, learn: bool) -> tuple[PortfolioProposer, list[Observation]]:
    # learn=False leaves crashes out of the models (failed_trials="ignore"): a hole in the data.
    failed_trials = "bad" if learn else "ignore"
    proposer = PortfolioProposer(seed=seed, n_startup=6, failed_trials=failed_trials, **FAST)
    observations: list[Observation] = []
    for _ in range(20):
        params, record = proposer.propose_with_record(SPACE, observations)
        value = _crashes_outside(params)
        state = TrialState.COMPLETE if value is not None else TrialState.FAILED
        observations.append(Observation(params, value, state, record=record))
    return proposer, observations


def test_crashes_are_learned_as_binary_feedback() -> None:
    """FAILED observations train a crash classifier that weights every GP member."""
    crashes, best = {True: 0, False: 0}, {True: 0.0, False: 0.0}
    for seed in range(4):
        for learn in (True, False):
            proposer, observations = _run_with_crashes(seed, learn)
            crashes[learn] += sum(o.state == TrialState.FAILED for o in observations[6:])
            best[learn] += min(o.value for o in observations if o.value is not None)
            if learn:
                learned = proposer, history_from_observations(SPACE, observations)
    # Measured: 35 against 39 crashes in 4 x 14 model-based steps. The optimum is on the crash
    # edge: about half the steps there crash either way.
    assert best[True] < best[False]
    assert crashes[True] < crashes[False]
    proposer, history = learned
    models = proposer.model_builder().fit(history, np.random.default_rng(0))
    assert models.crash is not None
    log_pf = feasibility_of(models)(SPACE.features(np.array([[0.9, 0.9], [0.2, 0.2]])))
    assert log_pf[0] < math.log(0.5) < math.log(0.7) < log_pf[1]


def test_single_member_and_zero_eta_skip_the_rewards() -> None:
    for proposer in (
        PortfolioProposer(portfolio=["ei"], seed=0, n_startup=4, **FAST),
        PortfolioProposer(eta=0.0, seed=0, n_startup=4, **FAST),
    ):
        records = [o.record for o in run(proposer, 7) if o.record]
        assert records and all(r["rewards"] is None and r["n_rewards"] == 0 for r in records)
        n = len(records[0]["portfolio"])
        assert all(r["probabilities"] == pytest.approx([1 / n] * n) for r in records)


def test_hyperparameter_marginalisation() -> None:
    pytest.importorskip("bore_samplers.models.hyperparameter_sampling")
    proposer = PortfolioProposer(
        marginalize_hyperparameters=True, n_hyperparameter_samples=3, seed=0, n_startup=4, **FAST
    )
    observations = run(proposer, 7)
    assert all(o.record for o in observations[4:])
    assert proposer.model_builder()._chain_theta is not None  # the chain continues
    # The rewards come from the MAP fit: the same table as without marginalisation.
    np.testing.assert_allclose(
        proposer.reward_table(SPACE, observations).rewards,
        PortfolioProposer().reward_table(SPACE, observations).rewards,
    )


def test_seeds_reproduce_and_pickles_drop_caches() -> None:
    first = run(PortfolioProposer(seed=7, n_startup=4, **FAST), 8)
    proposer = PortfolioProposer(seed=7, n_startup=4, **FAST)
    second = run(proposer, 8)
    assert [o.params for o in first] == [o.params for o in second]
    assert proposer.model_builder()._fits and proposer._event_means
    restored = pickle.loads(pickle.dumps(proposer))
    assert not restored.model_builder()._fits and not restored._event_means
    np.testing.assert_array_equal(
        restored.reward_table(SPACE, second).rewards, proposer.reward_table(SPACE, second).rewards
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(eta=-1.0),
        dict(eta=math.inf),
        dict(memory=1.5),
        dict(portfolio=[]),
        dict(portfolio=["ei", "ucb"]),
        dict(selection="mes"),
        dict(n_candidates=0),
        dict(n_hyperparameter_samples=0),
        dict(n_startup=-1),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        PortfolioProposer(**kwargs).validate()


# ------------------------------------------------------------------------ entropy search portfolio
def test_entropy_selection_takes_the_nominee_with_the_largest_information_gain() -> None:
    proposer = PortfolioProposer(selection="entropy", seed=0, n_startup=4, **FAST)
    observations = run(proposer, 10)
    records = [o.record for o in observations if o.record]
    assert len(records) == 6
    for observation, record in zip(observations[4:], records, strict=True):
        gains = record["information_gains"]
        assert len(gains) == 3 and all(g is not None and g >= 0 for g in gains)
        arm = int(np.argmax(gains))
        assert record["arm"] == record["portfolio"][arm]
        assert record["probabilities"] == [float(i == arm) for i in range(3)]
        assert record["nominees"][record["arm"]] == observation.params
        # The choice does not depend on rewards, so none are computed.
        assert record["rewards"] is None and record["n_rewards"] == 0
    assert min(o.value for o in observations) < 0.1
    # Seeded: the same proposals again.
    again = run(PortfolioProposer(selection="entropy", seed=0, n_startup=4, **FAST), 10)
    assert [o.params for o in again] == [o.params for o in observations]


def test_entropy_selection_on_a_mixed_space_with_pending_points() -> None:
    # The information gain is scored on the nominees' GP features (one-hot categories, encoded
    # integers), not on their unit coordinates: a mixed space is where the two differ.
    space = SearchSpace(
        {
            "x": FloatParam(0.0, 1.0),
            "n": IntParam(1, 8),
            "kind": CategoricalParam(("a", "b", "c")),
        }
    )

    def f(params: dict[str, Any]) -> float:
        return (params["x"] - 0.4) ** 2 + 0.1 * abs(params["n"] - 3) + (params["kind"] != "b")

    proposer = PortfolioProposer(selection="entropy", seed=1, n_startup=4, **FAST)
    observations: list[Observation] = []
    for _ in range(9):
        params, record = proposer.propose_with_record(space, observations)  # errors propagate
        observations.append(Observation(params, f(params), record=record))
    assert all(o.record.get("information_gains") for o in observations[4:])
    pending = Observation(observations[-1].params, None, TrialState.RUNNING)
    params, record = proposer.propose_with_record(space, [*observations[:-1], pending])
    assert record["arm"] in record["portfolio"] and params != pending.params
