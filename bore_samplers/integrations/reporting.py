"""Where each trial's configuration came from: the model, the start-up design or a fallback.

For examples and reports. :func:`track_proposals` reads what a sampler or searcher of this
package records about every trial it proposes and files each trial under one source:

* ``"model"``: the proposer's model chose the configuration.
* ``"start-up"``: the proposer's initial design chose it (fewer finished trials than
  ``n_startup_trials``), or the proposer was not asked: Optuna's first trial (no finished trial
  defines the joint search space yet: the independent sampler draws it) and Ray Tune's
  ``points_to_evaluate``.
* ``"fallback"``: the model could not be used. Either it raised (the adapter issued a
  :class:`~bore_samplers.proposers.ModelFallbackWarning` and drew the trial without the model)
  or it had nothing to learn from (all labels of one class for BORE, no objective and no crash
  yet for the GP proposers), and a uniform random configuration was proposed.

The proposer says which (:class:`~bore_samplers.proposers.base.Proposal`), and the adapters
keep it: the Optuna samplers in each trial's system attribute ``"bore_samplers:source"``
(:data:`~bore_samplers.integrations.optuna_base.SOURCE_KEY`; a trial without it was not
proposed jointly, and counts as ``"start-up"``), the Ray Tune searchers in
:attr:`~bore_samplers.integrations.ray.ProposerSearch.proposal_sources`. Nothing is patched:
the tally reads those records whenever it is asked. Parameters outside Optuna's relative search
space (conditional ones) are always sampled independently; the trial's source is that of its
jointly proposed parameters.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Hashable, Mapping
from typing import Any

__all__ = ["SOURCES", "ProposalSources", "track_proposals"]

#: The sources a trial's configuration can come from, in the order they are printed.
SOURCES = ("model", "start-up", "fallback")


class ProposalSources:
    """The source of every trial proposed since :func:`track_proposals` (trial key -> source).

    Keys are Optuna trial numbers or Ray Tune trial ids.

    Parameters
    ----------
    read
        Returns the current trial key -> source mapping, read afresh at every use (``None``:
        no trial).
    """

    def __init__(self, read: Callable[[], Mapping[Hashable, str]] | None = None) -> None:
        self._read = read

    @property
    def by_trial(self) -> dict[Hashable, str]:
        """Trial key -> source, in the order the trials were proposed."""
        return dict(self._read()) if self._read is not None else {}

    def counts(self) -> dict[str, int]:
        """Number of trials per source, every source included (0 if none)."""
        sources = list(self.by_trial.values())
        return {source: sources.count(source) for source in SOURCES}

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
        for source in SOURCES:
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


def track_proposals(adapter: Any) -> ProposalSources:
    """Tally the source of each trial that ``adapter`` (a sampler or searcher) proposes.

    Call it before the study or tuner runs: the returned object counts the trials begun (Optuna)
    or suggested (Ray Tune) from now on, reading the adapter's records each time it is asked.

    Parameters
    ----------
    adapter
        A :class:`~bore_samplers.integrations.optuna.ProposerSampler` (``BORESampler``, ...)
        or a :class:`~bore_samplers.integrations.ray.ProposerSearch` (``BORESearch``, ...).

    Returns
    -------
    ProposalSources
        Trial key -> source, for the trials proposed from now on.

    Raises
    ------
    TypeError
        If ``adapter`` is neither.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import BORESampler
    >>> from bore_samplers.integrations.reporting import track_proposals
    >>> sampler = BORESampler(classifier="rf", n_startup_trials=5, seed=0)
    >>> sources = track_proposals(sampler)
    >>> study = optuna.create_study(sampler=sampler)
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=8)
    >>> sources.summary(len(study.trials))
    'proposals: 8 trials = 3 model-based + 5 start-up + 0 fallback'
    """
    if hasattr(adapter, "last_study"):  # an Optuna sampler: the study's trials say
        return ProposalSources(_optuna_reader(adapter))
    if hasattr(adapter, "proposal_sources"):  # a Ray Tune searcher: it keeps them
        return ProposalSources(_ray_reader(adapter))
    raise TypeError(
        f"track_proposals needs a sampler or searcher of bore_samplers, got "
        f"{type(adapter).__name__}."
    )


def _optuna_reader(sampler: Any) -> Callable[[], dict[Hashable, str]]:
    from bore_samplers.integrations.optuna_base import SOURCE_KEY

    # Optuna stamps a trial's start with the naive local time; a study that already had trials
    # (a stored one, loaded again) reports only the trials begun from now on.
    since = datetime.datetime.now()

    def read() -> dict[Hashable, str]:
        study = sampler.last_study
        if study is None:
            return {}
        return {
            trial.number: trial.system_attrs.get(SOURCE_KEY, "start-up")
            for trial in study.get_trials(deepcopy=False)
            if trial.datetime_start is not None and trial.datetime_start >= since
        }

    return read


def _ray_reader(searcher: Any) -> Callable[[], dict[Hashable, str]]:
    before = set(searcher.proposal_sources)  # suggested before tracking: not counted

    def read() -> dict[Hashable, str]:
        # Read the attribute at every call: Tune's restore replaces the searcher's state.
        return {
            key: source for key, source in searcher.proposal_sources.items() if key not in before
        }

    return read
