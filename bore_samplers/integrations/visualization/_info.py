"""What the plots of :mod:`bore_samplers.integrations.visualization` show, read from a study.

Both backends (plotly and matplotlib) draw the same information, gathered here from the
trials' attributes, so that they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import optuna
from optuna.trial import FrozenTrial, TrialState

from bore_samplers.integrations.auto import AUTO_PROPOSER_KEY
from bore_samplers.integrations.optuna_base import SOURCE_KEY
from bore_samplers.proposers.base import PROPOSAL_SOURCES

__all__ = [
    "AUTO_PROPOSER_KEY",
    "PROBABILITIES_KEY",
    "SOURCES",
    "SOURCE_KEY",
    "PortfolioWeights",
    "ProposalPoints",
    "has_recorded_sources",
    "portfolio_weights",
    "proposal_points",
]

#: User attribute in which :class:`~bore_samplers.integrations.optuna.PortfolioSampler` stores
#: each model-based trial's member probabilities (member name -> probability).
PROBABILITIES_KEY = "portfolio:probabilities"
#: The sources a sampler records, in the order the plots list them.
SOURCES = PROPOSAL_SOURCES


class PortfolioWeights(NamedTuple):
    """Each member's probability over the trials that recorded them.

    Attributes
    ----------
    trials
        Numbers of the trials with :data:`PROBABILITIES_KEY`, ascending.
    probabilities
        Member name (in order of first appearance) -> one probability per entry of
        ``trials``, ``None`` where that trial's portfolio did not have the member.
    """

    trials: list[int]
    probabilities: dict[str, list[float | None]]


class ProposalPoints(NamedTuple):
    """The completed trials of one source (and, for an AutoSampler, one proposer).

    Attributes
    ----------
    source
        Where the configurations came from: one of :data:`SOURCES` (or an unknown value
        recorded by a newer sampler, shown as is).
    proposer
        The AutoSampler's proposer for these trials, or ``None`` (no AutoSampler, or a trial
        it did not record one for).
    trials, values
        Trial numbers and their target values.
    """

    source: str
    proposer: str | None
    trials: list[int]
    values: list[float]


def check_study(study: object) -> None:
    """Raise a ``TypeError`` naming the argument unless ``study`` is an Optuna study."""
    if not isinstance(study, optuna.Study):
        raise TypeError(f"study must be an optuna.Study, got {type(study).__name__}.")


def portfolio_weights(study: optuna.Study) -> PortfolioWeights:
    """The members' probabilities of every trial that recorded them (any trial state)."""
    check_study(study)
    trials = sorted(study.get_trials(deepcopy=False), key=lambda trial: trial.number)
    recorded = [trial for trial in trials if PROBABILITIES_KEY in trial.user_attrs]
    names: dict[str, None] = {}  # ordered set: members in order of first appearance
    for trial in recorded:
        names.update(dict.fromkeys(trial.user_attrs[PROBABILITIES_KEY]))
    probabilities = {
        name: [_as_float(trial.user_attrs[PROBABILITIES_KEY].get(name)) for trial in recorded]
        for name in names
    }
    return PortfolioWeights([trial.number for trial in recorded], probabilities)


def proposal_points(
    study: optuna.Study, target: Callable[[FrozenTrial], float] | None = None
) -> list[ProposalPoints]:
    """The completed trials grouped by source and AutoSampler proposer.

    Groups come in the order of :data:`SOURCES` (unknown sources after them, sorted), and
    within a source by proposer name (``None`` first).

    Raises
    ------
    ValueError
        For a multi-objective study without ``target`` (as Optuna's plots do).
    TypeError
        If ``study`` is not an Optuna study.
    """
    check_study(study)
    if target is None:
        if study._is_multi_objective():
            raise ValueError(
                "The study has several objectives: pass target (a function of a FrozenTrial "
                "that returns the value to plot)."
            )

        def target(trial: FrozenTrial) -> float:
            return float(trial.value)

    groups: dict[tuple[str, str | None], ProposalPoints] = {}
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        source = str(trial.system_attrs.get(SOURCE_KEY, "start-up"))
        proposer = trial.system_attrs.get(AUTO_PROPOSER_KEY)
        # A start-up trial names no model proposer, whatever the sampler recorded.
        proposer = None if proposer is None or proposer == source else str(proposer)
        key = (source, proposer)
        group = groups.setdefault(key, ProposalPoints(key[0], key[1], [], []))
        group.trials.append(trial.number)
        group.values.append(float(target(trial)))

    def order(key: tuple[str, str | None]) -> tuple[int, str, int, str]:
        source, proposer = key
        rank = SOURCES.index(source) if source in SOURCES else len(SOURCES)
        return rank, source, proposer is not None, proposer or ""

    return [groups[key] for key in sorted(groups, key=order)]


def has_recorded_sources(study: optuna.Study) -> bool:
    """Whether any trial of ``study`` records its source (else all count as start-up)."""
    return any(SOURCE_KEY in trial.system_attrs for trial in study.get_trials(deepcopy=False))


def _as_float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]
