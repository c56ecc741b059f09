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

The alternative, as SMAC does it (Hutter, Hoos & Leyton-Brown, *Sequential Model-Based
Optimization for General Algorithm Configuration*, LION 2011), is one model on the union of
every branch's parameters, an inactive parameter imputed outside its range:
:func:`union_proposal` (a random forest, BORE's classifier) on a :class:`UnionSpace`, whose
conditions (which choice of which parameter makes a branch parameter active) are read off the
observations, so that the candidates are imputed as the observations are.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from bore_samplers.observations import Observation, TrialState
from bore_samplers.proposers.auto import LARGE_STUDY, AutoProposer
from bore_samplers.proposers.base import Fallback, Proposal, Proposer, safe_propose
from bore_samplers.space import CategoricalParam, IntParam, Param, SearchSpace
from bore_samplers.validation import check_int, check_seed

__all__ = [
    "MIN_BRANCH_TRIALS",
    "BranchProposer",
    "UnionSpace",
    "branch_context",
    "branch_group",
    "branch_observations",
    "ranges_changed",
    "union_conditions",
    "union_proposal",
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


#: A branch parameter's condition: it is active iff the parent parameter's value is one of these.
Condition = tuple[str, frozenset[Any]]


class UnionSpace(SearchSpace):
    """The parameters of every branch, each branch parameter imputed where it is inactive.

    The features of a point (:meth:`features`) are those of :class:`SearchSpace` but for
    the parameters whose condition fails at that point: a numeric one becomes -1 (outside its
    unit range), a categorical one a level of its own (every one-hot column 0), as SMAC
    imputes them. Observations and candidates go through the same imputation, and
    :meth:`snap` moves an inactive parameter to its :attr:`placeholder` value, so that two
    configurations that differ only where a parameter is inactive are one (a duplicate).

    Parameters
    ----------
    params
        As :class:`SearchSpace`.
    conditions
        Branch parameter -> ``(parent, active values)``: the parameter is active iff the
        parent's value is among them (the parent is a parameter of ``params`` without one).

    Attributes
    ----------
    placeholder
        The value every parameter holds where it is inactive (the middle of its range).
    """

    def __init__(self, params: Mapping[str, Param], conditions: Mapping[str, Condition]) -> None:
        super().__init__(params)
        self.conditions = dict(conditions)
        index = {name: j for j, name in enumerate(self.names)}
        columns = self.feature_columns()
        self._imputed = [
            (index[name], index[parent], frozenset(active), columns[index[name]])
            for name, (parent, active) in self.conditions.items()
        ]
        middle = np.array([0.5])
        self.placeholder = {d.name: d.decode_values(middle)[0] for d in self.dimensions}
        self._placeholder_u = [
            d.encode_values([self.placeholder[d.name]])[0] for d in self.dimensions
        ]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnionSpace)
            and super().__eq__(other)
            and self.conditions == other.conditions
        )

    def __hash__(self) -> int:
        return hash((super().__hash__(), tuple(sorted(self.conditions.items()))))

    def _inactive(self, u: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """``(coordinate, its feature columns, rows where it is inactive)`` per condition."""
        parents: dict[int, list[Any]] = {}
        found = []
        for j, parent, active, columns in self._imputed:
            if parent not in parents:
                parents[parent] = self.dimensions[parent].decode_values(u[:, parent])
            inactive = np.array([value not in active for value in parents[parent]], dtype=bool)
            found.append((j, columns, inactive))
        return found

    def inactive_coordinates(self, u: np.ndarray) -> np.ndarray:
        u = np.atleast_2d(np.asarray(u, dtype=float))
        inactive = np.zeros(u.shape, dtype=bool)
        for j, _, rows in self._inactive(u):
            inactive[:, j] = rows
        return inactive

    def snap(self, u: np.ndarray) -> np.ndarray:
        snapped = super().snap(u)
        for j, _, inactive in self._inactive(snapped):
            snapped[inactive, j] = self._placeholder_u[j]
        return snapped

    def features(self, u: np.ndarray) -> np.ndarray:
        u = np.atleast_2d(np.asarray(u, dtype=float))
        features = super().features(u)  # a copy: the imputation leaves u alone
        for j, columns, inactive in self._inactive(u):
            onehot = self.dimensions[j].is_categorical and len(columns) > 1
            features[np.ix_(inactive, columns)] = 0.0 if onehot else -1.0
        return features


def union_conditions(
    observations: Sequence[Observation], params: Mapping[str, Param]
) -> dict[str, Condition] | None:
    """Each branch parameter's condition, read off the complete and pruned ``observations``.

    A parameter of ``params`` that some of them lack is a branch parameter; its parent is the
    first (by name) categorical or integer parameter that all of them have and whose values
    with the branch parameter and without it never meet, and the condition is the values it
    took with it. ``None`` when a branch parameter has no such parent (a nested branch, or a
    parameter added mid-study): the union model cannot tell where it is active.
    """
    ended = [observation.params for observation in observations if observation.state in _ENDED]
    if not ended:
        return None
    always = [
        name
        for name in sorted(params)
        if all(name in values for values in ended)
        and isinstance(params[name], CategoricalParam | IntParam)
    ]
    conditions: dict[str, Condition] = {}
    for name in sorted(params):
        with_it = [values for values in ended if name in values]
        if len(with_it) == len(ended):
            continue  # every observation has it: no condition
        for parent in always:
            active = frozenset(values[parent] for values in with_it)
            if not any(values[parent] in active for values in ended if name not in values):
                conditions[name] = (parent, active)
                break
        else:
            return None
    return conditions


def union_proposal(
    proposer: Proposer, params: Mapping[str, Param], observations: Sequence[Observation]
) -> Proposal | Fallback | None:
    """``proposer``'s proposal of every parameter of ``params`` (all branches at once) on the
    :class:`UnionSpace` of the observations' conditions (:func:`union_conditions`).

    Observations that have every parameter without a condition are modelled, their missing
    (inactive) parameters filled with the space's placeholder. Pending ones among them are
    the proposer's pending points; one whose branch parameters are not all set yet takes
    the placeholder's there too, near enough to keep a proposal away from it. ``None`` when
    a branch parameter has no condition.
    """
    conditions = union_conditions(observations, params)
    if conditions is None:
        return None
    space = UnionSpace(params, conditions)
    kept = [
        dataclasses.replace(observation, params={**space.placeholder, **observation.params})
        for observation in observations
        if all(name in observation.params for name in params if name not in conditions)
    ]
    return safe_propose(proposer, space, kept)
