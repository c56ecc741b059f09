"""Plain records of what happened to each proposed configuration.

Adapters (Optuna, Ray Tune) translate their trials into :class:`Observation` objects; proposers
consume nothing else. Values are always to be *minimised*: adapters negate maximised metrics.
A multi-objective study gives each observation all its objective values
(:attr:`Observation.values`); proposers turn those into one value per observation
(:meth:`~bore_samplers.proposers.Proposer.scalarized`).

Constraints are matched by name across observations. A constraint that an observation does not
carry is *unknown* there: it is left out of that constraint's model, and it does not make the
observation infeasible (:attr:`History.feasible` is "no known constraint violated").
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bore_samplers.space import SearchSpace

__all__ = ["History", "Observation", "TrialState", "history_from_observations"]


class TrialState(enum.Enum):
    """What became of a proposed configuration."""

    COMPLETE = "complete"  #: finished with an objective value
    FAILED = "failed"  #: crashed or returned no usable value (NaN)
    PRUNED = "pruned"  #: stopped early; ``value`` is its last intermediate value, if any
    RUNNING = "running"  #: still being evaluated (a pending point)


@dataclass(frozen=True)
class Observation:
    """One configuration and its outcome.

    Parameters
    ----------
    params
        Parameter name -> value. May contain names outside the search space (ignored) and, for
        failed or running trials, may miss some (such observations are skipped).
    value
        Objective value to minimise, ``None`` when there is none (failed, running, or pruned
        before reporting anything).
    state
        The trial's :class:`TrialState`.
    constraints
        Constraint name -> value; the configuration is feasible iff every value is ``<= 0``
        (``+inf`` is infeasible, ``-inf`` feasible). A sequence is accepted too and named
        ``"0"``, ``"1"``, ... (Optuna's names for the values of a legacy ``constraints_func``).
        Empty when the study has no constraints; a constraint missing here is unknown for this
        observation. NaN values are unknown too.
    record
        What the proposer noted when it proposed this configuration (the record of
        :meth:`~bore_samplers.proposers.Proposer.propose_with_record`, JSON-serialisable),
        handed back with the outcome. Adapters keep it with the trial, so that a proposer
        whose state depends on its own past choices (the portfolio's rewards) can rebuild that
        state from the observations alone. Empty when there is none.
    duration
        Wall-clock seconds the evaluation took, when known (cost-aware acquisitions such as
        EI per second model it); ``None`` otherwise.
    values
        In a multi-objective study, every objective value (each to minimise), or ``None``
        when there are none (failed, running); ``value`` is then not used by the proposers
        (adapters set it to the first objective). ``None`` in a single-objective study.
    """

    params: Mapping[str, Any]
    value: float | None = None
    state: TrialState = TrialState.COMPLETE
    constraints: Mapping[str, float] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    duration: float | None = None
    values: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.values is not None:
            object.__setattr__(self, "values", tuple(float(v) for v in self.values))
        constraints = self.constraints
        if type(constraints) is dict and not constraints:
            # The usual case, kept cheap (adapters build an observation per trial): a fresh
            # empty dict, so that the caller's cannot change this frozen observation.
            object.__setattr__(self, "constraints", {})
            return
        if not isinstance(constraints, Mapping):
            constraints = {str(i): value for i, value in enumerate(constraints)}
        object.__setattr__(
            self, "constraints", {str(name): float(value) for name, value in constraints.items()}
        )

    @property
    def is_feasible(self) -> bool:
        """True iff no known constraint value is ``> 0`` (true without constraints)."""
        constraints = self.constraints
        return not constraints or not any(value > 0 for value in constraints.values())


@dataclass
class History:
    """Observations in array form over one search space, grouped the way proposers use them.

    Attributes
    ----------
    u
        Snapped unit coordinates of every usable observation, shape ``(n, n_dims)``.
    values
        Objective values to minimise (NaN where there is none).
    states
        The :class:`TrialState` of each row.
    feasible
        Whether each row violates none of its known constraints.
    constraints
        Constraint values, shape ``(n, len(constraint_names))``, one column per name; NaN
        where a row does not carry that constraint (unknown there).
    records
        The :attr:`Observation.record` of each row.
    durations
        Evaluation time in seconds of each row (NaN where unknown).
    objectives
        Multi-objective studies: every objective value of each row, shape ``(n, k)`` (a row
        of NaN where there are none); ``None`` when no observation carries
        :attr:`Observation.values`. ``values`` is then the first objective until a proposer
        scalarises the history.
    """

    space: SearchSpace
    u: np.ndarray
    values: np.ndarray
    states: list[TrialState]
    feasible: np.ndarray
    constraints: np.ndarray
    records: list[Mapping[str, Any]] = field(default_factory=list)
    durations: np.ndarray = field(default_factory=lambda: np.empty(0))
    constraint_names: list[str] = field(default_factory=list)
    objectives: np.ndarray | None = None

    def without(self, *states: TrialState) -> History:
        """The rows not in any of ``states``, as a new history."""
        return self.take(np.flatnonzero(~self.mask(*states)))

    def take(self, rows: np.ndarray) -> History:
        """The rows at the integer indices ``rows`` (in that order), as a new history."""
        rows = np.asarray(rows, dtype=int)
        return History(
            space=self.space,
            u=self.u[rows],
            values=self.values[rows],
            states=[self.states[i] for i in rows],
            feasible=self.feasible[rows],
            constraints=self.constraints[rows],
            records=[self.records[i] for i in rows] if self.records else [],
            durations=self.durations[rows] if len(self.durations) else self.durations,
            constraint_names=list(self.constraint_names),
            objectives=None if self.objectives is None else self.objectives[rows],
        )

    def mask(self, *states: TrialState) -> np.ndarray:
        """Boolean mask of the rows in any of ``states``."""
        return np.array([s in states for s in self.states], dtype=bool)

    def __len__(self) -> int:
        return len(self.states)


def history_from_observations(space: SearchSpace, observations: Sequence[Observation]) -> History:
    """Encode the observations that carry every parameter of ``space``.

    Observations missing a parameter of ``space`` (a failed or running trial that crashed
    before suggesting everything, or a conditional parameter) are left out; so are values that
    do not fit the space (a categorical value that is not a choice). COMPLETE observations with
    a NaN value (or, in a multi-objective study, a NaN among their values) are treated as
    FAILED, since nothing can be learned from the number.
    """
    names = set(space.names)
    usable = [obs for obs in observations if names <= obs.params.keys()]
    try:
        u = space.encode([obs.params for obs in usable])  # one vectorised pass: the usual case
    except (ValueError, TypeError):
        # Some value does not fit the space: encode row by row and drop the misfits.
        rows, kept = [], []
        for obs in usable:
            try:
                rows.append(space.encode([obs.params])[0])
                kept.append(obs)
            except (ValueError, TypeError):
                continue
        usable = kept
        u = np.array(rows) if rows else np.empty((0, space.n_dims))
    values = np.array([math.nan if o.value is None else float(o.value) for o in usable])
    objectives = _objective_matrix(usable)
    unusable = np.isnan(values) if objectives is None else np.isnan(objectives).any(axis=1)
    states = [
        TrialState.FAILED if o.state is TrialState.COMPLETE and bad else o.state
        for o, bad in zip(usable, unusable, strict=True)
    ]
    names, constraints = _constraint_matrix(usable)
    return History(
        space=space,
        u=space.snap(u) if len(usable) else np.empty((0, space.n_dims)),
        values=values.astype(float).reshape(len(usable)),
        states=states,
        feasible=np.array([o.is_feasible for o in usable], dtype=bool),
        constraints=constraints,
        records=[o.record for o in usable],
        durations=np.array(
            [math.nan if o.duration is None else float(o.duration) for o in usable], dtype=float
        ),
        constraint_names=names,
        objectives=objectives,
    )


def _objective_matrix(observations: Sequence[Observation]) -> np.ndarray | None:
    """The :attr:`Observation.values` as rows (NaN rows where none), or None if none has any."""
    n_objectives = max((len(o.values) for o in observations if o.values is not None), default=0)
    if not n_objectives:
        return None
    matrix = np.full((len(observations), n_objectives), np.nan)
    for i, obs in enumerate(observations):
        if obs.values is not None:
            if len(obs.values) != n_objectives:
                raise ValueError(
                    f"Observations carry {len(obs.values)} and {n_objectives} objective values."
                )
            matrix[i] = obs.values
    return matrix


def _constraint_matrix(observations: Sequence[Observation]) -> tuple[list[str], np.ndarray]:
    """Sorted constraint names and the values by name, NaN where a row lacks one."""
    names = sorted({name for obs in observations if obs.constraints for name in obs.constraints})
    column = {name: k for k, name in enumerate(names)}
    matrix = np.full((len(observations), len(names)), np.nan)
    if not names:
        return names, matrix
    for i, obs in enumerate(observations):
        for name, value in obs.constraints.items():
            matrix[i, column[name]] = value
    return names, matrix
