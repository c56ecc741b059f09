"""What every proposer shares: seeding, the initial design and the fallbacks.

:func:`safe_propose` is the fallback policy of every adapter: a model that fails never crashes
the user's study; the adapter proposes without the model instead and reports the real cause.
"""

from __future__ import annotations

import abc
import sys
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

from bore_samplers.acquisitions.base import Acquisition
from bore_samplers.models.model_set import FitPolicy, ModelSet, ModelSetBuilder
from bore_samplers.multi_objective import parego_history, simplex_weights
from bore_samplers.observations import History, Observation, TrialState, history_from_observations
from bore_samplers.optimizers import (
    keep_away_from_pending,
    maximize_over_space,
    pending_spacing,
    select_distinct,
)
from bore_samplers.space import SearchSpace
from bore_samplers.validation import check_bool, check_choice, check_float, check_int, check_seed

ProposalT = TypeVar("ProposalT")

__all__ = [
    "BASIN_MERGE_RADIUS",
    "FAILED_TRIALS",
    "Fallback",
    "GPProposer",
    "ModelFallbackWarning",
    "PROPOSAL_SOURCES",
    "Proposal",
    "ProposalSource",
    "Proposer",
    "maximize_acquisition",
    "maximize_acquisitions",
    "safe_propose",
]

#: The choices of :attr:`Proposer.failed_trials`.
FAILED_TRIALS = ("bad", "ignore")
#: The choices of :attr:`Proposer.pruned_trials`.
PRUNED_TRIALS = ("bad", "ignore")
#: L-BFGS starts stop on entering the basin of a better start of the same acquisition, within
#: this many lengthscales (:class:`~bore_samplers.optimizers.MixedSpaceOptimizer`'s
#: ``merge_radius``): the starts often climb to one maximiser, and the slowest sets the number
#: of batch calls. On the constrained benchmark cMES's sampler time fell by two thirds, its
#: runs paired with those before 22 / 20 / 18 (real constraints) and 21 / 23 / 16 (crashes)
#: better / equal / worse.
BASIN_MERGE_RADIUS = 0.01

#: Where a proposal came from: the start-up design, the model, or a random fallback inside the
#: proposer (the model had nothing to learn from, e.g. BORE's labels all of one class).
ProposalSource = Literal["start-up", "model", "fallback"]
#: The values of :data:`ProposalSource`.
PROPOSAL_SOURCES: tuple[ProposalSource, ...] = ("start-up", "model", "fallback")

#: The thread-pool libraries found at the last count of imported modules (see
#: :func:`one_blas_thread`).
_CONTROLLER: tuple[int, ThreadpoolController] | None = None


def one_blas_thread() -> Any:
    """A context in which BLAS and OpenMP run one thread (the proposals' small linear algebra
    only pays for more), as ``threadpoolctl.threadpool_limits(limits=1)``.

    The loaded libraries are looked up again only when a module has been imported since the
    last lookup (a new BLAS or OpenMP comes with an import), not at every proposal: the lookup
    takes about 0.7 ms, a twentieth of a batch's lighter proposal.
    """
    global _CONTROLLER
    n_modules = len(sys.modules)
    if _CONTROLLER is None or _CONTROLLER[0] != n_modules:
        _CONTROLLER = (n_modules, ThreadpoolController())
    return _CONTROLLER[1].limit(limits=1)


# The proposers whose random_fallback ran during the model proposal in progress (per thread and
# task): how Proposer.next_proposal tells "fallback" from "model" without a flag on the proposer.
_FELL_BACK: ContextVar[list[Any] | None] = ContextVar("bore_samplers_fell_back", default=None)


@dataclass(frozen=True)
class Proposal:
    """One proposal: the configuration, the record of how it was chosen, and its source.

    Attributes
    ----------
    params
        The configuration, plain Python values valid in the space.
    record
        JSON-serialisable record of how it was chosen (see :meth:`Proposer.propose_with_record`);
        empty for proposers that keep none.
    source
        ``"start-up"`` (the initial design), ``"model"`` or ``"fallback"`` (the proposer had no
        model to use and proposed a uniform random point instead). A model that *raised* gives
        no ``Proposal`` at all: :func:`safe_propose` returns a :class:`Fallback` then.
    """

    params: dict[str, Any]
    record: dict[str, Any]
    source: ProposalSource

    def __post_init__(self) -> None:
        if self.source not in PROPOSAL_SOURCES:
            raise ValueError(f"source must be one of {PROPOSAL_SOURCES}, got {self.source!r}.")


class ModelFallbackWarning(UserWarning):
    """A model-based proposal failed unexpectedly, so the adapter proposed without the model.

    The Optuna samplers then sample the trial with their ``independent_sampler``; the Ray Tune
    searchers suggest a uniform random configuration. The user's study or run goes on.
    """


class SeededRandomness:
    """A random generator from ``seed``, created on first use, and a Sobol scrambling seed.

    The owner sets ``seed`` and starts ``_rng`` and ``_sobol_seed`` as ``None``.
    """

    seed: int | None
    _rng: np.random.Generator | None
    _sobol_seed: int | None

    @property
    def rng(self) -> np.random.Generator:
        """The proposer's random generator, created on first use."""
        if self._rng is None:
            self._rng = np.random.default_rng(self.seed)
        return self._rng

    def reseed(self, seed: int | None = None) -> None:
        """Restart the random generator (and the Sobol scrambling) from ``seed``."""
        self._rng = np.random.default_rng(seed)
        self._sobol_seed = None


class Proposer(SeededRandomness, abc.ABC):
    """Proposes the next configuration from plain :class:`Observation` records.

    A proposer knows no tuning framework. It is stateless apart from its random generator and
    optional caches (such as warm-started model weights), so any number of independent
    proposers fed the same observations make the same kind of proposal: everything that
    matters is rebuilt from the observations on each call.

    Parameters
    ----------
    n_startup
        Number of finished observations (complete, failed or pruned) below which proposals
        come from the initial design instead of the model.
    seed
        Seed of the proposer's random generator (``None``: nondeterministic).
    failed_trials
        What a FAILED observation (it raised, or returned NaN) teaches: ``"bad"`` (default),
        it is a crash to learn from (a worst-class point for BORE, a crash-classifier point for
        the GP proposers); ``"ignore"``, the failure was transient (preempted, out of time) and
        the observation is left out, so its configuration may be proposed again.
    pruned_trials
        What a PRUNED observation (stopped early by a pruner or a scheduler) teaches:
        ``"bad"`` (default), the pruner judged it worse than its peers, so it is evidence that
        the region is bad (a worst-class point for BORE, a point of the GP proposers' crash
        classifier, a non-target outcome for binary outcomes); ``"ignore"``, it is left out.
        Left out, it leaves no trace in a GP's data: the region keeps its prior uncertainty
        and draws the next proposals back, to be pruned again.
    """

    #: Whether proposals depend on the records of earlier proposals
    #: (:attr:`Observation.record`); adapters skip reading them back otherwise.
    uses_records: bool = False
    #: Short identifier: adapters store a proposal under ``<name>:relative_params`` and its
    #: record under ``<name>:record``. Subclasses set it; the default is the lower-cased
    #: class name, and a subclass of a named proposer keeps that name.
    name: str = ""
    #: Whether multi-objective observations (:attr:`Observation.values`) are accepted; they
    #: are turned into single-objective ones by :meth:`scalarized`.
    supports_multi_objective: bool = True

    def __init__(
        self,
        n_startup: int = 10,
        seed: int | None = None,
        failed_trials: str = "bad",
        pruned_trials: str = "bad",
    ) -> None:
        self.n_startup = n_startup
        self.seed = seed
        self.failed_trials = failed_trials
        self.pruned_trials = pruned_trials
        self._rng: np.random.Generator | None = None
        self._sobol_seed: int | None = None
        #: Model failures in a row (see :func:`safe_propose`).
        self.consecutive_fallbacks = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:  # a subclass of a named proposer keeps its name
            cls.name = cls.__name__.lower()

    @staticmethod
    def checked(proposer: Any) -> Proposer:
        """``proposer``, validated (:meth:`validate`); a ``TypeError`` if it is no Proposer."""
        if not isinstance(proposer, Proposer):
            raise TypeError(f"proposer must be a Proposer, got {type(proposer).__name__}.")
        proposer.validate()
        return proposer

    def validate(self) -> None:
        """Raise ``ValueError`` (or ``TypeError``) on invalid settings, building nothing heavy.

        Adapters call it when they are built, so that a bad setting fails at once rather than
        at the first model-based proposal. Subclasses with settings override it.
        """
        check_int("n_startup", self.n_startup, minimum=0)
        check_seed("seed", self.seed)
        check_choice("failed_trials", self.failed_trials, FAILED_TRIALS)
        check_choice("pruned_trials", self.pruned_trials, PRUNED_TRIALS)

    def propose(self, space: SearchSpace, observations: Sequence[Observation]) -> dict[str, Any]:
        """The next configuration to evaluate, as plain Python values valid in ``space``.

        Observations may include RUNNING ones (pending points): the proposal avoids them.
        """
        return self.propose_with_record(space, observations)[0]

    def propose_with_record(
        self, space: SearchSpace, observations: Sequence[Observation]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The next configuration and a JSON-serialisable record of how it was chosen.

        Adapters store the record with the trial and pass it back as
        :attr:`Observation.record`; it is empty for proposers that keep no such state.
        :meth:`next_proposal` gives the same proposal with its source.
        """
        proposal = self.next_proposal(space, observations)
        return proposal.params, proposal.record

    def next_proposal(self, space: SearchSpace, observations: Sequence[Observation]) -> Proposal:
        """The next configuration, its record and where it came from (:class:`Proposal`).

        What adapters call (through :func:`safe_propose`). Observations may include RUNNING
        ones (pending points): the proposal avoids them.

        BLAS and OpenMP run on one thread meanwhile: the matrices are small, and on a busy
        machine (or beside a user's multi-threaded training) more threads only contend.
        """
        # The start-up design moves past every observation, ignored ones included, or it
        # would propose the same failed point again and again.
        everything = history_from_observations(space, observations)
        history = self.usable_history(everything)
        if self.n_finished(history.states) < self.n_startup:
            u = self.initial_design(everything)
            return Proposal(space.decode(u[None, :])[0], {}, "start-up")
        history = self.scalarized(history)
        fell_back: list[Any] = []
        token = _FELL_BACK.set(fell_back)
        try:
            with one_blas_thread():
                u, record = self.propose_from_model_with_record(history)
        finally:
            _FELL_BACK.reset(token)
        # Only this proposer's own fallback counts, not that of a proposer it consults (the
        # portfolio's BORE nominee).
        source: ProposalSource = "fallback" if any(p is self for p in fell_back) else "model"
        return Proposal(space.decode(u[None, :])[0], record, source)

    def scalarized(self, history: History) -> History:
        """A multi-objective ``history`` as a single-objective one (others are unchanged).

        ParEGO (Knowles, *ParEGO: A Hybrid Algorithm With On-Line Landscape Approximation for
        Expensive Multiobjective Optimization Problems*, IEEE TEVC 10(1), 2006): each
        objective normalised to ``[0, 1]`` over the observations, then the augmented
        Chebyshev scalarisation ``max_i w_i f_i + 0.05 Σ_i w_i f_i`` under a weight drawn
        afresh for each proposal, uniformly on the simplex, from the proposer's generator
        (:func:`~bore_samplers.multi_objective.parego_history`). Each proposal thus optimises
        towards another part of the Pareto front with the single-objective algorithm, its
        constraints and its failed, pruned and pending observations unchanged. Proposers
        with another scalarisation (BORE's MBORE labels) override this.

        Raises
        ------
        ValueError
            If the proposer does not support multi-objective observations.
        """
        if history.objectives is None:
            return history
        if not self.supports_multi_objective:
            raise ValueError(
                f"{type(self).__name__} optimises a single objective; it cannot be used with "
                f"multi-objective observations ({history.objectives.shape[1]} objectives)."
            )
        return parego_history(history, simplex_weights(history.objectives.shape[1], self.rng))

    def n_finished(self, states: Iterable[TrialState]) -> int:
        """The start-up count: observations in ``states`` that are finished (not RUNNING) and
        not left out by ``failed_trials``/``pruned_trials``. The one definition that every
        adapter uses (:mod:`bore_samplers.proposers.ledger`)."""
        ignored = {TrialState.RUNNING}
        if self.failed_trials == "ignore":
            ignored.add(TrialState.FAILED)
        if self.pruned_trials == "ignore":
            ignored.add(TrialState.PRUNED)
        return sum(state not in ignored for state in states)

    def usable_history(self, history: History) -> History:
        """``history`` less what ``failed_trials`` and ``pruned_trials`` leave out."""
        if self.failed_trials == "ignore":
            history = history.without(TrialState.FAILED)
        if self.pruned_trials == "ignore":
            history = history.without(TrialState.PRUNED)
        return history

    @abc.abstractmethod
    def propose_from_model(self, history: History) -> np.ndarray:
        """One snapped unit point chosen by the algorithm's model."""

    def propose_from_model_with_record(self, history: History) -> tuple[np.ndarray, dict]:
        """:meth:`propose_from_model` and its record (empty unless a subclass keeps one)."""
        return self.propose_from_model(history), {}

    def initial_design(self, history: History) -> np.ndarray:
        """The next point of a scrambled Sobol sequence not already in ``history``.

        The sequence position is the number of observations (pending ones included), so
        workers that ask at once continue the sequence rather than repeat its first point.
        """
        if self._sobol_seed is None:
            self._sobol_seed = int(self.rng.integers(2**31))
        skip = len(history)
        candidates = history.space.sample_sobol(8, seed=self._sobol_seed, skip=skip)
        # First not-yet-seen point in sequence order (scores decreasing with position).
        return select_distinct(candidates, -np.arange(len(candidates)), history.u)

    @staticmethod
    def pending_spacing(history: History) -> tuple[np.ndarray, float]:
        """Pending points and the distance that proposals should keep from them.

        The policy of :func:`bore_samplers.optimizers.pending.pending_spacing`, which every
        proposer follows.
        """
        return pending_spacing(history)

    def random_fallback(self, history: History) -> np.ndarray:
        """A uniform random point not already in ``history`` (when no model can be fitted).

        A proposal that uses it has the source ``"fallback"`` (:meth:`next_proposal`).
        """
        fell_back = _FELL_BACK.get()
        if fell_back is not None:
            fell_back.append(self)
        # Enough candidates to find an unseen configuration in a nearly exhausted grid.
        candidates = history.space.sample_uniform(1024, self.rng)
        return select_distinct(candidates, np.zeros(len(candidates)), history.u)


class GPProposer(Proposer):
    """A proposer whose GP models come from one :class:`ModelSetBuilder`, kept between proposals.

    The builder holds the warm starts of the hyperparameter fits, so it lives as long as the
    proposer (and is pickled with it). Subclasses store the settings below in their
    constructor, or override :meth:`fit_policy`.

    Attributes
    ----------
    marginalize_hyperparameters, n_hyperparameter_samples
        Average over slice samples of the objective GP's hyperparameters instead of using the
        MAP point (:attr:`FitPolicy.marginalize`).
    reoptimize_growth, reoptimize_after
        From ``reoptimize_after`` observations on, the hyperparameters are optimised again
        only once the observations have grown by ``reoptimize_growth`` since the last
        optimisation; in between the GP is conditioned on the new data with the last
        hyperparameters (:attr:`FitPolicy.reoptimize_growth`). ``reoptimize_growth=1.0``
        optimises at every proposal. The samplers' default is 1.05 from 100 observations:
        below, a fit is cheap and each new point moves the MAP more.
    """

    marginalize_hyperparameters: bool
    n_hyperparameter_samples: int
    reoptimize_growth: float
    reoptimize_after: int

    def __init__(
        self,
        n_startup: int = 10,
        seed: int | None = None,
        failed_trials: str = "bad",
        pruned_trials: str = "bad",
    ) -> None:
        super().__init__(
            n_startup=n_startup,
            seed=seed,
            failed_trials=failed_trials,
            pruned_trials=pruned_trials,
        )
        self._builder: ModelSetBuilder | None = None
        self._round_starts = RoundStarts()

    def validate(self) -> None:
        """:meth:`Proposer.validate`, the GP fit settings where the subclass has them, and
        the fit policy's own checks."""
        super().validate()
        # A subclass that overrides fit_policy (the binary proposer) has none of these.
        if hasattr(self, "marginalize_hyperparameters"):
            check_bool("marginalize_hyperparameters", self.marginalize_hyperparameters)
            check_int("n_hyperparameter_samples", self.n_hyperparameter_samples, minimum=1)
            check_float("reoptimize_growth", self.reoptimize_growth, low=1.0)
            check_int("reoptimize_after", self.reoptimize_after, minimum=0)
        self.fit_policy()

    def fit_policy(self) -> FitPolicy:
        """How the GP hyperparameters are fitted (raises ``ValueError`` on bad settings)."""
        return FitPolicy(
            marginalize=self.marginalize_hyperparameters,
            n_samples=self.n_hyperparameter_samples,
            reoptimize_growth=self.reoptimize_growth,
            reoptimize_after=self.reoptimize_after,
        )

    def model_builder(self) -> ModelSetBuilder:
        """The builder of this proposer's models (kept: it holds the warm starts)."""
        if self._builder is None:
            self._builder = ModelSetBuilder(self.fit_policy())
        return self._builder


@dataclass(frozen=True)
class Fallback:
    """A model-based proposal that failed: the error, and how many failed in a row.

    Attributes
    ----------
    error
        The exception the proposer raised.
    consecutive
        Failures in a row, this one included (1 for an isolated failure).
    """

    error: BaseException
    consecutive: int

    def message(self, proposer: str, what: str, instead: str) -> str:
        """A one-line explanation, e.g. for a log: who failed on what, why, and what now.

        Parameters
        ----------
        proposer
            Who proposes, e.g. ``"CMESSampler"``.
        what
            What it failed to propose, e.g. ``"Trial#12"``.
        instead
            What happens instead, e.g. ``"sampling it with RandomSampler"``.
        """
        text = (
            f"{proposer} could not propose {what} from its model "
            f"({type(self.error).__name__}: {self.error}); {instead}."
        )
        if self.consecutive > 1:
            text += (
                f" The model has failed on {self.consecutive} proposals in a row, so these "
                "proposals are not model-based."
            )
        return text


def safe_propose(
    proposer: Proposer, space: SearchSpace, observations: Sequence[Observation]
) -> Proposal | Fallback:
    """:meth:`Proposer.next_proposal`, or a :class:`Fallback` if the proposer raised.

    Every adapter proposes through this function (or :func:`fallback_on_error`), so a failing
    model never crashes a user's study; the adapter then proposes without the model (Optuna:
    the ``independent_sampler``; Ray Tune: a uniform random configuration), reports
    :meth:`Fallback.message`, and gives the trial the source ``"fallback"``.
    """
    return fallback_on_error(proposer, lambda: proposer.next_proposal(space, observations))


def fallback_on_error(proposer: Any, propose: Callable[[], ProposalT]) -> ProposalT | Fallback:
    """``propose()``, or a :class:`Fallback` if it raised.

    The count of failures in a row is kept on the proposer (``consecutive_fallbacks``).
    """
    try:
        proposal = propose()
    except Exception as error:  # never let a model failure crash the user's study
        proposer.consecutive_fallbacks = getattr(proposer, "consecutive_fallbacks", 0) + 1
        return Fallback(error, proposer.consecutive_fallbacks)
    proposer.consecutive_fallbacks = 0
    return proposal


#: On a follow-up ask of a batch (:class:`RoundStarts`), the Sobol candidates are this
#: fraction of ``n_candidates`` and the local searches half of ``n_local``, with at most this
#: many L-BFGS steps to this gradient tolerance: the last search's local optima are the main
#: starts, and a batch's later members need less polish.
FOLLOW_UP_CANDIDATE_FRACTION = 0.0625
FOLLOW_UP_MAX_ITER = 10
FOLLOW_UP_TOL = 1e-3


class RoundStarts:
    """The last acquisition search's local optima, and what the last full search saw.

    The asks of a batch (B workers asking at once, or a Ray Tune driver filling B slots) see
    nearly the same finished trials; mostly the pending points change between them, and the
    believed outcome of a pending point changes the acquisition near it only. Such a follow-up
    ask starts its local searches from the last search's local optima instead of a fresh set
    of candidates and anchor perturbations: most of them have converged already, so the
    search costs a few steps instead of a few hundred (at 32 workers, the asks after the
    first of a round were most of the sampler's time).

    An ask is a follow-up while it has pending points and every trial that finished since the
    last full search was pending at that search: the batch that search saw is still coming in
    (a driver that fills each slot as its trial ends sees one more finished trial at every
    ask). Once a trial proposed after that search finishes, the next search is full again. A
    sequential study, with no pending point, always searches in full, and so does a study
    whose only pending trials are stale ones (a crashed worker's).
    """

    def __init__(self) -> None:
        self.local_optima: np.ndarray | None = None
        self.n_finished: int | None = None  # finished trials at the last full search
        self.pending: frozenset[bytes] = frozenset()  # its pending points, as row bytes

    @staticmethod
    def _rows(u: np.ndarray) -> list[bytes]:
        return [row.tobytes() for row in np.ascontiguousarray(u, dtype=float)]

    def follow_up(self, history: History) -> np.ndarray | None:
        """The last local optima when this ask continues the last full search's batch (see
        the class docstring); ``None`` when it searches in full."""
        optima = self.local_optima
        running = history.mask(TrialState.RUNNING)
        if (
            optima is None
            or self.n_finished is None
            or optima.shape[1:] != (history.space.n_dims,)
            or not running.any()
        ):
            return None
        finished = history.u[~running]
        new = len(finished) - self.n_finished
        if new < 0:
            return None
        if new and sum(row in self.pending for row in self._rows(finished)) != new:
            return None  # a trial proposed since the full search has finished
        return optima

    def remember(self, history: History, local_optima: np.ndarray, full: bool) -> None:
        """Keep a search's local optima and, after a full search, what it saw."""
        self.local_optima = local_optima
        if full:
            running = history.mask(TrialState.RUNNING)
            self.n_finished = int((~running).sum())
            self.pending = frozenset(self._rows(history.u[running]))


def maximize_acquisition(
    acquisition: Acquisition,
    models: ModelSet,
    rng: np.random.Generator,
    *,
    n_candidates: int = 2048,
    n_local: int = 10,
    space_out_pending: bool = False,
    merge_radius: float = 0.0,
    round_starts: RoundStarts | None = None,
) -> np.ndarray:
    """The maximiser of an acquisition over the space of a model set: what GP proposers propose.

    The mixed-space optimiser (:class:`~bore_samplers.optimizers.MixedSpaceOptimizer`) scores
    ``n_candidates`` Sobol points plus perturbations of the best observations (the model set's
    anchors), then refines ``n_local`` of them with L-BFGS-B in lengthscale-scaled coordinates
    (analytic gradients) alternating with a search over every discrete coordinate. Evaluated
    and pending configurations are never proposed again while another one exists.

    Improvement-based acquisitions need no distance rule for pending points: the models
    believe their outcomes already, and the incumbent counts them. Entropy search does
    (``space_out_pending``): next to a believed minimum the sampled ``y*`` and the posterior
    mean agree to second order while the posterior deviation is first order, so the
    information there stays high; proposals then keep half the expected nearest-neighbour
    spacing away from pending points (:mod:`bore_samplers.optimizers.pending`).
    ``merge_radius``: see :class:`~bore_samplers.optimizers.MixedSpaceOptimizer` and
    :data:`BASIN_MERGE_RADIUS`; ``round_starts``: see :func:`maximize_acquisitions`.
    """
    return maximize_acquisitions(
        [acquisition],
        models,
        rng,
        n_candidates=n_candidates,
        n_local=n_local,
        space_out_pending=[space_out_pending],
        merge_radius=merge_radius,
        round_starts=round_starts,
    )[0]


def maximize_acquisitions(
    acquisitions: Sequence[Acquisition],
    models: ModelSet,
    rng: np.random.Generator,
    *,
    n_candidates: int = 2048,
    n_local: int = 10,
    space_out_pending: Sequence[bool] | None = None,
    merge_radius: float = 0.0,
    primary: int | None = None,
    round_starts: RoundStarts | None = None,
) -> list[np.ndarray]:
    """The maximiser of each acquisition (a portfolio's nominees), as
    :func:`maximize_acquisition` does for one, searched side by side: one candidate set and
    one batched local search for all (:func:`~bore_samplers.optimizers.maximize_over_space`),
    so that acquisitions over the same GPs share its posterior computations.
    ``space_out_pending``: per acquisition (``None``: none does); ``merge_radius`` and
    ``primary`` (the acquisition whose maximiser will be evaluated): see
    :class:`~bore_samplers.optimizers.MixedSpaceOptimizer`. ``round_starts``: the memory of
    the last search, which a follow-up ask of a batch starts from (:class:`RoundStarts`), and
    which this search updates.
    """
    history = models.history
    spaced = [False] * len(acquisitions) if space_out_pending is None else space_out_pending
    keep_away, radii = keep_away_from_pending(history, spaced)
    anchors, warm_starts, local_optima = models.anchors, None, None
    lighter: dict[str, Any] = {}  # a follow-up's L-BFGS limits (else the optimiser's own)
    if round_starts is not None:
        warm_starts = round_starts.follow_up(history)
        if warm_starts is not None:
            n_candidates = max(int(n_candidates * FOLLOW_UP_CANDIDATE_FRACTION), 1)
            n_local = max(n_local // 2, 1)
            lighter = {"max_iter": FOLLOW_UP_MAX_ITER, "tol": FOLLOW_UP_TOL}
            anchors = None  # their neighbourhoods were searched by the first ask
        local_optima = []
    points = maximize_over_space(
        acquisitions,
        history.space,
        rng,
        exclude=history.u,
        keep_away=keep_away,
        radii=radii,
        lengthscales=models.lengthscales,
        anchors=anchors,
        n_candidates=n_candidates,
        n_local=n_local,
        merge_radius=merge_radius,
        primary=primary,
        warm_starts=warm_starts,
        local_optima=local_optima,
        **lighter,
    )
    if round_starts is not None and local_optima:
        round_starts.remember(history, local_optima[0], full=warm_starts is None)
    return points
