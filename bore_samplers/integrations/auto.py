"""AutoSampler: the one default sampler, for any kind of Optuna study.

Every trial goes to :class:`~bore_samplers.proposers.auto.AutoProposer`, which picks one of
this package's proposers from what the trials show (0/1 values, constraints, failures,
categorical parameters, the number of trials), in single- and multi-objective studies alike.
It models the parameters that every finished trial has. A parameter that only some trials
have (a branch of a conditional space, or one added mid-study) is proposed with its group (the
parameters that always come with it) by a model of its own
(:class:`~bore_samplers.proposers.branches.BranchProposer`), fitted on the finished trials of
the same branch; Optuna's TPE draws it while the group has fewer than a few such trials, or
should that model fail.

Each trial records who proposed it and why, in its system attributes
``bore_samplers:auto_proposer`` and ``bore_samplers:auto_reason`` (and which groups of branch
parameters a model proposed, in ``bore_samplers:auto_branch``); the logger
(``optuna.bore_samplers``) says so once whenever the choice changes.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, TPESampler
from optuna.storages._heartbeat import is_heartbeat_enabled
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaTrialState

from bore_samplers.integrations.optuna import (
    _STATES,
    ProposerSampler,
    _signs,
    show_portfolio_record,
)
from bore_samplers.integrations.optuna_base import (
    logger,
    params_from_distributions,
    search_space_from_distributions,
    value_fits,
)
from bore_samplers.integrations.publication import publish, read_published
from bore_samplers.proposers.auto import LARGE_STUDY, AutoProposer
from bore_samplers.proposers.base import Fallback, Proposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.branches import (
    MIN_BRANCH_TRIALS,
    BranchProposer,
    branch_context,
    branch_group,
    ranges_changed,
    union_proposal,
)
from bore_samplers.proposers.ledger import Ledger
from bore_samplers.proposers.options import proposer_options, public_options
from bore_samplers.validation import check_callable

__all__ = ["AUTO_BRANCH_KEY", "AUTO_PROPOSER_KEY", "AUTO_REASON_KEY", "AutoSampler"]

#: System attribute naming who proposed a trial (a member of AutoProposer, or "start-up").
AUTO_PROPOSER_KEY = "bore_samplers:auto_proposer"
#: System attribute saying why, in one line.
AUTO_REASON_KEY = "bore_samplers:auto_reason"
#: System attribute listing the groups of branch parameters a model proposed in the trial:
#: ``[{"params": [names], "proposer": member}, ...]``.
AUTO_BRANCH_KEY = "bore_samplers:auto_branch"
#: Where a trial's model-proposed branch parameters are published (for the other workers).
_BRANCH_PARAMS_KEY = "bore_samplers:auto_branch_params"

_FINISHED = (OptunaTrialState.COMPLETE, OptunaTrialState.PRUNED)
#: The routes that propose every branch at once on the union space, and their models' names.
_UNION_ROUTES = {"union": "BORE's random forest", "union-gp": "AutoSampler's rules (a GP)"}


class _AutoProposerSampler(ProposerSampler):
    """The :class:`ProposerSampler` over an :class:`AutoProposer` that shows its choices."""

    public_name = "AutoSampler"  # what messages name: the sampler the user built

    def __init__(self, owner: AutoSampler, proposer: AutoProposer, **kwargs: Any) -> None:
        super().__init__(proposer, **kwargs)
        self._owner = owner

    def _record_source(self, study: optuna.Study, trial: FrozenTrial, source: str) -> None:
        super()._record_source(study, trial, source)
        if source == "fallback" and trial.number in self._fallback_trials:
            sampler = type(self._independent_sampler).__name__
            reason = f"the model failed (logged), so {sampler} sampled the trial"
            self._owner._show_choice(study, trial, "fallback", reason)

    def after_proposal(
        self, study: optuna.Study, trial: FrozenTrial, record: dict[str, Any]
    ) -> None:
        if "auto_proposer" in record:
            proposer, reason = record["auto_proposer"], record["auto_reason"]
        else:
            proposer, reason = "start-up", "fewer finished trials than n_startup_trials"
        branch = self._owner._branch_parameters.get(trial._trial_id)
        if branch:
            reason += (
                f"; parameters not in every finished trial {self._owner._branch_how} ({branch})"
            )
        self._owner._show_choice(study, trial, proposer, reason)
        show_portfolio_record(study, trial, record)  # as PortfolioSampler shows them


@public_options(AutoProposer)
class AutoSampler(BaseSampler):
    """The default sampler: it picks the proposer for what the study shows.

    Each trial goes to the member of :class:`~bore_samplers.proposers.auto.AutoProposer`
    that its rules choose (0/1 values, constraints, failures, the number of trials,
    categorical parameters: the rule table is in :mod:`bore_samplers.proposers.auto` and in
    ``docs/auto.md``). Parameters that not every finished trial has (the branches of a
    conditional space) are proposed group by group: a branch parameter's group is the
    parameters that every finished trial with it has, less those the trial has set already;
    an auto proposer of the group's own, fitted on the trials that have the group and the
    trial's categorical values (the same branch), proposes the group jointly once at least
    ``max(5, n_startup_trials // 2)`` of them are finished. Until then, and should that
    model fail (logged), Optuna's ``TPESampler(constant_liar=True)`` draws them.

    The first ``n_startup_trials`` trials come from a scrambled Sobol sequence. The choice is
    made again at every trial, so it follows the study (a first crash moves it to cMES). Each
    trial's system attributes ``bore_samplers:auto_proposer`` and ``bore_samplers:auto_reason``
    say who proposed it and why; the logger says it once whenever the choice changes.

    Parameters
    ----------
    seed
        Seed for reproducible runs (with ``n_jobs=1``).
    n_startup_trials
        Trials from a scrambled Sobol sequence before a model takes over.
    independent_sampler
        Sampler for the first trial and for parameters outside the joint search space of a
        model-based trial (then used for every such parameter, without the group models); by
        default :class:`~optuna.samplers.RandomSampler` for the first trial and, for branch
        parameters, the group models and :class:`~optuna.samplers.TPESampler`, with ``seed``.
    constraints_func
        Deprecated by Optuna in favour of ``trial.set_constraint``, and accepted as Optuna's
        own samplers accept it: a function of a finished ``FrozenTrial`` returning its
        constraint values (feasible iff each is ``<= 0``).
    warn_independent_sampling
        Log a warning when a parameter of a model-based trial is sampled independently.

    Raises
    ------
    ValueError, TypeError
        For an invalid option, naming it.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import AutoSampler
    >>> study = optuna.create_study(sampler=AutoSampler(seed=0))
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=15)
    >>> study.trials[-1].system_attrs["bore_samplers:auto_proposer"]
    'portfolio'
    """

    # How branch parameters are drawn: "model" (each group jointly by BranchProposer, TPE
    # until a group has enough trials), "union" (SMAC's way: every parameter of every branch
    # at once by BORE's random forest on the union space, inactive ones imputed; "model"
    # where the conditions cannot be read off the trials), "union-gp" (the same with the
    # model that this sampler's rules choose for the union space, on most spaces the GP
    # portfolio, on the imputed features), "tpe-group" (each group by Optuna's
    # multivariate TPE) or "tpe" (univariate TPE). The benchmark's variants set the others;
    # "model" ranked ahead of every other route on the conditional-routes benchmark.
    _branch_route: ClassVar[str] = "model"

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        independent_sampler: BaseSampler | None = None,
        failed_trials: str = "bad",
        pruned_trials: str = "bad",
        large_study: int = LARGE_STUDY,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        warn_independent_sampling: bool = False,
    ) -> None:
        # TPE runs constraints_func (below): the model sampler never sees it, so check it here.
        check_callable("constraints_func", constraints_func, "a function", allow_none=True)
        # The model sampler checks the proposer, independent_sampler and
        # warn_independent_sampling; proposer_options checks n_startup_trials and seed.
        self._model_sampler = _AutoProposerSampler(
            self,
            AutoProposer(**proposer_options(AutoProposer, locals())),
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
        )
        # TPE draws the parameters that not every finished trial has, from the trials that
        # have them; it also runs constraints_func after each trial, as Optuna does.
        with warnings.catch_warnings():  # constant_liar is experimental in Optuna: our choice
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            grouped = self._branch_route == "tpe-group"
            self._tpe = TPESampler(
                constant_liar=True,
                n_startup_trials=n_startup_trials,
                seed=seed,
                constraints_func=constraints_func,
                multivariate=grouped,
                group=grouped,
            )
        # Groups of branch parameters, each proposed jointly by a model of its own once
        # enough finished trials (in the trial's branch) have it.
        self._branch_proposer = BranchProposer(
            seed=seed,
            min_trials=max(MIN_BRANCH_TRIALS, n_startup_trials // 2),
            failed_trials=failed_trials,
            pruned_trials=pruned_trials,
            large_study=large_study,
        )
        # The union routes' model, built on first use (:meth:`_union_model`).
        self._union_options = {
            "n_startup": 1,
            "seed": seed,
            "failed_trials": failed_trials,
            "pruned_trials": pruned_trials,
        }
        self._union_proposer: Proposer | None = None
        self._n_startup_trials = n_startup_trials
        self._user_independent_sampler = independent_sampler is not None
        self._branch_parameters: dict[int, str] = {}
        # Trial id -> the branch parameters proposed for it so far (each group at once), and
        # the number of chunks they were published in.
        self._branch_proposals: dict[int, dict[str, Any]] = {}
        self._branch_chunks: dict[int, int] = {}
        self._branch_groups: dict[int, list[dict[str, Any]]] = {}
        self._shown_choice: tuple[str, str] | None = None

    @property
    def _branch_how(self) -> str:
        """How the branch parameters are drawn, as the trials' reasons say it."""
        if self._branch_route in _UNION_ROUTES:
            return "proposed with every other parameter by one model on the union space"
        if self._branch_route == "model":
            return (
                "proposed group by group by a model (by TPE while a group has fewer than "
                f"{self._branch_proposer.min_trials} finished trials in the trial's branch)"
            )
        return "drawn by TPE with groups" if self._branch_route == "tpe-group" else "drawn by TPE"

    @property
    def last_study(self) -> optuna.Study | None:
        """The study of the latest trial begun in this process (for reporting)."""
        return self._model_sampler.last_study

    # ---------------------------------------------------------------- branch parameters
    def _branch_names(self, study: optuna.Study, trial: FrozenTrial) -> str:
        """The parameters outside the joint search space, as the trial's reason names them."""
        names = self._branch_parameters.get(trial._trial_id)
        if names is None:
            outside = sorted(self._outside_joint_space(study))
            names = ", ".join(outside[:5]) + (", ..." if len(outside) > 5 else "")
            self._branch_parameters[trial._trial_id] = names
        return names

    def _outside_joint_space(self, study: optuna.Study) -> set[str]:
        """Names of finished trials' parameters that are not in the joint search space."""
        trials = study._get_trials(deepcopy=False, states=_FINISHED, use_cache=True)
        if not trials:
            return set()
        seen = {name for t in trials for name in t.params}
        joint = self._model_sampler._relative_distributions(study)
        fixed = {  # one-value distributions are dropped from the joint space, not conditional
            name
            for name, dist in trials[-1].distributions.items()
            if dist.single() and all(name in t.params for t in trials)
        }
        return seen - set(joint) - fixed

    def _branch_value(
        self, study: optuna.Study, trial: FrozenTrial, name: str, distribution: BaseDistribution
    ) -> tuple[bool, Any]:
        """``(True, value)`` of branch parameter ``name`` from its group's joint proposal
        (made at the group's first parameter), or ``(False, None)`` for TPE to draw it."""
        proposed = self._branch_proposals.get(trial._trial_id, {})
        if name not in proposed:
            try:
                if self._branch_route == "model" or self._branch_route in _UNION_ROUTES:
                    group = self._propose_group_by_model(study, trial, name, distribution)
                else:
                    group = self._propose_group_by_tpe(study, trial, name, distribution)
            except Exception as error:  # noqa: BLE001 - never crash the study: TPE draws it
                logger.warning(
                    f"AutoSampler could not propose the branch parameter `{name}` of "
                    f"Trial#{trial.number} jointly ({type(error).__name__}: {error}); "
                    "TPE draws it instead."
                )
                return False, None
            if not group:
                return False, None
            proposed = self._branch_proposals.setdefault(trial._trial_id, {})
            proposed.update(group)
            self._branch_chunks[trial._trial_id] = publish(
                study,
                trial,
                _BRANCH_PARAMS_KEY,
                proposed,
                self._branch_chunks.get(trial._trial_id, 0),
            )
        value = proposed.get(name)
        return (True, value) if value_fits(distribution, value) else (False, None)

    def _propose_group_by_model(
        self, study: optuna.Study, trial: FrozenTrial, name: str, distribution: BaseDistribution
    ) -> dict[str, Any]:
        """The joint proposal of ``name``'s group by the branch proposer; empty for TPE."""
        model_sampler = self._model_sampler
        trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=True)
        finished = [t for t in trials if t.state != OptunaTrialState.RUNNING]
        if sum(t.state in _FINISHED for t in finished) < self._n_startup_trials:
            return {}  # a start-up trial: no model yet
        sign = _signs(study)
        heartbeat = is_heartbeat_enabled(study._storage)
        with model_sampler._lock:  # one proposal at a time: the others are its pending points
            # Read again under the lock, past the trial's cache: what another thread published
            # meanwhile is then a pending point.
            trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=False)
            finished = [t for t in trials if t.state != OptunaTrialState.RUNNING]
            observations = model_sampler._observations(finished, trial, sign, heartbeat)
            for other in trials:  # pending trials with the branch parameters they will have
                if other.state == OptunaTrialState.RUNNING and other._trial_id != trial._trial_id:
                    pending = model_sampler._observation(other, sign)
                    params = {**read_published(other, _BRANCH_PARAMS_KEY), **pending.params}
                    observations.append(dataclasses.replace(pending, params=params))
            common = set(branch_group(name, observations, ()))
            group = sorted(common - set(trial.params))
            having = [t for t in finished if all(n in t.params for n in group)]
            if name not in group or not having:
                return {}
            distributions = {n: having[-1].distributions[n] for n in group}
            distributions[name] = distribution
            if ranges_changed(group, distributions, (t.distributions for t in having)):
                return {}  # a range that changed during the study: TPE handles it
            group = [n for n in group if not distributions[n].single()]
            trial_params = params_from_distributions(trial.distributions)
            context = branch_context(trial.params, trial_params, common)
            space = search_space_from_distributions({n: distributions[n] for n in group})
            proposal = self._branch_proposer.propose(space, observations, context)
            if proposal is None:
                return {}
            if isinstance(proposal, Fallback):
                Ledger.report(
                    proposal,
                    "AutoSampler",
                    f"Trial#{trial.number} (branch parameters {', '.join(group)})",
                    "drawing them with TPE instead",
                    logger,
                    stacklevel=5,
                )
                return {}
            member = proposal.record.get("auto_proposer", "model")
            groups = self._branch_groups.setdefault(trial._trial_id, [])
            groups.append({"params": group, "proposer": member})
            study._storage.set_trial_system_attr(trial._trial_id, AUTO_BRANCH_KEY, groups)
            return dict(proposal.params)

    def _propose_union(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any] | None:
        """Every parameter of every branch, with those of ``search_space``, proposed by one
        model on the union space (SMAC's route); ``None`` for the other routes to propose."""
        trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=True)
        finished = [t for t in trials if t.state != OptunaTrialState.RUNNING]
        if sum(t.state in _FINISHED for t in finished) < self._n_startup_trials:
            return None
        distributions = dict(search_space)
        for name in sorted(self._outside_joint_space(study)):
            having = [t for t in finished if name in t.params]
            current = {name: having[-1].distributions[name]}
            if ranges_changed([name], current, (t.distributions for t in having)):
                return None  # a range that changed during the study: the group route
            if not current[name].single():
                distributions.update(current)
        model_sampler = self._model_sampler
        sign = _signs(study)
        heartbeat = is_heartbeat_enabled(study._storage)
        with model_sampler._lock:
            # Read again under the lock, past the trial's cache: a proposal that another thread
            # published since is then a pending point (running trials are the pending points).
            trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=False)
            observations = model_sampler._observations(trials, trial, sign, heartbeat)
            params = params_from_distributions(distributions)
            proposal = union_proposal(self._union_model(), params, observations)
            if proposal is None or isinstance(proposal, Fallback):
                return None
            # Published before the lock is released: the next worker's pending point.
            publish(study, trial, model_sampler._relative_params_key, dict(proposal.params), 0)
        return dict(proposal.params)

    def _union_model(self) -> Proposer:
        """The union route's model: BORE's random forest (SMAC's), or the rules' choice."""
        if self._union_proposer is None:
            if self._branch_route == "union-gp":
                # The branch groups' threshold: the rules are the same on either route.
                large_study = self._branch_proposer.large_study
                self._union_proposer = AutoProposer(**self._union_options, large_study=large_study)
            else:
                self._union_proposer = BOREProposer(classifier="rf", **self._union_options)
        return self._union_proposer

    def _propose_group_by_tpe(
        self, study: optuna.Study, trial: FrozenTrial, name: str, distribution: BaseDistribution
    ) -> dict[str, Any]:
        """The joint proposal of ``name``'s group (Optuna's decomposition) by multivariate TPE;
        empty for TPE's univariate draw."""
        with self._model_sampler._lock:  # TPE keeps the decomposition on the sampler
            self._tpe.infer_relative_search_space(study, trial)
            space_group = self._tpe._search_space_group
            if space_group is None:
                return {}
            for sub_space in space_group.search_spaces:
                if name in sub_space:
                    group = {
                        n: d
                        for n, d in sub_space.items()
                        if n not in trial.params and not d.single()
                    }
                    group[name] = distribution
                    return self._tpe.sample_relative(study, trial, group)
        return {}

    def _show_choice(
        self, study: optuna.Study, trial: FrozenTrial, proposer: str, reason: str
    ) -> None:
        storage = study._storage
        storage.set_trial_system_attr(trial._trial_id, AUTO_PROPOSER_KEY, proposer)
        storage.set_trial_system_attr(trial._trial_id, AUTO_REASON_KEY, reason)
        # Logged once per change of rule: the details in parentheses may change every trial.
        choice = (proposer, reason.split(" (")[0])
        if proposer != "start-up" and self._shown_choice != choice:
            self._shown_choice = choice
            logger.info(
                f"AutoSampler: from Trial#{trial.number} on, trials are proposed by {proposer}: "
                f"{reason}."
            )

    # ---------------------------------------------------------------- Optuna's hooks
    def reseed_rng(self) -> None:
        self._model_sampler.reseed_rng()
        self._tpe.reseed_rng()
        with self._model_sampler._lock:
            self._branch_proposer.reseed(None)
            if self._union_proposer is not None:
                self._union_proposer.reseed(None)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._model_sampler.before_trial(study, trial)
        self._tpe.before_trial(study, trial)

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        self._branch_names(study, trial)  # before the proposal, whose reason names them
        return self._model_sampler.infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:  # the first trials: the independent sampler draws them
            self._show_choice(study, trial, "start-up", "no finished trial defines the space yet")
        elif (
            self._branch_route in _UNION_ROUTES
            and self._branch_names(study, trial)
            and not self._user_independent_sampler
        ):
            try:
                params = self._propose_union(study, trial, search_space)
            except Exception as error:  # noqa: BLE001 - never crash the study
                logger.warning(
                    f"AutoSampler could not propose Trial#{trial.number} on the union space "
                    f"({type(error).__name__}: {error}); the usual route proposes it instead."
                )
                params = None
            if params is not None:
                branch = {n: v for n, v in params.items() if n not in search_space}
                self._branch_proposals[trial._trial_id] = branch
                self._show_choice(
                    study,
                    trial,
                    "union",
                    f"{_UNION_ROUTES[self._branch_route]} on the union "
                    "of the branches' parameters",
                )
                return {n: params[n] for n in search_space}
        return self._model_sampler.sample_relative(study, trial, search_space)

    def sample_independent(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        if self._branch_names(study, trial) and not self._user_independent_sampler:
            if self._branch_route != "tpe" and not param_distribution.single():
                found, value = self._branch_value(study, trial, param_name, param_distribution)
                if found:
                    return value
            return self._tpe.sample_independent(study, trial, param_name, param_distribution)
        return self._model_sampler.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: OptunaTrialState,
        values: Sequence[float] | None,
    ) -> None:
        self._branch_parameters.pop(trial._trial_id, None)
        self._branch_proposals.pop(trial._trial_id, None)
        self._branch_chunks.pop(trial._trial_id, None)
        self._branch_groups.pop(trial._trial_id, None)
        # TPE's hook runs constraints_func (the legacy constraints the model reads too).
        self._tpe.after_trial(study, trial, state, values)
        self._model_sampler.after_trial(study, trial, state, values)
