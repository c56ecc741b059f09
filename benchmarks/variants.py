"""Variants of our samplers measured against their defaults (see ``benchmarks/samplers.py``)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from bore_samplers import AutoSampler, CMESSampler
from bore_samplers.proposers.auto import _MEMBER_CLASSES
from bore_samplers.proposers.base import RoundStarts
from bore_samplers.proposers.bore import BOREProposer

__all__ = [
    "AutoBranchModel",
    "AutoBranchTPE",
    "AutoBranchTPEGroup",
    "AutoBranchUnion",
    "AutoBranchUnionGP",
    "AutoChoiceForest",
    "AutoChoiceForest100",
    "AutoFullSearches",
    "CMESFullFit",
]


class AutoBranchModel(AutoSampler):
    """Branch parameters proposed group by group by this package's models."""

    _branch_route = "model"


class AutoBranchUnion(AutoSampler):
    """Every parameter of every branch proposed by one random forest on the union space,
    inactive parameters imputed (SMAC's way)."""

    _branch_route = "union"


class AutoBranchUnionGP(AutoSampler):
    """Every parameter of every branch proposed on the union space, inactive parameters
    imputed (a fixed point outside each range), by the model AutoSampler's rules choose
    there: the GP portfolio unless most parameters are categorical."""

    _branch_route = "union-gp"


class AutoBranchTPEGroup(AutoSampler):
    """Branch parameters proposed group by group by Optuna's multivariate TPE."""

    _branch_route = "tpe-group"


class AutoBranchTPE(AutoSampler):
    """Branch parameters drawn one by one by Optuna's univariate TPE."""

    _branch_route = "tpe"


class CMESFullFit(CMESSampler):
    """cMES with its GPs fitted on every trial of a long study, not on a 600-row subset."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        policy = self._proposer.fit_policy
        self._proposer.fit_policy = lambda: dataclasses.replace(policy(), max_fit_rows=None)


class AutoFullSearches(AutoSampler):
    """AutoSampler with a full acquisition search at every ask, follow-ups of a batch
    included. Patches :class:`RoundStarts` for the whole process (its cells run in fresh
    processes)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        RoundStarts.follow_up = lambda self, history: None  # type: ignore[method-assign]


class AutoChoiceForest(AutoSampler):
    """AutoSampler with a random forest of ``n_estimators`` trees on a conditional space's
    categorical choice, one parameter (instead of the lookup table) or several. Patches the
    member table for the whole process (its cells run in fresh processes)."""

    n_estimators = 32

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        forest = functools.partial(
            BOREProposer, classifier_options={"n_estimators": self.n_estimators}
        )
        _MEMBER_CLASSES["bore-choice"] = _MEMBER_CLASSES["bore-lookup"] = forest


class AutoChoiceForest100(AutoChoiceForest):
    """:class:`AutoChoiceForest` with BORE's 100 trees."""

    n_estimators = 100
