"""Optuna samplers: :class:`ProposerSampler` turns any :class:`~bore_samplers.proposers.Proposer`
into an Optuna sampler, and the named samplers are ``ProposerSampler`` over the package's
proposers. ``docs/optuna.md`` says how trials reach the proposer and how workers share proposals.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import optuna
from optuna import _deprecated
from optuna.distributions import (
    BaseDistribution,
)
from optuna.samplers import BaseSampler
from optuna.samplers._base import _process_constraints_after_trial
from optuna.storages._heartbeat import is_heartbeat_enabled
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaTrialState

from bore_samplers.integrations.optuna_base import (
    SamplerBase,
    logger,
    search_space_from_distributions,
)
from bore_samplers.integrations.publication import publish, read_published, trials_if_taken
from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.base import Fallback, ModelFallbackWarning, Proposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.ledger import Ledger, TrialRecord, signs_of
from bore_samplers.proposers.options import public_options
from bore_samplers.proposers.portfolio import (
    PortfolioProposer,
    RewardTable,
)
from bore_samplers.validation import check_bool, check_callable

__all__ = [
    "BORESampler",
    "CMESSampler",
    "ModelFallbackWarning",
    "PortfolioSampler",
    "ProposerSampler",
    "search_space_from_distributions",
]

# Set on a trial that a sampler of this package saw fail (after_trial with FAIL: the objective
# raised, or a tell reported FAIL). On a storage with heartbeats, a FAILED trial without it was
# failed by Optuna's heartbeat monitor (its worker died or stalled): retried, not learned from.
_REPORTED_FAILURE_KEY = "bore_samplers:reported_failure"

_FINISHED = (OptunaTrialState.COMPLETE, OptunaTrialState.PRUNED, OptunaTrialState.FAIL)

# Proposals made again when another worker published the same configuration meanwhile.
_MAX_REPROPOSALS = 3

_STATES = {
    OptunaTrialState.COMPLETE: TrialState.COMPLETE,
    OptunaTrialState.FAIL: TrialState.FAILED,
    OptunaTrialState.PRUNED: TrialState.PRUNED,
    OptunaTrialState.RUNNING: TrialState.RUNNING,
}


def _constraint_values(trial: FrozenTrial) -> dict[str, float]:
    """The trial's constraints by name (a legacy ``constraints_func`` list as "0", "1", ...)."""
    constraints = getattr(trial, "constraints", None)  # Optuna >= 5: dict of named values
    if isinstance(constraints, dict):
        return {str(name): float(value) for name, value in constraints.items()}
    legacy = trial.system_attrs.get("constraints")  # constraints_func of older versions
    return {str(i): float(value) for i, value in enumerate(legacy)} if legacy else {}


def _signs(study: optuna.Study) -> float | tuple[float, ...]:
    """What turns the study's values into values to minimise (:func:`signs_of`)."""
    return signs_of([direction.name for direction in study.directions])


@public_options()
class ProposerSampler(SamplerBase):
    """An Optuna sampler over any framework-free :class:`~bore_samplers.proposers.Proposer`.

    The intersection search space is proposed jointly; other parameters come from
    ``independent_sampler``. Each proposal is published in its trial's system attributes for
    the other workers; should the model fail, the trial falls back to ``independent_sampler``
    (logged, and a :class:`~bore_samplers.proposers.ModelFallbackWarning`). ``docs/optuna.md``
    has the details.

    Parameters
    ----------
    proposer
        The proposer; its settings are checked here (``proposer.validate()``).
    independent_sampler
        Sampler for the first trial and for parameters outside the relative search space;
        :class:`~optuna.samplers.RandomSampler` with the proposer's seed by default.
    warn_independent_sampling
        Log a warning when a parameter is sampled independently after the start-up trials
        (a conditional parameter, or a changed distribution), with the reason.
    constraints_func
        Deprecated in Optuna 5.0 (use ``trial.set_constraint``), accepted as Optuna's own
        samplers accept it, with Optuna's ``FutureWarning``.

    Raises
    ------
    ValueError
        For invalid proposer settings, and in a multi-objective study with a proposer of one
        objective.
    TypeError
        For an unknown keyword argument (the nearest option is suggested).

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import BOREProposer
    >>> from bore_samplers.integrations.optuna import ProposerSampler
    >>> sampler = ProposerSampler(BOREProposer(classifier="rf", seed=0))
    >>> study = optuna.create_study(sampler=sampler)
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=15)
    """

    # Caches: pickles (Ray, process pools) stay small.
    transient_attributes = ("_finished_trials", "_finished_observations")

    def __init__(
        self,
        proposer: Proposer,
        *,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
    ) -> None:
        Proposer.checked(proposer)
        check_bool("warn_independent_sampling", warn_independent_sampling)
        check_callable(
            "constraints_func",
            constraints_func,
            "a function of a FrozenTrial returning a sequence of floats",
            allow_none=True,
        )
        super().__init__(proposer, independent_sampler, include_pruned=True)
        self._warn_independent_sampling = warn_independent_sampling
        self._constraints_func = constraints_func
        if constraints_func is not None:  # the warning of Optuna's own samplers, word for word
            message = _deprecated._DEPRECATION_WARNING_TEMPLATE.format(
                name="`constraints_func`", d_ver="5.0.0", r_ver="7.0.0"
            )
            warnings.warn(
                f"{message} Use `optuna.trial.Trial.set_constraint` instead.",
                FutureWarning,
                stacklevel=3,
            )
        # Trial id -> the finished trial and its observation (two flat dicts, not a tuple per
        # trial: 10 000 long-lived tuples made the first ask pay for a full garbage collection).
        self._finished_trials: dict[int, FrozenTrial] = {}
        self._finished_observations: dict[int, Observation] = {}

    @property
    def proposer(self) -> Proposer:
        """The proposer behind this sampler."""
        return self._proposer

    @property
    def _relative_params_key(self) -> str:
        return f"{self._proposer.name}:relative_params"

    @property
    def _record_key(self) -> str:
        return f"{self._proposer.name}:record"

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: OptunaTrialState,
        values: Sequence[float] | None,
    ) -> None:
        if self._constraints_func is not None:  # as Optuna's samplers: COMPLETE and PRUNED
            _process_constraints_after_trial(self._constraints_func, study, trial, state)
        if state == OptunaTrialState.FAIL:
            try:
                study._storage.set_trial_system_attr(trial._trial_id, _REPORTED_FAILURE_KEY, True)
            except Exception as error:  # noqa: BLE001 - a note must never fail the tell
                logger.debug(f"Trial#{trial.number}: reported failure not marked: {error}")
        super().after_trial(study, trial, state, values)

    def _raise_error_if_multi_objective(self, study: optuna.Study) -> None:
        if self._proposer.supports_multi_objective or not study._is_multi_objective():
            return
        raise ValueError(
            f"{type(self).__name__} optimises a single objective and cannot be used in a "
            f"multi-objective study (directions={[d.name.lower() for d in study.directions]}). "
            "Use one objective, or a sampler that supports several (BORESampler, CMESSampler, "
            "PortfolioSampler)."
        )

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        self._raise_error_if_multi_objective(study)
        return super().infer_relative_search_space(study, trial)

    def sample_relative(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        search_space: dict[str, BaseDistribution],
    ) -> dict[str, Any]:
        self._raise_error_if_multi_objective(study)
        if not search_space:
            return {}
        space = search_space_from_distributions(search_space)
        sign = _signs(study)
        heartbeat = is_heartbeat_enabled(study._storage)
        # Read, propose and publish under one lock: another thread of this process (n_jobs)
        # then reads this proposal as a pending point instead of proposing from the same
        # history. Other processes see it once published, as soon as possible.
        with self._lock:
            trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=True)
            params: dict[str, Any] = {}
            record: dict[str, Any] = {}
            source = ""  # where the published proposal came from (bore_samplers:source)
            n_params = n_record = 0
            patience = 0.0
            for attempt in range(1 + _MAX_REPROPOSALS):
                if attempt:  # publish first, compare second (see publication.trials_if_taken)
                    taken = trials_if_taken(
                        study, trial, params, trials, patience, self._relative_params_key
                    )
                    if taken is None:
                        break
                    trials = taken
                observations = self._observations(trials, trial, sign, heartbeat)
                proposed_at = time.monotonic()
                proposal = self._ledger.propose(space, observations)
                if isinstance(proposal, Fallback):
                    if attempt:  # it worked a moment ago: keep the published proposal
                        break
                    self._report_fallback(trial, proposal)
                    self._record_source(study, trial, "fallback")  # the independent sampler's
                    return {}
                params, record, source = proposal.params, proposal.record, proposal.source
                n_params = publish(study, trial, self._relative_params_key, params, n_params)
                if record or n_record:
                    n_record = publish(study, trial, self._record_key, record, n_record)
                if not attempt:  # wait about two proposals' time for the others to compare
                    patience = 0.1 + 2.0 * (time.monotonic() - proposed_at)
            self._record_source(study, trial, source)
            self.after_proposal(study, trial, record)
        return params

    def after_proposal(
        self, study: optuna.Study, trial: FrozenTrial, record: dict[str, Any]
    ) -> None:
        """Called after a model proposal is published, with its record; does nothing here.

        Subclasses may expose the record, e.g. as user attributes for optuna-dashboard.
        """

    def sample_independent(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        self._raise_error_if_multi_objective(study)
        # After a model failure every parameter comes here; the cause is logged already.
        if self._warn_independent_sampling and trial.number not in self._fallback_trials:
            reason = self._outside_joint_space(study, param_name, param_distribution)
            if reason is not None:
                logger.warning(
                    f"The parameter `{param_name}` in Trial#{trial.number} is sampled "
                    f"independently using `{type(self._independent_sampler).__name__}` instead "
                    f"of `{type(self).__name__}`: {reason}, so it is outside the joint search "
                    "space. Pass `warn_independent_sampling=False` to silence this."
                )
        return super().sample_independent(study, trial, param_name, param_distribution)

    def _outside_joint_space(
        self, study: optuna.Study, param_name: str, distribution: BaseDistribution
    ) -> str | None:
        """Why ``param_name`` is not modelled jointly, or None when that is not worth a log.

        None for a fixed value (nothing to model), before the start-up trials are done (the
        first trial has no joint space yet) and when every finished trial has the parameter
        with this very distribution (its relative sample was empty for another reason).
        """
        if distribution.single():
            return None
        done = study._get_trials(deepcopy=False, states=_FINISHED, use_cache=True)
        if self._ledger.n_finished(_STATES[t.state] for t in done) < self._proposer.n_startup:
            return None  # the start-up count, as the proposer takes it
        finished = [t for t in done if t.state != OptunaTrialState.FAIL]
        absent = changed = 0
        for other in finished:
            seen = other.distributions.get(param_name)
            if seen is None:
                absent += 1
            elif seen != distribution:
                changed += 1
        if absent:
            return (
                f"it is absent from {absent} of the {len(finished)} finished trials "
                "(a conditional parameter)"
            )
        if changed:
            return (
                f"its distribution changed (a dynamic range): it is {distribution} now, "
                f"another one in {changed} of the {len(finished)} finished trials"
            )
        return None

    def observations(self, study: optuna.Study) -> list[Observation]:
        """Every trial of ``study`` as the proposer sees it (values minimised).

        For inspection: what the model of the next trial will be fitted on, with constraints
        by name and pending trials with their published proposals.
        """
        trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=False)
        sign = _signs(study)
        heartbeat = is_heartbeat_enabled(study._storage)
        return [
            self._observation(trial, sign)
            for trial in trials
            if not (heartbeat and _lost_to_heartbeat(trial))
        ]

    def _observations(
        self,
        trials: list[FrozenTrial],
        trial: FrozenTrial,
        sign: float | tuple[float, ...],
        heartbeat: bool,
    ) -> list[Observation]:
        """The observations of ``trials`` other than ``trial``, finished ones from a cache.

        A finished trial never changes, and the storages hand out the same object for it at
        every read (``_CachedStorage`` of RDB, in-memory and journal storages), so its
        observation is built once, not at every ask: with 10 000 trials that translation
        took about as long as fitting BORE's classifier. Call with ``self._lock`` held.
        """
        cached_trials, cached_observations = self._finished_trials, self._finished_observations
        kept_trials: dict[int, FrozenTrial] = {}
        kept_observations: dict[int, Observation] = {}
        observations = []
        own_id = trial._trial_id
        for other in trials:
            trial_id = other._trial_id
            if trial_id == own_id:
                continue
            if other.state == OptunaTrialState.RUNNING:  # its published proposal may change
                observations.append(self._observation(other, sign))
                continue
            if heartbeat and _lost_to_heartbeat(other):
                continue
            # The same trial object is the same finished trial, in the same study (same sign).
            if cached_trials.get(trial_id) is other:
                observation = cached_observations[trial_id]
            else:
                observation = self._observation(other, sign)
            kept_trials[trial_id] = other
            kept_observations[trial_id] = observation
            observations.append(observation)
        # Only the trials of the latest read: no unbounded growth.
        self._finished_trials, self._finished_observations = kept_trials, kept_observations
        return observations

    def _observation(self, trial: FrozenTrial, sign: float | tuple[float, ...]) -> Observation:
        state = _STATES[trial.state]
        value: float | tuple[float, ...] | None = None
        if state is TrialState.COMPLETE:
            value = tuple(trial.values) if isinstance(sign, tuple) else trial.value
        elif state is TrialState.PRUNED and trial.intermediate_values:
            value = trial.intermediate_values[max(trial.intermediate_values)]
        params: dict[str, Any] = dict(trial.params)
        if state is TrialState.RUNNING:
            # A pending trial has suggested only some parameters yet; its whole proposal
            # was published by the worker that sampled it.
            params = {**read_published(trial, self._relative_params_key), **params}
        record: dict[str, Any] = {}
        # A retried trial (RetryHeartbeatStaleTrialCallback) carries a copy of the failed
        # trial's system attributes: that record is the failed trial's, not a second proposal.
        if self._proposer.uses_records and "failed_trial" not in trial.system_attrs:
            record = read_published(trial, self._record_key)
        duration = trial.duration.total_seconds() if trial.duration is not None else None
        return Ledger.observation(
            TrialRecord(params, state, value, _constraint_values(trial), record, duration), sign
        )


def show_portfolio_record(
    study: optuna.Study, trial: FrozenTrial, record: dict[str, Any], prefix: str = "portfolio"
) -> None:
    """A portfolio proposal's arm probabilities, chosen arm and rewards as the trial's user
    attributes ``<prefix>:probabilities``, ``<prefix>:arm``, ``<prefix>:rewards`` (member
    name -> value; visible in optuna-dashboard, drawn by ``plot_portfolio_weights``)."""
    names = record.get("portfolio")
    if not names or "probabilities" not in record:
        return
    storage = study._storage
    probabilities = dict(zip(names, record["probabilities"], strict=True))
    storage.set_trial_user_attr(trial._trial_id, f"{prefix}:probabilities", probabilities)
    storage.set_trial_user_attr(trial._trial_id, f"{prefix}:arm", record["arm"])
    if record.get("rewards") is not None:
        rewards = dict(zip(names, record["rewards"], strict=True))
        storage.set_trial_user_attr(trial._trial_id, f"{prefix}:rewards", rewards)


def _lost_to_heartbeat(trial: FrozenTrial) -> bool:
    """Whether Optuna's heartbeat monitor failed ``trial`` (no sampler saw it fail).

    Only meaningful on a storage with heartbeats: there a worker that dies or stalls leaves
    its trial RUNNING until another worker fails it as stale, and such a failure says nothing
    about the configuration (the trial is retried, e.g. by ``RetryFailedTrialCallback``).
    """
    return trial.state == OptunaTrialState.FAIL and _REPORTED_FAILURE_KEY not in trial.system_attrs


@public_options(BOREProposer)
class BORESampler(ProposerSampler):
    """Sampler using BORE: Bayesian optimisation by density-ratio estimation.

    A classifier of the best γ-quantile proposes its maximiser (the algorithm and options:
    :class:`~bore_samplers.proposers.BOREProposer`, ``docs/bore.md``). Tiao et al., *BORE:
    Bayesian Optimization by Density-Ratio Estimation*, ICML 2021; Song et al., *A General
    Recipe for Likelihood-free Bayesian Optimization*, ICML 2022.

    Parameters
    ----------
    independent_sampler, warn_independent_sampling, constraints_func
        See :class:`ProposerSampler`.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import BORESampler
    >>> study = optuna.create_study(sampler=BORESampler(seed=0))
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=20)
    """


@public_options(CMESProposer)
class CMESSampler(ProposerSampler):
    """Sampler using constrained max-value entropy search (cMES) on Gaussian processes.

    Constraints come from ``trial.constraints``, crashes (FAILED trials) feed a GP classifier
    (the algorithm and options: :class:`~bore_samplers.proposers.CMESProposer`,
    ``docs/cmes.md``). Perrone et al., *Constrained Bayesian Optimization with Max-Value
    Entropy Search*, NeurIPS 2019 Workshop on Meta-Learning.

    Parameters
    ----------
    independent_sampler, warn_independent_sampling, constraints_func
        See :class:`ProposerSampler`.
    """


@public_options(PortfolioProposer)
class PortfolioSampler(ProposerSampler):
    """Sampler using a hedged portfolio of GP acquisition functions: No-PASt-BO and GP-Hedge.

    The algorithm and options: :class:`~bore_samplers.proposers.PortfolioProposer`,
    ``docs/portfolio.md``; the records and user attributes each trial gets:
    ``docs/optuna.md``. Vasconcelos et al., *No-PASt-BO*, ICTAI 2019; Hoffman et al.,
    *Portfolio Allocation for Bayesian Optimization*, UAI 2011.

    Parameters
    ----------
    independent_sampler, warn_independent_sampling, constraints_func
        See :class:`ProposerSampler`.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import PortfolioSampler
    >>> study = optuna.create_study(sampler=PortfolioSampler(seed=0))
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=15)
    >>> study.trials[-1].user_attrs["portfolio:probabilities"]  # doctest: +SKIP
    {'pi': 0.07, 'ei': 0.91, 'lcb': 0.02}
    """

    _proposer: PortfolioProposer

    def after_proposal(
        self, study: optuna.Study, trial: FrozenTrial, record: dict[str, Any]
    ) -> None:
        show_portfolio_record(study, trial, record, self._proposer.name)

    def reward_table(self, study: optuna.Study) -> RewardTable:
        """The members' rewards rebuilt from ``study`` (what the next trial's choice uses).

        Computed from the study's storage alone, over its current relative search space, so
        any process gets the same table.
        """
        distributions = self._relative_distributions(study)
        if not distributions:  # no finished trial yet: no proposal has been rewarded
            return self._proposer.empty_reward_table()
        space = search_space_from_distributions(distributions)
        observations = self.observations(study)
        with self._lock:
            return self._proposer.reward_table(space, observations)
