"""AutoProposer: one default that picks the proposer for what the study shows.

Each proposal profiles the observations (:class:`StudyProfile`) and hands the proposal to the
member that measured best on that kind of problem (:func:`choose_proposer`):

======================================  ===============  ========================================
what the study shows                     member           why
======================================  ===============  ========================================
every complete value is 0 or 1           ``binary``       UCB_Φ on a probit GP models the outcome's
                                                          probability, not the 0/1 numbers
constraints (``trial.set_constraint``)   ``cei``          constrained EI (Gardner et al., 2014) on
                                                          cMES's GPs of the objective, each
                                                          constraint and crashes
failed trials                            ``cmes``         cMES learns where trials crash (a GP
                                                          classifier) and stays clear of it
at least ``large_study`` finished        ``bore``         a random forest's cost stays flat where
trials                                                    a GP's grows as n³
only categorical parameters, and no      ``cmes``         MES on a GP whose kernel counts changed
branch parameters outside the model                       categories (measured ahead of BORE)
one categorical parameter, and branch    ``bore-lookup``  a conditional space's choice: the branch
parameters outside the model                              parameters make its value noisy; BORE's
                                                          quantile labels measured ahead of cMES;
                                                          each choice's smoothed share of good
                                                          trials (a lookup table), what a forest
                                                          estimates there at 100 times the cost
several categorical parameters only,     ``bore-choice``  as ``bore-lookup``, with a forest of 32
and branch parameters outside the model                   trees that generalises between choices
                                                          (see :data:`CHOICE_FOREST_TREES`)
at least ``HIGH_DIMENSIONAL`` (20)       ``ei``           EI alone on the portfolio's GP: GP-LCB's
parameters                                                β grows with the dimension, and its
                                                          far nominees cost the hedge trials
several objectives                       ``cmes``         MES on each trial's random ParEGO
                                                          scalarisation (measured ahead of the
                                                          portfolio on two benchmarks)
otherwise (mostly categorical spaces     ``portfolio``    the GP-Hedge portfolio (PI, EI, GP-LCB);
included)                                                 on mostly categorical spaces too, it
                                                          measured ahead of BORE and cMES
======================================  ===============  ========================================

This table is the home of the rules: ``AutoSampler`` (Optuna) and ``AutoSearch`` (Ray Tune)
apply them alike, and ``docs/auto.md`` explains them with the benchmark evidence. The chosen
member models the parameters that every finished trial has; in Optuna, parameters that only
some trials have (conditional branches) are proposed group by group by an auto proposer of
each group's own (:class:`~bore_samplers.proposers.branches.BranchProposer`), and drawn by
TPE while a group has fewer than a few finished trials in the trial's branch (a Ray Tune space
here has no conditional parameters). Constraints are ``trial.set_constraint`` in Optuna and
``constraints=[metric names]`` in Ray Tune.

The choice is re-made at every proposal, so it follows the study as it grows (a first crash
moves a continuous study to cMES). Each proposal's record says which member proposed it and
why (``auto_proposer``, ``auto_reason``); the adapters show both on the trial.

Members are built on first use with seeds drawn from the auto proposer's seed, and kept (their
warm starts and caches live as long as the auto proposer).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from bore_samplers.observations import History, TrialState
from bore_samplers.proposers.base import Proposer
from bore_samplers.proposers.binary import BinaryOutcomeProposer
from bore_samplers.proposers.bore import BOREProposer
from bore_samplers.proposers.cmes import CMESProposer
from bore_samplers.proposers.portfolio.proposer import PortfolioProposer
from bore_samplers.validation import check_int

__all__ = [
    "CHOICE_FOREST_TREES",
    "HIGH_DIMENSIONAL",
    "MEMBERS",
    "AutoProposer",
    "Choice",
    "StudyProfile",
    "choose_proposer",
]

#: Trees of BORE's forest on a conditional space's categorical choice of several parameters.
#: With a few categorical columns the trees split on the same columns: on the conditional
#: benchmark's one-parameter choices, 16, 32 and 100 trees proposed the same configurations
#: in every run, and 32 take a third of the time of 100 (BORE's paper). One parameter now
#: gets the lookup table of each choice's share (``bore-lookup``), which proposed them too.
CHOICE_FOREST_TREES = 32

#: The members an :class:`AutoProposer` chooses from, by name. The order fixes each member's
#: seed offset, so a new member goes last.
_MEMBER_CLASSES: dict[str, Any] = {
    "portfolio": PortfolioProposer,
    "cmes": CMESProposer,
    "bore": BOREProposer,
    "binary": BinaryOutcomeProposer,
    "cei": functools.partial(CMESProposer, acquisition="cei"),
    "ei": functools.partial(PortfolioProposer, portfolio=["ei"]),
    "bore-choice": functools.partial(
        BOREProposer, classifier_options={"n_estimators": CHOICE_FOREST_TREES}
    ),
    "bore-lookup": functools.partial(BOREProposer, classifier="lookup"),
}
MEMBERS = tuple(_MEMBER_CLASSES)

#: Finished trials from which BORE takes over from the GPs (see :func:`choose_proposer`).
LARGE_STUDY = 1000

#: Parameters from which EI alone proposes instead of the portfolio (see
#: :func:`choose_proposer`): measured ahead of it in 20-D and 40-D.
HIGH_DIMENSIONAL = 20


@dataclass(frozen=True)
class StudyProfile:
    """What a study shows, as far as the choice of proposer is concerned.

    Attributes
    ----------
    n_params
        Parameters in the joint search space.
    n_categorical
        Categorical parameters among them.
    n_finished
        Observations that are not running (complete, failed, pruned).
    has_constraints
        Some observation reports constraint values.
    has_failures
        Some observation failed (and failed trials are learnt from).
    binary_values
        The complete values are 0 and 1, both seen (on either sign: a maximised outcome
        arrives negated).
    has_branch_parameters
        Some observation has parameters outside the joint search space (a conditional
        space's branches, drawn outside the model).
    n_objectives
        Objectives of the study (1 unless observations carry several values).
    """

    n_params: int
    n_categorical: int
    n_finished: int
    has_constraints: bool
    has_failures: bool
    binary_values: bool
    has_branch_parameters: bool = False
    n_objectives: int = 1

    @classmethod
    def from_history(cls, history: History) -> StudyProfile:
        """The profile of a (usable) history."""
        running = history.mask(TrialState.RUNNING)
        complete = history.mask(TrialState.COMPLETE)
        values = history.values[complete]
        values = values[np.isfinite(values)]
        # Both outcomes seen: with one value alone the target is unknown (the core does not
        # know the direction; a maximised outcome arrives negated).
        distinct = set(np.unique(values).tolist())
        # 0/1 outcomes are one objective by nature.
        binary = history.objectives is None and distinct in ({0.0, 1.0}, {0.0, -1.0})
        has_constraints = bool(
            history.constraints.size and np.isfinite(history.constraints[~running]).any()
        )
        return cls(
            n_params=history.space.n_dims,
            n_categorical=sum(d.is_categorical for d in history.space.dimensions),
            n_finished=int((~running).sum()),
            has_constraints=has_constraints,
            has_failures=bool(history.mask(TrialState.FAILED).any()),
            binary_values=binary,
            has_branch_parameters=history.has_branch_parameters,
            n_objectives=1 if history.objectives is None else history.objectives.shape[1],
        )


@dataclass(frozen=True)
class Choice:
    """The member that proposes, and why (one line a user can read)."""

    proposer: str
    reason: str


def choose_proposer(profile: StudyProfile, large_study: int = LARGE_STUDY) -> Choice:
    """The member for a study that shows ``profile`` (the rules of the module docstring).

    The order matters: a 0/1 objective is modelled as such even with crashes (the binary
    proposer counts them as the non-target outcome), and constraints come before the size
    of the study because only the GP members model them.
    """
    if profile.binary_values:
        return Choice("binary", "every complete value is 0 or 1")
    if profile.has_constraints:
        return Choice("cei", "trials report constraints")
    if profile.has_failures:
        return Choice("cmes", "trials have failed")
    if profile.n_finished >= large_study:
        return Choice("bore", f"{profile.n_finished} finished trials (at least {large_study})")
    if profile.n_categorical == profile.n_params:
        if not profile.has_branch_parameters:
            return Choice("cmes", "every parameter is categorical")
        if profile.n_params == 1:
            return Choice(
                "bore-lookup",
                "the one modelled parameter is categorical, beside branch parameters",
            )
        return Choice(
            "bore-choice", "every modelled parameter is categorical, beside branch parameters"
        )
    if profile.n_params >= HIGH_DIMENSIONAL:
        return Choice(
            "ei", f"{profile.n_params} parameters (at least {HIGH_DIMENSIONAL}): EI alone"
        )
    if profile.n_objectives > 1:
        return Choice("cmes", f"{profile.n_objectives} objectives")
    return Choice("portfolio", "some numeric parameters, no constraint or failure")


class AutoProposer(Proposer):
    """Proposes with the member proposer that suits what the observations show.

    See the module docstring for the rules. Start-up proposals come from this proposer's
    own scrambled Sobol design; after it, each proposal's record carries ``auto_proposer``
    and ``auto_reason`` beside the member's own record.

    Parameters
    ----------
    n_startup
        Finished observations before a member takes over (Sobol points until then).
    seed
        Seed of this proposer and, through it, of every member.
    failed_trials
        ``"bad"`` (default): a failed trial is a crash to learn from (the study moves to
        cMES, which models where trials crash); ``"ignore"``: failures were transient and
        are left out. Passed on to every member.
    pruned_trials
        ``"bad"`` (default): a pruned trial is evidence that its region is bad; ``"ignore"``:
        it is left out. Passed on to every member.
    large_study
        Finished trials from which BORE proposes instead of the Gaussian processes, whose
        cost grows as the cube of the number of trials.
    """

    name = "auto"
    uses_records = True  # the portfolio member rebuilds its rewards from earlier records

    def __init__(
        self,
        *,
        n_startup: int = 10,
        seed: int | None = None,
        failed_trials: str = "bad",
        pruned_trials: str = "bad",
        large_study: int = LARGE_STUDY,
    ) -> None:
        super().__init__(
            n_startup=n_startup,
            seed=seed,
            failed_trials=failed_trials,
            pruned_trials=pruned_trials,
        )
        self.large_study = large_study
        self._members: dict[str, Proposer] = {}

    def validate(self) -> None:
        """:meth:`Proposer.validate`, and ``large_study`` an integer >= 1."""
        super().validate()
        check_int("large_study", self.large_study, minimum=1)

    def reseed(self, seed: int | None = None) -> None:
        """Restart this proposer's and every member's random stream."""
        super().reseed(seed)
        for member in self._members.values():
            member.reseed(None if seed is None else int(self.rng.integers(2**31)))

    def member(self, name: str) -> Proposer:
        """The member called ``name`` (one of :data:`MEMBERS`), built on first use."""
        if name not in self._members:
            # Seeds in a fixed order of the members, so a member's stream does not depend on
            # which members were used before it.
            seed = None if self.seed is None else self.seed + 1 + MEMBERS.index(name)
            self._members[name] = _MEMBER_CLASSES[name](
                n_startup=0,
                seed=seed,
                failed_trials=self.failed_trials,
                pruned_trials=self.pruned_trials,
            )
        return self._members[name]

    def choose(self, history: History) -> Choice:
        """The member for ``history`` and why."""
        return choose_proposer(StudyProfile.from_history(history), self.large_study)

    def scalarized(self, history: History) -> History:
        """``history`` unchanged: the chosen member scalarises several objectives its own way
        (MBORE's Pareto ranks for BORE, ParEGO for the GP members)."""
        return history

    def propose_from_model(self, history: History) -> np.ndarray:
        return self.propose_from_model_with_record(history)[0]

    def propose_from_model_with_record(self, history: History) -> tuple[np.ndarray, dict]:
        choice = self.choose(history)
        member = self.member(choice.proposer)
        history = member.scalarized(history)
        if choice.proposer == "binary":
            history = _as_outcomes(history)
        u, record = member.propose_from_model_with_record(history)
        return u, {**record, "auto_proposer": choice.proposer, "auto_reason": choice.reason}


def _as_outcomes(history: History) -> History:
    """``history`` with 0/1 (or 0/-1) values as the binary proposer's outcomes.

    The smaller value is the target (values are minimised): it becomes 0, the other 1.
    """
    values = history.values.copy()
    complete = history.mask(TrialState.COMPLETE) & np.isfinite(values)
    if complete.any():
        target = float(values[complete].min())
        values[complete] = np.where(values[complete] == target, 0.0, 1.0)
    return dataclasses.replace(history, values=values)
