"""An Optuna sampler for optuna-dashboard's preferential studies (human-in-the-loop BO).

:class:`PreferentialSampler` reads the duels and the trials on the screen from the study's
storage through optuna-dashboard's own helpers (:func:`preference_data`) and hands
:class:`~bore_samplers.proposers.preferential.PreferentialProposer` plain configurations and
index pairs; ``docs/preferential.md`` says how the study stores them. Needs optuna-dashboard
(``pip install optuna-dashboard``); nothing else in the package imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaTrialState

from bore_samplers.integrations.optuna_base import (
    SamplerBase,
    search_space_from_distributions,
    value_fits,
)
from bore_samplers.proposers.base import Fallback, fallback_on_error
from bore_samplers.proposers.options import public_options
from bore_samplers.proposers.preferential import (
    PreferenceData,
    PreferentialProposer,
    duels_and_screen,
)
from bore_samplers.space import SearchSpace

try:
    from optuna_dashboard.preferential import PreferentialStudy
    from optuna_dashboard.preferential._system_attrs import (
        get_preferences,
        get_skipped_trial_ids,
    )
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "PreferentialSampler needs optuna-dashboard: pip install optuna-dashboard"
    ) from error

__all__ = ["PreferenceData", "PreferentialSampler", "preference_data"]


#: Trial system attribute recording why the sampler proposed the trial.
ROLE_KEY = "preferential:role"

_ACTIVE_STATES = (OptunaTrialState.RUNNING, OptunaTrialState.COMPLETE)


def _as_study(study: optuna.Study | PreferentialStudy) -> optuna.Study:
    return study._study if isinstance(study, PreferentialStudy) else study


def _holds(trial: FrozenTrial, distributions: Mapping[str, BaseDistribution]) -> bool:
    """Whether ``trial`` has a value inside every distribution of the space."""
    for name, distribution in distributions.items():
        if name not in trial.params or not value_fits(distribution, trial.params[name]):
            return False
    return True


def preference_data(
    study: optuna.Study | PreferentialStudy,
    distributions: Mapping[str, BaseDistribution],
    exclude: Sequence[int] = (),
) -> PreferenceData:
    """Read the duels and the trials on the screen from a (preferential) study's storage.

    Parameters
    ----------
    study
        An ``optuna.Study`` or an optuna-dashboard ``PreferentialStudy``.
    distributions
        The search space; trials without a value inside it take no part.
    exclude
        Trial numbers to leave off the screen (the trial being sampled).
    """
    study = _as_study(study)
    storage, study_id = study._storage, study._study_id
    # System attributes first, then trials (optuna-dashboard's order): a preference read
    # here always names trials that exist.
    attrs = storage.get_study_system_attrs(study_id)
    trials = {t.number: t for t in storage.get_all_trials(study_id, deepcopy=False)}
    skipped = set(get_skipped_trial_ids(attrs))
    preferences = [(int(b), int(w)) for b, w in get_preferences(attrs)]

    def usable(number: int) -> bool:
        trial = trials.get(number)
        return (
            trial is not None and trial._trial_id not in skipped and _holds(trial, distributions)
        )

    excluded = set(exclude)
    active = [
        t.number for t in trials.values() if t.state in _ACTIVE_STATES and t.number not in excluded
    ]
    return duels_and_screen(
        preferences,
        active,
        usable,
        lambda number: {name: trials[number].params[name] for name in distributions},
    )


class _PreferentialBase(SamplerBase):
    """What :func:`public_options` generates :class:`PreferentialSampler`'s constructor over."""

    def __init__(
        self, proposer: PreferentialProposer, *, independent_sampler: BaseSampler | None = None
    ) -> None:
        proposer.validate()
        super().__init__(proposer, independent_sampler)


@public_options(PreferentialProposer)
class PreferentialSampler(_PreferentialBase):
    """Sampler for optuna-dashboard's preferential studies: the Maximally Uncertain Challenge.

    Use it as the ``sampler`` of ``optuna_dashboard.preferential.create_study(n_generate=...)``
    (or ``load_study``). Each new trial is a start-up point, the champion (``argmax μ_f``) or
    the challenger whose duels with the trials on the screen are most uncertain (the rule and
    options: :class:`~bore_samplers.proposers.preferential.PreferentialProposer`,
    ``docs/preferential.md``). Preferences are read from the storage at every proposal, so
    the person may click in the dashboard while a generator loop runs elsewhere. The role of
    each proposal is the trial's system attribute ``preferential:role``. Fauvel & Chalk,
    *Efficient Exploration in Binary and Preferential Bayesian Optimization*, arXiv preprint,
    2021.

    Parameters
    ----------
    independent_sampler
        Sampler of the first trials and of parameters outside the relative search space;
        :class:`~optuna.samplers.RandomSampler` with ``seed`` by default.

    Raises
    ------
    ValueError
        For invalid options.

    Examples
    --------
    >>> from optuna_dashboard.preferential import create_study
    >>> from bore_samplers.integrations.preferential import PreferentialSampler
    >>> study = create_study(n_generate=2, sampler=PreferentialSampler(seed=0))
    >>> while study.should_generate():
    ...     trial = study.ask()
    ...     _ = trial.suggest_float("x", -1.0, 1.0)
    >>> a, b = study.trials
    >>> study.report_preference(better_trials=a, worse_trials=b)
    >>> trial = study.ask()
    >>> trial.suggest_float("x", -1.0, 1.0)  # doctest: +SKIP
    0.93...
    """

    @property
    def proposer(self) -> PreferentialProposer:
        """The proposer behind this sampler."""
        return self._proposer

    def sample_relative(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        search_space: dict[str, BaseDistribution],
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        space = search_space_from_distributions(search_space)
        with self._lock:
            data = preference_data(study, search_space, exclude=[trial.number])
            proposal = fallback_on_error(
                self._proposer,
                lambda: self._proposer.propose(space, data.configs, data.duels, data.shown),
            )
        if isinstance(proposal, Fallback):
            self._report_fallback(trial, proposal)
            self._record_source(study, trial, "fallback")  # the independent sampler's
            return {}
        study._storage.set_trial_system_attr(trial._trial_id, ROLE_KEY, proposal.role)
        self._record_source(study, trial, proposal.source)
        return proposal.params

    def inferred_best_params(
        self,
        study: optuna.Study | PreferentialStudy,
        over: Literal["observed", "space"] = "observed",
    ) -> dict[str, Any]:
        """The configuration the preferences point to: the argmax of the posterior mean utility.

        Unlike ``study.best_trials`` (every trial never reported worse), this weighs all duels
        at once, through the preference GP.

        Parameters
        ----------
        study
            An ``optuna.Study`` or an optuna-dashboard ``PreferentialStudy``.
        over
            ``"observed"`` (default): the best of the compared trials, a configuration the
            person has seen; ``"space"``: the maximiser of ``μ_f`` over the whole space.

        Raises
        ------
        ValueError
            If no preference has been reported (among trials that were not skipped).
        """
        inner = _as_study(study)
        distributions = self._relative_distributions(inner)
        data = preference_data(inner, distributions) if distributions else None
        if data is None or not data.duels:
            raise ValueError(
                "No preference has been reported yet (skipped trials do not count): "
                "nothing to infer the best configuration from."
            )
        space: SearchSpace = search_space_from_distributions(distributions)
        with self._lock:
            return self._proposer.inferred_best(space, data.configs, data.duels, over=over)
