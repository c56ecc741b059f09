"""The log line of a parameter sampled outside the joint space names the real reason.

It once blamed "a conditional or dynamic parameter" for every parameter sampled
independently; now it is written only for a parameter that is really outside the joint
search space: one whose distribution changed (a dynamic range) or one absent from some
finished trials (a conditional parameter). The first trial, the start-up trials and
parameters of a fixed value log nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import optuna
import pytest
from optuna.trial import Trial

from bore_samplers.integrations.optuna import BORESampler

INDEPENDENT = "is sampled independently"


@pytest.fixture
def optuna_caplog(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """``caplog`` that also hears Optuna's loggers, which do not propagate to the root."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna_logger = logging.getLogger("optuna")
    optuna_logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING):
            yield caplog
    finally:
        optuna_logger.removeHandler(caplog.handler)


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if INDEPENDENT in r.getMessage()]


def _study(n_startup_trials: int = 3) -> optuna.Study:
    return optuna.create_study(sampler=BORESampler(n_startup_trials=n_startup_trials, seed=0))


def test_a_changed_range_is_logged_for_that_parameter_only(
    optuna_caplog: pytest.LogCaptureFixture,
) -> None:
    def objective(trial: Trial) -> float:
        high = 5.0 if trial.number < 5 else 10.0  # the range of x widens at trial 5
        x = trial.suggest_float("x", 0.0, high)
        y = trial.suggest_float("y", 0.0, 1.0)
        trial.suggest_float("fixed", 2.0, 2.0)  # a single value: nothing to model
        return x + y

    _study().optimize(objective, n_trials=9)
    lines = _lines(optuna_caplog)
    assert lines, "the dynamic range of x is worth a log line"
    assert all("`x`" in line for line in lines), lines  # not y, not fixed
    assert all("distribution changed" in line for line in lines), lines
    assert not any("conditional" in line for line in lines), lines
    # From the first trial after the change whose x is outside the old joint space.
    assert {line.split("Trial#")[1].split(" ")[0] for line in lines} <= {"5", "6", "7", "8"}


def test_a_conditional_parameter_is_logged_as_absent_from_some_trials(
    optuna_caplog: pytest.LogCaptureFixture,
) -> None:
    def objective(trial: Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number % 2:
            x += trial.suggest_float("extra", 0.0, 1.0)
        return x

    _study().optimize(objective, n_trials=8)
    lines = _lines(optuna_caplog)
    assert lines
    assert all("`extra`" in line for line in lines), lines
    assert all("absent from" in line and "conditional" in line for line in lines), lines
    assert "absent from 2 of the 3 finished trials" in lines[0]


def test_the_first_and_the_start_up_trials_log_nothing(
    optuna_caplog: pytest.LogCaptureFixture,
) -> None:
    def objective(trial: Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number % 2:
            x += trial.suggest_float("extra", 0.0, 1.0)
        return x

    _study(n_startup_trials=10).optimize(objective, n_trials=6)
    assert _lines(optuna_caplog) == []


def test_a_steady_study_logs_nothing(optuna_caplog: pytest.LogCaptureFixture) -> None:
    def objective(trial: Trial) -> float:
        return trial.suggest_float("x", 0.0, 1.0) + trial.suggest_int("n", 1, 4)

    _study().optimize(objective, n_trials=8)
    assert _lines(optuna_caplog) == []


def test_warn_independent_sampling_false_silences_it(
    optuna_caplog: pytest.LogCaptureFixture,
) -> None:
    def objective(trial: Trial) -> float:
        return trial.suggest_float("x", 0.0, 1.0 + trial.number)  # a new range every trial

    sampler = BORESampler(n_startup_trials=2, seed=0, warn_independent_sampling=False)
    optuna.create_study(sampler=sampler).optimize(objective, n_trials=5)
    assert _lines(optuna_caplog) == []
