"""``constraints_func``, deprecated by Optuna 5.0 but accepted by its samplers, on ours.

A study whose sampler has a ``constraints_func`` must behave like one whose objective calls
``trial.set_constraint``: the sampler sees the same constraint values, and (same seed, same
values under the same names) proposes the same trials.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import optuna
import pytest
from optuna.samplers import TPESampler
from optuna.trial import FrozenTrial, Trial

from bore_samplers.integrations.binary import BinaryOutcomeSampler
from bore_samplers.integrations.optuna import BORESampler, CMESSampler, PortfolioSampler

optuna.logging.set_verbosity(optuna.logging.WARNING)

GP_FAST: dict[str, Any] = dict(n_candidates=128, n_restarts=2)
SAMPLERS: dict[str, Callable[..., optuna.samplers.BaseSampler]] = {
    "bore": lambda **kw: BORESampler(n_startup_trials=3, seed=0, **kw),
    "cmes": lambda **kw: CMESSampler(
        n_startup_trials=3, seed=0, n_discretization=64, **GP_FAST, **kw
    ),
    "portfolio": lambda **kw: PortfolioSampler(n_startup_trials=3, seed=0, **GP_FAST, **kw),
    "binary": lambda **kw: BinaryOutcomeSampler(n_startup_trials=3, seed=0, **GP_FAST, **kw),
}
N_TRIALS = 6


def _constraint(x: float) -> float:
    return x - 0.5  # feasible iff x <= 0.5


def _objective(binary: bool) -> Callable[[Trial], float]:
    def objective(trial: Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        return float(x > 0.3) if binary else (x - 0.7) ** 2

    return objective


def _with_set_constraint(binary: bool) -> Callable[[Trial], float]:
    inner = _objective(binary)

    def objective(trial: Trial) -> float:
        value = inner(trial)
        trial.set_constraint("0", _constraint(trial.params["x"]))  # the name Optuna gives it
        return value

    return objective


def _from_frozen(trial: FrozenTrial) -> list[float]:
    return [_constraint(trial.params["x"])]


def _optuna_warning() -> str:
    with pytest.warns(FutureWarning) as caught:
        TPESampler(constraints_func=_from_frozen)
    return str(caught[0].message)


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_constraints_func_works_like_set_constraint(name: str) -> None:
    binary = name == "binary"
    with pytest.warns(FutureWarning) as caught:
        old_style = SAMPLERS[name](constraints_func=_from_frozen)
    assert [str(w.message) for w in caught] == [_optuna_warning()]
    assert "`constraints_func` has been deprecated in v5.0.0" in str(caught[0].message)
    old_study = optuna.create_study(sampler=old_style)
    old_study.optimize(_objective(binary), n_trials=N_TRIALS)

    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecation without the argument
        new_style = SAMPLERS[name]()
    new_study = optuna.create_study(sampler=new_style)
    new_study.optimize(_with_set_constraint(binary), n_trials=N_TRIALS)

    for study, sampler in ((old_study, old_style), (new_study, new_style)):
        seen = [o.constraints for o in sampler.observations(study)]
        expected = [{"0": _constraint(t.params["x"])} for t in study.trials]
        # One approx per record: pytest 9's approx takes no nested structures.
        assert seen == [pytest.approx(record) for record in expected]
        assert [t.constraints for t in study.trials] == expected
    # The same values under the same names: the same proposals, model-based ones included.
    assert [t.params for t in old_study.trials] == [t.params for t in new_study.trials]


def test_constraints_func_is_stored_where_optuna_stores_it() -> None:
    with pytest.warns(FutureWarning):
        sampler = BORESampler(n_startup_trials=2, seed=0, constraints_func=_from_frozen)
    study = optuna.create_study(sampler=sampler)
    study.optimize(_objective(False), n_trials=3)
    for trial in study.trials:
        assert trial.system_attrs["constraints"] == (_constraint(trial.params["x"]),)


def test_constraints_func_is_not_called_for_failed_trials() -> None:
    # As Optuna's samplers: only COMPLETE and PRUNED trials get constraint values.
    calls: list[int] = []

    def constraints(trial: FrozenTrial) -> list[float]:
        calls.append(trial.number)
        return [0.0]

    def objective(trial: Trial) -> float:
        trial.suggest_float("x", 0.0, 1.0)
        if trial.number == 1:
            raise RuntimeError("crash")
        return 0.0

    with pytest.warns(FutureWarning):
        sampler = BORESampler(n_startup_trials=5, seed=0, constraints_func=constraints)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=3, catch=(RuntimeError,))
    assert calls == [0, 2]
