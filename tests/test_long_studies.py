"""Long studies: GPs fitted on a bounded subset, a bounded model cache, capped reward events."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bore_samplers.models import model_set
from bore_samplers.models.model_set import FitPolicy, ModelSetBuilder, fit_rows
from bore_samplers.observations import Observation, TrialState, history_from_observations
from bore_samplers.proposers.binary import BinaryOutcomeProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio import proposer as portfolio_module
from bore_samplers.proposers.portfolio.proposer import PortfolioProposer
from bore_samplers.space import FloatParam, IntParam, SearchSpace

# 15 x 15 = 225 configurations: with 200 evaluated, a proposal that ignored the rows left out
# of the fit would land on an evaluated one often.
GRID = SearchSpace({"a": IntParam(0, 14), "b": IntParam(0, 14)})
FAST: dict[str, Any] = dict(n_candidates=256, n_restarts=2, seed=0)


def _grid_observations(n: int, binary: bool = False) -> list[Observation]:
    rng = np.random.default_rng(0)
    cells = rng.permutation(225)[:n]
    observations = []
    for k, cell in enumerate(cells):
        a, b = divmod(int(cell), 15)
        value = (a - 4) ** 2 + (b - 9) ** 2 + rng.normal()
        if binary:
            value = float(value > 20)
        state = TrialState.FAILED if k % 17 == 3 else TrialState.COMPLETE
        value = None if state is TrialState.FAILED else value
        observations.append(Observation({"a": a, "b": b}, value, state=state))
    return observations


def _fitted_rows(builder: ModelSetBuilder) -> list[int]:
    return [len(model.X_train_) for _, model in builder._fits.values()]


def test_fit_rows_keeps_the_best_the_latest_and_the_pending_rows() -> None:
    space = SearchSpace({f"x{i}": FloatParam(0.0, 1.0) for i in range(3)})
    rng = np.random.default_rng(1)
    u = rng.random((500, 3))
    values = np.sum((u - 0.3) ** 2, axis=1)
    observations = [
        Observation(dict(zip(space.names, map(float, x), strict=True)), float(v))
        for x, v in zip(u, values, strict=True)
    ]
    observations += [Observation({"x0": 0.5, "x1": 0.5, "x2": 0.5}, state=TrialState.RUNNING)]
    history = history_from_observations(space, observations)
    assert fit_rows(history, 500) is None  # 500 labelled rows fit: nothing left out
    rows = fit_rows(history, 80)
    assert rows is not None
    np.testing.assert_array_equal(rows, fit_rows(history, 80))  # deterministic
    assert np.all(np.diff(rows) > 0)
    assert 500 in rows  # the pending row
    labelled = rows[rows < 500]
    assert len(labelled) == 80
    best = np.argsort(values)[:20]
    assert set(best) <= set(labelled)
    assert {496, 497, 498, 499} <= set(labelled)  # the latest
    # The rest covers the cube: every point lies near a kept one.
    kept = history.u[labelled]
    gaps = np.min(np.linalg.norm(history.u[:500, None] - kept[None], axis=2), axis=1)
    assert gaps.max() < 0.45


@pytest.mark.parametrize(
    "make",
    [
        lambda: CMESProposer(**FAST),
        lambda: PortfolioProposer(**FAST),
        lambda: BinaryOutcomeProposer(**FAST),
    ],
    ids=["cmes", "portfolio", "binary"],
)
def test_gp_proposers_fit_at_most_n_max_rows_and_avoid_every_evaluated_point(
    make: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_set, "N_MAX_FIT", 40)
    proposer = make()
    binary = isinstance(proposer, BinaryOutcomeProposer)
    observations = _grid_observations(200, binary=binary)
    evaluated = {(o.params["a"], o.params["b"]) for o in observations}
    for _ in range(4):
        params = proposer.propose(GRID, observations)
        config = (params["a"], params["b"])
        assert config not in evaluated
        # The proposal is pending while the next one is asked for: that one avoids it too.
        observations.append(Observation(params, state=TrialState.RUNNING))
        evaluated.add(config)
        rows = _fitted_rows(proposer.model_builder())
        assert rows and max(rows) <= 40


def test_the_model_cache_stays_under_its_byte_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_set, "MAX_CACHED_BYTES", 2 * 2**20)
    space = SearchSpace({f"x{i}": FloatParam(0.0, 1.0) for i in range(3)})
    rng = np.random.default_rng(2)
    observations = []
    for x in rng.random((400, 3)):
        params = dict(zip(space.names, map(float, x), strict=True))
        constraints = {"c": float(x[0] - 0.6), "d": float(x[1] - 0.8)}
        state = TrialState.FAILED if x[2] > 0.9 else TrialState.COMPLETE
        value = None if state is TrialState.FAILED else float(np.sum((x - 0.3) ** 2))
        observations.append(Observation(params, value, state=state, constraints=constraints))
    proposer = CMESProposer(**{**FAST, "n_discretization": 200})
    proposer._builder = ModelSetBuilder(FitPolicy(max_fit_rows=150))
    for _ in range(6):
        params = proposer.propose(space, observations)
        x = np.array([params[name] for name in space.names])
        observations.append(
            Observation(
                params, float(np.sum((x - 0.3) ** 2)), constraints={"c": x[0] - 0.6, "d": 0.0}
            )
        )
        builder = proposer.model_builder()
        # One fit per role (objective, two constraints, crash), each on at most 150 rows.
        assert set(builder._fits) <= {"objective", "constraint:c", "constraint:d", "crash"}
        assert max(_fitted_rows(builder)) <= 150
        assert 0 < builder.cache_nbytes() <= model_set.MAX_CACHED_BYTES


def test_a_fit_larger_than_the_byte_bound_is_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_set, "MAX_CACHED_BYTES", 2**20)
    space = SearchSpace({"x": FloatParam(0.0, 1.0)})
    u = np.linspace(0.0, 1.0, 400)[:, None]  # a 400 x 400 Cholesky factor: 1.3 MB
    builder = ModelSetBuilder(FitPolicy(max_fit_rows=None))
    builder.fit_regressor(space, "objective", u, np.sin(6 * u[:, 0]), np.random.default_rng(0))
    assert builder.cache_nbytes() == 0
    builder.fit_regressor(space, "small", u[:50], u[:50, 0], np.random.default_rng(0))
    assert 0 < builder.cache_nbytes() <= 2**20


def test_rewards_fold_in_only_the_latest_events(monkeypatch: pytest.MonkeyPatch) -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    proposer = PortfolioProposer(**FAST)
    observations: list[Observation] = []
    for _ in range(14):
        params, record = proposer.propose_with_record(space, observations)
        value = (params["x"] - 0.3) ** 2 + (params["y"] - 0.7) ** 2
        observations.append(Observation(params, value, record=record))
    full = proposer.reward_table(space, observations)
    n_events = len(full.event_rows)
    assert n_events >= 6
    monkeypatch.setattr(portfolio_module, "MAX_REWARD_EVENTS", 4)
    capped = proposer.reward_table(space, observations)
    assert capped.event_rows == full.event_rows[-4:]
    # The latest events, replayed from G = 0: the same update as the full table's.
    rewards = np.zeros(len(full.names))
    for row in full.event_rows[-4:]:
        k = full.event_rows.index(row)
        previous = full.trace[k - 1] if k else np.zeros(len(full.names))
        means = proposer.memory * previous - full.trace[k]
        rewards = proposer.memory * rewards - means
    np.testing.assert_allclose(capped.rewards, rewards)


def test_a_large_full_fit_scouts_on_a_subset_and_matches_a_direct_fit() -> None:
    from bore_samplers.models.gp_regression import GaussianProcessRegressor

    rng = np.random.default_rng(0)
    space = SearchSpace({f"x{i}": FloatParam(0.0, 1.0) for i in range(4)})
    u = rng.uniform(size=(model_set.SCOUT_ROWS + 200, 4))
    values = np.sin(6 * u[:, 0]) + u[:, 1] ** 2 + 0.1 * u[:, 2] + 0.01 * rng.normal(size=len(u))
    gp, _, _ = ModelSetBuilder(FitPolicy(warm_start=False)).fit_regressor(
        space, "objective", u, values, rng
    )
    direct = GaussianProcessRegressor(
        space.feature_columns(), n_restarts=2, seed=0, mean=gp.mean
    ).fit(gp.X_train_, gp.y_train_)

    def log_posterior(model: GaussianProcessRegressor) -> float:
        return direct._log_posterior(model.theta_, with_prior=True)[0]

    # The scouted fit reaches the direct fit's optimum.
    assert log_posterior(gp) >= log_posterior(direct) - 1.0
