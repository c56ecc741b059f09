"""Plain records of what happened to each proposed configuration.

Adapters (Optuna, Ray Tune) translate their trials into :class:`Observation` objects; proposers
consume nothing else. Values are always to be *minimised*: adapters negate maximised metrics.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bore_samplers.search_space import SearchSpace

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
        Constraint values; the configuration is feasible iff every value is ``<= 0``.
        Empty when the study has no constraints.
    record
        What the proposer noted when it proposed this configuration (the record of
        :meth:`~bore_samplers.proposers.Proposer.propose_with_record`, JSON-serialisable),
        handed back with the outcome. Adapters keep it with the trial, so that a proposer
        whose state depends on its own past choices (the portfolio's rewards) can rebuild that
        state from the observations alone. Empty when there is none.
    duration
        Wall-clock seconds the evaluation took, when known (cost-aware acquisitions such as
        EI per second model it); ``None`` otherwise.
    """

    params: Mapping[str, Any]
    value: float | None = None
    state: TrialState = TrialState.COMPLETE
    constraints: tuple[float, ...] = field(default_factory=tuple)
    record: Mapping[str, Any] = field(default_factory=dict)
    duration: float | None = None

    @property
    def is_feasible(self) -> bool:
        """True iff every constraint value is ``<= 0`` (vacuously true without constraints)."""
        return all(c <= 0 for c in self.constraints)


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
        Whether each row satisfies its constraints.
    constraints
        Constraint values, shape ``(n, n_constraints)``; NaN where a row has none (a failed
        trial, say). ``n_constraints`` is the largest number any observation carries.
    records
        The :attr:`Observation.record` of each row.
    durations
        Evaluation time in seconds of each row (NaN where unknown).
    """

    space: SearchSpace
    u: np.ndarray
    values: np.ndarray
    states: list[TrialState]
    feasible: np.ndarray
    constraints: np.ndarray
    records: list[Mapping[str, Any]] = field(default_factory=list)
    durations: np.ndarray = field(default_factory=lambda: np.empty(0))

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
    a NaN value are treated as FAILED, since nothing can be learned from the number.
    """
    usable = [obs for obs in observations if all(name in obs.params for name in space.names)]
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
    states = [
        TrialState.FAILED if o.state is TrialState.COMPLETE and math.isnan(value) else o.state
        for o, value in zip(usable, values, strict=True)
    ]
    return History(
        space=space,
        u=space.snap(u) if len(usable) else np.empty((0, space.n_dims)),
        values=values.astype(float).reshape(len(usable)),
        states=states,
        feasible=np.array([o.is_feasible for o in usable], dtype=bool),
        constraints=_constraint_matrix(usable),
        records=[o.record for o in usable],
        durations=np.array(
            [math.nan if o.duration is None else float(o.duration) for o in usable], dtype=float
        ),
    )


def _constraint_matrix(observations: Sequence[Observation]) -> np.ndarray:
    width = max((len(o.constraints) for o in observations), default=0)
    matrix = np.full((len(observations), width), np.nan)
    for i, obs in enumerate(observations):
        matrix[i, : len(obs.constraints)] = obs.constraints
    return matrix
