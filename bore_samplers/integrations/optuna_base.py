"""What every Optuna sampler of this package shares, whatever its proposer: :class:`SamplerBase`
(lock, independent sampler, intersection search space, pickling, reseeding, fallback reports)
and the translation of Optuna's distributions into the core's search space.
"""

from __future__ import annotations

import copy
import threading
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
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaTrialState

from bore_samplers.proposers.base import Fallback
from bore_samplers.proposers.ledger import Ledger
from bore_samplers.space import CategoricalParam, FloatParam, IntParam, Param, SearchSpace
from bore_samplers.validation import check_instance

__all__ = [
    "SOURCE_KEY",
    "IntersectionSearchSpace",
    "SamplerBase",
    "logger",
    "params_from_distributions",
    "search_space_from_distributions",
    "value_fits",
]

#: Under Optuna's logger, so that optuna.logging.set_verbosity and Optuna's format apply.
logger = optuna.logging.get_logger("optuna.bore_samplers")

#: The trial system attribute that says where its jointly proposed parameters came from
#: (:data:`bore_samplers.proposers.base.PROPOSAL_SOURCES`); absent on the first trial.
SOURCE_KEY = "bore_samplers:source"


def value_fits(distribution: BaseDistribution, value: Any) -> bool:
    """Whether ``value`` is a valid value of ``distribution`` (``False`` for another type)."""
    try:
        return bool(distribution._contains(distribution.to_internal_repr(value)))
    except (ValueError, TypeError):
        return False


def search_space_from_distributions(distributions: dict[str, BaseDistribution]) -> SearchSpace:
    """Translate Optuna distributions into a core :class:`SearchSpace`.

    Raises
    ------
    ValueError
        For an empty space or a distribution type the core does not know.
    """
    return SearchSpace(params_from_distributions(distributions))


def params_from_distributions(distributions: dict[str, BaseDistribution]) -> dict[str, Param]:
    """Translate Optuna distributions into the core's :data:`Param` (an empty dict for none).

    Raises
    ------
    ValueError
        For a distribution type the core does not know.
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
    return params


class IntersectionSearchSpace:
    """The distributions shared by every finished trial of one study, updated incrementally.

    The same result and cache as :class:`optuna.search_space.IntersectionSearchSpace`, with a
    faster comparison of distributions (most of Optuna's time on a 10 000-trial study goes to
    ``CategoricalDistribution.__eq__``).

    Parameters
    ----------
    include_pruned
        Whether pruned trials count as finished.
    """

    def __init__(self, include_pruned: bool = False) -> None:
        self.include_pruned = include_pruned
        self._states = {OptunaTrialState.COMPLETE, OptunaTrialState.WAITING}
        self._states.add(OptunaTrialState.RUNNING)
        if include_pruned:
            self._states.add(OptunaTrialState.PRUNED)
        self._space: dict[str, BaseDistribution] | None = None
        self._next_number = -1
        self._study_id: int | None = None

    def calculate(self, study: optuna.Study) -> dict[str, BaseDistribution]:
        """The intersection, sorted by parameter name (copies: the caller may keep them); a
        ``ValueError`` for a study other than the first one."""
        if self._study_id is None:
            self._study_id = study._study_id
        elif self._study_id != study._study_id:
            raise ValueError("An IntersectionSearchSpace serves a single study.")
        space, next_number = self._space, -1
        for trial in reversed(study._get_trials(deepcopy=False, use_cache=False)):
            if trial.state not in self._states:
                continue
            if next_number == -1:
                next_number = trial.number + 1
            if self._next_number > trial.number:
                break  # the trials before this one are in the cached intersection
            if not trial.state.is_finished():
                next_number = trial.number  # revisit it once it has finished
                continue
            distributions = trial.distributions
            if space is None:
                space = dict(distributions)
                continue
            # Inlined (a call per distribution costs as much as the comparison): equal
            # attribute dicts (compared in C) are equal distributions; otherwise Optuna's
            # comparison decides (NaN choices, for one).
            space = {
                name: kept
                for name, kept in space.items()
                if (other := distributions.get(name)) is not None
                and type(other) is type(kept)
                and (other.__dict__ == kept.__dict__ or other == kept)
            }
        self._space, self._next_number = space, next_number
        return {name: copy.deepcopy(d) for name, d in sorted((space or {}).items())}


class SamplerBase(BaseSampler):
    """The plumbing of a sampler over a proposer: lock, independent sampler, search space.
    Subclasses implement ``sample_relative`` and may list caches in :attr:`transient_attributes`.

    Parameters
    ----------
    proposer
        The framework-free proposer; it must have ``seed`` and ``reseed``.
    independent_sampler
        Sampler for the first trials and for parameters outside the relative search space
        (default: :class:`~optuna.samplers.RandomSampler` with the proposer's seed).
    include_pruned
        Whether pruned trials count for the intersection search space.
    """

    #: Attributes that are caches, reset to an empty dict after unpickling.
    transient_attributes: tuple[str, ...] = ()
    #: The study of the latest trial (see :attr:`last_study`); never pickled.
    _last_study: optuna.Study | None = None

    def __init__(
        self,
        proposer: Any,
        independent_sampler: BaseSampler | None = None,
        include_pruned: bool = False,
    ) -> None:
        # Checked here: a non-sampler would only fail at the first trial, with AttributeError.
        check_instance(
            "independent_sampler",
            independent_sampler,
            BaseSampler,
            "an optuna.samplers.BaseSampler instance (e.g. RandomSampler(seed=0))",
            allow_none=True,
        )
        self._proposer = proposer
        self._ledger = Ledger(proposer)
        self._independent_sampler = independent_sampler or RandomSampler(seed=proposer.seed)
        self._search_space = IntersectionSearchSpace(include_pruned=include_pruned)
        self._lock = threading.Lock()
        # Trials whose relative sample fell back (its cause logged); removed in after_trial.
        self._fallback_trials: set[int] = set()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        state.pop("_last_study", None)  # a study holds its storage: not the sampler's to copy
        for name in self.transient_attributes:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        for name in self.transient_attributes:
            setattr(self, name, {})

    def reseed_rng(self) -> None:
        # Called once per worker thread under n_jobs > 1: streams must differ per thread.
        with self._lock:
            self._proposer.reseed(None)
        self._independent_sampler.reseed_rng()

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._last_study = study
        self._independent_sampler.before_trial(study, trial)

    @property
    def last_study(self) -> optuna.Study | None:
        """The study whose trial this sampler began last (``None`` before any, and in a copy
        made by pickling): where :func:`~bore_samplers.integrations.reporting.track_proposals`
        reads the trials' sources (:data:`SOURCE_KEY`)."""
        return self._last_study

    def _record_source(self, study: optuna.Study, trial: FrozenTrial, source: str) -> None:
        """Store where the trial's jointly proposed parameters came from (:data:`SOURCE_KEY`)."""
        study._storage.set_trial_system_attr(trial._trial_id, SOURCE_KEY, source)

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: OptunaTrialState,
        values: Sequence[float] | None,
    ) -> None:
        self._fallback_trials.discard(trial.number)
        self._independent_sampler.after_trial(study, trial, state, values)

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self._relative_distributions(study)

    def _relative_distributions(self, study: optuna.Study) -> dict[str, BaseDistribution]:
        """The intersection of the finished trials' distributions, without fixed values."""
        with self._lock:  # the intersection cache is not thread-safe
            space = self._search_space.calculate(study)
        return {name: dist for name, dist in space.items() if not dist.single()}

    def sample_independent(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        return self._independent_sampler.sample_independent(
            study, trial, param_name, param_distribution
        )

    #: The class name that messages give (the public sampler that holds this one, if any).
    public_name: str | None = None

    def _report_fallback(self, trial: FrozenTrial, fallback: Fallback) -> None:
        """Log and warn why the model was not used (:meth:`Ledger.report`)."""
        self._fallback_trials.add(trial.number)
        Ledger.report(
            fallback,
            self.public_name or type(self).__name__,
            f"Trial#{trial.number}",
            f"sampling it with {type(self._independent_sampler).__name__} instead",
            logger,
            stacklevel=4,  # the trial's suggest call, as before the ledger
        )
