"""The ledger both adapters keep: trial records in, observations and proposals out.

An adapter (Optuna sampler, Ray Tune searcher) knows its framework's hooks only: it turns each
trial into a :class:`TrialRecord`, in the framework's units, and hands the records to a
:class:`Ledger`, which does the rest the same way for every framework.

How each outcome enters the model
---------------------------------
* Not finished (a pending trial): RUNNING, with the configuration proposed for it and the
  proposer's record, so that proposals keep away from it.
* Finished with a usable value: COMPLETE; the value is minimised (negated for a maximised
  objective). Several objectives: every value, negated where maximised
  (:attr:`~bore_samplers.Observation.values`); ``value`` is the first.
* Raised, or finished without a usable value (missing, not a number, NaN; ±inf are kept):
  FAILED, no value.
* Pruned (Optuna), or stopped by a scheduler before the budget that the finished trials
  reached (Ray Tune: :attr:`TrialRecord.budget` below the largest of a COMPLETE trial):
  PRUNED, its last reported value kept (left out when NaN). The budget rule is re-applied at
  every proposal, so a value cut short is never ranked against full-length ones.
* Constraints, by name: feasible iff every value ``<= 0``. A constraint that a trial does not
  report is unknown there (left out of that constraint's model; it does not make the trial
  infeasible). A NaN constraint value makes the trial FAILED: Optuna's
  ``trial.set_constraint`` raises on NaN, which fails the trial, and the Ray searchers do
  the same. ±inf are kept (``+inf`` is infeasible).

The start-up count
------------------
A proposer proposes from its initial design while fewer than ``n_startup`` observations are
finished, counted by :meth:`~bore_samplers.proposers.Proposer.n_finished` (the one
definition; :meth:`Ledger.n_finished` for adapters): COMPLETE, PRUNED and FAILED ones, less
those that ``failed_trials="ignore"`` or ``pruned_trials="ignore"`` leave out; pending ones
never count. (Where a design is indexed, by the number of observations pending ones
included, that is its position, so that workers asking at once continue it.)

Proposal sources and fallbacks
------------------------------
Each trial has one source (:data:`~bore_samplers.proposers.base.PROPOSAL_SOURCES`):
``"start-up"`` (the proposer's initial design, or the proposer was not asked: Optuna's first
trial, which no finished trial's space defines yet, and Ray Tune's ``points_to_evaluate``),
``"model"``, or ``"fallback"`` (the model raised, or had nothing to learn from, e.g. BORE's
labels all of one class). Parameters outside Optuna's relative search space (conditional
ones) are always sampled independently; a trial's source is that of its jointly proposed
parameters. :class:`ProposalSources` tallies them.

:meth:`Ledger.propose` returns the proposal with its source (``"start-up"``, ``"model"`` or
``"fallback"``), or a :class:`~bore_samplers.proposers.base.Fallback` after a model failure,
which :meth:`Ledger.report` logs and warns about
(:class:`~bore_samplers.proposers.ModelFallbackWarning`): the adapter then proposes without
the model (Optuna: its ``independent_sampler``; Ray Tune: a uniform random configuration),
and records the source ``"fallback"``.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.base import (
    Fallback,
    ModelFallbackWarning,
    Proposal,
    Proposer,
    safe_propose,
)
from bore_samplers.space import SearchSpace

__all__ = [
    "Ledger",
    "ProposalSources",
    "TrialRecord",
    "finite_or_none",
    "reported_constraints",
    "reported_values",
    "signs_of",
]


@dataclass
class TrialRecord:
    """What an adapter knows about one trial, in the framework's units.

    Attributes
    ----------
    params
        The configuration, core values (for a pending trial: everything proposed for it).
    state
        As the framework reports it (PRUNED only where the framework prunes).
    value
        The reported objective value, a tuple for several objectives; None if none.
    constraints
        Constraint values by name, as reported.
    record
        The proposer's record of the proposal (:attr:`~bore_samplers.Observation.record`).
    duration
        Evaluation time in seconds, if known.
    budget
        The training iteration the trial reached, if the framework counts them.
    stopped
        Whether a scheduler cut the trial short (see the module docstring).
    """

    params: dict[str, Any]
    state: TrialState = TrialState.RUNNING
    value: float | tuple[float, ...] | None = None
    constraints: Mapping[str, float] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    duration: float | None = None
    budget: int | None = None
    stopped: bool = False


def finite_or_none(value: Any) -> float | None:
    """A usable reported number: None for a missing, non-numeric or NaN one (±inf are kept)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def reported_values(value: Any) -> float | tuple[float, ...] | None:
    """A usable objective value, or a tuple of them when a sequence (None unless every one is
    usable: see :func:`finite_or_none`)."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        numbers = [finite_or_none(each) for each in value]
        return None if any(n is None for n in numbers) else tuple(numbers)  # type: ignore[misc]
    return finite_or_none(value)


def reported_constraints(
    names: Sequence[str], result: Mapping[str, Any]
) -> tuple[dict[str, float], bool]:
    """The constraints ``names`` reported in ``result``, and whether one of them is NaN.

    A name missing from ``result`` (or not a number) is unknown for that trial and left out.
    """
    constraints, has_nan = {}, False
    for name in names:
        try:
            number = float(result[name])
        except (KeyError, TypeError, ValueError):
            continue
        if math.isnan(number):
            has_nan = True
        else:
            constraints[name] = number
    return constraints, has_nan


def signs_of(directions: Sequence[str]) -> float | tuple[float, ...]:
    """What turns reported values into values to minimise: -1 for a maximised objective.

    ``directions``: ``"min"``/``"max"`` (or Optuna's ``"minimize"``/``"maximize"``), one per
    objective; one sign for one objective, a tuple for several.
    """
    signs = tuple(-1.0 if d.lower().startswith("max") else 1.0 for d in directions)
    return signs if len(signs) > 1 else signs[0]


class Ledger:
    """Observations and proposals from trial records, the same way in every adapter.

    Parameters
    ----------
    proposer
        The proposer whose proposals the adapter publishes.
    """

    def __init__(self, proposer: Proposer) -> None:
        self.proposer = proposer

    # ------------------------------------------------------------------ observations
    @staticmethod
    def observation(
        trial: TrialRecord, signs: float | tuple[float, ...], state: TrialState | None = None
    ) -> Observation:
        """``trial`` as the proposer sees it (values minimised), in ``state`` if given."""
        state = trial.state if state is None else state
        value: float | None = None
        values: tuple[float, ...] | None = None
        raw = trial.value
        if state in (TrialState.COMPLETE, TrialState.PRUNED) and raw is not None:
            if isinstance(raw, tuple):
                values = tuple(s * v for s, v in zip(_as_tuple(signs), raw, strict=True))
                value = values[0]
            elif not math.isnan(raw):
                value = _as_tuple(signs)[0] * raw
        return Observation(
            trial.params,
            value,
            state,
            trial.constraints,
            trial.record,
            trial.duration,
            values,
        )

    def observations(
        self, trials: Iterable[TrialRecord], signs: float | tuple[float, ...]
    ) -> list[Observation]:
        """Every trial as the proposer sees it, the budget rule applied (module docstring)."""
        trials = list(trials)
        budget = max(
            (t.budget for t in trials if t.state is TrialState.COMPLETE and t.budget is not None),
            default=None,
        )
        observations = []
        for trial in trials:
            state = trial.state
            if (
                state is TrialState.COMPLETE
                and trial.stopped
                and budget is not None
                and trial.budget is not None
                and trial.budget < budget
            ):
                state = TrialState.PRUNED
            observations.append(self.observation(trial, signs, state))
        return observations

    def n_finished(self, states: Iterable[TrialState]) -> int:
        """The start-up count of trials in ``states`` (module docstring)."""
        return self.proposer.n_finished(states)

    # ------------------------------------------------------------------ proposals
    def propose(
        self, space: SearchSpace, observations: Sequence[Observation]
    ) -> Proposal | Fallback:
        """The next proposal with its source, or a :class:`Fallback` if the model failed."""
        return safe_propose(self.proposer, space, observations)

    @staticmethod
    def report(
        fallback: Fallback,
        adapter: str,
        what: str,
        instead: str,
        logger: logging.Logger,
        stacklevel: int = 2,
    ) -> None:
        """Log (every time, with the count in a row) and warn why the model was not used.

        ``adapter`` is the public class the user built, ``what`` failed (``"Trial#12"``) and
        what happens ``instead``; the warning is a
        :class:`~bore_samplers.proposers.ModelFallbackWarning` attributed to the frame
        ``stacklevel`` above this call (the user's code, where the adapter knows its depth).
        """
        message = fallback.message(adapter, what, instead)
        logger.warning(message)
        warnings.warn(message, ModelFallbackWarning, stacklevel=stacklevel + 1)


class ProposalSources:
    """The source of every trial proposed (trial key -> source), read afresh at every use.

    Keys are Optuna trial numbers or Ray Tune trial ids
    (:func:`~bore_samplers.integrations.reporting.track_proposals` builds one).

    Parameters
    ----------
    read
        Returns the current trial key -> source mapping, read afresh at every use (``None``:
        no trial).
    """

    #: The sources, in the order they are printed.
    order: tuple[str, ...] = ("model", "start-up", "fallback")

    def __init__(self, read: Callable[[], Mapping[Hashable, str]] | None = None) -> None:
        self._read = read

    @property
    def by_trial(self) -> dict[Hashable, str]:
        """Trial key -> source, in the order the trials were proposed."""
        return dict(self._read()) if self._read is not None else {}

    def counts(self) -> dict[str, int]:
        """Number of trials per source, every source included (0 if none)."""
        sources = list(self.by_trial.values())
        return {source: sources.count(source) for source in self.order}

    def trials(self, source: str) -> list[Hashable]:
        """The keys of the trials from ``source``, in the order they were proposed."""
        return [key for key, value in self.by_trial.items() if value == source]

    def summary(self, n_trials: int) -> str:
        """One line: ``proposals: N trials = a model-based + b start-up + c fallback``.

        ``n_trials`` is the framework's own count of trials, so that a reader (or a test) sees
        whether the parts add up.
        """
        counts = self.counts()
        return (
            f"proposals: {n_trials} trials = {counts['model']} model-based + "
            f"{counts['start-up']} start-up + {counts['fallback']} fallback"
        )

    def best_by_source(
        self, values: Mapping[Hashable, float | None], *, maximize: bool = False, fmt: str = ".4f"
    ) -> str:
        """One line: the best of ``values`` among the trials of each source, and its trial.

        ``values`` maps trial keys to their values (None or a missing key: no value, e.g. a
        crashed trial). Sources without a valued trial are left out.
        """
        by_trial = self.by_trial
        parts = []
        for source in self.order:
            valued = [
                (values[key], key)
                for key, value in by_trial.items()
                if value == source and values.get(key) is not None
            ]
            if valued:
                value, key = max(valued) if maximize else min(valued)
                label = "model-based" if source == "model" else source
                parts.append(f"{label} {value:{fmt}} (trial {key})")
        return "best by source: " + (", ".join(parts) if parts else "no trial has a value")


def _as_tuple(signs: float | tuple[float, ...]) -> tuple[float, ...]:
    return signs if isinstance(signs, tuple) else (signs,)
