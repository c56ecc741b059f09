"""Ray Tune searchers: :class:`ProposerSearch` records each trial as a ledger
:class:`~bore_samplers.proposers.ledger.TrialRecord` (``docs/ray.md`` says what each of Tune's
hooks records); the named searchers are ``ProposerSearch`` over the package's proposers.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ray import cloudpickle
from ray.tune.search import Searcher

from bore_samplers.integrations.ray_space import (
    TuneParam,
    TuneSearchSpace,
    search_space_from_tune,
)
from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.auto import AutoProposer
from bore_samplers.proposers.base import (
    Fallback,
    ModelFallbackWarning,
    ProposalSource,
    Proposer,
)
from bore_samplers.proposers.binary import (
    BinaryOutcomeProposer,
    OutcomeThresholdOption,
    outcome_observation,
)
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.ledger import (
    Ledger,
    TrialRecord,
    finite_or_none,
    reported_constraints,
    reported_values,
    signs_of,
)
from bore_samplers.proposers.options import OUTCOME_THRESHOLD, public_options
from bore_samplers.proposers.portfolio import PortfolioProposer
from bore_samplers.validation import (
    check_constraint_metrics,
    check_given_points,
    check_metric_mode,
)

__all__ = [
    "AutoSearch",
    "BORESearch",
    "BinaryOutcomeSearch",
    "CMESSearch",
    "ModelFallbackWarning",
    "PortfolioSearch",
    "ProposerSearch",
    "TuneParam",
    "TuneSearchSpace",
    "search_space_from_tune",
]

# Under Ray Tune's logger, so that Tune's logging configuration applies.
_logger = logging.getLogger("ray.tune.search.bore_samplers")


@dataclass
class _Trial(TrialRecord):
    """The ledger's record of a trial (Tune's units; ``budget``: the final result's
    ``training_iteration``), and what ``on_trial_result`` last passed."""

    seen_iteration: int | None = None  # last training_iteration passed to on_trial_result
    seen_time: float | None = None  # last time_total_s passed to on_trial_result
    seen_value: float | tuple[float, ...] | None = None  # last passed to on_trial_result
    seen_constraints: dict[str, float] | None = None  # None: a NaN one (the trial failed)


@public_options()
class ProposerSearch(Searcher):
    """A Ray Tune searcher over any framework-free :class:`~bore_samplers.proposers.Proposer`.

    ``docs/ray.md`` says what each hook records, how concurrent trials spread out, and what
    happens when the model fails (a uniform random configuration, logged and warned). The
    searcher pickles, and ``save``/``restore`` continue the same history.

    Parameters
    ----------
    proposer
        The proposer; its settings are checked here (``proposer.validate()``). Its seed also
        seeds the searcher's own fallbacks.
    space
        A Tune search space (nested dicts allowed), or None to take the Tuner's
        ``param_space`` (domains: :mod:`bore_samplers.tune_space`).
    metric, mode
        The metric and ``"min"`` or ``"max"``, or None to take them from ``tune.TuneConfig``
        (given in both places, they must agree); lists of the same length for several
        objectives.
    points_to_evaluate
        Configurations (nested or with ``"a/b"`` keys, possibly partial) suggested first,
        exactly as given.
    evaluated_rewards
        Metric values of ``points_to_evaluate`` measured before: the points enter the model at
        once instead (warm start). See also :meth:`add_evaluated_point`.
    constraints
        Names of metrics the trainable reports beside the objective: the trial is feasible iff
        each is ``<= 0``; a missing one is unknown, a NaN one fails the trial.

    Raises
    ------
    ValueError
        For invalid proposer settings, an unsupported domain (naming its key), a point
        outside the space, metrics and modes that do not match, constraints that name an
        objective, or a metric or mode that conflicts with the Tuner's.

    Examples
    --------
    >>> from bore_samplers import BOREProposer
    >>> from bore_samplers.integrations.ray import ProposerSearch
    >>> searcher = ProposerSearch(BOREProposer(classifier="rf", seed=0), metric="loss", mode="min")
    """

    def __init__(
        self,
        proposer: Proposer,
        space: Mapping[str, Any] | None = None,
        metric: str | list[str] | None = None,
        mode: str | list[str] | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float | Sequence[float]] | None = None,
        *,
        constraints: Sequence[str] | None = None,
    ) -> None:
        Proposer.checked(proposer)
        self._proposer = proposer
        check_metric_mode(metric, mode, type(self).__name__, proposer.supports_multi_objective)
        self._constraints = check_constraint_metrics(constraints, metric)
        check_given_points(space, points_to_evaluate, evaluated_rewards)
        super().__init__(metric=metric, mode=mode)
        self._ledger = Ledger(proposer)
        # For fallbacks and the missing parameters of partial given points.
        self._rng = np.random.default_rng(proposer.seed)
        self._space: TuneSearchSpace | None = None
        self._trials: dict[str, _Trial] = {}
        self._points: list[Mapping[str, Any]] = []  # still to suggest, as the user gave them
        # Evaluated points added before the space was known: (point, value, state, constraints).
        self._unconverted: list[tuple[Any, ...]] = []
        self._n_added = 0
        # Trial id -> where its configuration came from (see proposal_sources).
        self._sources: dict[str, ProposalSource] = {}
        if evaluated_rewards is not None:
            for point, reward in zip(points_to_evaluate or (), evaluated_rewards, strict=True):
                self._add(point, reward, TrialState.COMPLETE, {})
        else:
            self._points = [dict(p) for p in points_to_evaluate or ()]
        if space is not None:
            self._set_space(search_space_from_tune(space))

    @property
    def proposer(self) -> Proposer:
        """The proposer behind this searcher."""
        return self._proposer

    @property
    def proposal_sources(self) -> Mapping[str, ProposalSource]:
        """Trial id -> where the suggested configuration came from, for every suggestion.

        ``"start-up"`` (the initial design, or a point of ``points_to_evaluate``), ``"model"``
        or ``"fallback"`` (the model had nothing to learn from, or it raised and a uniform
        random configuration was suggested). Saved and restored with the searcher.
        """
        return self._sources

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict, **spec: Any
    ) -> bool:
        """Take ``metric``/``mode`` (when given) and the ``param_space`` from the Tuner.

        Returns False, leaving ``config`` to Tune, when the space was given to the constructor.
        """
        multi = self._proposer.supports_multi_objective
        check_metric_mode(metric, mode, type(self).__name__, multi)
        for name, given, own in (("metric", metric, self._metric), ("mode", mode, self._mode)):
            if given and own and given != own:
                # What Tune does for a scheduler built with its own metric and mode.
                raise ValueError(
                    f"{type(self).__name__} was created with {name}={own!r}, but the Tuner "
                    f"passes {name}={given!r}. Give the metric and mode in one place only: "
                    f"to {type(self).__name__} or to tune.TuneConfig."
                )
        if metric:
            check_constraint_metrics(self._constraints, metric)
            self._metric = metric
        if mode:
            self._mode = mode
        if self._space is not None:
            return False
        self._set_space(search_space_from_tune(config))
        return True

    def suggest(self, trial_id: str) -> dict | None:
        """The next configuration (nested, with the constants) for the trial ``trial_id``."""
        space = self._ready()
        if self._points:
            given = space.read_point(self._points.pop(0))
            params = {n: space.params[n].to_core(v, n) for n, v in given.items()}
            if len(params) < len(space.params):  # a partial point: draw the rest uniformly
                params = {**self._uniform_params(space), **params}
            record: Mapping[str, Any] = {}
            source: ProposalSource = "start-up"  # the user's point: the proposer was not asked
        else:
            params, record, source = self._propose(space)
            given = {}
        self._trials[trial_id] = _Trial(params=params, record=record)
        self._sources[trial_id] = source
        return space.to_config(params, given)

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        trial = self._trials.get(trial_id)
        if trial is not None:
            trial.seen_iteration = result.get("training_iteration", trial.seen_iteration)
            trial.seen_time = result.get("time_total_s", trial.seen_time)
            trial.seen_value = self._metric_value(result)
            trial.seen_constraints = self._constraint_values(result)

    def on_trial_complete(
        self, trial_id: str, result: dict | None = None, error: bool = False
    ) -> None:
        trial = self._trials.get(trial_id)
        if trial is None:
            return  # not suggested by this searcher
        if error:
            trial.state, trial.value, trial.duration = TrialState.FAILED, None, trial.seen_time
            return
        if result is None:  # stopped while pending or paused
            if trial.seen_value is None:
                del self._trials[trial_id]  # never evaluated: nothing to learn
            else:  # paused after reporting, then stopped (HyperBand): its last result counts
                trial.state, trial.value, trial.stopped = (
                    TrialState.COMPLETE,
                    trial.seen_value,
                    True,
                )
                trial.duration, trial.budget = trial.seen_time, trial.seen_iteration
                self._take_constraints(trial, trial.seen_constraints)
            return
        value = self._metric_value(result)
        trial.state = TrialState.COMPLETE if value is not None else TrialState.FAILED
        trial.value = value
        self._take_constraints(trial, self._constraint_values(result))
        trial.duration = result.get("time_total_s", trial.seen_time)
        trial.budget = result.get("training_iteration")
        # Cut short: the scheduler stopped it on a result it kept from on_trial_result, or it
        # was paused (HyperBand) and then stopped with its last, not-done result.
        trial.stopped = (
            trial.budget is not None and trial.budget != trial.seen_iteration
        ) or result.get("done") is False

    def add_evaluated_point(
        self,
        parameters: dict,
        value: float | Sequence[float],
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
        constraints: Mapping[str, float] | None = None,
    ) -> None:
        """Warm-start from a configuration evaluated elsewhere.

        ``parameters`` may be nested or use ``"a/b"`` keys. ``error=True`` (or a NaN or
        missing value) adds a FAILED observation; ``pruned=True`` a PRUNED one with ``value``,
        or the last of ``intermediate_values`` when ``value`` is None. ``constraints``: the
        point's values of the searcher's ``constraints`` (as a result reports them).
        """
        if pruned and value is None and intermediate_values:
            value = intermediate_values[-1]
        state = TrialState.PRUNED if pruned else TrialState.COMPLETE
        state = TrialState.FAILED if error else state
        self._add(parameters, None if error else value, state, constraints or {})

    def save(self, checkpoint_path: str) -> None:
        """Pickle the searcher's whole state (history, proposer, random generators)."""
        with open(checkpoint_path, "wb") as file:
            cloudpickle.dump(self.__dict__.copy(), file)

    def restore(self, checkpoint_path: str) -> None:
        """Continue from a :meth:`save`: the same history, space, metric and generators."""
        with open(checkpoint_path, "rb") as file:
            self.__dict__.update(pickle.load(file))

    @property
    def search_space(self) -> TuneSearchSpace | None:
        """The translated search space, once known."""
        return self._space

    @property
    def observations(self) -> dict[str, Observation]:
        """Trial id -> the trial as the proposer sees it at the next suggestion.

        Values are minimised (negated for ``mode="max"``; with several metrics, ``values``
        holds them all and ``value`` the first); points added through
        ``evaluated_rewards`` or :meth:`add_evaluated_point` have ids ``"evaluated_<i>"``.
        """
        modes = self._mode if isinstance(self._mode, list | tuple) else [self._mode]
        signs = signs_of([mode or "min" for mode in modes])
        observations = self._ledger.observations(self._trials.values(), signs)
        return dict(zip(self._trials, observations, strict=True))

    def _ready(self) -> TuneSearchSpace:
        name = type(self).__name__
        if self._space is None:
            raise RuntimeError(
                f"{name} has no search space: pass space= to {name}, or a param_space with Tune "
                "domains to tune.Tuner."
            )
        if not self._metric or not self._mode:
            raise RuntimeError(
                f"{name} does not know which metric to optimise: pass metric= and mode= to "
                f"{name}, or to tune.TuneConfig (Tune forwards them only together with a "
                "param_space)."
            )
        return self._space

    def _set_space(self, space: TuneSearchSpace) -> None:
        for point in self._points:  # fail now, not at the n-th suggestion
            for name, value in space.read_point(point).items():
                try:
                    space.params[name].to_core(value, name)
                except ValueError as error:
                    raise ValueError(f"points_to_evaluate: {error}") from error
        self._space = space
        pending, self._unconverted = self._unconverted, []
        for point, value, state, constraints in pending:
            self._add(point, value, state, constraints)

    def _constraint_values(self, result: Mapping[str, Any]) -> dict[str, float] | None:
        """The constraints reported in ``result`` (missing ones left out); None if one is NaN."""
        values, has_nan = reported_constraints(self._constraints, result)
        return None if has_nan else values

    @staticmethod
    def _take_constraints(trial: _Trial, constraints: dict[str, float] | None) -> None:
        if constraints is None:  # a NaN constraint: failed, as in an Optuna study
            trial.state, trial.value = TrialState.FAILED, None
        else:
            trial.constraints = constraints

    def _metric_value(self, result: Mapping[str, Any]) -> float | tuple[float, ...] | None:
        """The metric of ``result`` (Tune's units), a tuple for several; None if unusable."""
        if isinstance(self._metric, list | tuple):
            return reported_values([result.get(name) for name in self._metric])
        return finite_or_none(result.get(self._metric))

    def _add(
        self,
        point: Mapping[str, Any],
        value: float | Sequence[float] | None,
        state: TrialState,
        result: Mapping[str, Any],
    ) -> None:
        if self._space is None:
            self._unconverted.append((dict(point), value, state, dict(result)))
            return
        given = self._space.read_point(point)
        missing = sorted(set(self._space.params) - set(given))
        if missing:
            raise ValueError(f"The evaluated point {dict(point)!r} misses {missing}.")
        params = {n: self._space.params[n].to_core(v, n) for n, v in given.items()}
        value = reported_values(value)
        if value is None and state is TrialState.COMPLETE:
            state = TrialState.FAILED
        trial = _Trial(params=params, state=state, value=value)
        self._take_constraints(trial, self._constraint_values(result))
        self._trials[f"evaluated_{self._n_added}"] = trial
        self._n_added += 1

    def _propose(
        self, space: TuneSearchSpace
    ) -> tuple[dict[str, Any], Mapping[str, Any], ProposalSource]:
        """The proposer's configuration, record and source; a uniform one if it raised."""
        proposal = self._ledger.propose(space.space, list(self.observations.values()))
        if isinstance(proposal, Fallback):  # never let a model failure crash the experiment
            self._ledger.report(
                proposal,
                type(self).__name__,
                f"trial {len(self._trials) + 1}",
                "using a uniform random configuration instead",
                _logger,
                stacklevel=3,  # Tune's call of suggest
            )
            return self._uniform_params(space), {}, "fallback"
        return proposal.params, proposal.record, proposal.source

    def _uniform_params(self, space: TuneSearchSpace) -> dict[str, Any]:
        return space.space.decode(space.space.sample_uniform(1, self._rng))[0]


@public_options(BOREProposer)
class BORESearch(ProposerSearch):
    """Ray Tune searcher using BORE (the algorithm: :class:`~bore_samplers.BORESampler`).

    Parameters
    ----------
    space, metric, mode, points_to_evaluate, evaluated_rewards, constraints
        See :class:`ProposerSearch`.

    Examples
    --------
    >>> from ray import tune
    >>> from bore_samplers.integrations.ray import BORESearch
    >>> config = tune.TuneConfig(search_alg=BORESearch(seed=0), metric="loss", mode="min")
    """


@public_options(CMESProposer)
class CMESSearch(ProposerSearch):
    """Ray Tune searcher using cMES (the algorithm: :class:`~bore_samplers.CMESSampler`).

    Constraints are metrics named in ``constraints=[...]``; a trial that raises or reports no
    usable metric is crash feedback for the GP classifier.

    Parameters
    ----------
    space, metric, mode, points_to_evaluate, evaluated_rewards, constraints
        See :class:`ProposerSearch`.
    """


@public_options(PortfolioProposer)
class PortfolioSearch(ProposerSearch):
    """Ray Tune searcher using a GP portfolio (:class:`~bore_samplers.PortfolioSampler`).

    The rewards are rebuilt from the records kept with every trial (saved and restored).

    Parameters
    ----------
    space, metric, mode, points_to_evaluate, evaluated_rewards, constraints
        See :class:`ProposerSearch`.
    """


@public_options(AutoProposer)
class AutoSearch(ProposerSearch):
    """Ray Tune searcher that picks the proposer (the rules: :class:`~bore_samplers.AutoSampler`).

    Tune spaces have no conditional parameters, so no parameter is left to TPE. The choice and
    its reason are in each trial's record (``auto_proposer``, ``auto_reason``).

    Parameters
    ----------
    space, metric, mode, points_to_evaluate, evaluated_rewards, constraints
        See :class:`ProposerSearch`.
    """


@public_options(BinaryOutcomeProposer, own=[OUTCOME_THRESHOLD])
class BinaryOutcomeSearch(ProposerSearch, OutcomeThresholdOption):
    """Ray Tune searcher for success (1) or failure (0) metrics: UCB_Φ.

    The counterpart of :class:`~bore_samplers.integrations.binary.BinaryOutcomeSampler`:
    ``mode="max"`` maximises ``P(success)``; another metric than 0 or 1 raises a ``ValueError``.

    Parameters
    ----------
    space, metric, mode, points_to_evaluate, evaluated_rewards, constraints
        See :class:`ProposerSearch`.
    outcome_threshold
        ``None`` (default: 0/1 or a bool only), or ``τ``: metric values ``> τ`` are successes.
    """

    _proposer: BinaryOutcomeProposer

    @property
    def observations(self) -> dict[str, Observation]:
        """Trial id -> the trial as the proposer sees it (value 0: the target outcome)."""
        threshold, maximize = self._outcome_threshold, self._mode == "max"
        return {
            trial_id: outcome_observation(
                observation,
                self._trials[trial_id].value,
                threshold,
                maximize,
                f"Trial {trial_id!r}",
                "BinaryOutcomeSearch",
            )
            for trial_id, observation in super().observations.items()
        }

    def inferred_best_config(self) -> dict[str, Any]:
        """The configuration (nested, with the constants) with the largest inferred
        ``P(success)`` (smallest for ``mode="min"``); see
        :meth:`~bore_samplers.integrations.binary.BinaryOutcomeSampler.inferred_best_params`."""
        space = self._ready()
        params = self._proposer.inferred_best(space.space, list(self.observations.values()))
        return space.to_config(params, {})
