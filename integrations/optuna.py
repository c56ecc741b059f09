"""Optuna samplers: thin adapters from Optuna trials to the framework-free proposers.

An adapter translates ``FrozenTrial`` objects into :class:`~bore_samplers.Observation` records
and proposals back into Optuna parameters; it holds no algorithm. Everything a proposal depends
on is read from the study's storage at each call, so several processes sharing one storage
(each with its own sampler object) cooperate: each relative proposal is published in the
trial's system attributes, where other workers read it as a pending point.
"""

from __future__ import annotations

import json
import math
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaTrialState

from bore_samplers.acquisitions.density_ratio import GammaSchedule
from bore_samplers.models.classifiers.base import ProbabilisticClassifier
from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.base import Fallback, ModelFallbackWarning, Proposer, safe_propose
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio.members import PortfolioMember
from bore_samplers.proposers.portfolio.proposer import DEFAULT_PORTFOLIO, PortfolioProposer
from bore_samplers.proposers.portfolio.rewards import RewardTable
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, Param, SearchSpace

__all__ = [
    "BORESampler",
    "CMESSampler",
    "ModelFallbackWarning",
    "PortfolioSampler",
    "search_space_from_distributions",
]

# Under Optuna's logger, so that optuna.logging.set_verbosity and Optuna's format apply.
_logger = optuna.logging.get_logger("optuna.bore_samplers")

# Legacy RDB schemas store system attributes in String(2048); Optuna's samplers chunk likewise.
_SYSTEM_ATTR_MAX_LENGTH = 2045
# Proposals made again when another worker published the same configuration meanwhile.
_MAX_REPROPOSALS = 3

_STATES = {
    OptunaTrialState.COMPLETE: TrialState.COMPLETE,
    OptunaTrialState.FAIL: TrialState.FAILED,
    OptunaTrialState.PRUNED: TrialState.PRUNED,
    OptunaTrialState.RUNNING: TrialState.RUNNING,
}


def search_space_from_distributions(distributions: dict[str, BaseDistribution]) -> SearchSpace:
    """Translate Optuna distributions into a core :class:`SearchSpace`.

    Raises
    ------
    ValueError
        For an empty space or a distribution type the core does not know.
    """
    params: dict[str, Param] = {}
    for name, dist in distributions.items():
        if isinstance(dist, FloatDistribution):
            params[name] = FloatParam(dist.low, dist.high, log=dist.log, step=dist.step)
        elif isinstance(dist, IntDistribution):
            params[name] = IntParam(dist.low, dist.high, log=dist.log, step=dist.step)
        elif isinstance(dist, CategoricalDistribution):
            params[name] = CategoricalParam(tuple(dist.choices))
        else:
            raise ValueError(
                f"Parameter {name!r} has an unsupported distribution {type(dist).__name__}; "
                "use FloatDistribution, IntDistribution or CategoricalDistribution."
            )
    return SearchSpace(params)


def _constraint_values(trial: FrozenTrial) -> dict[str, float]:
    """The trial's constraints by name (a legacy ``constraints_func`` list as "0", "1", ...)."""
    constraints = getattr(trial, "constraints", None)  # Optuna >= 5: dict of named values
    if isinstance(constraints, dict):
        return {str(name): float(value) for name, value in constraints.items()}
    legacy = trial.system_attrs.get("constraints")  # constraints_func of older versions
    return {str(i): float(value) for i, value in enumerate(legacy)} if legacy else {}


class _ProposerSampler(BaseSampler):
    """Everything an Optuna sampler over a core :class:`Proposer` needs, but the proposer.

    Subclasses set ``self._proposer`` in ``__init__`` and a ``_attr_prefix``.
    """

    _attr_prefix = "bore"

    def __init__(
        self,
        *,
        n_startup_trials: int,
        seed: int | None,
        independent_sampler: BaseSampler | None,
        warn_independent_sampling: bool,
    ) -> None:
        self._n_startup_trials = n_startup_trials
        self._seed = seed
        self._independent_sampler = independent_sampler or RandomSampler(seed=seed)
        self._warn_independent_sampling = warn_independent_sampling
        self._search_space = IntersectionSearchSpace(include_pruned=True)
        self._proposer: Proposer  # set by the subclass
        self._lock = threading.Lock()
        self._finished: dict[int, tuple[FrozenTrial, float, Observation]] = {}
        # Trials whose relative sample fell back (its cause logged); bounded, see after_trial.
        self._fallback_trials: set[int] = set()

    @property
    def _relative_params_key(self) -> str:
        return f"{self._attr_prefix}:relative_params"

    @property
    def _record_key(self) -> str:
        return f"{self._attr_prefix}:record"

    # ----------------------------------------------------------------- plumbing
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        state.pop("_finished", None)  # a cache: pickles (Ray, process pools) stay small
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._finished = {}

    def reseed_rng(self) -> None:
        # Called once per worker thread under n_jobs > 1: streams must differ per thread.
        with self._lock:
            self._proposer.reseed(None)
        self._independent_sampler.reseed_rng()

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: OptunaTrialState,
        values: Sequence[float] | None,
    ) -> None:
        self._fallback_trials.discard(trial.number)
        self._independent_sampler.after_trial(study, trial, state, values)

    # ------------------------------------------------------------------ sampling
    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        self._raise_error_if_multi_objective(study)
        with self._lock:  # the intersection cache is not thread-safe
            space = self._search_space.calculate(study)
        return {name: dist for name, dist in space.items() if not dist.single()}

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
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        # Read, propose and publish under one lock: another thread of this process (n_jobs)
        # then reads this proposal as a pending point instead of proposing from the same
        # history. Other processes see it once published, as soon as possible.
        with self._lock:
            trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=True)
            params: dict[str, Any] = {}
            record: dict[str, Any] = {}
            n_params = n_record = 0
            patience = 0.0
            for attempt in range(1 + _MAX_REPROPOSALS):
                if attempt:
                    # Another process proposing at the same time could not see this proposal,
                    # nor we its, and may have chosen the same configuration (a bound of the
                    # space, a grid point). Each worker publishes first and compares second,
                    # so the one comparing later sees the other; the trial with the larger
                    # number proposes again.
                    taken = self._trials_if_taken(study, trial, params, trials, patience)
                    if taken is None:
                        break
                    trials = taken
                observations = self._observations(trials, trial, sign)
                proposed_at = time.monotonic()
                proposal = safe_propose(self._proposer, space, observations)
                if isinstance(proposal, Fallback):
                    if attempt:  # it worked a moment ago: keep the published proposal
                        break
                    self._report_fallback(trial, proposal)
                    return {}
                params, record = proposal
                n_params = self._publish(study, trial, self._relative_params_key, params, n_params)
                if record or n_record:
                    n_record = self._publish(study, trial, self._record_key, record, n_record)
                if not attempt:  # wait about two proposals' time for the others to compare
                    patience = 0.1 + 2.0 * (time.monotonic() - proposed_at)
            self._after_proposal(study, trial, record)
        return params

    def _report_fallback(self, trial: FrozenTrial, fallback: Fallback) -> None:
        """Log (every time, with the count in a row) and warn why the model was not used."""
        message = fallback.message(
            type(self).__name__,
            f"Trial#{trial.number}",
            f"sampling it with {type(self._independent_sampler).__name__} instead",
        )
        self._fallback_trials.add(trial.number)
        _logger.warning(message)
        warnings.warn(message, ModelFallbackWarning, stacklevel=4)

    def _trials_if_taken(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        params: dict[str, Any],
        known: list[FrozenTrial],
        patience: float,
    ) -> list[FrozenTrial] | None:
        """The trials as stored now if ``trial`` must give ``params`` up, else ``None``.

        ``params`` is given up when a trial with a smaller number, or a finished one, holds
        it. When only running trials with larger numbers hold it, they give it up once they
        see this trial's proposal: wait ``patience`` seconds (about two proposals' time) for
        that, and give it up only if they do not (they compared before this trial
        published). Trials finished in ``known`` (the history of the proposal) are not
        compared: the proposer already avoids every configuration there.
        """
        finished = {t.number for t in known if t.state != OptunaTrialState.RUNNING}
        deadline = time.monotonic() + patience
        while True:
            # Straight from the storage: the study's thread-local snapshot may be stale.
            trials = study._storage.get_all_trials(
                study._study_id, deepcopy=False, states=tuple(_STATES)
            )
            holders = [
                t
                for t in trials
                if t.number != trial.number and t.number not in finished and self._holds(t, params)
            ]
            if not holders:
                return None
            if time.monotonic() > deadline or any(
                t.number < trial.number or t.state != OptunaTrialState.RUNNING for t in holders
            ):
                return trials
            time.sleep(0.02)

    def _holds(self, trial: FrozenTrial, params: dict[str, Any]) -> bool:
        """Whether ``trial`` has (or, running, was proposed) the configuration ``params``."""
        theirs = dict(trial.params)
        if trial.state == OptunaTrialState.RUNNING:
            theirs = {**self._published(trial, self._relative_params_key), **theirs}
        return all(name in theirs and theirs[name] == value for name, value in params.items())

    def _after_proposal(
        self, study: optuna.Study, trial: FrozenTrial, record: dict[str, Any]
    ) -> None:
        """Hook after a model proposal is published (e.g. to expose it in user attributes)."""

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
            complete = study._get_trials(
                deepcopy=False, states=(OptunaTrialState.COMPLETE,), use_cache=True
            )
            if len(complete) >= self._n_startup_trials:
                _logger.warning(
                    f"The parameter `{param_name}` in Trial#{trial.number} is sampled "
                    f"independently using `{type(self._independent_sampler).__name__}` instead "
                    f"of `{type(self).__name__}`, because it is not in every finished trial "
                    "(a conditional or dynamic parameter). Pass "
                    "`warn_independent_sampling=False` to silence this."
                )
        return self._independent_sampler.sample_independent(
            study, trial, param_name, param_distribution
        )

    # ------------------------------------------------------------ translation
    def observations(self, study: optuna.Study) -> list[Observation]:
        """Every trial of ``study`` as the proposer sees it (values minimised).

        For inspection: what the model of the next trial will be fitted on, with constraints
        by name and pending trials with their published proposals.
        """
        trials = study._get_trials(deepcopy=False, states=tuple(_STATES), use_cache=False)
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        return [self._observation(trial, sign) for trial in trials]

    def _observations(
        self, trials: list[FrozenTrial], trial: FrozenTrial, sign: float
    ) -> list[Observation]:
        """The observations of ``trials`` other than ``trial``, finished ones from a cache.

        A finished trial never changes, and the storages hand out the same object for it at
        every read (``_CachedStorage`` of RDB, in-memory and journal storages), so its
        observation is built once, not at every ask: with 10 000 trials that translation
        took about as long as fitting BORE's classifier. Call with ``self._lock`` held.
        """
        cache, kept = self._finished, {}
        observations = []
        for other in trials:
            if other.number == trial.number:
                continue
            if other.state == OptunaTrialState.RUNNING:  # its published proposal may change
                observations.append(self._observation(other, sign))
                continue
            entry = cache.get(other._trial_id)
            if entry is None or entry[0] is not other or entry[1] != sign:
                entry = (other, sign, self._observation(other, sign))
            kept[other._trial_id] = entry
            observations.append(entry[2])
        self._finished = kept  # only the trials of the latest read: no unbounded growth
        return observations

    def _observation(self, trial: FrozenTrial, sign: float) -> Observation:
        state = _STATES[trial.state]
        value: float | None = None
        if state is TrialState.COMPLETE and trial.value is not None:
            value = sign * trial.value
        elif state is TrialState.PRUNED and trial.intermediate_values:
            last = trial.intermediate_values[max(trial.intermediate_values)]
            value = sign * last if not math.isnan(last) else None
        params: dict[str, Any] = dict(trial.params)
        if state is TrialState.RUNNING:
            # A pending trial has suggested only some parameters yet; its whole proposal
            # was published by the worker that sampled it.
            params = {**self._published(trial, self._relative_params_key), **params}
        record: dict[str, Any] = {}
        # A retried trial (RetryHeartbeatStaleTrialCallback) carries a copy of the failed
        # trial's system attributes: that record is the failed trial's, not a second proposal.
        if self._proposer.uses_records and "failed_trial" not in trial.system_attrs:
            record = self._published(trial, self._record_key)
        duration = trial.duration.total_seconds() if trial.duration is not None else None
        return Observation(params, value, state, _constraint_values(trial), record, duration)

    @staticmethod
    def _published(trial: FrozenTrial, key: str) -> dict[str, Any]:
        chunks, i = [], 0
        while (chunk := trial.system_attrs.get(f"{key}:{i}")) is not None:
            chunks.append(chunk)
            i += 1
        if not chunks:
            return {}
        try:
            return dict(json.loads("".join(chunks)))
        except (ValueError, TypeError):  # a torn write by a killed worker: ignore it
            return {}

    @staticmethod
    def _publish(
        study: optuna.Study,
        trial: FrozenTrial,
        key: str,
        payload: dict[str, Any],
        previous_chunks: int = 0,
    ) -> int:
        """Store ``payload`` as JSON in chunked system attributes ``key:0``, ``key:1``, ...

        Returns the number of chunks. Chunks left from a longer earlier payload
        (``previous_chunks``) are emptied: attributes cannot be deleted, and empty chunks
        join to the same JSON text.
        """
        text = json.dumps(payload)
        chunks = [
            text[i : i + _SYSTEM_ATTR_MAX_LENGTH]
            for i in range(0, len(text), _SYSTEM_ATTR_MAX_LENGTH)
        ]
        chunks += [""] * (previous_chunks - len(chunks))
        for i, chunk in enumerate(chunks):
            study._storage.set_trial_system_attr(trial._trial_id, f"{key}:{i}", chunk)
        return len(chunks)


class BORESampler(_ProposerSampler):
    """Sampler using BORE: Bayesian optimisation by density-ratio estimation.

    Each trial, the finished trials are split into the best γ-quantile (class 1) and the rest
    (class 0); a probabilistic classifier learns ``π(x) = P(class 1 | x)``, which equals the
    expected improvement up to a constant (Tiao et al., 2021, eq. 10), and the sampler proposes
    its maximiser. Failed, pruned and infeasible (``trial.constraints`` > 0) trials are all
    class 0: the classifier learns to avoid crashing regions. Proposals keep away from running
    trials (pending points). See :mod:`bore_samplers.proposers.bore` for the details.

    Parameters over the intersection search space are sampled jointly; parameters that appear
    only in some trials (conditional or dynamic ones) are sampled by ``independent_sampler``.

    Parameters
    ----------
    gamma
        Proportion γ of trials labelled "good" (paper default 1/3), or a callable from the
        number of ranked trials to γ.
    classifier
        ``"xgboost"`` (default), ``"rf"`` (random forest) or ``"mlp"`` (torch; install
        ``bore-samplers[torch]``), or a
        :class:`~bore_samplers.models.classifiers.ProbabilisticClassifier` instance.
    classifier_options
        Keyword arguments for the named classifier.
    n_startup_trials
        Trials sampled from a scrambled Sobol sequence before the classifier takes over.
    n_candidates
        Budget of the acquisition optimiser (random candidates or DE evaluations); ``None``
        keeps the paper's defaults (500 random candidates, 2000 DE evaluations).
    acquisition_optimizer
        ``"random"``, ``"de"``, ``"lbfgs"`` or ``None``: multi-start L-BFGS for the MLP, random
        search for trees (the paper's ablation, App. G.1, and our benchmarks favour it over DE).
    seed
        Seed for reproducible runs (with ``n_jobs=1``).
    independent_sampler
        Sampler for the first trial and for parameters outside the relative search space;
        :class:`~optuna.samplers.RandomSampler` by default.
    warn_independent_sampling
        Log a warning when a parameter is sampled independently after the startup trials.

    Raises
    ------
    ValueError
        For invalid settings, and when used in a multi-objective study.

    References
    ----------
    L. C. Tiao, A. Klein, M. Seeger, E. V. Bonilla, C. Archambeau, F. Ramos. *BORE: Bayesian
    Optimization by Density-Ratio Estimation.* ICML 2021.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import BORESampler
    >>> study = optuna.create_study(sampler=BORESampler(seed=0))
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=20)
    """

    _attr_prefix = "bore"

    def __init__(
        self,
        *,
        gamma: GammaSchedule = 1 / 3,
        classifier: str | ProbabilisticClassifier = "xgboost",
        classifier_options: dict[str, Any] | None = None,
        n_startup_trials: int = 10,
        n_candidates: int | None = None,
        acquisition_optimizer: str | None = None,
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
    ) -> None:
        super().__init__(
            n_startup_trials=n_startup_trials,
            seed=seed,
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
        )
        self._proposer = BOREProposer(
            gamma=gamma,
            classifier=classifier,
            classifier_options=classifier_options,
            acquisition_optimizer=acquisition_optimizer,
            n_candidates=n_candidates,
            n_startup=n_startup_trials,
            seed=seed,
        )
        self._proposer.validate()


class CMESSampler(_ProposerSampler):
    """Sampler using constrained max-value entropy search (cMES) on Gaussian processes.

    The objective is modelled by a GP with a Matérn 5/2 ARD kernel. Real-valued constraints come
    from ``trial.constraints`` (``trial.set_constraint``; feasible iff every value ≤ 0), each
    with its own GP. Binary feedback comes from the trial state: a FAILED trial (it raised,
    e.g. out of memory) is an infeasible point learnt by a Laplace GP classifier, not a hole in
    the data. Both can be present at once. Each trial maximises the information about the
    constrained minimum, averaged over jointly dependent Thompson samples of it. See
    :mod:`bore_samplers.proposers.cmes` for how every kind of trial enters the models.

    Parameters
    ----------
    acquisition
        ``"cmes"`` (default), or the baselines ``"cei"`` (constrained EI) and ``"ap"``
        (adaptive percentile).
    n_startup_trials
        Trials drawn from a scrambled Sobol sequence before the GPs take over.
    n_y_star_samples, n_discretization, y_star_sampler, binary_confidence, ap_percentile
        See :class:`~bore_samplers.proposers.CMESProposer`.
    marginalize_hyperparameters, n_hyperparameter_samples
        Average the acquisition over slice samples of the objective GP's hyperparameters
        (Snoek et al., 2012) instead of the MAP point; about that many times the cost.
    seed
        Seed for reproducible runs (with ``n_jobs=1``).
    independent_sampler
        Sampler for the first trial and for parameters outside the relative search space.
    warn_independent_sampling
        Log a warning when a parameter is sampled independently after the startup trials.

    References
    ----------
    V. Perrone, I. Shcherbatyi, R. Jenatton, C. Archambeau, M. Seeger. *Constrained Bayesian
    Optimization with Max-Value Entropy Search.* NeurIPS 2019 Workshop on Meta-Learning.
    """

    _attr_prefix = "cmes"

    def __init__(
        self,
        *,
        acquisition: str = "cmes",
        n_startup_trials: int = 10,
        n_y_star_samples: int = 10,
        n_discretization: int = 2000,
        y_star_sampler: str = "joint",
        binary_confidence: float = 0.5,
        ap_percentile: float = 75.0,
        marginalize_hyperparameters: bool = False,
        n_hyperparameter_samples: int = 10,
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
    ) -> None:
        super().__init__(
            n_startup_trials=n_startup_trials,
            seed=seed,
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
        )
        self._proposer = CMESProposer(
            acquisition=acquisition,  # type: ignore[arg-type]
            n_y_star_samples=n_y_star_samples,
            n_discretization=n_discretization,
            y_star_sampler=y_star_sampler,  # type: ignore[arg-type]
            binary_confidence=binary_confidence,
            ap_percentile=ap_percentile,
            marginalize_hyperparameters=marginalize_hyperparameters,
            n_hyperparameter_samples=n_hyperparameter_samples,
            n_startup=n_startup_trials,
            seed=seed,
        )
        self._proposer.validate()


class PortfolioSampler(_ProposerSampler):
    """Sampler using a hedged portfolio of GP acquisition functions: No-PASt-BO and GP-Hedge.

    Each trial, every acquisition of the portfolio (by default PI, EI and GP-LCB on one GP with
    a Matérn 5/2 ARD kernel) nominates its maximiser, and one nominee is chosen with
    probability ``softmax(η r)``, where ``r`` are the members' rewards ``G`` normalised to
    ``[-1, 0]``; after each trial ``G_j ← m G_j - μ(x_j)``, with ``μ`` the posterior mean of the
    GP refitted on the data including the trial (Vasconcelos et al., Algorithm 2).
    ``memory=1, normalize=False`` is GP-Hedge. See :mod:`bore_samplers.proposers.portfolio`.

    The rewards are rebuilt at every trial from the study itself: each proposal's nominees,
    chosen arm and probabilities are stored in the trial's system attributes
    (``portfolio:record:*``), so several processes on one storage share one reward table. The
    arm probabilities and the chosen arm are also set as user attributes (visible in
    optuna-dashboard): ``portfolio:probabilities`` (member name -> probability),
    ``portfolio:arm`` (member name) and ``portfolio:rewards`` (member name -> ``G`` before the
    trial; absent when the choice does not depend on it).

    Constraints set with ``trial.set_constraint`` (feasible iff ``<= 0``) get one GP each and
    FAILED trials train a crash classifier (binary feedback, as in :class:`CMESSampler`); every
    GP member is weighted by the probability of feasibility (MES becomes constrained MES).
    Pending trials are handled as in :class:`CMESSampler`.

    Parameters
    ----------
    portfolio
        Member names, ``"pi"``, ``"ei"``, ``"lcb"``, ``"mes"``, ``"ei_per_second"`` (EI divided
        by the predicted trial duration), ``"bore"`` (BORE's nominee), or
        :class:`~bore_samplers.proposers.portfolio.PortfolioMember` instances (e.g.
        ``ExpectedImprovement(xi=0.1)``).
    eta
        Inverse temperature ``η >= 0`` (paper: 4; 0 chooses uniformly, the random portfolio).
    memory
        Memory factor ``m ∈ [0, 1]`` (paper: 0.7; 1 keeps the whole past, as GP-Hedge).
    normalize
        Normalise the rewards to ``[-1, 0]`` before the softmax (No-PASt-BO); ``False`` for
        GP-Hedge, whose softmax then depends on the scale of the objective.
    marginalize_hyperparameters, n_hyperparameter_samples
        Average the acquisitions over posterior samples of the GP hyperparameters instead of
        the MAP point (see :class:`~bore_samplers.proposers.PortfolioProposer`).
    n_startup_trials
        Trials from a seeded Latin hypercube before the GP takes over (paper: 5).
    seed
        Seed for reproducible runs (with ``n_jobs=1``).
    independent_sampler
        Sampler for the first trial and for parameters outside the relative search space.
    warn_independent_sampling
        Log a warning when a parameter is sampled independently after the startup trials.

    Raises
    ------
    ValueError
        For invalid settings, and when used in a multi-objective study.

    References
    ----------
    T. de P. Vasconcelos, D. A. R. M. A. de Souza, C. L. C. Mattos, J. P. P. Gomes.
    *No-PASt-BO: Normalized Portfolio Allocation Strategy for Bayesian Optimization.* ICTAI 2019.
    M. Hoffman, E. Brochu, N. de Freitas. *Portfolio Allocation for Bayesian Optimization.*
    UAI 2011.

    Examples
    --------
    >>> import optuna
    >>> from bore_samplers import PortfolioSampler
    >>> study = optuna.create_study(sampler=PortfolioSampler(seed=0))
    >>> study.optimize(lambda t: (t.suggest_float("x", -5, 5) - 1) ** 2, n_trials=15)
    >>> study.trials[-1].user_attrs["portfolio:probabilities"]  # doctest: +SKIP
    {'pi': 0.07, 'ei': 0.91, 'lcb': 0.02}
    """

    _attr_prefix = "portfolio"

    def __init__(
        self,
        *,
        portfolio: Sequence[str | PortfolioMember] = DEFAULT_PORTFOLIO,
        eta: float = 4.0,
        memory: float = 0.7,
        normalize: bool = True,
        marginalize_hyperparameters: bool = False,
        n_hyperparameter_samples: int = 10,
        n_startup_trials: int = 5,
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
    ) -> None:
        super().__init__(
            n_startup_trials=n_startup_trials,
            seed=seed,
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
        )
        self._proposer: PortfolioProposer = PortfolioProposer(
            portfolio=portfolio,
            eta=eta,
            memory=memory,
            normalize=normalize,
            marginalize_hyperparameters=marginalize_hyperparameters,
            n_hyperparameter_samples=n_hyperparameter_samples,
            n_startup=n_startup_trials,
            seed=seed,
        )
        self._proposer.validate()

    def _after_proposal(
        self, study: optuna.Study, trial: FrozenTrial, record: dict[str, Any]
    ) -> None:
        # Arm probabilities, chosen arm and rewards as user attributes (optuna-dashboard).
        names = record.get("portfolio")
        if not names or "probabilities" not in record:
            return
        storage, prefix = study._storage, self._attr_prefix
        probabilities = dict(zip(names, record["probabilities"], strict=True))
        storage.set_trial_user_attr(trial._trial_id, f"{prefix}:probabilities", probabilities)
        storage.set_trial_user_attr(trial._trial_id, f"{prefix}:arm", record["arm"])
        if record.get("rewards") is not None:
            rewards = dict(zip(names, record["rewards"], strict=True))
            storage.set_trial_user_attr(trial._trial_id, f"{prefix}:rewards", rewards)

    def reward_table(self, study: optuna.Study) -> RewardTable:
        """The members' rewards rebuilt from ``study`` (what the next trial's choice uses).

        Computed from the study's storage alone, over its current relative search space, so
        any process gets the same table.
        """
        distributions = self.infer_relative_search_space(study, None)  # type: ignore[arg-type]
        if not distributions:  # no finished trial yet: no proposal has been rewarded
            return self._proposer.empty_reward_table()
        space = search_space_from_distributions(distributions)
        observations = self.observations(study)
        with self._lock:
            return self._proposer.reward_table(space, observations)
