"""No-PASt-BO and GP-Hedge: a hedged portfolio of acquisition functions, as a proposer.

Vasconcelos et al., *No-PASt-BO: Normalized Portfolio Allocation Strategy for Bayesian
Optimization* (ICTAI 2019), Algorithm 2, which generalises GP-Hedge (Hoffman, Brochu & de
Freitas, *Portfolio Allocation for Bayesian Optimization*, UAI 2011; the paper's Algorithm 1).
Each model-based step

1. fits one objective GP on the complete observations and lets every member of the portfolio
   (:mod:`~bore_samplers.proposers.portfolio.members`) nominate its maximiser ``x_j(t)``;
2. normalises the rewards ``G_j`` to ``[-1, 0]`` (eq. 9; all equal: uniform) and picks
   nominee ``j`` with probability ``softmax(η r)_j`` (eq. 10);
3. after the evaluation, with the GP refitted on the data including it, updates
   ``G_j ← m G_j - μ(x_j(t))`` for *every* member (eq. 8; minimisation: a nominee predicted
   low is rewarded). :mod:`~bore_samplers.proposers.portfolio.rewards` has the algebra.

The probabilities of step 2 do not depend on the step's nominees, so the member is drawn before
they are searched (the same distribution): the chosen member's local searches run to
convergence, and the others', whose nominees enter only the rewards, end with them.

``memory=1, normalize=False`` is GP-Hedge; ``eta=0`` the paper's random portfolio; a
one-member portfolio plain BO with that acquisition.

``selection="entropy"`` replaces steps 2 and 3 by the Entropy Search Portfolio (Shahriari, Wang,
Hoffman, Bouchard-Côté & de Freitas, *An Entropy Search Portfolio for Bayesian Optimization*,
2014): the nominee chosen is the one whose evaluation is expected to say the most about the
optimum. ESP measures that by the entropy of the minimiser's location; here it is the
information gain about the minimum value (MES, Wang & Jegelka, ICML 2017; constrained MES
with feasibility models), which needs no approximation of ``p(x_*)``. A reward built from the
posterior mean favours the member whose nominee lies nearest the incumbent, and the
normalisation of eq. 9 leaves the member with the lowest reward about 1 % (η = 4, three
members), whatever the size of the difference; the information gain has no such bias.

State from observations only
----------------------------
Processes sharing one study each hold their own proposer, so the rewards cannot live in the
proposer. Every model-based proposal returns a record (stored with the trial by the adapter,
handed back in :attr:`Observation.record`) with every member's nominee, the chosen arm and the
probabilities, and the reward table is recomputed from the observations at each proposal:

* the reward *events* are the finished observations whose record names exactly the current
  members, in the order of the observations; pending ones fold in once they finish;
* for the event at position ``i``, ``μ`` is the mean of the GP with the hyperparameters its
  proposal used (stored in its record), conditioned on the complete observations at positions
  ``<= i`` (at most :data:`~bore_samplers.models.model_set.N_MAX_FIT` of them, chosen by
  :func:`~bore_samplers.models.model_set.fit_rows`): the "refitted" GP of eq. 8 without a
  second hyperparameter fit. Only the last :data:`MAX_REWARD_EVENTS` events count (see
  ``memory``). Records without
  hyperparameters (written by an earlier version) get a MAP fit from a fixed restart seed.

The table is thus a deterministic function of the finished observations, whichever process
computes it, and costs one Cholesky factorisation per event, not a fit; the posterior means of
past events are cached. The proposal's own models are fitted like cMES's (warm start from the
last fit, full refit as the data grow), so a proposal pays one warm-started fit. Portfolios
whose choice cannot depend on the rewards (one member, or ``eta=0``) skip the computation.

Pending observations, constraints and crashes enter as in the cMES proposer (Kriging believer, or
for PI and EI with ``fantasize=True`` Monte Carlo fantasies; one
GP per real-valued constraint, matched by name; a Laplace GP classifier of the failed and pruned
observations); GP members are weighted by the probability of feasibility, and MES becomes
constrained MES. The rewards use the objective GP's mean whether or not a nominee is feasible.
Targets are standardised (:mod:`bore_samplers.models.targets`), and the rewards convert the means
back to the values' units. With ``marginalize_hyperparameters=True`` the GP members average over
slice samples of the hyperparameters; the records and rewards keep the MAP point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bore_samplers.models.model_set import FitPolicy, ModelSet, ModelSetBuilder, fit_rows
from bore_samplers.observations import History, Observation, TrialState, history_from_observations
from bore_samplers.optimizers import finite_scores, select_distinct
from bore_samplers.proposers.base import BASIN_MERGE_RADIUS, GPProposer, maximize_acquisitions
from bore_samplers.proposers.portfolio.members import (
    MaxValueEntropySearch,
    NominatingMember,
    PortfolioMember,
    ScoringMember,
    resolve_portfolio,
)
from bore_samplers.proposers.portfolio.rewards import (
    RewardTable,
    hedge_probabilities,
    update_rewards,
)
from bore_samplers.space import SearchSpace
from bore_samplers.validation import (
    InvalidOptionError,
    check_bool,
    check_choice,
    check_float,
    check_int,
)

__all__ = [
    "DEFAULT_PORTFOLIO",
    "MAX_REWARD_EVENTS",
    "PortfolioProposer",
]

#: The paper's 3-function portfolio (§IV-B): PI (ξ = 0.01), EI and GP-LCB (δ = 0.1, ν = 0.2).
DEFAULT_PORTFOLIO: tuple[str, ...] = ("pi", "ei", "lcb")
#: Reward events folded into the rewards: the latest ones (see ``memory``).
MAX_REWARD_EVENTS = 100
# Cached per-event posterior means before the cache is cleared (each entry ~100 bytes).
_MAX_CACHED_MEANS = 200_000
#: Selection rules of the nominee: No-PASt-BO's hedge, or the Entropy Search Portfolio.
SELECTIONS: tuple[str, ...] = ("hedge", "entropy")


def _nominees(record: Any, names: Sequence[str]) -> Mapping | None:
    """The nominees of ``record`` (name -> configuration) if it has one for each of ``names``."""
    nominees = record.get("nominees") if isinstance(record, Mapping) else None
    if isinstance(nominees, Mapping) and set(nominees) == set(names):
        return nominees
    return None


def _nominee_points(record: Any, names: Sequence[str], space: SearchSpace) -> np.ndarray | None:
    """Snapped unit points of the nominees in ``record``, in ``names`` order, if it has them."""
    nominees = _nominees(record, names)
    if nominees is None:
        return None
    try:
        return space.snap(space.encode([nominees[name] for name in names]))
    except (KeyError, ValueError, TypeError):  # a nominee outside the current space
        return None


def _all_nominee_points(
    records: Sequence[Any], names: Sequence[str], space: SearchSpace
) -> list[np.ndarray | None]:
    """:func:`_nominee_points` of each record, encoded in one batch (encoding and snapping
    work column by column, so a batch costs about what one record does); should any record
    not encode, each is encoded on its own."""
    nominees = [_nominees(record, names) for record in records]
    if not records or any(n is None for n in nominees):
        return [_nominee_points(record, names, space) for record in records]
    configs = [n[name] for n in nominees if n is not None for name in names]
    try:
        points = space.snap(space.encode(configs))
    except (KeyError, ValueError, TypeError):
        return [_nominee_points(record, names, space) for record in records]
    return list(points.reshape(len(records), len(names), space.n_dims))


class PortfolioProposer(GPProposer):
    """No-PASt-BO (Vasconcelos et al.), and GP-Hedge with ``memory=1, normalize=False``.

    Each step every member of the portfolio nominates a point; one is chosen with probability
    ``softmax(η r)``, ``r`` the members' rewards normalised to ``[-1, 0]``, and the rewards are
    rebuilt from the records of the finished observations (see the module docstring).

    Parameters
    ----------
    portfolio
        Members: names (``"pi"``, ``"ei"``, ``"lcb"``, ``"mes"``, ``"ei_per_second"``,
        ``"bore"``) or :class:`~bore_samplers.proposers.portfolio.PortfolioMember` instances with
        unique names. Default: the paper's PI (ξ = 0.01), EI (ξ = 0, see
        :class:`~bore_samplers.proposers.portfolio.members.ExpectedImprovement`) and GP-LCB
        (δ = 0.1, ν = 0.2).
    eta
        Inverse temperature ``η >= 0`` of the softmax (paper: 4; 0: uniform choice).
    memory
        Memory factor ``m ∈ [0, 1]`` of the reward update (paper: 0.7; 1: GP-Hedge's sum).
        Only the last ``MAX_REWARD_EVENTS`` (100) reward events are folded in, each on a GP of
        at most :data:`~bore_samplers.models.model_set.N_MAX_FIT` observations: with
        ``m = 0.7`` an event 100 back weighs ``0.7^100 ≈ 3e-16`` of the latest, so nothing
        changes; with ``m = 1`` the rewards are a sliding sum over the last 100 events. Without
        the cap a long study would rebuild one GP per past event at every proposal.
    normalize
        Normalise the rewards to ``[-1, 0]`` before the softmax (No-PASt-BO); ``False`` is
        GP-Hedge's softmax of the raw rewards, whose scale is that of the objective.
    selection
        ``"hedge"`` (default): the nominee is drawn with the probabilities above;
        ``"entropy"``: the Entropy Search Portfolio, the nominee with the largest information
        gain about the minimum (see the module docstring); ``eta``, ``memory`` and
        ``normalize`` are then unused.
    marginalize_hyperparameters
        Average the GP members' acquisitions over ``n_hyperparameter_samples`` posterior
        samples of the GP hyperparameters (slice sampling, Snoek et al.) instead of using the
        MAP point.
    n_hyperparameter_samples
        Number of hyperparameter samples when marginalising.
    reoptimize_growth, reoptimize_after
        When the GP hyperparameters are optimised again (see
        :class:`~bore_samplers.proposers.base.GPProposer`): by default at every proposal
        below 100 observations and every 5 % more observations from there.
    n_candidates, n_restarts
        Sobol candidates scored per GP member by the acquisition optimiser, and the local
        searches started from the best of them (see
        :func:`~bore_samplers.proposers.base.maximize_acquisition`).
    n_startup
        Finished observations before the model takes over; until then, points of a seeded
        Latin hypercube of ``n_startup`` points (paper: 5), indexed by the number of
        observations so that concurrent workers continue the design.
    seed
        Seed for reproducible proposals.
    failed_trials
        ``"bad"`` (default): FAILED observations are crashes, they train the crash
        classifier; ``"ignore"``: they are left out (transient failures). See
        :class:`~bore_samplers.proposers.Proposer`.
    pruned_trials
        ``"bad"`` (default): PRUNED observations (stopped by a pruner or a scheduler) train
        the crash classifier as FAILED ones do, so that proposals leave regions where trials
        get pruned; ``"ignore"``: they are left out.
    """

    name = "portfolio"

    uses_records = True

    def __init__(
        self,
        *,
        portfolio: Sequence[str | PortfolioMember] = DEFAULT_PORTFOLIO,
        eta: float = 4.0,
        memory: float = 0.7,
        normalize: bool = True,
        selection: str = "hedge",
        marginalize_hyperparameters: bool = False,
        n_hyperparameter_samples: int = 10,
        reoptimize_growth: float = 1.05,
        reoptimize_after: int = 100,
        n_candidates: int = 2048,
        n_restarts: int = 10,
        n_startup: int = 5,
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
        self.portfolio = portfolio
        self.eta = eta
        self.memory = memory
        self.normalize = normalize
        self.selection = selection
        self.marginalize_hyperparameters = marginalize_hyperparameters
        self.n_hyperparameter_samples = n_hyperparameter_samples
        self.reoptimize_growth = reoptimize_growth
        self.reoptimize_after = reoptimize_after
        self.n_candidates = n_candidates
        self.n_restarts = n_restarts
        self._members: list[PortfolioMember] | None = None
        self._lhs_seed: int | None = None
        self._reward_builder: ModelSetBuilder | None = None
        self._event_means: dict[bytes, np.ndarray] = {}

    def validate(self) -> None:
        """Raise ``ValueError`` (or ``TypeError``) on invalid settings, building nothing heavy."""
        super().validate()
        # One name or member is a portfolio of one (resolve_portfolio); anything else must be
        # a sequence, or iterating it fails with an error that names no option.
        if not isinstance(self.portfolio, str | PortfolioMember | Sequence):
            raise InvalidOptionError(
                "portfolio must be a sequence of member names or PortfolioMember instances, "
                f"got {self.portfolio!r} ({type(self.portfolio).__name__})."
            )
        try:
            resolve_portfolio(self.portfolio)
        except (TypeError, ValueError) as error:
            raise InvalidOptionError(f"portfolio: {error}") from error
        check_float("eta", self.eta, low=0.0)
        check_float("memory", self.memory, low=0.0, high=1.0)
        check_bool("normalize", self.normalize)
        check_choice("selection", self.selection, SELECTIONS)
        for name in ("n_candidates", "n_restarts"):
            check_int(name, getattr(self, name), minimum=1)

    def members(self) -> list[PortfolioMember]:
        """The resolved portfolio members (built once, so that they may keep warm state)."""
        if self._members is None:
            self._members = resolve_portfolio(self.portfolio)
        return self._members

    def reseed(self, seed: int | None = None) -> None:
        """Restart the random generator and, like the Sobol design, the Latin hypercube."""
        super().reseed(seed)
        self._lhs_seed = None

    # Caches are rebuilt on demand; pickles (Ray, process pools) stay small.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_event_means"] = {}
        return state

    def _event_gp(
        self, space: SearchSpace, u: np.ndarray, values: np.ndarray, record: Any
    ) -> tuple[Any, float, float]:
        """The reward GP of one event: the recorded hyperparameters conditioned on the prefix,
        or, for a record without usable ones, a deterministic MAP fit (fixed restart seed)."""
        theta = record.get("theta") if isinstance(record, Mapping) else None
        if theta is not None:
            try:
                return self.model_builder().fit_regressor(
                    space, "reward", u, values, self.rng, theta=np.asarray(theta, dtype=float)
                )
            except (ValueError, TypeError):  # not numbers, or another space's GP
                pass
        if self._reward_builder is None:
            self._reward_builder = ModelSetBuilder(FitPolicy(warm_start=False))
        return self._reward_builder.fit_regressor(space, "objective", u, values, self.rng)

    # ------------------------------------------------------------------ initial design
    def initial_design(self, history: History) -> np.ndarray:
        """Point ``len(history)`` of a seeded Latin hypercube of ``n_startup`` points (§IV-B).

        Indexed by the number of observations (pending ones included), so that workers asking
        at once continue the design; past its end (failed startup trials), uniform points.
        Points already in ``history`` are skipped.
        """
        space = history.space
        if self._lhs_seed is None:
            self._lhs_seed = int(self.rng.integers(2**31))
        remaining = np.empty((0, space.n_dims))
        if len(history) < self.n_startup:
            from scipy.stats import qmc  # lazy: scipy.stats costs about 1 s to import

            design = qmc.LatinHypercube(d=space.n_dims, seed=self._lhs_seed).random(self.n_startup)
            remaining = space.snap(design[len(history) :])
        candidates = np.vstack([remaining, space.sample_uniform(256, self.rng)])
        return select_distinct(candidates, -np.arange(len(candidates)), history.u)

    # ------------------------------------------------------------------ rewards
    def reward_table(self, space: SearchSpace, observations: Sequence[Observation]) -> RewardTable:
        """The members' rewards rebuilt from ``observations`` (what the next proposal uses)."""
        return self._reward_table(history_from_observations(space, observations))

    def empty_reward_table(self) -> RewardTable:
        """The table before any reward event: ``G = 0`` for every member."""
        names = [member.name for member in self.members()]
        return RewardTable(names, np.zeros(len(names)), np.empty((0, len(names))), [])

    def _reward_table(self, history: History) -> RewardTable:
        names = [member.name for member in self.members()]
        space = history.space
        n = len(history)
        features = space.features(history.u) if n else np.empty((0, space.n_features))
        values = history.values
        complete = history.mask(TrialState.COMPLETE)  # never NaN; ±inf are imputed by rank
        rewards = np.zeros(len(names))
        trace, rows = [], []
        max_fit_rows = self.model_builder().policy.max_fit_rows
        # The subset rule is part of what the means depend on.
        hasher = hashlib.sha1((repr(space) + repr(max_fit_rows)).encode())
        n_prefix = 0
        events: list[tuple[int, bytes]] = []
        for i in range(n):
            if complete[i]:
                hasher.update(features[i].tobytes())
                hasher.update(np.float64(values[i]).tobytes())
                n_prefix += 1
            if history.states[i] is TrialState.RUNNING or n_prefix == 0:
                continue
            if _nominees(history.records[i], names) is not None:
                events.append((i, hasher.copy().digest()))
        events = events[-MAX_REWARD_EVENTS:]
        points = _all_nominee_points([history.records[i] for i, _ in events], names, space)
        for (i, prefix_key), nominees in zip(events, points, strict=True):
            if nominees is None:
                continue
            nominee_features = space.features(nominees)
            # A record without nominees was skipped above, so this one is a mapping.
            theta = repr(history.records[i].get("theta")).encode()
            key = prefix_key + nominee_features.tobytes() + theta
            means = self._event_means.get(key)
            if means is None:
                prefix = history.take(np.flatnonzero(complete & (np.arange(n) <= i)))
                subset = fit_rows(prefix, max_fit_rows)
                if subset is not None:
                    prefix = prefix.take(subset)
                gp, location, scale = self._event_gp(
                    space, prefix.u, prefix.values, history.records[i]
                )
                means = location + scale * gp.predict(nominee_features)[0]
                if len(self._event_means) >= _MAX_CACHED_MEANS:
                    self._event_means.clear()
                self._event_means[key] = means
            rewards = update_rewards(rewards, means, self.memory)
            trace.append(rewards)
            rows.append(i)
        return RewardTable(
            names=names,
            rewards=rewards,
            trace=np.array(trace).reshape(len(trace), len(names)),
            event_rows=rows,
        )

    def _rewards_matter(self) -> bool:
        return len(self.members()) > 1 and self.eta > 0 and self.selection == "hedge"

    # ------------------------------------------------------------------ proposals
    def _nominate(
        self, members: list[PortfolioMember], models: ModelSet, chosen: int | None = None
    ) -> list[np.ndarray]:
        """Every member's nominee. The scoring members' acquisitions are maximised side by
        side (:func:`maximize_acquisitions`): they share candidates and the GP posterior.
        With the ``chosen`` member known beforehand, the others' local searches end with the
        chosen one's (their nominees only enter the rewards)."""
        nominees: dict[int, np.ndarray] = {}
        scoring: list[int] = []
        for i, member in enumerate(members):
            if isinstance(member, NominatingMember):
                nominees[i] = member.nominate(models.history, self.rng)
            elif isinstance(member, ScoringMember):
                scoring.append(i)
            else:
                raise TypeError(f"{member!r} neither scores points nor nominates a point.")
        if scoring:
            scorers = [members[i] for i in scoring]
            points = maximize_acquisitions(
                [member.acquisition(models, self.rng) for member in scorers],
                models,
                self.rng,
                n_candidates=self.n_candidates,
                n_local=self.n_restarts,
                space_out_pending=[member.spaces_out_pending for member in scorers],
                # Three members' ten starts each, in one batch, would otherwise run until the
                # slowest of thirty has converged.
                merge_radius=BASIN_MERGE_RADIUS,
                primary=scoring.index(chosen) if chosen in scoring else None,
                round_starts=self._round_starts,
            )
            nominees.update(zip(scoring, points, strict=True))
        return [nominees[i] for i in range(len(members))]

    def propose_from_model(self, history: History) -> np.ndarray:
        return self.propose_from_model_with_record(history)[0]

    def propose_from_model_with_record(self, history: History) -> tuple[np.ndarray, dict]:
        """The chosen nominee and the record of the step.

        The record (JSON-serialisable) holds ``portfolio`` (member names), ``nominees``
        (name -> parameters of its nominee), ``arm`` (the chosen name), ``probabilities`` and
        ``rewards`` (``G`` before this step, ``None`` when the choice does not depend on it)
        in portfolio order, ``n_rewards`` (reward events folded into ``G``) and ``theta`` (the
        objective GP's internal hyperparameters, which the reward of this step reuses). With fewer
        than two complete observations no GP can be fitted: a uniform random point, no record.
        """
        members = self.members()
        names = [member.name for member in members]
        space = history.space
        if history.mask(TrialState.COMPLETE).sum() < 2:
            return self.random_fallback(history), {}
        table: RewardTable | None = None
        if self._rewards_matter():
            table = self._reward_table(history)
            rewards = table.rewards
        else:
            rewards = np.zeros(len(members))
        probabilities = hedge_probabilities(rewards, self.eta, self.normalize)
        durations = any(getattr(m, "needs_durations", False) for m in members)
        models = self.model_builder().fit(history, self.rng, durations=durations)
        gains = None
        if self.selection == "entropy" and len(members) > 1:
            nominees = self._nominate(members, models)
            gains = self._information_gains(models, np.array(nominees))
            arm = int(np.argmax(gains))  # ties (members nominating one point): the first
            probabilities = np.eye(len(members))[arm]
        elif len(members) > 1:
            # The probabilities do not depend on this step's nominees, so the arm is drawn
            # first (the same distribution as GP-Hedge's draw after nominating): only its
            # nominee is evaluated, and the others, which enter the rewards only, need not
            # cost more local-search steps than it does.
            arm = int(self.rng.choice(len(members), p=probabilities))
            nominees = self._nominate(members, models, chosen=arm)
        else:
            nominees = self._nominate(members, models)
            # Always 0, drawn after nominating as before, so that seeded runs keep their proposals.
            arm = int(self.rng.choice(len(members), p=probabilities))
        decoded = space.decode(np.array(nominees))
        record = {
            "portfolio": names,
            "nominees": dict(zip(names, decoded, strict=True)),
            "arm": names[arm],
            "probabilities": [float(p) for p in probabilities],
            "rewards": None if table is None else [float(g) for g in rewards],
            "n_rewards": 0 if table is None else len(table.event_rows),
            "theta": [float(t) for t in models.objective_theta],
        }
        if gains is not None:
            # JSON for the study's storage: a non-finite gain is stored as null.
            record["information_gains"] = [float(g) if np.isfinite(g) else None for g in gains]
        return nominees[arm], record

    def _information_gains(self, models: ModelSet, nominees: np.ndarray) -> np.ndarray:
        """The (constrained) MES information gain about the minimum of each nominee, as the
        ``"mes"`` member scores points (its defaults: 10 samples of ``y*``); NaN (a degenerate
        posterior) ranks last."""
        acquisition = MaxValueEntropySearch().acquisition(models, self.rng)
        return finite_scores(acquisition(models.history.space.features(nominees)))
