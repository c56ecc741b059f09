"""Where each trial's configuration came from (:func:`track_proposals`), as the adapters record
it: Optuna trials' system attribute ``"bore_samplers:source"``, Ray Tune searchers'
``proposal_sources``. Nothing is patched."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Hashable
from typing import Any

from bore_samplers.proposers.ledger import ProposalSources

__all__ = ["SOURCES", "ProposalSources", "track_proposals"]

#: The sources a trial's configuration can come from, in the order they are printed.
SOURCES = ProposalSources.order


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
