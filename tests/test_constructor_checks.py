"""The constructor surface of every public sampler and searcher.

* Every option is an explicit keyword argument, with the proposer's default, documented in
  the class's docstring (copied from the proposer, written once).
* A misspelt keyword is a ``TypeError`` naming the class and the nearest option.
* Every bad value fails in the constructor, with a message naming the public option.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pydoc
import re
from typing import Any

import pytest
from optuna.samplers import RandomSampler

from bore_samplers.proposers.auto import AutoProposer
from bore_samplers.proposers.binary import BinaryOutcomeProposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.options import RENAMED, parameter_entries
from bore_samplers.proposers.portfolio import PortfolioProposer
from bore_samplers.proposers.preferential import PreferentialProposer

pytest.importorskip("ray")
pytest.importorskip("optuna_dashboard")

#: Public class -> (module, its proposer, whether it is an Optuna sampler).
CLASSES: dict[str, tuple[str, type, bool]] = {
    "AutoSampler": ("bore_samplers.integrations.auto", AutoProposer, True),
    "AutoSearch": ("bore_samplers.integrations.ray", AutoProposer, False),
    "BORESampler": ("bore_samplers.integrations.optuna", BOREProposer, True),
    "CMESSampler": ("bore_samplers.integrations.optuna", CMESProposer, True),
    "PortfolioSampler": ("bore_samplers.integrations.optuna", PortfolioProposer, True),
    "BinaryOutcomeSampler": ("bore_samplers.integrations.binary", BinaryOutcomeProposer, True),
    "PreferentialSampler": (
        "bore_samplers.integrations.preferential",
        PreferentialProposer,
        True,
    ),
    "BORESearch": ("bore_samplers.integrations.ray", BOREProposer, False),
    "CMESSearch": ("bore_samplers.integrations.ray", CMESProposer, False),
    "PortfolioSearch": ("bore_samplers.integrations.ray", PortfolioProposer, False),
    "BinaryOutcomeSearch": ("bore_samplers.integrations.ray", BinaryOutcomeProposer, False),
}
SAMPLERS = [name for name, (_, _, optuna) in CLASSES.items() if optuna]
SEARCHERS = [name for name, (_, _, optuna) in CLASSES.items() if not optuna]
WITH_STARTUP = [name for name in CLASSES if name != "PreferentialSampler"]
GP_CLASSES = ["CMESSampler", "PortfolioSampler", "CMESSearch", "PortfolioSearch"]


def _class(name: str) -> type:
    return getattr(importlib.import_module(CLASSES[name][0]), name)


# ------------------------------------------------------------------------ bad arguments
def _cases() -> list[tuple[str, dict[str, Any], str]]:
    """(class, keyword arguments, the public option the message must name)."""
    cases: list[tuple[str, dict[str, Any], str]] = []

    def add(classes: list[str], option: str, *values: Any) -> None:
        for name in classes:
            for value in values:
                cases.append((name, {option: value}, option))

    add(WITH_STARTUP, "n_startup_trials", -1, 2.5, "3", True)
    add(list(CLASSES), "seed", "x", 1.5, -1, True, 2**32)
    add(WITH_STARTUP, "failed_trials", "retry", None)
    add(WITH_STARTUP, "pruned_trials", "drop")
    add(SAMPLERS, "independent_sampler", "random", RandomSampler)
    add([n for n in SAMPLERS if n != "PreferentialSampler"], "warn_independent_sampling", "no")
    add([n for n in SAMPLERS if n != "PreferentialSampler"], "constraints_func", 3)
    add(SEARCHERS, "metric", 5)
    add(SEARCHERS, "mode", "minimize")
    add(SEARCHERS, "space", 5)
    add(SEARCHERS, "points_to_evaluate", [1, 2])
    add(SEARCHERS, "evaluated_rewards", "12")
    bore = ["BORESampler", "BORESearch"]
    add(bore, "gamma", "0.25", 0.0, 1.5, math.nan, lambda n: 2.0)
    add(bore, "classifier", "svm", 5)
    add(bore, "classifier_options", "max_depth=3", {"max_dept": 3}, {"max_depth": -1})
    add(bore, "acquisition_optimizer", "cma", 5)
    add(bore, "n_candidates", 0, 2.5)
    add(bore, "weighting", "lfbo")
    cmes = ["CMESSampler", "CMESSearch"]
    add(cmes, "acquisition", "mes")
    add(cmes, "n_y_star_samples", 0)
    add(cmes, "n_discretization", 0, 10.5)
    add(cmes, "y_star_sampler", "exact")
    add(cmes, "binary_confidence", 1.0, "0.9")
    add(cmes, "ap_percentile", 40.0, 101.0)
    add(GP_CLASSES, "marginalize_hyperparameters", "yes")
    add(GP_CLASSES, "n_hyperparameter_samples", 0)
    add(GP_CLASSES, "reoptimize_growth", 0.5)
    add(GP_CLASSES, "reoptimize_after", -1)
    add(GP_CLASSES, "n_restarts", 0)
    portfolio = ["PortfolioSampler", "PortfolioSearch"]
    add(portfolio, "portfolio", 5, [], ["ucb"], [3])
    add(portfolio, "eta", -1.0, "4", math.inf)
    add(portfolio, "memory", 1.5)
    add(portfolio, "normalize", "yes", 1)
    add(portfolio, "selection", "greedy")
    binary = ["BinaryOutcomeSampler", "BinaryOutcomeSearch"]
    add(binary, "acquisition", "ei")
    add(binary, "outcome_threshold", "0.5", math.nan, True)
    add(binary, "beta", -1.0, "1")
    add(binary, "approximation", "vi")
    add(binary, "n_candidates", 0)
    add(["AutoSampler", "AutoSearch"], "large_study", 0, 1.5, "1000")
    preferential = ["PreferentialSampler"]
    add(preferential, "acquisition", "ucb")
    add(preferential, "batch", "all")
    add(preferential, "approximation", "vi")
    add(preferential, "n_candidates", 0)
    add(preferential, "n_restarts", -1)
    add(preferential, "n_fit_restarts", -1, 1.5)
    add(preferential, "champion", "best")
    add(preferential, "champion_margin", 0.4, 1.0, "0.6")
    add(preferential, "margin", 0.5, -0.1)
    add(preferential, "min_distance", -1.0, "0.1")
    return cases


CASES = _cases()


def _case_id(case: tuple[str, dict[str, Any], str]) -> str:
    name, kwargs, _ = case
    (option, value), *_ = kwargs.items()
    shown = getattr(value, "__name__", None) or repr(value)
    return f"{name}-{option}={shown}"[:60]


# Names of the proposers' options that the adapters call otherwise: never in a message.
_INTERNAL = [re.compile(r"\bn_startup\b"), re.compile(r"(?<!binary_)\bconfidence\b")]


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_a_bad_argument_fails_in_the_constructor_naming_the_option(
    case: tuple[str, dict[str, Any], str],
) -> None:
    name, kwargs, option = case
    with pytest.raises((TypeError, ValueError)) as raised:
        _class(name)(**kwargs)
    message = str(raised.value)
    assert option in message, message
    assert not any(pattern.search(message) for pattern in _INTERNAL), message


def test_there_are_about_a_hundred_cases_and_none_is_accepted_silently() -> None:
    assert len(CASES) >= 100
    accepted = []
    for name, kwargs, _ in CASES:
        try:
            _class(name)(**kwargs)
        except (TypeError, ValueError):
            continue
        accepted.append(_case_id((name, kwargs, "")))
    assert not accepted, accepted


@pytest.mark.parametrize("name", list(CLASSES))
def test_the_defaults_construct(name: str) -> None:
    _class(name)()


# ------------------------------------------------------------------------ misspelt options
@pytest.mark.parametrize(
    ("name", "typo", "meant"),
    [
        ("BORESampler", "gama", "gamma"),
        ("BORESampler", "n_startup", "n_startup_trials"),
        ("CMESSampler", "confidence", "binary_confidence"),
        ("CMESSampler", "n_ystar_samples", "n_y_star_samples"),
        ("PortfolioSampler", "normalise", "normalize"),
        ("BinaryOutcomeSampler", "outcome_treshold", "outcome_threshold"),
        ("PreferentialSampler", "champion_marign", "champion_margin"),
        ("BORESearch", "clasifier", "classifier"),
        ("CMESSearch", "acquistion", "acquisition"),
        ("PortfolioSearch", "etaa", "eta"),
        ("BinaryOutcomeSearch", "approximaton", "approximation"),
        ("AutoSampler", "n_startup_trial", "n_startup_trials"),
        ("AutoSearch", "large_studies", "large_study"),
    ],
)
def test_a_misspelt_option_names_the_class_and_the_nearest_option(
    name: str, typo: str, meant: str
) -> None:
    with pytest.raises(TypeError) as raised:
        _class(name)(**{typo: 1})
    assert str(raised.value) == (
        f"{name}() got an unexpected keyword argument {typo!r}; did you mean {meant!r}?"
    )


def test_a_keyword_far_from_every_option_lists_them() -> None:
    with pytest.raises(TypeError, match="'zzz'; its options are .*gamma"):
        _class("BORESampler")(zzz=1)


# ------------------------------------------------------------------------ signatures and docs
@pytest.mark.parametrize("name", list(CLASSES))
def test_the_signature_names_every_option_with_the_proposers_default(name: str) -> None:
    cls, proposer = _class(name), CLASSES[name][1]
    parameters = inspect.signature(cls).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    for option in inspect.signature(proposer).parameters.values():
        public = RENAMED.get(option.name, option.name)
        assert public in parameters, f"{name} lacks {public}"
        assert parameters[public].default == option.default, public


@pytest.mark.parametrize("name", list(CLASSES))
def test_help_documents_every_option_once(name: str) -> None:
    cls, proposer = _class(name), CLASSES[name][1]
    documented = [n for names, _ in parameter_entries(cls.__doc__) for n in names]
    assert len(documented) == len(set(documented)), documented
    assert set(inspect.signature(cls).parameters) <= set(documented)
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    # Each proposer option's description reaches help() (not only its name).
    for names, lines in parameter_entries(proposer.__doc__):
        if {"n_startup", "seed"} & set(names):
            continue  # the adapters document these in their own words
        assert lines[1].strip() in text, (name, names)
