"""Inputs that once misled the models without telling the user, each through a real study.

Constraints matched by name, infinite values, extreme scales of the objective, model failures
explained, options checked when a sampler is built, the library's log lines under Optuna's
logger, and, through real Ray Tune runs, a bad ``points_to_evaluate`` and a conflicting mode.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState

from bore_samplers import BORESampler, CMESSampler, PortfolioSampler
from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.models.targets import impute_infinite, standardize
from bore_samplers.observations import Observation, history_from_observations
from bore_samplers.proposers.base import ModelFallbackWarning
from bore_samplers.space import FloatParam, SearchSpace

GP_SAMPLERS: dict[str, Callable[[int], optuna.samplers.BaseSampler]] = {
    "cmes": lambda seed: CMESSampler(seed=seed, n_discretization=256),
    "portfolio": lambda seed: PortfolioSampler(seed=seed),
}
ALL_SAMPLERS = {**GP_SAMPLERS, "bore": lambda seed: BORESampler(seed=seed)}


@pytest.fixture(autouse=True)
def _quiet() -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    yield
    optuna.logging.set_verbosity(optuna.logging.INFO)


# ------------------------------------------------------------------ constraints by name
def test_history_matches_constraints_by_name_and_a_missing_one_is_unknown() -> None:
    space = SearchSpace({"x": FloatParam(0.0, 1.0)})
    observations = [
        Observation({"x": 0.1}, 1.0, constraints={"size": -1.0, "a_memory": 2.0}),
        Observation({"x": 0.2}, 2.0, constraints={"size": 3.0}),  # no a_memory here
        Observation({"x": 0.3}, 3.0, constraints=(-5.0,)),  # legacy list: named "0"
    ]
    history = history_from_observations(space, observations)
    assert history.constraint_names == ["0", "a_memory", "size"]
    expected = [[np.nan, 2.0, -1.0], [np.nan, np.nan, 3.0], [-5.0, np.nan, np.nan]]
    np.testing.assert_array_equal(history.constraints, expected)
    # Feasible means no known constraint violated; an unknown one violates nothing.
    assert history.feasible.tolist() == [False, False, True]


def _optional_constraint_objective(name: str) -> Callable[[optuna.Trial], float]:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", 0.0, 1.0)
        trial.set_constraint("size", x - 0.3)
        if y > 0.5:  # an optional constraint, reported in only part of the space
            trial.set_constraint(name, 0.5 - y)
        return -x - 0.1 * y

    return objective


@pytest.mark.parametrize("name", ["a_memory", "z_memory"])
def test_an_optional_constraint_does_not_shift_the_others(name: str) -> None:
    # Matched by position in sorted-name order, "a_memory" took the column of "size" in the
    # trials that reported it, and the size model learned a mix of the two constraints.
    sampler = CMESSampler(seed=0, n_discretization=256)
    study = optuna.create_study(sampler=sampler)
    study.optimize(_optional_constraint_objective(name), n_trials=14)
    space = SearchSpace({"x": FloatParam(0.0, 1.0), "y": FloatParam(0.0, 1.0)})
    history = history_from_observations(space, sampler.observations(study))
    assert history.constraint_names == sorted(["size", name])
    size = history.constraints[:, history.constraint_names.index("size")]
    memory = history.constraints[:, history.constraint_names.index(name)]
    x, y = np.array([[t.params["x"], t.params["y"]] for t in study.trials]).T
    np.testing.assert_allclose(size, x - 0.3)
    np.testing.assert_allclose(memory[y > 0.5], 0.5 - y[y > 0.5])
    assert np.isnan(memory[y <= 0.5]).all()  # unknown there, so left out of its model
    assert (y > 0.5).any() and (y <= 0.5).any()


# ------------------------------------------------------------------ infinite values
def test_infinite_values_are_imputed_by_rank() -> None:
    values = np.array([1.0, 3.0, np.inf, 2.0, -np.inf])
    imputed = impute_infinite(values)
    assert np.all(np.isfinite(imputed))
    assert imputed[2] > 3.0 and imputed[4] < 1.0
    # A constraint's +inf stays infeasible even when every finite value is feasible.
    assert impute_infinite(np.array([-3.0, -2.0, np.inf]), threshold=0.0)[2] > 0.0
    assert impute_infinite(np.array([np.inf, np.inf]), threshold=0.0).tolist() == [1.0, 1.0]


def _diverges_for_large_x(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    if x > 0.5:
        return math.inf  # a diverged run
    return (x - 0.45) ** 2 + (y - 0.3) ** 2


@pytest.mark.parametrize("sampler", sorted(ALL_SAMPLERS))
def test_an_objective_of_plus_inf_is_learned_and_avoided(sampler: str) -> None:
    # Dropped as unusable, +inf values left a hole that the GPs read as unexplored: cMES
    # proposed there in 15 of 15 trials after the start-up.
    # The optimum (0.45, 0.3) lies next to the diverging half, so proposals straddle the
    # boundary; random search would put half of them beyond it, 15 of the 30 here. (Per seed,
    # the default forest put 2, 6, 1, 2, 3, 3, 3, 2 of 15 there over seeds 0-7, the previous
    # default XGBoost 3, 4, 0, 1, 3, 3, 2, 5: the same rate.)
    diverged = []
    for seed in (0, 1):
        study = optuna.create_study(sampler=ALL_SAMPLERS[sampler](seed))
        study.optimize(_diverges_for_large_x, n_trials=25)
        diverged.append(sum(t.params["x"] > 0.5 for t in study.trials[10:]))
        assert study.best_value < 0.01
    assert sum(diverged) <= 10, diverged


@pytest.mark.parametrize("sampler", sorted(GP_SAMPLERS))
def test_a_constraint_of_plus_inf_is_learned_and_avoided(sampler: str) -> None:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        y = trial.suggest_float("y", 0.0, 1.0)
        trial.set_constraint("memory", math.inf if x > 0.5 else -1.0)  # +inf: out of memory
        return -x + (y - 0.5) ** 2

    # The optimum is on the boundary x = 0.5, so proposals straddle it, but they should not
    # keep going deep into the region where the constraint is +inf. Dropped, those values
    # left the constant -1 of the rest, so the whole space looked feasible: every proposal
    # went to x = 1. (A GP fitted to a step needs a lengthscale prior that resists collapsing
    # onto the step; with it, proposals stay at the boundary.) Constrained EI still pays a
    # PF of a few percent for the large improvement beyond the boundary: Optuna's GPSampler,
    # given a finite step (+1 for x > 0.5), put 6, 9, 6 and 6 of 15 proposals there (seeds
    # 0-3), and 15 of 15 given +inf.
    counts = []
    for seed in range(3):
        study = optuna.create_study(sampler=GP_SAMPLERS[sampler](seed))
        study.optimize(objective, n_trials=25)
        counts.append(sum(t.params["x"] > 0.6 for t in study.trials[10:]))
    assert max(counts) <= 11 and sum(counts) <= 30, counts


# ------------------------------------------------------------------ scale of the objective
def _sphere(params: dict[str, float]) -> float:
    return (params["x"] - 0.3) ** 2 + 2.0 * (params["y"] - 0.6) ** 2


TRANSFORMS: dict[str, Callable[[float], float]] = {
    "f": lambda f: f,
    "1e-15 f": lambda f: 1e-15 * f,
    "1e150 f": lambda f: 1e150 * f,
    "f + 1e6": lambda f: f + 1e6,
}


@pytest.mark.parametrize("sampler", sorted(ALL_SAMPLERS))
def test_proposals_do_not_depend_on_the_units_of_the_objective(sampler: str) -> None:
    distributions = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}
    rng = np.random.default_rng(3)
    configs = [{"x": float(a), "y": float(b)} for a, b in rng.random((14, 2))]

    def next_proposal(transform: Callable[[float], float]) -> dict[str, Any]:
        study = optuna.create_study(sampler=ALL_SAMPLERS[sampler](5))
        for config in configs:
            study.add_trial(
                optuna.trial.create_trial(
                    params=config, distributions=distributions, value=transform(_sphere(config))
                )
            )
        trial = study.ask()
        return {name: trial.suggest_float(name, 0.0, 1.0) for name in distributions}

    with _no_fallback():
        proposals = {name: next_proposal(transform) for name, transform in TRANSFORMS.items()}
    reference = np.array(list(proposals["f"].values()))
    for name, proposal in proposals.items():
        np.testing.assert_allclose(list(proposal.values()), reference, atol=1e-4, err_msg=name)


class _no_fallback:
    """Fail if a model-based proposal falls back (1e150 f once made every trial fall back)."""

    def __enter__(self) -> None:
        import warnings

        self._catcher = warnings.catch_warnings(record=True)
        self._caught = self._catcher.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc: object) -> None:
        self._catcher.__exit__(*exc)
        bad = [
            str(w.message)
            for w in self._caught
            if issubclass(w.category, ModelFallbackWarning | RuntimeWarning)
        ]
        assert not bad, bad


def test_standardised_targets_are_the_same_for_every_scale() -> None:
    values = np.array([0.3, 1.7, 0.1, 5.0, np.inf])
    reference = standardize(values)[0]
    for transform in TRANSFORMS.values():
        scaled = np.array([transform(v) for v in values])
        np.testing.assert_allclose(standardize(scaled)[0], reference, atol=1e-9)


# ------------------------------------------------------------------ fallbacks explained
class _OutOfMemoryClassifier(ProbabilisticClassifier):
    """A classifier whose fit always fails, as a model on a broken machine would."""

    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        seed: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        raise MemoryError("simulated: the classifier ran out of memory")

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        raise AssertionError("never fitted")


@pytest.fixture
def optuna_caplog(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """``caplog`` that also hears Optuna's loggers, which do not propagate to the root."""
    optuna_logger = logging.getLogger("optuna")
    optuna_logger.addHandler(caplog.handler)
    try:
        yield caplog
    finally:
        optuna_logger.removeHandler(caplog.handler)


def test_a_model_failure_is_logged_with_its_cause_every_time(
    optuna_caplog: pytest.LogCaptureFixture,
) -> None:
    caplog = optuna_caplog
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = BORESampler(classifier=_OutOfMemoryClassifier(), n_startup_trials=3, seed=0)
    study = optuna.create_study(sampler=sampler)
    with caplog.at_level(logging.WARNING), pytest.warns(ModelFallbackWarning):
        study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0) ** 2, n_trials=7)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)  # the study goes on
    messages = [r.getMessage() for r in caplog.records]
    fallbacks = [m for m in messages if "could not propose" in m]
    # Under Optuna's logger: optuna.logging.set_verbosity and Optuna's format apply.
    assert {r.name for r in caplog.records if "could not propose" in r.getMessage()} == {
        "optuna.bore_samplers"
    }
    assert len(fallbacks) == 4  # one per model-based trial, not once per process
    assert all("MemoryError: simulated" in m for m in fallbacks)
    assert "4 proposals in a row" in fallbacks[-1]
    # The old message blamed a conditional parameter for every fallback.
    assert not any("conditional or dynamic" in m for m in messages)


def test_log_lines_follow_optunas_verbosity(optuna_caplog: pytest.LogCaptureFixture) -> None:
    caplog = optuna_caplog
    sampler = BORESampler(classifier=_OutOfMemoryClassifier(), n_startup_trials=1, seed=0)
    study = optuna.create_study(sampler=sampler)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    with caplog.at_level(logging.DEBUG), pytest.warns(ModelFallbackWarning):
        study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=3)
    assert not [r for r in caplog.records if "could not propose" in r.getMessage()]


# ------------------------------------------------------------------ options checked early
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(classifier_options={"max_dept": 3}), "max_dept"),
        (dict(classifier_options={"max_depth": -1}), "max_depth"),
        (dict(classifier="rf", classifier_options={"n_estimator": 10}), "n_estimator"),
        (dict(classifier="rf", classifier_options={"max_features": "most"}), "max_features"),
        (dict(gamma=lambda n: 2.0 / n), "gamma schedule fails for n = 1"),
    ],
)
def test_bad_options_fail_when_the_sampler_is_built(kwargs: dict, match: str) -> None:
    # They once surfaced only at the first model-based trial, after which every trial fell
    # back: a whole study of random search (and an unknown XGBoost option was ignored).
    with pytest.raises(ValueError, match=match):
        BORESampler(**kwargs)


@pytest.mark.parametrize(
    "options",
    [
        {"classifier_options": {"max_depth": 3, "max_features": 0.5}},  # the default forest
        {"classifier": "xgboost", "classifier_options": {"max_depth": 3, "reg_lambda": 2.0}},
    ],
)
def test_good_options_run_a_study(options: dict) -> None:
    sampler = BORESampler(**options, n_startup_trials=4, seed=0)
    study = optuna.create_study(sampler=sampler)
    with _no_fallback():
        study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0) ** 2, n_trials=8)
    assert len(study.trials) == 8
