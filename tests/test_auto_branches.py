"""AutoSampler's branch parameters (conditional spaces) proposed group by group by a model."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import optuna
import pytest

from bore_samplers import AutoSampler
from bore_samplers.acquisitions.base import Acquisition, OnUnitCube
from bore_samplers.integrations.auto import AUTO_BRANCH_KEY
from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.auto import MEMBERS
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.branches import (
    BranchProposer,
    UnionSpace,
    branch_context,
    branch_group,
    branch_observations,
    ranges_changed,
    union_conditions,
    union_proposal,
)
from bore_samplers.proposers.portfolio import PortfolioProposer
from bore_samplers.space import CategoricalParam, FloatParam, IntParam

N_STARTUP = 4


class _FeatureSum(Acquisition):
    """The sum of the features: gradient 1 with respect to each."""

    def evaluate(self, X: np.ndarray, with_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        return X.sum(axis=1), np.ones_like(X) if with_grad else None


class _UnionGP(AutoSampler):
    _branch_route = "union-gp"


def _conditional(t: optuna.Trial) -> float:
    x = t.suggest_float("x", -1, 1)
    if t.suggest_categorical("model", ["a", "b"]) == "a":
        rate = t.suggest_float("rate", 1e-4, 1.0, log=True)
        width = t.suggest_int("width", 2, 20, step=3)
        return x**2 + (math.log10(rate) + 2) ** 2 + (width - 11) ** 2 / 50
    kind = t.suggest_categorical("kind", ["p", "q", "r"])
    depth = t.suggest_int("depth", 1, 64, log=True)
    return x**2 + 0.5 + {"p": 0.3, "q": 0.0, "r": 0.6}[kind] + abs(math.log2(depth) - 3) / 4


def _study(sampler: AutoSampler, n_trials: int, n_jobs: int = 1) -> optuna.Study:
    study = optuna.create_study(sampler=sampler)
    study.optimize(_conditional, n_trials=n_trials, n_jobs=n_jobs)
    return study


def test_branch_groups_are_proposed_jointly_by_a_member_with_valid_values() -> None:
    study = _study(AutoSampler(seed=0, n_startup_trials=N_STARTUP), n_trials=30)
    groups = [g for t in study.trials for g in t.system_attrs.get(AUTO_BRANCH_KEY, [])]
    proposed = {tuple(g["params"]) for g in groups}  # the better branch at least
    assert ("rate", "width") in proposed and proposed <= {("rate", "width"), ("depth", "kind")}
    assert all(g["proposer"] in MEMBERS for g in groups)
    for trial in study.trials:
        params = trial.params
        if params["model"] == "a":
            assert 1e-4 <= params["rate"] <= 1.0
            assert params["width"] in range(2, 21, 3)
        else:
            assert params["kind"] in ("p", "q", "r")
            assert 1 <= params["depth"] <= 64 and isinstance(params["depth"], int)
    # Before a group has 5 finished trials in its branch TPE draws it, and no start-up trial
    # is proposed by the model.
    first = next(t for t in study.trials if AUTO_BRANCH_KEY in t.system_attrs)
    earlier = study.trials[: first.number]
    assert len(earlier) >= N_STARTUP
    assert sum(t.params["model"] == first.params["model"] for t in earlier) >= 5


def test_the_union_gp_route_proposes_every_branch_with_valid_values() -> None:
    study = _study(_UnionGP(seed=0, n_startup_trials=N_STARTUP), n_trials=25)
    assert {t.system_attrs["bore_samplers:auto_proposer"] for t in study.trials[N_STARTUP:]} == {
        "union"
    }
    for trial in study.trials:
        params = trial.params
        if params["model"] == "a":
            assert set(params) == {"x", "model", "rate", "width"}
            assert 1e-4 <= params["rate"] <= 1.0 and params["width"] in range(2, 21, 3)
        else:
            assert set(params) == {"x", "model", "kind", "depth"}
            assert params["kind"] in "pqr" and 1 <= params["depth"] <= 64
    copy = pickle.loads(pickle.dumps(study.sampler))
    assert copy._union_proposer is not None


def test_two_threads_on_the_union_route_never_propose_a_running_configuration() -> None:
    study = _study(_UnionGP(seed=0, n_startup_trials=N_STARTUP), n_trials=24, n_jobs=2)
    # A finished configuration may be proposed again (the GP's choice); a running one, which
    # is a pending point, never. A trial started before the other completed saw it running.
    for earlier, trial in itertools.combinations(study.trials, 2):
        if trial.params == earlier.params:
            assert trial.datetime_start >= earlier.datetime_complete, (earlier, trial)


def test_the_default_tpe_route_records_no_model_group() -> None:
    class TPEBranches(AutoSampler):
        _branch_route = "tpe"

    study = _study(TPEBranches(seed=0, n_startup_trials=N_STARTUP), n_trials=16)
    assert not any(AUTO_BRANCH_KEY in t.system_attrs for t in study.trials)


def test_seed_reproduces_and_pickled_samplers_continue_identically() -> None:
    studies = [_study(AutoSampler(seed=3, n_startup_trials=N_STARTUP), 20) for _ in range(2)]
    assert [t.params for t in studies[0].trials] == [t.params for t in studies[1].trials]

    sampler = AutoSampler(seed=1, n_startup_trials=N_STARTUP)
    study = _study(sampler, n_trials=16)
    twin = optuna.create_study(sampler=pickle.loads(pickle.dumps(sampler)))
    for trial in study.trials:
        twin.add_trial(trial)
    study.optimize(_conditional, n_trials=3)
    twin.optimize(_conditional, n_trials=3)
    assert [t.params for t in study.trials[-3:]] == [t.params for t in twin.trials[-3:]]


def test_two_threads_never_propose_the_same_configuration() -> None:
    study = _study(AutoSampler(seed=0, n_startup_trials=N_STARTUP), n_trials=30, n_jobs=2)
    configurations = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(configurations)) == len(configurations)
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)


def test_a_branch_range_that_changes_is_left_to_tpe() -> None:
    def objective(t: optuna.Trial) -> float:
        x = t.suggest_float("x", 0, 1)
        if t.suggest_categorical("branch", ["a", "b"]) == "a":
            return x + t.suggest_float("u", 0, 1 + t.number // 12)  # a range that grows
        return x + 0.5

    study = optuna.create_study(sampler=AutoSampler(seed=0, n_startup_trials=N_STARTUP))
    study.optimize(objective, n_trials=30)
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)


def test_several_objectives_constraints_and_crashes_keep_the_branch_models() -> None:
    def objective(t: optuna.Trial) -> tuple[float, float]:
        value = _conditional(t)
        if t.params["model"] == "b" and t.params["kind"] == "r" and t.number % 3 == 0:
            raise RuntimeError("a crash in one branch")
        t.set_constraint("x", t.params["x"] - 0.8)
        return value, abs(t.params["x"])

    study = optuna.create_study(
        sampler=AutoSampler(seed=0, n_startup_trials=N_STARTUP), directions=["minimize"] * 2
    )
    study.optimize(objective, n_trials=24, catch=(RuntimeError,))
    assert any(AUTO_BRANCH_KEY in t.system_attrs for t in study.trials)
    assert len(study.trials) == 24


# ------------------------------------------------------------------ the framework-free core
def _observation(params: dict, state: TrialState = TrialState.COMPLETE) -> Observation:
    value = None if state is TrialState.RUNNING else 1.0
    return Observation(params, value, state)


def test_a_group_is_what_every_trial_with_the_parameter_has_less_what_is_set() -> None:
    observations = [
        _observation({"model": "svm", "C": 1.0, "kernel": "rbf"}),
        _observation({"model": "svm", "C": 2.0, "kernel": "poly", "degree": 3}),
        _observation({"model": "forest", "depth": 3}),
        _observation(
            {"model": "svm", "C": 3.0, "kernel": "poly", "degree": 2, "new": 1}, TrialState.RUNNING
        ),
    ]
    assert branch_group("C", observations, {"model"}) == ("C", "kernel")
    assert branch_group("degree", observations, {"model", "C", "kernel"}) == ("degree",)
    assert branch_group("absent", observations, ()) == ()
    kept = branch_observations(observations, ("degree",), {"kernel": "poly"})
    assert [o.params for o in kept] == [{"degree": 3}, {"degree": 2}]
    assert kept[1].state is TrialState.RUNNING


def test_the_context_is_the_categorical_choices_and_ranges_must_stay() -> None:
    ranges = {
        "model": CategoricalParam(("svm", "forest")),
        "fixed": CategoricalParam(("only",)),
        "rate": FloatParam(0.0, 1.0),
        "other": CategoricalParam(("a", "b")),
    }
    params = {"model": "svm", "fixed": "only", "rate": 0.5, "other": "a"}
    common = {"model", "fixed", "rate", "C"}
    assert branch_context(params, ranges, common) == {"model": "svm"}
    earlier = [{"C": FloatParam(0.0, 1.0)}, {"C": FloatParam(0.0, 2.0)}]
    assert ranges_changed(["C"], {"C": FloatParam(0.0, 2.0)}, earlier)
    assert not ranges_changed(["C"], {"C": FloatParam(0.0, 2.0)}, earlier[1:])


def test_the_union_space_imputes_inactive_parameters_as_its_observations_show() -> None:
    ranges = {
        "layers": IntParam(1, 2),
        "rate": FloatParam(0.0, 1.0),
        "width": FloatParam(0.0, 1.0),
        "kind": CategoricalParam(("p", "q")),
    }
    rng = np.random.default_rng(0)
    observations = []
    for layers in (1, 2) * 6:
        params = {"layers": layers, "rate": rng.uniform()}
        if layers == 2:
            params |= {"width": rng.uniform(), "kind": str(rng.choice(["p", "q"]))}
        observations.append(_observation(params))
    conditions = union_conditions(observations, ranges)
    assert conditions == {n: ("layers", frozenset({2})) for n in ("width", "kind")}
    space = UnionSpace(ranges, conditions)
    u = space.encode(
        [{"layers": layers, "rate": 0.5, "width": 0.5, "kind": "q"} for layers in (1, 2)]
    )
    # Inactive (one layer): width -1, kind a level of its own (no one-hot column set).
    assert space.features(u)[:, 2:].tolist() == [[-1.0, 0.0, 0.0], [0.5, 0.0, 1.0]]
    # Where they are inactive their values are the placeholder's: one configuration.
    other = space.encode([{"layers": 1, "rate": 0.5, "width": 0.1, "kind": "p"}])
    placeholder = space.encode([{**space.placeholder, "layers": 1, "rate": 0.5}])
    assert np.array_equal(space.snap(other), placeholder)
    assert np.array_equal(space.snap(u[:1]), placeholder)
    assert np.array_equal(space.snap(u[1:]), u[1:])
    # An inactive coordinate does not reach the features: a score's gradient there is 0.
    assert space.inactive_coordinates(u).tolist() == [[False, False, True, True], [False] * 4]
    score = OnUnitCube(_FeatureSum(), space)
    assert score.value_and_grad(u)[1][:, 1:3].tolist() == [[1.0, 0.0], [1.0, 1.0]]
    for proposer in (BOREProposer(n_startup=1, seed=0), PortfolioProposer(n_startup=1, seed=0)):
        proposal = union_proposal(proposer, ranges, observations)
        assert set(proposal.params) == set(ranges)
        if proposal.params["layers"] == 1:  # inactive parameters at the placeholder's values
            assert proposal.params["width"] == space.placeholder["width"]
    # A parameter some observations lack with no parent telling where: no union model.
    observations.append(_observation({"layers": 1, "rate": 0.5, "width": 0.5}))
    assert union_conditions(observations, ranges) is None
    assert union_proposal(BOREProposer(seed=0), ranges, observations) is None


def test_bad_branch_options_name_the_option() -> None:
    with pytest.raises(ValueError, match="min_trials"):
        BranchProposer(min_trials=0).validate()
