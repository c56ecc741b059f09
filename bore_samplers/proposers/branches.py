"""Branch parameters: the parameters of a conditional space that only some trials have.

A branch parameter is proposed with its *group*: the parameters that every finished trial
having it has too, less those the trial being proposed has set already (its *context*, e.g.
the branch chosen, and the parameters every trial has). The group is modelled jointly on the
observations that have the whole group and share the trial's categorical context values (the
same branch), by an :class:`~bore_samplers.proposers.auto.AutoProposer` of its own, in the
spirit of Optuna's TPE with ``group=True`` (which decomposes the space into such groups) but
with this package's models. Numeric context values (a learning rate every trial has) are not
modelled: the group's value varies with them as noise.

The adapter asks for a group only once enough finished observations have it
(:attr:`BranchProposer.min_trials`); below that, and should the model fail, it draws the
parameter some other way (Optuna: TPE).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.auto import LARGE_STUDY, AutoProposer
from bore_samplers.proposers.base import Fallback, Proposal, safe_propose
from bore_samplers.space import CategoricalParam, Param, SearchSpace
from bore_samplers.validation import check_int, check_seed

__all__ = [
    "MIN_BRANCH_TRIALS",
    "BranchProposer",
    "branch_context",
    "branch_group",
    "branch_observations",
    "ranges_changed",
]

_ENDED = (TrialState.COMPLETE, TrialState.PRUNED)

#: Finished observations of a group (in the trial's branch) before its model proposes it.
MIN_BRANCH_TRIALS = 5


def branch_group(
    name: str, observations: Sequence[Observation], assigned: Collection[str]
) -> tuple[str, ...]:
    """The group of branch parameter ``name``, sorted: the parameters that every complete or
    pruned observation with ``name`` has, less ``assigned`` (the trial's parameters set
    already). Failed ones do not count: a trial may crash before it sets all its parameters.

    Empty when no complete or pruned observation has ``name``.
    """
    having = [
        observation.params
        for observation in observations
        if observation.state in _ENDED and name in observation.params
    ]
    if not having:
        return ()
    common = set(having[0]).intersection(*having[1:])
    return tuple(sorted(common - set(assigned)))


def branch_context(
    params: Mapping[str, Any], params_space: Mapping[str, Param], common: Collection[str]
) -> dict[str, Any]:
    """The values of ``params`` (the trial's, whose ranges are ``params_space``) that pick its
    branch: those of the parameters in ``common`` (see :func:`branch_group` with nothing
    assigned) that are categorical with more than one choice. Numeric values are left out:
    the group's model treats them as noise.
    """
    return {
        name: value
        for name, value in params.items()
        if name in common
        and isinstance(params_space[name], CategoricalParam)
        and len(params_space[name].choices) > 1
    }


def ranges_changed(
    group: Collection[str],
    current: Mapping[str, Any],
    earlier: Iterable[Mapping[str, Any]],
) -> bool:
    """Whether a parameter of ``group`` had, in one of the ``earlier`` trials, another range
    than its ``current`` one (ranges are compared with ``==``: the core's :data:`Param` or a
    framework's own description of a range). The group's model needs one range per parameter.
    """
    return any(ranges[name] != current[name] for ranges in earlier for name in group)


def branch_observations(
    observations: Sequence[Observation], group: Sequence[str], context: Mapping[str, Any]
) -> list[Observation]:
    """The observations with every parameter of ``group`` and the ``context`` values, their
    parameters restricted to ``group`` (pending ones included: the model avoids them)."""
    kept = []
    for observation in observations:
        params = observation.params
        if not all(name in params for name in group):
            continue
        if any(name not in params or params[name] != value for name, value in context.items()):
            continue
        group_params = {name: params[name] for name in group}
        kept.append(dataclasses.replace(observation, params=group_params))
    return kept


class BranchProposer:
    """Proposes groups of branch parameters, with one auto proposer per group.

    Parameters
    ----------
    seed
        Seed of every group's proposer (each group's seed is drawn from it and the group's
        names, so a group's stream does not depend on the order the groups came in).
    min_trials
        Finished observations of the group, in the trial's branch, before the model proposes
        it; :meth:`propose` returns ``None`` below that.
    failed_trials, pruned_trials, large_study
        As :class:`~bore_samplers.proposers.auto.AutoProposer`.
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        min_trials: int = MIN_BRANCH_TRIALS,
        failed_trials: str = "bad",
        pruned_trials: str = "bad",
        large_study: int = LARGE_STUDY,
    ) -> None:
        self.seed = seed
        self.min_trials = min_trials
        self.failed_trials = failed_trials
        self.pruned_trials = pruned_trials
        self.large_study = large_study
        self._proposers: dict[tuple[str, ...], AutoProposer] = {}

    def validate(self) -> None:
        """Check the settings (``ValueError``/``TypeError`` naming the option)."""
        check_seed("seed", self.seed)
        check_int("min_trials", self.min_trials, minimum=1)
        self._proposer_of(("x",)).validate()  # the auto proposer's own options

    def reseed(self, seed: int | None = None) -> None:
        """Restart every group's random stream from ``seed`` (fresh entropy for ``None``)."""
        self.seed = seed if seed is not None else int(np.random.default_rng().integers(2**31))
        self._proposers.clear()

    def _proposer_of(self, group: tuple[str, ...]) -> AutoProposer:
        proposer = self._proposers.get(group)
        if proposer is None:
            seed = None
            if self.seed is not None:
                names = zlib.crc32("\0".join(group).encode())
                seed = int(np.random.SeedSequence([self.seed, names]).generate_state(1)[0])
                seed %= 2**31
            proposer = AutoProposer(
                n_startup=self.min_trials,
                seed=seed,
                failed_trials=self.failed_trials,
                pruned_trials=self.pruned_trials,
                large_study=self.large_study,
            )
            self._proposers[group] = proposer
        return proposer

    def propose(
        self,
        space: SearchSpace,
        observations: Sequence[Observation],
        context: Mapping[str, Any],
    ) -> Proposal | Fallback | None:
        """A joint proposal of the group ``space`` (its parameters are the group's), from the
        observations that have the group and the ``context`` values.

        ``None`` when fewer than :attr:`min_trials` of them are finished; a
        :class:`~bore_samplers.proposers.base.Fallback` when the model raised.
        """
        group = tuple(space.names)
        kept = branch_observations(observations, group, context)
        proposer = self._proposer_of(group)
        if proposer.n_finished(observation.state for observation in kept) < self.min_trials:
            return None
        return safe_propose(proposer, space, kept)
