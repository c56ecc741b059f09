"""CMESSampler in real Optuna studies: real-valued and binary feedback, baselines, asks."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Iterator

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState

from bore_samplers import CMESSampler
from bore_samplers.acquisitions.feasibility import (
    CONFIDENT_FEASIBILITY,
    INFEASIBLE_STREAK,
    LogProbabilityOfFeasibility,
    infeasible_streak,
)
from bore_samplers.observations import Observation, history_from_observations
from bore_samplers.observations import TrialState as CoreState
from bore_samplers.proposers import cmes as cmes_module
from bore_samplers.proposers.base import ModelFallbackWarning
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.space import FloatParam, SearchSpace

optuna.logging.set_verbosity(optuna.logging.WARNING)

# Small y* discretisation keeps the tests fast; the default is the paper's 2000 Sobol points.
FAST = dict(n_startup_trials=6, n_discretization=128)


@pytest.fixture(autouse=True)
def _no_model_fallback() -> Iterator[None]:
    # A silent fallback to independent sampling would make every test below vacuous.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        yield


def _objective(x: float, y: float) -> float:
    return (x - 0.8) ** 2 + (y - 0.8) ** 2  # unconstrained optimum infeasible


def real_valued(trial: optuna.Trial) -> float:
    x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
    trial.set_constraint("budget", x + y - 1.0)  # feasible iff x + y <= 1; optimum (0.5, 0.5)
    return _objective(x, y)


def crashes_when_infeasible(trial: optuna.Trial) -> float:
    x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
    if x + y > 1.0:
        raise MemoryError("model too large")
    return _objective(x, y)


def _best_feasible(study: optuna.Study) -> float:
    feasible = [
        t.value
        for t in study.trials
        if t.state == TrialState.COMPLETE and all(v <= 0 for v in t.constraints.values())
    ]
    return min(feasible)


# The constrained optimum is 0.18. Quality bars for cMES and cEI; the AP heuristic is a
# benchmark baseline and only has to run correctly.
QUALITY = {"cmes": 0.25, "cei": 0.25, "ap": 2.0}


@pytest.mark.parametrize("acquisition", ["cmes", "cei", "ap"])
def test_real_valued_constraint(acquisition: str) -> None:
    study = optuna.create_study(sampler=CMESSampler(acquisition=acquisition, seed=0, **FAST))
    study.optimize(real_valued, n_trials=25)
    assert _best_feasible(study) < QUALITY[acquisition]
    assert study.best_trial.constraints["budget"] <= 0


@pytest.mark.parametrize("acquisition", ["cmes", "cei", "ap"])
def test_binary_feedback_from_failed_trials(acquisition: str) -> None:
    study = optuna.create_study(sampler=CMESSampler(acquisition=acquisition, seed=0, **FAST))
    study.optimize(crashes_when_infeasible, n_trials=25, catch=(MemoryError,))
    states = [t.state for t in study.trials]
    assert TrialState.FAIL in states
    assert _best_feasible(study) < QUALITY[acquisition] + 0.1


def test_both_feedback_types_at_once() -> None:
    def objective(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        if x > 0.9:
            raise MemoryError("crash")
        trial.set_constraint("budget", x + y - 1.0)
        return _objective(x, y)

    study = optuna.create_study(sampler=CMESSampler(seed=1, **FAST))
    study.optimize(objective, n_trials=18, catch=(MemoryError,))
    assert _best_feasible(study) < 0.3


def test_no_feasible_point_yet_focuses_on_feasibility() -> None:
    """Every observation infeasible: the proposal maximises log PF alone (Gardner et al.'s rule;
    the information about y* spreads over the whole uncertain boundary)."""
    space = SearchSpace({"x": FloatParam(0.0, 1.0)})
    observations = [
        Observation({"x": x}, -x, CoreState.COMPLETE, (x - 0.15,))  # feasible iff x <= 0.15
        for x in np.linspace(0.35, 1.0, 8)
    ]
    proposer = CMESProposer(seed=0, n_startup=4, n_discretization=128)
    history = history_from_observations(space, observations)
    models = proposer.model_builder().fit(history, np.random.default_rng(0))
    assert models.has_objective and not models.incumbents  # no feasible point, no incumbent
    assert isinstance(proposer._acquisition(models), LogProbabilityOfFeasibility)
    proposal = proposer.propose(space, observations)
    assert proposal["x"] < 0.35  # towards the unexplored, likely feasible side


@pytest.mark.parametrize("streak", [True, False])
def test_after_an_infeasible_streak_cmes_proposes_by_floored_constrained_ei(
    streak: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A feasible trial, then INFEASIBLE_STREAK infeasible ones: the entropy search hands the
    proposal to constrained EI with its floor on PF, which stays on the feasible side."""
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    points = [(0.2, 0.3), (0.9, 0.1), (0.1, 0.1), (0.4, 0.2), (0.7, 0.6), (0.9, 0.9), (0.6, 0.8)]
    if not streak:
        points.append((0.3, 0.3))
    observations = [
        Observation({"x": x, "y": y}, _objective(x, y), CoreState.COMPLETE, (x + y - 1.0,))
        for x, y in points
    ]
    history = history_from_observations(space, observations)
    assert (infeasible_streak(history) >= INFEASIBLE_STREAK) == streak
    built = []
    monkeypatch.setattr(
        cmes_module, "constrained_mes", _recorded(cmes_module.constrained_mes, built, "mes")
    )
    monkeypatch.setattr(
        cmes_module, "constrained_log_ei", _recorded(cmes_module.constrained_log_ei, built, "cei")
    )
    proposal = CMESProposer(seed=0, n_startup=4, n_discretization=128).propose(space, observations)
    assert built[0][0] == ("cei" if streak else "mes")
    if streak:
        feasibility = built[0][1].terms[-1]
        assert feasibility.min_probability == CONFIDENT_FEASIBILITY
        assert proposal["x"] + proposal["y"] <= 1.0


def _recorded(function, calls: list, name: str):
    def wrapper(*args, **kwargs):
        acquisition = function(*args, **kwargs)
        calls.append((name, acquisition))
        return acquisition

    return wrapper


def test_eight_simultaneous_asks_are_distinct() -> None:
    study = optuna.create_study(sampler=CMESSampler(seed=0, **FAST))
    study.optimize(real_valued, n_trials=10)
    points = []
    for _ in range(8):
        trial = study.ask()
        points.append((trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)))
    points = np.array(points)
    gaps = np.linalg.norm(points[:, None] - points[None], axis=-1)[np.triu_indices(8, 1)]
    assert gaps.min() > 1e-3, points


def test_seeded_runs_reproduce_and_pickle() -> None:
    runs = []
    for _ in range(2):
        study = optuna.create_study(sampler=CMESSampler(seed=5, **FAST))
        study.optimize(real_valued, n_trials=9)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]
    restored = pickle.loads(pickle.dumps(study.sampler))
    study.sampler = restored
    study.optimize(real_valued, n_trials=2)
    assert len(study.trials) == 11


def test_n_jobs_two_threads() -> None:
    study = optuna.create_study(sampler=CMESSampler(seed=0, **FAST))
    study.optimize(real_valued, n_trials=14, n_jobs=2)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    params = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(params)) == len(params)


def test_bad_settings_are_refused() -> None:
    # Multi-objective studies are accepted: tests/test_multi_objective_studies.py.
    for bad in (dict(acquisition="pesc"), dict(y_star_sampler="gumbel"), dict(ap_percentile=10)):
        with pytest.raises(ValueError):
            CMESSampler(**bad)


@pytest.mark.parametrize("acquisition", ["cmes", "cei"])
def test_hyperparameter_marginalisation_proposes_valid_points(acquisition: str) -> None:
    sampler = CMESSampler(
        acquisition=acquisition,
        marginalize_hyperparameters=True,
        n_hyperparameter_samples=3,
        n_discretization=64,
        n_startup_trials=5,
        seed=0,
    )
    study = optuna.create_study(sampler=sampler)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelFallbackWarning)
        study.optimize(
            lambda t: (t.suggest_float("x", -2, 2) - 1) ** 2 + t.suggest_int("k", 0, 4), 12
        )
    assert len(study.trials) == 12 and study.best_value < 2.0
    # The slice-sampling chain continues from one proposal to the next.
    assert sampler.proposer.model_builder()._chain_theta is not None
